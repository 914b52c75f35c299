//! The advisor: the paper's candidate-splitting example, the partitions Eq. 9 should
//! choose for the textbook workloads, the exact search against brute force, the
//! greedy merge past the exact limit, and containment everywhere.

use super::*;

fn shape(columns: usize) -> TreeShape {
    TreeShape {
        size_ratio: 10.0,
        last_level: 3,
        row_entries_per_block: 40.0,
        columns,
    }
}

fn op(kind: OpKind, columns: &[u32], count: f64) -> LevelOp {
    LevelOp {
        kind,
        columns: columns.to_vec(),
        count,
    }
}

#[test]
fn candidates_split_as_the_papers_example() {
    // R = {a1..a4}; Π1 = {a2,a3,a4}, Π2 = {a1,a2}, Π3 = R: {a1}, {a2}, {a3,a4}.
    let ops = [
        op(OpKind::PointRead, &[1, 2, 3], 1.0),
        op(OpKind::PointRead, &[0, 1], 1.0),
        op(OpKind::PointRead, &[0, 1, 2, 3], 1.0),
    ];
    assert_eq!(
        primary_subsets(&[0, 1, 2, 3], &ops),
        vec![vec![0], vec![1], vec![2, 3]]
    );
}

#[test]
fn point_reads_keep_rows_and_narrow_scans_split_columns() {
    let s = shape(4);
    let reads = Workload {
        inserts: 1000.0,
        ops: vec![vec![op(OpKind::PointRead, &[0, 1, 2, 3], 500.0)]; 4],
    };
    let a = advise(&s, &reads).unwrap();
    assert_eq!(a.layout.to_text(), "row;row;row;row");
    assert!(a.exact);
    let scans = Workload {
        inserts: 10.0,
        ops: (0..4)
            .map(|_| {
                (0..4)
                    .map(|c| op(OpKind::Scan { entries: 1e5 }, &[c], 10.0))
                    .collect()
            })
            .collect(),
    };
    let a = advise(&s, &scans).unwrap();
    assert_eq!(a.layout.to_text(), "row;1,1,1,1;1,1,1,1;1,1,1,1");
    // Scans of columns 0-1 together and 2-3 together: two groups of two.
    let pairs = Workload {
        inserts: 10.0,
        ops: vec![
            vec![
                op(OpKind::Scan { entries: 1e5 }, &[0, 1], 10.0),
                op(OpKind::Scan { entries: 1e5 }, &[2, 3], 10.0)
            ];
            4
        ],
    };
    assert_eq!(
        advise(&s, &pairs).unwrap().layout.to_text(),
        "row;2,2;2,2;2,2"
    );
    assert_eq!(a.level_costs.len(), 4);
}

/// Every set partition of `items`, for the brute force.
fn partitions(items: &[usize]) -> Vec<Vec<Vec<usize>>> {
    let Some((&first, rest)) = items.split_first() else {
        return vec![vec![]];
    };
    let mut out = Vec::new();
    for p in partitions(rest) {
        for i in 0..p.len() {
            let mut q = p.clone();
            q[i].push(first);
            out.push(q);
        }
        let mut q = p.clone();
        q.push(vec![first]);
        out.push(q);
    }
    out
}

#[test]
fn the_exact_search_finds_the_brute_force_optimum() {
    let s = shape(6);
    // Five primary subsets: {0}, {1}, {2}, {3}, {4,5}, with mixed operations.
    let ops = vec![
        op(OpKind::PointRead, &[0, 1, 2, 3, 4, 5], 40.0),
        op(OpKind::Scan { entries: 2e4 }, &[0], 7.0),
        op(OpKind::Scan { entries: 5e3 }, &[1, 2], 3.0),
        op(OpKind::Update, &[3], 900.0),
        op(OpKind::Scan { entries: 1e4 }, &[4, 5, 2], 2.0),
        op(OpKind::PointRead, &[1, 3], 30.0),
    ];
    let columns: Vec<u32> = (0..6).collect();
    let primary = primary_subsets(&columns, &ops);
    let (best, exact) = partition(&s, 100.0, &ops, &columns);
    assert!(exact);
    // The reference cost is the model's own Eq. 9 (`cost.rs`), not the search's.
    let cost_of = |groups: &[Vec<u32>]| -> f64 { s.level_cost(groups, 100.0, &ops) };
    let brute = partitions(&(0..primary.len()).collect::<Vec<_>>())
        .into_iter()
        .map(|p| {
            let groups: Vec<Vec<u32>> = p
                .iter()
                .map(|ids| ids.iter().flat_map(|&i| primary[i].clone()).collect())
                .collect();
            cost_of(&groups)
        })
        .fold(f64::INFINITY, f64::min);
    assert!((cost_of(&best) - brute).abs() < 1e-9 * brute, "{best:?}");
}

#[test]
fn past_the_exact_limit_the_greedy_merge_keeps_containment() {
    let c = 40usize;
    let s = shape(c);
    // 40 single-column scans and wide point reads: 40 primary subsets.
    let level: Vec<LevelOp> = (0..c as u32)
        .map(|col| op(OpKind::Scan { entries: 1e3 }, &[col], 1.0))
        .chain([op(
            OpKind::PointRead,
            &(0..c as u32).collect::<Vec<_>>(),
            50.0,
        )])
        .collect();
    let w = Workload {
        inserts: 100.0,
        ops: vec![level; 4],
    };
    let a = advise(&s, &w).unwrap();
    assert!(!a.exact);
    a.layout.check(c).unwrap();
    assert!(a.level_costs.iter().all(|x| x.is_finite()));
    // Bad input is refused by name.
    let bad = Workload {
        inserts: 1.0,
        ops: vec![vec![op(OpKind::PointRead, &[c as u32], 1.0)]],
    };
    assert!(advise(&s, &bad)
        .unwrap_err()
        .to_string()
        .contains("column 40"));
}
