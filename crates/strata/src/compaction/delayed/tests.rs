//! Golden tests of the delayed policy on hand-built versions: Algorithm 1 below, at
//! and above VCT, virtual inputs counting their parents, the bottommost and placement
//! guards, the off switch, and manual compactions rewriting virtual tables in place.

use super::*;
use crate::compaction::covered::Tombstones;
use crate::compaction::placement::ByLevel;
use crate::compaction::plan::OutputRange;
use crate::compaction::requests::Requests;
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
    Delayed.pick(
        v,
        o,
        &ByLevel,
        &Busy::default(),
        &coverage,
        &Requests::default(),
    )
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
    assert_eq!(
        format!("{:?}", virt.inputs),
        format!("{:?}", leveled.inputs)
    );
    assert_eq!(virt.outputs[0].level, leveled.outputs[0].level);
}

#[test]
fn virtual_inputs_count_their_parents_once() {
    // L2's `g..p` is a virtual table over parents 40 and 41 (its slices), and `a..f`
    // one over parent 40 too: with L1's file 10, three distinct real tables.
    let v = version(|e| {
        e.deleted_files.clear();
        e.new_files.retain(|(l, _)| *l != 2);
        e.new_files.push((
            2,
            FileMetaData::virtual_for_test(20, "a", "f", &[(40, "a", "f", 300)]),
        ));
        e.new_files.push((
            2,
            FileMetaData::virtual_for_test(
                21,
                "g",
                "p",
                &[(40, "g", "h", 100), (41, "g", "p", 400)],
            ),
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
                creation_time: 0,
                ..real(10, "a", "m", 2000)
            },
        ));
        e.new_files.push((2, real(20, "a", "f", 500)));
        Version::new(4).apply(&e).expect("apply")
    };
    let plan = pick(&without_l3(0, 0), &opts(Some(4))).expect("plan");
    assert!(plan.bottommost);
    assert_eq!(plan.action, Action::Virtualize);
    assert_eq!(
        action(pick(&without_l3(1, 0), &opts(Some(4)))),
        Some(Action::Rewrite)
    );
    assert_eq!(
        action(pick(&without_l3(0, 1), &opts(Some(4)))),
        Some(Action::Rewrite)
    );
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
    let none = Requests::default();
    let delayed = Delayed.pick(&v, &o, &ByLevel, &Busy::default(), &coverage, &none);
    let leveled = Leveled.pick(&v, &o, &ByLevel, &Busy::default(), &coverage, &none);
    assert_eq!(format!("{delayed:?}"), format!("{leveled:?}"));
}

#[test]
fn manual_compaction_rewrites_virtual_tables_of_the_deepest_level_in_place() {
    let v = version(|e| {
        e.new_files.retain(|(l, _)| *l != 3);
        e.new_files.push((
            3,
            FileMetaData::virtual_for_test(
                31,
                "n",
                "z",
                &[(50, "n", "r", 300), (51, "n", "z", 700)],
            ),
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
            (begin.map(str::as_bytes), end.map(str::as_bytes)),
            busy,
            u64::MAX,
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
    // Without a compaction filter, the default of the seam rewrites nothing in place.
    assert!(Leveled
        .pick_manual_in_place(
            &v,
            &o,
            &ByLevel,
            3,
            (None, None),
            &Busy::default(),
            u64::MAX
        )
        .is_none());
}

/// L2 holds, left to right: real 20 (`a..c`), virtual 21 (`d..f`, parents 40, 41),
/// virtual 22 (`g..i`, parents 41, 42), virtual 23 (`j..l`, parent 43 only), virtual
/// 24 (`m..o`, parent 43); L3 below all of it. Parents are 600 bytes each.
fn siblings_version(sizes: [u64; 4]) -> Version {
    let mut e = VersionEdit::default();
    e.new_files.push((2, real(20, "a", "c", 500)));
    let t = |n, lo, hi, slices: &[(u64, &str, &str, u64)]| {
        FileMetaData::virtual_for_test(n, lo, hi, slices)
    };
    let [s21, s22, s23, s24] = sizes;
    e.new_files.push((
        2,
        t(
            21,
            "d",
            "f",
            &[(40, "d", "f", s21 / 2), (41, "d", "f", s21 - s21 / 2)],
        ),
    ));
    e.new_files.push((
        2,
        t(
            22,
            "g",
            "i",
            &[(41, "g", "i", s22 / 2), (42, "g", "i", s22 - s22 / 2)],
        ),
    ));
    e.new_files
        .push((2, t(23, "j", "l", &[(43, "j", "l", s23)])));
    e.new_files
        .push((2, t(24, "m", "o", &[(43, "m", "o", s24)])));
    e.new_files.push((3, real(30, "a", "z", 50_000)));
    for (n, lo, hi) in [
        (40, "d", "f"),
        (41, "d", "i"),
        (42, "g", "i"),
        (43, "j", "o"),
    ] {
        e.new_parents.push(real(n, lo, hi, 600));
    }
    let v = Version::new(4).apply(&e).expect("apply");
    v.check_invariants().expect("invariants");
    v
}

fn pick_with(v: &Version, o: &Options, busy: &Busy, requests: &Requests) -> Option<Plan> {
    let tombstones = Tombstones::default();
    Delayed.pick(
        v,
        o,
        &ByLevel,
        busy,
        &Coverage::new(&[], &tombstones),
        requests,
    )
}

/// Options under which `siblings_version` wants no size-triggered work and holds
/// little garbage: the requests and the garbage rule are all there is to plan.
fn quiet(vsmt: usize, ratio: f64) -> Options {
    Options {
        max_bytes_for_level_base: 1 << 30,
        target_file_size_base: 1000,
        ..opts(Some(12))
    }
    .with_delayed_compaction(Some(
        DelayedCompaction::new()
            .with_vsmt(vsmt)
            .with_max_garbage_ratio(ratio),
    ))
}

#[test]
fn reads_ask_for_merges_of_tables_with_at_least_vsmt_slices_while_the_option_is_on() {
    let v = siblings_version([400, 400, 400, 400]);
    let two = v.files(2).get(1).expect("table 21");
    let one = v.files(2).get(3).expect("table 23");
    let real_file = v.files(2).first().expect("file 20");
    assert!(Delayed.compact_on_read(&quiet(2, 1.0), two));
    assert!(!Delayed.compact_on_read(&quiet(3, 1.0), two));
    assert!(!Delayed.compact_on_read(&quiet(2, 1.0), one));
    assert!(!Delayed.compact_on_read(&quiet(2, 1.0), real_file));
    assert!(
        !Delayed.compact_on_read(&opts(None), two),
        "off: no request"
    );
    assert!(
        !Leveled.compact_on_read(&quiet(2, 1.0), two),
        "the seam's default"
    );
}

#[test]
fn a_requested_merge_takes_the_contiguous_siblings_sharing_parents_into_the_same_level() {
    let v = siblings_version([400, 400, 400, 400]);
    let o = quiet(2, 1.0);
    let none = Requests::default();
    assert!(
        pick_with(&v, &o, &Busy::default(), &none).is_none(),
        "nothing to do"
    );
    // 21 shares parent 41 with 22; 22's parents meet nothing further right; the real
    // file 20 on the left never joins.
    let plan = pick_with(&v, &o, &Busy::default(), &Requests::new(vec![(2, 21)])).expect("merge");
    assert_eq!(plan.reason, Reason::ReadRequested);
    assert_eq!(plan.action, Action::Rewrite);
    assert_eq!(format!("{:?}", plan.inputs), "[L2[21, 22]]");
    assert_eq!(plan.outputs[0].level, 2);
    assert!(!plan.bottommost, "L3 lies below");
    // From 22 the set is the same; from 24 it is 23 and 24 (parent 43).
    let from_22 = pick_with(&v, &o, &Busy::default(), &Requests::new(vec![(2, 22)]));
    assert_eq!(
        format!("{:?}", from_22.expect("merge").inputs),
        "[L2[21, 22]]"
    );
    let from_24 = pick_with(&v, &o, &Busy::default(), &Requests::new(vec![(2, 24)]));
    assert_eq!(
        format!("{:?}", from_24.expect("merge").inputs),
        "[L2[23, 24]]"
    );
    // A busy sibling stays out; a busy requested table plans nothing from it; a job
    // writing into L2 across the range blocks the merge.
    let mut busy = Busy::default();
    busy.files.insert(22);
    let plan = pick_with(&v, &o, &busy, &Requests::new(vec![(2, 21)])).expect("merge");
    assert_eq!(format!("{:?}", plan.inputs), "[L2[21]]");
    assert!(pick_with(&v, &o, &busy, &Requests::new(vec![(2, 22)])).is_none());
    let mut writing = Busy::default();
    writing.output_ranges.push(OutputRange::rows(2, b"e", b"e"));
    assert!(pick_with(&v, &o, &writing, &Requests::new(vec![(2, 21)])).is_none());
    // A request for a table no longer in the version, or for a real file, is ignored.
    let stale = Requests::new(vec![(2, 99), (2, 20)]);
    assert!(pick_with(&v, &o, &Busy::default(), &stale).is_none());
}

#[test]
fn a_merge_set_stops_at_25_target_files() {
    // Target files of 1000 bytes: the limit is 25,000. 21 + 22 exceed it, so 21
    // merges alone; the requested table is taken even alone over the limit.
    let v = siblings_version([20_000, 6_000, 400, 400]);
    let plan = pick_with(
        &v,
        &quiet(2, 1.0),
        &Busy::default(),
        &Requests::new(vec![(2, 21)]),
    );
    assert_eq!(format!("{:?}", plan.expect("merge").inputs), "[L2[21]]");
    let v = siblings_version([30_000, 400, 400, 400]);
    let plan = pick_with(
        &v,
        &quiet(2, 1.0),
        &Busy::default(),
        &Requests::new(vec![(2, 21)]),
    );
    assert_eq!(format!("{:?}", plan.expect("merge").inputs), "[L2[21]]");
}

#[test]
fn garbage_over_the_ratio_rewrites_a_table_of_the_least_referenced_parent_first() {
    // Referenced: 40 = 200 of 600, 41 = 400, 42 = 200, 43 = 400 (23: 100, 24: 300).
    // Live bytes: 500 + 4 × 600 + 50,000 = 52,900; garbage 400 + 200 + 400 + 200.
    let v = siblings_version([400, 400, 100, 300]);
    let space = crate::version::virtual_table::table_space(&v);
    assert_eq!(
        (space.garbage_bytes, space.live_table_bytes),
        (1200, 52_900)
    );
    let none = Requests::default();
    // 1,200 / 52,900 is 2.3%: within 3%, over 2%.
    assert!(pick_with(&v, &quiet(12, 0.03), &Busy::default(), &none).is_none());
    let plan = pick_with(&v, &quiet(12, 0.02), &Busy::default(), &none).expect("rewrite");
    assert_eq!(plan.reason, Reason::Garbage);
    assert_eq!(plan.action, Action::Rewrite);
    assert_eq!(plan.outputs[0].level, 2);
    // Parents 40 and 42 are both a third referenced; 40 has the lower number and only
    // table 21 names it.
    assert_eq!(format!("{:?}", plan.inputs), "[L2[21]]");
    let mut busy = Busy::default();
    busy.files.insert(21);
    // 21 busy: parent 42's table, 22.
    let plan = pick_with(&v, &quiet(12, 0.02), &busy, &none).expect("rewrite");
    assert_eq!(format!("{:?}", plan.inputs), "[L2[22]]");
    // The rule holds with the option off (virtual tables an earlier open left), at the
    // default ratio: 2.3% is within 10%.
    assert!(pick_with(&v, &opts(None), &Busy::default(), &none).is_none());
    // Requested merges come before the garbage rule.
    let req = Requests::new(vec![(2, 24)]);
    let plan = pick_with(&v, &quiet(12, 0.02), &Busy::default(), &req).expect("merge");
    assert_eq!(plan.reason, Reason::ReadRequested);
}

#[test]
fn the_picker_weighs_a_virtual_table_by_its_share_of_its_parents_garbage() {
    let v = siblings_version([400, 400, 100, 300]);
    let c = garbage::Compensation::of(&v);
    let f = |n: u64| v.files(2).iter().find(|f| f.number == n).expect("file");
    // 21: 200 of parent 40 (all of its 400 garbage) + 200 of 41 (400 referenced, 200
    // garbage: half) = 400 + 400 + 100.
    assert_eq!(c.size(f(21)), 400 + 400 + 100);
    // 23: 100 of parent 43's 400 referenced, 200 garbage: a quarter.
    assert_eq!(c.size(f(23)), 100 + 50);
    assert_eq!(c.size(f(20)), 500, "a real file weighs its size");
    // With minimum overlapping ratio the heaviest table of the same overlap goes
    // first: here every L2 table overlaps the same L3 file.
    let o = Options {
        max_bytes_for_level_base: 1000,
        max_bytes_for_level_multiplier: 1.0,
        ..opts(None)
    };
    let plan = pick_with(&v, &o, &Busy::default(), &Requests::default()).expect("a plan");
    assert_eq!(plan.reason, Reason::LevelSize);
    assert_eq!(format!("{:?}", plan.inputs[0]), "L2[21]");
}
