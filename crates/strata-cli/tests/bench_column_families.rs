//! Protects: `strata bench --num_column_families=N` (db_bench's flag) on the real
//! engine: every written key is found again, each key is in the family the shared
//! routing function (FNV-1a 64 modulo N) names, every family holds data (checked by
//! opening the database with the library), batches span families, a reopen with
//! `--use_existing_db` finds the families again, the JSON mapping says what was done,
//! and scans and Strata transactions over several families are refused in one line.

mod common;

use common::{bench_with_json, db_flag, ok, strata};
use std::sync::Arc;

/// `found X of Y` of the `readrandom` line.
fn found(out: &str) -> (u64, u64) {
    out.lines()
        .find(|l| l.starts_with("readrandom"))
        .and_then(|l| l.split("(found ").nth(1))
        .and_then(|s| s.trim_end_matches(')').split_once(" of "))
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .unwrap_or_else(|| panic!("no readrandom line in {out}"))
}

/// FNV-1a 64 of `key` modulo `n`: the routing the CLI documents, recomputed here so a
/// change to it fails this test.
fn family_of(key: &[u8], n: u64) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in key {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h % n) as usize
}

const SMALL_TREE: &[&str] = &[
    "--write_buffer_size=65536",
    "--target_file_size_base=65536",
    "--max_bytes_for_level_base=262144",
];

#[test]
fn four_families_find_every_key_and_each_holds_its_share() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // fillseq writes every key of [0, num): readrandom must find all of them.
    let mut flags = vec![
        "--num=20000",
        "--threads=2",
        "--num_column_families=4",
        "--benchmarks=fillseq,readrandom,stats",
    ];
    flags.extend(SMALL_TREE);
    let (out, records) = bench_with_json(tmp.path(), &flags);
    assert_eq!(found(&out), (20000, 20000), "{out}");
    assert!(out.contains("** column family cf3 **"), "{out}");
    let first: serde_json::Value =
        serde_json::from_str(records.lines().next().expect("a record")).expect("json");
    assert_eq!(first["options"]["engine"]["num_column_families"], 4);
    let m = first["option_mapping"]
        .as_array()
        .expect("mapping")
        .iter()
        .find(|m| m["flag"] == "num_column_families")
        .expect("num_column_families entry")
        .clone();
    assert_eq!(m["fidelity"], "exact", "{m}");
    assert!(
        m["engine"].as_str().is_some_and(|e| e.contains("FNV-1a")),
        "{m}"
    );

    // fillrandom (batches of 8 updates, spanning families) then readrandom finds
    // exactly what the same run over one family finds: the same key stream, nothing
    // lost to routing.
    let run = |db: &str, n: &str| {
        let mut args = vec![
            "bench",
            db,
            n,
            "--num=20000",
            "--batch_size=8",
            "--benchmarks=fillrandom,readrandom",
            "--no_json",
        ];
        args.extend(SMALL_TREE);
        ok(&args, None)
    };
    let one = found(&run(
        &db_flag(&tmp.path().join("one")),
        "--num_column_families=1",
    ));
    let db4 = tmp.path().join("four");
    let four = found(&run(&db_flag(&db4), "--num_column_families=4"));
    assert_eq!(four, one, "four families found other keys than one");
    assert!(one.0 > 10_000, "{one:?}");

    // A reopen finds the families and every key again.
    let mut args = vec![
        "bench".to_string(),
        db_flag(&db4),
        "--num=20000".into(),
        "--num_column_families=4".into(),
        "--use_existing_db".into(),
        // readrandom second, as before, so it reads the same key stream.
        "--benchmarks=stats,readrandom".into(),
        "--no_json".into(),
    ];
    args.extend(SMALL_TREE.iter().map(|s| s.to_string()));
    let again = ok(&args.iter().map(String::as_str).collect::<Vec<_>>(), None);
    assert_eq!(found(&again), one, "{again}");
    assert!(!again.contains("Mapping:"), "every flag exact: {again}");
    assert!(
        again.contains("Families:   default, cf1, cf2, cf3"),
        "{again}"
    );

    // The library sees four families, each holding the keys routed to it, together
    // exactly the keys of the one-family database.
    let opts =
        || strata::Options::default().with_merge_operator(Some(Arc::new(strata::merge::U64Add)));
    let count = |db: &strata::Db, cf: &strata::CfHandle, f: usize, n: u64| -> u64 {
        let mut it = db
            .iter_cf(&strata::ReadOptions::default(), cf)
            .expect("iter");
        it.seek_to_first();
        let mut keys = 0u64;
        while it.valid() {
            assert_eq!(
                family_of(it.key(), n),
                f,
                "a key of {cf:?} routed elsewhere"
            );
            keys += 1;
            it.next();
        }
        it.status().expect("scan");
        keys
    };
    let db1 = strata::Db::open(tmp.path().join("one"), opts()).expect("open with the library");
    assert_eq!(db1.cf_names(), ["default"]);
    let keys = count(&db1, &db1.default_cf(), 0, 1);
    db1.close().expect("close");
    assert!(keys > 10_000, "{keys}");
    let db = strata::Db::open(&db4, opts()).expect("open with the library");
    assert_eq!(db.cf_names(), ["default", "cf1", "cf2", "cf3"]);
    let mut total = 0u64;
    for (f, name) in db.cf_names().iter().enumerate() {
        let cf = db.cf(name).expect("family");
        let n = count(&db, &cf, f, 4);
        assert!(n > keys / 8, "family {name} holds {n} keys of {keys}");
        total += n;
    }
    assert_eq!(
        total, keys,
        "the families together hold the one family's keys"
    );
    db.close().expect("close");
}

#[test]
fn scans_over_families_are_refused_and_transactions_span_them() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = db_flag(&tmp.path().join("db"));
    for (flags, want) in [
        (
            &["--num_column_families=2", "--benchmarks=fillseq,readseq"][..],
            "readseq scans",
        ),
        (
            &["--num_column_families=3", "--benchmarks=seekrandom"][..],
            "seekrandom scans",
        ),
        (
            &["--num_column_families=0", "--benchmarks=fillseq"][..],
            "'--num_column_families'",
        ),
    ] {
        let mut args = vec!["bench", &db, "--num=100", "--no_json"];
        args.extend(flags);
        let out = strata(&args, None);
        assert!(!out.status.success(), "{flags:?} ran");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("error: ") && err.lines().count() == 1 && err.contains(want),
            "{flags:?}: {err}"
        );
    }
    // YCSB's workload E scans too.
    let out = strata(
        &[
            "ycsb",
            &db,
            "--workload=e",
            "--num_column_families=2",
            "--records=100",
            "--operations=100",
            "--no_json",
        ],
        None,
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("workload E scans"), "{err}");
    // Transactions span families: every transactional write lands in its key's family.
    let out = strata(
        &[
            "bench",
            &db,
            "--num=2000",
            "--no_json",
            "--num_column_families=3",
            "--transaction_db",
            "--benchmarks=fillseq,readrandom",
        ],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(found 2000 of 2000)"), "{text}");
}
