//! Protects: `strata bench` end to end on the real engine: fillrandom then readrandom
//! finds ~63% of keys (db_bench semantics), every benchmark prints db_bench's line and a
//! percentile line, and one JSON record per benchmark is appended.

mod common;

use common::{db_flag, ok, EVERY_BENCHMARK_SMALL_TREE};

#[test]
fn fillrandom_then_readrandom_finds_about_63_percent() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("db");
    let json = tmp.path().join("bench.jsonl");
    let out = ok(
        &[
            "bench",
            &db_flag(&db),
            &format!("--json={}", json.display()),
        ]
        .iter()
        .chain(EVERY_BENCHMARK_SMALL_TREE)
        .copied()
        .collect::<Vec<_>>(),
        None,
    );
    assert!(out.contains("fillrandom   :"), "{out}");
    assert!(out.contains("Percentiles: P50: "), "{out}");
    assert!(out.contains("write_amplification: "), "{out}");
    let records = std::fs::read_to_string(&json).expect("json");
    assert_eq!(
        records.lines().count(),
        13,
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

/// A `waitforcompaction` right after a fill adds the fill's settled result,
/// `<fill>_settled`: the fill's keys over the fill's time plus the wait's, with the L0
/// the fill left behind; a `waitforcompaction` after anything else adds nothing.
#[test]
fn waitforcompaction_after_a_fill_records_its_settled_rate() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (out, records) = common::bench_with_json(
        tmp.path(),
        &[
            "--num=30000",
            "--benchmarks=fillrandom,waitforcompaction,readrandom,waitforcompaction",
            "--write_buffer_size=65536",
            "--target_file_size_base=65536",
            "--max_bytes_for_level_base=262144",
            "--level0_file_num_compaction_trigger=8",
        ],
    );
    let rows = common::json_rows(&records);
    assert_eq!(
        common::names(&rows),
        [
            "fillrandom",
            "waitforcompaction",
            "fillrandom_settled",
            "readrandom",
            "waitforcompaction"
        ]
    );
    let (fill, wait, settled) = (&rows[0], &rows[1], &rows[2]);
    assert_eq!(settled["operations"], 30000);
    let secs = |r: &serde_json::Value| r["seconds"].as_f64().expect("seconds");
    assert!((secs(settled) - secs(fill) - secs(wait)).abs() < 1e-9);
    assert!(settled["ops_per_sec"].as_f64() < fill["ops_per_sec"].as_f64());
    let debt = &settled["debt_at_fill_end"];
    assert_eq!(debt["l0_files"], fill["levels"][0]["files"], "{debt}");
    assert_eq!(debt["l0_bytes"], fill["levels"][0]["size_bytes"], "{debt}");
    assert!(fill.get("debt_at_fill_end").is_none());
    // Settled write amplification is the one after the wait.
    assert_eq!(settled["write_amplification"], wait["write_amplification"]);
    assert!(out.contains("fillrandom_settled :"), "{out}");
    assert!(out.contains("+ debt "), "{out}");
    // The process's writes: the fill's at least its WAL (every key and value, framed),
    // the settled result's everything from the fill's start to the wait's end.
    let written = |r: &serde_json::Value| r["process_write_bytes"].as_u64().expect("wchar");
    let amp = |r: &serde_json::Value| r["process_write_amplification"].as_f64();
    assert!(amp(fill).is_some_and(|a| a > 1.0), "{fill}");
    assert!(
        written(settled) >= written(fill) + written(wait),
        "{settled}"
    );
    assert!(amp(settled) >= amp(fill), "{settled}");
    assert!(rows[3].get("process_write_amplification").is_none());
    assert!(out.contains("process_write_amplification: "), "{out}");
}

/// `--transaction_db`: fillrandom and readrandomwriterandom run every write as an
/// optimistic transaction (two threads, so commits race), the data is all there
/// afterwards, and the JSON records the flag and what Strata made of it.
#[test]
fn transaction_db_runs_writes_as_transactions_and_is_recorded() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let flags = [
        "--num=20000",
        "--threads=2",
        "--benchmarks=fillrandom,readrandomwriterandom,readrandom",
        "--readwritepercent=50",
        "--transaction_db",
        "--write_buffer_size=65536",
    ];
    let (out, records) = common::bench_with_json(tmp.path(), &flags);
    assert!(out.contains("(transactions: "), "{out}");
    assert!(out.contains("reads: 10000, writes: 10000"), "{out}");
    // readrandomwriterandom wrote 10000 more random keys: more than 63% are found now.
    let found = out
        .lines()
        .find(|l| l.starts_with("readrandom   :"))
        .and_then(|l| l.split("(found ").nth(1))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse::<u64>().ok())
        .expect("readrandom line");
    assert!(found > 15_000, "{out}");
    for line in records.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("json line");
        assert_eq!(v["options"]["engine"]["transaction_db"], true, "{line}");
        let mapping = v["option_mapping"].as_array().expect("mapping");
        assert!(
            mapping.iter().any(|m| m["flag"] == "transaction_db"
                && m["engine"]
                    .as_str()
                    .is_some_and(|e| e.contains("Db::transaction"))),
            "{line}"
        );
    }
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

/// `--use_direct_reads` and `--use_direct_io_for_flush_and_compaction` reach the engine
/// (recorded in the JSON options and `option_mapping`), and reads still find ~63% of
/// keys. A temp directory refusing O_DIRECT must fail the run with an error naming the
/// option, not fall back; elsewhere the run must succeed.
#[test]
fn direct_io_flags_run_and_are_recorded() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("db");
    let json = tmp.path().join("bench.jsonl");
    let args = [
        "bench",
        &db_flag(&db),
        "--num=20000",
        "--benchmarks=fillrandom,readrandom",
        "--write_buffer_size=65536",
        "--target_file_size_base=65536",
        "--use_direct_reads",
        "--use_direct_io_for_flush_and_compaction=true",
        &format!("--json={}", json.display()),
    ];
    let o = common::strata(&args, None);
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("use_direct") && err.contains("O_DIRECT"),
            "{err}"
        );
        eprintln!(
            "SKIPPED: O_DIRECT refused in {}: {err}",
            tmp.path().display()
        );
        return;
    }
    let out = String::from_utf8_lossy(&o.stdout);
    common::assert_readrandom_found_63_percent(&out);
    let records = std::fs::read_to_string(&json).expect("json");
    for line in records.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("json line");
        let engine = &v["options"]["engine"];
        assert_eq!(engine["use_direct_reads"], true, "{line}");
        assert_eq!(
            engine["use_direct_io_for_flush_and_compaction"], true,
            "{line}"
        );
        let mapping = v["option_mapping"].as_array().expect("mapping");
        assert!(
            mapping
                .iter()
                .any(|m| m["flag"] == "use_direct_reads"
                    && m["engine"] == "Options::use_direct_reads"),
            "{line}"
        );
    }
}

/// `--db_paths` spreads the tables over the directories (L0 and L1 in the first, the
/// rest in the second), and each record reports every path's table I/O.
#[test]
fn db_paths_flag_spreads_tables_and_reports_each_path() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("db");
    let (fast, slow) = (tmp.path().join("fast"), tmp.path().join("slow"));
    let json = tmp.path().join("bench.jsonl");
    let out = ok(
        &[
            "bench",
            &db_flag(&db),
            "--num=20000",
            "--benchmarks=fillrandom,readrandom",
            "--write_buffer_size=65536",
            "--target_file_size_base=65536",
            "--max_bytes_for_level_base=262144",
            &format!("--db_paths={}:524288,{}:0", fast.display(), slow.display()),
            &format!("--json={}", json.display()),
        ],
        None,
    );
    common::assert_readrandom_found_63_percent(&out);
    let tables = |d: &std::path::Path| {
        std::fs::read_dir(d)
            .expect("list")
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".sst"))
            })
            .count()
    };
    assert!(tables(&fast) > 0 && tables(&slow) > 0, "{out}");
    assert_eq!(tables(&db), 0);
    let records = std::fs::read_to_string(&json).expect("json");
    let last = records.lines().last().expect("a record");
    let v: serde_json::Value = serde_json::from_str(last).expect("json line");
    let paths = v["paths"].as_array().expect("paths");
    assert_eq!(paths.len(), 2, "{last}");
    for (p, dir) in paths.iter().zip([&fast, &slow]) {
        assert_eq!(p["path"], dir.display().to_string(), "{last}");
        assert!(p["bytes_written"].as_u64() > Some(0), "{last}");
        assert!(p["reads"].as_u64() > Some(0), "{last}");
    }
    let bad = common::strata(&["bench", &db_flag(&db), "--db_paths=/x"], None);
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("DIR:BYTES"),
        "{bad:?}"
    );
}

/// `--device=1:...` puts a modelled device under data path 1 only: its table reads
/// wait for the model (200 µs each, sequential ones aside), path 0's do not; a path
/// index with no data path is refused.
#[test]
fn device_flag_models_one_data_path() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("db");
    let (fast, slow) = (tmp.path().join("fast"), tmp.path().join("slow"));
    let json = tmp.path().join("bench.jsonl");
    let paths = format!("--db_paths={}:524288,{}:0", fast.display(), slow.display());
    let out = ok(
        &[
            "bench",
            &db_flag(&db),
            "--num=20000",
            "--reads=2000",
            "--benchmarks=fillrandom,readrandom",
            "--write_buffer_size=65536",
            "--target_file_size_base=65536",
            "--max_bytes_for_level_base=262144",
            "--cache_size=0",
            &paths,
            "--device=1:200,500,5000",
            &format!("--json={}", json.display()),
        ],
        None,
    );
    common::assert_readrandom_found_63_percent(&out);
    let records = std::fs::read_to_string(&json).expect("json");
    let last = records.lines().last().expect("a record");
    let v: serde_json::Value = serde_json::from_str(last).expect("json line");
    // The model is a floor: each non-sequential read of path 1 takes at least 200 µs,
    // and readrandom's reads are more than 1% of them, so the p99 bucket bound is
    // at least 262 µs whatever the machine's load. (Path 0 is unmodelled: no bound.)
    let p99 = v["paths"][1]["read_p99_us"].as_f64().expect("p99");
    assert!(p99 >= 200.0, "{last}");
    let bad = common::strata(&["bench", &db_flag(&db), &paths, "--device=2:nvme"], None);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("path index 2"), "{err}");
    let bad = common::strata(&["bench", &db_flag(&db), "--device=0:floppy"], None);
    assert!(!bad.status.success());
}

/// The text of every OPTIONS file in the database `db`.
fn options_files(db: &std::path::Path) -> String {
    std::fs::read_dir(db)
        .expect("list db")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("OPTIONS"))
        .map(|e| std::fs::read_to_string(e.path()).expect("read OPTIONS"))
        .collect()
}

/// `--delayed_compaction --vct=4` reaches the engine: the database's OPTIONS file
/// records `delayed_compaction=vct:4`, the JSON record carries both flags, what Strata
/// made of them and the virtual-compaction counters (some compactions of a small tree
/// were deferred); `--vsmt` and `--virtual_garbage_ratio` are recorded and mapped at
/// their defaults and reach the OPTIONS file when set; `--vct=1`, `--vsmt=1` and
/// `--virtual_garbage_ratio=0` are refused naming the flag, before any database is made.
#[test]
fn delayed_compaction_flags_reach_the_engine_and_are_recorded() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let flags = [
        "--num=20000",
        "--benchmarks=fillrandom",
        "--write_buffer_size=65536",
        "--target_file_size_base=65536",
        "--max_bytes_for_level_base=262144",
        "--delayed_compaction=true",
        "--vct=4",
    ];
    let (out, records) = common::bench_with_json(tmp.path(), &flags);
    assert!(out.contains("fillrandom   :"), "{out}");
    let options = options_files(&tmp.path().join("db"));
    assert!(
        options
            .lines()
            .any(|l| l.trim() == "delayed_compaction=vct:4,vsmt:5,garbage:0.1"),
        "{options}"
    );
    let line = records.lines().last().expect("a record");
    let v: serde_json::Value = serde_json::from_str(line).expect("json line");
    assert_eq!(v["options"]["engine"]["delayed_compaction"], true, "{line}");
    assert_eq!(v["options"]["engine"]["vct"], 4, "{line}");
    // --vsmt and --virtual_garbage_ratio at their defaults: recorded and mapped.
    assert_eq!(v["options"]["engine"]["vsmt"], 5, "{line}");
    assert_eq!(
        v["options"]["engine"]["virtual_garbage_ratio"], 0.1,
        "{line}"
    );
    let mapping = v["option_mapping"].as_array().expect("mapping");
    assert!(
        mapping.iter().any(|m| m["flag"] == "delayed_compaction"
            && m["engine"].as_str().is_some_and(
                |e| e.contains("with_vct(4).with_vsmt(5).with_max_garbage_ratio(0.1)")
            )),
        "{line}"
    );
    for flag in ["vct", "vsmt", "virtual_garbage_ratio"] {
        assert!(mapping.iter().any(|m| m["flag"] == flag), "{flag}: {line}");
    }
    let counters = &v["counters"];
    for c in [
        "virtual_compactions",
        "virtual_tables_created",
        "virtual_bytes_deferred",
    ] {
        assert!(counters[c].as_u64().is_some(), "{c} missing: {line}");
    }
    assert!(
        counters["virtual_compactions"].as_u64() > Some(0),
        "no compaction deferred: {line}"
    );
    assert!(
        counters["virtual_tables_created"].as_u64() > Some(0),
        "{line}"
    );

    // Out of range: refused naming the flag, before any database is made.
    let db = tmp.path().join("refused");
    for (bad, flag, rule) in [
        ("--vct=1", "vct", ">= 2"),
        ("--vsmt=1", "vsmt", ">= 2"),
        (
            "--virtual_garbage_ratio=0",
            "virtual_garbage_ratio",
            "(0, 1]",
        ),
    ] {
        let out = common::strata(
            &[
                "bench",
                &db_flag(&db),
                "--num=100",
                "--benchmarks=fillrandom",
                "--no_json",
                "--delayed_compaction",
                bad,
            ],
            None,
        );
        assert!(!out.status.success(), "{bad} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        let named = format!("invalid value for '--{flag}'");
        assert!(err.contains(&named) && err.contains(rule), "{err}");
        assert!(!db.exists(), "a refused run made {}", db.display());
    }

    // Set values reach the OPTIONS file.
    let dir = tmp.path().join("set");
    std::fs::create_dir(&dir).expect("mkdir");
    common::bench_with_json(
        &dir,
        &[
            "--num=2000",
            "--benchmarks=fillrandom",
            "--delayed_compaction",
            "--vct=4",
            "--vsmt=3",
            "--virtual_garbage_ratio=0.5",
        ],
    );
    let options = options_files(&dir.join("db"));
    assert!(
        options
            .lines()
            .any(|l| l.trim() == "delayed_compaction=vct:4,vsmt:3,garbage:0.5"),
        "{options}"
    );
}

/// multireadrandom reads readrandom's key stream in batches: on the same data it finds
/// exactly as many keys, however the keys are batched (a batch of 7 leaves a partial
/// last batch).
#[test]
fn multireadrandom_finds_what_readrandom_finds() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = db_flag(&tmp.path().join("db"));
    let found = |out: &str, name: &str| -> String {
        let line = out
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} line: {out}"));
        line.split("(found ").nth(1).expect("found").to_string()
    };
    let out = ok(
        &[
            "bench",
            &db,
            "--num=20000",
            "--write_buffer_size=65536",
            "--target_file_size_base=65536",
            "--benchmarks=fillrandom,readrandom",
            "--no_json",
        ],
        None,
    );
    let want = found(&out, "readrandom");
    for batch in ["1", "7", "32"] {
        let out = ok(
            &[
                "bench",
                &db,
                "--use_existing_db",
                "--num=20000",
                // Second in the list, as readrandom was: the same key stream.
                "--benchmarks=waitforcompaction,multireadrandom",
                &format!("--batch_size={batch}"),
                "--no_json",
            ],
            None,
        );
        let got = found(&out, "multireadrandom");
        assert_eq!(
            got.split(')').next(),
            want.split(')').next(),
            "batch {batch}: {out}"
        );
    }
}
