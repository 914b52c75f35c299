//! Snapshot filters (Kim et al., "HTAP amplifies I/O in LSM-trees", §V): skip every
//! table whose smallest sequence number is newer than the reader's snapshot.
//!
//! A read at snapshot `S` can only see entries with sequence `<= S`. A table whose
//! *smallest* sequence number is `> S` therefore holds nothing the read may return, and
//! probing it (bloom filter, index, data block) is wasted work. Long-lived analytical
//! snapshots under a write-heavy load make such tables common: everything flushed or
//! compacted-from-fresh-data since the snapshot was taken.
//!
//! Seam: the read path asks [`SnapshotFilter::skips`] once per candidate table, after
//! the fence-pointer (key range) check and before the bloom filter; level iterators ask
//! it when they move onto a file. The minimum sequence number lives in
//! [`FileMetaData::smallest_seqno`], in memory in every version, so the check costs no
//! I/O.
//!
//! The same test applies to memtables (an extension beyond the paper, which filters
//! SSTables only): a memtable whose smallest sequence number is newer than the
//! snapshot, or which is empty, holds nothing the read may return, and skipping it saves
//! a skiplist search per lookup for a long-lived snapshot.
//!
//! Correctness: skipping is exact, never approximate: an entry with sequence `> S` is
//! invisible at `S` (invariant 1 of DESIGN.md), and compaction never lowers a sequence
//! number, so `smallest_seqno` is a true lower bound of the file's entries.

use crate::key::SequenceNumber;
use crate::memtable::MemTable;
use crate::stats::Statistics;
use crate::version::FileMetaData;

/// The per-read snapshot filter. Copy; build one per read.
#[derive(Clone, Copy, Debug)]
pub struct SnapshotFilter {
    /// False when the option is off: nothing is skipped.
    pub enabled: bool,
    /// The read's sequence number.
    pub seq: SequenceNumber,
}

impl SnapshotFilter {
    /// True iff `file` can hold no entry visible at `self.seq` (and the filter is on).
    /// Counts the skip in `stats`.
    #[inline]
    pub fn skips(&self, file: &FileMetaData, stats: &Statistics) -> bool {
        let skip = self.would_skip(file);
        if skip {
            Statistics::add(&stats.local().snapshot_filter_skips, 1);
        }
        skip
    }

    /// [`SnapshotFilter::skips`] without counting: for a look ahead of the reads
    /// (`db::read::multi_get`).
    #[inline]
    pub fn would_skip(&self, file: &FileMetaData) -> bool {
        self.enabled && file.smallest_seqno > self.seq
    }

    /// True iff `mem` holds no entry visible at `self.seq` (and the filter is on).
    /// Exact: a memtable publishes its smallest sequence number before the entry that
    /// carries it becomes visible, so a reader never misses an entry it may see.
    #[inline]
    pub fn skips_memtable(&self, mem: &MemTable, stats: &Statistics) -> bool {
        let skip = self.enabled && mem.smallest_seqno().is_none_or(|s| s > self.seq);
        if skip {
            Statistics::add(&stats.local().snapshot_filter_memtable_skips, 1);
        }
        skip
    }
}
