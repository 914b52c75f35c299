//! What a table handle's reads and writes were, as the design advisor takes them (the
//! paper's §6.1 workload; issue 31 item 7): inserts, updates by the columns they set,
//! point reads by projection and by the level that served them
//! (`PartialRead::served_at`), and scans by projection with the rows they returned.
//! [`super::Table::workload`] turns it, with the tree's shape as built, into the
//! advisor's input.
//!
//! Kept in memory by the handle (one mutex, taken once per operation), so it covers
//! what went through this handle since it was opened or reset; nothing is persisted.

use super::advisor::Workload;
use super::cost::{LevelOp, OpKind, TreeShape};
use super::RunInfo;
use std::collections::BTreeMap;

/// The counts. See the module docs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    /// Rows inserted.
    pub inserts: u64,
    /// Updates, by the columns they set.
    pub updates: BTreeMap<Vec<usize>, u64>,
    /// Point reads that found a row, by projection, then by the level that served
    /// them (index 0: the memtables and L0).
    pub gets: BTreeMap<Vec<usize>, Vec<u64>>,
    /// Scans by projection: (scans, rows returned).
    pub scans: BTreeMap<Vec<usize>, (u64, u64)>,
}

fn columns(c: &[usize]) -> Vec<u32> {
    c.iter().filter_map(|&c| u32::try_from(c).ok()).collect()
}

impl Profile {
    /// Counts a point read of `projection` served at `level`. Allocates only for a
    /// projection or level not seen before (it runs under the handle's lock on
    /// every get).
    pub(super) fn count_get(&mut self, projection: &[usize], level: usize) {
        let levels = match self.gets.get_mut(projection) {
            Some(levels) => levels,
            None => self.gets.entry(projection.to_vec()).or_default(),
        };
        if levels.len() <= level {
            levels.resize(level + 1, 0);
        }
        if let Some(n) = levels.get_mut(level) {
            *n += 1;
        }
    }

    /// The advisor's input for a tree of `shape` whose runs are `runs`: point reads
    /// at the level that served them, scans spread over the levels by the share of
    /// the rows each holds (the paper's `s_i`), updates at every level (Eq. 7 prices
    /// an update at each level it passes).
    pub fn workload(&self, shape: &TreeShape, runs: &[RunInfo]) -> Workload {
        let levels = shape.last_level + 1;
        let mut rows = vec![0u64; levels];
        for r in runs {
            if let Some(n) = rows.get_mut(r.level) {
                *n = (*n).max(r.entries);
            }
        }
        let total = rows.iter().sum::<u64>().max(1) as f64;
        let mut ops: Vec<Vec<LevelOp>> = vec![Vec::new(); levels];
        for (projection, served) in &self.gets {
            let levels = served.iter().zip(ops.iter_mut()).skip(1);
            for (&count, at) in levels.filter(|(&count, _)| count > 0) {
                at.push(LevelOp {
                    kind: OpKind::PointRead,
                    columns: columns(projection),
                    count: count as f64,
                });
            }
        }
        for (level, at) in ops.iter_mut().enumerate().skip(1) {
            let share = rows.get(level).map_or(0.0, |&n| n as f64 / total);
            for (projection, &(scans, returned)) in &self.scans {
                let per_scan = returned as f64 / scans.max(1) as f64;
                at.push(LevelOp {
                    kind: OpKind::Scan {
                        entries: per_scan * share,
                    },
                    columns: columns(projection),
                    count: scans as f64,
                });
            }
            for (set, &count) in &self.updates {
                at.push(LevelOp {
                    kind: OpKind::Update,
                    columns: columns(set),
                    count: count as f64,
                });
            }
        }
        Workload {
            inserts: self.inserts as f64,
            ops,
        }
    }
}
