//! Write-backs against a model with history: every scan, get and snapshot read of a
//! database whose scans write back answers as the model (and as the same operations
//! on a database without the option), while write-backs install, get discarded and
//! split boundary files.

use super::*;
use crate::db::Db;
use crate::options::{Options, ReadOptions, WriteOptions};
use std::collections::BTreeMap;

fn key(i: u64) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// Tiny memtables and files, so that a few thousand writes fill four levels.
fn opts(query: Option<QueryCompaction>) -> Options {
    Options::default()
        .with_write_buffer_size(16 << 10)
        .with_target_file_size_base(4 << 10)
        .with_max_bytes_for_level_base(16 << 10)
        .with_max_bytes_for_level_multiplier(4.0)
        .with_level0_file_num_compaction_trigger(2)
        .with_query_compaction(query)
}

/// Every scan from L1 writes back (no profit or obsolete rule), so that the write
/// path runs as often as possible.
fn on() -> QueryCompaction {
    QueryCompaction::new()
        .with_start_level(1)
        .with_profit(0.0)
        .with_min_obsolete(0.0)
}

/// A deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Scans `[lo, hi)` of `db` at `ro` forward, taking at most `limit` entries (then
/// dropping the iterator, as YCSB E does), and compares with `model`.
fn scan_and_check(db: &Db, ro: &ReadOptions, model: &Model, lo: u64, hi: u64, limit: usize) {
    let ro = ro.clone().with_upper_bound(Some(key(hi)));
    let mut it = db.iter(&ro).expect("iter");
    it.seek(&key(lo));
    let mut got = Vec::new();
    while it.valid() && got.len() < limit {
        got.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().expect("scan");
    let want: Vec<(Vec<u8>, Vec<u8>)> = model
        .range(key(lo)..key(hi))
        .take(limit)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(got.len(), want.len(), "scan [{lo}, {hi}) limit {limit}");
    assert!(
        got == want,
        "scan [{lo}, {hi}) limit {limit}: contents differ"
    );
}

fn check_all(db: &Db, ro: &ReadOptions, model: &Model, keys: u64) {
    scan_and_check(db, ro, model, 0, keys, usize::MAX);
    for i in (0..keys).step_by(7) {
        assert_eq!(
            db.get(ro, &key(i)).expect("get"),
            model.get(&key(i)).cloned(),
            "get {i}"
        );
    }
}

/// Writes, deletes and range deletions over `keys` keys, with scans of random ranges
/// and lengths between them, on `db` and the model; snapshots taken along the way are
/// checked at the end against the model as it was.
fn workload(db: &Db, seed: u64, keys: u64, rounds: usize) -> Model {
    let mut rng = Rng(seed);
    let wo = WriteOptions::default();
    let mut model = Model::new();
    let mut snaps = Vec::new();
    for round in 0..rounds {
        for n in 0..400u64 {
            let i = rng.below(keys);
            match rng.below(20) {
                0 => {
                    db.delete(&wo, &key(i)).expect("delete");
                    model.remove(&key(i));
                }
                1 if n % 50 == 1 => {
                    let j = (i + 1 + rng.below(12)).min(keys);
                    db.delete_range(&wo, &key(i), &key(j))
                        .expect("delete_range");
                    let gone: Vec<Vec<u8>> = model
                        .range(key(i)..key(j))
                        .map(|(k, _)| k.clone())
                        .collect();
                    for k in gone {
                        model.remove(&k);
                    }
                }
                _ => {
                    let v = format!("v{round}-{n}-{i}-{}", "x".repeat(40)).into_bytes();
                    db.put(&wo, &key(i), &v).expect("put");
                    model.insert(key(i), v);
                }
            }
        }
        for _ in 0..6 {
            let lo = rng.below(keys);
            let hi = lo + 1 + rng.below(keys / 2);
            let limit = match rng.below(3) {
                0 => 10,
                1 => 200,
                _ => usize::MAX,
            };
            scan_and_check(db, &ReadOptions::default(), &model, lo, hi, limit);
        }
        if round % 5 == 2 {
            snaps.push((db.snapshot(), model.clone()));
        }
    }
    db.wait_for_compactions().expect("settle");
    check_all(db, &ReadOptions::default(), &model, keys);
    for (snap, at) in &snaps {
        let ro = ReadOptions::default().with_snapshot(Some(snap.clone()));
        check_all(db, &ro, at, keys);
    }
    let v = db.inner.default.versions.current();
    v.check_invariants().expect("version invariants");
    model
}

#[test]
fn scans_that_write_back_answer_as_the_model_and_as_the_engine_without_them() {
    for seed in [7u64, 99, 12345] {
        let (a, b) = (
            tempfile::tempdir().expect("dir"),
            tempfile::tempdir().expect("dir"),
        );
        let with = Db::open(a.path(), opts(Some(on()))).expect("open");
        let without = Db::open(b.path(), opts(None)).expect("open");
        let model = workload(&with, seed, 3000, 30);
        assert_eq!(workload(&without, seed, 3000, 30), model, "same operations");
        let c = with.stats().counters;
        assert!(c.query_compactions > 0, "seed {seed}: {c:?}");
        assert!(c.query_compaction_files_split > 0, "seed {seed}: {c:?}");
        assert!(c.query_compaction_bytes_written > 0, "seed {seed}: {c:?}");
        assert_eq!(without.stats().counters.query_compactions, 0);
        // The written tables stay: a reopen without the option reads the same.
        drop(with);
        let reopened = Db::open(a.path(), opts(None)).expect("reopen");
        check_all(&reopened, &ReadOptions::default(), &model, 3000);
        reopened.verify_checksums().expect("verify");
    }
}

#[test]
fn background_write_backs_answer_as_the_model_and_finish_before_wait_for_compactions() {
    let dir = tempfile::tempdir().expect("dir");
    let db = Db::open(dir.path(), opts(Some(on().with_background(true)))).expect("open");
    let model = workload(&db, 4242, 3000, 30);
    // Waiting for compactions waits for queued write-backs too (the final checks
    // of `workload` scanned after its own wait).
    db.wait_for_compactions().expect("settle");
    assert_eq!(db.inner.scan_tees.pending(), 0);
    let c = db.stats().counters;
    assert!(c.query_compactions > 0, "{c:?}");
    check_all(&db, &ReadOptions::default(), &model, 3000);
    db.close().expect("close");
}

/// Builds four levels: `keys` keys written three times, compacted, then partly
/// rewritten into the upper levels.
fn layered(dir: &std::path::Path, q: QueryCompaction) -> (Db, Model) {
    let db = Db::open(dir, opts(Some(q))).expect("open");
    let wo = WriteOptions::default();
    let mut model = Model::new();
    for round in 0..3u64 {
        for i in (0..2000u64).filter(|i| round == 0 || i % (round + 2) == 0) {
            let v = format!("r{round}-{i}-{}", "y".repeat(30)).into_bytes();
            db.put(&wo, &key(i), &v).expect("put");
            model.insert(key(i), v);
        }
        db.flush().expect("flush");
        db.wait_for_compactions().expect("settle");
    }
    (db, model)
}

#[test]
fn a_scan_moving_backward_or_seeking_again_writes_nothing() {
    let dir = tempfile::tempdir().expect("dir");
    let (db, model) = layered(dir.path(), on());
    let before = db.stats().counters;
    {
        let mut it = db.iter(&ReadOptions::default()).expect("iter");
        it.seek(&key(100));
        for _ in 0..50 {
            it.next();
        }
        it.prev();
    }
    {
        let mut it = db.iter(&ReadOptions::default()).expect("iter");
        it.seek(&key(100));
        it.next();
        it.seek(&key(900));
        it.next();
    }
    let after = db.stats().counters;
    assert_eq!(after.query_compactions, before.query_compactions);
    assert_eq!(
        after.query_compactions_discarded_abandoned - before.query_compactions_discarded_abandoned,
        2
    );
    check_all(&db, &ReadOptions::default(), &model, 2000);
}

#[test]
fn a_write_back_over_a_tree_that_moved_is_discarded_and_loses_nothing() {
    let dir = tempfile::tempdir().expect("dir");
    let (db, model) = layered(dir.path(), on());
    let before = db.stats().counters;
    {
        let mut it = db.iter(&ReadOptions::default()).expect("iter");
        it.seek(&key(0));
        for _ in 0..1500 {
            it.next();
        }
        // Every file the scan read moves before it ends.
        db.compact_range(None, None).expect("compact");
    }
    let after = db.stats().counters;
    assert_eq!(after.query_compactions, before.query_compactions);
    assert_eq!(
        after.query_compactions_discarded_stale - before.query_compactions_discarded_stale,
        1,
        "{after:?}"
    );
    check_all(&db, &ReadOptions::default(), &model, 2000);
}

#[test]
fn a_full_scan_writes_the_range_into_the_deepest_level_and_splits_nothing() {
    let dir = tempfile::tempdir().expect("dir");
    let (db, model) = layered(dir.path(), on());
    let v = db.inner.default.versions.current();
    let deepest = v.deepest_nonempty_level().expect("data");
    let levels_with_data = (1..v.num_levels())
        .filter(|&l| !v.files(l).is_empty())
        .count();
    assert!(
        levels_with_data >= 2,
        "the test needs two levels: {levels_with_data}"
    );
    drop(v);
    // No bounds, from the first key to the end. The seek is at the read's sequence
    // number, but no teed table holds a newer version of the key, so the range
    // starts at the key itself and no file is split.
    let mut it = db.iter(&ReadOptions::default()).expect("iter");
    it.seek(&key(0));
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    drop(it);
    assert_eq!(n, model.len());
    let c = db.stats().counters;
    assert_eq!(c.query_compactions, 1, "{c:?}");
    assert_eq!(
        c.query_compaction_files_split, 0,
        "an unbounded scan has no boundary"
    );
    assert_eq!(
        c.query_compaction_bytes_read, 0,
        "nothing but the scan read"
    );
    let v = db.inner.default.versions.current();
    for level in 1..deepest {
        assert!(v.files(level).is_empty(), "L{level} was written back");
    }
    assert!(
        c.query_compaction_entries_dropped > 0,
        "old versions were dropped"
    );
    check_all(&db, &ReadOptions::default(), &model, 2000);
}

#[test]
fn an_iterator_dropped_after_close_writes_nothing() {
    let dir = tempfile::tempdir().expect("dir");
    let (db, _) = layered(dir.path(), on());
    let files = || {
        let mut names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        names.sort();
        names
    };
    let scan = |from: u64, steps: usize| {
        let mut it = db.iter(&ReadOptions::default()).expect("iter");
        it.seek(&key(from));
        for _ in 0..steps {
            it.next();
        }
        it
    };
    // Dropped while open, a scan of [1500, ..) writes back and changes the files.
    let before = files();
    drop(scan(1500, 100));
    assert_eq!(db.stats().counters.query_compactions, 1);
    assert_ne!(files(), before);
    // A scan of [0, 1000), untouched so far, dropped after close: nothing.
    let it = scan(0, 1000);
    db.close().expect("close");
    let closed = files();
    drop(it);
    assert_eq!(files(), closed, "a table was written after close");
    Db::open(dir.path(), opts(None)).expect("reopen: the directory is not locked");
}

#[test]
fn selectivity_chooses_an_even_share_of_scans() {
    let picked = |s: f64| (0..1000u64).filter(|&n| chosen(n, s)).count();
    assert_eq!(picked(1.0), 1000);
    assert_eq!(picked(0.5), 500);
    assert_eq!(picked(0.1), 100);
    assert_eq!(picked(0.001), 1);
    assert!(chosen(0, 1.0) && !chosen(0, 0.5) && chosen(1, 0.5));
}
