//! Golden tests of the delayed policy on hand-built versions: Algorithm 1 below, at
//! and above VCT, virtual inputs counting their parents, the bottommost and placement
//! guards, the off switch, and manual compactions rewriting virtual tables in place.

use super::*;
use crate::compaction::covered::Tombstones;
use crate::compaction::placement::ByLevel;
use crate::version::VersionEdit;

/// L1 target 1000 bytes, x10 per level, 4 levels; delayed compaction with `vct`.
fn opts(vct: Option<usize>) -> Options {
    Options {
        max_bytes_for_level_base: 1000,
        max_bytes_for_level_multiplier: 10.0,
        num_levels: 4,
        delayed_compaction: vct.map(|v| DelayedCompaction::new().with_vct(v)),
        ..Options::default()
    }
}

fn real(number: u64, lo: &str, hi: &str, size: u64) -> FileMetaData {
    FileMetaData::for_test(number, lo, hi, 1, 5, size)
}


/// L1 over its target (file 10, `a..m`, 2000 bytes) above L2 files 20 (`a..f`) and 21
/// (`g..p`); `extra` edits on top.
fn version(extra: impl FnOnce(&mut VersionEdit)) -> Version {
    let mut e = VersionEdit::default();
    e.new_files.push((1, real(10, "a", "m", 2000)));
    e.new_files.push((2, real(20, "a", "f", 500)));
    e.new_files.push((2, real(21, "g", "p", 500)));
    e.new_files.push((3, real(30, "a", "z", 50_000)));
    extra(&mut e);
    let v = Version::new(4).apply(&e).expect("apply");
    v.check_invariants().expect("invariants");
    v
}

fn pick(v: &Version, o: &Options) -> Option<Plan> {
    let tombstones = Tombstones::default();
    let coverage = Coverage::new(&[], &tombstones);
    Delayed.pick(v, o, &ByLevel, &Busy::default(), &coverage)
}

fn action(p: Option<Plan>) -> Option<Action> {
    p.map(|p| p.action)
}

#[test]
fn below_vct_a_rewrite_is_virtualized_at_vct_it_is_not() {
    let v = version(|_| {});
    // L1 file 10 with L2 files 20 and 21: three real tables.
    assert_eq!(action(pick(&v, &opts(Some(4)))), Some(Action::Virtualize));
    assert_eq!(action(pick(&v, &opts(Some(3)))), Some(Action::Rewrite));
    assert_eq!(action(pick(&v, &opts(Some(2)))), Some(Action::Rewrite));
    // The virtualized plan is the leveled plan otherwise.
    let virt = pick(&v, &opts(Some(4))).expect("plan");
    let leveled = pick(&v, &opts(None)).expect("plan");
    assert_eq!(format!("{:?}", virt.inputs), format!("{:?}", leveled.inputs));
    assert_eq!(virt.outputs[0].level, leveled.outputs[0].level);
}

#[test]
fn virtual_inputs_count_their_parents_once() {
    // L2's `g..p` is a virtual table over parents 40 and 41 (its slices), and `a..f`
    // one over parent 40 too: with L1's file 10, three distinct real tables.
    let v = version(|e| {
        e.deleted_files.clear();
        e.new_files.retain(|(l, _)| *l != 2);
        e.new_files
            .push((2, FileMetaData::virtual_for_test(20, "a", "f", &[(40, "a", "f", 300)])));
        e.new_files.push((
            2,
            FileMetaData::virtual_for_test(21, "g", "p", &[(40, "g", "h", 100), (41, "g", "p", 400)]),
        ));
        e.new_parents.push(real(40, "a", "h", 400));
        e.new_parents.push(real(41, "g", "p", 400));
    });
    assert_eq!(action(pick(&v, &opts(Some(4)))), Some(Action::Virtualize));
    assert_eq!(action(pick(&v, &opts(Some(3)))), Some(Action::Rewrite));
}

#[test]
fn bottommost_plans_with_deletions_and_parents_on_another_path_are_not_virtualized() {
    // No L3: the plan is bottommost. Without deletions it is virtualized; with a
    // point or range deletion in an input it is not.
    let without_l3 = |deletes: u64, range_deletes: u64| {
        let mut e = VersionEdit::default();
        e.new_files.push((
            1,
            FileMetaData {
                num_deletions: deletes,
                num_range_deletions: range_deletes,
                ..real(10, "a", "m", 2000)
            },
        ));
        e.new_files.push((2, real(20, "a", "f", 500)));
        Version::new(4).apply(&e).expect("apply")
    };
    let plan = pick(&without_l3(0, 0), &opts(Some(4))).expect("plan");
    assert!(plan.bottommost);
    assert_eq!(plan.action, Action::Virtualize);
    assert_eq!(action(pick(&without_l3(1, 0), &opts(Some(4)))), Some(Action::Rewrite));
    assert_eq!(action(pick(&without_l3(0, 1), &opts(Some(4)))), Some(Action::Rewrite));
    // Not bottommost (L3 below): deletions do not matter.
    let v = version(|e| {
        e.new_files[0].1.num_deletions = 3;
    });
    assert_eq!(action(pick(&v, &opts(Some(4)))), Some(Action::Virtualize));
    // A real input on another data path than the output stream's.
    let v = version(|e| {
        e.new_files[1].1.path_id = 1;
    });
    assert_eq!(action(pick(&v, &opts(Some(4)))), Some(Action::Rewrite));
}

#[test]
fn off_it_plans_what_leveled_plans() {
    let v = version(|_| {});
    let tombstones = Tombstones::default();
    let coverage = Coverage::new(&[], &tombstones);
    let o = opts(None);
    let delayed = Delayed.pick(&v, &o, &ByLevel, &Busy::default(), &coverage);
    let leveled = Leveled.pick(&v, &o, &ByLevel, &Busy::default(), &coverage);
    assert_eq!(format!("{delayed:?}"), format!("{leveled:?}"));
}

#[test]
fn manual_compaction_rewrites_virtual_tables_of_the_deepest_level_in_place() {
    let v = version(|e| {
        e.new_files.retain(|(l, _)| *l != 3);
        e.new_files.push((
            3,
            FileMetaData::virtual_for_test(31, "n", "z", &[(50, "n", "r", 300), (51, "n", "z", 700)]),
        ));
        e.new_parents.push(real(50, "n", "r", 300));
        e.new_parents.push(real(51, "n", "z", 700));
    });
    let o = opts(None);
    let in_place = |begin: Option<&str>, end: Option<&str>, busy: &Busy| {
        Delayed.pick_manual_in_place(
            &v,
            &o,
            &ByLevel,
            3,
            begin.map(str::as_bytes),
            end.map(str::as_bytes),
            busy,
        )
    };
    let plan = in_place(None, None, &Busy::default()).expect("the virtual table");
    assert_eq!(plan.action, Action::Rewrite);
    assert_eq!(plan.reason, Reason::Manual);
    assert_eq!(format!("{:?}", plan.inputs), "[L3[31]]");
    assert_eq!(plan.outputs[0].level, 3);
    assert!(plan.bottommost);
    // Outside its range, or busy: nothing.
    assert!(in_place(Some("a"), Some("c"), &Busy::default()).is_none());
    let mut busy = Busy::default();
    busy.add_plan(&plan);
    assert!(in_place(None, None, &busy).is_none());
    // The default of the seam rewrites nothing in place.
    assert!(Leveled
        .pick_manual_in_place(&v, &o, &ByLevel, 3, None, None, &Busy::default())
        .is_none());
}
