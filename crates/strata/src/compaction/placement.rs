//! The placement seam: which data path (`Options::db_paths`) new tables of a level go to.
//!
//! Role: every plan names a data path per output stream. The policies that build plans
//! (`Plan::flush`, the picker) ask a [`PlacementPolicy`], chosen once per open (the
//! default [`ByLevel`], or one given to `DbBuilder::placement_policy`), and record its
//! answer in the stream; the executor only writes where the plan says. A technique that
//! places tables differently (by temperature across a fast and a slow tier, say) is a
//! new type implementing this trait in its own module.
//!
//! Contract: a pure function of its arguments (no I/O, no locks, no state that changes
//! later answers), called under the database's `state` lock. The answer must be below
//! the number of data paths (`max(1, db_paths.len())`); a larger one fails the job with
//! an internal error rather than writing anywhere else.

use super::picker::level_targets;
use crate::options::Options;
use crate::version::Version;
use std::fmt;

/// Chooses the data path of new tables. See the module docs for the contract.
///
/// **Experimental**: the seam tiering plugs into; its signature may change as it
/// arrives.
pub trait PlacementPolicy: Send + Sync + fmt::Debug {
    /// The data path new tables of `level` are written to, given the current `version`.
    fn path_for_level(&self, version: &Version, opts: &Options, level: usize) -> u32;
}

/// RocksDB's placement by level: whole levels fill the data paths in order, each path
/// taking levels while its `target_size` still holds them. The default policy.
///
/// Each level counts at its target size (`compaction::picker::level_targets`), with L0
/// counted as large as L1 (L0 has no byte target). Walking down from L0, a level goes to
/// the current path if it fits in what that path has left, and is subtracted from it;
/// otherwise the walk moves on to the next path with that path's whole budget. The last
/// path takes every level that fits nowhere else, whatever its target. The choice
/// depends on the options only, not on the bytes a level holds now, so a level's tables
/// never change path as the tree grows.
#[derive(Debug, Default, Clone, Copy)]
pub struct ByLevel;

impl PlacementPolicy for ByLevel {
    fn path_for_level(&self, _version: &Version, opts: &Options, level: usize) -> u32 {
        let budgets: Vec<u64> = opts.db_paths.iter().map(|p| p.target_size).collect();
        let Some(last) = budgets.len().checked_sub(1) else {
            return 0;
        };
        let targets = level_targets(opts);
        // L0's stand-in size is L1's target.
        let size_of = |l: usize| targets.get(l.max(1)).copied().unwrap_or(u64::MAX);
        let mut path = 0;
        let mut room = budgets.first().copied().unwrap_or(0);
        let mut current = 0;
        while path < last {
            let size = size_of(current);
            if size <= room {
                if current == level {
                    break;
                }
                room -= size;
                current += 1;
            } else {
                path += 1;
                room = budgets.get(path).copied().unwrap_or(0);
            }
        }
        // `path` is at most `MAX_DB_PATHS - 1`.
        u32::try_from(path).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::DbPath;

    fn opts(targets: &[u64]) -> Options {
        Options::default()
            .with_max_bytes_for_level_base(100)
            .with_max_bytes_for_level_multiplier(10.0)
            .with_num_levels(6)
            .with_db_paths(
                targets
                    .iter()
                    .enumerate()
                    .map(|(i, &t)| DbPath::new(format!("/p{i}"), t))
                    .collect(),
            )
    }

    fn placement(o: &Options) -> Vec<u32> {
        let v = Version::new(o.num_levels);
        (0..o.num_levels)
            .map(|l| ByLevel.path_for_level(&v, o, l))
            .collect()
    }

    #[test]
    fn no_paths_or_one_path_is_path_zero() {
        assert_eq!(placement(&opts(&[])), vec![0; 6]);
        assert_eq!(placement(&opts(&[1])), vec![0; 6]);
    }

    /// Level sizes: L0 100 (as L1), L1 100, L2 1000, L3 10000, L4 100000, L5 1e6.
    #[test]
    fn levels_fill_paths_in_order_by_their_targets() {
        // Path 0 holds L0+L1 (200) exactly; L2 (1000) fits path 1's 5000 budget, L3
        // (10000) does not and falls to the last path with everything below.
        assert_eq!(placement(&opts(&[200, 5000, 0])), vec![0, 0, 1, 2, 2, 2]);
        // One byte short: L1 no longer fits path 0, and path 1 takes L1..L2.
        assert_eq!(placement(&opts(&[199, 1100, 0])), vec![0, 1, 1, 2, 2, 2]);
        // A first path too small for L0 sends even flushes to the next path.
        assert_eq!(placement(&opts(&[10, u64::MAX])), vec![1; 6]);
        // A huge first path holds everything.
        assert_eq!(placement(&opts(&[u64::MAX, 0])), vec![0; 6]);
    }
}
