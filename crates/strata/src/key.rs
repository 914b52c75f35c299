//! Internal keys: a user key followed by an 8-byte trailer `(sequence << 8) | kind`.
//!
//! # Format
//! ```text
//! +----------------------+-----------------------------------------+
//! | user key (n bytes)   | trailer: u64 little-endian = seq<<8|kind |
//! +----------------------+-----------------------------------------+
//! ```
//! Ordering: user key ascending (bytewise), then trailer *descending*, so for one user
//! key the newest version comes first. A lookup for "key as of snapshot S" seeks to
//! `(key, S, KIND_SEEK)` and lands on the newest version with sequence `<= S`.
//!
//! # Invariants
//! 1. Sequence numbers fit in 56 bits ([`MAX_SEQUENCE`]).
//! 2. Kind values are append-only: 0 = Delete, 1 = Put, 2 = Merge (a merge operand;
//!    LASER's partial-row updates will be these), 3 = RangeDelete (a range tombstone:
//!    in a batch record and as the kind of a table's range-deletion entries and file
//!    bounds, never among a memtable's or data block's point entries). Never renumber.
//! 3. [`KIND_SEEK`] is the largest *point* kind: a seek key sorts before every point
//!    entry of its user key at or below its sequence number.

use std::cmp::Ordering;

/// A sequence number: the global, monotonically increasing write clock.
pub type SequenceNumber = u64;

/// Largest representable sequence number.
pub const MAX_SEQUENCE: SequenceNumber = (1 << 56) - 1;

/// Length of the internal-key trailer.
pub const TRAILER_LEN: usize = 8;

/// What an internal-key entry records. Values are on disk: append only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ValueKind {
    /// A tombstone: the key is deleted as of this sequence number.
    Delete = 0,
    /// A full value.
    Put = 1,
    /// A merge operand, combined with older versions by the merge operator.
    Merge = 2,
    /// A range tombstone `[key, value)` (see [`crate::range_del`]).
    RangeDelete = 3,
}

/// The kind used in seek keys: the largest kind, so a seek to `(k, s, KIND_SEEK)` sorts
/// before every entry of `k` with sequence `<= s`.
pub const KIND_SEEK: ValueKind = ValueKind::Merge;

impl ValueKind {
    /// Decodes a kind byte.
    pub fn from_u8(b: u8) -> Option<ValueKind> {
        match b {
            0 => Some(ValueKind::Delete),
            1 => Some(ValueKind::Put),
            2 => Some(ValueKind::Merge),
            3 => Some(ValueKind::RangeDelete),
            _ => None,
        }
    }
}

/// Packs a sequence number and kind into a trailer.
#[inline]
pub fn pack_trailer(seq: SequenceNumber, kind: ValueKind) -> u64 {
    debug_assert!(seq <= MAX_SEQUENCE);
    (seq << 8) | kind as u64
}

/// Appends the internal key `(user_key, seq, kind)` to `dst`.
#[inline]
pub fn append_internal_key(
    dst: &mut Vec<u8>,
    user_key: &[u8],
    seq: SequenceNumber,
    kind: ValueKind,
) {
    dst.extend_from_slice(user_key);
    dst.extend_from_slice(&pack_trailer(seq, kind).to_le_bytes());
}

/// Builds a new internal key.
#[cfg_attr(
    not(feature = "internals"),
    allow(
        dead_code,
        reason = "tests, `strata sst-dump` and the fuzz checks; the engine appends"
    )
)]
pub fn make_internal_key(user_key: &[u8], seq: SequenceNumber, kind: ValueKind) -> Vec<u8> {
    let mut v = Vec::with_capacity(user_key.len() + TRAILER_LEN);
    append_internal_key(&mut v, user_key, seq, kind);
    v
}

/// A decoded view of an internal key. Borrows the encoded bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedKey<'a> {
    /// The user's key.
    pub user_key: &'a [u8],
    /// The sequence number of this version.
    pub seq: SequenceNumber,
    /// What the entry records.
    pub kind: ValueKind,
}

/// Parses an internal key; `None` if it is shorter than the trailer or has a bad kind.
#[inline]
pub fn parse_internal_key(ikey: &[u8]) -> Option<ParsedKey<'_>> {
    let split = ikey.len().checked_sub(TRAILER_LEN)?;
    let (user_key, t) = ikey.split_at(split);
    let trailer = u64::from_le_bytes(t.try_into().ok()?);
    Some(ParsedKey {
        user_key,
        seq: trailer >> 8,
        kind: ValueKind::from_u8((trailer & 0xff) as u8)?,
    })
}

/// The user-key part of an internal key. Requires: `ikey.len() >= 8` (shorter keys
/// yield an empty slice, which sorts first; decoders validate lengths before this).
#[inline]
pub fn user_key(ikey: &[u8]) -> &[u8] {
    ikey.get(..ikey.len().saturating_sub(TRAILER_LEN))
        .unwrap_or_default()
}

/// The trailer of an internal key (0 if too short).
#[inline]
pub fn trailer(ikey: &[u8]) -> u64 {
    match ikey.len().checked_sub(TRAILER_LEN) {
        Some(s) => ikey
            .get(s..)
            .and_then(|t| t.try_into().ok())
            .map(u64::from_le_bytes)
            .unwrap_or(0),
        None => 0,
    }
}

/// Sequence number of an internal key.
pub fn sequence(ikey: &[u8]) -> SequenceNumber {
    trailer(ikey) >> 8
}

/// Compares two internal keys: user key ascending, then trailer descending.
#[inline]
pub fn compare_internal(a: &[u8], b: &[u8]) -> Ordering {
    match user_key(a).cmp(user_key(b)) {
        Ordering::Equal => trailer(b).cmp(&trailer(a)),
        o => o,
    }
}

/// A reusable buffer holding the seek key for "user key as of snapshot seq".
///
/// Reused across lookups so the get path allocates nothing once warm.
#[derive(Debug, Default, Clone)]
pub struct LookupKey {
    buf: Vec<u8>,
}

impl LookupKey {
    /// Builds the lookup key `(user_key, seq, KIND_SEEK)`.
    #[cfg_attr(
        not(feature = "internals"),
        allow(
            dead_code,
            reason = "tests and the fuzz checks; the engine reuses one with `set`"
        )
    )]
    pub fn new(user_key: &[u8], seq: SequenceNumber) -> Self {
        let mut k = LookupKey { buf: Vec::new() };
        k.set(user_key, seq);
        k
    }
    /// Re-points this buffer at another key/sequence.
    pub fn set(&mut self, user_key: &[u8], seq: SequenceNumber) {
        self.buf.clear();
        append_internal_key(&mut self.buf, user_key, seq, KIND_SEEK);
    }
    /// The encoded internal key.
    pub fn internal_key(&self) -> &[u8] {
        &self.buf
    }
    /// The user key.
    pub fn user_key(&self) -> &[u8] {
        user_key(&self.buf)
    }

    /// The read's sequence number.
    pub fn sequence(&self) -> SequenceNumber {
        sequence(&self.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_user_key_then_newest_first() {
        let a1 = make_internal_key(b"a", 1, ValueKind::Put);
        let a2 = make_internal_key(b"a", 2, ValueKind::Put);
        let b1 = make_internal_key(b"b", 1, ValueKind::Put);
        assert_eq!(compare_internal(&a2, &a1), Ordering::Less);
        assert_eq!(compare_internal(&a1, &b1), Ordering::Less);
        let seek = LookupKey::new(b"a", 1);
        assert_eq!(compare_internal(seek.internal_key(), &a1), Ordering::Less);
        assert_eq!(
            compare_internal(seek.internal_key(), &a2),
            Ordering::Greater
        );
    }

    #[test]
    fn parse_round_trip_and_rejects_bad_input() {
        let k = make_internal_key(b"key", 42, ValueKind::Delete);
        let p = parse_internal_key(&k).expect("valid key");
        assert_eq!(
            (p.user_key, p.seq, p.kind),
            (&b"key"[..], 42, ValueKind::Delete)
        );
        assert!(parse_internal_key(b"short").is_none());
        let mut bad = k.clone();
        bad[3] = 9;
        assert!(parse_internal_key(&bad).is_none());
    }
}
