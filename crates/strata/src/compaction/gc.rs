//! Snapshot-aware version garbage collection: which entries a flush or compaction
//! keeps.
//!
//! # The rule
//! Live snapshots `s_0 < s_1 < ... < s_k` cut the sequence space into *stripes*:
//! stripe `i` holds sequence numbers in `(s_{i-1}, s_i]`, and the last stripe holds
//! everything newer than `s_k` (what a read without a snapshot sees). A reader at any
//! snapshot, or at the latest state, sees for each key only the newest version in or
//! below its stripe. So for each user key an entry survives iff it is the newest entry
//! of that key in its stripe; every other version is invisible to every possible
//! reader and is dropped.
//!
//! A tombstone may itself be dropped when (a) it lies in stripe 0 (no snapshot is older
//! than it, so no reader can need the versions it hides), and (b) the compaction is
//! *bottommost*: no older data for the key exists below the output level (otherwise
//! dropping the tombstone would resurrect those older versions).
//!
//! # Invariants
//! 1. Entries arrive in internal-key order (user key ascending, newest first).
//! 2. Sequence numbers are never rewritten (snapshot filters rely on true minima).

use crate::key::{ParsedKey, SequenceNumber, ValueKind};
use crate::range_del::Fragments;

/// Decides, entry by entry, what a flush or compaction writes.
#[derive(Debug)]
pub struct VersionGc {
    snapshots: Vec<SequenceNumber>,
    bottommost: bool,
    current_key: Vec<u8>,
    has_current: bool,
    last_stripe: usize,
    /// Entries dropped because a newer version in the same stripe shadows them.
    pub dropped_versions: u64,
    /// Tombstones dropped at the bottom.
    pub dropped_tombstones: u64,
}

impl VersionGc {
    /// `snapshots`: live snapshot sequence numbers, ascending. `bottommost`: no data for
    /// these keys lies below the output.
    pub fn new(snapshots: Vec<SequenceNumber>, bottommost: bool) -> Self {
        VersionGc {
            snapshots,
            bottommost,
            current_key: Vec::new(),
            has_current: false,
            last_stripe: 0,
            dropped_versions: 0,
            dropped_tombstones: 0,
        }
    }

    fn stripe(&self, seq: SequenceNumber) -> usize {
        self.snapshots.partition_point(|&s| s < seq)
    }

    /// True iff `seq` is newer than every live snapshot: only reads without a
    /// snapshot can see an entry there (the compaction filter's domain).
    pub fn newer_than_snapshots(&self, seq: SequenceNumber) -> bool {
        self.snapshots.last().is_none_or(|&s| seq > s)
    }

    /// True iff no snapshot is live.
    pub fn no_snapshots(&self) -> bool {
        self.snapshots.is_empty()
    }

    /// The snapshot just below the stripe of `seq`: entries at or below it belong to
    /// an older stripe (`None` for stripe 0). Merge folding stops there.
    pub fn stripe_floor(&self, seq: SequenceNumber) -> Option<SequenceNumber> {
        let stripe = self.stripe(seq);
        stripe
            .checked_sub(1)
            .and_then(|i| self.snapshots.get(i).copied())
    }

    /// The snapshot that closes the stripe of `seq` from above (`None` for the last
    /// stripe): a tombstone with a sequence number in `(seq, upper]` deletes the entry
    /// for every reader that could see it.
    pub fn stripe_upper(&self, seq: SequenceNumber) -> Option<SequenceNumber> {
        stripe_upper(&self.snapshots, seq)
    }

    /// The range tombstones worth writing: per fragment, the newest of each stripe
    /// (an older one in the same stripe hides nothing the newer does not), and none
    /// in stripe 0 of a bottommost output (nothing older is left for it to hide).
    pub fn range_dels(&self, input: &Fragments) -> Fragments {
        let mut last: Option<(usize, usize)> = None;
        input.retain_seqs(|fragment, seq| {
            let stripe = self.stripe(seq);
            // Sequence numbers arrive newest first within a fragment.
            let first_in_stripe = last != Some((fragment, stripe));
            last = Some((fragment, stripe));
            first_in_stripe && !(self.bottommost && stripe == 0)
        })
    }

    /// The user key of the last entry shown to [`VersionGc::keep`], kept or not;
    /// `None` before the first.
    pub fn current_key(&self) -> Option<&[u8]> {
        self.has_current.then_some(self.current_key.as_slice())
    }

    /// True iff the entry must be written. Requires: invariant 1.
    pub fn keep(&mut self, entry: &ParsedKey<'_>) -> bool {
        let stripe = self.stripe(entry.seq);
        if !self.has_current || entry.user_key != self.current_key.as_slice() {
            self.current_key.clear();
            self.current_key.extend_from_slice(entry.user_key);
            self.has_current = true;
        } else if stripe == self.last_stripe {
            self.dropped_versions += 1;
            return false;
        }
        self.last_stripe = stripe;
        if entry.kind == ValueKind::Delete && self.bottommost && stripe == 0 {
            self.dropped_tombstones += 1;
            return false;
        }
        true
    }
}

/// The snapshot that closes the stripe of `seq` from above among `snapshots`
/// (ascending): the oldest one at or above `seq`; `None` if `seq` is in the last
/// stripe. A tombstone whose sequence number is in `(seq, upper]` hides the entry
/// `seq` from every reader that could see it (the rule compaction applies per entry,
/// and `compaction::covered` per file).
pub fn stripe_upper(snapshots: &[SequenceNumber], seq: SequenceNumber) -> Option<SequenceNumber> {
    snapshots
        .get(snapshots.partition_point(|&s| s < seq))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(snapshots: Vec<u64>, bottom: bool, entries: &[(&[u8], u64, ValueKind)]) -> Vec<u64> {
        counted(snapshots, bottom, entries).0
    }

    /// [`run`], with the counts of dropped versions and dropped tombstones.
    fn counted(
        snapshots: Vec<u64>,
        bottom: bool,
        entries: &[(&[u8], u64, ValueKind)],
    ) -> (Vec<u64>, u64, u64) {
        let mut gc = VersionGc::new(snapshots, bottom);
        let kept = entries
            .iter()
            .filter(|(k, s, kind)| {
                gc.keep(&ParsedKey {
                    user_key: k,
                    seq: *s,
                    kind: *kind,
                })
            })
            .map(|e| e.1)
            .collect();
        (kept, gc.dropped_versions, gc.dropped_tombstones)
    }

    #[test]
    fn keeps_newest_per_stripe() {
        use ValueKind::*;
        let e: &[(&[u8], u64, ValueKind)] = &[
            (b"a", 9, Put),
            (b"a", 7, Put),
            (b"a", 5, Put),
            (b"a", 2, Put),
            (b"b", 3, Put),
        ];
        assert_eq!(run(vec![], false, e), vec![9, 3]);
        assert_eq!(run(vec![5], false, e), vec![9, 5, 3]);
        assert_eq!(run(vec![4, 8], false, e), vec![9, 7, 2, 3]);
        // The counts: every dropped version once (a mutation check found them unread).
        assert_eq!(counted(vec![], false, e).1, 3);
        assert_eq!(counted(vec![4, 8], false, e).1, 1);
    }

    #[test]
    fn tombstones_drop_only_at_bottom_in_stripe_zero() {
        use ValueKind::*;
        let e: &[(&[u8], u64, ValueKind)] = &[(b"a", 9, Delete), (b"a", 5, Put)];
        assert_eq!(run(vec![], false, e), vec![9]);
        assert_eq!(run(vec![], true, e), Vec::<u64>::new());
        assert_eq!(run(vec![6], true, e), vec![9, 5]);
        assert_eq!(run(vec![9], true, e), Vec::<u64>::new());
        assert_eq!(counted(vec![], true, e), (vec![], 1, 1));
        assert_eq!(counted(vec![], false, e), (vec![9], 1, 0));
    }

    #[test]
    fn range_tombstones_keep_the_newest_per_stripe() {
        use crate::range_del::RangeTombstone;
        let t = |seq| RangeTombstone::of("a", "k", seq);
        let input = Fragments::new(&[t(9), t(7), t(5), t(2)]);
        let seqs = |gc: &VersionGc| {
            gc.range_dels(&input)
                .tombstones()
                .map(|t| t.seq)
                .collect::<Vec<_>>()
        };
        assert_eq!(seqs(&VersionGc::new(vec![], false)), vec![9]);
        assert_eq!(seqs(&VersionGc::new(vec![6], false)), vec![9, 5]);
        assert_eq!(seqs(&VersionGc::new(vec![6], true)), vec![9]);
        assert_eq!(seqs(&VersionGc::new(vec![], true)), Vec::<u64>::new());
        let gc = VersionGc::new(vec![4, 8], false);
        assert_eq!(gc.stripe_upper(3), Some(4));
        assert_eq!(gc.stripe_upper(8), Some(8));
        assert_eq!(gc.stripe_upper(9), None);
    }

    #[test]
    fn stripe_floor_is_the_snapshot_below() {
        let gc = VersionGc::new(vec![4, 8], false);
        assert_eq!(gc.stripe_floor(1), None);
        assert_eq!(gc.stripe_floor(4), None);
        assert_eq!(gc.stripe_floor(5), Some(4));
        assert_eq!(gc.stripe_floor(8), Some(4));
        assert_eq!(gc.stripe_floor(9), Some(8));
    }
}
