//! Protects: compaction filters (`strata::compaction_filter`, docs/ARCHITECTURE.md
//! §6.13). A filter removes and changes values only where no live snapshot can read
//! them: reads at a held snapshot never change, current reads see the filtered values,
//! a removed key never brings an older version back, flushes filter nothing, and the
//! counters and the factory's job context tell what happened.

mod common;

use common::tiny_options;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use strata::compaction_filter::{self, CompactionFilter, Decision, FilterContext};
use strata::{Db, Options, ReadOptions, Snapshot, WriteOptions};

/// Removes values starting with `drop`, upper-cases values starting with `up`.
struct Rule;

impl CompactionFilter for Rule {
    fn filter(&mut self, _key: &[u8], value: &[u8]) -> Decision {
        if value.starts_with(b"drop") {
            Decision::Remove
        } else if value.starts_with(b"up") {
            Decision::Change(value.to_ascii_uppercase())
        } else {
            Decision::Keep
        }
    }
}

/// What the rule makes of `value` (`None`: removed).
fn ruled(value: &[u8]) -> Option<Vec<u8>> {
    let mut f = Rule;
    match f.filter(b"", value) {
        Decision::Keep => Some(value.to_vec()),
        Decision::Remove => None,
        Decision::Change(v) => Some(v),
    }
}

fn options(contexts: Arc<Mutex<Vec<FilterContext>>>) -> Options {
    tiny_options().with_compaction_filter_factory(Some(compaction_filter::factory(
        "rule",
        move |ctx| {
            contexts.lock().unwrap().push(ctx.clone());
            Some(Box::new(Rule))
        },
    )))
}

fn scan(db: &Db, ro: &ReadOptions) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut it = db.iter(ro).unwrap();
    let mut out = BTreeMap::new();
    it.seek_to_first();
    while it.valid() {
        out.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status().unwrap();
    out
}

#[test]
fn filters_change_only_what_no_snapshot_reads() {
    let dir = tempfile::tempdir().unwrap();
    let contexts = Arc::new(Mutex::new(Vec::new()));
    let db = Db::open(dir.path(), options(Arc::clone(&contexts))).unwrap();
    let wo = WriteOptions::default();
    let mut rng = StdRng::seed_from_u64(11);
    // The model: each key's values in write order, and the index of the first write
    // after the snapshot.
    let mut history: BTreeMap<Vec<u8>, Vec<Vec<u8>>> = BTreeMap::new();
    let write =
        |db: &Db, history: &mut BTreeMap<Vec<u8>, Vec<Vec<u8>>>, rng: &mut StdRng, i: u32| {
            let k = format!("k{:03}", rng.random_range(0..300u32)).into_bytes();
            let prefix = ["keep", "drop", "up"][rng.random_range(0..3usize)];
            let v = format!("{prefix}-{i}-{}", "x".repeat(rng.random_range(0..40))).into_bytes();
            db.put(&wo, &k, &v).unwrap();
            history.entry(k).or_default().push(v);
        };
    for i in 0..2000 {
        write(&db, &mut history, &mut rng, i);
    }
    // Compactions before the snapshot may already have filtered some of these
    // values: what the snapshot reads now is what it must read for ever.
    let snap: Snapshot = db.snapshot();
    let at_snapshot = scan(&db, &ReadOptions::default().with_snapshot(snap.clone()));
    let written_before: BTreeMap<Vec<u8>, usize> = history
        .iter()
        .map(|(k, vs)| (k.clone(), vs.len()))
        .collect();
    for i in 2000..4000 {
        write(&db, &mut history, &mut rng, i);
    }
    // A flush filters nothing: right after it, every value reads as written.
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    db.wait_for_compactions().unwrap();

    // Reads at the snapshot are exactly the state at the snapshot.
    let at = ReadOptions::default().with_snapshot(snap.clone());
    assert_eq!(scan(&db, &at), at_snapshot, "a snapshot's reads changed");
    // Current reads: a key last written after the snapshot reads as the rule makes
    // its value (removed: absent, never an older value); a key last written before it
    // reads as the snapshot reads it (the snapshot can see that entry: unchanged).
    let mut want = BTreeMap::new();
    for (k, vs) in &history {
        let last = vs.last().unwrap();
        let after = vs.len() > written_before.get(k).copied().unwrap_or(0);
        let v = if after {
            ruled(last)
        } else {
            at_snapshot.get(k).cloned()
        };
        if let Some(v) = v {
            want.insert(k.clone(), v);
        }
    }
    assert_eq!(scan(&db, &ReadOptions::default()), want, "current reads");
    let c = db.stats().counters;
    assert!(
        c.compaction_filter_removed > 0 && c.compaction_filter_changed > 0,
        "{c:?}"
    );
    assert!(
        contexts
            .lock()
            .unwrap()
            .iter()
            .any(|ctx| ctx.manual && ctx.bottommost),
        "compact_range's job context"
    );

    // Without the snapshot, a full compaction filters everything.
    drop(snap);
    drop(at);
    db.compact_range(None, None).unwrap();
    let want: BTreeMap<Vec<u8>, Vec<u8>> = history
        .iter()
        .filter_map(|(k, vs)| ruled(vs.last().unwrap()).map(|v| (k.clone(), v)))
        .collect();
    assert_eq!(
        scan(&db, &ReadOptions::default()),
        want,
        "after the snapshot went"
    );
    db.close().unwrap();
}

/// A flush writes every value as written; only a compaction filters.
#[test]
fn flushes_filter_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let contexts = Arc::new(Mutex::new(Vec::new()));
    let db = Db::open(
        dir.path(),
        options(Arc::clone(&contexts))
            .with_level0_file_num_compaction_trigger(100)
            .with_level0_slowdown_writes_trigger(200)
            .with_level0_stop_writes_trigger(300),
    )
    .unwrap();
    let wo = WriteOptions::default();
    db.put(&wo, b"a", b"drop me").unwrap();
    db.put(&wo, b"c", b"keep").unwrap();
    db.flush().unwrap();
    // A second L0 table over the same range: the manual compaction must merge the two
    // (one table alone would move down without a rewrite, and unfiltered).
    db.put(&wo, b"b", b"up me").unwrap();
    db.put(&wo, b"d", b"keep").unwrap();
    db.flush().unwrap();
    let ro = ReadOptions::default();
    assert_eq!(db.get(&ro, b"a").unwrap(), Some(b"drop me".to_vec()));
    assert_eq!(db.get(&ro, b"b").unwrap(), Some(b"up me".to_vec()));
    assert!(
        contexts.lock().unwrap().is_empty(),
        "a flush asked for a filter"
    );
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(&ro, b"a").unwrap(), None);
    assert_eq!(db.get(&ro, b"b").unwrap(), Some(b"UP ME".to_vec()));
    db.close().unwrap();
}

/// `compact_range` with a filter rewrites what it moves down (no trivial move), so a
/// lone flushed table is filtered on its way to L1.
#[test]
fn compact_range_with_a_filter_rewrites_what_it_moves() {
    let dir = tempfile::tempdir().unwrap();
    let contexts = Arc::new(Mutex::new(Vec::new()));
    let db = Db::open(dir.path(), options(Arc::clone(&contexts))).unwrap();
    let wo = WriteOptions::default();
    db.put(&wo, b"a", b"drop me").unwrap();
    db.put(&wo, b"b", b"up me").unwrap();
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    let ro = ReadOptions::default();
    assert_eq!(db.get(&ro, b"a").unwrap(), None);
    assert_eq!(db.get(&ro, b"b").unwrap(), Some(b"UP ME".to_vec()));
    assert!(db.stats().levels[0].files == 0);
    db.close().unwrap();
}

/// Data already in the deepest level reaches the filter too: `compact_range` ends by
/// rewriting the deepest level's tables in range in place when the family has a
/// filter (RocksDB's `kIfHaveCompactionFilter`), each once (the step's own outputs
/// are not rewritten again), and only those in range. Without a filter it rewrites
/// nothing there. (Before, values already at the bottom stayed unfiltered, and the
/// snapshot test above depended on where background compactions had put the data.)
#[test]
fn compact_range_filters_the_deepest_level_in_place_once() {
    let dir = tempfile::tempdir().unwrap();
    let wo = WriteOptions::default();
    let key = |i: u32| format!("key{i:05}").into_bytes();
    {
        let db = Db::open(dir.path(), tiny_options()).unwrap();
        for i in 0..2000u32 {
            let v = if i % 3 == 0 { "drop it" } else { "up and up" };
            db.put(&wo, &key(i), v.as_bytes()).unwrap();
        }
        db.compact_range(None, None).unwrap();
        let written = db.stats().counters.compaction_bytes_written;
        // No filter: the deepest level is what a manual compaction promises already.
        db.compact_range(None, None).unwrap();
        assert_eq!(db.stats().counters.compaction_bytes_written, written);
        db.close().unwrap();
    }
    let contexts = Arc::new(Mutex::new(Vec::new()));
    let db = Db::open(dir.path(), options(Arc::clone(&contexts))).unwrap();
    let deepest = db.stats().levels.iter().rposition(|l| l.files > 0).unwrap();
    assert!(
        db.stats().levels[..deepest].iter().all(|l| l.files == 0),
        "every table in the deepest level"
    );
    let files = db.stats().levels[deepest].files;
    assert!(files > 2, "several tables to rewrite: {files}");
    // Half the key space: only the tables over it are rewritten.
    let (lo, hi) = (key(0), key(999));
    db.compact_range(Some(&lo), Some(&hi)).unwrap();
    let ro = ReadOptions::default();
    for i in 0..2000u32 {
        let got = db.get(&ro, &key(i)).unwrap();
        let want: Option<&[u8]> = match (i % 3, i < 1000) {
            (0, true) => None,
            (_, true) => Some(b"UP AND UP"),
            (0, false) => Some(b"drop it"),
            (_, false) => Some(b"up and up"),
        };
        // A table straddling key 999 is rewritten whole: keys just past it may be
        // filtered too, never keys outside the tables the range meets.
        if i < 1000 || got.as_deref() == want || i > 1100 {
            assert_eq!(got.as_deref(), want, "key {i}");
        }
    }
    let c = db.stats().counters;
    assert!(c.compaction_filter_removed >= 333, "{c:?}");
    let jobs = contexts.lock().unwrap().clone();
    assert!(!jobs.is_empty() && jobs.iter().all(|ctx| ctx.manual && ctx.level == deepest));
    assert!(jobs.iter().all(|ctx| ctx.bottommost), "{jobs:?}");
    // Each table once: the job count is bounded by the tables the range met.
    assert!(
        jobs.len() <= files,
        "{} jobs for {files} tables",
        jobs.len()
    );
    // A second compaction of the same range filters the (new) tables again, and
    // finds nothing more to change.
    let removed = c.compaction_filter_removed;
    db.compact_range(Some(&lo), Some(&hi)).unwrap();
    assert_eq!(db.stats().counters.compaction_filter_removed, removed);
    db.close().unwrap();
}

/// `periodic_compaction_seconds`: in a database nobody writes to or compacts, data
/// at the bottom reaches the filter once its tables are that old (the scheduler wakes
/// for it by itself); tables younger than the period are left alone.
#[test]
fn periodic_compaction_reaches_the_filter_in_a_quiet_tree() {
    let dir = tempfile::tempdir().unwrap();
    let wo = WriteOptions::default();
    let key = |i: u32| format!("key{i:05}").into_bytes();
    {
        let db = Db::open(dir.path(), tiny_options()).unwrap();
        for i in 0..600u32 {
            let v = if i % 3 == 0 { "drop it" } else { "up and up" };
            db.put(&wo, &key(i), v.as_bytes()).unwrap();
        }
        db.compact_range(None, None).unwrap();
        db.close().unwrap();
    }
    // Two seconds: the tables just written are not due yet at open, so it is the
    // scheduler's own timed wake-up that finds them due.
    let contexts = Arc::new(Mutex::new(Vec::new()));
    let db = Db::open(
        dir.path(),
        options(Arc::clone(&contexts)).with_periodic_compaction_seconds(2),
    )
    .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while db.stats().counters.compaction_filter_removed < 200 {
        assert!(
            std::time::Instant::now() < deadline,
            "no periodic compaction"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let ro = ReadOptions::default();
    for i in 0..600u32 {
        let want: Option<&[u8]> = match i % 3 {
            0 => None,
            _ => Some(b"UP AND UP"),
        };
        assert_eq!(db.get(&ro, &key(i)).unwrap().as_deref(), want, "key {i}");
    }
    let jobs = contexts.lock().unwrap().clone();
    assert!(
        !jobs.is_empty() && jobs.iter().all(|ctx| !ctx.manual),
        "{jobs:?}"
    );
    db.close().unwrap();
    // A period far away: the (fresh) tables are not due, nothing is rewritten.
    let db = Db::open(
        dir.path(),
        options(Arc::clone(&contexts)).with_periodic_compaction_seconds(3600),
    )
    .unwrap();
    db.wait_for_compactions().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(db.stats().counters.compaction_bytes_written, 0);
    db.close().unwrap();
}

/// A filter asking to change a value into one over `MAX_VALUE_LEN` (the limit every
/// write is held to, on which the table format's block bounds rest) is refused: the
/// old value stays readable, the refusal is counted, and the database stays healthy.
/// (Without the refusal the 128 MiB + 1 value replaced the old one.)
#[test]
fn a_change_over_the_value_limit_is_refused_and_the_value_kept() {
    struct Huge;
    impl CompactionFilter for Huge {
        fn filter(&mut self, key: &[u8], _value: &[u8]) -> Decision {
            if key == b"big" {
                Decision::Change(vec![b'x'; strata::MAX_VALUE_LEN + 1])
            } else {
                Decision::Keep
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let opts = tiny_options()
        .with_compaction_filter_factory(Some(compaction_filter::factory("huge", |_| {
            Some(Box::new(Huge))
        })));
    let db = Db::open(dir.path(), opts).unwrap();
    let wo = WriteOptions::default();
    db.put(&wo, b"big", b"small").unwrap();
    db.put(&wo, b"other", b"v").unwrap();
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    let ro = ReadOptions::default();
    assert_eq!(db.get(&ro, b"big").unwrap(), Some(b"small".to_vec()));
    // Refused once: by the move into L1. The table that move wrote is this call's
    // own, so the deepest level's in-place rewrite leaves it (it went through the
    // filter already).
    let c = db.stats().counters;
    assert_eq!(c.compaction_filter_changes_refused, 1, "{c:?}");
    assert_eq!(c.compaction_filter_changed, 0);
    db.put(&wo, b"after", b"x").expect("healthy");
    db.close().unwrap();
}
