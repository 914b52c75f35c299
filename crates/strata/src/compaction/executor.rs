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
//! - `Rewrite`: merge the input runs (newest first) into one stream of internal keys,
//!   keep what some reader can still see ([`VersionGc`]), fold merge chains within
//!   their snapshot stripe (`merge_chain`), ask the plan's [`Router`]
//!   which stream each user key goes to, and write each stream's records into tables
//!   cut by that stream's [`OutputPartitioner`]. Then fsync the directory of every data
//!   path written and return the edit that replaces the inputs by the outputs.
//!   A virtual input is read slice by slice: each slice's parent, clipped to the
//!   slice's user-key range (its range tombstones too), found in the job's version.
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
use super::gc::VersionGc;
use super::merge_chain::{self, Entry};
use super::partitioner::{self, OutputPartitioner};
use super::plan::{Action, Input, OutputStream, Partitioning, Plan};
use crate::cache::TableCache;
use crate::env::FileSystem;
use crate::error::{Error, Result};
use crate::iter::{ClippedIterator, InternalIterator, MergingIterator};
use crate::key::{self, ParsedKey, SequenceNumber, ValueKind};
use crate::merge::MergeOperator;
use crate::range_del::{Fragments, RangeTombstone};
use crate::sst::TableBuilder;
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
/// out of range, a trivial move with several streams, a drop with any, a virtual input
/// the job's version does not hold); corruption or I/O errors from the inputs; I/O
/// errors writing outputs. Outputs written before the error are collected as
/// obsolete once the returned error has dropped their references.
pub(crate) fn execute(plan: &Plan, ctx: &JobContext<'_>) -> Result<Outcome> {
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
    let bottommost = plan.bottommost;
    let mut gc = VersionGc::new(ctx.snapshots.clone(), bottommost);
    // The tombstones the outputs keep, cut at each output file's key range.
    let output_rd = Arc::new(gc.range_dels(&input_rd));
    let mut sink = Sink {
        plan,
        versions: ctx.versions,
        writers: plan
            .outputs
            .iter()
            .map(|o| StreamWriter::new(o, Arc::clone(&output_rd)))
            .collect(),
        last_user_key: Vec::new(),
        has_key: false,
        stream: 0,
    };
    // An entry is deleted for every reader that could see it when a tombstone of its
    // key is newer and in the same snapshot stripe. (`stripes` answers stripe
    // questions while `gc` is borrowed mutably by `keep`.)
    let stripes = VersionGc::new(ctx.snapshots.clone(), bottommost);
    let covered = |user_key: &[u8], seq: SequenceNumber| {
        !input_rd.is_empty() && input_rd.covers_within(user_key, seq, stripes.stripe_upper(seq))
    };
    let mut folded: Vec<Entry> = Vec::new();
    input.seek_to_first();
    while input.valid() {
        let Some(parsed) = key::parse_internal_key(input.key()) else {
            // Table iterators report malformed keys as corruption naming their file,
            // and memtables hold only keys the write path built.
            return Err(Error::Internal(
                "malformed internal key reached the compaction merge".into(),
            ));
        };
        if !gc.keep(&parsed) || covered(parsed.user_key, parsed.seq) {
            input.next();
            continue;
        }
        if parsed.kind == ValueKind::Merge {
            let floor = gc.stripe_floor(parsed.seq);
            let chain = merge_chain::Chain {
                operator: ctx.merge_operator,
                floor,
                bottommost,
                covered: &covered,
            };
            merge_chain::fold(&mut input, &chain, &mut folded)?;
            for (ikey, value) in folded.drain(..) {
                sink.write(&ikey, &value)?;
            }
            continue;
        }
        sink.write_parsed(&parsed, input.key(), input.value())?;
        input.next();
    }
    input.status()?;
    for (i, w) in sink.writers.into_iter().enumerate() {
        let stream = plan
            .outputs
            .get(i)
            .ok_or_else(|| Error::Internal("stream index out of range".into()))?;
        let (files, refs) = w.finish(ctx.versions)?;
        out.stream_bytes.push(files.iter().map(|f| f.size).sum());
        out.edit
            .new_files
            .extend(files.into_iter().map(|f| (stream.level, f)));
        out.refs.extend(refs);
    }
    let mut synced: Vec<u32> = Vec::new();
    for r in &out.refs {
        if !synced.contains(&r.path_id()) {
            ctx.fs.sync_dir(ctx.versions.dir(r.path_id())?)?;
            synced.push(r.path_id());
        }
    }
    for (level, f) in plan.input_files() {
        out.edit.deleted_files.push((level, f.number));
    }
    out.edit.log_number = plan.log_number;
    out.input_entry_bytes = counter.input_bytes.load(Ordering::Relaxed);
    out.false_overlap_bytes = counter.false_overlap_bytes.load(Ordering::Relaxed);
    Ok(out)
}

/// Routes each written entry to its stream: the router decides once per user key.
struct Sink<'a> {
    plan: &'a Plan,
    versions: &'a VersionSet,
    writers: Vec<StreamWriter<'a>>,
    last_user_key: Vec<u8>,
    has_key: bool,
    stream: usize,
}

impl Sink<'_> {
    /// Writes one entry built by the merge fold.
    fn write(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        let parsed = key::parse_internal_key(ikey).ok_or_else(|| {
            Error::Internal("malformed internal key reached the compaction output".into())
        })?;
        self.write_parsed(&parsed, ikey, value)
    }

    /// Writes one entry; `parsed` is `ikey` parsed. Requires: entries in internal-key
    /// order.
    fn write_parsed(&mut self, parsed: &ParsedKey<'_>, ikey: &[u8], value: &[u8]) -> Result<()> {
        if !self.has_key || parsed.user_key != self.last_user_key.as_slice() {
            self.stream = self.plan.router.route(parsed, value);
            let w = self.writers.get_mut(self.stream).ok_or_else(|| {
                Error::Internal(format!(
                    "router chose stream {} of {}",
                    self.stream,
                    self.plan.outputs.len()
                ))
            })?;
            w.start_key(self.versions, parsed.user_key)?;
            self.last_user_key.clear();
            self.last_user_key.extend_from_slice(parsed.user_key);
            self.has_key = true;
        }
        match self.writers.get_mut(self.stream) {
            Some(w) => w.add(self.versions, ikey, value),
            None => Ok(()),
        }
    }
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
                children.push(Box::new(mem.iter()));
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
                            children.push(Box::new(CountingIter::new(
                                table.iter_no_fill(),
                                Arc::clone(counter),
                                range.clone(),
                            )));
                            f.size
                        }
                        FileKind::Virtual { .. } => open_virtual(
                            ctx,
                            (*level, f),
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
    Ok((MergingIterator::new(children), Fragments::new(&tombstones)))
}

/// Opens the virtual input `f` of `level` as one child per slice, in slice order (see
/// [`open_inputs`]), adding its children and tombstones; returns the bytes its slices
/// reference.
fn open_virtual(
    ctx: &JobContext<'_>,
    (level, f): (usize, &FileMetaData),
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
        if let Some(rd) = table.range_dels() {
            // The slice's range `[lo, hi]` as a half-open tombstone range.
            let end = key_after(hi);
            tombstones.extend(rd.clip(Some(lo), Some(&end)).tombstones());
        }
        let it = ClippedIterator::new(table.iter_no_fill(), lo, hi);
        children.push(Box::new(CountingIter::new(
            it,
            Arc::clone(counter),
            range.clone(),
        )));
        bytes = bytes.saturating_add(view.slice.bytes);
    }
    Ok(bytes)
}

/// The least user key after `user_key` (`user_key ++ [0]`): an inclusive upper bound
/// made exclusive.
pub(super) fn key_after(user_key: &[u8]) -> Vec<u8> {
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

/// The output files of one stream being written.
///
/// Range tombstones: every stream gets the job's output tombstones, cut at its files'
/// boundaries: a file cut before user key `k` takes the tombstones in `[lo, k)`, where
/// `lo` is where it began (unbounded for the first file), and the last file takes the
/// rest. So the files of a level stay disjoint (a file's largest key is then
/// `(k, MAX_SEQUENCE, RangeDelete)`, which sorts before every entry of `k`), and a
/// stream with tombstones but no entries writes one file of tombstones only.
///
/// A file also ends where its tombstones end when the next key lies beyond
/// grandparent files of more than a target file size (RocksDB cuts on grandparent
/// overlap too): otherwise a file holding tombstones over one end of the key space and
/// entries at the other would overlap the whole next level, and the compaction that
/// moves it down would rewrite all of it.
struct StreamWriter<'a> {
    stream: &'a OutputStream,
    partitioner: Box<dyn OutputPartitioner>,
    current: Option<(Arc<FileRef>, TableBuilder)>,
    files: Vec<FileMetaData>,
    refs: Vec<Arc<FileRef>>,
    range_dels: Arc<Fragments>,
    /// Where the current (or next) file's share of the tombstones begins.
    lo: Option<Vec<u8>>,
    /// The previous user key of this stream (empty before the first).
    prev_key: Vec<u8>,
}

impl<'a> StreamWriter<'a> {
    fn new(stream: &'a OutputStream, range_dels: Arc<Fragments>) -> Self {
        StreamWriter {
            stream,
            partitioner: partitioner::for_stream(stream),
            current: None,
            files: Vec::new(),
            refs: Vec::new(),
            range_dels,
            lo: None,
            prev_key: Vec::new(),
        }
    }

    /// Shows the partitioner the next user key of this stream (size 0 when no file is
    /// open, so stateful policies can track their position) and finishes the current
    /// file if it says so.
    fn start_key(&mut self, versions: &VersionSet, user_key: &[u8]) -> Result<()> {
        let size = self.current.as_ref().map_or(0, |(_, b)| b.estimated_size());
        if self.partitioner.should_cut(user_key, size) && self.current.is_some() {
            self.finish_file(Some(user_key))?;
            self.lo = Some(user_key.to_vec());
        } else if let Some(end) = self.tombstones_end_far_before(user_key) {
            self.builder(versions)?;
            self.finish_file(Some(&end))?;
            self.lo = Some(end);
        }
        self.prev_key.clear();
        self.prev_key.extend_from_slice(user_key);
        Ok(())
    }

    /// Where the tombstones waiting for the current file end, if the grandparent
    /// files lying entirely between there and `next_user_key` hold more than a target
    /// file size (the plan names no grandparents for L0 outputs: never then).
    fn tombstones_end_far_before(&self, next_user_key: &[u8]) -> Option<Vec<u8>> {
        let Partitioning::Aligned {
            grandparents,
            target,
            ..
        } = &self.stream.partitioning
        else {
            return None;
        };
        // Per key: one flag and at most one binary search. Only tombstones that end
        // after the previous key make a gap worth measuring.
        if self.range_dels.is_empty() {
            return None;
        }
        let end = self
            .range_dels
            .end_within(self.lo.as_deref(), next_user_key)?;
        if !self.prev_key.is_empty() && end <= self.prev_key.as_slice() {
            return None;
        }
        let between: u64 = grandparents
            .iter()
            .filter(|g| g.smallest_user_key() >= end && g.largest_user_key() < next_user_key)
            .map(|g| g.size)
            .sum();
        (between > *target).then(|| end.to_vec())
    }

    fn builder(&mut self, versions: &VersionSet) -> Result<&mut TableBuilder> {
        if self.current.is_none() {
            let (file_ref, file) = versions.new_table(self.stream.path_id)?;
            let mut table = self.stream.table.clone();
            table.column_group = self.stream.column_group;
            self.current = Some((file_ref, TableBuilder::new(file, table)));
        }
        self.current
            .as_mut()
            .map(|(_, b)| b)
            .ok_or_else(|| Error::Internal("no output file".into()))
    }

    fn add(&mut self, versions: &VersionSet, ikey: &[u8], value: &[u8]) -> Result<()> {
        self.builder(versions)?.add(ikey, value)
    }

    /// Finishes the current file, giving it the tombstones in `[lo, hi)`.
    fn finish_file(&mut self, hi: Option<&[u8]>) -> Result<()> {
        let Some((file_ref, mut builder)) = self.current.take() else {
            return Ok(());
        };
        if !self.range_dels.is_empty() {
            builder.set_range_dels(self.range_dels.clip(self.lo.as_deref(), hi));
        }
        let p = builder.finish()?;
        self.files.push(FileMetaData {
            number: file_ref.number(),
            path_id: self.stream.path_id,
            size: p.file_size,
            smallest: p.smallest_key,
            largest: p.largest_key,
            smallest_seqno: p.smallest_seqno,
            largest_seqno: p.largest_seqno,
            num_entries: p.num_entries,
            num_deletions: p.num_deletions,
            column_group: self.stream.column_group,
            kind: FileKind::Real,
            num_range_deletions: p.num_range_deletions,
        });
        self.refs.push(file_ref);
        Ok(())
    }

    fn finish(mut self, versions: &VersionSet) -> Result<(Vec<FileMetaData>, Vec<Arc<FileRef>>)> {
        let tail_has_tombstones = !self.range_dels.clip(self.lo.as_deref(), None).is_empty();
        if self.current.is_none() && tail_has_tombstones {
            self.builder(versions)?;
        }
        self.finish_file(None)?;
        Ok((self.files, self.refs))
    }
}

#[cfg(test)]
pub(super) mod tests;
