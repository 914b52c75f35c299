//! The experiment's set-up on small shapes: sizes, each mode's flags, and one cell of
//! each kind end to end on the memory-backed device model.

use super::*;
use clap::Parser;

#[derive(Parser)]
struct T {
    #[command(flatten)]
    a: HotrapArgs,
}

fn parse(args: &[&str]) -> HotrapArgs {
    T::try_parse_from(std::iter::once("t").chain(args.iter().copied()))
        .map(|t| t.a)
        .expect("parse")
}

#[test]
fn the_shape_keeps_the_papers_ratios() {
    // 1,100,000 records of 1,024 B: 1,126,400,000 B loaded, FD 1/11 of it.
    let s = Shape::of(&parse(&["--records=1100000"]));
    assert_eq!(s.fd_size, 102_400_000);
    assert_eq!(s.file, 640_000);
    assert_eq!(s.l1, 2_560_000);
    assert_eq!(s.cache, 112_640 * 12);
}

#[test]
fn each_mode_has_its_tiers_and_switches() {
    // A window and a hot-set limit passed through reach only their own modes.
    let args = parse(&[
        "--records=100000",
        "--db=/x",
        "--time_aware_window=5",
        "--hot_set_limit=100000",
    ]);
    let shape = Shape::of(&args);
    let root = Path::new("/x/cell");
    for mode in Mode::ALL {
        let f = flags_for(&args, shape, mode, root).expect("flags");
        let o = f.strata_options().expect("valid options");
        assert_eq!(f.db, root.join("fast/db"));
        assert_eq!(o.max_background_jobs, 8, "the paper's");
        match mode {
            Mode::Fd => {
                assert!(o.tiering.is_none() && f.db_paths.is_empty());
                assert_eq!(f.device.len(), 1);
            }
            _ => {
                let t = o.tiering.expect("tiers");
                assert_eq!(t.budget(&o), shape.fd_size);
                assert_eq!(f.device.len(), 2);
                assert_eq!(t.retain, mode != Mode::NoRetain, "{mode:?}");
                assert_eq!(t.promote_by_compaction, mode != Mode::NoByCompaction);
                assert_eq!(t.hotness_check, mode != Mode::NoHotnessCheck);
                assert_eq!(t.hot_aware_pick, mode != Mode::NoHotAwarePick);
            }
        }
    }
    assert!(Mode::parse("hot").is_err());
}

/// A tiny run of one matrix cell per mode and the ablation cells: rows written, the
/// hooks' figures where the mode has hooks, none where it has not.
#[test]
fn a_tiny_run_writes_a_row_per_cell() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let json = tmp.path().join("out.jsonl");
    let chart = tmp.path().join("out.svg");
    let args = parse(&[
        &format!("--db={}", tmp.path().join("db").display()),
        "--records=6000",
        "--value_size=200",
        "--threads=2",
        "--workloads=rw",
        "--distributions=hotspot",
        "--modes=fd,fat,time",
        "--direct_io=false",
        "--fd_device=1,4000,1000000",
        "--sd_device=1,4000,1000000",
        &format!("--json={}", json.display()),
        &format!("--chart={}", chart.display()),
    ]);
    run(&args).expect("run");
    let rows: Vec<serde_json::Value> = std::fs::read_to_string(&json)
        .expect("json")
        .lines()
        .map(|l| serde_json::from_str(l).expect("row"))
        .collect();
    assert_eq!(rows.len(), 3 + 5);
    for r in &rows {
        let mode = r["mode"].as_str().expect("mode");
        assert!(r["ops_per_sec"].as_f64().expect("ops") > 0.0, "{r}");
        assert_eq!(r["window_ops"], 1200, "{r}");
        let hooks = !matches!(mode, "fd" | "fat");
        assert_eq!(r["hit_rate"].is_f64(), hooks, "{r}");
        assert_eq!(r["slow_reads_per_op"].is_f64(), mode != "fd", "{r}");
        assert_eq!(r["background_jobs"], 8, "{r}");
        // RALT's gauges exist only where there is a RALT.
        let ralt = !matches!(mode, "fd" | "fat" | "time");
        assert_eq!(r["hot_set_limit"].as_u64().expect("limit") > 0, ralt, "{r}");
        assert!(r["cache_refused_full"].is_u64());
        // Every figure of the hooks, where there are hooks.
        assert_eq!(r["hooks"]["gets_slow"].is_u64(), hooks, "{r}");
        assert_eq!(r["hooks"]["ralt_accesses"].as_u64() > Some(0), ralt, "{r}");
    }
    assert!(chart.exists());
}
