//! The executor: the one mechanism that runs every [`Plan`] (flush, WAL-replay flush,
//! compaction, trivial move) and turns it into a [`VersionEdit`].
//!
//! # What it does
//! - `TrivialMove`: an edit that deletes each input file from its level and adds it,
//!   unchanged, to the output stream's level. No I/O.
//! - `Drop`: an edit that deletes each input file. No I/O, no output.
//! - `Virtualize`: an edit that replaces the inputs by virtual tables over them, cut
//!   where the output stream's partitioning cuts (`compaction::virtualize`). Reads
//!   only the parents' index blocks; writes no file.
//! - `Rewrite`: merge the input runs (newest first) into one stream of internal keys
//!   and feed it to a [`Rewrite`] (`compaction::rewrite`: version GC, merge folding,
//!   routing, output cutting, directory fsyncs), which returns the edit that replaces
//!   the inputs by the outputs. A virtual input is read slice by slice: each slice's
//!   parent, clipped to the slice's user-key range (its range tombstones too), found in
//!   the job's version. A plan with a `range` reads every input clipped to it, its
//!   tombstones too, and counts as read the bytes of each input the range covers
//!   (measured on the index, scaled onto the file's size).
//! - A rewrite whose entries a reader already merged ([`rewrite_fed`]): the same
//!   [`Rewrite`], fed those entries instead of the merged inputs, which are opened
//!   for their range tombstones only.
//!
//! The executor never installs anything: the caller passes the returned [`Outcome`]
//! to `VersionSet::log_and_apply` (or, at open, gathers the edits of several
//! recovery flushes into the first MANIFEST). Until then the outputs are kept alive by
//! the [`FileRef`]s in the outcome; if the job fails or is abandoned those refs drop and
//! the outputs are collected as obsolete.
//!
//! # Durability
//! Every output table is fsynced by `TableBuilder::finish`; the directory of every
//! data path that received outputs is fsynced before `execute` returns, so an edit
//! naming the outputs can only become durable after the files are.
//!
//! # Invariants relied on
//! - Entries of one user key are consecutive in the merged input, newest first
//!   (the plan's input order and the merging iterator ensure it); so a key's records
//!   go to one stream and one file (tables never split a user key, which keeps L1+
//!   files disjoint by user key).

use super::aligned::{CountingIter, OverlapCounter};
use super::plan::{Action, Input, KeyRange, Plan, Reason};
use super::rewrite::Rewrite;
use crate::cache::TableCache;
use crate::compaction_filter::{CompactionFilter, CompactionFilterFactory, FilterContext};
use crate::env::FileSystem;
use crate::error::{Error, Result};
use crate::iter::{ClippedIterator, InternalIterator, MergingIterator, Upper};
use crate::key::{self, SequenceNumber, KIND_SEEK, MAX_SEQUENCE};
use crate::merge::MergeOperator;
use crate::range_del::{Fragments, RangeTombstone};
use crate::sst::Table;
use crate::version::file_ref::FileRef;
use crate::version::virtual_table::SliceView;
use crate::version::{FileKind, FileMetaData, Version, VersionEdit, VersionSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// What a job may use. Borrowed for the duration of one [`execute`] call.
pub(crate) struct JobContext<'a> {
    /// The file system (directory fsyncs).
    pub fs: &'a dyn FileSystem,
    /// Output file numbers, paths and references.
    pub versions: &'a VersionSet,
    /// Opens input tables.
    pub table_cache: &'a TableCache,
    /// Live snapshot sequence numbers, ascending: versions GC keeps what they can see.
    pub snapshots: Vec<SequenceNumber>,
    /// Folds merge chains (`None`: operands are written unchanged).
    pub merge_operator: Option<&'a dyn MergeOperator>,
    /// Makes the compaction filter of each compaction job (never of a flush).
    pub compaction_filter: Option<&'a dyn CompactionFilterFactory>,
    /// The version the plan's input files are in (the family's current version when
    /// the job starts: a compaction's inputs are busy, so they stay in every version
    /// until its edit is installed). Virtual inputs find their slices' parents here;
    /// `None` only for jobs with no virtual input (flushes, recovery flushes).
    pub version: Option<&'a Version>,
}

/// The result of a plan: the edit to install and what it cost.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// Deletes the inputs, adds the outputs (and records the plan's `log_number`).
    pub edit: VersionEdit,
    /// References of the output files: keep them until the edit is installed.
    pub refs: Vec<Arc<FileRef>>,
    /// Bytes of every input file read (for a virtual input, the bytes its slices
    /// reference in their parents).
    pub bytes_read: u64,
    /// Of `bytes_read`, the bytes of the first input run (the level being compacted).
    pub bytes_read_upper: u64,
    /// Of `bytes_read`, the bytes read through virtual inputs' slices.
    pub slice_bytes_read: u64,
    /// Bytes written per output stream (index = stream).
    pub stream_bytes: Vec<u64>,
    /// Input entry bytes (key + value) seen by the merge.
    pub input_entry_bytes: u64,
    /// Input entry bytes of lower runs lying outside the first run's key range.
    pub false_overlap_bytes: u64,
    /// Files moved by metadata only.
    pub moved_files: u64,
    /// Values the compaction filter removed, and changed.
    pub filter_removed: u64,
    /// See `filter_removed`.
    pub filter_changed: u64,
    /// Changes the filter asked for that were refused (a value over
    /// `crate::MAX_VALUE_LEN`): the value was kept.
    pub filter_refused: u64,
    /// The lowest sequence number of an entry the filter removed or changed (`None`
    /// if it did neither): a snapshot at or above it, taken while the job ran, could
    /// see the change (`SnapshotList::fence`).
    pub filter_lowest_seq: Option<SequenceNumber>,
    /// Files deleted by metadata only ([`Action::Drop`]).
    pub dropped_files: u64,
    /// Bytes of the files deleted by metadata only.
    pub dropped_bytes: u64,
}

impl Outcome {
    /// Total bytes written.
    pub fn bytes_written(&self) -> u64 {
        self.stream_bytes.iter().sum()
    }
}

/// Runs `plan`. See the module docs.
///
/// # Errors
/// `Internal` for a malformed plan (a rewrite with no output stream, a router index
/// out of range or a key routed outside its stream's bounds, bounds on a plan that is
/// not a rewrite, a trivial move with several streams, a drop with any, a virtual
/// input the job's version does not hold); corruption or I/O errors from the inputs; I/O
/// errors writing outputs. Outputs written before the error are collected as
/// obsolete once the returned error has dropped their references.
pub(crate) fn execute(plan: &Plan, ctx: &JobContext<'_>) -> Result<Outcome> {
    if plan.range.is_some() && plan.action != Action::Rewrite {
        return Err(Error::Internal(format!(
            "only a rewrite reads a key range, not a {:?}",
            plan.action
        )));
    }
    if plan.action != Action::Rewrite && plan.outputs.iter().any(|s| s.bounds.is_some()) {
        return Err(Error::Internal(format!(
            "only a rewrite has bounded output streams, not a {:?}",
            plan.action
        )));
    }
    match plan.action {
        Action::Drop => drop_files(plan),
        Action::TrivialMove => trivial_move(plan),
        Action::Rewrite if plan.outputs.is_empty() => {
            Err(Error::Internal("plan has no output stream".into()))
        }
        Action::Rewrite => rewrite(plan, ctx),
        Action::Virtualize => super::virtualize::virtualize(plan, ctx),
    }
}

/// An edit deleting every input file. No I/O: the policy showed that no reader can see
/// any entry of them (`compaction::covered`).
fn drop_files(plan: &Plan) -> Result<Outcome> {
    if !plan.outputs.is_empty() {
        return Err(Error::Internal("a drop plan has no output stream".into()));
    }
    let mut out = Outcome::default();
    for (level, f) in plan.input_files() {
        out.edit.deleted_files.push((level, f.number));
        out.dropped_files += 1;
        out.dropped_bytes += f.size;
    }
    Ok(out)
}

fn trivial_move(plan: &Plan) -> Result<Outcome> {
    let [stream] = plan.outputs.as_slice() else {
        return Err(Error::Internal(
            "a trivial move has exactly one output stream".into(),
        ));
    };
    let mut out = Outcome::default();
    for (level, f) in plan.input_files() {
        if f.path_id != stream.path_id {
            return Err(Error::Internal(format!(
                "trivial move across data paths: file=`{}` path_id=`{}` target=`{}`",
                f.number, f.path_id, stream.path_id
            )));
        }
        out.edit.deleted_files.push((level, f.number));
        out.edit
            .new_files
            .push((stream.level, FileMetaData::clone(f)));
        out.moved_files += 1;
    }
    out.edit.log_number = plan.log_number;
    out.stream_bytes = vec![0];
    Ok(out)
}

fn rewrite(plan: &Plan, ctx: &JobContext<'_>) -> Result<Outcome> {
    let mut out = Outcome::default();
    let counter = Arc::new(OverlapCounter::default());
    let (mut input, input_rd) = open_inputs(plan, ctx, &counter, &mut out)?;
    let mut rewrite =
        Rewrite::new(plan, ctx.snapshots.clone(), input_rd)?.with_filter(filter_for(plan, ctx));
    input.seek_to_first();
    rewrite.feed(&mut input, ctx)?;
    rewrite.finish(plan, ctx, &mut out)?;
    out.input_entry_bytes = counter.input_bytes.load(Ordering::Relaxed);
    out.false_overlap_bytes = counter.false_overlap_bytes.load(Ordering::Relaxed);
    Ok(out)
}

/// The compaction filter of `plan`'s job: the family's factory's, for a compaction
/// run by `db::jobs` (not a flush, not a write-back), told the level written, whether
/// the user asked for the job and whether it is bottommost.
fn filter_for(plan: &Plan, ctx: &JobContext<'_>) -> Option<Box<dyn CompactionFilter>> {
    // Flushes filter nothing; nor do write-backs (their install path has no fence).
    if plan.reason.is_flush() || plan.reason == Reason::ReadMerged {
        return None;
    }
    let factory = ctx.compaction_filter?;
    factory.create(&FilterContext {
        level: plan.deepest_output_level().unwrap_or(0),
        manual: plan.reason == Reason::Manual,
        bottommost: plan.bottommost,
    })
}

/// Runs the rewrite `plan` on entries a reader already merged from its inputs:
/// `entries`, positioned at its first entry, every entry of the plan's input files
/// inside its `range` (every version, in internal-key order). The inputs are opened
/// only for their range tombstones; no data block of them is read, so the outcome's
/// `bytes_read` is 0. Opening them builds (unused) iterators and measures a ranged
/// input's bytes on its index: in-memory work per input file, no data block read.
///
/// # Errors
/// As [`execute`], and `Internal` for a plan that is not a rewrite.
pub(crate) fn rewrite_fed(
    plan: &Plan,
    ctx: &JobContext<'_>,
    entries: &mut dyn InternalIterator,
) -> Result<Outcome> {
    let mut out = Outcome::default();
    let counter = Arc::new(OverlapCounter::default());
    let (input, input_rd) = open_inputs(plan, ctx, &counter, &mut Outcome::default())?;
    drop(input);
    let mut rewrite =
        Rewrite::new(plan, ctx.snapshots.clone(), input_rd)?.with_filter(filter_for(plan, ctx));
    rewrite.feed(entries, ctx)?;
    rewrite.finish(plan, ctx, &mut out)?;
    Ok(out)
}

/// The merged input of a rewrite, newest run first. Table runs are read without
/// filling the block cache (a compaction reads each block once). Entry bytes of runs
/// after the first are counted as false overlap where they fall outside the first
/// run's key range (the aligned-compaction statistic).
///
/// A virtual input is read as one child per slice, in its slice order: the slice's
/// parent clipped to the slice's user-key range, and the parent's range tombstones
/// clipped to the same range; it counts the bytes its slices reference, not its
/// parents' sizes.
fn open_inputs(
    plan: &Plan,
    ctx: &JobContext<'_>,
    counter: &Arc<OverlapCounter>,
    out: &mut Outcome,
) -> Result<(MergingIterator, Fragments)> {
    let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
    let mut tombstones: Vec<RangeTombstone> = Vec::new();
    let mut upper_range: Option<(Vec<u8>, Vec<u8>)> = None;
    for (run, input) in plan.inputs.iter().enumerate() {
        match input {
            Input::Memtable(mem) => {
                children.push(clip(Box::new(mem.iter()), plan.range.as_ref()));
                if let Some(rd) = mem.range_dels() {
                    tombstones.extend(rd.tombstones());
                }
            }
            Input::Files { level, files } => {
                let range = if run == 0 { None } else { upper_range.clone() };
                for f in files {
                    let bytes = match &f.kind {
                        FileKind::Real => {
                            let table = ctx.table_cache.get(f)?;
                            if let Some(rd) = table.range_dels() {
                                tombstones.extend(rd.tombstones());
                            }
                            let it = clip(Box::new(table.iter_no_fill()), plan.range.as_ref());
                            children.push(Box::new(CountingIter::new(
                                it,
                                Arc::clone(counter),
                                range.clone(),
                            )));
                            match &plan.range {
                                None => f.size,
                                Some(r) => bytes_within(&table, f.size, r)?,
                            }
                        }
                        FileKind::Virtual { .. } => open_virtual(
                            ctx,
                            (*level, f),
                            plan.range.as_ref(),
                            counter,
                            &range,
                            &mut children,
                            &mut tombstones,
                        )?,
                    };
                    out.bytes_read += bytes;
                    if run == 0 {
                        out.bytes_read_upper += bytes;
                    }
                    if f.kind != FileKind::Real {
                        out.slice_bytes_read += bytes;
                    }
                }
                if run == 0 {
                    upper_range = run_range(files);
                }
            }
        }
    }
    let mut input_rd = Fragments::new(&tombstones);
    if let Some(r) = &plan.range {
        input_rd = input_rd.clip(r.start.as_deref(), r.end.as_deref());
    }
    Ok((MergingIterator::new(children), input_rd))
}

/// `it` clipped to `range` (`it` itself without one).
fn clip<'a>(
    it: Box<dyn InternalIterator + 'a>,
    range: Option<&KeyRange>,
) -> Box<dyn InternalIterator + 'a> {
    match range {
        None => it,
        Some(r) => Box::new(ClippedIterator::with_upper(
            it,
            r.start.as_deref().unwrap_or_default(),
            r.end.as_deref().map_or(Upper::Unbounded, Upper::Excluded),
        )),
    }
}

/// The bytes of `table` (`file_size` bytes on disk) that `range` covers: its data span
/// measured on the index (`Table::approximate_offset_of`) and scaled onto the file's
/// size, so a range covering every key counts the whole file, as an unclipped read does.
fn bytes_within(table: &Table, file_size: u64, range: &KeyRange) -> Result<u64> {
    let data_end = table.data_end();
    let offset = |bound: Option<&Vec<u8>>, default: u64| match bound {
        // `(k, MAX_SEQUENCE, KIND_SEEK)` sorts at or before every entry of `k`.
        Some(k) => table.approximate_offset_of(&key::make_internal_key(k, MAX_SEQUENCE, KIND_SEEK)),
        None => Ok(default),
    };
    let start = offset(range.start.as_ref(), 0)?;
    let end = offset(range.end.as_ref(), data_end)?;
    if data_end == 0 {
        return Ok(0);
    }
    let span = u128::from(end.saturating_sub(start));
    Ok((span * u128::from(file_size) / u128::from(data_end)) as u64)
}

/// Opens the virtual input `f` of `level` as one child per slice, in slice order (see
/// [`open_inputs`]), adding its children and tombstones; returns the bytes its slices
/// reference.
fn open_virtual(
    ctx: &JobContext<'_>,
    (level, f): (usize, &FileMetaData),
    job_range: Option<&KeyRange>,
    counter: &Arc<OverlapCounter>,
    range: &Option<(Vec<u8>, Vec<u8>)>,
    children: &mut Vec<Box<dyn InternalIterator>>,
    tombstones: &mut Vec<RangeTombstone>,
) -> Result<u64> {
    let mut bytes = 0u64;
    for view in virtual_slices(ctx.version, level, f)? {
        let view = view?;
        let (lo, hi) = (
            view.slice.smallest.as_slice(),
            view.slice.largest.as_slice(),
        );
        let table = ctx.table_cache.get_pinned(view.parent, view.file)?;
        // The slice's range `[lo, hi]`, half-open, cut to the job's range.
        let slice = KeyRange {
            start: Some(lo.to_vec()),
            end: Some(key_after(hi)),
        };
        let read = match job_range {
            None => slice,
            Some(r) => KeyRange {
                start: slice.start.max(r.start.clone()),
                end: match (&slice.end, &r.end) {
                    (Some(a), Some(b)) => Some(a.min(b).clone()),
                    (a, b) => a.clone().or_else(|| b.clone()),
                },
            },
        };
        if let Some(rd) = table.range_dels() {
            tombstones.extend(
                rd.clip(read.start.as_deref(), read.end.as_deref())
                    .tombstones(),
            );
        }
        let it = ClippedIterator::with_upper(
            table.iter_no_fill(),
            read.start.as_deref().unwrap_or_default(),
            read.end
                .as_deref()
                .map_or(Upper::Unbounded, Upper::Excluded),
        );
        children.push(Box::new(CountingIter::new(
            it,
            Arc::clone(counter),
            range.clone(),
        )));
        let slice_bytes = match job_range {
            None => view.slice.bytes,
            Some(_) => bytes_within(&table, view.parent.size, &read)?,
        };
        bytes = bytes.saturating_add(slice_bytes);
    }
    Ok(bytes)
}

/// The least user key after `user_key` (`user_key ++ [0]`): an inclusive upper bound
/// made exclusive.
pub(crate) fn key_after(user_key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(user_key.len() + 1);
    k.extend_from_slice(user_key);
    k.push(0);
    k
}

/// The slices of the virtual input `f` of `level`, each with its parent, from
/// `version` (which holds `f`).
///
/// # Errors
/// `Internal` if there is no version or `f` is not in its level there (a plan over
/// another version), or a slice names a parent the version does not know.
pub(super) fn virtual_slices<'v>(
    version: Option<&'v Version>,
    level: usize,
    f: &FileMetaData,
) -> Result<impl Iterator<Item = Result<SliceView<'v>>>> {
    let version = version.ok_or_else(|| {
        Error::Internal(format!(
            "virtual input {} but the job was given no version to find its parents in",
            f.number
        ))
    })?;
    let files = version.files(level);
    // L1+ files are sorted and disjoint: the first whose largest key is `>= f.smallest`
    // is `f` if `f` is there.
    let at = version.find_file(level, &f.smallest);
    let index = match files.get(at) {
        Some(g) if g.number == f.number => at,
        _ => files
            .iter()
            .position(|g| g.number == f.number)
            .ok_or_else(|| {
                Error::Internal(format!(
                    "virtual input {} is not in L{level} of the job's version",
                    f.number
                ))
            })?,
    };
    Ok(version.slices(level, index))
}

/// The user-key range covered by `files`.
fn run_range(files: &[Arc<FileMetaData>]) -> Option<(Vec<u8>, Vec<u8>)> {
    let lo = files.iter().map(|f| f.smallest_user_key()).min()?;
    let hi = files.iter().map(|f| f.largest_user_key()).max()?;
    Some((lo.to_vec(), hi.to_vec()))
}

#[cfg(test)]
pub(super) mod tests;
