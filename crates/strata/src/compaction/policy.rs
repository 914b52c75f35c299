//! The compaction-policy seam: what a database asks when it looks for work.
//!
//! Role: the scheduler (`db::background`), the write path's stall accounting
//! (`db::jobs`, `db::open`) and `Db::stats` reach compaction policy only through a
//! [`CompactionPolicy`] object, chosen once per open (the default [`Leveled`], or one
//! given to `DbBuilder::compaction_policy`). A technique that decides differently what
//! to compact (delayed compaction's virtualize plans, say) is a new type implementing
//! this trait in its own module; the scheduler and the executor do not change.
//!
//! Contract of every method: a pure function of its arguments. No I/O, no locks, no
//! interior state that changes what later calls return; the scheduler calls `pick`
//! under the database's `state` lock, and may call it again at any time on the same
//! version (for example `wait_for_compactions` asks whether work remains). Every plan
//! returned must satisfy the invariants of `compaction::picker` (inputs not busy,
//! output ranges not in conflict, whole overlapping runs), because the executor and
//! the version set rely on them.

use super::covered::{self, Coverage, Scope};
use super::picker::{self, Busy};
use super::placement::PlacementPolicy;
use super::plan::Plan;
use super::requests::Requests;
use crate::options::Options;
use crate::version::{FileMetaData, Version};
use std::fmt;

/// Decides what to compact. See the module docs for the contract.
///
/// **Experimental**: the seam research techniques plug into; its signature may change
/// as they arrive.
pub trait CompactionPolicy: Send + Sync + fmt::Debug {
    /// The next automatic compaction of `version`, or `None` if nothing needs doing or
    /// everything that does conflicts with `busy`. Each output stream's data path is
    /// `placement`'s answer for its level (a trivial move only within one path).
    /// `coverage` (live snapshots, the files' range tombstones) is what
    /// [`covered::pick`] needs to find files no reader can see; `requests` are the
    /// tables of `version` that reads asked to have compacted
    /// ([`CompactionPolicy::compact_on_read`]).
    fn pick(
        &self,
        version: &Version,
        opts: &Options,
        placement: &dyn PlacementPolicy,
        busy: &Busy,
        coverage: &Coverage<'_>,
        requests: &Requests,
    ) -> Option<Plan>;

    /// The manual compaction (`Db::compact_range`) of the files of `level`
    /// overlapping the user-key range `[begin, end]` (`None` = unbounded), or `None`
    /// if there is nothing to do or it conflicts with `busy` (the caller retries while
    /// a job of the family runs; with none running, it ends the level's step).
    /// `coverage` as for [`CompactionPolicy::pick`].
    #[expect(
        clippy::too_many_arguments,
        reason = "each is one independent input of the pure function"
    )]
    fn pick_manual(
        &self,
        version: &Version,
        opts: &Options,
        placement: &dyn PlacementPolicy,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
        busy: &Busy,
        coverage: &Coverage<'_>,
    ) -> Option<Plan>;

    /// The last step of a manual compaction (`Db::compact_range`): a rewrite, into
    /// `level` itself, of tables of `level` (the deepest holding data in the range)
    /// that the policy wants rewritten, or `None` if there is none (or it conflicts
    /// with `busy`; the caller retries while files in range are busy). Only tables
    /// numbered below `created_before` (those that existed when the step began) may be
    /// picked, so the step's own outputs are never rewritten again and it ends. The
    /// default rewrites the tables in range when the family has a compaction filter
    /// (RocksDB's `bottommost_level_compaction` default, `kIfHaveCompactionFilter`):
    /// without one the deepest level's tables are already what a manual compaction
    /// promises, with one they have not yet been through the filter.
    #[expect(
        clippy::too_many_arguments,
        reason = "each is one independent input of the pure function"
    )]
    fn pick_manual_in_place(
        &self,
        version: &Version,
        opts: &Options,
        placement: &dyn PlacementPolicy,
        level: usize,
        (begin, end): (Option<&[u8]>, Option<&[u8]>),
        busy: &Busy,
        created_before: u64,
    ) -> Option<Plan> {
        opts.compaction_filter_factory.as_ref()?;
        picker::rewrite_older_in_place(
            version,
            opts,
            placement,
            level,
            (begin, end),
            busy,
            created_before,
        )
    }

    /// Whether a read that meets `table` should ask for its compaction
    /// (`compaction::requests`). Asked on the read path, of virtual tables only (a
    /// tree without them never calls it), so it must be cheap: a look at the
    /// metadata. The default never asks.
    fn compact_on_read(&self, _opts: &Options, _table: &FileMetaData) -> bool {
        false
    }

    /// Bytes compaction must still rewrite (the write path slows and stops writers
    /// on it, against `soft_`/`hard_pending_compaction_bytes_limit`).
    fn pending_compaction_bytes(&self, version: &Version, opts: &Options) -> u64;

    /// One score per level (>= 1 means the level wants compaction), for statistics.
    fn scores(&self, version: &Version, opts: &Options) -> Vec<f64>;
}

/// RocksDB's leveled compaction with static level targets (`compaction::picker`).
/// The default policy.
///
/// Before any leveled pick it drops whole files no reader can see
/// ([`covered::pick`]): automatic picks anywhere in the tree, manual ones in the
/// range being compacted from its level down, so the files a rewrite would read
/// only to discard are gone before it is planned.
#[derive(Debug, Default, Clone, Copy)]
pub struct Leveled;

impl CompactionPolicy for Leveled {
    fn pick(
        &self,
        version: &Version,
        opts: &Options,
        placement: &dyn PlacementPolicy,
        busy: &Busy,
        coverage: &Coverage<'_>,
        requests: &Requests,
    ) -> Option<Plan> {
        covered::pick(version, busy, coverage, Scope::default())
            .or_else(|| picker::pick(version, opts, placement, busy))
            .or_else(|| picker::pick_aged(version, opts, placement, busy, requests))
    }

    fn pick_manual(
        &self,
        version: &Version,
        opts: &Options,
        placement: &dyn PlacementPolicy,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
        busy: &Busy,
        coverage: &Coverage<'_>,
    ) -> Option<Plan> {
        let scope = Scope {
            from_level: level,
            begin,
            end,
        };
        covered::pick(version, busy, coverage, scope)
            .or_else(|| picker::pick_manual(version, opts, placement, level, begin, end, busy))
    }

    fn pending_compaction_bytes(&self, version: &Version, opts: &Options) -> u64 {
        picker::pending_compaction_bytes(version, opts)
    }

    fn scores(&self, version: &Version, opts: &Options) -> Vec<f64> {
        picker::scores(version, opts)
    }
}

#[cfg(test)]
pub(crate) mod tests;
