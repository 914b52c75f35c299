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
//! `compaction::picker::level_targets`, which apply [`TierLayout::stretch_targets`]
//! (scores, pending-compaction bytes and placement all read those targets). Nothing
//! else in the engine knows about tiers: a compaction from the last fast level into the
//! first slow one is an ordinary plan whose output stream is on the slow path.
//!
//! Modes: [`TieringMode::Fat`] is the paper's RocksDB-fat baseline: tiers, sizing and
//! placement, nothing else. [`TieringMode::HotRap`] adds RALT, hot-aware picking,
//! retention, the promotion cache and promotion by compaction and by flush through the
//! tree-hooks seam (`hooks.rs`, `router.rs`, `promotion_cache.rs`, `db::tree_hooks`).
//! Scan promotion and time-aware tiering are planned (docs/ARCHITECTURE.md §18), not
//! built.

mod hooks;
mod promotion_cache;
pub mod ralt;
mod router;

pub(crate) use hooks::TieringHooks;

use crate::compaction::picker::series_targets;
use crate::compaction::{ByLevel, PlacementPolicy};
use crate::error::{Error, Result};
use crate::options::Options;
use crate::version::Version;

/// How a tiered tree uses its fast tier. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TieringMode {
    /// Levels on tiers by size only, the last fast level stretched to fill the fast
    /// budget: the HotRAP paper's RocksDB-fat.
    Fat,
    /// HotRAP, in part: `Fat`'s tiers and sizing, plus RALT (the on-disk hotness
    /// tracker, `ralt/`, in a subdirectory `ralt-<family id>` of the fast path) fed by
    /// every get without a snapshot that a table answers, hot-aware picking at the
    /// last fast level, and retention: a compaction from the last fast level into the
    /// first slow one writes the hot keys of its fast inputs back to the last fast
    /// level; gets answered from the slow tier fill an in-memory promotion cache,
    /// probed after the last fast level, whose hot copies such compactions write to
    /// the last fast level too, and a full cache's hot copies are written to L0 by the
    /// flush thread (promotion by flush). Scan promotion is planned.
    HotRap,
}

/// Two storage tiers for one tree: the value of [`Options::tiering`].
///
/// Build with [`Tiering::fat`] and the `with_` methods.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Tiering {
    /// The fast tier's data path: an index into `Options::db_paths`. The database
    /// directory (WAL, MANIFEST) should be on the same device.
    ///
    /// Default: 0.
    pub fast_path: u32,
    /// The slow tier's data path: an index into `Options::db_paths`.
    ///
    /// Default: 1.
    pub slow_path: u32,
    /// The fast tier's budget in bytes of level targets (L0 counted as L1's target);
    /// 0 takes the fast path's `target_size`.
    ///
    /// Default: 0. Range: the budget must hold L0 and L1 (`2 ×
    /// max_bytes_for_level_base`).
    pub fd_size: u64,
    /// What the tree does with its fast tier.
    ///
    /// Default: [`TieringMode::Fat`].
    pub mode: TieringMode,
}

impl Tiering {
    /// Fast tier on data path 0, slow tier on data path 1, the budget the fast path's
    /// `target_size`, [`TieringMode::Fat`].
    pub fn fat() -> Tiering {
        Tiering {
            fast_path: 0,
            slow_path: 1,
            fd_size: 0,
            mode: TieringMode::Fat,
        }
    }

    /// [`Tiering::fat`] in [`TieringMode::HotRap`].
    pub fn hotrap() -> Tiering {
        Tiering {
            mode: TieringMode::HotRap,
            ..Tiering::fat()
        }
    }

    /// These tiers with the fast tier on data path `fast_path`.
    pub fn with_fast_path(self, fast_path: u32) -> Tiering {
        Tiering { fast_path, ..self }
    }

    /// These tiers with the slow tier on data path `slow_path`.
    pub fn with_slow_path(self, slow_path: u32) -> Tiering {
        Tiering { slow_path, ..self }
    }

    /// These tiers with a fast budget of `fd_size` bytes (0: the fast path's target).
    pub fn with_fd_size(self, fd_size: u64) -> Tiering {
        Tiering { fd_size, ..self }
    }

    /// The fast budget in bytes under `opts`: `fd_size`, or the fast path's
    /// `target_size` when it is 0 (0 if there is no such path).
    pub fn budget(&self, opts: &Options) -> u64 {
        match self.fd_size {
            0 => usize::try_from(self.fast_path)
                .ok()
                .and_then(|i| opts.db_paths.get(i))
                .map_or(0, |p| p.target_size),
            n => n,
        }
    }
}

impl Default for Tiering {
    fn default() -> Self {
        Tiering::fat()
    }
}

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

/// The `tiering` part of [`Options::validate`].
pub(crate) fn validate(t: &Tiering, opts: &Options) -> Result<()> {
    let paths = opts.db_paths.len();
    let bad = |field: &str, value: &dyn std::fmt::Display, rule: &str| {
        Err(Error::InvalidArgument(format!(
            "tiering.{field}=`{value}` {rule}"
        )))
    };
    for (field, path) in [("fast_path", t.fast_path), ("slow_path", t.slow_path)] {
        if usize::try_from(path).map_or(true, |p| p >= paths) {
            return bad(
                field,
                &path,
                &format!("must name one of the {paths} db_paths (tiering needs two)"),
            );
        }
    }
    if t.fast_path == t.slow_path {
        return bad("slow_path", &t.slow_path, "must differ from fast_path");
    }
    if TierLayout::of(opts).is_none() {
        let base = opts.max_bytes_for_level_base;
        return bad(
            "fd_size",
            &t.budget(opts),
            &format!(
                "must hold L0 and L1 (>= 2 × max_bytes_for_level_base = {})",
                base.saturating_mul(2)
            ),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests;
