//! The plans of a write-back on hand-built versions: which files are read and split,
//! where each part goes, what the trigger declines, and when a claim is stale.

use super::*;
use crate::compaction::placement::ByLevel;
use crate::compaction::plan::OutputRange;
use crate::version::VersionEdit;

/// `(level, number, lo, hi, size)`.
type Spec<'a> = (usize, u64, &'a str, &'a str, u64);

fn version(specs: &[Spec<'_>]) -> Version {
    let mut edit = VersionEdit::default();
    for &(level, number, lo, hi, size) in specs {
        edit.new_files
            .push((level, FileMetaData::for_test(number, lo, hi, 1, 1, size)));
    }
    let v = Version::new(5).apply(&edit).expect("apply");
    v.check_invariants().expect("invariants");
    v
}

/// `bytes` merged, one entry of which is an older version.
fn merged(bytes: u64) -> Merged {
    Merged {
        bytes,
        entries: 1,
        older: 1,
    }
}

fn opts() -> Options {
    Options {
        num_levels: 5,
        ..Options::default()
    }
}

fn range(a: &str, b: &str) -> KeyRange {
    KeyRange {
        start: Some(a.as_bytes().to_vec()),
        end: Some(b.as_bytes().to_vec()),
    }
}

/// One line per plan: `L<in>[numbers]->L<out> range`.
fn describe(wb: &WriteBack) -> Vec<String> {
    wb.plans()
        .map(|p| {
            let ins: Vec<String> = p
                .input_files()
                .map(|(l, f)| format!("L{l}:{}", f.number))
                .collect();
            let r = p.range.clone().unwrap_or_default();
            let b = |k: &Option<Vec<u8>>| {
                k.as_ref()
                    .map_or("-".to_string(), |k| String::from_utf8_lossy(k).into_owned())
            };
            format!(
                "[{}]->L{} [{},{}) bottom={}",
                ins.join(" "),
                p.outputs[0].level,
                b(&r.start),
                b(&r.end),
                p.bottommost
            )
        })
        .collect()
}

/// L2: 10 [a,d] 11 [e,h] 12 [i,m]; L3: 20 [b,f] 21 [g,z]; L4 empty.
fn tree() -> Version {
    version(&[
        (2, 10, "a", "d", 100),
        (2, 11, "e", "h", 100),
        (2, 12, "i", "m", 100),
        (3, 20, "b", "f", 300),
        (3, 21, "g", "z", 300),
    ])
}

/// `plan` over `tree()` with the default options and placement.
fn on_tree(q: &QueryCompaction, r: &KeyRange, m: &Merged) -> Result<WriteBack, Decline> {
    plan(&tree(), &opts(), &ByLevel, q, r, m)
}

#[test]
fn the_range_goes_to_the_deepest_level_and_boundary_files_are_split_at_their_own() {
    let q = QueryCompaction::new().with_profit(0.0);
    let wb = on_tree(&q, &range("c", "j"), &merged(1000)).expect("planned");
    assert_eq!(
        describe(&wb),
        [
            "[L2:10 L2:11 L2:12 L3:20 L3:21]->L3 [c,j) bottom=true",
            "[L2:10]->L2 [-,c) bottom=false",
            "[L2:12]->L2 [j,-) bottom=false",
            "[L3:20]->L3 [-,c) bottom=false",
            "[L3:21]->L3 [j,-) bottom=false",
        ]
    );
    wb.check_complete().expect("every deleted file is covered");
    assert_eq!(wb.main.reason, Reason::ReadMerged);
}

#[test]
fn a_range_inside_one_file_splits_it_on_both_sides_and_an_unbounded_range_splits_nothing() {
    let q = QueryCompaction::new().with_profit(0.0);
    let wb = on_tree(&q, &range("ea", "eb"), &merged(1)).expect("planned");
    assert_eq!(
        describe(&wb),
        [
            "[L2:11 L3:20]->L3 [ea,eb) bottom=true",
            "[L2:11]->L2 [-,ea) bottom=false",
            "[L2:11]->L2 [eb,-) bottom=false",
            "[L3:20]->L3 [-,ea) bottom=false",
            "[L3:20]->L3 [eb,-) bottom=false",
        ]
    );
    wb.check_complete().expect("covered");
    let all = KeyRange::default();
    let wb = on_tree(&q, &all, &merged(1)).expect("planned");
    assert_eq!(
        describe(&wb),
        ["[L2:10 L2:11 L2:12 L3:20 L3:21]->L3 [-,-) bottom=true"]
    );
    // A file starting exactly at the range's end is not read.
    let wb = on_tree(&q, &range("a", "e"), &merged(1)).expect("planned");
    assert_eq!(describe(&wb)[0], "[L2:10 L3:20]->L3 [a,e) bottom=true");
}

#[test]
fn the_trigger_declines_empty_shallow_small_and_unprofitable_ranges() {
    let q = QueryCompaction::new();
    let declined =
        |q: &QueryCompaction, a, b, bytes| on_tree(q, &range(a, b), &merged(bytes)).err();
    // Nothing from L2 down in [zz, zzz).
    assert_eq!(declined(&q, "zz", "zzz", 1), Some(Decline::Empty));
    // [n, o): only L3 holds it, no level above.
    assert_eq!(declined(&q, "n", "o", 1), Some(Decline::Levels));
    assert_eq!(
        declined(&q.with_min_levels(2), "c", "j", 1),
        Some(Decline::Levels)
    );
    assert_eq!(
        declined(&q.with_min_bytes(1001), "c", "j", 1000),
        Some(Decline::Bytes)
    );
    // [a, e): L2 holds 100 of 400 bytes (25%).
    assert!(declined(&q.with_profit(0.25), "a", "e", 1).is_none());
    assert_eq!(
        declined(&q.with_profit(0.26), "a", "e", 1),
        Some(Decline::Profit)
    );
    // Starting at L3, only one level holds the range.
    assert_eq!(
        declined(&q.with_start_level(3), "a", "e", 1),
        Some(Decline::Levels)
    );
}

#[test]
fn the_obsolete_rule_declines_ranges_of_one_version_per_key() {
    let q = QueryCompaction::new().with_min_obsolete(0.1);
    let of = |older| Merged {
        bytes: 1000,
        entries: 100,
        older,
    };
    let at = |older| on_tree(&q, &range("c", "j"), &of(older));
    assert_eq!(at(0).err(), Some(Decline::Obsolete));
    assert_eq!(at(9).err(), Some(Decline::Obsolete));
    assert!(at(10).is_ok());
    // 0 turns the rule off.
    let q = QueryCompaction::new().with_min_obsolete(0.0);
    assert!(on_tree(&q, &range("c", "j"), &of(0)).is_ok());
}

#[test]
fn check_complete_refuses_a_deleted_file_no_range_covers() {
    let q = QueryCompaction::new().with_profit(0.0);
    let mut wb = on_tree(&q, &range("c", "j"), &merged(1)).expect("planned");
    // Forget the remainder of file 21 past `j`: its keys [j, z] would be lost.
    wb.remainders
        .retain(|p| !p.input_files().any(|(_, f)| f.number == 21));
    let err = wb.check_complete().expect_err("file 21 is not covered");
    assert!(err.contains("file 21"), "{err}");
    // A remainder reading a file the main plan does not.
    let mut wb = on_tree(&q, &range("c", "j"), &merged(1)).expect("planned");
    wb.main.inputs.pop();
    assert!(wb.check_complete().is_err());
}

#[test]
fn covers_joins_half_open_ranges() {
    let r = |a: Option<&str>, b: Option<&str>| KeyRange {
        start: a.map(|k| k.as_bytes().to_vec()),
        end: b.map(|k| k.as_bytes().to_vec()),
    };
    let (x, y, z) = (
        r(None, Some("c")),
        r(Some("c"), Some("f")),
        r(Some("f"), None),
    );
    assert!(covers(&[&y, &x, &z], b"a", b"zzz"));
    assert!(covers(&[&x, &y], b"a", b"e"));
    assert!(!covers(&[&x, &y], b"a", b"f"), "f is not below f");
    assert!(!covers(&[&x, &z], b"a", b"d"), "a gap [c, f)");
    assert!(covers(&[&y], b"c", b"ez"));
    assert!(!covers(&[&y], b"b", b"d"));
}

#[test]
fn a_claim_is_stale_when_the_tree_moved_under_the_range() {
    let v = tree();
    let q = QueryCompaction::new().with_profit(0.0);
    let wb = on_tree(&q, &range("c", "j"), &merged(1)).expect("planned");
    let idle = Busy::default();
    assert_eq!(wb.stale(&v, &v, &idle), None);
    // A file it read is busy.
    let mut busy = Busy::default();
    busy.files.insert(12);
    assert!(wb.stale(&v, &v, &busy).is_some());
    // A running job writes L3 over part of its span.
    let mut busy = Busy::default();
    busy.output_ranges.push(OutputRange::rows(3, b"y", b"zz"));
    assert!(wb.stale(&v, &v, &busy).is_some());
    // A job writing L1 (above the levels it writes) does not matter.
    let mut busy = Busy::default();
    busy.output_ranges.push(OutputRange::rows(1, b"a", b"z"));
    assert_eq!(wb.stale(&v, &v, &busy), None);
    // A file it read left its level.
    let mut edit = VersionEdit::default();
    edit.deleted_files.push((2, 11));
    assert!(wb
        .stale(&v, &v.apply(&edit).expect("apply"), &idle)
        .is_some());
    // L4 (below its output) gained a file in its range.
    let mut edit = VersionEdit::default();
    edit.new_files
        .push((4, FileMetaData::for_test(30, "d", "e", 1, 1, 10)));
    assert!(wb
        .stale(&v, &v.apply(&edit).expect("apply"), &idle)
        .is_some());
    // ... outside its range: fine; L1 (above) gaining one in it: fine.
    let mut edit = VersionEdit::default();
    edit.new_files
        .push((4, FileMetaData::for_test(31, "x", "y", 1, 1, 10)));
    edit.new_files
        .push((1, FileMetaData::for_test(32, "d", "e", 1, 1, 10)));
    assert_eq!(wb.stale(&v, &v.apply(&edit).expect("apply"), &idle), None);
}
