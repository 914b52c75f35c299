//! Snapshots: a sequence number pinned so that compaction keeps what it can see.
//!
//! A [`Snapshot`] is cheap to clone; the pin is released when the last clone drops.
//! Compaction asks [`SnapshotList::sequences`] for the live snapshot sequence numbers and
//! keeps, for each key, the newest version visible to each of them (see
//! `compaction::gc`).

use crate::key::SequenceNumber;
use parking_lot::{Condvar, Mutex};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// The set of live snapshots: sequence number → number of handles.
///
/// Concurrency: internally locked; the lock is held only for map updates, never for I/O.
#[derive(Default, Debug)]
pub struct SnapshotList {
    live: Mutex<Live>,
    /// Signalled when the last [`Fence`] drops.
    unfenced: Condvar,
}

#[derive(Default, Debug)]
struct Live {
    /// Sequence number → handles.
    seqs: BTreeMap<SequenceNumber, usize>,
    /// Fences held: while any is, no snapshot is taken.
    fences: usize,
}

/// Holds off new snapshots while an edit whose outputs a compaction filter changed
/// installs ([`SnapshotList::fence`]); released on drop.
pub(crate) struct Fence {
    list: Arc<SnapshotList>,
}

impl Drop for Fence {
    fn drop(&mut self) {
        let mut live = self.list.live.lock();
        live.fences -= 1;
        if live.fences == 0 {
            self.list.unfenced.notify_all();
        }
    }
}

impl SnapshotList {
    /// Pins the sequence number `seq()` returns and returns its handle. `seq` runs
    /// under the list's lock, so a compaction that samples [`Self::sequences`]
    /// concurrently either sees this snapshot or ran before its number was read: every
    /// version the compaction can drop is then older than a newer version at or below
    /// the snapshot's number. (Reading the number first and pinning it afterwards let a
    /// compaction picked in between drop a version the snapshot needs.)
    ///
    /// It waits while a `Fence` is held: a snapshot taken during the install of a
    /// filtered compaction could read entries before the install that the filter
    /// changed after it.
    pub fn acquire(self: &Arc<Self>, seq: impl FnOnce() -> SequenceNumber) -> Snapshot {
        let mut live = self.live.lock();
        while live.fences > 0 {
            self.unfenced.wait(&mut live);
        }
        let seq = seq();
        *live.seqs.entry(seq).or_insert(0) += 1;
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
        self.live.lock().seqs.keys().copied().collect()
    }

    /// A fence for installing an edit whose outputs a compaction filter changed at
    /// sequence numbers `lowest` and above, or `None` if a live snapshot can already
    /// see one of those entries (it was taken after the job sampled the snapshots: the
    /// job must be abandoned, since installing it would change that snapshot's reads).
    /// While the fence is held no snapshot is taken ([`Self::acquire`] waits), so none
    /// can appear between this check and the install. Hold it only across the install.
    pub(crate) fn fence(self: &Arc<Self>, lowest: SequenceNumber) -> Option<Fence> {
        let mut live = self.live.lock();
        if live.seqs.range(lowest..).next().is_some() {
            return None;
        }
        live.fences += 1;
        Some(Fence {
            list: Arc::clone(self),
        })
    }

    fn release(&self, seq: SequenceNumber) {
        let mut live = self.live.lock();
        if let Some(n) = live.seqs.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                live.seqs.remove(&seq);
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
