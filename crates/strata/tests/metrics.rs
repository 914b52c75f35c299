//! Protects: the `metrics` feature (docs/ARCHITECTURE.md §10.2). A known workload on
//! two column families, recorded by `metrics-util`'s debugging recorder as the local
//! recorder of the thread that opens the database, gives exact counts per family
//! (writes, bytes, gets, hits, misses, flushes), timed gets and writes, job counters
//! that agree with `DbStats`, the published `strata_db_*` and per-path counters equal
//! to the engine's own at close, and gauges that match the properties; every name
//! the engine emits is in the documented table.
//!
//! Run: `cargo test -p strata --features metrics --test metrics`.
#![cfg(feature = "metrics")]

use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use std::collections::BTreeMap;
use strata::{CfOptions, Db, Options, ReadOptions, WriteBatch, WriteOptions};

/// Metric name and its labels (sorted), as the recorder keyed them.
type Key = (String, Vec<(String, String)>);

fn snapshot(recorder: &DebuggingRecorder) -> BTreeMap<Key, DebugValue> {
    recorder
        .snapshotter()
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            let (_, key) = key.into_parts();
            let mut labels: Vec<(String, String)> = key
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect();
            labels.sort();
            ((key.name().to_owned(), labels), value)
        })
        .collect()
}

fn key(name: &str, labels: &[(&str, &str)]) -> Key {
    let mut labels: Vec<(String, String)> = labels
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    labels.sort();
    (name.to_owned(), labels)
}

fn counter(snap: &BTreeMap<Key, DebugValue>, name: &str, labels: &[(&str, &str)]) -> u64 {
    match snap.get(&key(name, labels)) {
        Some(DebugValue::Counter(v)) => *v,
        other => panic!("{name}{labels:?}: {other:?}"),
    }
}

fn gauge(snap: &BTreeMap<Key, DebugValue>, name: &str, labels: &[(&str, &str)]) -> f64 {
    match snap.get(&key(name, labels)) {
        Some(DebugValue::Gauge(v)) => v.into_inner(),
        other => panic!("{name}{labels:?}: {other:?}"),
    }
}

fn samples(snap: &BTreeMap<Key, DebugValue>, name: &str, labels: &[(&str, &str)]) -> usize {
    match snap.get(&key(name, labels)) {
        Some(DebugValue::Histogram(v)) => v.len(),
        other => panic!("{name}{labels:?}: {other:?}"),
    }
}

#[test]
fn a_known_workload_gives_exact_counts_per_family() {
    let recorder = DebuggingRecorder::new();
    let dir = tempfile::tempdir().unwrap();
    let wo = WriteOptions::default();
    let ro = ReadOptions::default();
    let (figures, live_bytes, stats) = metrics::with_local_recorder(&recorder, || {
        let db = Db::builder()
            .metrics_label("main")
            .open(dir.path(), Options::default())
            .unwrap();
        let other = db.create_cf("other", CfOptions::default()).unwrap();
        // 100 puts to the default family, 30 to `other`, and one batch of 2 + 1.
        for i in 0..100u32 {
            db.put(&wo, format!("k{i:03}").as_bytes(), b"0123456789")
                .unwrap();
        }
        for i in 0..30u32 {
            db.put_cf(&wo, &other, format!("o{i:03}").as_bytes(), b"xy")
                .unwrap();
        }
        let mut batch = WriteBatch::default();
        batch.put(b"k100", b"v");
        batch.put(b"k101", b"v");
        batch.put_cf(&other, b"o100", b"v");
        db.write(&wo, batch).unwrap();
        db.flush().unwrap();
        // A second L0 table of the default family, then a manual compaction.
        for i in 0..50u32 {
            db.put(&wo, format!("k{i:03}").as_bytes(), b"abcdefghij")
                .unwrap();
        }
        db.compact_range(None, None).unwrap();
        db.wait_for_compactions().unwrap();
        // 40 hits and 7 misses in the default family, 5 hits in `other`, and a
        // multi_get of 2 hits and 1 miss (counted, not timed).
        for i in 0..40u32 {
            assert!(db
                .get(&ro, format!("k{i:03}").as_bytes())
                .unwrap()
                .is_some());
        }
        for i in 0..7u32 {
            assert!(db
                .get(&ro, format!("x{i:03}").as_bytes())
                .unwrap()
                .is_none());
        }
        for i in 0..5u32 {
            let k = format!("o{i:03}");
            assert!(db.get_cf(&ro, &other, k.as_bytes()).unwrap().is_some());
        }
        let many = db.multi_get(&ro, &[b"k000".as_slice(), b"k001", b"zzz"]);
        assert_eq!(many.iter().filter(|a| matches!(a, Ok(Some(_)))).count(), 2);
        let live: u64 = db
            .property("rocksdb.live-sst-files-size")
            .unwrap()
            .parse()
            .unwrap();
        let stats = db.stats();
        db.close().unwrap();
        (snapshot(&recorder), live, stats)
    });
    let d = [("db", "main"), ("cf", "default")];
    let o = [("db", "main"), ("cf", "other")];
    let m = [("db", "main")];

    assert_eq!(counter(&figures, "strata_writes_total", &d), 100 + 2 + 50);
    assert_eq!(counter(&figures, "strata_writes_total", &o), 30 + 1);
    assert_eq!(
        counter(&figures, "strata_bytes_written_total", &d),
        100 * 14 + 2 * 5 + 50 * 14
    );
    assert_eq!(
        counter(&figures, "strata_bytes_written_total", &o),
        30 * 6 + 5
    );
    assert_eq!(counter(&figures, "strata_gets_total", &d), 40 + 7 + 3);
    assert_eq!(counter(&figures, "strata_get_hits_total", &d), 40 + 2);
    assert_eq!(counter(&figures, "strata_get_misses_total", &d), 7 + 1);
    assert_eq!(counter(&figures, "strata_gets_total", &o), 5);
    assert_eq!(counter(&figures, "strata_get_hits_total", &o), 5);
    assert_eq!(counter(&figures, "strata_get_misses_total", &o), 0);
    assert_eq!(samples(&figures, "strata_get_seconds", &d), 40 + 7);
    assert_eq!(samples(&figures, "strata_get_seconds", &o), 5);
    // Every write call with a batch: 100 + 30 puts, the batch, 50 puts.
    assert_eq!(
        samples(&figures, "strata_write_seconds", &m),
        100 + 30 + 1 + 50
    );

    // One flush of `other` (Db::flush); two of the default family (Db::flush, then
    // compact_range's own), and its manual compaction.
    assert_eq!(counter(&figures, "strata_flushes_total", &o), 1);
    assert_eq!(counter(&figures, "strata_flushes_total", &d), 2);
    assert_eq!(samples(&figures, "strata_flush_seconds", &d), 2);
    let compactions = counter(&figures, "strata_compactions_total", &d);
    assert!(compactions >= 1, "{compactions}");
    assert_eq!(
        samples(&figures, "strata_compaction_seconds", &d),
        compactions as usize
    );
    assert_eq!(counter(&figures, "strata_compactions_total", &o), 0);
    let c = &stats.counters;
    assert_eq!(
        counter(&figures, "strata_flush_bytes_written_total", &d)
            + counter(&figures, "strata_flush_bytes_written_total", &o),
        c.flush_bytes_written
    );
    assert_eq!(
        counter(&figures, "strata_compaction_bytes_written_total", &d),
        c.compaction_bytes_written
    );
    assert_eq!(
        counter(&figures, "strata_compaction_bytes_read_total", &d),
        c.compaction_bytes_read
    );

    // Published at close, after every job: the engine's own totals.
    assert_eq!(
        counter(&figures, "strata_db_writes_total", &m),
        100 + 30 + 3 + 50
    );
    assert_eq!(
        counter(&figures, "strata_db_gets_total", &m),
        40 + 7 + 5 + 3
    );
    for (name, value) in c.pairs() {
        let published = counter(&figures, &format!("strata_db_{name}_total"), &m);
        assert!(
            published >= value,
            "strata_db_{name}_total {published} < {value}"
        );
    }
    let path = dir.path().display().to_string();
    let p = [("db", "main"), ("path", path.as_str())];
    let reads = counter(&figures, "strata_path_reads_total", &p);
    assert!(reads > 0);
    assert_eq!(
        samples(&figures, "strata_path_read_seconds", &p),
        reads as usize
    );
    assert_eq!(
        counter(&figures, "strata_path_written_bytes_total", &p),
        stats.table_bytes_written()
    );

    // Gauges, as of close: everything compacted out of L0 into one level.
    assert_eq!(
        gauge(&figures, "strata_live_table_bytes", &d),
        live_bytes as f64
    );
    assert_eq!(gauge(&figures, "strata_immutable_memtables", &d), 0.0);
    let files = |cf: &str, level: &str| {
        gauge(
            &figures,
            "strata_level_files",
            &[("db", "main"), ("cf", cf), ("level", level)],
        )
    };
    assert_eq!(files("default", "0"), 0.0);
    assert_eq!(files("other", "0"), 1.0);
    let levels = stats.levels.len();
    let default_files: f64 = (0..levels).map(|l| files("default", &l.to_string())).sum();
    assert_eq!(
        default_files,
        stats.levels.iter().map(|l| l.files).sum::<usize>() as f64
    );
    assert!(gauge(&figures, "strata_memtable_bytes", &d) >= 0.0);
    assert!(figures.contains_key(&key("strata_block_cache_usage_bytes", &m)));
    assert!(figures.contains_key(&key("strata_pending_compaction_bytes", &o)));

    // Every emitted name is in the documented table.
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/ARCHITECTURE.md"
    ))
    .unwrap();
    for (name, _) in figures.keys() {
        let documented = match name.strip_prefix("strata_db_") {
            Some(_) => doc.contains("`strata_db_<counter>_total`"),
            None => doc.contains(&format!("`{name}`")),
        };
        assert!(documented, "{name} is not in docs/ARCHITECTURE.md §10.2");
    }
}

/// Two databases in one process publish apart: each under its own `db` label, the
/// path it was opened with unless the builder names one.
#[test]
fn two_databases_in_one_process_are_labelled_apart() {
    let recorder = DebuggingRecorder::new();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let wo = WriteOptions::default();
    let figures = metrics::with_local_recorder(&recorder, || {
        let first = Db::open(a.path(), Options::default()).unwrap();
        let second = Db::builder()
            .metrics_label("second")
            .open(b.path(), Options::default())
            .unwrap();
        for i in 0..3u32 {
            first.put(&wo, &i.to_be_bytes(), b"v").unwrap();
        }
        second.put(&wo, b"k", b"v").unwrap();
        // A read-only handle beside the writer publishes under a label of its own.
        let reader = Db::open_read_only(a.path(), Options::default()).unwrap();
        let ro = strata::ReadOptions::default();
        assert!(reader.get(&ro, &0u32.to_be_bytes()).unwrap().is_some());
        reader.close().unwrap();
        first.close().unwrap();
        second.close().unwrap();
        snapshot(&recorder)
    });
    let path = a.path().display().to_string();
    let first = [("db", path.as_str())];
    let second = [("db", "second")];
    assert_eq!(counter(&figures, "strata_db_writes_total", &first), 3);
    assert_eq!(counter(&figures, "strata_db_writes_total", &second), 1);
    let first_cf = [("db", path.as_str()), ("cf", "default")];
    let second_cf = [("db", "second"), ("cf", "default")];
    assert_eq!(counter(&figures, "strata_writes_total", &first_cf), 3);
    assert_eq!(counter(&figures, "strata_writes_total", &second_cf), 1);
    let reader = format!("{path} (read-only)");
    let reader_cf = [("db", reader.as_str()), ("cf", "default")];
    assert_eq!(counter(&figures, "strata_gets_total", &reader_cf), 1);
    assert_eq!(counter(&figures, "strata_gets_total", &first_cf), 0);
    assert_eq!(
        counter(&figures, "strata_db_writes_total", &first),
        3,
        "the reader's close published over the writer's totals"
    );
}
