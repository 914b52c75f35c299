//! The drop rules on hand-built versions: each plan is rendered as one line
//! (`describe`), `L<level>[<file numbers>]` per level dropped, or `none`.

use super::*;
use crate::compaction::placement::ByLevel;
use crate::compaction::policy::{CompactionPolicy, Leveled};
use crate::compaction::requests::Requests;
use crate::options::Options;
use crate::version::VersionEdit;

/// A file of point entries over user keys `[lo, hi]`, sequence numbers `[s0, s1]`.
fn points(number: u64, lo: &str, hi: &str, s0: u64, s1: u64) -> FileMetaData {
    FileMetaData::for_test(number, lo, hi, s0, s1, 100)
}

/// A file of range tombstones only, over `[lo, end)` at sequence `seq`, as the table
/// builder bounds it: smallest `(lo, seq, RangeDelete)`, largest
/// `(end, MAX_SEQUENCE, RangeDelete)`.
fn tombstone_file(number: u64, lo: &str, end: &str, seq: u64) -> FileMetaData {
    FileMetaData {
        smallest: key::make_internal_key(lo.as_bytes(), seq, ValueKind::RangeDelete),
        largest: key::make_internal_key(end.as_bytes(), MAX_SEQUENCE, ValueKind::RangeDelete),
        smallest_seqno: seq,
        largest_seqno: seq,
        num_entries: 0,
        num_range_deletions: 1,
        creation_time: 0,
        ..FileMetaData::for_test(number, lo, end, seq, seq, 10)
    }
}

fn version(files: &[(usize, FileMetaData)]) -> Version {
    let edit = VersionEdit {
        new_files: files.to_vec(),
        ..VersionEdit::default()
    };
    let v = Version::new(4).apply(&edit).expect("apply");
    v.check_invariants().expect("invariants");
    v
}

fn describe(plan: Option<Plan>) -> String {
    let Some(p) = plan else {
        return "none".to_string();
    };
    assert_eq!(p.action, Action::Drop);
    assert_eq!(p.reason, Reason::RangeDeletion);
    assert!(p.outputs.is_empty(), "a drop writes nothing");
    p.inputs
        .iter()
        .map(|i| match i {
            Input::Files { level, files } => {
                let n: Vec<String> = files.iter().map(|f| f.number.to_string()).collect();
                format!("L{level}[{}]", n.join(","))
            }
            Input::Memtable(_) => "memtable".to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Tombstone file 10 over `[a, m)` at 100 in L1; below it in L2: 20 inside the range
/// with entries 1..=50, 21 straddling its end; 23 in L3 inside the range; above it in
/// L0: 22 inside the range with entries written before and after the tombstone.
fn shape() -> (Version, Tombstones) {
    let v = version(&[
        (0, points(22, "e", "f", 90, 150)),
        (1, tombstone_file(10, "a", "m", 100)),
        (2, points(20, "b", "d", 1, 50)),
        (2, points(21, "k", "p", 1, 50)),
        (3, points(23, "g", "h", 1, 60)),
    ]);
    let mut t = Tombstones::default();
    t.insert(10, &[RangeTombstone::of("a", "m", 100)]);
    (v, t)
}

fn drop_plan(v: &Version, t: &Tombstones, snapshots: &[u64], busy: &Busy) -> String {
    describe(pick(
        v,
        busy,
        &Coverage::new(snapshots, t),
        Scope::default(),
    ))
}

#[test]
fn files_wholly_under_a_newer_tombstone_are_dropped() {
    let (v, t) = shape();
    // 21 is partly outside the range, 22 holds entries newer than the tombstone.
    assert_eq!(drop_plan(&v, &t, &[], &Busy::default()), "L2[20] L3[23]");
    // Nothing is known without the tombstones.
    assert_eq!(
        drop_plan(&v, &Tombstones::default(), &[], &Busy::default()),
        "none"
    );
}

#[test]
fn a_snapshot_that_sees_an_entry_but_not_the_tombstone_keeps_the_file() {
    let (v, t) = shape();
    let none = Busy::default();
    // A snapshot in [smallest_seqno, tombstone) of 20 (1..=50) or of 23 (1..=60).
    assert_eq!(drop_plan(&v, &t, &[1], &none), "none");
    assert_eq!(drop_plan(&v, &t, &[50], &none), "none");
    assert_eq!(drop_plan(&v, &t, &[55], &none), "none");
    assert_eq!(drop_plan(&v, &t, &[99], &none), "none");
    // Older than every entry, or seeing the tombstone: the files go.
    assert_eq!(drop_plan(&v, &t, &[0], &none), "L2[20] L3[23]");
    assert_eq!(drop_plan(&v, &t, &[100], &none), "L2[20] L3[23]");
    assert_eq!(drop_plan(&v, &t, &[0, 100, 200], &none), "L2[20] L3[23]");
}

#[test]
fn busy_files_neither_go_nor_cover() {
    let (v, t) = shape();
    let held = |n: &[u64]| Busy {
        files: n.iter().copied().collect(),
        ..Busy::default()
    };
    assert_eq!(drop_plan(&v, &t, &[], &held(&[20])), "L3[23]");
    assert_eq!(drop_plan(&v, &t, &[], &held(&[10])), "none");
}

#[test]
fn touching_tombstones_of_several_files_cover_together() {
    // [a, f) at 90 in one file and [f, m) at 100 in the next; 20 spans f.
    let v = version(&[
        (1, tombstone_file(10, "a", "f", 90)),
        (1, tombstone_file(11, "f", "m", 100)),
        (2, points(20, "b", "h", 1, 50)),
    ]);
    let mut t = Tombstones::default();
    t.insert(10, &[RangeTombstone::of("a", "f", 90)]);
    t.insert(11, &[RangeTombstone::of("f", "m", 100)]);
    assert_eq!(drop_plan(&v, &t, &[], &Busy::default()), "L2[20]");
    // A snapshot at 95 sees 20's entries under [f, m) (tombstone 100 is newer) but
    // would see the entries under [a, f) deleted: the file must stay whole.
    assert_eq!(drop_plan(&v, &t, &[95], &Busy::default()), "none");
    // With [f, m) unknown there is a gap.
    let mut half = Tombstones::default();
    half.insert(10, &[RangeTombstone::of("a", "f", 90)]);
    assert_eq!(drop_plan(&v, &half, &[], &Busy::default()), "none");
}

#[test]
fn a_file_ending_where_its_tombstones_end_needs_cover_only_below_that_key() {
    // 20 holds entries in [c, e] and tombstones up to k (exclusive): its largest key
    // is (k, MAX_SEQUENCE, RangeDelete), so a tombstone ending at k covers it; 21
    // holds an entry of k itself and is not covered by [a, k).
    let f20 = FileMetaData {
        largest: key::make_internal_key(b"k", MAX_SEQUENCE, ValueKind::RangeDelete),
        num_range_deletions: 1,
        creation_time: 0,
        ..points(20, "c", "k", 1, 40)
    };
    let v = version(&[
        (1, tombstone_file(10, "a", "k", 100)),
        (2, f20),
        (3, points(21, "b", "k", 1, 40)),
    ]);
    let mut t = Tombstones::default();
    t.insert(10, &[RangeTombstone::of("a", "k", 100)]);
    t.insert(20, &[RangeTombstone::of("d", "k", 30)]);
    assert_eq!(drop_plan(&v, &t, &[], &Busy::default()), "L2[20]");
}

#[test]
fn tombstones_with_nothing_below_and_no_older_snapshot_go() {
    let v = version(&[
        (1, tombstone_file(10, "a", "c", 100)),
        (1, tombstone_file(11, "m", "p", 100)),
        (2, points(20, "n", "q", 1, 50)),
        (0, tombstone_file(30, "x", "z", 200)),
    ]);
    let mut t = Tombstones::default();
    t.insert(10, &[RangeTombstone::of("a", "c", 100)]);
    t.insert(11, &[RangeTombstone::of("m", "p", 100)]);
    t.insert(30, &[RangeTombstone::of("x", "z", 200)]);
    // 11 still has 20 below it (only partly covered); L0 tombstones are left to
    // L0 compactions (older L0 files may hold what they hide).
    assert_eq!(drop_plan(&v, &t, &[], &Busy::default()), "L1[10]");
    assert_eq!(drop_plan(&v, &t, &[100], &Busy::default()), "L1[10]");
    // A snapshot older than the tombstone: a bottommost rewrite would keep it too.
    assert_eq!(drop_plan(&v, &t, &[99], &Busy::default()), "none");
    // Unknown tombstones are never dropped.
    let mut other = Tombstones::default();
    other.insert(11, &[RangeTombstone::of("m", "p", 100)]);
    assert_eq!(drop_plan(&v, &other, &[], &Busy::default()), "none");
}

/// Beside a column-group run (`version::run`), a tombstone file of the row run may
/// hide older entries of its own level: rule 2 leaves such a level alone.
#[test]
fn tombstones_beside_a_column_group_run_stay() {
    let grouped = FileMetaData {
        column_group: 5,
        ..points(20, "b", "b", 1, 50)
    };
    let v = version(&[(1, tombstone_file(10, "a", "c", 100)), (1, grouped)]);
    let mut t = Tombstones::default();
    t.insert(10, &[RangeTombstone::of("a", "c", 100)]);
    assert_eq!(drop_plan(&v, &t, &[], &Busy::default()), "none");
}

#[test]
fn scope_limits_levels_and_keys() {
    let (v, t) = shape();
    let none = Busy::default();
    let at = |from_level, begin: Option<&'static [u8]>, end: Option<&'static [u8]>| {
        let scope = Scope {
            from_level,
            begin,
            end,
        };
        describe(pick(&v, &none, &Coverage::new(&[], &t), scope))
    };
    assert_eq!(at(3, None, None), "L3[23]");
    assert_eq!(at(0, Some(b"a"), Some(b"c")), "L2[20]");
    assert_eq!(at(0, Some(b"x"), None), "none");
}

#[test]
fn leveled_drops_before_any_other_pick() {
    // L0 is over its trigger, yet the drop comes first, automatic and manual.
    let mut files: Vec<(usize, FileMetaData)> = (0..4)
        .map(|i| (0, points(40 + i, "r", "s", 200 + 2 * i, 201 + 2 * i)))
        .collect();
    files.push((1, tombstone_file(10, "a", "m", 100)));
    files.push((2, points(20, "b", "d", 1, 50)));
    let v = version(&files);
    let mut t = Tombstones::default();
    t.insert(10, &[RangeTombstone::of("a", "m", 100)]);
    let opts = Options {
        num_levels: 4,
        level0_file_num_compaction_trigger: 4,
        ..Options::default()
    };
    let none = Busy::default();
    let cov = Coverage::new(&[], &t);
    assert_eq!(
        describe(Leveled.pick(&v, &opts, &ByLevel, &none, &cov, &Requests::default())),
        "L2[20]"
    );
    let manual = Leveled.pick_manual(&v, &opts, &ByLevel, 0, None, None, &none, &cov);
    assert_eq!(describe(manual), "L2[20]");
    // Without the tombstones the L0 compaction is picked.
    let plain = Leveled
        .pick(
            &v,
            &opts,
            &ByLevel,
            &none,
            &Coverage::new(&[], &Tombstones::default()),
            &Requests::default(),
        )
        .expect("L0 plan");
    assert_eq!(plain.action, Action::Rewrite);
}
