//! Protects: `strata experiment dcompaction` end to end at a tiny scale, Strata only:
//! the D1 run (whose read phase is D4) with the option off and on, fixed and aligned,
//! and the VSMT part's reads of copied loads. Every JSON line carries the figures the
//! experiment reports, and the option defers compactions and writes fewer compaction
//! bytes than without it on the same stream. That last claim is robust at this scale
//! (the runs below cut compaction writes by 20–50%), not a property of every stream.

mod common;

use common::{db_flag, experiment, strata};

#[test]
fn tiny_d1_and_vsmt_runs_report_every_figure_and_defer_compactions() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let json = tmp.path().join("dc.jsonl");
    let charts = tmp.path().join("charts");
    let args = |direct: &str| {
        vec![
            "experiment".to_string(),
            "dcompaction".to_string(),
            db_flag(&tmp.path().join("scratch")),
            "--scale=0.005".to_string(),
            "--memtable_size=65536".to_string(),
            "--parts=d1,vsmt".to_string(),
            "--vsmts=3".to_string(),
            "--read_phase=0.25".to_string(),
            format!("--direct_io={direct}"),
            format!("--json={}", json.display()),
            format!("--charts={}", charts.display()),
        ]
    };
    let run = |a: Vec<String>| strata(&a.iter().map(String::as_str).collect::<Vec<_>>(), None);
    let mut out = run(args("true"));
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("O_DIRECT") {
        eprintln!("O_DIRECT refused in {}: buffered I/O", tmp.path().display());
        let _ = std::fs::remove_file(&json);
        out = run(args("false"));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if !cfg!(feature = "rocksdb") {
        assert!(stdout.contains("RocksDB skipped"), "{stdout}");
    }
    assert!(stdout.contains("  D4 reads"), "{stdout}");

    let rows: Vec<serde_json::Value> = std::fs::read_to_string(&json)
        .expect("json lines")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let strata_rows = |part: &str| -> Vec<&serde_json::Value> {
        rows.iter()
            .filter(|r| r["part"] == part && r["engine"] == "strata")
            .collect()
    };
    let d1 = strata_rows("overall");
    assert_eq!(d1.len(), 4, "off/on x fixed/aligned: {rows:?}");
    for r in &d1 {
        assert_eq!(r["dataset"], "D1", "{r}");
        assert_eq!(r["operations"], 40_000, "{r}");
        assert_eq!(r["write_ratio"], 1.0, "{r}");
        assert_eq!(r["value_size"], 256, "{r}");
        for f in [
            "/main/ops_per_sec",
            "/main/writes/mean_us",
            "/main/writes/p99_us",
            "/main/stall_fraction",
            "/read/ops_per_sec",
            "/read/gets/mean_us",
            "/read/gets/p99_us",
            "/read/tables_probed_per_get",
            "/read/parents_probed_per_get",
            "/write_amplification",
            "/space_amplification",
            "/live_table_bytes_compacted",
            "/virtual_space/garbage_bytes",
            "/virtual_space/virtual_tables",
        ] {
            assert!(r.pointer(f).and_then(|v| v.as_f64()).is_some(), "{f}: {r}");
        }
        for f in [
            "compaction_bytes_read",
            "compaction_bytes_written",
            "compaction_bytes_read_after_reads",
            "compaction_bytes_written_after_reads",
            "virtual_compactions",
        ] {
            assert!(r[f].as_u64().is_some(), "{f}: {r}");
        }
        assert!(r["compaction_bound"].is_boolean(), "{r}");
        assert!(r["git_revision"].is_string(), "{r}");
        assert_eq!(r["read"]["gets"]["ops"], 10_000, "{r}");
        assert!(
            r["compaction_bytes_written_after_reads"].as_u64()
                >= r["compaction_bytes_written"].as_u64(),
            "{r}"
        );
        // The garbage bound holds once the main phase settled (the policy's idle rule).
        let live = r["live_table_bytes_after_main"]
            .as_u64()
            .expect("live bytes");
        let garbage = r["virtual_space_after_main"]["garbage_bytes"]
            .as_u64()
            .unwrap_or(0);
        assert!(live > 0 && garbage as f64 <= 0.1 * live as f64, "{r}");
    }
    for partitioning in ["fixed", "aligned"] {
        let find = |on: bool| {
            d1.iter()
                .find(|r| r["partitioning"] == partitioning && r["delayed_compaction"] == on)
                .unwrap_or_else(|| panic!("{partitioning} on={on}: {rows:?}"))
        };
        let (off, on) = (find(false), find(true));
        assert_eq!(off["virtual_compactions"], 0, "{off}");
        assert!(on["virtual_compactions"].as_u64() > Some(0), "{on}");
        assert_eq!(on["vct"], 12, "{on}");
        let written = |r: &serde_json::Value| r["compaction_bytes_written"].as_u64();
        assert!(written(on) < written(off), "{partitioning}: {on}\n{off}");
    }

    // VSMT: copies of two loads, the option off and on (VSMT 3), each read once.
    let vsmt = strata_rows("vsmt");
    assert_eq!(vsmt.len(), 2, "{vsmt:?}");
    for (on, v) in [(false, serde_json::Value::Null), (true, 3.into())] {
        let copy = vsmt
            .iter()
            .find(|r| r["delayed_compaction"] == on && r["vsmt"] == v)
            .unwrap_or_else(|| panic!("on={on}: {vsmt:?}"));
        assert!(
            copy["read"]["tables_probed_per_get"].as_f64().is_some(),
            "{copy}"
        );
        assert!(copy["space_amplification"].is_null(), "{copy}");
        assert_eq!(copy["reused"], false, "{copy}");
    }
    for svg in ["dcompaction-throughput.svg", "dcompaction-vsmt-tables.svg"] {
        assert!(charts.join(svg).is_file(), "{svg}");
    }
}

/// `--repeats=3`: each configuration runs three times, every run is a JSON line of its
/// own (`repeat` 0..2), and the reported row is their median (`repeat` null) with the
/// median main-phase throughput of the three.
#[test]
fn repeats_are_reported_each_and_as_their_median() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (stdout, rows) = experiment(
        tmp.path(),
        "dcompaction",
        &[
            "--scale=0.001",
            "--memtable_size=65536",
            "--parts=d3",
            "--repeats=3",
            "--read_phase=0",
            "--direct_io=false",
        ],
    );
    assert!(stdout.contains("medians of 3 runs"), "{stdout}");
    let strata_rows: Vec<&serde_json::Value> =
        rows.iter().filter(|r| r["engine"] == "strata").collect();
    assert_eq!(
        strata_rows.len(),
        4 * 4,
        "4 configs x (3 runs + median): {rows:?}"
    );
    for config in [
        "strata off fixed",
        "strata dC fixed",
        "strata off aligned",
        "strata dC aligned",
    ] {
        let of: Vec<&&serde_json::Value> = strata_rows
            .iter()
            .filter(|r| r["config"] == config)
            .collect();
        let median: Vec<_> = of.iter().filter(|r| r["repeat"].is_null()).collect();
        let mut runs: Vec<f64> = of
            .iter()
            .filter(|r| !r["repeat"].is_null())
            .map(|r| r["main"]["ops_per_sec"].as_f64().expect("throughput"))
            .collect();
        assert_eq!((median.len(), runs.len()), (1, 3), "{config}: {of:?}");
        runs.sort_by(f64::total_cmp);
        assert_eq!(median[0]["repeats"], 3, "{config}");
        assert_eq!(
            median[0]["main"]["ops_per_sec"].as_f64(),
            Some(runs[1]),
            "{config}"
        );
    }
}
