//! The space bound: bytes that parents keep on disk and no read can reach.
//!
//! A parent stays on disk while any slice names it, so a parent that only a sliver of
//! one virtual table still reads pins all of its bytes (Pebble's virtual sstables ran
//! into this: cockroachdb/pebble issues 2323 and 4574). The *garbage* of a parent is
//! its size less the bytes its live slices reference, exact from the slices' recorded
//! bytes (`version::virtual_table`). Two rules bound it:
//! - **The limit** ([`pick`]). When the tree's garbage exceeds
//!   `max_garbage_ratio` of its live table bytes, the policy rewrites, ahead of any
//!   size-triggered work, a virtual table holding the least-referenced parent (the
//!   parent with the smallest referenced fraction, the cheapest to free for what it
//!   frees; Pebble's virtual-table rewrite compaction, PR 5322). Each such rewrite
//!   turns one table's slices into real data; once the last slice of a parent goes,
//!   the parent's whole size is freed.
//! - **Compensated picking size** ([`Compensation`]). Between those rewrites, the
//!   leveled picker weighs a virtual table by its referenced bytes plus its share of
//!   its parents' garbage (Pebble's compensated size, PR 3370), so the tables that
//!   keep garbage alive are compacted sooner.
//!
//! Together with the limit of `vct - 1` slices per table, this bounds both a read's
//! cost and the space virtual tables hold.

use super::rewrite_in_place;
use crate::compaction::picker::Busy;
use crate::compaction::placement::PlacementPolicy;
use crate::compaction::plan::{Plan, Reason};
use crate::options::Options;
use crate::version::virtual_table::{garbage, referenced_bytes};
use crate::version::{FileKind, FileMetaData, Version};
use std::collections::{BTreeMap, HashMap};

/// Each parent's garbage and referenced bytes, by parent number.
fn by_parent(version: &Version) -> BTreeMap<u64, (u64, u64)> {
    let referenced = referenced_bytes(version);
    version
        .parents()
        .map(|p| {
            let r = referenced.get(&p.number).copied().unwrap_or(0);
            (p.number, (garbage(p, r), r))
        })
        .collect()
}

/// A rewrite in place of a virtual table holding the least-referenced parent, if the
/// garbage of `version` exceeds `ratio` of its live table bytes; else `None` (also if
/// every table holding a parent with garbage is busy or conflicts with a running job).
pub(super) fn pick(
    version: &Version,
    opts: &Options,
    placement: &dyn PlacementPolicy,
    busy: &Busy,
    ratio: f64,
) -> Option<Plan> {
    version.parents().next()?;
    let parents = by_parent(version);
    let total: u64 = parents.values().map(|&(g, _)| g).sum();
    let live = version
        .physical_tables()
        .fold(0u64, |acc, t| acc.saturating_add(t.size));
    if total as f64 <= ratio * live as f64 {
        return None;
    }
    // Parents with garbage, least referenced fraction first (ties: lower number).
    let mut order: Vec<(f64, u64)> = version
        .parents()
        .filter_map(|p| {
            let &(g, r) = parents.get(&p.number)?;
            (g > 0).then(|| (r as f64 / p.size.max(1) as f64, p.number))
        })
        .collect();
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    order.into_iter().find_map(|(_, parent)| {
        (1..version.num_levels()).find_map(|level| {
            let holder = version
                .files(level)
                .iter()
                .filter(|f| !busy.is_busy(f) && names(f, parent))
                .min_by_key(|f| f.size)?;
            let files = vec![std::sync::Arc::clone(holder)];
            rewrite_in_place(
                version,
                opts,
                placement,
                level,
                files,
                busy,
                Reason::Garbage,
            )
        })
    })
}

/// True iff `f` is a virtual table with a slice of `parent`.
fn names(f: &FileMetaData, parent: u64) -> bool {
    f.slices().iter().any(|s| s.parent == parent)
}

/// The picking size of each virtual table of a version: its referenced bytes plus,
/// for each slice, the slice's share of its parent's garbage (in proportion to the
/// bytes the slice references). See the module docs.
#[derive(Debug, Default)]
pub(super) struct Compensation {
    /// By virtual table number.
    sizes: HashMap<u64, u64>,
}

impl Compensation {
    /// The compensated sizes of `version`'s virtual tables.
    pub fn of(version: &Version) -> Compensation {
        let mut sizes = HashMap::new();
        if version.parents().next().is_none() {
            return Compensation { sizes };
        }
        let parents = by_parent(version);
        for f in version.live_files() {
            let FileKind::Virtual { slices } = &f.kind else {
                continue;
            };
            let share: u64 = slices
                .iter()
                .map(|s| match parents.get(&s.parent) {
                    Some(&(g, r)) if r > 0 => {
                        let scaled = u128::from(g) * u128::from(s.bytes) / u128::from(r);
                        u64::try_from(scaled).unwrap_or(u64::MAX)
                    }
                    _ => 0,
                })
                .fold(0u64, u64::saturating_add);
            sizes.insert(f.number, f.size.saturating_add(share));
        }
        Compensation { sizes }
    }

    /// The picking size of `f`: compensated for a virtual table, its own for a real
    /// file.
    pub fn size(&self, f: &FileMetaData) -> u64 {
        self.sizes.get(&f.number).copied().unwrap_or(f.size)
    }
}
