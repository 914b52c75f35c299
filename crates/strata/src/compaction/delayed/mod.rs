//! Delayed compaction (Pei et al., "dCompaction: Speeding up Compaction of the
//! LSM-Tree via Delayed Compaction", 2017) as a [`CompactionPolicy`].
//!
//! Role: [`Delayed`] asks [`Leveled`] what to compact, and when the answer is a rewrite
//! that would read fewer than `vct` real tables (each virtual input counting its
//! parents once), turns it into an `Action::Virtualize` plan (the paper's
//! Algorithm 1): the executor replaces the inputs by virtual tables over them
//! (ARCHITECTURE §7.1.1) and writes no data. A later compaction that meets those
//! virtual tables counts their parents; once the count reaches `vct` it rewrites for
//! real, reading each parent once, so the bytes skip the intermediate rewrites. Every
//! virtual table so has at most `vct - 1` slices.
//!
//! A plan is left as it is when:
//! - it is not a rewrite (trivial moves and drops cost no I/O anyway);
//! - a real table it would make a parent lies outside the output stream's data path
//!   (a parent stays where it is; ARCHITECTURE §15.6, the guard trivial moves have);
//! - it is bottommost and its inputs hold point or range deletions: a real bottommost
//!   compaction drops them, a virtual one would keep them for ever;
//! - it is manual ([`Db::compact_range`](crate::Db::compact_range) promises rewritten
//!   data). A manual compaction also rewrites the virtual tables of the deepest level
//!   in place ([`CompactionPolicy::pick_manual_in_place`]), so none is left in its
//!   range.
//!
//! With [`Options::delayed_compaction`] off, [`Delayed`] plans exactly what
//! [`Leveled`] does, except that a manual compaction still rewrites virtual tables an
//! earlier open left in the deepest level.
//!
//! Planned, not built: merges requested by reads of tables with many slices
//! (the paper's VSMT) and a bound on the bytes parents keep alive (Pebble's
//! garbage-driven rewrites).

use super::covered::Coverage;
use super::partitioner;
use super::picker::Busy;
use super::placement::PlacementPolicy;
use super::plan::{Action, Input, OutputStream, Plan, Reason, SingleStream};
use super::policy::{CompactionPolicy, Leveled};
use crate::options::{DelayedCompaction, Options};
use crate::version::{FileKind, FileMetaData, Version};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The delayed-compaction policy. See the module docs.
#[derive(Debug, Default, Clone, Copy)]
pub struct Delayed;

impl CompactionPolicy for Delayed {
    fn pick(
        &self,
        version: &Version,
        opts: &Options,
        placement: &dyn PlacementPolicy,
        busy: &Busy,
        coverage: &Coverage<'_>,
    ) -> Option<Plan> {
        let plan = Leveled.pick(version, opts, placement, busy, coverage)?;
        Some(match opts.delayed_compaction {
            Some(d) => defer(plan, version, d),
            None => plan,
        })
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
        Leveled.pick_manual(version, opts, placement, level, begin, end, busy, coverage)
    }

    fn pick_manual_in_place(
        &self,
        version: &Version,
        opts: &Options,
        placement: &dyn PlacementPolicy,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
        busy: &Busy,
    ) -> Option<Plan> {
        rewrite_in_place(version, opts, placement, level, begin, end, busy)
    }

    fn pending_compaction_bytes(&self, version: &Version, opts: &Options) -> u64 {
        Leveled.pending_compaction_bytes(version, opts)
    }

    fn scores(&self, version: &Version, opts: &Options) -> Vec<f64> {
        Leveled.scores(version, opts)
    }
}

/// The real tables `plan` would read, by number: its real inputs, and the parents of
/// its virtual inputs (each once).
fn real_tables<'a>(plan: &'a Plan, version: &'a Version) -> BTreeMap<u64, &'a FileMetaData> {
    let mut tables = BTreeMap::new();
    for (_, f) in plan.input_files() {
        match &f.kind {
            FileKind::Real => {
                tables.insert(f.number, &**f);
            }
            FileKind::Virtual { slices } => {
                for s in slices {
                    if let Some(p) = version.parent(s.parent) {
                        tables.insert(p.number, &**p);
                    }
                }
            }
        }
    }
    tables
}

/// `plan` as a virtualize plan if it is an automatic rewrite that reads fewer than
/// `d.vct` real tables and may be deferred (see the module docs); else `plan`.
pub(crate) fn defer(plan: Plan, version: &Version, d: DelayedCompaction) -> Plan {
    let [stream] = plan.outputs.as_slice() else {
        return plan;
    };
    if plan.action != Action::Rewrite || plan.reason == Reason::Manual || plan.reason.is_flush() {
        return plan;
    }
    let tables = real_tables(&plan, version);
    let elsewhere = tables.values().any(|t| t.path_id != stream.path_id);
    let deletes = tables
        .values()
        .any(|t| t.num_deletions > 0 || t.num_range_deletions > 0);
    if tables.len() >= d.vct || elsewhere || (plan.bottommost && deletes) {
        return plan;
    }
    Plan {
        action: Action::Virtualize,
        ..plan
    }
}

/// A manual rewrite, in place, of the first virtual table of `level` in `[begin, end]`
/// that no job holds, or `None` if there is none (or it conflicts with `busy`).
fn rewrite_in_place(
    version: &Version,
    opts: &Options,
    placement: &dyn PlacementPolicy,
    level: usize,
    begin: Option<&[u8]>,
    end: Option<&[u8]>,
    busy: &Busy,
) -> Option<Plan> {
    let f = version
        .overlapping_files(level, begin, end)
        .into_iter()
        .find(|f| f.kind != FileKind::Real && !busy.is_busy(f))?;
    let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
    if busy.output_conflict(level, lo, hi) {
        return None;
    }
    let below = version.overlapping_files(level + 1, Some(lo), Some(hi));
    let bottommost = (level + 1..version.num_levels())
        .all(|l| version.overlapping_files(l, Some(lo), Some(hi)).is_empty());
    let stream = OutputStream::for_level(
        opts,
        level,
        placement.path_for_level(version, opts, level),
        partitioner::for_compaction(opts, below),
    );
    Some(Plan {
        action: Action::Rewrite,
        inputs: vec![Input::Files {
            level,
            files: vec![Arc::clone(&f)],
        }],
        outputs: vec![stream],
        router: Arc::new(SingleStream),
        bottommost,
        log_number: None,
        reason: Reason::Manual,
    })
}

#[cfg(test)]
mod tests;
