//! Plans: plain-data descriptions of every job that writes or moves tables.
//!
//! A [`Plan`] says everything the executor (`compaction::executor`) needs and nothing
//! it must decide: *what* to do ([`Action`]), *from what* ([`Input`] runs: files of a
//! level, or a memtable), *into what* ([`OutputStream`]s: level, data path, column
//! group, table options, partitioner), and *which stream each record goes to*
//! ([`Routing`]: a [`Router`] sends all of a user key's records to one stream; a
//! [`Splitter`] splits each record into parts for several streams). Flushes, WAL-replay flushes, automatic and manual compactions and
//! trivial moves are all plans; so will be a technique's jobs (a virtual-table merge, a
//! scan's write-back, a promotion, a layout change).
//!
//! Policies (the picker, and later technique policies) are pure functions from an
//! immutable `Version` (plus options) to a plan; only the executor writes files. A
//! technique therefore adds a policy, a partitioner or a router, never a branch in the
//! executor or the scheduler.
//!
//! # Invariants every plan satisfies
//! 1. Inputs are given newest first: a memtable, or L0 files newest first, then deeper
//!    levels in order. The executor merges them, so for equal user keys the newest
//!    version comes first.
//! 2. `outputs` is non-empty, and the routing only names indices into it; except
//!    that an [`Action::Drop`] plan has no output (it writes nothing).
//! 3. Files of one output stream never overlap the files that remain in its level
//!    (the picker's invariants 2–3), and no two streams of a plan write overlapping key
//!    ranges into the same level and column group. A stream that writes into a level
//!    the plan also reads from is bounded ([`OutputStream::bounds`]) to the key range
//!    of that level's inputs, which nothing left in the level overlaps.
//! 4. `bottommost` is true iff no data for the plan's key range lies below its output
//!    level, so a tombstone in the output shadows nothing.
//! 5. A plan with a [`KeyRange`] (`range`) is a [`Action::Rewrite`]: it reads only the
//!    part of its inputs inside the range, writes outputs (tombstones included) only
//!    inside it, and still deletes its input files whole. It is therefore complete only
//!    when every input lies inside the range, or together with plans over the rest of
//!    each input that straddles an end, their outcomes installed as one edit.

use crate::key::{ParsedKey, ValueKind};
use crate::memtable::MemTable;
use crate::options::Options;
use crate::sst::TableOptions;
use crate::version::file_meta::ALL_COLUMNS;
use crate::version::FileMetaData;
use std::fmt;
use std::sync::Arc;

/// What a plan does with its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Action {
    /// Re-level the input files by metadata only: they move to the (single) output
    /// stream's level unchanged. Requires: the inputs are pairwise disjoint, no file of
    /// the output level overlaps them, and they already live on the stream's path.
    TrivialMove,
    /// Merge the inputs, drop what no reader can see, and write new tables.
    Rewrite,
    /// Delete the input files by metadata only: no reader can see any of their
    /// entries (`compaction::covered` states when). Reads and writes nothing; a drop
    /// plan has no output stream.
    Drop,
    /// Replace the inputs by virtual tables over them (`version::virtual_table`) in
    /// the (single) output stream's level, cut where the stream's partitioning cuts,
    /// measured on the parents' index blocks: no data block is read and no file is
    /// written. Requires: the output level is L1 or deeper, every parent lives on the
    /// stream's path, and the plan's input files are in the job's version
    /// (`compaction::virtualize`). A compaction policy plans it (ARCHITECTURE §6.10).
    Virtualize,
}

/// Why a plan was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// An immutable memtable is written to L0.
    Flush,
    /// A memtable rebuilt from the WAL at open is written to L0.
    RecoveryFlush,
    /// L0 holds at least `level0_file_num_compaction_trigger` files.
    L0FileCount,
    /// A level L1+ holds more bytes than its target.
    LevelSize,
    /// Requested by the user (`compact_range`).
    Manual,
    /// Whole files hidden by range tombstones, or tombstones with nothing left to
    /// hide (`compaction::covered`).
    RangeDeletion,
    /// Tables reads asked to have compacted (`compaction::requests`).
    ReadRequested,
    /// Tables rewritten so that bytes of other tables which no read can reach (the
    /// unreferenced parts of virtual tables' parents) can be deleted.
    Garbage,
    /// Entries a reader already merged, written as tables (`executor::rewrite_fed`),
    /// and the plans over the rest of the files they came from.
    ReadMerged,
    /// Copies of records from deeper levels, written to L0 at their own sequence
    /// numbers (`TreeHooks::take_copies`).
    CopiesUp,
    /// Tables older than `periodic_compaction_seconds`, rewritten in place.
    Periodic,
}

impl Reason {
    /// True iff the plan's input is a memtable.
    pub fn is_flush(self) -> bool {
        matches!(
            self,
            Reason::Flush | Reason::RecoveryFlush | Reason::CopiesUp
        )
    }
}

/// One input of a plan.
#[derive(Clone)]
pub enum Input {
    /// Files of one level (for L0: newest first; for L1+: in key order within each
    /// run; files of different runs of the level may overlap, `version::run`).
    Files {
        /// The level the files are in.
        level: usize,
        /// The files.
        files: Vec<Arc<FileMetaData>>,
    },
    /// An immutable memtable.
    Memtable(Arc<MemTable>),
}

impl fmt::Debug for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Input::Files { level, files } => {
                let numbers: Vec<u64> = files.iter().map(|m| m.number).collect();
                write!(f, "L{level}{numbers:?}")
            }
            Input::Memtable(m) => write!(f, "memtable({} entries)", m.len()),
        }
    }
}

/// Where one stream's outputs are cut into files.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Partitioning {
    /// Cut once a file reaches `target` bytes (at the next user-key boundary).
    Fixed {
        /// Target file size, bytes.
        target: u64,
    },
    /// Aligned compaction (Kim et al., Algorithm 1): cut at the boundaries of the
    /// overlapping files two levels down, within `[target / variance, target *
    /// variance]`. See `compaction::aligned`.
    Aligned {
        /// Files of the level below the output level overlapping the plan's range,
        /// in key order.
        grandparents: Vec<Arc<FileMetaData>>,
        /// Target file size, bytes.
        target: u64,
        /// Allowed size variance around the target (> 1).
        variance: f64,
    },
}

/// One destination of a plan's records.
#[derive(Clone, Debug)]
pub struct OutputStream {
    /// The level the outputs are added to.
    pub level: usize,
    /// The data path the outputs are written to (index into the database's paths;
    /// 0 is the database directory).
    pub path_id: u32,
    /// The column group the outputs store ([`ALL_COLUMNS`] for rows).
    pub column_group: u32,
    /// How the output tables are built (the executor records `column_group` in them).
    pub table: TableOptions,
    /// Where outputs are cut into files.
    pub partitioning: Partitioning,
    /// The only user keys this stream writes (`None`: every key of the job). The
    /// executor clips the stream's range tombstones to it, so its files stay inside
    /// it, and fails the job (`Internal`) if the router sends it a key outside it.
    /// Only a [`Action::Rewrite`] has bounded streams.
    pub bounds: Option<KeyRange>,
}

impl OutputStream {
    /// The row stream into `level` under `opts`, written to data path `path_id`: the
    /// level's table options, all columns.
    pub fn for_level(
        opts: &Options,
        level: usize,
        path_id: u32,
        partitioning: Partitioning,
    ) -> OutputStream {
        OutputStream {
            level,
            path_id,
            column_group: ALL_COLUMNS,
            table: TableOptions::for_level(opts, level),
            partitioning,
            bounds: None,
        }
    }

    /// True iff this stream may write `user_key` (it is unbounded, or its bounds hold
    /// the key).
    pub fn admits(&self, user_key: &[u8]) -> bool {
        self.bounds.as_ref().is_none_or(|b| b.contains(user_key))
    }
}

/// Sends each user key's records to one output stream.
///
/// Seam: a technique that splits a job's output (hot records to a fast tier, column
/// groups to their own files) implements this. The executor calls [`Router::route`]
/// once per user key, with its newest surviving record, and sends every record of that
/// key to the returned stream, so the versions of a key never straddle two streams.
pub trait Router: Send + Sync + fmt::Debug {
    /// Index into the plan's `outputs` for the user key of `newest`.
    fn route(&self, newest: &ParsedKey<'_>, value: &[u8]) -> usize;
}

/// Every record to stream 0 (every plan with one output stream).
#[derive(Clone, Copy, Debug, Default)]
pub struct SingleStream;

impl Router for SingleStream {
    fn route(&self, _newest: &ParsedKey<'_>, _value: &[u8]) -> usize {
        0
    }
}

/// Splits each record into parts, one per stream that receives something of it: the
/// record fan-out.
///
/// Seam: a policy that keeps parts of one record in several streams at once (each
/// part in its own run of the output level, `version::run`) implements this. The executor calls
/// [`Splitter::split`] on every record it writes, after version GC, the merge fold,
/// range-tombstone coverage and the compaction filter have decided what survives, in
/// internal-key order. Each part is written to its stream with the record's user key
/// and sequence number and the part's own kind and value, so a stream's entries stay
/// in internal-key order and keep their sequence numbers (snapshots, and the snapshot
/// filter, see the same history in every stream).
///
/// For the parts to read back as the record (a level's runs are merged, `version::run`),
/// they are merge operands of the family's operator, and
/// a record that replaces what is older (a `Put`, including one a merge fold made)
/// must give *every* stream a part that replaces that stream's share of the older
/// record, and a delete must reach every stream (ARCHITECTURE §6.1).
pub trait Splitter: Send + Sync + fmt::Debug {
    /// Adds to `parts` (empty) what each stream receives of the record `entry`, whose
    /// value is `value`: at most one part per stream, each of kind `Merge` or
    /// `Delete`, or one `Put` part alone, each value within `limits::MAX_VALUE_LEN`
    /// (the executor refuses anything else as `Internal`: parts of one record share
    /// an internal key and read back together only as operands). No part drops the
    /// record. The plan's streams are all in one level.
    fn split(&self, entry: &ParsedKey<'_>, value: &[u8], parts: &mut Parts);
}

/// The parts of one record a [`Splitter`] makes, their value buffers reused from
/// record to record so that a job allocates per stream, not per record.
#[derive(Debug, Default)]
pub struct Parts {
    parts: Vec<Part>,
    spare: Vec<Vec<u8>>,
}

/// What one stream receives of a record.
#[derive(Debug)]
pub struct Part {
    /// Index into the plan's `outputs`.
    pub stream: usize,
    /// The entry's kind in that stream.
    pub kind: ValueKind,
    /// The entry's value in that stream.
    pub value: Vec<u8>,
}

impl Parts {
    /// Adds a part for `stream` of kind `kind`, whose value `fill` writes into an
    /// empty buffer.
    #[cfg_attr(
        not(any(test, feature = "internals")),
        allow(dead_code, reason = "the record fan-out seam; see `Routing::Records`")
    )]
    pub fn add(&mut self, stream: usize, kind: ValueKind, fill: impl FnOnce(&mut Vec<u8>)) {
        let mut value = self.spare.pop().unwrap_or_default();
        value.clear();
        fill(&mut value);
        self.parts.push(Part {
            stream,
            kind,
            value,
        });
    }

    /// The parts added since the last `Parts::clear`, in the order added.
    pub fn iter(&self) -> std::slice::Iter<'_, Part> {
        self.parts.iter()
    }

    /// Forgets every part, keeping their buffers.
    pub(crate) fn clear(&mut self) {
        self.spare.extend(self.parts.drain(..).map(|p| p.value));
    }
}

/// How a plan's records reach its output streams.
#[derive(Clone, Debug)]
#[cfg_attr(
    not(any(test, feature = "internals")),
    allow(
        dead_code,
        reason = "`Records` is the record fan-out seam; only tests build one until a policy does"
    )
)]
pub enum Routing {
    /// Every record of a user key, whole, to the one stream the router picks for
    /// the key.
    Keys(Arc<dyn Router>),
    /// Each record split into parts for any of the streams (the record fan-out).
    Records(Arc<dyn Splitter>),
}

impl Routing {
    /// Every record to the plan's one stream.
    pub fn single() -> Routing {
        Routing::Keys(Arc::new(SingleStream))
    }
}

/// Where a running job writes: the user keys `[lo, hi]` (inclusive) of the run of
/// column group `group` in level `level` (`version::run`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputRange {
    /// The output level.
    pub level: usize,
    /// The column group whose run the job writes ([`ALL_COLUMNS`] for rows).
    pub group: u32,
    /// The least user key written.
    pub lo: Vec<u8>,
    /// The greatest user key written.
    pub hi: Vec<u8>,
}

impl OutputRange {
    /// The rows' range `[lo, hi]` of `level`.
    #[cfg(test)]
    pub(crate) fn rows(level: usize, lo: &[u8], hi: &[u8]) -> OutputRange {
        OutputRange {
            level,
            group: ALL_COLUMNS,
            lo: lo.to_vec(),
            hi: hi.to_vec(),
        }
    }

    /// True iff this range meets the user keys `[lo, hi]`.
    pub(crate) fn meets(&self, lo: &[u8], hi: &[u8]) -> bool {
        self.lo.as_slice() <= hi && lo <= self.hi.as_slice()
    }
}

/// A half-open user-key range `[start, end)`; a missing end is unbounded. The same
/// convention as range tombstones (`Fragments::clip`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyRange {
    /// The least user key in the range (`None`: unbounded below).
    pub start: Option<Vec<u8>>,
    /// The least user key after the range (`None`: unbounded above).
    pub end: Option<Vec<u8>>,
}

impl KeyRange {
    /// True iff `user_key` lies in the range.
    pub fn contains(&self, user_key: &[u8]) -> bool {
        self.start.as_deref().is_none_or(|s| s <= user_key)
            && self.end.as_deref().is_none_or(|e| user_key < e)
    }
}

/// A complete description of one job. See the module docs.
#[derive(Clone, Debug)]
pub struct Plan {
    /// What to do.
    pub action: Action,
    /// Input runs, newest first (invariant 1).
    pub inputs: Vec<Input>,
    /// Output streams (invariant 2; none for [`Action::Drop`]).
    pub outputs: Vec<OutputStream>,
    /// Which stream each record goes to.
    pub routing: Routing,
    /// True iff no data for the plan's key range lies below the output (invariant 4).
    pub bottommost: bool,
    /// For flushes: WALs numbered below this hold nothing unflushed once the plan's
    /// edit is durable, and the edit records it.
    pub log_number: Option<u64>,
    /// Why the plan was made.
    pub reason: Reason,
    /// For a rewrite: the only user keys it reads and writes (invariant 5); `None`
    /// for every key of its inputs.
    pub range: Option<KeyRange>,
}

impl Plan {
    /// A flush of `mem` to one L0 file in data path `path_id` under `opts`.
    /// `log_number`: the WAL of the next newer memtable (everything older is in `mem`
    /// or in tables).
    pub fn flush(
        opts: &Options,
        mem: Arc<MemTable>,
        path_id: u32,
        log_number: Option<u64>,
        reason: Reason,
    ) -> Plan {
        Plan {
            action: Action::Rewrite,
            inputs: vec![Input::Memtable(mem)],
            outputs: vec![OutputStream::for_level(
                opts,
                0,
                path_id,
                Partitioning::Fixed { target: u64::MAX },
            )],
            routing: Routing::single(),
            bottommost: false,
            log_number,
            reason,
            range: None,
        }
    }

    /// The files of every input run, newest run first.
    pub fn input_files(&self) -> impl Iterator<Item = (usize, &Arc<FileMetaData>)> {
        self.inputs.iter().flat_map(|i| match i {
            Input::Files { level, files } => files.iter().map(move |f| (*level, f)).collect(),
            Input::Memtable(_) => Vec::new(),
        })
    }

    /// The level of the first input run (the level being compacted); `None` for a
    /// flush.
    #[cfg(test)]
    pub fn start_level(&self) -> Option<usize> {
        self.inputs.iter().find_map(|i| match i {
            Input::Files { level, .. } => Some(*level),
            Input::Memtable(_) => None,
        })
    }

    /// The files of the input run at `level` (empty if none).
    #[cfg(test)]
    pub fn files_at(&self, level: usize) -> &[Arc<FileMetaData>] {
        self.inputs
            .iter()
            .find_map(|i| match i {
                Input::Files { level: l, files } if *l == level => Some(files.as_slice()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// The smallest and largest user key over every input file; `None` if the plan has
    /// no input files (a flush).
    pub fn user_key_range(&self) -> Option<(&[u8], &[u8])> {
        self.input_files().fold(None, |acc, (_, f)| {
            let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
            Some(match acc {
                None => (lo, hi),
                Some((a, b)) => (a.min(lo), b.max(hi)),
            })
        })
    }

    /// Total bytes of every input file.
    #[cfg(test)]
    pub fn input_bytes(&self) -> u64 {
        self.input_files()
            .fold(0u64, |acc, (_, f)| acc.saturating_add(f.size))
    }

    /// The deepest level the plan writes (`None` for a plan with no output): the
    /// level a job's reads are charged to, and the one a compaction filter is told.
    pub fn deepest_output_level(&self) -> Option<usize> {
        self.outputs.iter().map(|s| s.level).max()
    }

    /// Each output stream's level, column group and the user keys `[lo, hi]` it may
    /// write there: the plan's input range cut to the stream's bounds. A flush (no
    /// input files) and a stream whose bounds miss the input range have none. What
    /// `Busy` holds while the plan runs. For a bounded stream the range is inclusive
    /// of the key just past its half-open end: a conservative hold.
    pub fn stream_ranges(&self) -> Vec<OutputRange> {
        let Some((lo, hi)) = self.user_key_range() else {
            return Vec::new();
        };
        self.outputs
            .iter()
            .filter_map(|s| {
                let (mut a, mut b) = (lo, hi);
                if let Some(bounds) = &s.bounds {
                    if let Some(start) = bounds.start.as_deref() {
                        a = a.max(start);
                    }
                    if let Some(end) = bounds.end.as_deref() {
                        b = b.min(end);
                    }
                }
                (a <= b).then(|| OutputRange {
                    level: s.level,
                    group: s.column_group,
                    lo: a.to_vec(),
                    hi: b.to_vec(),
                })
            })
            .collect()
    }
}
