//! The user-facing iterator: turns the merged stream of internal entries into the
//! user's view at one sequence number.
//!
//! Adds to the [`InternalIterator`] contract of its input:
//! - hides entries newer than the read's sequence number, older versions of a key, and
//!   deleted keys;
//! - resolves merge chains with the merge operator (a key whose newest visible entry
//!   is an operand yields `full_merge(base, operands)`);
//! - applies `lower_bound` (inclusive) and `upper_bound` (exclusive);
//! - yields user keys, not internal keys;
//! - in a family whose values carry deadlines (`expiry`), hides a key whose value
//!   has expired by the iterator's clock (taken once, when it is made) and yields
//!   values without their trailer.
//!
//! The public moves are the inner moves (`*_raw`) followed by [`DbIterator::settle`],
//! which steps on, in the move's direction, past keys whose value has expired, as
//! past deleted ones.
//!
//! # Direction
//! Moving forward, the inner iterator sits *on* the entry being returned. Moving
//! backward, it sits *before* every entry of the current user key (on an older key, or
//! invalid), and the current key and value are copies in `saved_key` / `saved_value`:
//! walking backward meets a key's versions oldest first, so the newest visible one is
//! only known once the walk has passed them all. Switching direction re-positions the
//! inner iterator accordingly (LevelDB's DBIter scheme).
//!
//! # Merges
//! Forward, a key whose newest visible entry is an operand is resolved by walking on
//! through its older entries to the base; the result lives in `saved_key` /
//! `saved_value` (as in reverse) and `merged` is set, with the inner iterator past
//! the chain. Backward, the walk meets a key's entries oldest first and folds them as
//! it goes: a `Put` or `Delete` resets the base and drops earlier operands, an operand
//! is queued, and the newest entry decides (RocksDB's DBIter does the same). An
//! operand with no operator, or an operator's refusal, stops the iterator with that
//! error in [`DbIterator::status`].

use super::SuperVersion;
use crate::error::{Error, Result};
use crate::expiry::ReadClock;
use crate::iter::{InternalIterator, MergingIterator};
use crate::key::{self, SequenceNumber, ValueKind, KIND_SEEK, MAX_SEQUENCE};
use crate::merge::chain::{self, Chain};
use crate::merge::MergeOperator;
use crate::range_del::Fragments;
use crate::snapshot::Snapshot;
use crate::stats::purpose::IoPurpose;
use std::sync::Arc;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Reverse,
}

/// An iterator over `(key, value)` pairs of the database at one point in time.
///
/// It pins the memtables and table files it reads (and its snapshot, if any) until it
/// is dropped; long-lived iterators therefore keep obsolete files on disk.
pub struct DbIterator {
    iter: MergingIterator,
    seq: SequenceNumber,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    direction: Direction,
    valid: bool,
    saved_key: Vec<u8>,
    saved_value: Vec<u8>,
    /// Forward only: the current entry is a resolved merge held in `saved_key` /
    /// `saved_value`; the inner iterator is past its chain.
    merged: bool,
    /// Merge operands being gathered (forward: newest first; reverse: oldest first).
    operands: Vec<Vec<u8>>,
    merge_operator: Option<Arc<dyn MergeOperator>>,
    /// Every range tombstone of the read's sources visible at `seq`, fragmented;
    /// `None` when there is none.
    range_dels: Option<Fragments>,
    seek_buf: Vec<u8>,
    /// The read's clock, in a family whose values carry deadlines.
    expiry: Option<ReadClock>,
    err: Option<Error>,
    _pin: Arc<SuperVersion>,
    _snapshot: Option<Snapshot>,
}

/// What turns a key's visible entries into its value: the merge operator and the
/// read's range tombstones.
pub(crate) struct Resolver {
    /// Resolves merge chains (`None`: an operand is an error).
    pub merge_operator: Option<Arc<dyn MergeOperator>>,
    /// Every range tombstone of the read's sources visible at its sequence number,
    /// fragmented; `None` when there is none.
    pub range_dels: Option<Fragments>,
    /// The read's clock, in a family whose values carry deadlines (`None`: values are
    /// the caller's as stored).
    pub expiry: Option<ReadClock>,
}

impl DbIterator {
    pub(crate) fn new(
        iter: MergingIterator,
        seq: SequenceNumber,
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
        pin: Arc<SuperVersion>,
        snapshot: Option<Snapshot>,
        resolver: Resolver,
    ) -> Self {
        let Resolver {
            merge_operator,
            range_dels,
            expiry,
        } = resolver;
        DbIterator {
            iter,
            seq,
            lower,
            upper,
            direction: Direction::Forward,
            valid: false,
            saved_key: Vec::new(),
            saved_value: Vec::new(),
            merged: false,
            operands: Vec::new(),
            merge_operator,
            range_dels,
            seek_buf: Vec::new(),
            expiry,
            err: None,
            _pin: pin,
            _snapshot: snapshot,
        }
    }

    /// True iff positioned at an entry. When false, check [`DbIterator::status`].
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// The current key. Requires: `valid()`. Valid until the iterator moves.
    pub fn key(&self) -> &[u8] {
        match self.direction {
            Direction::Forward if !self.merged => key::user_key(self.iter.key()),
            _ => &self.saved_key,
        }
    }

    /// The current value. Requires: `valid()`. Valid until the iterator moves.
    pub fn value(&self) -> &[u8] {
        let stored = self.stored_value();
        match self.expiry {
            // `settle` left the iterator only on values with a trailer.
            Some(_) => stored
                .get(..stored.len().saturating_sub(crate::expiry::TRAILER_LEN))
                .unwrap_or_default(),
            None => stored,
        }
    }

    /// The current value as the family stores it.
    fn stored_value(&self) -> &[u8] {
        match self.direction {
            Direction::Forward if !self.merged => self.iter.value(),
            _ => &self.saved_value,
        }
    }

    /// After a move in `direction`: steps on past keys whose value has expired by the
    /// iterator's clock, as past deleted keys. Nothing to do in a family without
    /// deadlines. A value too short for its trailer stops the iterator (`Corruption`
    /// naming the key).
    fn settle(&mut self, direction: Direction) {
        let Some(clock) = self.expiry else {
            return;
        };
        while self.valid {
            match clock.visible(self.key(), self.stored_value()) {
                Ok(Some(_)) => return,
                Ok(None) if direction == Direction::Forward => self.next_raw(),
                Ok(None) => self.prev_raw(),
                Err(e) => {
                    self.fail(e);
                    return;
                }
            }
        }
    }

    /// The first error met (sticky). An invalid iterator with `Ok` status is exhausted.
    pub fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.duplicate()),
            None => self.iter.status(),
        }
    }

    fn parse_current(&mut self) -> Option<(SequenceNumber, ValueKind)> {
        match key::parse_internal_key(self.iter.key()) {
            Some(p) => Some((p.seq, p.kind)),
            None => {
                // Table iterators report malformed keys as corruption naming their
                // file, and memtables hold only keys the write path built.
                self.err = Some(Error::Internal(
                    "malformed internal key reached the user iterator".into(),
                ));
                None
            }
        }
    }

    fn over_upper(&self, user_key: &[u8]) -> bool {
        self.upper.as_deref().is_some_and(|u| user_key >= u)
    }

    fn under_lower(&self, user_key: &[u8]) -> bool {
        self.lower.as_deref().is_some_and(|l| user_key < l)
    }

    /// Forward: advances to the newest visible, non-deleted version of the next key.
    /// With `skipping`, versions of keys `<= saved_key` are hidden.
    fn find_next_user_entry(&mut self, mut skipping: bool) {
        self.merged = false;
        while self.iter.valid() {
            let Some((seq, kind)) = self.parse_current() else {
                self.valid = false;
                return;
            };
            if seq <= self.seq {
                let ukey = key::user_key(self.iter.key());
                if self.over_upper(ukey) {
                    break;
                }
                // An older version of a key already passed: hidden, and no tombstone
                // lookup spent on it.
                let hidden = skipping && ukey <= self.saved_key.as_slice();
                let kind = if hidden {
                    ValueKind::Delete
                } else {
                    self.effective(kind, ukey, seq)
                };
                match kind {
                    _ if hidden => {}
                    ValueKind::Delete | ValueKind::RangeDelete => {
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(ukey);
                        skipping = true;
                    }
                    ValueKind::Put => {
                        self.valid = true;
                        self.saved_key.clear();
                        return;
                    }
                    ValueKind::Merge => {
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(ukey);
                        self.valid = self.merge_forward();
                        return;
                    }
                }
            }
            self.iter.next();
        }
        self.valid = false;
        self.saved_key.clear();
    }

    /// The newest visible range tombstone covering `user_key` (0: none).
    fn cover(&self, user_key: &[u8]) -> SequenceNumber {
        self.range_dels
            .as_ref()
            .map_or(0, |f| f.max_covering(user_key, self.seq))
    }

    /// `kind`, or `Delete` for a value or operand under a visible range tombstone.
    /// Costs nothing without range tombstones, one binary search with them.
    fn effective(&self, kind: ValueKind, user_key: &[u8], seq: SequenceNumber) -> ValueKind {
        match kind {
            ValueKind::Put | ValueKind::Merge if seq < self.cover(user_key) => ValueKind::Delete,
            k => k,
        }
    }

    /// Forward, on the newest visible entry of `saved_key`, an operand: walks its chain
    /// to the base, leaving the inner iterator past it, and resolves it into
    /// `saved_value`. False (with `err` set) if it cannot be resolved.
    fn merge_forward(&mut self) -> bool {
        self.operands.clear();
        self.merged = true;
        let floor = self.cover(&self.saved_key);
        let base = match chain::collect(&mut self.iter, &self.saved_key, floor, &mut self.operands)
        {
            Ok(Chain::Base(base)) => base,
            Ok(Chain::Open) => None,
            Err(e) => return self.fail(e),
        };
        self.resolve(base.as_deref())
    }

    /// `saved_value` := `base` with `operands` (newest first) applied; clears the
    /// operands. False (with `err` set) if they cannot be applied.
    fn resolve(&mut self, base: Option<&[u8]>) -> bool {
        let resolved = chain::resolve(
            self.merge_operator.as_ref(),
            &self.saved_key,
            base,
            &self.operands,
        );
        self.operands.clear();
        match resolved {
            Ok(v) => {
                self.saved_value = v.unwrap_or_default();
                true
            }
            Err(e) => self.fail(e),
        }
    }

    /// Records `e` (sticky) and returns false: the iterator is invalid from here on.
    fn fail(&mut self, e: Error) -> bool {
        self.err = Some(e);
        self.valid = false;
        false
    }

    /// Reverse: the value of `saved_key` once its oldest-first walk ended on an
    /// operand: `saved_value` (the base, if `has_base`) with `operands` applied.
    fn merge_reverse(&mut self, has_base: bool) -> bool {
        self.operands.reverse();
        let base = std::mem::take(&mut self.saved_value);
        self.resolve(has_base.then_some(base.as_slice()))
    }

    /// Backward: collects the newest visible version of the key before the inner
    /// iterator's position (see the module docs).
    fn find_prev_user_entry(&mut self) {
        self.merged = false;
        self.operands.clear();
        let mut value_kind = ValueKind::Delete;
        // Whether `saved_value` holds a base `Put` below the queued operands.
        let mut has_base = false;
        while self.iter.valid() {
            let Some((seq, kind)) = self.parse_current() else {
                self.valid = false;
                return;
            };
            if seq <= self.seq {
                let ukey = key::user_key(self.iter.key());
                if value_kind != ValueKind::Delete && ukey < self.saved_key.as_slice() {
                    break;
                }
                let kind = self.effective(kind, ukey, seq);
                value_kind = kind;
                match kind {
                    ValueKind::Delete | ValueKind::RangeDelete => {
                        self.saved_key.clear();
                        self.saved_value.clear();
                        self.operands.clear();
                        has_base = false;
                    }
                    ValueKind::Put => {
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(ukey);
                        self.saved_value.clear();
                        self.saved_value.extend_from_slice(self.iter.value());
                        self.operands.clear();
                        has_base = true;
                    }
                    ValueKind::Merge => {
                        if self.saved_key.as_slice() != ukey {
                            // The first (oldest) entry of this key: no base below.
                            self.saved_key.clear();
                            self.saved_key.extend_from_slice(ukey);
                            self.saved_value.clear();
                            has_base = false;
                        }
                        self.operands.push(self.iter.value().to_vec());
                    }
                }
            }
            self.iter.prev();
        }
        if let Err(e) = self.iter.status() {
            self.fail(e);
            return;
        }
        if value_kind == ValueKind::Delete || self.under_lower(&self.saved_key) {
            self.valid = false;
            self.saved_key.clear();
            self.saved_value.clear();
            self.operands.clear();
            self.direction = Direction::Forward;
        } else if value_kind == ValueKind::Merge {
            self.valid = self.merge_reverse(has_base);
        } else {
            self.valid = true;
        }
    }

    /// Positions at the first key `>= target` (and `>= lower_bound`).
    pub fn seek(&mut self, target: &[u8]) {
        let _purpose = IoPurpose::Scan.enter();
        self.seek_raw(target);
        self.settle(Direction::Forward);
    }

    /// Positions at the first key (within the bounds).
    pub fn seek_to_first(&mut self) {
        let _purpose = IoPurpose::Scan.enter();
        self.seek_to_first_raw();
        self.settle(Direction::Forward);
    }

    /// Positions at the last key (within the bounds).
    pub fn seek_to_last(&mut self) {
        let _purpose = IoPurpose::Scan.enter();
        self.seek_to_last_raw();
        self.settle(Direction::Reverse);
    }

    /// Positions at the last key `<= target` (and `< upper_bound`).
    pub fn seek_for_prev(&mut self, target: &[u8]) {
        let _purpose = IoPurpose::Scan.enter();
        if self.over_upper(target) {
            self.seek_to_last_raw();
        } else {
            self.seek_for_prev_raw(target);
        }
        self.settle(Direction::Reverse);
    }

    /// Moves to the next key. Requires: `valid()`.
    pub fn next(&mut self) {
        let _purpose = IoPurpose::Scan.enter();
        self.next_raw();
        self.settle(Direction::Forward);
    }

    /// Moves to the previous key. Requires: `valid()`.
    pub fn prev(&mut self) {
        let _purpose = IoPurpose::Scan.enter();
        self.prev_raw();
        self.settle(Direction::Reverse);
    }

    /// [`Self::seek`] before [`Self::settle`].
    fn seek_raw(&mut self, target: &[u8]) {
        let t = match self.lower.as_deref() {
            Some(l) if target < l => l,
            _ => target,
        };
        self.seek_buf.clear();
        key::append_internal_key(&mut self.seek_buf, t, self.seq, KIND_SEEK);
        self.seek_internal();
    }

    /// Seeks the merged input to `seek_buf` and finds the first visible entry.
    fn seek_internal(&mut self) {
        self.direction = Direction::Forward;
        self.saved_value.clear();
        self.iter.seek(&self.seek_buf);
        self.find_next_user_entry(false);
    }

    /// [`Self::seek_to_first`] before [`Self::settle`].
    fn seek_to_first_raw(&mut self) {
        if let Some(l) = self.lower.as_deref() {
            self.seek_buf.clear();
            key::append_internal_key(&mut self.seek_buf, l, self.seq, KIND_SEEK);
            return self.seek_internal();
        }
        self.direction = Direction::Forward;
        self.saved_value.clear();
        self.iter.seek_to_first();
        self.find_next_user_entry(false);
    }

    /// [`Self::seek_to_last`] before [`Self::settle`].
    fn seek_to_last_raw(&mut self) {
        self.direction = Direction::Reverse;
        self.saved_key.clear();
        self.saved_value.clear();
        match self.upper.as_deref() {
            Some(u) => {
                self.seek_buf.clear();
                key::append_internal_key(&mut self.seek_buf, u, MAX_SEQUENCE, KIND_SEEK);
                self.iter.seek(&self.seek_buf);
                if self.iter.valid() {
                    self.iter.prev();
                } else if self.iter.status().is_ok() {
                    self.iter.seek_to_last();
                }
            }
            None => self.iter.seek_to_last(),
        }
        self.find_prev_user_entry();
    }

    /// [`Self::seek_for_prev`] of a `target` below the upper bound, before
    /// [`Self::settle`].
    fn seek_for_prev_raw(&mut self, target: &[u8]) {
        self.direction = Direction::Reverse;
        self.saved_key.clear();
        self.saved_value.clear();
        self.seek_buf.clear();
        key::append_internal_key(&mut self.seek_buf, target, 0, ValueKind::Delete);
        self.iter.seek_for_prev(&self.seek_buf);
        self.find_prev_user_entry();
    }

    /// [`Self::next`] before [`Self::settle`].
    fn next_raw(&mut self) {
        if !self.valid {
            return;
        }
        if self.direction == Direction::Reverse {
            self.direction = Direction::Forward;
            // The inner iterator is before every entry of the current key: step into
            // them; `saved_key` holds the key to skip past.
            if self.iter.valid() {
                self.iter.next();
            } else {
                self.iter.seek_to_first();
            }
        } else if !self.merged {
            self.saved_key.clear();
            self.saved_key
                .extend_from_slice(key::user_key(self.iter.key()));
            self.iter.next();
        }
        // (A resolved merge: `saved_key` is the current key and the inner iterator is
        // already past its chain; skipping hides whatever of the key is left.)
        self.find_next_user_entry(true);
    }

    /// [`Self::prev`] before [`Self::settle`].
    fn prev_raw(&mut self) {
        if !self.valid {
            return;
        }
        if self.direction == Direction::Forward {
            // Step back past every entry of the current key. A resolved merge left the
            // inner iterator past its chain (possibly exhausted): start from the end.
            if self.merged {
                if !self.iter.valid() {
                    self.iter.seek_to_last();
                }
            } else {
                self.saved_key.clear();
                self.saved_key
                    .extend_from_slice(key::user_key(self.iter.key()));
            }
            self.merged = false;
            while self.iter.valid() && key::user_key(self.iter.key()) >= self.saved_key.as_slice() {
                self.iter.prev();
            }
            if !self.iter.valid() {
                self.valid = false;
                self.saved_key.clear();
                self.saved_value.clear();
                return;
            }
            self.direction = Direction::Reverse;
        }
        self.find_prev_user_entry();
    }
}

impl std::fmt::Debug for DbIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbIterator")
            .field("seq", &self.seq)
            .field("valid", &self.valid)
            .finish_non_exhaustive()
    }
}
