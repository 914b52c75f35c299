//! The promotion cache's protocol (P2, ARCHITECTURE §18) on a real database, with the
//! interleavings forced: a get's insert is made by hand, with the token the get
//! sampled, on either side of a compaction that moves a newer version down.

use super::*;
use crate::db::Db;
use crate::env::FaultFs;
use crate::options::DbPath;
use crate::{DbBuilder, ReadOptions, WriteOptions};

/// Tiny tiers: a 24 KiB fast budget (L0 and L1), a 2 KiB promotion cache, no block
/// cache.
fn options() -> Options {
    Options::default()
        .with_write_buffer_size(4096)
        .with_target_file_size_base(2048)
        .with_max_bytes_for_level_base(8192)
        .with_num_levels(4)
        .with_block_cache_capacity(0)
        .with_db_paths(vec![
            DbPath::new("/fast", 24 << 10),
            DbPath::new("/slow", 0),
        ])
        .with_tiering(Some(Tiering::hotrap()))
}

fn open_with(fs: &Arc<FaultFs>, opts: Options) -> Db {
    DbBuilder::new()
        .file_system(Arc::clone(fs) as Arc<dyn FileSystem>)
        .open("/db", opts)
        .expect("open")
}

fn open(fs: &Arc<FaultFs>) -> Db {
    open_with(fs, options())
}

fn figure(db: &Db, name: &str) -> u64 {
    db.stats()
        .tree_hooks
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(0, |(_, v)| *v)
}

/// A get of `k` answered by `v1` (at `seq`) from the slow tier, its insert made with
/// `token`.
fn insert(hooks: &dyn TreeHooks, seq: SequenceNumber, token: u64) {
    let _ = hooks.table_read(&TableRead {
        user_key: b"k",
        value: b"v1",
        seq,
        level: hooks.source_after().expect("a level") + 1,
        plain: true,
        token,
    });
}

/// `k` = v1 in the slow tier, among 400 other keys; returns the hooks and v1's
/// sequence number.
fn with_k_in_the_slow_tier(db: &Db) -> (Arc<dyn TreeHooks>, SequenceNumber) {
    let w = WriteOptions::default();
    db.put(&w, b"k", b"v1").expect("put");
    let seq = db.latest_sequence();
    for i in 0..400 {
        db.put(&w, format!("filler{i:04}").as_bytes(), &[7; 100])
            .expect("put");
    }
    // The first pass leaves L1 over its target; once it has spilled, the second
    // takes everything to the deepest level.
    db.compact_range(None, None).expect("compact");
    db.wait_for_compactions().expect("idle");
    db.compact_range(None, None).expect("compact");
    // Everything went to the deepest level, below the fast ones.
    let levels = db.stats().levels;
    assert!(levels.iter().take(2).all(|l| l.files == 0), "{levels:?}");
    let hooks = db.default_hooks().expect("hotrap hooks");
    (hooks, seq)
}

#[test]
fn an_insert_sampled_before_a_newer_version_moved_down_is_refused() {
    let fs = Arc::new(FaultFs::new());
    let db = open(&fs);
    let (hooks, seq) = with_k_in_the_slow_tier(&db);
    let token = hooks.read_token();
    // The get has its answer (v1) but has not inserted yet; v2 reaches the slow tier.
    db.put(&WriteOptions::default(), b"k", b"v2").expect("put");
    db.compact_range(None, None).expect("compact");
    insert(hooks.as_ref(), seq, token);
    assert_eq!(figure(&db, "cache_refused_epoch"), 1);
    assert_eq!(figure(&db, "cache_inserts"), 0);
    let r = ReadOptions::default();
    assert_eq!(db.get(&r, b"k").expect("get"), Some(b"v2".to_vec()));
    db.close().expect("close");
}

#[test]
fn a_copy_inserted_before_a_newer_version_moved_down_is_taken() {
    let fs = Arc::new(FaultFs::new());
    let db = open(&fs);
    let (hooks, seq) = with_k_in_the_slow_tier(&db);
    insert(hooks.as_ref(), seq, hooks.read_token());
    assert_eq!(figure(&db, "cache_inserts"), 1);
    let r = ReadOptions::default();
    assert_eq!(db.get(&r, b"k").expect("get"), Some(b"v1".to_vec()));
    assert_eq!(figure(&db, "gets_cache"), 1);
    db.put(&WriteOptions::default(), b"k", b"v2").expect("put");
    // Above the cache, the newer version answers first.
    assert_eq!(db.get(&r, b"k").expect("get"), Some(b"v2".to_vec()));
    db.compact_range(None, None).expect("compact");
    assert!(figure(&db, "cache_taken_bytes") >= 3);
    assert_eq!(figure(&db, "cache_entries"), 0);
    assert_eq!(db.get(&r, b"k").expect("get"), Some(b"v2".to_vec()));
    db.close().expect("close");
}

/// Found by review: a drop plan deleting slow files hidden by a range tombstone used
/// not to register, so the copy outlived the originals and, once the tombstone was
/// dropped as bottommost in the fast tier, answered again.
#[test]
fn a_copy_does_not_outlive_originals_dropped_under_a_range_tombstone() {
    let fs = Arc::new(FaultFs::new());
    let db = open(&fs);
    with_k_in_the_slow_tier(&db);
    let r = ReadOptions::default();
    assert_eq!(db.get(&r, b"k").expect("get"), Some(b"v1".to_vec()));
    assert_eq!(figure(&db, "cache_inserts"), 1);
    db.delete_range(&WriteOptions::default(), b"a", b"z")
        .expect("delete_range");
    db.flush().expect("flush");
    db.wait_for_compactions().expect("idle");
    assert_eq!(db.get(&r, b"k").expect("get"), None);
    db.compact_range(None, None).expect("compact");
    db.wait_for_compactions().expect("idle");
    assert_eq!(
        db.get(&r, b"k").expect("get"),
        None,
        "a deleted value came back"
    );
    db.close().expect("close");
}

/// A compaction filter factory whose filters keep everything: its presence is what
/// counts.
#[derive(Debug)]
struct KeepAllFactory;

impl crate::compaction_filter::CompactionFilterFactory for KeepAllFactory {
    fn name(&self) -> &str {
        "keep-all"
    }

    fn create(
        &self,
        _ctx: &crate::compaction_filter::FilterContext,
    ) -> Option<Box<dyn crate::compaction_filter::CompactionFilter>> {
        None
    }
}

/// Found by review: a filter changes an original only at its plan's install, which the
/// epoch check cannot see; with a filter the cache takes no copies.
#[test]
fn with_a_compaction_filter_the_cache_takes_no_copies() {
    let fs = Arc::new(FaultFs::new());
    let db = open_with(
        &fs,
        options().with_compaction_filter_factory(Some(Arc::new(KeepAllFactory))),
    );
    let (hooks, seq) = with_k_in_the_slow_tier(&db);
    insert(hooks.as_ref(), seq, hooks.read_token());
    let r = ReadOptions::default();
    assert_eq!(db.get(&r, b"k").expect("get"), Some(b"v1".to_vec()));
    assert_eq!(figure(&db, "gets_slow"), 2);
    assert_eq!(figure(&db, "cache_inserts"), 0);
    assert_eq!(figure(&db, "cache_entries"), 0);
    db.close().expect("close");
}

/// Waits until the hooks' figure `name` reaches `at_least` (the flush thread works on
/// its own), then for the flush thread's job to end.
fn wait_for(db: &Db, name: &str, at_least: u64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while figure(db, name) < at_least {
        assert!(
            std::time::Instant::now() < deadline,
            "{name} stayed below {at_least}: {:?}",
            db.stats().tree_hooks
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    db.flush().expect("flush");
}

fn filler(i: usize) -> Vec<u8> {
    format!("filler{i:04}").into_bytes()
}

/// Reads fillers `0..hot` twice (the second time from the cache), then more until the
/// cache seals: the flush thread has the hot copies to write up as an L0 table.
fn read_until_sealed(db: &Db, hot: usize) {
    let r = ReadOptions::default();
    let seals = figure(db, "cache_seals");
    for _ in 0..2 {
        for i in 0..hot {
            db.get(&r, &filler(i)).expect("get");
        }
    }
    let mut i = hot;
    while figure(db, "cache_seals") == seals {
        assert_eq!(db.get(&r, &filler(i)).expect("get"), Some(vec![7; 100]));
        i += 1;
        assert!(
            i < 400,
            "the cache never sealed: {:?}",
            db.stats().tree_hooks
        );
    }
}

fn promote_twelve_by_flush(db: &Db) {
    read_until_sealed(db, 12);
}

#[test]
fn a_read_only_workload_promotes_hot_copies_into_l0_by_flush() {
    let fs = Arc::new(FaultFs::new());
    let db = open(&fs);
    with_k_in_the_slow_tier(&db);
    promote_twelve_by_flush(&db);
    wait_for(&db, "promotion_flushes", 1);
    assert!(figure(&db, "promoted_by_flush") >= 12);
    assert_eq!(db.stats().levels[0].files, 1, "one L0 table of copies");
    // The hot keys are now answered by the fast tier, with their values.
    let fast = figure(&db, "gets_fast");
    let r = ReadOptions::default();
    for i in 0..12 {
        assert_eq!(db.get(&r, &filler(i)).expect("get"), Some(vec![7; 100]));
    }
    assert_eq!(figure(&db, "gets_fast"), fast + 12);
    // And still after compactions move them on, and after a reopen.
    db.compact_range(None, None).expect("compact");
    db.close().expect("close");
    let db = open(&fs);
    for i in 0..400 {
        assert_eq!(db.get(&r, &filler(i)).expect("get"), Some(vec![7; 100]));
    }
    assert_eq!(db.get(&r, b"k").expect("get"), Some(b"v1".to_vec()));
    db.close().expect("close");
}

#[test]
fn a_copy_with_a_newer_version_in_the_fast_tier_is_not_promoted_by_flush() {
    let fs = Arc::new(FaultFs::new());
    let db = open(&fs);
    with_k_in_the_slow_tier(&db);
    let r = ReadOptions::default();
    for _ in 0..2 {
        for i in 0..12 {
            db.get(&r, &filler(i)).expect("get");
        }
    }
    // Before the cache seals: a newer version of filler 3 and a range tombstone over
    // filler 5, moved into L1 (a compaction inside the fast tier registers nothing,
    // so the copies stay), then a newest version of filler 3 in the memtable. A table
    // of copies in L0 would shadow L1 if the check let them through.
    let w = WriteOptions::default();
    let registered = figure(&db, "cache_registrations");
    db.put(&w, &filler(3), b"newer").expect("put");
    db.delete_range(&w, &filler(5), &filler(6))
        .expect("delete_range");
    for i in 0..4 {
        db.put(&w, format!("a{i}").as_bytes(), b"x").expect("put");
        db.flush().expect("flush");
    }
    db.wait_for_compactions().expect("idle");
    let levels = db.stats().levels;
    assert_eq!((levels[0].files, levels[1].files), (0, 1), "{levels:?}");
    assert_eq!(figure(&db, "cache_registrations"), registered);
    assert_eq!(
        db.get(&r, &filler(3)).expect("get"),
        Some(b"newer".to_vec())
    );
    db.put(&w, &filler(7), b"newest").expect("put");
    promote_twelve_by_flush(&db);
    wait_for(&db, "flush_candidates", 12);
    assert_eq!(figure(&db, "flush_dropped_newer"), 3);
    assert_eq!(
        db.get(&r, &filler(3)).expect("get"),
        Some(b"newer".to_vec())
    );
    assert_eq!(db.get(&r, &filler(5)).expect("get"), None);
    assert_eq!(
        db.get(&r, &filler(7)).expect("get"),
        Some(b"newest".to_vec())
    );
    let snap = db.snapshot();
    db.flush().expect("flush");
    db.compact_range(None, None).expect("compact");
    let at = ReadOptions::default().with_snapshot(snap);
    for ro in [&r, &at] {
        assert_eq!(
            db.get(ro, &filler(3)).expect("get"),
            Some(b"newer".to_vec())
        );
        assert_eq!(
            db.get(ro, &filler(7)).expect("get"),
            Some(b"newest".to_vec())
        );
        assert_eq!(db.get(ro, &filler(5)).expect("get"), None);
        assert_eq!(db.get(ro, &filler(4)).expect("get"), Some(vec![7; 100]));
    }
    db.close().expect("close");
}

#[test]
fn hot_aware_benefit_is_cold_bytes_per_rewritten_byte() {
    // A cold file over no overlap: every byte it rewrites is cold.
    assert_eq!(benefit(1000, 10, 0, 0), 1.0);
    // Half hot, three times its size below: 500 cold bytes of 4000 rewritten.
    assert_eq!(benefit(1000, 10, 5, 3000), 0.125);
    // More overlap, less benefit; more hot records, less benefit.
    assert!(benefit(1000, 10, 0, 9000) < benefit(1000, 10, 0, 1000));
    assert!(benefit(1000, 10, 8, 0) < benefit(1000, 10, 2, 0));
}

#[test]
fn hot_aware_benefit_caps_an_overestimated_hot_share() {
    // RALT's whole-block estimate may count more hot records than the file holds:
    // the share is capped at 1, so the benefit is 0, never negative (a negative
    // benefit made the ranking prefer the files with the most overlap).
    assert_eq!(benefit(1000, 10, 40, 0), 0.0);
    assert_eq!(benefit(1000, 10, 40, 90_000), 0.0);
    assert!(benefit(1000, 10, 9, 90_000) > 0.0);
    // No entries and no size (an empty file) is 0, not NaN.
    assert_eq!(benefit(0, 0, 0, 0), 0.0);
}

#[test]
fn promotion_by_flush_waits_only_while_l0_is_backed_up() {
    let triggers = |compaction, slowdown| Options {
        level0_file_num_compaction_trigger: compaction,
        level0_slowdown_writes_trigger: slowdown,
        ..Options::default()
    };
    // One table of copies short of slowing writes, with a compaction due: wait.
    let o = triggers(4, 20);
    assert!(!l0_backed_up(18, &o));
    assert!(l0_backed_up(19, &o));
    assert!(l0_backed_up(25, &o));
    assert!(!l0_backed_up(3, &o));
    // Equal triggers: one short of both means no compaction is due, so nothing
    // would ever drain L0; promotion goes on, and waits once a compaction is due.
    let o = triggers(10, 10);
    assert!(!l0_backed_up(8, &o));
    assert!(!l0_backed_up(9, &o));
    assert!(l0_backed_up(10, &o));
}

/// A version of `l0` tables in L0 and nothing else.
fn with_l0_tables(l0: u64) -> Version {
    let mut edit = crate::version::VersionEdit::default();
    for n in 0..l0 {
        let f = crate::version::FileMetaData::for_test(100 + n, "a", "z", 10 + n, 10 + n, 100);
        edit.new_files.push((0, f));
    }
    Version::new(4).apply(&edit).expect("apply")
}

#[test]
fn a_sealed_batch_waits_while_l0_is_backed_up_and_goes_up_once_it_drains() {
    let fs = Arc::new(FaultFs::new());
    let opts = options().with_tiering(Some(Tiering::hotrap().with_hotness_check(false)));
    let db = open_with(&fs, opts);
    let (hooks, seq) = with_k_in_the_slow_tier(&db);
    db.wait_for_compactions().expect("idle");
    // Seal a batch by hand: the flush thread is not woken (an idle database has
    // nothing else to wake it), so only this test asks for the batch.
    let level = hooks.source_after().expect("a level") + 1;
    let sealed = (0..100).any(|i| {
        hooks.table_read(&TableRead {
            user_key: &filler(i),
            value: &[7; 100],
            seq,
            level,
            plain: true,
            token: hooks.read_token(),
        })
    });
    assert!(sealed, "the cache never sealed");
    // The default triggers (4 to compact L0, 20 to slow writers): 19 tables and a
    // table of copies would slow the writers.
    let (backed_up, drained) = (with_l0_tables(19), with_l0_tables(3));
    assert!(!hooks.has_copies(&backed_up));
    assert!(hooks.take_copies(&backed_up).is_none());
    assert!(
        hooks.has_copies(&drained),
        "the batch was dropped, not kept"
    );
    let copies = hooks.take_copies(&drained).expect("the kept batch");
    assert!(copies.records.len() >= 10, "{}", copies.records.len());
    assert!(!hooks.has_copies(&drained));
    assert_eq!(figure(&db, "cache_discarded"), 0);
    db.close().expect("close");
}

#[test]
fn promotion_by_flush_goes_on_while_l0_rests_one_short_of_equal_triggers() {
    let fs = Arc::new(FaultFs::new());
    let opts = Options {
        level0_file_num_compaction_trigger: 10,
        level0_slowdown_writes_trigger: 10,
        level0_stop_writes_trigger: 40,
        ..options()
    };
    let db = open_with(&fs, opts);
    with_k_in_the_slow_tier(&db);
    let w = WriteOptions::default();
    for i in 0..9 {
        db.put(&w, format!("b{i:04}").as_bytes(), &[8; 100])
            .expect("put");
        db.flush().expect("flush");
    }
    assert_eq!(db.stats().levels[0].files, 9);
    let fast = figure(&db, "gets_fast");
    promote_twelve_by_flush(&db);
    wait_for(&db, "promotion_flushes", 1);
    assert!(figure(&db, "promoted_by_flush") >= 12);
    let r = ReadOptions::default();
    for i in 0..12 {
        assert_eq!(db.get(&r, &filler(i)).expect("get"), Some(vec![7; 100]));
    }
    assert!(
        figure(&db, "gets_fast") >= fast + 12,
        "read from the fast tier"
    );
    for i in 0..9 {
        let key = format!("b{i:04}");
        assert_eq!(db.get(&r, key.as_bytes()).expect("get"), Some(vec![8; 100]));
    }
    db.close().expect("close");
}

/// A family with `expiring_values` has a compaction filter (the built-in expiry
/// filter, installed by `Family::new`, after `hooks_for` sees the options), so the
/// promotion cache takes no copies either.
#[test]
fn with_expiring_values_the_cache_takes_no_copies() {
    let fs = Arc::new(FaultFs::new());
    let db = open_with(&fs, options().with_expiring_values(true));
    let _ = with_k_in_the_slow_tier(&db);
    let r = ReadOptions::default();
    assert_eq!(db.get(&r, b"k").expect("get"), Some(b"v1".to_vec()));
    assert_eq!(figure(&db, "gets_slow"), 1);
    assert_eq!(
        figure(&db, "cache_inserts"),
        0,
        "the promotion cache took a copy in a family whose expiry filter can Remove it"
    );
    db.close().expect("close");
}
