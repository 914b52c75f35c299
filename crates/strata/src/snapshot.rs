//! Snapshots: a sequence number pinned so that compaction keeps what it can see.
//!
//! A [`Snapshot`] is cheap to clone; the pin is released when the last clone drops.
//! Compaction asks [`SnapshotList::sequences`] for the live snapshot sequence numbers and
//! keeps, for each key, the newest version visible to each of them (see
//! `compaction::gc`).

use crate::key::SequenceNumber;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// The set of live snapshots: sequence number → number of handles.
///
/// Concurrency: internally locked; the lock is held only for map updates, never for I/O.
#[derive(Default, Debug)]
pub struct SnapshotList {
    live: Mutex<BTreeMap<SequenceNumber, usize>>,
}

impl SnapshotList {
    /// Pins the sequence number `seq()` returns and returns its handle. `seq` runs
    /// under the list's lock, so a compaction that samples [`Self::sequences`]
    /// concurrently either sees this snapshot or ran before its number was read: every
    /// version the compaction can drop is then older than a newer version at or below
    /// the snapshot's number. (Reading the number first and pinning it afterwards let a
    /// compaction picked in between drop a version the snapshot needs.)
    pub fn acquire(self: &Arc<Self>, seq: impl FnOnce() -> SequenceNumber) -> Snapshot {
        let mut live = self.live.lock();
        let seq = seq();
        *live.entry(seq).or_insert(0) += 1;
        drop(live);
        Snapshot {
            inner: Arc::new(SnapshotInner {
                seq,
                list: Arc::clone(self),
            }),
        }
    }

    /// Live snapshot sequence numbers, ascending.
    pub fn sequences(&self) -> Vec<SequenceNumber> {
        self.live.lock().keys().copied().collect()
    }

    fn release(&self, seq: SequenceNumber) {
        let mut live = self.live.lock();
        if let Some(n) = live.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                live.remove(&seq);
            }
        }
    }
}

struct SnapshotInner {
    seq: SequenceNumber,
    list: Arc<SnapshotList>,
}

impl Drop for SnapshotInner {
    fn drop(&mut self) {
        self.list.release(self.seq);
    }
}

/// A consistent point-in-time view of the database: reads through
/// [`crate::ReadOptions::snapshot`] see exactly the writes acknowledged before it was
/// taken. Released when the last clone is dropped.
#[derive(Clone)]
pub struct Snapshot {
    inner: Arc<SnapshotInner>,
}

impl Snapshot {
    /// The pinned sequence number.
    pub fn sequence(&self) -> SequenceNumber {
        self.inner.seq
    }
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Snapshot({})", self.inner.seq)
    }
}
