//! Merges that reads ask for (the paper's §3.4, Algorithm 2): a virtual table read
//! through many parents costs a read one probe per slice, so a read that meets one of
//! at least `vsmt` slices asks for it to be merged (`compaction::requests`), and the
//! policy rewrites it with its siblings into real tables of the same level, in the
//! background.
//!
//! # The merge set
//! The requested table, then its neighbours in the level, one at a time on either
//! side, for as long as the neighbour is a virtual table no job holds that shares a
//! parent with the set so far (the siblings one virtual compaction made, and tables
//! that inherited its parents), and the set's bytes stay within 25 target files
//! (RocksDB's default `max_compaction_bytes`). The set is contiguous, so its output
//! replaces it in the level without overlapping anything left behind; reading each
//! shared parent once for all of them is what makes the merge cheaper than merging
//! each table alone.

use super::rewrite_in_place;
use crate::compaction::picker::Busy;
use crate::compaction::placement::PlacementPolicy;
use crate::compaction::plan::{Plan, Reason};
use crate::compaction::requests::Requests;
use crate::options::Options;
use crate::version::{FileKind, FileMetaData, Version};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The most bytes one merge takes: 25 target files (RocksDB's `max_compaction_bytes`
/// default).
fn max_merge_bytes(opts: &Options) -> u64 {
    opts.target_file_size_base.saturating_mul(25)
}

/// The merge of the first requested table that is still in `version`, not busy, and
/// whose merge set's output range conflicts with no running job; `None` if there is
/// none.
pub(super) fn pick(
    version: &Version,
    opts: &Options,
    placement: &dyn PlacementPolicy,
    busy: &Busy,
    requests: &Requests,
) -> Option<Plan> {
    requests.iter().find_map(|(level, number)| {
        let files = version.files(level);
        // A table compacted since the sample is gone; its request with it.
        let i = files.iter().position(|f| f.number == number)?;
        let set = merge_set(files, i, busy, max_merge_bytes(opts))?;
        rewrite_in_place(
            version,
            opts,
            placement,
            level,
            set,
            busy,
            Reason::ReadRequested,
        )
    })
}

/// The parents a virtual table reads (none for a real file).
fn parents(f: &FileMetaData) -> impl Iterator<Item = u64> + '_ {
    f.slices().iter().map(|s| s.parent)
}

/// The merge set of `files[i]` (module docs), in key order; `None` if `files[i]` is
/// not a virtual table or a job holds it. The requested table is always taken, even
/// alone over `limit`.
fn merge_set(
    files: &[Arc<FileMetaData>],
    i: usize,
    busy: &Busy,
    limit: u64,
) -> Option<Vec<Arc<FileMetaData>>> {
    let first = files.get(i)?;
    if first.kind == FileKind::Real || busy.is_busy(first) {
        return None;
    }
    let mut shared: BTreeSet<u64> = parents(first).collect();
    let mut bytes = first.size;
    let (mut lo, mut hi) = (i, i);
    // Whether `f` joins the set: virtual, free, sharing a parent, within the limit.
    let mut joins = |f: &FileMetaData| {
        let fits = bytes.saturating_add(f.size) <= limit;
        let kin = parents(f).any(|p| shared.contains(&p));
        if f.kind == FileKind::Real || busy.is_busy(f) || !fits || !kin {
            return false;
        }
        shared.extend(parents(f));
        bytes = bytes.saturating_add(f.size);
        true
    };
    loop {
        let left = lo
            .checked_sub(1)
            .and_then(|j| files.get(j))
            .is_some_and(|f| joins(f));
        if left {
            lo -= 1;
        }
        let right = files.get(hi + 1).is_some_and(|f| joins(f));
        if right {
            hi += 1;
        }
        if !left && !right {
            break;
        }
    }
    files.get(lo..=hi).map(<[_]>::to_vec)
}
