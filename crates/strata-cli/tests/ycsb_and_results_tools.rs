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
    assert_eq!(records.lines().count(), 8);
    let last: serde_json::Value =
        serde_json::from_str(records.lines().last().unwrap_or("{}")).expect("json");
    assert!(last["ops"]["read_modify_write"]["operations"].as_u64() > Some(0));
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
