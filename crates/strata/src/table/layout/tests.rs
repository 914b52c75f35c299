//! Layouts: the `--layout` form, the checks with containment (the paper's example),
//! and the frozen record.

use super::*;

#[test]
fn layouts_parse_and_extend_downward() {
    let l = Layout::parse("row;row;2,2;1,1,1,1", 4).unwrap();
    assert_eq!(l.level(0), &LevelLayout::Row);
    assert_eq!(
        l.level(2),
        &LevelLayout::Groups(vec![vec![0, 1], vec![2, 3]])
    );
    assert_eq!(l.level(9), l.level(3), "the last level extends downward");
    assert!(l.has_groups());
    assert_eq!(l.to_text(), "row;row;2,2;1,1,1,1");
    assert!(!Layout::row().has_groups());
}

#[test]
fn bad_layouts_are_refused_by_level_and_columns() {
    for (text, what) in [
        ("2,2", "level 0 always holds rows"),
        ("row;2,1", "column 3 is in no group"),
        ("row;2,3", "add up past the table's 4 columns"),
        ("row;4000000000", "add up past"),
        ("row;x", "not a group width"),
        ("row;0,4", "not a group width"),
        // The paper's §3.2 example: under <A,B>,<C,D>, <A,B,C> is no one group's.
        (
            "row;2,2;3,1",
            "level 2's group of columns [0, 1, 2] lies in no one group of level 1",
        ),
        ("row;2,2;row", "level 2's group of columns [0, 1, 2, 3]"),
    ] {
        let err = Layout::parse(text, 4).unwrap_err();
        assert!(err.to_string().contains(what), "{text}: {err}");
    }
    // Groups that are not contiguous, checked the same way.
    let split = Layout::new(
        vec![
            LevelLayout::Row,
            LevelLayout::Groups(vec![vec![0, 2], vec![1, 3]]),
            LevelLayout::Groups(vec![vec![0], vec![2], vec![1, 3]]),
        ],
        4,
    );
    assert!(split.is_ok());
    let unsorted = Layout::new(
        vec![
            LevelLayout::Row,
            LevelLayout::Groups(vec![vec![1, 0], vec![2, 3]]),
        ],
        4,
    );
    assert!(unsorted.unwrap_err().to_string().contains("ascending"));
    let twice = Layout::new(
        vec![
            LevelLayout::Row,
            LevelLayout::Groups(vec![vec![0, 1], vec![1, 2, 3]]),
        ],
        4,
    );
    assert!(twice
        .unwrap_err()
        .to_string()
        .contains("column 1 in two groups"));
}

#[test]
fn the_layout_record_is_frozen_and_keeps_group_ids() {
    let l = Layout::parse("row;2,2;1,1,2", 4).unwrap();
    let r = LayoutRecord::first(&l);
    assert_eq!(r.levels, vec![None, Some(vec![1, 2]), Some(vec![3, 4, 2])]);
    assert_eq!(r.layout().unwrap(), l);
    // version 1, epoch 0, 4 groups (1: [0,1], 2: [2,3], 3: [0], 4: [1]), 3 levels:
    // row; groups 1,2; groups 3,4,2.
    const RECORD_V1: &str = concat!(
        "0100",
        "04",
        "01020001",
        "02020203",
        "030100",
        "040101",
        "03",
        "00",
        "01020102",
        "0103030402"
    );
    let enc = r.encode();
    let hex: String = enc.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, RECORD_V1, "encoding changed");
    assert_eq!(LayoutRecord::decode(&enc).unwrap(), r);
    for n in 0..enc.len() {
        assert!(LayoutRecord::decode(&enc[..n]).is_err(), "prefix {n}");
    }
    // A level naming a group never defined is refused.
    let mut bad = r.clone();
    bad.levels.push(Some(vec![9]));
    assert!(LayoutRecord::decode(&bad.encode())
        .unwrap_err()
        .contains("undefined column group 9"));
}

#[test]
fn refining_cuts_each_group_along_the_level_above() {
    // The paper's invalid example, refined: <A,B,C> under <A,B>,<C,D> becomes
    // <A,B>,<C>.
    let l = Layout::parse_refined("row;2,2;3,1", 4).unwrap();
    assert_eq!(l.to_text(), "row;2,2;2,1,1");
    // A row level under groups takes the groups; the cut goes on downward.
    let l = Layout::parse_refined("row;1,3;row;2,2", 4).unwrap();
    assert_eq!(l.to_text(), "row;1,3;1,3;1,1,2");
    // A layout with containment is its own refinement.
    let ok = "row;row;2,2;1,1,1,1";
    assert_eq!(
        Layout::parse_refined(ok, 4).unwrap(),
        Layout::parse(ok, 4).unwrap()
    );
    // Everything but containment is still checked.
    assert!(Layout::parse_refined("2,2", 4).is_err());
    assert!(Layout::parse_refined("row;2,1", 4).is_err());
}
