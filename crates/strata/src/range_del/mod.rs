//! Range tombstones: `delete_range(start, end)` deletes every key in `[start, end)`
//! older than the tombstone, as RocksDB's `DeleteRange`.
//!
//! # Representation
//! A [`RangeTombstone`] is `(start, end, seq)`. Tombstones live apart from point
//! entries: in a memtable's range-deletion list and in a table's range-deletion block
//! (`sst::range_del_block`). Readers never scan them: each source keeps its tombstones
//! *fragmented* ([`Fragments`]): cut at every start and end into non-overlapping
//! fragments, each holding the sequence numbers of the tombstones that cover it,
//! newest first. "Which tombstone covers key `k` at snapshot `s`" is then a binary
//! search over fragments and a scan of one short list (Pebble's and RocksDB's
//! fragmenter do the same).
//!
//! # Semantics
//! A point entry `(k, e)` is covered by a tombstone `(start, end, t)` iff
//! `start <= k < end` and `e < t`, for a reader whose sequence number is at least `t`.
//! A tombstone never covers an entry written after it, and never hides keys from an
//! older snapshot.
//!
//! # Invariants
//! 1. Fragments are sorted by `start`, non-empty (`start < end`) and disjoint.
//! 2. A fragment's sequence numbers are strictly descending (duplicates merged).

use crate::key::SequenceNumber;
use std::collections::BTreeMap;

/// One range deletion: user keys in `[start, end)`, entries older than `seq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeTombstone {
    /// First deleted user key.
    pub start: Vec<u8>,
    /// First user key after the range (exclusive).
    pub end: Vec<u8>,
    /// The tombstone's sequence number.
    pub seq: SequenceNumber,
}

/// A disjoint piece of the tombstones' union and the tombstones covering it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Fragment {
    pub start: Vec<u8>,
    pub end: Vec<u8>,
    /// Strictly descending.
    pub seqs: Vec<SequenceNumber>,
}

/// A set of tombstones, fragmented (module invariants 1 and 2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fragments {
    frags: Vec<Fragment>,
}

impl Fragments {
    /// Fragments `tombstones` (any order, overlaps allowed; empty ranges ignored).
    pub fn new<'a>(tombstones: impl IntoIterator<Item = &'a RangeTombstone>) -> Fragments {
        let mut ts: Vec<&RangeTombstone> =
            tombstones.into_iter().filter(|t| t.start < t.end).collect();
        if ts.is_empty() {
            return Fragments::default();
        }
        ts.sort_by(|a, b| a.start.cmp(&b.start));
        let mut points: Vec<&[u8]> = ts
            .iter()
            .flat_map(|t| [t.start.as_slice(), t.end.as_slice()])
            .collect();
        points.sort_unstable();
        points.dedup();
        // Sweep: `active` holds (end, seq) of the tombstones open at the current point.
        let mut active: BTreeMap<(&[u8], SequenceNumber), usize> = BTreeMap::new();
        let mut next = 0usize;
        let mut frags: Vec<Fragment> = Vec::new();
        for w in points.windows(2) {
            let (&lo, &hi) = match w {
                [lo, hi] => (lo, hi),
                _ => continue,
            };
            while let Some(t) = ts.get(next).filter(|t| t.start.as_slice() <= lo) {
                *active.entry((t.end.as_slice(), t.seq)).or_insert(0) += 1;
                next += 1;
            }
            active.retain(|(end, _), _| *end > lo);
            if active.is_empty() {
                continue;
            }
            let mut seqs: Vec<SequenceNumber> = active.keys().map(|&(_, s)| s).collect();
            seqs.sort_unstable_by(|a, b| b.cmp(a));
            seqs.dedup();
            // Merge with the previous fragment when it touches and has the same seqs.
            match frags.last_mut() {
                Some(prev) if prev.end.as_slice() == lo && prev.seqs == seqs => {
                    prev.end = hi.to_vec();
                }
                _ => frags.push(Fragment {
                    start: lo.to_vec(),
                    end: hi.to_vec(),
                    seqs,
                }),
            }
        }
        Fragments { frags }
    }

    /// Builds from fragments already satisfying the invariants (a table's block).
    pub(crate) fn from_fragments(frags: Vec<Fragment>) -> Fragments {
        Fragments { frags }
    }

    /// True iff there is no tombstone.
    pub fn is_empty(&self) -> bool {
        self.frags.is_empty()
    }

    /// The fragments, in key order.
    pub(crate) fn fragments(&self) -> &[Fragment] {
        &self.frags
    }

    /// Number of (fragment, sequence number) pairs: the tombstones as stored.
    pub fn len(&self) -> usize {
        self.frags.iter().map(|f| f.seqs.len()).sum()
    }

    /// The fragment containing `key`, if any.
    fn fragment(&self, key: &[u8]) -> Option<&Fragment> {
        let i = self.frags.partition_point(|f| f.end.as_slice() <= key);
        self.frags.get(i).filter(|f| f.start.as_slice() <= key)
    }

    /// The largest sequence number `<= read_seq` of a tombstone covering `key`, or 0
    /// (no visible tombstone covers it; 0 is below every real entry).
    pub fn max_covering(&self, key: &[u8], read_seq: SequenceNumber) -> SequenceNumber {
        self.fragment(key)
            .and_then(|f| f.seqs.iter().copied().find(|&s| s <= read_seq))
            .unwrap_or(0)
    }

    /// True iff a tombstone covering `key` has a sequence number in `(seq, upper]`
    /// (`upper = None`: unbounded): the entry `(key, seq)` is deleted for every reader
    /// that sees any version in that interval.
    pub fn covers_within(
        &self,
        key: &[u8],
        seq: SequenceNumber,
        upper: Option<SequenceNumber>,
    ) -> bool {
        self.fragment(key).is_some_and(|f| {
            f.seqs
                .iter()
                .any(|&s| s > seq && upper.is_none_or(|u| s <= u))
        })
    }

    /// True iff every user key in `[lo, hi]` (`[lo, hi)` if `!hi_inclusive`) lies in a
    /// fragment holding a sequence number that `qualifies` accepts: the fragments
    /// covering the range touch end to start, with no gap. An empty range is not
    /// covered. Cost: a binary search, then one step per fragment inside the range.
    pub fn covers_range(
        &self,
        lo: &[u8],
        hi: &[u8],
        hi_inclusive: bool,
        qualifies: impl Fn(SequenceNumber) -> bool,
    ) -> bool {
        if hi < lo || (hi == lo && !hi_inclusive) {
            return false;
        }
        let mut i = self.frags.partition_point(|f| f.end.as_slice() <= lo);
        // Every key below `at` is known to be covered.
        let mut at = lo;
        while let Some(f) = self.frags.get(i) {
            if f.start.as_slice() > at || !f.seqs.iter().any(|&s| qualifies(s)) {
                return false;
            }
            let past_hi = if hi_inclusive {
                f.end.as_slice() > hi
            } else {
                f.end.as_slice() >= hi
            };
            if past_hi {
                return true;
            }
            at = f.end.as_slice();
            i += 1;
        }
        false
    }

    /// The part of these fragments inside `[lo, hi)` (`None`: unbounded).
    pub fn clip(&self, lo: Option<&[u8]>, hi: Option<&[u8]>) -> Fragments {
        let frags = self
            .frags
            .iter()
            .filter_map(|f| {
                let start = match lo {
                    Some(l) if l > f.start.as_slice() => l,
                    _ => f.start.as_slice(),
                };
                let end = match hi {
                    Some(h) if h < f.end.as_slice() => h,
                    _ => f.end.as_slice(),
                };
                (start < end).then(|| Fragment {
                    start: start.to_vec(),
                    end: end.to_vec(),
                    seqs: f.seqs.clone(),
                })
            })
            .collect();
        Fragments { frags }
    }

    /// These fragments with the single user key `key` taken out of every tombstone
    /// older than `below` (sequence number `< below`): the fragment holding `key` is
    /// cut into `[start, key)`, `[key, key\0)` keeping only the newer tombstones, and
    /// `[key\0, end)` (`key\0` being the first user key after `key`). Unchanged if no
    /// such tombstone covers `key`.
    pub(crate) fn punch(&self, key: &[u8], below: SequenceNumber) -> Fragments {
        let i = self.frags.partition_point(|f| f.end.as_slice() <= key);
        let Some(f) = self
            .frags
            .get(i)
            .filter(|f| f.start.as_slice() <= key && f.seqs.iter().any(|&s| s < below))
        else {
            return self.clone();
        };
        let after: Vec<u8> = [key, &[0]].concat();
        let piece = |start: &[u8], end: &[u8], seqs: Vec<SequenceNumber>| {
            (start < end && !seqs.is_empty()).then(|| Fragment {
                start: start.to_vec(),
                end: end.to_vec(),
                seqs,
            })
        };
        let newer: Vec<SequenceNumber> = f.seqs.iter().copied().filter(|&s| s >= below).collect();
        let cut = [
            piece(&f.start, key, f.seqs.clone()),
            piece(key, after.as_slice().min(f.end.as_slice()), newer),
            piece(&after, &f.end, f.seqs.clone()),
        ];
        let mut frags = Vec::with_capacity(self.frags.len() + 2);
        frags.extend_from_slice(self.frags.get(..i).unwrap_or_default());
        frags.extend(cut.into_iter().flatten());
        frags.extend_from_slice(self.frags.get(i + 1..).unwrap_or_default());
        Fragments { frags }
    }

    /// Where the tombstones inside `[lo, hi)` end (at most `hi`), or `None` if there
    /// are none. A binary search; allocates nothing.
    pub fn end_within<'a>(&'a self, lo: Option<&[u8]>, hi: &'a [u8]) -> Option<&'a [u8]> {
        let i = self.frags.partition_point(|f| f.start.as_slice() < hi);
        let f = self.frags.get(i.checked_sub(1)?)?;
        if lo.is_some_and(|l| f.end.as_slice() <= l) {
            return None;
        }
        Some(f.end.as_slice().min(hi))
    }

    /// Keeps, per fragment, only the sequence numbers `keep(fragment index, seq)`
    /// accepts, asked newest first within a fragment (fragments left with none
    /// disappear).
    pub(crate) fn retain_seqs(
        &self,
        mut keep: impl FnMut(usize, SequenceNumber) -> bool,
    ) -> Fragments {
        let frags = self
            .frags
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let seqs: Vec<SequenceNumber> =
                    f.seqs.iter().copied().filter(|&s| keep(i, s)).collect();
                (!seqs.is_empty()).then(|| Fragment {
                    start: f.start.clone(),
                    end: f.end.clone(),
                    seqs,
                })
            })
            .collect();
        Fragments { frags }
    }

    /// Every stored tombstone, in key order, newest first within a fragment.
    pub fn tombstones(&self) -> impl Iterator<Item = RangeTombstone> + '_ {
        self.frags.iter().flat_map(|f| {
            f.seqs.iter().map(|&seq| RangeTombstone {
                start: f.start.clone(),
                end: f.end.clone(),
                seq,
            })
        })
    }
}

impl RangeTombstone {
    /// A tombstone from string bounds (tests).
    #[cfg(test)]
    pub(crate) fn of(start: &str, end: &str, seq: SequenceNumber) -> RangeTombstone {
        RangeTombstone {
            start: start.as_bytes().to_vec(),
            end: end.as_bytes().to_vec(),
            seq,
        }
    }
}

#[cfg(test)]
mod tests;
