//! The clipping adapter: a view of an iterator restricted to a user-key range.
//!
//! [`ClippedIterator`] shows only the entries of its inner iterator whose user key lies in
//! `[lo, hi]`, both bounds inclusive, with user keys compared bytewise as
//! [`compare_internal`](key::compare_internal) does. [`ClippedIterator::with_upper`]
//! takes the upper bound as an [`Upper`] instead: inclusive, exclusive (`[lo, end)`, the
//! half-open ranges of range tombstones and of a job's key range) or none (`[lo, ∞)`).
//! Below, "`k <= hi`" stands for "`k` is under the upper bound".
//!
//! # Contract additions (to [`crate::iter`])
//! 1. **Bounded on both sides, in both directions.** `seek_to_first` lands on the first
//!    entry whose user key is `>= lo`, `seek_to_last` on the last whose user key is
//!    `<= hi`. `seek` to a target whose user key is below `lo` acts as `seek_to_first`, and
//!    `seek_for_prev` to one above `hi` as `seek_to_last`. A move that leaves the range
//!    makes the iterator invalid with an `Ok` status: the range is exhausted. The range
//!    holds *every* entry of `lo` and of `hi`, whatever its sequence number and kind,
//!    including the range-tombstone bound `(lo, MAX_SEQUENCE, RangeDelete)` that sorts
//!    before every point entry of `lo`.
//! 2. **Empty ranges.** `lo > hi` is the empty range: no operation makes the iterator
//!    valid.
//! 3. **Targets outside the range.** `seek` to a target whose user key is above `hi` and
//!    `seek_for_prev` to one below `lo` leave the iterator invalid without moving the
//!    inner iterator. No entry of the range can answer, so nothing is read.
//! 4. **Errors** are the inner iterator's. It is invalid once it fails, and so is the
//!    adapter; `status()` is the inner `status()` (sticky as the inner one is).
//! 5. `key()` / `value()` are the inner iterator's slices, valid until the next move.
//!    `next` / `prev` require `valid()`. Called on an invalid adapter, they do nothing
//!    and leave it invalid (debug builds assert). So the inner iterator is never stepped
//!    back into the range from outside it.
//!
//! # Design
//! The two bounds are kept as internal keys that bracket the range:
//! - `lo` with the trailer `u64::MAX` is the smallest internal key of user key `lo`.
//!   It sorts before `(lo, MAX_SEQUENCE, RangeDelete)`, the largest trailer a well-formed
//!   key has, and also before any kind appended later.
//! - `hi` with the trailer `0`, i.e. `(hi, 0, Delete)`, is the largest internal key of
//!   user key `hi`. An exclusive `end` is kept as `end` with the trailer `u64::MAX`,
//!   which sorts before every entry of `end` (and after every entry of a smaller user
//!   key); no upper bound keeps no key.
//!
//! So `seek_to_first` is the inner `seek` to the first, and `seek_to_last` the inner
//! `seek_for_prev` to the second (the inner `seek_to_last` without an upper bound).
//!
//! After every move the adapter checks the inner iterator's validity and both bounds
//! (two user-key comparisons) and caches the answer, so `valid()` reads one flag.
//! A move forward could only cross `hi` and a move backward only `lo`, if the inner
//! order holds. Checking both costs one more comparison and keeps the guarantee, "only
//! entries in `[lo, hi]`", even when a corrupt source breaks that order.
//!
//! # Malformed keys
//! An inner key shorter than the 8-byte trailer is classified by [`key::user_key`] as
//! the empty user key. That is the same split
//! [`compare_internal`](key::compare_internal) orders by, so the classification agrees
//! with where the inner iterator's order puts the key: it is in range only when `lo` is
//! empty. Targets are treated the same way. Like the other
//! adapters ([`super::MergingIterator`], [`super::LevelIterator`]), this one does not
//! validate keys. Sources do: a table iterator turns a malformed key into a corruption
//! error, and memtables hold only keys the write path built.

use super::InternalIterator;
use crate::error::Result;
use crate::key::{self, ValueKind};

/// The upper bound of a [`ClippedIterator`]'s user-key range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Upper<'a> {
    /// Up to and including this user key.
    Included(&'a [u8]),
    /// Up to but excluding this user key.
    Excluded(&'a [u8]),
    /// No upper bound.
    Unbounded,
}

/// An upper bound as kept: the internal key `seek_to_last` seeks before (see the
/// module docs), and whether the bound's own user key is in range.
#[derive(Debug)]
enum Hi {
    Bounded { key: Vec<u8>, inclusive: bool },
    Unbounded,
}

/// An iterator restricted to the entries whose user key lies in `[lo, hi]`; see the
/// module docs for the contract.
pub struct ClippedIterator<I> {
    inner: I,
    /// `lo` followed by the trailer `u64::MAX`: sorts before every entry of `lo`.
    lo: Vec<u8>,
    /// `(hi, 0, Delete)` (inclusive), `(end, u64::MAX)` (exclusive), or nothing.
    hi: Hi,
    /// True iff the inner iterator was valid, at a key in range, after the last move.
    in_range: bool,
}

impl<I: InternalIterator> ClippedIterator<I> {
    /// A view of `inner` holding only the entries whose user key `k` satisfies
    /// `lo <= k <= hi` (empty if `lo > hi`). Unpositioned until a seek; does not move
    /// `inner`.
    pub fn new(inner: I, lo: &[u8], hi: &[u8]) -> ClippedIterator<I> {
        Self::with_upper(inner, lo, Upper::Included(hi))
    }

    /// A view of `inner` holding only the entries whose user key `k` satisfies
    /// `lo <= k` and is under `upper` (empty if no key is). Unpositioned until a seek;
    /// does not move `inner`.
    pub fn with_upper(inner: I, lo: &[u8], upper: Upper<'_>) -> ClippedIterator<I> {
        let hi = match upper {
            Upper::Included(hi) => {
                let mut key = Vec::with_capacity(hi.len() + key::TRAILER_LEN);
                key::append_internal_key(&mut key, hi, 0, ValueKind::Delete);
                Hi::Bounded {
                    key,
                    inclusive: true,
                }
            }
            Upper::Excluded(end) => Hi::Bounded {
                key: max_trailer(end),
                inclusive: false,
            },
            Upper::Unbounded => Hi::Unbounded,
        };
        ClippedIterator {
            inner,
            lo: max_trailer(lo),
            hi,
            in_range: false,
        }
    }

    fn lo_user_key(&self) -> &[u8] {
        key::user_key(&self.lo)
    }

    /// True iff user key `k` is under the upper bound.
    fn below_hi(&self, k: &[u8]) -> bool {
        match &self.hi {
            Hi::Bounded {
                key,
                inclusive: true,
            } => k <= key::user_key(key),
            Hi::Bounded { key, .. } => k < key::user_key(key),
            Hi::Unbounded => true,
        }
    }

    /// Recomputes the cached `in_range` after a move of the inner iterator.
    fn settle(&mut self) {
        self.in_range = self.inner.valid() && {
            let k = key::user_key(self.inner.key());
            self.lo_user_key() <= k && self.below_hi(k)
        };
    }
}

/// `user_key` followed by the trailer `u64::MAX`: sorts before every internal key of
/// `user_key` and after every internal key of a smaller user key.
fn max_trailer(user_key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(user_key.len() + key::TRAILER_LEN);
    k.extend_from_slice(user_key);
    k.extend_from_slice(&u64::MAX.to_le_bytes());
    k
}

impl<I: InternalIterator> InternalIterator for ClippedIterator<I> {
    fn valid(&self) -> bool {
        self.in_range
    }

    fn seek_to_first(&mut self) {
        self.inner.seek(&self.lo);
        self.settle();
    }

    fn seek_to_last(&mut self) {
        match &self.hi {
            Hi::Bounded { key, .. } => self.inner.seek_for_prev(key),
            Hi::Unbounded => self.inner.seek_to_last(),
        }
        self.settle();
    }

    fn seek(&mut self, target: &[u8]) {
        let k = key::user_key(target);
        if k < self.lo_user_key() {
            self.seek_to_first();
        } else if !self.below_hi(k) {
            self.in_range = false;
        } else {
            self.inner.seek(target);
            self.settle();
        }
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        let k = key::user_key(target);
        if !self.below_hi(k) {
            self.seek_to_last();
        } else if k < self.lo_user_key() {
            self.in_range = false;
        } else {
            self.inner.seek_for_prev(target);
            self.settle();
        }
    }

    fn next(&mut self) {
        debug_assert!(self.valid(), "next() requires valid()");
        if !self.valid() {
            return;
        }
        self.inner.next();
        self.settle();
    }

    fn prev(&mut self) {
        debug_assert!(self.valid(), "prev() requires valid()");
        if !self.valid() {
            return;
        }
        self.inner.prev();
        self.settle();
    }

    fn key(&self) -> &[u8] {
        debug_assert!(self.valid(), "key() requires valid()");
        self.inner.key()
    }

    fn value(&self) -> &[u8] {
        debug_assert!(self.valid(), "value() requires valid()");
        self.inner.value()
    }

    fn status(&self) -> Result<()> {
        self.inner.status()
    }
}

#[cfg(test)]
mod tests;
