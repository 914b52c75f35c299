//! The compaction policy is a component: the one given to `DbBuilder` is the one the
//! scheduler, manual compaction and the statistics ask, and the default is leveled.

use super::*;
use crate::{Db, WriteOptions};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Leveled compaction, except that automatic compaction can be switched off; counts
/// the questions it is asked.
#[derive(Debug, Default)]
pub(crate) struct Counting {
    pub automatic: bool,
    pub picks: AtomicU64,
    pub manual_picks: AtomicU64,
}

impl CompactionPolicy for Counting {
    fn pick(
        &self,
        version: &Version,
        opts: &Options,
        placement: &dyn PlacementPolicy,
        busy: &Busy,
        coverage: &Coverage<'_>,
        requests: &Requests,
    ) -> Option<Plan> {
        self.picks.fetch_add(1, Ordering::Relaxed);
        self.automatic
            .then(|| Leveled.pick(version, opts, placement, busy, coverage, requests))
            .flatten()
    }

    fn pick_manual(
        &self,
        version: &Version,
        opts: &Options,
        placement: &dyn PlacementPolicy,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
        busy: &Busy,
        coverage: &Coverage<'_>,
    ) -> Option<Plan> {
        self.manual_picks.fetch_add(1, Ordering::Relaxed);
        Leveled.pick_manual(version, opts, placement, level, begin, end, busy, coverage)
    }

    fn pending_compaction_bytes(&self, version: &Version, opts: &Options) -> u64 {
        Leveled.pending_compaction_bytes(version, opts)
    }

    fn scores(&self, version: &Version, opts: &Options) -> Vec<f64> {
        Leveled.scores(version, opts)
    }
}

/// Ten flushes of disjoint keys: L0 trigger 4, far below the stop trigger.
fn load(db: &Db) {
    for f in 0..10u32 {
        for i in 0..50u32 {
            let key = format!("key{f:02}-{i:03}");
            db.put(&WriteOptions::default(), key.as_bytes(), b"value")
                .expect("put");
        }
        db.flush().expect("flush");
    }
}

fn options() -> Options {
    Options::default().with_level0_file_num_compaction_trigger(4)
}

#[test]
fn the_injected_policy_decides_and_the_default_is_leveled() {
    let dir = tempfile::tempdir().expect("tempdir");

    // A policy that never compacts on its own: L0 keeps every flush.
    let off = Arc::new(Counting::default());
    let db = Db::builder()
        .compaction_policy(off.clone())
        .open(dir.path().join("off"), options())
        .expect("open");
    load(&db);
    db.wait_for_compactions().expect("idle");
    let stats = db.stats();
    assert_eq!(stats.levels[0].files, 10, "{}", stats.level_table());
    assert!(
        off.picks.load(Ordering::Relaxed) > 0,
        "the scheduler asked it"
    );
    assert!(
        stats.levels[0].score >= 2.5,
        "scores come from the policy too"
    );
    // Manual compaction asks the same policy.
    db.compact_range(None, None).expect("compact_range");
    assert!(off.manual_picks.load(Ordering::Relaxed) > 0);
    assert_eq!(db.stats().levels[0].files, 0);
    db.close().expect("close");

    // The same load with the default policy compacts L0 on its own.
    let db = Db::open(dir.path().join("default"), options()).expect("open");
    load(&db);
    db.wait_for_compactions().expect("idle");
    let stats = db.stats();
    assert!(stats.levels[0].files < 4, "{}", stats.level_table());
    db.close().expect("close");
}

/// A table due by age is rewritten in place (`Reason::Periodic`, one table, into its
/// own level) once no size-based work is due, by the leveled and the delayed policy
/// alike (never deferred into virtual tables); a busy one waits.
#[test]
fn tables_due_by_age_are_rewritten_in_place() {
    use crate::compaction::placement::ByLevel;
    use crate::compaction::plan::{Action, Reason};
    use crate::compaction::{Delayed, Requests};
    use crate::version::{FileMetaData, VersionEdit};
    let mut e = VersionEdit::default();
    e.new_files
        .push((1, FileMetaData::for_test(2, "a", "c", 1, 5, 100)));
    e.new_files
        .push((2, FileMetaData::for_test(3, "a", "z", 1, 4, 100)));
    let v = Version::new(3).apply(&e).expect("apply");
    let o = Options::default()
        .with_periodic_compaction_seconds(10)
        .with_delayed_compaction(Some(crate::DelayedCompaction::new()));
    let (snaps, tombs) = (Vec::new(), crate::compaction::Tombstones::default());
    let cov = Coverage::new(&snaps, &tombs);
    let aged = Requests::aged_for_test(vec![(1, 2)]);
    let none = Busy::default();
    for policy in [&Leveled as &dyn CompactionPolicy, &Delayed] {
        assert!(policy
            .pick(&v, &o, &ByLevel, &none, &cov, &Requests::default())
            .is_none());
        let plan = policy
            .pick(&v, &o, &ByLevel, &none, &cov, &aged)
            .expect("the aged table");
        assert_eq!(
            (plan.action, plan.reason),
            (Action::Rewrite, Reason::Periodic)
        );
        assert_eq!(format!("{:?}", plan.inputs), "[L1[2]]");
        assert_eq!(plan.outputs.len(), 1);
        assert_eq!(plan.outputs[0].level, 1);
        assert!(!plan.bottommost, "L2 holds data below it");
        let mut busy = Busy::default();
        busy.add_plan(&plan);
        assert!(policy.pick(&v, &o, &ByLevel, &busy, &cov, &aged).is_none());
    }
}
