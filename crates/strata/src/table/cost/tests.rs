//! The cost model against the paper's own worked examples (§5, Figures 4 and 6) and
//! Table 2's row-style and column-style columns.

use super::*;

/// c = 4 columns (A, B, C, D = 0..4), T = 10, levels 0..=3, B = 40.
fn shape() -> TreeShape {
    TreeShape {
        size_ratio: 10.0,
        last_level: 3,
        row_entries_per_block: 40.0,
        columns: 4,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn eq3_entries_per_block_match_the_worked_examples() {
    let s = shape();
    let b = s.row_entries_per_block;
    // Figure 6, level 2 with <A,B>, <C>, <D>: B_02 = 5B/3, B_12 = B_22 = 5B/2.
    assert!(close(s.entries_per_block(2), 5.0 * b / 3.0));
    assert!(close(s.entries_per_block(1), 5.0 * b / 2.0));
    // Figure 4: B_<A,B> = 2·B_<C>/3. A row group holds B.
    assert!(close(
        s.entries_per_block(2),
        2.0 * s.entries_per_block(1) / 3.0
    ));
    assert!(close(s.entries_per_block(4), b));
}

#[test]
fn eq5_and_eq6_count_the_groups_a_projection_needs() {
    // <A,B>, <C,D>: E^g = 2 and E^G = 6 for {A, C}; 1 and 3 for {A, B}.
    let groups = vec![vec![0, 1], vec![2, 3]];
    assert_eq!(groups_needed(&groups, &[0, 2]), 2);
    assert_eq!(group_width(&groups, &[0, 2]), 6);
    assert_eq!(groups_needed(&groups, &[0, 1]), 1);
    assert_eq!(group_width(&groups, &[0, 1]), 3);
    assert_eq!(groups_needed(&groups, &[]), 0);
}

#[test]
fn table2_row_and_column_trees() {
    let s = shape();
    let (t, b, c) = (s.size_ratio, s.row_entries_per_block, s.columns as f64);
    let row = vec![vec![0, 1, 2, 3]];
    let column: Vec<Vec<u32>> = (0..4).map(|c| vec![c]).collect();
    let levels = s.last_level + 1;
    // W: a row tree T·(L + 1)/B; a column tree more, by the key repeated per group.
    assert!(close(s.write_cost(&vec![1; levels]), t * levels as f64 / b));
    assert!(close(
        s.write_cost(&vec![4; levels]),
        t * levels as f64 * 2.0 * c / (b * (1.0 + c))
    ));
    // Q: a row tree reads s/B whatever the projection; a column tree 2|Π|/(B(1 + c)).
    for p in [&[0u32][..], &[0, 3], &[0, 1, 2, 3]] {
        assert!(close(s.blocks_per_entry(&row, p), 1.0 / b));
        let want = 2.0 * p.len() as f64 / (b * (1.0 + c));
        assert!(close(s.blocks_per_entry(&column, p), want));
    }
    // P: a row tree 1 per level, a column tree |Π|.
    assert_eq!(groups_needed(&row, &[0, 1, 2]), 1);
    assert_eq!(groups_needed(&column, &[0, 1, 2]), 3);
}

#[test]
fn scan_shares_spread_as_the_levels_grow_and_add_up() {
    let s = shape();
    let total: f64 = (0..=s.last_level).map(|l| s.scan_share(1000.0, l)).sum();
    // 1 - 1/T^(L+1) of the entries: the levels hold all but a 10^-4 sliver.
    assert!(close(total, 1000.0 * (1.0 - 1e-4)));
    assert!(close(s.scan_share(1000.0, 3), 900.0));
    assert!(close(s.scan_share(1000.0, 2), 90.0));
    let flat = TreeShape {
        size_ratio: 1.0,
        ..s
    };
    assert_eq!(flat.scan_share(5.0, 3), 5.0);
    assert_eq!(flat.scan_share(5.0, 1), 0.0);
}

/// Eq. 9 prefers rows for wide point reads and inserts, and narrow groups for scans
/// of a few columns: the trade-off the advisor resolves per level.
#[test]
fn eq9_trades_point_reads_against_scans() {
    let s = shape();
    let row = vec![vec![0, 1, 2, 3]];
    let column: Vec<Vec<u32>> = (0..4).map(|c| vec![c]).collect();
    let reads = [LevelOp {
        kind: OpKind::PointRead,
        columns: vec![0, 1, 2, 3],
        count: 100.0,
    }];
    assert!(s.level_cost(&row, 10.0, &reads) < s.level_cost(&column, 10.0, &reads));
    let scans = [LevelOp {
        kind: OpKind::Scan { entries: 10_000.0 },
        columns: vec![2],
        count: 10.0,
    }];
    assert!(s.level_cost(&column, 10.0, &scans) < s.level_cost(&row, 10.0, &scans));
    // Exactly: inserts × T × g/(B(1 + c)), plus each operation's blocks.
    let want = 10.0 * 10.0 * 4.0 / (40.0 * 5.0) + 10.0 * 10_000.0 * 2.0 / (40.0 * 5.0);
    assert!(close(s.level_cost(&column, 10.0, &scans), want));
    let updates = [LevelOp {
        kind: OpKind::Update,
        columns: vec![1],
        count: 3.0,
    }];
    assert!(close(
        s.level_cost(&column, 0.0, &updates),
        3.0 * 10.0 * 2.0 / (40.0 * 5.0)
    ));
}
