//! Protects: `strata ycsb` load + run on the real engine with per-operation output and
//! JSON, and `plot` / `compare` reading what `bench` wrote.

mod common;

use common::{db_flag, ok};

#[test]
fn ycsb_workloads_load_and_run() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let json = tmp.path().join("ycsb.jsonl");
    for w in ["a", "d", "e", "f"] {
        let db = db_flag(&tmp.path().join(format!("db-{w}")));
        let out = ok(
            &[
                "ycsb",
                &db,
                &format!("--workload={w}"),
                "--records=5000",
                "--operations=5000",
                "--threads=2",
                &format!("--json={}", json.display()),
            ],
            None,
        );
        assert!(out.contains(&format!("ycsb-{w}/load")), "{out}");
        assert!(out.contains(&format!("ycsb-{w}/run")), "{out}");
    }
    let records = std::fs::read_to_string(&json).expect("json");
    let rows = common::json_rows(&records);
    let names = common::names(&rows);
    // Each load is followed by its settled result (`--settle_load` is on by default).
    for w in ["a", "d", "e", "f"] {
        let load = format!("ycsb-{w}/load");
        let at = names.iter().position(|n| *n == load).expect("load record");
        assert_eq!(names.get(at + 1), Some(&format!("{load}_settled").as_str()));
        assert_eq!(names.get(at + 2), Some(&format!("ycsb-{w}/run").as_str()));
        let (load, settled) = (&rows[at], &rows[at + 1]);
        assert_eq!(settled["operations"], 5000);
        assert!(settled["seconds"].as_f64() >= load["seconds"].as_f64());
        assert!(
            settled["debt_at_fill_end"]["l0_files"].is_u64(),
            "{settled}"
        );
        let amp = |r: &serde_json::Value| r["process_write_amplification"].as_f64();
        assert!(amp(load).is_some_and(|a| a > 1.0), "{load}");
        assert!(amp(settled) >= amp(load), "{settled}");
        assert!(rows[at + 2].get("process_write_amplification").is_none());
    }
    assert_eq!(rows.len(), 12);
    let last = &rows[11];
    assert!(last["ops"]["read_modify_write"]["operations"].as_u64() > Some(0));
    // Without settling, a load is one record.
    let db = db_flag(&tmp.path().join("db-unsettled"));
    let json = tmp.path().join("unsettled.jsonl");
    ok(
        &[
            "ycsb",
            &db,
            "--phase=load",
            "--settle_load=false",
            "--records=2000",
            &format!("--json={}", json.display()),
        ],
        None,
    );
    let records = std::fs::read_to_string(&json).expect("json");
    assert_eq!(records.lines().count(), 1, "{records}");
}

#[test]
fn plot_and_compare_read_bench_results() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let json = tmp.path().join("bench.jsonl");
    for _ in 0..3 {
        ok(
            &[
                "bench",
                &db_flag(&tmp.path().join("db")),
                "--num=5000",
                "--benchmarks=fillrandom,readrandom",
                &format!("--json={}", json.display()),
            ],
            None,
        );
    }
    let svg = tmp.path().join("p.svg");
    ok(
        &[
            "plot",
            &format!("--input={}", json.display()),
            &format!("--output={}", svg.display()),
        ],
        None,
    );
    assert!(std::fs::read_to_string(&svg)
        .expect("svg")
        .contains("readrandom"));
    let table = ok(&["compare", &format!("--input={}", json.display())], None);
    assert!(table.contains("== fillrandom =="), "{table}");
    assert!(table.contains("strata"), "{table}");
}
