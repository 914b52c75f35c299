//! Two storage tiers for one tree: the upper levels on a fast data path, the rest on a
//! slow one (Qiu et al., "HotRAP: Hot Record Retention and Promotion for LSM-trees
//! with Tiered Storage", §2.1 and §4.1).
//!
//! Role: [`Options::tiering`] names the two paths (indices into `Options::db_paths`)
//! and the fast tier's budget. This module derives from it, as pure functions of the
//! options:
//! - the **layout** ([`TierLayout`]): the *last fast level* is the deepest level whose
//!   target, with every level above it, fits in the budget (L0 counted as large as L1's
//!   target, as `ByLevel` counts it); that level's target is then stretched until L0
//!   through it hold the whole budget, which is how the paper sizes RocksDB-fat ("the
//!   size of the last level in FD is increased so that the total size of FD levels
//!   becomes 10GB"). The stretch multiplies every deeper target too, as a factor in
//!   RocksDB's `max_bytes_for_level_multiplier_additional` would;
//! - the **placement** ([`Tiered`]): levels down to the last fast level on the fast
//!   path, deeper ones on the slow path. A family without tiering is placed by
//!   `ByLevel`, unchanged.
//!
//! Seams used: `compaction::PlacementPolicy` (placement) and the level targets of
//! `compaction::picker::level_targets`, which apply `TierLayout::stretch_targets`
//! (scores, pending-compaction bytes and placement all read those targets). Nothing
//! else in the engine knows about tiers: a compaction from the last fast level into the
//! first slow one is an ordinary plan whose output stream is on the slow path.
//!
//! Modes: [`TieringMode::Fat`] is the paper's RocksDB-fat baseline: tiers, sizing and
//! placement, nothing else. [`TieringMode::HotRap`] adds RALT, hot-aware picking,
//! retention, the promotion cache and promotion by compaction and by flush through the
//! tree-hooks seam (`hooks.rs`, `retention.rs`, `router.rs`, `promotion_cache.rs`,
//! `db::tree_hooks`); its ablation switches ([`Tiering::retain`] and the others) turn
//! each pathway off alone. [`TieringMode::TimeAware`] is the higher anchor, RocksDB's
//! time-aware tiering: `Fat` plus retention of recently written keys
//! (`time_aware.rs`), no promotion. Scan promotion is planned (docs/ARCHITECTURE.md
//! §18), not built.

mod hooks;
mod options;
mod promotion_cache;
pub mod ralt;
mod retention;
mod router;
mod time_aware;

pub(crate) use hooks::TieringHooks;
pub(crate) use options::validate;
pub use options::{HotSetLimit, Tiering, TieringMode};

use crate::compaction::picker::series_targets;
use crate::compaction::{ByLevel, PlacementPolicy};
use crate::options::Options;
use crate::version::Version;

/// Where a tiered tree's tiers divide. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct TierLayout {
    /// The deepest level on the fast path (>= 1, below the last level).
    pub last_fast_level: usize,
    /// The factor (>= 1) on the last fast level's target, and through it on every
    /// deeper target, that makes L0 through it hold the fast budget.
    pub stretch: f64,
}

impl TierLayout {
    /// The layout of `opts`'s tiers, or `None` if the tree has no tiering or its
    /// budget does not hold L0 and L1 ([`Options::validate`] refuses that).
    pub fn of(opts: &Options) -> Option<TierLayout> {
        let tiering = opts.tiering.as_ref()?;
        let budget = tiering.budget(opts);
        let targets = series_targets(opts);
        // L0 counts as L1's target; the last level never counts (it holds the rest).
        let l0 = targets.get(1).copied()?;
        let mut used = l0;
        let mut last_fast_level = 0;
        for (level, &target) in targets
            .iter()
            .enumerate()
            .take(targets.len().saturating_sub(1))
            .skip(1)
        {
            match used.checked_add(target) {
                Some(sum) if sum <= budget => {
                    used = sum;
                    last_fast_level = level;
                }
                _ => break,
            }
        }
        if last_fast_level == 0 {
            return None;
        }
        let target = targets.get(last_fast_level).copied()?;
        let above = used - target;
        let stretch = (budget - above) as f64 / target.max(1) as f64;
        Some(TierLayout {
            last_fast_level,
            stretch: stretch.max(1.0),
        })
    }

    /// Stretches `targets` (indexed by level) from the last fast level down.
    pub(crate) fn stretch_targets(&self, targets: &mut [u64]) {
        for t in targets.iter_mut().skip(self.last_fast_level) {
            // `as` saturates for floats out of range.
            *t = (*t as f64 * self.stretch) as u64;
        }
    }
}

/// The placement of a tiered tree: levels down to the last fast level on the fast
/// path, deeper ones on the slow path; `ByLevel` for a tree without tiering. The
/// database's default placement.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tiered;

impl PlacementPolicy for Tiered {
    fn path_for_level(&self, version: &Version, opts: &Options, level: usize) -> u32 {
        match (&opts.tiering, TierLayout::of(opts)) {
            (Some(t), Some(layout)) if level <= layout.last_fast_level => t.fast_path,
            (Some(t), Some(_)) => t.slow_path,
            _ => ByLevel.path_for_level(version, opts, level),
        }
    }
}

#[cfg(test)]
mod tests;
