//! The writing half of a rewrite: what survives of a stream of merged entries, and
//! the tables it is written into.
//!
//! A [`Rewrite`] is built from a plan (its output streams, router and `bottommost`),
//! the live snapshots and the input's range tombstones. It is then *fed*: one or more
//! iterators of internal entries, each positioned at its first entry, that together
//! are one stream in internal-key order. Per entry it keeps what some reader can still
//! see ([`VersionGc`]), drops what a tombstone of the input deletes for every reader,
//! folds merge chains within their snapshot stripe (`merge_chain`), asks the plan's
//! [`Routing`] which stream each user key goes to (a [`Router`](super::plan::Router), once per key) or
//! what each stream receives of each record (a [`Splitter`]), and writes each
//! stream's records into tables cut by that stream's [`OutputPartitioner`]. [`Rewrite::finish`] finishes the
//! last files, fsyncs the directory of every data path written, and fills the
//! [`Outcome`]: outputs added, the plan's input files deleted.
//!
//! Two sources feed it, through the same code:
//! - the plan's own inputs, merged (`executor::execute`, one feed);
//! - an external merged stream cut into chunks (a reader that already merged the runs
//!   it read), fed chunk by chunk so that memory stays bounded by the chunk.
//!
//! # Contract
//! - Chunks are cut at user-key boundaries: every entry of a user key is in one feed.
//!   A merge chain is folded, and a key's stream chosen, from all of its entries, so a
//!   split key would be written wrong. [`Rewrite::feed`] checks each chunk's first key
//!   against the last one fed (written or dropped) and refuses a chunk that repeats or goes back
//!   (`Internal`); within a chunk the source's order is trusted, as it is for the
//!   plan's own merged inputs.
//! - The tombstones given to [`Rewrite::new`] are every tombstone of the runs the
//!   stream was merged from. Output tombstones are what the snapshots still need of
//!   them, cut to the plan's `range` if it has one, so no output reaches past it.
//! - Outputs written before an error are collected as obsolete once the error has
//!   dropped the rewrite (their `FileRef`s).

use super::executor::{JobContext, Outcome};
use super::gc::VersionGc;
use super::merge_chain::{self, Entry};
use super::partitioner::{self, OutputPartitioner};
use super::plan::{Action, OutputStream, Parts, Plan, Routing, Splitter};
use crate::compaction_filter::{CompactionFilter, Decision};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::{self, ParsedKey, SequenceNumber, ValueKind};
use crate::limits::MAX_VALUE_LEN;
use crate::range_del::Fragments;
use crate::sst::TableBuilder;
use crate::version::file_ref::FileRef;
use crate::version::{FileKind, FileMetaData, VersionSet};
use std::sync::Arc;

/// A rewrite being fed. See the module docs.
pub(crate) struct Rewrite {
    /// Which versions survive (per key, so it runs across feeds).
    gc: VersionGc,
    /// Answers stripe questions while `gc` is borrowed by `keep`.
    stripes: VersionGc,
    /// The input's tombstones: an entry newer tombstones delete for every reader that
    /// could see it is dropped.
    input_rd: Fragments,
    bottommost: bool,
    sink: Sink,
    /// The job's compaction filter, if any (never a flush's), with what it did.
    filter: Option<Box<dyn CompactionFilter>>,
    filter_removed: u64,
    filter_changed: u64,
    filter_refused: u64,
    filter_lowest_seq: Option<SequenceNumber>,
    /// The entries of the last folded merge chain.
    folded: Vec<Entry>,
}

impl Rewrite {
    /// A rewrite of `plan`'s outputs, keeping what the live `snapshots` (ascending)
    /// can see, with the tombstones of the input `input_rd`.
    ///
    /// # Errors
    /// `Internal` unless `plan` is a [`Action::Rewrite`] with at least one output
    /// stream.
    pub(crate) fn new(
        plan: &Plan,
        snapshots: Vec<SequenceNumber>,
        input_rd: Fragments,
    ) -> Result<Rewrite> {
        if plan.action != Action::Rewrite || plan.outputs.is_empty() {
            return Err(Error::Internal(format!(
                "a rewrite needs a rewrite plan with an output stream: {:?} with {} streams",
                plan.action,
                plan.outputs.len()
            )));
        }
        // A splitter's streams share each key, so none may hide it from another's
        // tombstones (`StreamWriter::hole`, for a key that leaves a level whole).
        let levels = || plan.outputs.iter().map(|o| o.level);
        if matches!(plan.routing, Routing::Records(_)) && levels().min() != levels().max() {
            return Err(Error::Internal(
                "a splitter's output streams must all be in one level".into(),
            ));
        }
        let gc = VersionGc::new(snapshots.clone(), plan.bottommost);
        let mut output_rd = gc.range_dels(&input_rd);
        if let Some(r) = &plan.range {
            output_rd = output_rd.clip(r.start.as_deref(), r.end.as_deref());
        }
        let output_rd = Arc::new(output_rd);
        Ok(Rewrite {
            gc,
            stripes: VersionGc::new(snapshots, plan.bottommost),
            input_rd,
            bottommost: plan.bottommost,
            sink: Sink {
                routing: plan.routing.clone(),
                parts: Parts::default(),
                part_key: Vec::new(),
                out: Streams {
                    writers: plan
                        .outputs
                        .iter()
                        .map(|o| {
                            // A deeper unbounded stream keeps every tombstone.
                            let kept_below = plan
                                .outputs
                                .iter()
                                .any(|d| d.bounds.is_none() && d.level > o.level);
                            StreamWriter::new(o, Arc::clone(&output_rd), kept_below)
                        })
                        .collect(),
                    last_user_key: Vec::new(),
                    has_key: false,
                    stream: 0,
                    started: Vec::new(),
                },
            },
            folded: Vec::new(),
            filter: None,
            filter_removed: 0,
            filter_changed: 0,
            filter_refused: 0,
            filter_lowest_seq: None,
        })
    }

    /// This rewrite with the compaction filter `filter` (see
    /// [`crate::compaction_filter`] for what it is called on).
    pub(crate) fn with_filter(mut self, filter: Option<Box<dyn CompactionFilter>>) -> Rewrite {
        self.filter = filter;
        self
    }

    /// Writes what survives of `input`'s entries, from its current position to its end.
    ///
    /// Requires: `input` is positioned (a seek), its entries follow every entry fed
    /// before in internal-key order, and no user key of an earlier feed continues in
    /// it (module docs).
    ///
    /// # Errors
    /// `Internal` for a chunk that starts at or before the last user key fed, or a
    /// malformed key; `input`'s own errors; I/O errors writing outputs.
    pub(crate) fn feed(
        &mut self,
        input: &mut dyn InternalIterator,
        ctx: &JobContext<'_>,
    ) -> Result<()> {
        let Rewrite {
            gc,
            stripes,
            input_rd,
            bottommost,
            sink,
            folded,
            filter,
            filter_removed,
            filter_changed,
            filter_refused,
            filter_lowest_seq,
        } = self;
        // Every entry passes `gc.keep` (a merge chain's first one; `fold` takes only the
        // rest of that key), so its current key is the last user key fed, written or
        // dropped.
        if let (true, Some(last)) = (input.valid(), gc.current_key()) {
            let first = key::user_key(input.key());
            if first <= last {
                return Err(Error::Internal(format!(
                    "a fed chunk starts at user key {first:x?}, at or before the last one \
                     fed ({last:x?}): chunks must be cut at user-key boundaries, in order"
                )));
            }
        }
        // An entry is deleted for every reader that could see it when a tombstone of
        // its key is newer and in the same snapshot stripe.
        let covered = |user_key: &[u8], seq: SequenceNumber| {
            !input_rd.is_empty() && input_rd.covers_within(user_key, seq, stripes.stripe_upper(seq))
        };
        while input.valid() {
            let Some(parsed) = key::parse_internal_key(input.key()) else {
                // Table iterators report malformed keys as corruption naming their
                // file, and memtables hold only keys the write path built.
                return Err(Error::Internal(
                    "malformed internal key reached the compaction merge".into(),
                ));
            };
            if !gc.keep(&parsed) || covered(parsed.user_key, parsed.seq) {
                input.next();
                continue;
            }
            if parsed.kind == ValueKind::Merge {
                let chain = merge_chain::Chain {
                    operator: ctx.merge_operator,
                    floor: gc.stripe_floor(parsed.seq),
                    bottommost: *bottommost,
                    covered: &covered,
                };
                merge_chain::fold(input, &chain, folded)?;
                for (ikey, value) in folded.drain(..) {
                    sink.write(ctx.versions, &ikey, &value)?;
                }
                continue;
            }
            // The compaction filter sees a put's value only where no snapshot can read
            // it: newer than every live snapshot.
            let decision = match filter {
                Some(f)
                    if parsed.kind == ValueKind::Put
                        && stripes.newer_than_snapshots(parsed.seq) =>
                {
                    f.filter(parsed.user_key, input.value())
                }
                _ => Decision::Keep,
            };
            // Every stored value is within `MAX_VALUE_LEN`, which the table format's
            // bounds rest on (`crate::limits`, invariant 1): a larger change is
            // refused and the value kept.
            let decision = match decision {
                Decision::Change(v) if v.len() > MAX_VALUE_LEN => {
                    *filter_refused += 1;
                    Decision::Keep
                }
                d => d,
            };
            if decision != Decision::Keep {
                *filter_lowest_seq =
                    Some(filter_lowest_seq.map_or(parsed.seq, |s| s.min(parsed.seq)));
            }
            match decision {
                Decision::Keep => {
                    sink.write_parsed(ctx.versions, &parsed, input.key(), input.value())?
                }
                Decision::Change(value) => {
                    *filter_changed += 1;
                    sink.write_parsed(ctx.versions, &parsed, input.key(), &value)?;
                }
                Decision::Remove => {
                    *filter_removed += 1;
                    // Nothing older exists below a bottommost job, and no snapshot
                    // needs anything: the key goes. Otherwise a deletion at the same
                    // sequence number keeps older versions hidden from current reads.
                    if !(*bottommost && stripes.no_snapshots()) {
                        let deletion =
                            key::make_internal_key(parsed.user_key, parsed.seq, ValueKind::Delete);
                        let parsed_deletion =
                            key::parse_internal_key(&deletion).ok_or_else(|| {
                                Error::Internal("a built internal key does not parse".into())
                            })?;
                        sink.write_parsed(ctx.versions, &parsed_deletion, &deletion, &[])?;
                    }
                }
            }
            input.next();
        }
        input.status()
    }

    /// Finishes every stream's last file and fsyncs the directory of every data path
    /// written; adds the outputs to `out`'s edit (with each stream's bytes and the
    /// outputs' refs), deletes the plan's input files and records its `log_number`.
    ///
    /// Requires: `plan` is the plan given to [`Rewrite::new`].
    ///
    /// # Errors
    /// I/O errors finishing tables or syncing directories.
    pub(crate) fn finish(self, plan: &Plan, ctx: &JobContext<'_>, out: &mut Outcome) -> Result<()> {
        for (i, w) in self.sink.out.writers.into_iter().enumerate() {
            let level = plan
                .outputs
                .get(i)
                .ok_or_else(|| Error::Internal("stream index out of range".into()))?
                .level;
            let (files, refs) = w.finish(ctx.versions)?;
            out.stream_bytes.push(files.iter().map(|f| f.size).sum());
            out.edit
                .new_files
                .extend(files.into_iter().map(|f| (level, f)));
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
        out.filter_removed += self.filter_removed;
        out.filter_changed += self.filter_changed;
        out.filter_refused += self.filter_refused;
        out.filter_lowest_seq = self.filter_lowest_seq;
        Ok(())
    }
}

/// Sends each written entry to its streams, as the plan's [`Routing`] says.
struct Sink {
    routing: Routing,
    /// A splitter's parts of the current record (reused).
    parts: Parts,
    /// The internal key of the part being written (reused).
    part_key: Vec<u8>,
    out: Streams,
}

/// The streams being written, and where the current user key has begun.
struct Streams {
    writers: Vec<StreamWriter>,
    last_user_key: Vec<u8>,
    has_key: bool,
    /// With a router: the current user key's stream.
    stream: usize,
    /// With a splitter: the streams the current user key has begun in.
    started: Vec<usize>,
}

impl Sink {
    /// Writes one entry built by the merge fold.
    fn write(&mut self, versions: &VersionSet, ikey: &[u8], value: &[u8]) -> Result<()> {
        let parsed = key::parse_internal_key(ikey).ok_or_else(|| {
            Error::Internal("malformed internal key reached the compaction output".into())
        })?;
        self.write_parsed(versions, &parsed, ikey, value)
    }

    /// Writes one entry; `parsed` is `ikey` parsed. Requires: entries in internal-key
    /// order.
    fn write_parsed(
        &mut self,
        versions: &VersionSet,
        parsed: &ParsedKey<'_>,
        ikey: &[u8],
        value: &[u8],
    ) -> Result<()> {
        let out = &mut self.out;
        let new_key = !out.has_key || parsed.user_key != out.last_user_key.as_slice();
        if new_key {
            out.last_user_key.clear();
            out.last_user_key.extend_from_slice(parsed.user_key);
            out.has_key = true;
            out.started.clear();
        }
        match &self.routing {
            Routing::Keys(router) => {
                if new_key {
                    out.stream = router.route(parsed, value);
                    out.begin(versions, out.stream, parsed)?;
                }
                match out.writers.get_mut(out.stream) {
                    Some(w) => w.add(versions, ikey, value),
                    None => Ok(()),
                }
            }
            Routing::Records(splitter) => split(
                splitter.as_ref(),
                (&mut self.parts, &mut self.part_key, out),
                versions,
                parsed,
                value,
            ),
        }
    }
}

/// Writes the parts `splitter` makes of one entry, each to its stream.
fn split(
    splitter: &dyn Splitter,
    (parts, part_key, out): (&mut Parts, &mut Vec<u8>, &mut Streams),
    versions: &VersionSet,
    parsed: &ParsedKey<'_>,
    value: &[u8],
) -> Result<()> {
    parts.clear();
    splitter.split(parsed, value, parts);
    let several = parts.iter().len() > 1;
    for (i, part) in parts.iter().enumerate() {
        // Parts of one record share an internal key: read back together only as
        // operands (a put would hide its siblings, and GC would keep only one).
        let refused = match part.kind {
            ValueKind::Put if several => Some("a put among several parts"),
            ValueKind::Put | ValueKind::Merge | ValueKind::Delete => None,
            ValueKind::RangeDelete => Some("a range-delete part"),
        }
        .or_else(|| {
            let again = parts.iter().take(i).any(|p| p.stream == part.stream);
            again.then_some("two parts for one stream")
        })
        .or_else(|| (part.value.len() > MAX_VALUE_LEN).then_some("a part over the value limit"));
        if let Some(why) = refused {
            return Err(Error::Internal(format!(
                "splitter made {why} (stream {}, {:?}) of user key {:x?}",
                part.stream, part.kind, parsed.user_key
            )));
        }
        if !out.started.contains(&part.stream) {
            out.begin(versions, part.stream, parsed)?;
            out.started.push(part.stream);
        }
        part_key.clear();
        key::append_internal_key(part_key, parsed.user_key, parsed.seq, part.kind);
        if let Some(w) = out.writers.get_mut(part.stream) {
            w.add(versions, part_key, &part.value)?;
        }
    }
    Ok(())
}

impl Streams {
    /// Begins `parsed`'s user key in stream `stream`: checks the stream exists and
    /// admits the key, lets its partitioner cut, and takes the key out of the
    /// tombstones of every stream above it (`StreamWriter::hole`).
    fn begin(
        &mut self,
        versions: &VersionSet,
        stream: usize,
        parsed: &ParsedKey<'_>,
    ) -> Result<()> {
        let streams = self.writers.len();
        let w = self.writers.get_mut(stream).ok_or_else(|| {
            Error::Internal(format!("routing chose stream {stream} of {streams}"))
        })?;
        if !w.stream.admits(parsed.user_key) {
            return Err(Error::Internal(format!(
                "routing sent user key {:x?} to stream {stream} outside its bounds {:?}",
                parsed.user_key, w.stream.bounds
            )));
        }
        w.start_key(versions, parsed.user_key)?;
        let level = w.stream.level;
        for other in self.writers.iter_mut().filter(|o| o.stream.level < level) {
            other.hole(parsed.user_key, parsed.seq);
        }
        Ok(())
    }
}

/// The output files of one stream being written.
///
/// Range tombstones: every stream gets the job's output tombstones (a bounded stream,
/// those inside its bounds), cut at its files' boundaries: a file cut before user key
/// `k` takes the tombstones in `[lo, k)`, where `lo` is where it began (the stream's
/// lower bound, or unbounded, for the first file), and the last file takes the rest. So the files of a level stay disjoint (a file's largest key is then
/// `(k, MAX_SEQUENCE, RangeDelete)`, which sorts before every entry of `k`), and a
/// stream with tombstones but no entries writes one file of tombstones only.
///
/// A bounded stream above an unbounded one of the same plan writes no file of
/// tombstones only: the deeper stream keeps every tombstone, and the bounded one
/// needs them only beside its own entries. Without this, a stream written back into
/// its input level would keep a file of tombstones there however often the level is
/// compacted: the level could never shrink below its target.
///
/// A stream also leaves out of its tombstones each key the router sends to a deeper
/// stream of the plan, wherever a tombstone older than that key's newest entry covers
/// it ([`StreamWriter::hole`]). Reads rest on the level invariant that a tombstone
/// covering `k` in a level is newer than every entry of `k` in the levels below (a get
/// stops at the first level whose tombstone covers its key, as RocksDB's does); a copy
/// of an older tombstone kept above the level that now holds `k` would hide `k`'s
/// newer entries. With one output level, or streams side by side, there are no holes.
///
/// A file also ends where its tombstones end when the stream's partitioner says so
/// (`OutputPartitioner::cut_at_tombstones_end`; aligned partitioning does when the
/// next key lies beyond grandparent files of more than a target file size, as RocksDB
/// cuts on grandparent overlap): otherwise a file holding tombstones over one end of
/// the key space and entries at the other would overlap the whole next level, and the
/// compaction that moves it down would rewrite all of it. The writer has no branch
/// per partitioning.
struct StreamWriter {
    stream: OutputStream,
    partitioner: Box<dyn OutputPartitioner>,
    current: Option<(Arc<FileRef>, TableBuilder)>,
    files: Vec<FileMetaData>,
    refs: Vec<Arc<FileRef>>,
    range_dels: Arc<Fragments>,
    /// Where the current (or next) file's share of the tombstones begins.
    lo: Option<Vec<u8>>,
    /// The previous user key of this stream (empty before the first).
    prev_key: Vec<u8>,
    /// Keys taken out of this stream's tombstones older than the sequence number
    /// beside them (in key order: keys reach the sink sorted).
    holes: Vec<(Vec<u8>, SequenceNumber)>,
    /// Writes no file of tombstones only: this bounded stream's tombstones are all
    /// in a deeper unbounded stream of the plan too, and here they matter only beside
    /// its own entries (older versions a snapshot keeps).
    entries_only: bool,
}

impl StreamWriter {
    fn new(stream: &OutputStream, range_dels: Arc<Fragments>, kept_below: bool) -> Self {
        let (range_dels, lo) = match &stream.bounds {
            None => (range_dels, None),
            Some(b) => (
                Arc::new(range_dels.clip(b.start.as_deref(), b.end.as_deref())),
                b.start.clone(),
            ),
        };
        StreamWriter {
            stream: stream.clone(),
            partitioner: partitioner::for_stream(stream),
            current: None,
            files: Vec::new(),
            refs: Vec::new(),
            range_dels,
            lo,
            prev_key: Vec::new(),
            holes: Vec::new(),
            entries_only: stream.bounds.is_some() && kept_below,
        }
    }

    /// `user_key`, whose newest entry has sequence number `seq`, went to a deeper
    /// stream: this stream's tombstones older than `seq` must not cover it.
    fn hole(&mut self, user_key: &[u8], seq: SequenceNumber) {
        if self.stream.admits(user_key)
            && self
                .range_dels
                .max_covering(user_key, seq.saturating_sub(1))
                > 0
        {
            self.holes.push((user_key.to_vec(), seq));
        }
    }

    /// This stream's tombstones in `[lo, hi)`, holes taken out.
    fn share(&self, lo: Option<&[u8]>, hi: Option<&[u8]>) -> Fragments {
        let mut share = self.range_dels.clip(lo, hi);
        let inside = |k: &[u8]| lo.is_none_or(|l| l <= k) && hi.is_none_or(|h| k < h);
        for (key, seq) in self.holes.iter().filter(|(k, _)| inside(k)) {
            share = share.punch(key, *seq);
        }
        share
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
            // Holes may have left nothing of them (a tombstone over one key only).
            if self.current.is_some()
                || (!self.entries_only && !self.share(self.lo.as_deref(), Some(&end)).is_empty())
            {
                self.builder(versions)?;
                self.finish_file(Some(&end))?;
            }
            self.lo = Some(end);
        }
        self.prev_key.clear();
        self.prev_key.extend_from_slice(user_key);
        Ok(())
    }

    /// Where the tombstones waiting for the current file end, if the stream's
    /// partitioner wants the file finished there rather than stretched over the gap
    /// to `next_user_key` ([`OutputPartitioner::cut_at_tombstones_end`]).
    fn tombstones_end_far_before(&self, next_user_key: &[u8]) -> Option<Vec<u8>> {
        // Per key: one call and at most one binary search. Only tombstones that end
        // after the previous key make a gap worth measuring.
        if self.range_dels.is_empty() || !self.partitioner.cuts_at_tombstone_ends() {
            return None;
        }
        let end = self
            .range_dels
            .end_within(self.lo.as_deref(), next_user_key)?;
        if !self.prev_key.is_empty() && end <= self.prev_key.as_slice() {
            return None;
        }
        self.partitioner
            .cut_at_tombstones_end(end, next_user_key)
            .then(|| end.to_vec())
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
            builder.set_range_dels(self.share(self.lo.as_deref(), hi));
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
            creation_time: crate::version::file_meta::unix_now(),
        });
        self.refs.push(file_ref);
        Ok(())
    }

    fn finish(mut self, versions: &VersionSet) -> Result<(Vec<FileMetaData>, Vec<Arc<FileRef>>)> {
        let tail_has_tombstones = !self.share(self.lo.as_deref(), None).is_empty();
        if self.current.is_none() && tail_has_tombstones && !self.entries_only {
            self.builder(versions)?;
        }
        self.finish_file(None)?;
        Ok((self.files, self.refs))
    }
}

#[cfg(test)]
mod tests;
