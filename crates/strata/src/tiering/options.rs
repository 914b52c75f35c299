//! The value of [`Options::tiering`]: which data paths are the tiers, the fast tier's
//! budget, the mode, and HotRAP's limit and ablation switches.

use super::TierLayout;
use crate::error::{Error, Result};
use crate::options::Options;
use std::time::Duration;

/// How a tiered tree uses its fast tier. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TieringMode {
    /// Levels on tiers by size only, the last fast level stretched to fill the fast
    /// budget: the HotRAP paper's RocksDB-fat.
    Fat,
    /// HotRAP: `Fat`'s tiers and sizing, plus RALT (the on-disk hotness tracker,
    /// `ralt/`, in a subdirectory `ralt-<family id>` of the fast path) fed by every
    /// get without a snapshot that a table answers, hot-aware picking at the last fast
    /// level, and retention: a compaction from the last fast level into the first slow
    /// one writes the hot keys of its fast inputs back to the last fast level; gets
    /// answered from the slow tier fill an in-memory promotion cache, probed after the
    /// last fast level, whose hot copies such compactions write to the last fast level
    /// too, and a full cache's hot copies are written to L0 by the flush thread
    /// (promotion by flush). Scan promotion is planned.
    HotRap,
    /// Time-aware tiering, the rule of RocksDB's `preclude_last_level_data_seconds`
    /// applied at the tier boundary: `Fat`'s tiers and sizing, and a compaction from
    /// the last fast level into the first slow one keeps in the last fast level the
    /// keys whose newest record was written within `window` (at sequence-number
    /// granularity, `time_aware.rs`). Nothing is promoted: a record that turns hot
    /// after it reached the slow tier stays there.
    TimeAware {
        /// How long a record stays in the fast tier after it is written.
        window: Duration,
    },
}

/// HotRAP's hot-set limit: how many bytes of records RALT may call hot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HotSetLimit {
    /// Auto-tuned (§3.7, Algorithm 1): starts at half the fast budget and follows the
    /// records that stay hot, between 5% and 70% of the budget.
    Auto,
    /// A fixed number of bytes (auto-tuning off), at most the fast budget.
    Fixed(u64),
}

/// Two storage tiers for one tree: the value of [`Options::tiering`].
///
/// Build with [`Tiering::fat`], [`Tiering::hotrap`] or [`Tiering::time_aware`] and
/// the `with_` methods. The switches `retain`, `promote_by_compaction`,
/// `promote_by_flush` and `hotness_check` exist for the paper's ablations (§4.5),
/// `hot_aware_pick` for the same kind of cut of §3.5; a
/// mode other than [`TieringMode::HotRap`] must leave them, and `hot_set_limit`, at
/// their defaults.
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
    /// RALT's hot-set limit.
    ///
    /// Default: [`HotSetLimit::Auto`]. Range: `Fixed(n)` with `0 < n <= ` the budget.
    pub hot_set_limit: HotSetLimit,
    /// Retention: compactions out of the fast tier keep RALT's hot keys there. Off,
    /// only promoted copies are written back (the paper's "no-retain").
    ///
    /// Default: true.
    pub retain: bool,
    /// Promotion by compaction: hot promotion-cache copies join compactions out of the
    /// fast tier. Off, those compactions still take the copies (the epoch protocol
    /// needs them out) and drop them (the paper's "no-by-compaction").
    ///
    /// Default: true.
    pub promote_by_compaction: bool,
    /// Promotion by flush: a full promotion cache's hot copies are written to L0. Off,
    /// a full cache's copies are dropped.
    ///
    /// Default: true.
    pub promote_by_flush: bool,
    /// Promotion promotes only hot copies (hit in the cache, or hot in RALT). Off,
    /// every copy is promoted (the paper's "no-hotness-check"); retention still asks
    /// RALT.
    ///
    /// Default: true.
    pub hotness_check: bool,
    /// Hot-aware picking (§3.5): a size-triggered compaction out of the last fast
    /// level takes the file with the least hot share for its overlap. Off, the
    /// policy's own choice stands.
    ///
    /// Default: true.
    pub hot_aware_pick: bool,
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
            hot_set_limit: HotSetLimit::Auto,
            retain: true,
            promote_by_compaction: true,
            promote_by_flush: true,
            hotness_check: true,
            hot_aware_pick: true,
        }
    }

    /// [`Tiering::fat`] in [`TieringMode::HotRap`].
    pub fn hotrap() -> Tiering {
        Tiering {
            mode: TieringMode::HotRap,
            ..Tiering::fat()
        }
    }

    /// [`Tiering::fat`] in [`TieringMode::TimeAware`] with this window.
    pub fn time_aware(window: Duration) -> Tiering {
        Tiering {
            mode: TieringMode::TimeAware { window },
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

    /// These tiers with this hot-set limit.
    pub fn with_hot_set_limit(self, hot_set_limit: HotSetLimit) -> Tiering {
        Tiering {
            hot_set_limit,
            ..self
        }
    }

    /// These tiers with retention on or off.
    pub fn with_retain(self, retain: bool) -> Tiering {
        Tiering { retain, ..self }
    }

    /// These tiers with promotion by compaction on or off.
    pub fn with_promote_by_compaction(self, promote_by_compaction: bool) -> Tiering {
        Tiering {
            promote_by_compaction,
            ..self
        }
    }

    /// These tiers with promotion by flush on or off.
    pub fn with_promote_by_flush(self, promote_by_flush: bool) -> Tiering {
        Tiering {
            promote_by_flush,
            ..self
        }
    }

    /// These tiers with promotion's hotness check on or off.
    pub fn with_hotness_check(self, hotness_check: bool) -> Tiering {
        Tiering {
            hotness_check,
            ..self
        }
    }

    /// These tiers with hot-aware picking on or off.
    pub fn with_hot_aware_pick(self, hot_aware_pick: bool) -> Tiering {
        Tiering {
            hot_aware_pick,
            ..self
        }
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

    /// The HotRAP settings that differ from [`Tiering::hotrap`]'s, by name.
    pub(crate) fn hotrap_departures(&self) -> Vec<&'static str> {
        let d = Tiering::fat();
        [
            ("hot_set_limit", self.hot_set_limit != d.hot_set_limit),
            ("retain", self.retain != d.retain),
            (
                "promote_by_compaction",
                self.promote_by_compaction != d.promote_by_compaction,
            ),
            (
                "promote_by_flush",
                self.promote_by_flush != d.promote_by_flush,
            ),
            ("hotness_check", self.hotness_check != d.hotness_check),
            ("hot_aware_pick", self.hot_aware_pick != d.hot_aware_pick),
        ]
        .into_iter()
        .filter_map(|(name, differs)| differs.then_some(name))
        .collect()
    }
}

impl Default for Tiering {
    fn default() -> Self {
        Tiering::fat()
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
    if t.mode != TieringMode::HotRap {
        if let Some(field) = t.hotrap_departures().first() {
            return bad(field, &"set", "applies to mode hotrap only");
        }
    }
    if let HotSetLimit::Fixed(n) = t.hot_set_limit {
        let budget = t.budget(opts);
        if n == 0 || n > budget {
            return bad(
                "hot_set_limit",
                &n,
                &format!("must be in 1..={budget} (the fast budget)"),
            );
        }
    }
    if let TieringMode::TimeAware { window } = t.mode {
        if window.as_millis() == 0
            || window.as_millis() > u128::from(u64::MAX)
            || window.subsec_nanos() % 1_000_000 != 0
        {
            return bad(
                "window",
                &format!("{window:?}"),
                "must be whole milliseconds, at least 1, within u64",
            );
        }
    }
    Ok(())
}
