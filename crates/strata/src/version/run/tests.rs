//! Tests of runs: where `Version::apply` puts a column group's files, what the
//! invariants allow across and within runs, and that every version-wide query, the
//! snapshot edit and the file references see every run.

use crate::version::file_ref::{FileRef, ObsoleteFiles};
use crate::version::{FileKind, FileMetaData, Run, Version, VersionEdit};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A file of `group` covering user keys `[lo, hi]`.
fn meta(number: u64, group: u32, lo: &str, hi: &str, size: u64) -> FileMetaData {
    FileMetaData {
        column_group: group,
        ..FileMetaData::for_test(number, lo, hi, number, number, size)
    }
}

fn numbers(run: &Run) -> Vec<u64> {
    run.files().iter().map(|f| f.number).collect()
}

/// L1: row files 1 `a..f` and 2 `g..m`; group 9: 3 `a..c`, 4 `d..z`; group 5: 5
/// `b..k`. L2: row file 6 `a..z`. Runs overlap each other, not themselves.
fn sample() -> Version {
    let e = VersionEdit {
        new_files: vec![
            (1, meta(4, 9, "d", "z", 40)),
            (1, meta(2, 0, "g", "m", 20)),
            (1, meta(5, 5, "b", "k", 50)),
            (1, meta(1, 0, "a", "f", 10)),
            (1, meta(3, 9, "a", "c", 30)),
            (2, meta(6, 0, "a", "z", 60)),
        ],
        ..VersionEdit::default()
    };
    let v = Version::new(3).apply(&e).expect("apply");
    v.check_invariants().expect("runs may overlap each other");
    v
}

#[test]
fn files_join_the_run_of_their_group() {
    let v = sample();
    let runs: Vec<(u32, Vec<u64>)> = v.runs(1).map(|r| (r.group(), numbers(r))).collect();
    assert_eq!(runs, vec![(0, vec![1, 2]), (5, vec![5]), (9, vec![3, 4])]);
    assert!(v.run(1, 0).is_some_and(Run::is_row_run));
    assert_eq!(v.run(1, 2).map(numbers), Some(vec![3, 4]));
    assert!(v.run(1, 3).is_none());
    assert!(v.has_group_runs(1) && !v.has_group_runs(2) && !v.has_group_runs(0));
    // The row-run queries see the row run; the level-wide ones every run.
    assert_eq!(v.files(1).len(), 2);
    assert_eq!(v.num_files(), 6);
    assert_eq!(v.level_bytes(1), 150);
    assert_eq!(v.live_files().count(), 6);
    assert_eq!(v.deepest_nonempty_level(), Some(2));
    let row = v.overlapping_files(1, Some(b"n"), Some(b"p"));
    assert!(row.is_empty(), "no row file holds n..p");
    assert!(
        v.overlaps(1, Some(b"n"), Some(b"p")),
        "group 9's file 4 does"
    );
    assert!(!v.overlaps(1, Some(b"zz"), None));
    // Per run: binary searches over the run's own files.
    let g9 = v.run(1, 2).expect("run");
    assert_eq!(
        g9.find_file(&crate::key::make_internal_key(
            b"b",
            1,
            crate::key::ValueKind::Put
        )),
        0
    );
    assert_eq!(g9.sorted_overlapping(Some(b"c"), Some(b"d")).len(), 2);
    assert_eq!(g9.sorted_overlapping(Some(b"zz"), None).len(), 0);
    assert_eq!(g9.bytes(), 70);
}

#[test]
fn deletions_reach_every_run_and_an_emptied_group_run_goes() {
    let v = sample();
    let e = VersionEdit {
        deleted_files: vec![(1, 5), (1, 3), (1, 1)],
        new_files: vec![(2, meta(7, 5, "a", "b", 5))],
        ..VersionEdit::default()
    };
    let v = v.apply(&e).expect("apply");
    v.check_invariants().expect("invariants");
    let runs: Vec<(u32, Vec<u64>)> = v.runs(1).map(|r| (r.group(), numbers(r))).collect();
    assert_eq!(
        runs,
        vec![(0, vec![2]), (9, vec![4])],
        "group 5's run left L1"
    );
    let runs: Vec<(u32, Vec<u64>)> = v.runs(2).map(|r| (r.group(), numbers(r))).collect();
    assert_eq!(runs, vec![(0, vec![6]), (5, vec![7])]);
    // Emptying the row run keeps it, empty, first.
    let v = v
        .apply(&VersionEdit {
            deleted_files: vec![(1, 2)],
            ..VersionEdit::default()
        })
        .expect("apply");
    let runs: Vec<(u32, usize)> = v.runs(1).map(|r| (r.group(), r.files().len())).collect();
    assert_eq!(runs, vec![(0, 0), (9, 1)]);
    // A file is deleted from the level it is in, whichever run.
    let missing = v.apply(&VersionEdit {
        deleted_files: vec![(2, 4)],
        ..VersionEdit::default()
    });
    assert!(missing.is_err_and(|e| e.contains("not in L2")));
}

#[test]
fn l0_and_virtual_tables_hold_rows_only() {
    let l0 = Version::new(3).apply(&VersionEdit {
        new_files: vec![(0, meta(1, 4, "a", "b", 1))],
        ..VersionEdit::default()
    });
    assert!(l0.is_err_and(|e| e.contains("column group 4 in L0")));
    let mut virt = meta(2, 4, "a", "b", 1);
    virt.kind = FileKind::Virtual { slices: Vec::new() };
    let virt = Version::new(3).apply(&VersionEdit {
        new_files: vec![(1, virt)],
        ..VersionEdit::default()
    });
    assert!(virt.is_err_and(|e| e.contains("rows only")));
}

#[test]
fn invariant_2_holds_per_run() {
    let v = sample();
    // Group 5 gains a file overlapping its own `b..k`: a violation naming the group.
    let bad = v
        .apply(&VersionEdit {
            new_files: vec![(1, meta(8, 5, "k", "l", 1))],
            ..VersionEdit::default()
        })
        .expect("apply does not check overlap");
    let err = bad.check_invariants().expect_err("overlap within a run");
    assert!(
        err.contains("files 5 and 8 overlap") && err.contains("column group 5"),
        "{err}"
    );
    // The same range in a new group's run is fine.
    let fine = v
        .apply(&VersionEdit {
            new_files: vec![(1, meta(8, 6, "k", "l", 1))],
            ..VersionEdit::default()
        })
        .expect("apply");
    fine.check_invariants().expect("another run");
}

#[test]
fn the_snapshot_edit_and_the_references_cover_every_run() {
    let v = sample();
    let again = Version::new(3).apply(&v.to_snapshot_edit()).expect("apply");
    for level in 0..3 {
        let a: Vec<(u32, Vec<u64>)> = v.runs(level).map(|r| (r.group(), numbers(r))).collect();
        let b: Vec<(u32, Vec<u64>)> = again.runs(level).map(|r| (r.group(), numbers(r))).collect();
        assert_eq!(a, b);
    }
    let queue = Arc::new(ObsoleteFiles::default());
    let refs: Vec<_> = v
        .live_files()
        .map(|f| FileRef::new(f.number, 0, &queue))
        .collect();
    let mut installed = again;
    installed
        .attach_refs(&Version::new(3), &refs)
        .expect("attach");
    drop(refs);
    assert_eq!(installed.num_refs(), 6);
    for run in installed.runs(1) {
        for (i, f) in run.files().iter().enumerate() {
            assert_eq!(run.file_ref(i).map(FileRef::number), Some(f.number));
        }
    }
    assert!(queue.take().is_empty(), "the version holds every file");
    drop(installed);
    assert_eq!(queue.take().len(), 6, "and frees each once");
}

proptest::proptest! {
    /// Random adds, moves and deletions of files of three column groups over three
    /// levels keep the invariants and match a model of each file's level and group;
    /// the attached references are exactly the files.
    #[test]
    fn random_edits_over_runs_keep_invariants(
        ops in proptest::collection::vec((0u8..4, 0u64..1000), 1..80)
    ) {
        let groups = [0u32, 3, 7];
        let mut v = Version::new(4);
        let mut model: BTreeMap<u64, (usize, u32)> = BTreeMap::new();
        let mut next = 1u64;
        let free_in = |v: &Version, level: usize, group: u32, lo: &[u8], hi: &[u8]| {
            v.runs(level)
                .filter(|r| r.group() == group)
                .all(|r| r.sorted_overlapping(Some(lo), Some(hi)).is_empty())
        };
        for (op, x) in ops {
            let mut e = VersionEdit::default();
            let nth = |model: &BTreeMap<u64, (usize, u32)>| {
                model.iter().nth(x as usize % model.len().max(1)).map(|(&n, &at)| (n, at))
            };
            let file = |v: &Version, n: u64, level: usize| {
                v.runs(level).flat_map(Run::files).find(|f| f.number == n).cloned()
            };
            match op {
                // A new file of a random group in L1..L3, where its run has room.
                0 => {
                    let (level, group) = (1 + (x % 3) as usize, groups[(x / 3 % 3) as usize]);
                    let lo = format!("k{:03}", x % 500);
                    let hi = format!("k{:03}", x % 500 + x % 40);
                    if !free_in(&v, level, group, lo.as_bytes(), hi.as_bytes()) {
                        continue;
                    }
                    e.new_files.push((level, meta(next, group, &lo, &hi, x)));
                    model.insert(next, (level, group));
                    next += 1;
                }
                // Move a file down a level, or into another group's run of its level.
                1 | 2 => {
                    let Some((n, (level, group))) = nth(&model) else { continue };
                    let f = file(&v, n, level).expect("live");
                    let (to, group) = match op {
                        1 => (level + 1, group),
                        _ => (level, groups[(x % 3) as usize]),
                    };
                    if to >= 4 || !free_in(&v, to, group, f.smallest_user_key(), f.largest_user_key()) {
                        continue;
                    }
                    e.deleted_files.push((level, n));
                    e.new_files.push((to, FileMetaData { column_group: group, ..FileMetaData::clone(&f) }));
                    model.insert(n, (to, group));
                }
                _ => {
                    let Some((n, (level, _))) = nth(&model) else { continue };
                    e.deleted_files.push((level, n));
                    model.remove(&n);
                }
            }
            let queue = Arc::new(ObsoleteFiles::default());
            let refs: Vec<_> = model.keys().map(|&n| FileRef::new(n, 0, &queue)).collect();
            let mut nv = v.apply(&e).expect("valid edit");
            nv.check_invariants().expect("invariants");
            nv.attach_refs(&Version::new(4), &refs).expect("attach");
            proptest::prop_assert_eq!(nv.num_files(), model.len());
            proptest::prop_assert_eq!(nv.num_refs(), model.len());
            for (&n, &(level, group)) in &model {
                let run = nv.runs(level).find(|r| r.group() == group);
                proptest::prop_assert!(run.is_some_and(|r| r.files().iter().any(|f| f.number == n)));
            }
            for level in 0..4 {
                let groups: Vec<u32> = nv.runs(level).map(Run::group).collect();
                proptest::prop_assert!(groups.windows(2).all(|w| w[0] < w[1]), "runs by group");
                proptest::prop_assert!(nv.runs(level).skip(1).all(|r| !r.is_empty()));
            }
            v = nv;
        }
    }
}
