//! Protects: `strata bench` end to end on the real engine: fillrandom then readrandom
//! finds ~63% of keys (db_bench semantics), every benchmark prints db_bench's line and a
//! percentile line, and one JSON record per benchmark is appended.

mod common;

use common::{db_flag, ok};

#[test]
fn fillrandom_then_readrandom_finds_about_63_percent() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("db");
    let json = tmp.path().join("bench.jsonl");
    let out = ok(
        &[
            "bench",
            &db_flag(&db),
            "--num=20000",
            "--benchmarks=fillseq,fillrandom,overwrite,readrandom,readseq,readreverse,seekrandom,readwhilewriting,deleterandom,flush,compact,waitforcompaction,stats",
            "--write_buffer_size=65536",
            "--target_file_size_base=65536",
            "--max_bytes_for_level_base=262144",
            "--threads=2",
            &format!("--json={}", json.display()),
        ],
        None,
    );
    assert!(out.contains("fillrandom   :"), "{out}");
    assert!(out.contains("Percentiles: P50: "), "{out}");
    assert!(out.contains("write_amplification: "), "{out}");
    let records = std::fs::read_to_string(&json).expect("json");
    assert_eq!(
        records.lines().count(),
        12,
        "one record per measured benchmark"
    );
    for line in records.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("json line");
        assert!(v["ops_per_sec"].as_f64().is_some_and(|x| x > 0.0), "{line}");
        assert!(v["options"]["engine"]["write_buffer_size"].as_u64() == Some(65536));
    }

    // A fresh fillrandom + readrandom: ~63% found.
    let db2 = tmp.path().join("db2");
    let out = ok(
        &[
            "bench",
            &db_flag(&db2),
            "--num=20000",
            "--benchmarks=fillrandom,readrandom",
            "--no_json",
        ],
        None,
    );
    common::assert_readrandom_found_63_percent(&out);
}

#[test]
fn use_existing_db_keeps_data_and_reopens() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("db");
    ok(
        &[
            "bench",
            &db_flag(&db),
            "--num=5000",
            "--benchmarks=fillseq",
            "--no_json",
        ],
        None,
    );
    let out = ok(
        &[
            "bench",
            &db_flag(&db),
            "--num=5000",
            "--benchmarks=readrandom",
            "--use_existing_db",
            "--no_json",
        ],
        None,
    );
    assert!(out.contains("(found 5000 of 5000)"), "{out}");
}
