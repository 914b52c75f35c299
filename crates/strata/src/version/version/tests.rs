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
