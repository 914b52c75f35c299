//! The iterator over a database iterator (the *base*) with a write batch's updates (the
//! *delta*) laid over it: what a transaction, or the owner of a
//! [`WriteBatchWithIndex`], sees when it scans (RocksDB's `BaseDeltaIterator`).
//!
//! # Contract
//! As [`DbIterator`]'s (user keys, `lower_bound` inclusive and `upper_bound` exclusive,
//! both directions, `seek`, `seek_for_prev`, sticky errors through `status`), over the
//! union of the two inputs where:
//! - a key only the base holds is the base's;
//! - a key the delta puts is the delta's value, whether or not the base holds it;
//! - a key the delta deletes is hidden, whether or not the base holds it.
//!
//! # Mechanism
//! Two cursors move together in one direction: the base (a [`DbIterator`]) and the
//! delta's position, a key of the batch's index within the bounds (moved by `BTreeMap`
//! range queries, `O(log n)` a step). In the current direction the current key is the
//! nearer of the two; on a tie the delta's entry wins and both cursors step past it.
//! Deletes are skipped as they are met ([`BaseDeltaIterator::settle`]). A change of
//! direction re-seeks both cursors around the current key (the base by `seek` or
//! `seek_for_prev`, stepping off the key itself), as `DbIterator` does for its inputs.
//!
//! # Invariants
//! 1. Between calls, both cursors are past the current key in the current direction
//!    except those that stand on it (`At` says which).
//! 2. The delta cursor is always within the bounds.
//! 3. An error of the base ends the iteration: `valid()` is false and `status()` is
//!    the error, even if the delta has keys left.

use super::indexed_batch::{Entry, WriteBatchWithIndex};
use super::BatchValue;
use crate::error::Result;
use crate::DbIterator;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Bound;

/// Which cursor stands on the current key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    /// Not positioned, or exhausted.
    Nothing,
    /// The base alone.
    Base,
    /// The delta alone.
    Delta,
    /// Both; the delta's put wins.
    Both,
}

/// An iterator over a [`DbIterator`] with a [`WriteBatchWithIndex`]'s updates laid
/// over it. See the module docs for the contract; built by
/// [`WriteBatchWithIndex::iter`] and [`crate::Transaction::iter`].
///
/// It borrows the batch (which cannot change while it lives) and pins what its base
/// iterator pins.
pub struct BaseDeltaIterator<'a> {
    base: DbIterator,
    batch: &'a WriteBatchWithIndex,
    index: &'a BTreeMap<Vec<u8>, Entry>,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    /// The delta cursor: a key of `index` within the bounds, or `None` past the end in
    /// the current direction.
    delta: Option<(&'a [u8], &'a Entry)>,
    forward: bool,
    at: At,
}

impl<'a> BaseDeltaIterator<'a> {
    /// Requires: `base` was built with the bounds `lower` and `upper`; `index` is the
    /// index of `batch`'s updates of the family `base` reads.
    pub(crate) fn new(
        base: DbIterator,
        batch: &'a WriteBatchWithIndex,
        index: &'a BTreeMap<Vec<u8>, Entry>,
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
    ) -> Self {
        BaseDeltaIterator {
            base,
            batch,
            index,
            lower,
            upper,
            delta: None,
            forward: true,
            at: At::Nothing,
        }
    }

    /// True iff positioned at an entry. When false, check [`Self::status`].
    pub fn valid(&self) -> bool {
        self.at != At::Nothing
    }

    /// The current key. Requires: `valid()`. Valid until the iterator moves.
    pub fn key(&self) -> &[u8] {
        match (self.at, self.delta) {
            (At::Delta | At::Both, Some((k, _))) => k,
            _ => self.base.key(),
        }
    }

    /// The current value. Requires: `valid()`. Valid until the iterator moves.
    pub fn value(&self) -> &[u8] {
        match (self.at, self.delta) {
            (At::Delta | At::Both, Some((_, e))) => match self.batch.value(e) {
                BatchValue::Put(v) => v,
                // `settle` never stops on a delete.
                BatchValue::Delete => &[],
            },
            _ => self.base.value(),
        }
    }

    /// The base iterator's first error (sticky). An invalid iterator with `Ok` status
    /// is exhausted.
    pub fn status(&self) -> Result<()> {
        self.base.status()
    }

    /// Positions at the first key `>= target` (and `>= lower_bound`).
    pub fn seek(&mut self, target: &[u8]) {
        self.forward = true;
        self.base.seek(target);
        let from = match self.lower.as_deref() {
            Some(l) if target < l => l,
            _ => target,
        };
        self.delta = self.delta_after(Bound::Included(from));
        self.settle();
    }

    /// Positions at the last key `<= target` (and `< upper_bound`).
    pub fn seek_for_prev(&mut self, target: &[u8]) {
        self.forward = false;
        self.base.seek_for_prev(target);
        self.delta = self.delta_before(Bound::Included(target));
        self.settle();
    }

    /// Positions at the first key (within the bounds).
    pub fn seek_to_first(&mut self) {
        self.forward = true;
        self.base.seek_to_first();
        self.delta = self.delta_after(Bound::Unbounded);
        self.settle();
    }

    /// Positions at the last key (within the bounds).
    pub fn seek_to_last(&mut self) {
        self.forward = false;
        self.base.seek_to_last();
        self.delta = self.delta_before(Bound::Unbounded);
        self.settle();
    }

    /// Moves to the next key. Requires: `valid()`.
    pub fn next(&mut self) {
        self.advance(true);
    }

    /// Moves to the previous key. Requires: `valid()`.
    pub fn prev(&mut self) {
        self.advance(false);
    }

    fn advance(&mut self, forward: bool) {
        if !self.valid() {
            return;
        }
        if self.forward == forward {
            self.step();
        } else {
            self.turn();
        }
        self.settle();
    }

    /// Reverses the direction: both cursors move just past the current key in the new
    /// direction (invariant 1), the base by a seek that may land on the key itself.
    fn turn(&mut self) {
        let key = self.key().to_vec();
        self.forward = !self.forward;
        if self.forward {
            self.base.seek(&key);
        } else {
            self.base.seek_for_prev(&key);
        }
        if self.base.valid() && self.base.key() == key.as_slice() {
            self.step_base();
        }
        self.delta = self.delta_past(&key);
    }

    /// Moves the cursors standing on the current key one key on, in the current
    /// direction.
    fn step(&mut self) {
        if matches!(self.at, At::Base | At::Both) {
            self.step_base();
        }
        if matches!(self.at, At::Delta | At::Both) {
            if let Some((key, _)) = self.delta {
                self.delta = self.delta_past(key);
            }
        }
    }

    fn step_base(&mut self) {
        if self.forward {
            self.base.next();
        } else {
            self.base.prev();
        }
    }

    /// The next delta key past `key` in the current direction, within the bounds.
    fn delta_past(&self, key: &[u8]) -> Option<(&'a [u8], &'a Entry)> {
        if self.forward {
            self.delta_after(Bound::Excluded(key))
        } else {
            self.delta_before(Bound::Excluded(key))
        }
    }

    /// The first delta key from `from` on that is below the upper bound.
    fn delta_after(&self, from: Bound<&[u8]>) -> Option<(&'a [u8], &'a Entry)> {
        let from = match (from, self.lower.as_deref()) {
            (Bound::Unbounded, Some(l)) => Bound::Included(l),
            (from, _) => from,
        };
        let index: &'a BTreeMap<Vec<u8>, Entry> = self.index;
        let (k, e) = index.range::<[u8], _>((from, Bound::Unbounded)).next()?;
        let within = self.upper.as_deref().is_none_or(|u| k.as_slice() < u);
        within.then_some((k.as_slice(), e))
    }

    /// The last delta key up to `to` that is below the upper bound and at or above the
    /// lower bound.
    fn delta_before(&self, to: Bound<&[u8]>) -> Option<(&'a [u8], &'a Entry)> {
        let to = match (to, self.upper.as_deref()) {
            (Bound::Unbounded, Some(u)) => Bound::Excluded(u),
            (Bound::Included(t), Some(u)) if t >= u => Bound::Excluded(u),
            (to, _) => to,
        };
        let index: &'a BTreeMap<Vec<u8>, Entry> = self.index;
        let (k, e) = index.range::<[u8], _>((Bound::Unbounded, to)).next_back()?;
        let within = self.lower.as_deref().is_none_or(|l| k.as_slice() >= l);
        within.then_some((k.as_slice(), e))
    }

    /// Chooses the current key: the nearer cursor in the current direction, the delta
    /// on a tie, skipping the delta's deletes and the base keys they hide.
    fn settle(&mut self) {
        loop {
            if !self.base.valid() && self.base.status().is_err() {
                self.at = At::Nothing; // invariant 3
                return;
            }
            let Some((delta_key, entry)) = self.delta else {
                self.at = if self.base.valid() {
                    At::Base
                } else {
                    At::Nothing
                };
                return;
            };
            let order = if !self.base.valid() {
                Ordering::Less
            } else if self.forward {
                delta_key.cmp(self.base.key())
            } else {
                self.base.key().cmp(delta_key)
            };
            if order == Ordering::Greater {
                self.at = At::Base;
                return;
            }
            match entry {
                Entry::Put(_) => {
                    self.at = if order == Ordering::Equal {
                        At::Both
                    } else {
                        At::Delta
                    };
                    return;
                }
                Entry::Delete => {
                    if order == Ordering::Equal {
                        self.step_base();
                    }
                    self.delta = self.delta_past(delta_key);
                }
            }
        }
    }
}

impl std::fmt::Debug for BaseDeltaIterator<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BaseDeltaIterator")
            .field("base", &self.base)
            .field("forward", &self.forward)
            .field("at", &self.at)
            .finish_non_exhaustive()
    }
}
