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
//! Before any of that it plans, in this order (after `covered::pick`'s drops):
//! - the merges reads asked for (`merge`, the paper's VSMT, Algorithm 2): a read that
//!   meets a virtual table of at least `vsmt` slices asks for it
//!   ([`CompactionPolicy::compact_on_read`]), and the table is rewritten with its
//!   siblings into real tables of its level;
//! - a rewrite for space (`garbage`) when the bytes parents keep alive without a
//!   slice exceed `max_garbage_ratio` of the live table bytes. The leveled picker also
//!   weighs virtual tables by their compensated size (`garbage::Compensation`).
//!
//! With [`Options::delayed_compaction`] off, [`Delayed`] plans exactly what
//! [`Leveled`] does, except that virtual tables an earlier open left are still
//! bounded (at the default ratio) and rewritten in place by manual compactions.

mod garbage;
mod merge;

use super::covered::{self, Coverage, Scope};
use super::picker::{self, rewrite_in_place, Busy};
use super::placement::PlacementPolicy;
use super::plan::{Action, Plan, Reason};
use super::policy::{CompactionPolicy, Leveled};
use super::requests::Requests;
use crate::options::{DelayedCompaction, Options};
use crate::version::{FileKind, FileMetaData, Version};
use std::collections::BTreeMap;

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
        requests: &Requests,
    ) -> Option<Plan> {
        let d = opts.delayed_compaction;
        let ratio = d.unwrap_or_default().max_garbage_ratio;
        if let Some(plan) = covered::pick(version, busy, coverage, Scope::default())
            .or_else(|| merge::pick(version, opts, placement, busy, requests))
            .or_else(|| garbage::pick(version, opts, placement, busy, ratio))
        {
            return Some(plan);
        }
        let plan = match version.parents().next() {
            None => picker::pick(version, opts, placement, busy),
            Some(_) => {
                let sizes = garbage::Compensation::of(version);
                picker::pick_sized(version, opts, placement, busy, &|f| sizes.size(f))
            }
        };
        // A table due by age is rewritten for real, never deferred: the point is that
        // its data passes through a rewrite.
        let Some(plan) = plan else {
            return picker::pick_aged(version, opts, placement, busy, requests);
        };
        Some(match d {
            Some(d) => defer(plan, version, d),
            None => plan,
        })
    }

    /// A read asks for the merge of a virtual table of at least `vsmt` slices, while
    /// the option is on.
    fn compact_on_read(&self, opts: &Options, table: &FileMetaData) -> bool {
        let slices = table.slices().len();
        opts.delayed_compaction.is_some_and(|d| slices >= d.vsmt)
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
        (begin, end): (Option<&[u8]>, Option<&[u8]>),
        busy: &Busy,
        created_before: u64,
    ) -> Option<Plan> {
        let virtual_table = version
            .overlapping_files(level, begin, end)
            .into_iter()
            .find(|f| f.kind != FileKind::Real && !busy.is_busy(f));
        match virtual_table {
            Some(f) => rewrite_in_place(
                version,
                opts,
                placement,
                level,
                vec![f],
                busy,
                Reason::Manual,
            ),
            // Then what any family's manual compaction rewrites in place.
            None => Leveled.pick_manual_in_place(
                version,
                opts,
                placement,
                level,
                (begin, end),
                busy,
                created_before,
            ),
        }
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

#[cfg(test)]
mod tests;
