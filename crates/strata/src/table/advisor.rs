//! The design advisor (the paper's §6): per level, the partition of the columns into
//! groups that minimises the cost model's Eq. 9 for a workload, level 1 first, each
//! deeper level chosen inside each group of the level above (Eq. 10, containment).
//!
//! - **Candidates** (§6.3 step 1). The columns a level's group holds are split by
//!   every projection of the level's operations: a subset `S` meeting a projection
//!   `Π` becomes `S ∩ Π` and `S \ Π`. The results (*primary subsets*) hold columns
//!   every operation reads all or none of. An optimal partition is a union of them:
//!   splitting one only adds a key per entry (Eq. 4) and never saves a block, since
//!   every operation that reads one of its columns reads all.
//! - **Selection** (steps 2–3). Eq. 9 is a sum over the groups of a level, each
//!   term a function of the group alone (`group_cost`), so the best partition of
//!   `k` primary subsets is found exactly by a dynamic program over their subsets
//!   (`O(3^k)`) while `k <= EXACT_LIMIT`; beyond it, Hyrise's greedy merge (start
//!   from the primary subsets, merge the pair that lowers the cost most, until no
//!   merge does). [`Advice::exact`] says which was used.
//!
//! The advisor is pure: the workload is its input (hand-written or synthetic through
//! `strata table advise`, or built from a handle's profile by `Table::workload`).

use super::cost::{LevelOp, OpKind, TreeShape};
use super::layout::{Layout, LevelLayout};
use crate::error::{Error, Result};

/// Levels with at most this many primary subsets are partitioned exactly.
pub const EXACT_LIMIT: usize = 12;

/// What the advisor is asked: the tree, the inserts, and per level (`ops[i]`, level
/// `i`; L0 is always rows and its entry is ignored) the operations served there.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    /// Inserts into the tree (each reaches every level).
    pub inserts: f64,
    /// Per level, its operations; a level without an entry has none.
    pub ops: Vec<Vec<LevelOp>>,
}

/// What the advisor answers.
#[derive(Clone, Debug, PartialEq)]
pub struct Advice {
    /// The layout, levels `0..=L` of the shape.
    pub layout: Layout,
    /// Eq. 9 per level for that layout (L0 priced as rows).
    pub level_costs: Vec<f64>,
    /// True iff every level's partition is exact (no greedy merge was needed).
    pub exact: bool,
}

/// The layout minimising Eq. 9 level by level under containment. See the module docs.
///
/// # Errors
/// `InvalidArgument` for a shape without columns or an operation naming a column the
/// table lacks.
pub fn advise(shape: &TreeShape, workload: &Workload) -> Result<Advice> {
    let c = u32::try_from(shape.columns)
        .ok()
        .filter(|&c| c > 0)
        .ok_or_else(|| Error::InvalidArgument("a table of no columns".into()))?;
    if let Some(bad) = workload
        .ops
        .iter()
        .flatten()
        .flat_map(|op| &op.columns)
        .find(|&&col| col >= c)
    {
        return Err(Error::InvalidArgument(format!(
            "an operation reads column {bad}, the table has {c}"
        )));
    }
    let all: Vec<u32> = (0..c).collect();
    let none = Vec::new();
    let ops_at = |level: usize| workload.ops.get(level).unwrap_or(&none);
    let mut levels = vec![LevelLayout::Row];
    let mut costs = vec![shape.level_cost(std::slice::from_ref(&all), workload.inserts, ops_at(0))];
    let mut above = vec![all];
    let mut exact = true;
    for level in 1..=shape.last_level {
        let ops = ops_at(level);
        let mut groups = Vec::new();
        for parent in &above {
            let (best, was_exact) = partition(shape, workload.inserts, ops, parent);
            exact &= was_exact;
            groups.extend(best);
        }
        groups.sort_by_key(|g| g.first().copied());
        costs.push(shape.level_cost(&groups, workload.inserts, ops));
        levels.push(if groups.len() == 1 {
            LevelLayout::Row
        } else {
            LevelLayout::Groups(groups.clone())
        });
        above = groups;
    }
    Ok(Advice {
        layout: Layout::new(levels, shape.columns)?,
        level_costs: costs,
        exact,
    })
}

/// The primary subsets of `columns` under the projections of `ops` (module docs), in
/// order of their first column.
fn primary_subsets(columns: &[u32], ops: &[LevelOp]) -> Vec<Vec<u32>> {
    let mut subsets = vec![columns.to_vec()];
    for op in ops {
        subsets = subsets
            .into_iter()
            .flat_map(|s| {
                let (inside, outside): (Vec<u32>, Vec<u32>) =
                    s.into_iter().partition(|c| op.columns.contains(c));
                [inside, outside].into_iter().filter(|p| !p.is_empty())
            })
            .collect();
    }
    subsets.sort_by_key(|s| s.first().copied());
    subsets
}

/// A candidate group for the search: its column count and which of the level's
/// operations read it (a bitset), all Eq. 9 needs (`group_cost`'s terms depend on
/// nothing else), so a union's cost is an OR and a sum, not a walk of its columns.
#[derive(Clone, Debug)]
struct Candidate {
    width: usize,
    touched: Vec<u64>,
}

impl Candidate {
    fn of(g: &[u32], ops: &[LevelOp]) -> Candidate {
        let mut touched = vec![0u64; ops.len().div_ceil(64)];
        for (i, op) in ops.iter().enumerate() {
            if g.iter().any(|c| op.columns.contains(c)) {
                if let Some(w) = touched.get_mut(i / 64) {
                    *w |= 1 << (i % 64);
                }
            }
        }
        Candidate {
            width: g.len(),
            touched,
        }
    }

    fn union(&self, other: &Candidate) -> Candidate {
        Candidate {
            width: self.width + other.width,
            touched: self
                .touched
                .iter()
                .zip(&other.touched)
                .map(|(a, b)| a | b)
                .collect(),
        }
    }

    /// Eq. 9's share of the group this stands for: its write term, and for every
    /// operation reading it, its probe or its blocks.
    fn cost(&self, shape: &TreeShape, inserts: f64, ops: &[LevelOp]) -> f64 {
        let per_entry = shape.row_entries_per_block * (1 + shape.columns) as f64;
        let width = (1 + self.width) as f64;
        let mut total = inserts * shape.size_ratio / per_entry;
        for (i, op) in ops.iter().enumerate() {
            let read = self
                .touched
                .get(i / 64)
                .is_some_and(|w| w & (1 << (i % 64)) != 0);
            if read {
                total += op.count
                    * match op.kind {
                        OpKind::PointRead => 1.0,
                        OpKind::Scan { entries } => entries * width / per_entry,
                        OpKind::Update => shape.size_ratio * width / per_entry,
                    };
            }
        }
        total
    }
}

/// The cheapest partition of `columns` into unions of its primary subsets, and
/// whether it is exact.
fn partition(
    shape: &TreeShape,
    inserts: f64,
    ops: &[LevelOp],
    columns: &[u32],
) -> (Vec<Vec<u32>>, bool) {
    let primary = primary_subsets(columns, ops);
    let candidates: Vec<Candidate> = primary.iter().map(|g| Candidate::of(g, ops)).collect();
    let columns_of = |members: &[usize]| -> Vec<u32> {
        let mut g: Vec<u32> = members
            .iter()
            .filter_map(|&i| primary.get(i))
            .flatten()
            .copied()
            .collect();
        g.sort_unstable();
        g
    };
    let k = primary.len();
    let groups: Vec<Vec<usize>> = if k <= EXACT_LIMIT {
        exact_partition(&candidates, |c| c.cost(shape, inserts, ops))
    } else {
        greedy_partition(&candidates, |c| c.cost(shape, inserts, ops))
    };
    let mut out: Vec<Vec<u32>> = groups.iter().map(|g| columns_of(g)).collect();
    out.sort_by_key(|g| g.first().copied());
    (out, k <= EXACT_LIMIT)
}

/// The cheapest partition of `candidates` (at most [`EXACT_LIMIT`]) into unions, by a
/// dynamic program over their subsets: the best partition of a set is the best over
/// the groups holding its lowest member of that group plus the best of the rest.
fn exact_partition(candidates: &[Candidate], cost: impl Fn(&Candidate) -> f64) -> Vec<Vec<usize>> {
    let k = candidates.len();
    let full = (1usize << k) - 1;
    let union = |mask: usize| -> Option<Candidate> {
        let mut members = (0..k).filter(|i| mask & (1 << i) != 0);
        let first = candidates.get(members.next()?)?.clone();
        Some(
            members
                .filter_map(|i| candidates.get(i))
                .fold(first, |a, b| a.union(b)),
        )
    };
    // best[m] = (cost, the group of m holding its lowest member).
    let mut best = vec![(0.0f64, 0usize); full + 1];
    for m in 1..=full {
        let low = m & m.wrapping_neg();
        let rest = m ^ low;
        let mut choice = (f64::INFINITY, m);
        let mut sub = rest;
        loop {
            let group = sub | low;
            let here = union(group).map_or(f64::INFINITY, |c| cost(&c));
            let total = here + best.get(m ^ group).map_or(0.0, |b| b.0);
            if total < choice.0 {
                choice = (total, group);
            }
            if sub == 0 {
                break;
            }
            sub = (sub - 1) & rest;
        }
        if let Some(b) = best.get_mut(m) {
            *b = choice;
        }
    }
    let mut groups = Vec::new();
    let mut m = full;
    while m != 0 {
        let group = best.get(m).map_or(m, |b| b.1);
        groups.push((0..k).filter(|i| group & (1 << i) != 0).collect());
        m ^= group;
    }
    groups
}

/// Hyrise's greedy merge: from the candidates alone, merge the pair whose union
/// lowers the cost most, until no merge does.
fn greedy_partition(candidates: &[Candidate], cost: impl Fn(&Candidate) -> f64) -> Vec<Vec<usize>> {
    let mut groups: Vec<(Vec<usize>, Candidate, f64)> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| (vec![i], c.clone(), cost(c)))
        .collect();
    loop {
        let mut merge: Option<(f64, usize, usize, Candidate, f64)> = None;
        for (i, a) in groups.iter().enumerate() {
            for (j, b) in groups.iter().enumerate().skip(i + 1) {
                let both = a.1.union(&b.1);
                let c = cost(&both);
                let gain = a.2 + b.2 - c;
                if gain > 0.0 && merge.as_ref().is_none_or(|m| gain > m.0) {
                    merge = Some((gain, i, j, both, c));
                }
            }
        }
        let Some((_, i, j, both, c)) = merge else {
            break;
        };
        let (members, _, _) = groups.remove(j);
        if let Some(a) = groups.get_mut(i) {
            a.0.extend(members);
            a.1 = both;
            a.2 = c;
        }
    }
    groups.into_iter().map(|g| g.0).collect()
}

#[cfg(test)]
mod tests;
