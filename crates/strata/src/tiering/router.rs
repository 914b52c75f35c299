//! Retention (HotRAP §3.1, steps 3–5, and time-aware tiering's rule): a compaction
//! from the last fast level into the first slow one sends some keys of the fast
//! inputs' range back to the last fast level instead of down.

use super::ralt::Ralt;
use crate::compaction::plan::{KeyRange, Router};
use crate::key::{ParsedKey, SequenceNumber, ValueKind};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// The slow stream of a retaining plan (the picker's own output stream).
pub(crate) const SLOW: usize = 0;
/// The fast stream a retaining plan gains: the last fast level, bounded to `range`.
pub(crate) const FAST: usize = 1;

/// Which keys a retaining plan wants back in the fast tier.
#[derive(Debug)]
pub(crate) enum Keep {
    /// HotRAP: the keys RALT says are hot (`ralt`, `None` with retention off), and
    /// those whose promotion-cache copies joined the plan (`promoted`).
    Hot {
        ralt: Option<Arc<Ralt>>,
        promoted: BTreeSet<Vec<u8>>,
    },
    /// Time-aware tiering: the keys whose newest record has a sequence number above
    /// this one (written within the window).
    WrittenAfter(SequenceNumber),
}

impl Keep {
    /// True iff this rule wants `newest`'s key back, and whether it was promoted.
    fn wants(&self, newest: &ParsedKey<'_>) -> (bool, bool) {
        match self {
            Keep::Hot { ralt, promoted } => {
                let promoted = promoted.contains(newest.user_key);
                let hot = ralt.as_ref().is_some_and(|r| r.is_hot(newest.user_key));
                (promoted || hot, promoted)
            }
            Keep::WrittenAfter(seq) => (newest.seq > *seq, false),
        }
    }
}

/// Sends a user key to [`FAST`] iff it lies in the fast inputs' range, its newest
/// record is a value (a `Put` or a merge operand: tombstones go down, where they can
/// reach what they delete), [`Keep`] wants it, it is not the first key of the
/// range the router is shown, and the level has room for it; everything else to
/// [`SLOW`]. The executor asks once per user key, so every version of a key goes to
/// one stream.
///
/// Room: the bytes the last fast level may take back, half the fast inputs' bytes
/// (`hooks.rs`), each retained key charged its newest record's key, value and
/// internal-key trailer, and at least the fast inputs' bytes per entry (so the charge
/// covers what a table spends per entry beyond the record). RALT's hot set is bounded
/// below the fast budget, but its estimates are not exact (at the start every tracked
/// key is hot); a level written back whole would be picked again at once, each round
/// moving one key, and the compactions would not end in any useful time. With the
/// room, each compaction out of the level shrinks it by about half its fast inputs.
/// An earlier room, the level's target less what stayed (at least half the inputs),
/// let a level just over its target write nearly all its inputs back; charged less
/// than the tables' real bytes, the level stayed over its target and the same
/// compactions repeated without end (found by a review's randomized test).
///
/// Why the first key of the range always goes down: retention must never keep a
/// level where it was. A file whose every key is hot would otherwise be written back
/// whole, the level would stay over its target, and the picker could choose the same
/// keys again forever (hot-aware picking avoids such files, but only as well as RALT's
/// estimates allow, and its fallback, the oldest file, may be one). With one key of
/// the range always moving down, each compaction that retains leaves fewer keys in the
/// range than it found, so a run of them ends.
#[derive(Debug)]
pub(crate) struct RetentionRouter {
    /// Which keys go back.
    keep: Keep,
    /// The user keys of the plan's inputs in the last fast level.
    range: KeyRange,
    /// Set once the router has seen a key of `range`.
    seen_range: AtomicBool,
    /// Bytes the fast stream may still take.
    room: AtomicU64,
    /// The least a retained key is charged.
    min_charge: u64,
    /// Bytes (newest record's key and value) of the kept keys that were not promoted:
    /// the family's "retained" figure.
    retained: Arc<AtomicU64>,
}

impl RetentionRouter {
    /// A router over `range` with `room` bytes, charging a key at least `min_charge`,
    /// keeping what `keep` wants, counting retained bytes in `retained`.
    pub fn new(
        keep: Keep,
        range: KeyRange,
        (room, min_charge): (u64, u64),
        retained: Arc<AtomicU64>,
    ) -> RetentionRouter {
        RetentionRouter {
            keep,
            range,
            seen_range: AtomicBool::new(false),
            room: AtomicU64::new(room),
            min_charge,
            retained,
        }
    }
}

impl Router for RetentionRouter {
    fn route(&self, newest: &ParsedKey<'_>, value: &[u8]) -> usize {
        if !self.range.contains(newest.user_key) || !self.seen_range.swap(true, Ordering::Relaxed) {
            return SLOW;
        }
        let is_value = matches!(newest.kind, ValueKind::Put | ValueKind::Merge);
        let (wanted, promoted) = self.keep.wants(newest);
        if !is_value || !wanted {
            return SLOW;
        }
        let bytes = (newest.user_key.len() + value.len()) as u64;
        let size = (bytes + 8).max(self.min_charge);
        let charged = self
            .room
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| {
                r.checked_sub(size)
            });
        if charged.is_err() {
            return SLOW;
        }
        if !promoted {
            self.retained.fetch_add(bytes, Ordering::Relaxed);
        }
        FAST
    }
}

#[cfg(test)]
mod tests;
