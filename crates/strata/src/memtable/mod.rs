//! The memtable: the sorted in-memory buffer that receives every write before it is
//! flushed to an L0 table.
//!
//! # Role
//! The write path applies each batch record with [`MemTable::add`] after the batch
//! reached the WAL; with pipelined writes, several write groups do so at once. Reads
//! call [`MemTable::get`] and merge [`MemTable::iter`] with the table iterators.
//! Lifecycle: created empty → active (writers and readers) → immutable once switched out
//! (readers and the flush job only) → dropped when the last `Arc<MemTable>` and the last [`MemTableIterator`] go away; all of
//! its memory is released at once.
//!
//! Entries are internal keys ([`crate::key`]): the user key plus the `(seq << 8) | kind`
//! trailer, ordered by [`crate::key::compare_internal`], so the versions of one user key are
//! adjacent, newest first.
//!
//! # Invariants
//! 1. `(seq, user_key)` pairs are unique, so internal keys are unique (the caller assigns
//!    distinct sequence numbers within and across batches).
//! 2. Entries are never removed or modified; a delete is a new [`ValueKind::Delete`] entry.
//!    A range tombstone ([`ValueKind::RangeDelete`]) is not a skiplist entry: it goes to
//!    the memtable's range-deletion list. Its fragments ([`MemTable::range_dels`]) are
//!    rebuilt lazily, by the first read after a tombstone was added, so a burst of
//!    range deletions costs O(1) each and reads stay a binary search.
//! 3. Slices handed out by [`MemTable::get`] and [`MemTableIterator`] point into the
//!    memtable's arena and stay valid while the borrow (respectively the iterator's `Arc`)
//!    lives.
//!
//! # Concurrency
//! `MemTable` is `Send + Sync` and shared as `Arc<MemTable>`. Any number of threads may
//! call [`MemTable::add`] at once (they share a mutex only for the node allocation).
//! Readers (`get`, iterators, the counters) take no lock and may run concurrently with
//! the writers; they see every entry whose `add` returned before they started, and
//! possibly some later ones. Which entries a *database* read may see is decided by
//! sequence number, not by what is in the memtable (`db/write.rs`). The publication and
//! concurrent-insert arguments live in the `skiplist` module docs.
//!
//! # See also
//! `memtable/skiplist.rs` (layout, the unsafe code and its ordering proof),
//! `memtable/arena.rs` (node memory),
//! `memtable/tests.rs` (model-based tests and the concurrent reader test).

mod arena;
mod iter;
mod skiplist;
#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering as MemOrder};
use std::sync::Arc;

use crate::key::{self, pack_trailer, LookupKey, SequenceNumber, ValueKind};
use crate::memory_budget::MemoryBudget;
use crate::range_del::{Fragments, RangeTombstone};
use arc_swap::ArcSwap;
use parking_lot::Mutex;
use std::sync::atomic::AtomicBool;

pub use iter::MemTableIterator;
use skiplist::SkipList;

/// Sentinel of [`MemTable::smallest_seq`] meaning "no entry yet".
const NO_SEQ: u64 = u64::MAX;

/// A sorted, concurrently readable in-memory table of internal-key entries.
pub struct MemTable {
    /// The index holding every entry.
    list: SkipList,
    /// Number of entries. Raised by writers after their insert, read by anyone.
    len: AtomicUsize,
    /// Arena bytes used by nodes (keys, values, towers, headers). Raised by writers.
    memory: AtomicUsize,
    /// Smallest sequence number added, or `NO_SEQ`. Lowered by writers before their
    /// insert becomes visible.
    smallest_seq: AtomicU64,
    /// Range tombstones added, in arrival order; writers and rebuilding readers
    /// serialise here.
    range_list: Mutex<Vec<RangeTombstone>>,
    /// `range_list` fragmented as of the last rebuild (readers load it lock-free).
    range_frags: ArcSwap<Fragments>,
    /// True once a range tombstone was added: the read path's one check when none was.
    has_range_dels: AtomicBool,
    /// True while `range_frags` lacks a tombstone of `range_list`. Set by writers
    /// (under the list's lock, after the push), cleared by the rebuild (under it too).
    range_stale: AtomicBool,
}

/// Result of [`MemTable::get`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemGet<'a> {
    /// The memtable holds no version of the key visible at the lookup's sequence number;
    /// older sources must be consulted.
    NotFound,
    /// The newest visible version is a tombstone (at this sequence number): the key
    /// does not exist at that snapshot.
    Deleted(SequenceNumber),
    /// The newest visible version is a `Put` with this sequence number and value. The
    /// slice borrows the memtable.
    Found(SequenceNumber, &'a [u8]),
    /// The newest visible version is a merge operand (at this sequence number): the
    /// caller walks the key's chain (`merge::chain::collect` over
    /// [`MemTable::iter`]).
    Merge(SequenceNumber),
}

impl Default for MemTable {
    fn default() -> Self {
        MemTable::new()
    }
}

impl fmt::Debug for MemTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemTable")
            .field("len", &self.len())
            .field("memory", &self.approximate_memory_usage())
            .field("smallest_seqno", &self.smallest_seqno())
            .finish()
    }
}

impl MemTable {
    /// An empty memtable.
    pub fn new() -> MemTable {
        MemTable::charged(None)
    }

    /// An empty memtable whose memory is charged to `budget` (`memory_budget`).
    pub fn charged(budget: Option<&MemoryBudget>) -> MemTable {
        MemTable {
            list: SkipList::charged(budget.map(MemoryBudget::charge)),
            len: AtomicUsize::new(0),
            memory: AtomicUsize::new(SkipList::head_size()),
            smallest_seq: AtomicU64::new(NO_SEQ),
            range_list: Mutex::new(Vec::new()),
            range_frags: ArcSwap::from_pointee(Fragments::default()),
            has_range_dels: AtomicBool::new(false),
            range_stale: AtomicBool::new(false),
        }
    }

    /// Adds the entry `(user_key, seq, kind) -> value`. For `Delete`, `value` is normally
    /// empty (it is stored as given).
    ///
    /// Requires: `(seq, user_key)` was not added before and is not being added by
    /// another thread (debug-asserted); `seq <= key::MAX_SEQUENCE`. Other writers and
    /// readers may run concurrently; readers see the entry once `add` returns.
    ///
    /// A [`ValueKind::RangeDelete`] is the tombstone `[user_key, value)`.
    pub fn add(&self, seq: SequenceNumber, kind: ValueKind, user_key: &[u8], value: &[u8]) {
        self.smallest_seq.fetch_min(seq, MemOrder::Relaxed);
        if kind == ValueKind::RangeDelete {
            return self.add_range_del(seq, user_key, value);
        }
        let bytes = self.list.insert(user_key, pack_trailer(seq, kind), value);
        self.memory.fetch_add(bytes, MemOrder::Relaxed);
        self.len.fetch_add(1, MemOrder::Relaxed);
    }

    fn add_range_del(&self, seq: SequenceNumber, start: &[u8], end: &[u8]) {
        let mut list = self.range_list.lock();
        list.push(RangeTombstone {
            start: start.to_vec(),
            end: end.to_vec(),
            seq,
        });
        // Set before the caller publishes `seq`, so a reader that may see the
        // tombstone finds them set (the sequence publication orders them) and
        // rebuilds the fragments before using them.
        self.range_stale.store(true, MemOrder::Release);
        self.has_range_dels.store(true, MemOrder::Release);
        drop(list);
        let bytes = start.len() + end.len() + std::mem::size_of::<RangeTombstone>();
        self.memory.fetch_add(bytes, MemOrder::Relaxed);
        self.len.fetch_add(1, MemOrder::Relaxed);
    }

    /// The fragmented range tombstones, or `None` if none was added (the cheap check
    /// every read makes).
    pub fn range_dels(&self) -> Option<Arc<Fragments>> {
        if !self.has_range_dels.load(MemOrder::Acquire) {
            return None;
        }
        if self.range_stale.load(MemOrder::Acquire) {
            let list = self.range_list.lock();
            if self.range_stale.load(MemOrder::Acquire) {
                self.range_frags
                    .store(Arc::new(Fragments::new(list.iter())));
                self.range_stale.store(false, MemOrder::Release);
            }
        }
        Some(self.range_frags.load_full())
    }

    /// Looks up the newest entry for `lookup.user_key()` with sequence number
    /// `<= lookup`'s sequence. Allocates nothing. The returned value borrows `self`.
    /// Range tombstones are not consulted here (see [`MemTable::range_dels`]).
    pub fn get(&self, lookup: &LookupKey) -> MemGet<'_> {
        let Some((ikey, value)) = self.list.seek_entry(lookup.internal_key()) else {
            return MemGet::NotFound;
        };
        if key::user_key(ikey) != lookup.user_key() {
            return MemGet::NotFound;
        }
        let Some(p) = key::parse_internal_key(ikey) else {
            // Unreachable: `add` only writes valid kinds.
            return MemGet::NotFound;
        };
        match p.kind {
            ValueKind::Put => MemGet::Found(p.seq, value),
            ValueKind::Merge => MemGet::Merge(p.seq),
            ValueKind::Delete => MemGet::Deleted(p.seq),
            // Unreachable: range tombstones are not skiplist entries.
            ValueKind::RangeDelete => MemGet::NotFound,
        }
    }

    /// The sequence number of the newest entry (of any kind) for `lookup.user_key()`
    /// with sequence number `<= lookup`'s sequence, or `None` if there is none. For the
    /// commit-time conflict check of transactions (`db/conflict.rs`).
    pub fn newest_sequence(&self, lookup: &LookupKey) -> Option<SequenceNumber> {
        let (ikey, _) = self.list.seek_entry(lookup.internal_key())?;
        let entry = key::parse_internal_key(ikey)?;
        (entry.user_key == lookup.user_key()).then_some(entry.seq)
    }

    /// An unpositioned iterator over all entries; it keeps the memtable alive.
    pub fn iter(self: &Arc<Self>) -> MemTableIterator {
        MemTableIterator::new(Arc::clone(self))
    }

    /// Bytes used by entries: keys, values, and per-node overhead (header and tower,
    /// alignment included), plus the fixed head node. Excludes unused arena space.
    pub fn approximate_memory_usage(&self) -> usize {
        self.memory.load(MemOrder::Relaxed)
    }

    /// Number of entries and range tombstones added.
    pub fn len(&self) -> usize {
        self.len.load(MemOrder::Relaxed)
    }

    /// True iff no entry has been added.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The smallest sequence number added, or `None` if nothing was added.
    pub fn smallest_seqno(&self) -> Option<u64> {
        match self.smallest_seq.load(MemOrder::Relaxed) {
            NO_SEQ => None,
            s => Some(s),
        }
    }
}
