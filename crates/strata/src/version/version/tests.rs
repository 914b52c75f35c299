//! Tests of version application, ordering and queries.

use super::*;
use crate::key::{make_internal_key, ValueKind};

/// A file covering user keys `[lo, hi]` with sequence numbers `[s0, s1]`.
fn meta(number: u64, lo: &str, hi: &str, s0: u64, s1: u64, size: u64) -> FileMetaData {
    FileMetaData::for_test(number, lo, hi, s0, s1, size)
}

fn add(edit: &mut VersionEdit, level: usize, f: FileMetaData) {
    edit.new_files.push((level, f));
}

fn numbers(files: &[Arc<FileMetaData>]) -> Vec<u64> {
    files.iter().map(|f| f.number).collect()
}

fn sample() -> Version {
    let mut e = VersionEdit::default();
    add(&mut e, 0, meta(10, "a", "m", 50, 60, 100));
    add(&mut e, 0, meta(11, "c", "z", 61, 70, 100));
    add(&mut e, 0, meta(9, "b", "d", 61, 70, 100));
    add(&mut e, 1, meta(5, "k", "p", 1, 5, 1000));
    add(&mut e, 1, meta(4, "a", "c", 1, 5, 1000));
    add(&mut e, 1, meta(6, "q", "t", 1, 5, 1000));
    add(&mut e, 2, meta(3, "a", "z", 1, 1, 5000));
    let v = Version::new(4).apply(&e).expect("apply");
    v.check_invariants().expect("invariants");
    v
}

#[test]
fn apply_orders_levels() {
    let v = sample();
    assert_eq!(numbers(v.files(0)), [11, 9, 10]);
    assert_eq!(numbers(v.files(1)), [4, 5, 6]);
    assert_eq!(v.level_bytes(1), 3000);
    assert_eq!(v.num_files(), 7);
    assert_eq!(v.num_levels(), 4);
    assert!(v.files(9).is_empty());
    assert_eq!(v.live_files().count(), 7);
}

#[test]
fn apply_moves_and_rejects_bad_edits() {
    let v = sample();
    // Trivial move of file 6 from L1 to L2 is not allowed here (overlaps 3) but a move
    // of 3 to L3 is.
    let mv = VersionEdit {
        deleted_files: vec![(2, 3)],
        new_files: vec![(3, meta(3, "a", "z", 1, 1, 5000))],
        ..Default::default()
    };
    let v2 = v.apply(&mv).expect("move");
    v2.check_invariants().expect("invariants");
    assert_eq!(numbers(v2.files(3)), [3]);
    assert!(v2.files(2).is_empty());
    // The old version is unchanged.
    assert_eq!(numbers(v.files(2)), [3]);

    let missing = VersionEdit {
        deleted_files: vec![(1, 3)],
        ..Default::default()
    };
    assert!(v.apply(&missing).is_err());
    let dup = VersionEdit {
        new_files: vec![(3, meta(5, "x", "y", 1, 1, 1))],
        ..Default::default()
    };
    assert!(v.apply(&dup).is_err());
    let twice = VersionEdit {
        deleted_files: vec![(1, 5), (1, 5)],
        ..Default::default()
    };
    assert!(v.apply(&twice).is_err());
    let bad_level = VersionEdit {
        new_files: vec![(4, meta(99, "x", "y", 1, 1, 1))],
        ..Default::default()
    };
    assert!(v.apply(&bad_level).is_err());
}

#[test]
fn check_invariants_catches_overlap_and_inverted_files() {
    let v = sample();
    let overlap = VersionEdit {
        new_files: vec![(1, meta(20, "c", "e", 1, 1, 1))],
        ..Default::default()
    };
    let bad = v.apply(&overlap).expect("apply does not check overlap");
    assert!(bad.check_invariants().is_err());
    // Same user key at the boundary of two L1 files is an overlap too.
    let touching = VersionEdit {
        new_files: vec![(1, meta(21, "p", "pp", 1, 1, 1))],
        ..Default::default()
    };
    assert!(v
        .apply(&touching)
        .expect("apply")
        .check_invariants()
        .is_err());
    let inverted = VersionEdit {
        new_files: vec![(3, meta(22, "z", "a", 1, 1, 1))],
        ..Default::default()
    };
    assert!(v
        .apply(&inverted)
        .expect("apply")
        .check_invariants()
        .is_err());
}

#[test]
fn overlapping_files_and_find_file() {
    let v = sample();
    let o = |level, b: Option<&str>, e: Option<&str>| {
        numbers(&v.overlapping_files(level, b.map(str::as_bytes), e.map(str::as_bytes)))
    };
    assert_eq!(o(1, Some("c"), Some("k")), [4, 5]);
    assert_eq!(o(1, Some("d"), Some("j")), Vec::<u64>::new());
    assert_eq!(o(1, None, Some("a")), [4]);
    assert_eq!(o(1, Some("t"), None), [6]);
    assert_eq!(o(1, None, None), [4, 5, 6]);
    assert_eq!(o(0, Some("n"), Some("n")), [11]);
    assert_eq!(o(0, Some("a"), Some("b")), [9, 10]);

    let k = |s: &str| make_internal_key(s.as_bytes(), 100, ValueKind::Put);
    assert_eq!(v.find_file(1, &k("a")), 0);
    assert_eq!(v.find_file(1, &k("d")), 1);
    assert_eq!(v.find_file(1, &k("p")), 1);
    assert_eq!(v.find_file(1, &k("u")), 3);
}

#[test]
fn snapshot_edit_rebuilds_the_version() {
    let v = sample();
    let again = Version::new(4).apply(&v.to_snapshot_edit()).expect("apply");
    for level in 0..4 {
        assert_eq!(v.files(level), again.files(level));
    }
}

proptest::proptest! {
    /// Random flushes, moves and deletions keep the invariants and match a model of
    /// which file numbers live in which level.
    #[test]
    fn random_edits_keep_invariants(ops in proptest::collection::vec((0u8..3, 0u64..1000), 1..60)) {
        use std::collections::BTreeMap;
        let mut v = Version::new(4);
        let mut model: BTreeMap<u64, usize> = BTreeMap::new();
        let mut next = 1u64;
        for (op, x) in ops {
            let mut e = VersionEdit::default();
            match op {
                // Flush: a new L0 file over an arbitrary range.
                0 => {
                    let (lo, hi) = (format!("k{:03}", x % 500), format!("k{:03}", x % 500 + 100));
                    e.new_files.push((0, meta(next, &lo, &hi, next, next, 10)));
                    model.insert(next, 0);
                    next += 1;
                }
                // Move the x-th live file down one level if that keeps L1+ disjoint.
                1 => {
                    let Some((&n, &level)) = model.iter().nth(x as usize % model.len().max(1)) else {
                        continue;
                    };
                    if level + 1 >= 4 { continue; }
                    let f = v.files(level).iter().find(|f| f.number == n).expect("live").clone();
                    if !v.overlapping_files(level + 1, Some(f.smallest_user_key()), Some(f.largest_user_key())).is_empty() {
                        continue;
                    }
                    e.deleted_files.push((level, n));
                    e.new_files.push((level + 1, FileMetaData::clone(&f)));
                    model.insert(n, level + 1);
                }
                // Delete the x-th live file.
                _ => {
                    let Some((&n, &level)) = model.iter().nth(x as usize % model.len().max(1)) else {
                        continue;
                    };
                    e.deleted_files.push((level, n));
                    model.remove(&n);
                }
            }
            v = v.apply(&e).expect("valid edit");
            v.check_invariants().expect("invariants");
            proptest::prop_assert_eq!(v.num_files(), model.len());
            for (&n, &level) in &model {
                proptest::prop_assert!(v.files(level).iter().any(|f| f.number == n));
            }
        }
    }
}

/// [`sample`] after L1 files 4 (`a..c`) and 5 (`k..p`) became parents of two virtual
/// tables in L3 (a version does not check where a compaction may put them): table 20
/// reads `[a, c]` of 4 and `[k, m]` of 5, table 21 reads `[n, p]` of 5.
fn virtualized() -> (Version, VersionEdit) {
    let e = VersionEdit {
        deleted_files: vec![(1, 4), (1, 5)],
        new_files: vec![
            (
                3,
                FileMetaData::virtual_for_test(
                    20,
                    "a",
                    "m",
                    &[(4, "a", "c", 1000), (5, "k", "m", 600)],
                ),
            ),
            (
                3,
                FileMetaData::virtual_for_test(21, "n", "p", &[(5, "n", "p", 400)]),
            ),
        ],
        new_parents: vec![meta(4, "a", "c", 1, 5, 1000), meta(5, "k", "p", 1, 5, 1000)],
        ..Default::default()
    };
    let v = sample().apply(&e).expect("virtualize");
    v.check_invariants().expect("invariants");
    (v, e)
}

#[test]
fn virtual_tables_keep_their_parents_until_none_names_them() {
    let (v, _) = virtualized();
    assert_eq!(numbers(v.files(1)), [6]);
    assert_eq!(numbers(v.files(3)), [20, 21]);
    assert!(v.has_virtual_tables(3) && !v.has_virtual_tables(1));
    assert!(!(0..4).any(|l| sample().has_virtual_tables(l)));
    let parents: Vec<u64> = v.parents().map(|p| p.number).collect();
    assert_eq!(parents, [4, 5]);
    // On disk: the real level files and the parents, not the virtual tables.
    let mut physical: Vec<u64> = v.physical_tables().map(|f| f.number).collect();
    physical.sort_unstable();
    assert_eq!(physical, [3, 4, 5, 6, 9, 10, 11]);
    // Each parent byte counted once: 1,000 + 600 + 400.
    assert_eq!(v.level_bytes(3), 2000);
    // The snapshot edit rebuilds levels and parents.
    let again = Version::new(4).apply(&v.to_snapshot_edit()).expect("apply");
    again.check_invariants().expect("invariants");
    assert_eq!(
        again.parents().collect::<Vec<_>>(),
        v.parents().collect::<Vec<_>>()
    );
    for level in 0..4 {
        assert_eq!(v.files(level), again.files(level));
    }
    // Table 21 goes: parent 5 stays for table 20's slice.
    let v = v
        .apply(&VersionEdit {
            deleted_files: vec![(3, 21)],
            ..Default::default()
        })
        .expect("delete 21");
    v.check_invariants().expect("invariants");
    assert_eq!(v.parents().map(|p| p.number).collect::<Vec<_>>(), [4, 5]);
    // Table 20 goes: no parent is named any more.
    let v = v
        .apply(&VersionEdit {
            deleted_files: vec![(3, 20)],
            ..Default::default()
        })
        .expect("delete 20");
    v.check_invariants().expect("invariants");
    assert_eq!(v.parents().count(), 0);
    assert_eq!(v.physical_tables().count(), 5);
}

#[test]
fn apply_refuses_unknown_duplicate_and_live_parents() {
    let (v, _) = virtualized();
    let err = |e: VersionEdit| v.apply(&e).expect_err("refused");
    // A virtual table naming a parent nobody sent.
    let e = VersionEdit {
        new_files: vec![(
            2,
            FileMetaData::virtual_for_test(30, "zz", "zz", &[(77, "zz", "zz", 1)]),
        )],
        ..Default::default()
    };
    assert!(err(e).contains("unknown parent 77"));
    // A parent sent twice.
    let e = VersionEdit {
        new_parents: vec![meta(4, "a", "c", 1, 5, 1000)],
        ..Default::default()
    };
    assert!(err(e).contains("already known"));
    // A parent that is still a level file.
    let e = VersionEdit {
        new_parents: vec![meta(6, "q", "t", 1, 5, 1000)],
        ..Default::default()
    };
    assert!(err(e).contains("is a level file"));
}

#[test]
fn check_invariants_catches_bad_slices() {
    let base = || {
        let e = VersionEdit {
            deleted_files: vec![(1, 4), (1, 5)],
            new_parents: vec![meta(4, "a", "c", 1, 5, 1000), meta(5, "k", "p", 1, 5, 1000)],
            ..Default::default()
        };
        sample().apply(&e)
    };
    let with = |level: usize, files: Vec<FileMetaData>| {
        let e = VersionEdit {
            deleted_files: vec![(1, 4), (1, 5)],
            new_files: files.into_iter().map(|f| (level, f)).collect(),
            new_parents: vec![meta(4, "a", "c", 1, 5, 1000), meta(5, "k", "p", 1, 5, 1000)],
            ..Default::default()
        };
        let v = sample().apply(&e).expect("apply");
        v.check_invariants().expect_err("a broken invariant")
    };
    // Parents that no slice names are dropped by apply, never left behind.
    assert_eq!(base().expect("apply").parents().count(), 0);
    let cases = [
        (
            0,
            vec![FileMetaData::virtual_for_test(
                20,
                "a",
                "c",
                &[(4, "a", "c", 1)],
            )],
            "is in L0",
        ),
        (
            3,
            vec![FileMetaData::virtual_for_test(
                20,
                "a",
                "d",
                &[(4, "a", "d", 1)],
            )],
            "outside",
        ),
        (
            3,
            vec![FileMetaData::virtual_for_test(
                20,
                "b",
                "c",
                &[(4, "a", "c", 1)],
            )],
            "outside",
        ),
        // Tables may share the user key `b` when the first ends at the range-tombstone
        // sentinel, but two slices of one parent may not both hold it.
        (
            3,
            vec![
                FileMetaData {
                    largest: make_internal_key(
                        b"b",
                        crate::key::MAX_SEQUENCE,
                        ValueKind::RangeDelete,
                    ),
                    ..FileMetaData::virtual_for_test(20, "a", "b", &[(4, "a", "b", 1)])
                },
                FileMetaData::virtual_for_test(21, "b", "c", &[(4, "b", "c", 1)]),
            ],
            "slices of parent 4 in virtual tables 20 and 21 overlap",
        ),
        (
            3,
            vec![FileMetaData {
                size: 5,
                ..FileMetaData::virtual_for_test(20, "a", "c", &[(4, "a", "c", 1)])
            }],
            "slices hold 1 bytes, size is 5",
        ),
    ];
    for (level, files, want) in cases {
        let got = with(level, files);
        assert!(got.contains(want), "{got} (wanted {want})");
    }
}

/// One step of [`virtual_edits_keep_invariants_and_free_parents_exactly_when_unnamed`]
/// on L2 of a version: add a real file over the key cells `[4x, 4x + 3]` if free;
/// virtualize the x-th file (a real one splits into two virtual siblings over the
/// halves of its cells, its parent shared; a virtual one is renumbered with its slices, as a
/// virtual input re-tiled); compact the x-th file for real (a real file of its range
/// replaces it); or delete it.
fn virtual_step(v: &Version, op: u8, x: u64, next: &mut u64) -> Option<(VersionEdit, Vec<u64>)> {
    let cell = |i: u64| format!("k{i:03}");
    let files = v.files(2);
    let pick = files.get(x as usize % files.len().max(1)).cloned();
    let mut e = VersionEdit::default();
    let mut created = Vec::new();
    let mut number = || {
        *next += 1;
        *next
    };
    match (op, pick) {
        (0, _) => {
            let (lo, hi) = (cell(4 * (x % 25)), cell(4 * (x % 25) + 3));
            if !v
                .overlapping_files(2, Some(lo.as_bytes()), Some(hi.as_bytes()))
                .is_empty()
            {
                return None;
            }
            let n = number();
            e.new_files.push((2, meta(n, &lo, &hi, n, n, 400)));
            created.push(n);
        }
        (1, Some(f)) => {
            e.deleted_files.push((2, f.number));
            match &f.kind {
                FileKind::Real => {
                    // Halves of its cells `[a, b]` (one table if it has one cell).
                    let at = |k: &[u8]| k[1..].iter().fold(0, |n, d| n * 10 + u64::from(d - b'0'));
                    let (a, b) = (at(f.smallest_user_key()), at(f.largest_user_key()));
                    let mid = (a + b) / 2;
                    let halves = if a == b {
                        vec![(a, b)]
                    } else {
                        vec![(a, mid), (mid + 1, b)]
                    };
                    for (lo, hi) in halves {
                        let (lo, hi) = (cell(lo), cell(hi));
                        let t = FileMetaData::virtual_for_test(
                            number(),
                            &lo,
                            &hi,
                            &[(f.number, &lo, &hi, 200)],
                        );
                        e.new_files.push((2, t));
                    }
                    e.new_parents.push(FileMetaData::clone(&f));
                }
                FileKind::Virtual { .. } => {
                    let renumbered = FileMetaData {
                        number: number(),
                        ..FileMetaData::clone(&f)
                    };
                    e.new_files.push((2, renumbered));
                }
            }
        }
        (2, Some(f)) => {
            e.deleted_files.push((2, f.number));
            let n = number();
            let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
            let lo = String::from_utf8_lossy(lo).into_owned();
            let hi = String::from_utf8_lossy(hi).into_owned();
            e.new_files.push((2, meta(n, &lo, &hi, n, n, 400)));
            created.push(n);
        }
        (_, Some(f)) => e.deleted_files.push((2, f.number)),
        (_, None) => return None,
    }
    Some((e, created))
}

proptest::proptest! {
    /// Random edits with virtual tables (made, inherited, compacted for real, deleted)
    /// keep every invariant, and, with the references the version set would attach, a
    /// physical table is queued as obsolete exactly once, exactly when the last
    /// version naming it (as a level file or through a slice) is dropped.
    #[test]
    fn virtual_edits_keep_invariants_and_free_parents_exactly_when_unnamed(
        ops in proptest::collection::vec((0u8..4, 0u64..1000), 1..80)
    ) {
        use crate::version::file_ref::{FileRef, Obsolete, ObsoleteFiles};
        use std::collections::BTreeSet;
        let queue = Arc::new(ObsoleteFiles::default());
        let mut v = Version::new(4);
        v.attach_refs(&Version::new(4), &[]).expect("attach");
        let mut next = 0u64;
        let mut freed: BTreeSet<u64> = BTreeSet::new();
        for (op, x) in ops {
            let Some((e, created)) = virtual_step(&v, op, x, &mut next) else { continue };
            let refs: Vec<_> = created.iter().map(|&n| FileRef::new(n, 0, &queue)).collect();
            let mut nv = v.apply(&e).expect("valid edit");
            nv.check_invariants().expect("invariants");
            nv.attach_refs(&v, &refs).expect("attach");
            drop(refs);
            let before: BTreeSet<u64> = v.physical_tables().map(|f| f.number).collect();
            let after: BTreeSet<u64> = nv.physical_tables().map(|f| f.number).collect();
            // Nothing the new version needs was freed while the old one lived.
            proptest::prop_assert!(queue.take().is_empty());
            v = nv;
            let now: Vec<u64> = queue
                .take()
                .into_iter()
                .filter_map(|o| match o {
                    Obsolete::Table { number, .. } => Some(number),
                    _ => None,
                })
                .collect();
            let gone: BTreeSet<u64> = before.difference(&after).copied().collect();
            proptest::prop_assert_eq!(now.iter().copied().collect::<BTreeSet<_>>(), gone.clone());
            proptest::prop_assert_eq!(now.len(), gone.len(), "each queued once");
            for n in &now {
                proptest::prop_assert!(freed.insert(*n), "table {} queued twice", n);
            }
            // A parent is in the version iff some slice names it.
            let named: BTreeSet<u64> = v
                .live_files()
                .filter_map(|f| match &f.kind {
                    FileKind::Virtual { slices } => Some(slices.iter().map(|s| s.parent)),
                    FileKind::Real => None,
                })
                .flatten()
                .collect();
            let parents: BTreeSet<u64> = v.parents().map(|p| p.number).collect();
            proptest::prop_assert_eq!(parents, named);
        }
    }
}
