//! Folding merge chains while a flush or compaction rewrites them, so readers meet
//! short chains (RocksDB's `MergeHelper`).
//!
//! # The rule
//! [`VersionGc`](super::gc::VersionGc) keeps the newest entry of each key in each
//! snapshot stripe. When that entry is a merge operand, the entries of the key below it
//! *in the same stripe* are its chain; [`fold`] consumes them and writes one of:
//! - a `Put` at the operand's sequence number with `full_merge(base, operands)`, when
//!   the chain reaches a base (`Put` or `Delete`) inside the stripe, or when it ends
//!   with the key's input and the output is *bottommost* (nothing older lies below, so
//!   the base is "none");
//! - otherwise one operand, `partial_merge(operands)`, at the same sequence number,
//!   if the operator offers it and there are at least two operands;
//! - otherwise every entry unchanged: no operator configured, the operator refused
//!   (a read of the key reports the refusal; a compaction never loses an operand), or
//!   nothing to combine.
//!
//! Folding never crosses a stripe boundary: a reader at the older snapshot must still
//! find the older stripe's entries as they were. Entries of the key in older stripes
//! are left to the caller, which meets them next (and may fold them in turn).
//!
//! # Why the sequence number of the newest operand
//! The folded entry replaces entries whose sequence numbers all lie in one stripe, and
//! no reader can hold a snapshot strictly inside a stripe (that would be a stripe
//! boundary), so every reader sees either all of the chain or none of it, exactly as
//! before the fold.

use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::{self, SequenceNumber, ValueKind};
use crate::merge::MergeOperator;

/// A written entry: internal key and value.
pub(crate) type Entry = (Vec<u8>, Vec<u8>);

/// What a fold needs to know about the job.
pub(crate) struct Chain<'a> {
    /// The merge operator (`None`: operands are kept unchanged).
    pub operator: Option<&'a dyn MergeOperator>,
    /// The snapshot below the chain's stripe: entries at or below it belong to an
    /// older stripe and end the chain.
    pub floor: Option<SequenceNumber>,
    /// As in `VersionGc`: nothing older than the input lies below the output.
    pub bottommost: bool,
    /// True iff a range tombstone of the same stripe deletes the entry `(key, seq)`:
    /// the chain ends there, on that tombstone as its base.
    pub covered: &'a dyn Fn(&[u8], SequenceNumber) -> bool,
}

/// Consumes the chain starting at `input`'s entry and pushes what replaces it onto
/// `out` (in internal-key order).
///
/// Requires: `input` is on a merge operand that the version GC keeps (the newest entry
/// of its key in its stripe) and that no tombstone covers. Leaves `input` on the
/// first entry after the chain.
///
/// # Errors
/// The input's error; `Internal` for a malformed internal key.
pub(crate) fn fold(
    input: &mut dyn InternalIterator,
    chain: &Chain<'_>,
    out: &mut Vec<Entry>,
) -> Result<()> {
    let (operator, floor, bottommost) = (chain.operator, chain.floor, chain.bottommost);
    let malformed = || Error::Internal("malformed internal key reached the merge fold".into());
    let top = key::parse_internal_key(input.key()).ok_or_else(malformed)?;
    let (user_key, top_seq) = (top.user_key.to_vec(), top.seq);
    // The chain as read (newest first), to write back unchanged if it cannot fold.
    let mut raw: Vec<Entry> = Vec::new();
    let mut base: Option<Option<Vec<u8>>> = None;
    while input.valid() {
        let p = key::parse_internal_key(input.key()).ok_or_else(malformed)?;
        if p.user_key != user_key.as_slice() || floor.is_some_and(|f| p.seq <= f) {
            break;
        }
        if (chain.covered)(&user_key, p.seq) {
            // Deleted by a tombstone in the stripe: left for the caller to drop.
            base = Some(None);
            break;
        }
        raw.push((input.key().to_vec(), input.value().to_vec()));
        let kind = p.kind;
        input.next();
        match kind {
            ValueKind::Merge => {}
            ValueKind::Put => {
                base = raw.last().map(|(_, v)| Some(v.clone()));
                break;
            }
            ValueKind::Delete | ValueKind::RangeDelete => {
                base = Some(None);
                break;
            }
        }
    }
    input.status()?;
    let Some(operator) = operator else {
        out.append(&mut raw);
        return Ok(());
    };
    let operands: Vec<&[u8]> = raw
        .iter()
        .rev()
        .filter(|(k, _)| key::parse_internal_key(k).map(|p| p.kind) == Some(ValueKind::Merge))
        .map(|(_, v)| v.as_slice())
        .collect();
    let ended_with_key = !input.valid()
        || key::parse_internal_key(input.key()).map(|p| p.user_key) != Some(&user_key[..]);
    let folded = match &base {
        Some(b) => full(operator, &user_key, b.as_deref(), &operands).map(|v| (ValueKind::Put, v)),
        None if bottommost && ended_with_key => {
            full(operator, &user_key, None, &operands).map(|v| (ValueKind::Put, v))
        }
        None if operands.len() >= 2 => operator
            .partial_merge(&user_key, &operands)
            .map(|v| (ValueKind::Merge, v)),
        None => None,
    };
    match folded {
        Some((kind, value)) => {
            let mut ikey = Vec::with_capacity(user_key.len() + key::TRAILER_LEN);
            key::append_internal_key(&mut ikey, &user_key, top_seq, kind);
            out.push((ikey, value));
        }
        None => out.append(&mut raw),
    }
    Ok(())
}

fn full(
    operator: &dyn MergeOperator,
    user_key: &[u8],
    base: Option<&[u8]>,
    operands: &[&[u8]],
) -> Option<Vec<u8>> {
    operator.full_merge(user_key, base, operands).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memtable::MemTable;
    use crate::merge::{Append, MergeError};
    use std::sync::Arc;
    use ValueKind::*;

    /// Append without a partial merge.
    struct NoPartial;

    impl MergeOperator for NoPartial {
        fn name(&self) -> &str {
            "no-partial"
        }
        fn full_merge(
            &self,
            key: &[u8],
            existing: Option<&[u8]>,
            operands: &[&[u8]],
        ) -> Result<Vec<u8>, MergeError> {
            Append::new(b",").full_merge(key, existing, operands)
        }
    }

    /// Folds the chain at the first entry of `entries` (one key, newest first) and
    /// returns `(seq, kind, value)` of what replaces it, and the sequence number the
    /// input is left on.
    fn fold_of(
        entries: &[(u64, ValueKind, &str)],
        op: Option<&dyn MergeOperator>,
        floor: Option<u64>,
        bottommost: bool,
    ) -> (Vec<(u64, ValueKind, String)>, Option<u64>) {
        let mem = Arc::new(MemTable::new());
        for (seq, kind, v) in entries {
            mem.add(*seq, *kind, b"k", v.as_bytes());
        }
        mem.add(1, Put, b"z", b"next key");
        let mut it = mem.iter();
        it.seek_to_first();
        let mut out = Vec::new();
        let chain = Chain {
            operator: op,
            floor,
            bottommost,
            covered: &|_, _| false,
        };
        fold(&mut it, &chain, &mut out).unwrap();
        let at = key::parse_internal_key(it.key()).unwrap();
        let at = (at.user_key == b"k").then_some(at.seq);
        let out = out
            .iter()
            .map(|(k, v)| {
                let p = key::parse_internal_key(k).unwrap();
                assert_eq!(p.user_key, b"k");
                (p.seq, p.kind, String::from_utf8(v.clone()).unwrap())
            })
            .collect();
        (out, at)
    }

    fn e(seq: u64, kind: ValueKind, v: &str) -> (u64, ValueKind, String) {
        (seq, kind, v.to_string())
    }

    #[test]
    fn a_base_in_the_stripe_folds_into_a_put_at_the_newest_sequence() {
        let append = Append::new(b",");
        let chain = [
            (9, Merge, "c"),
            (8, Merge, "b"),
            (7, Put, "a"),
            (5, Put, "old"),
        ];
        let (out, at) = fold_of(&chain, Some(&append), None, false);
        assert_eq!(out, vec![e(9, Put, "a,b,c")]);
        assert_eq!(at, Some(5), "the older version is left to the version GC");
        let chain = [(9, Merge, "c"), (8, Delete, "")];
        let (out, _) = fold_of(&chain, Some(&append), None, false);
        assert_eq!(out, vec![e(9, Put, "c")]);
    }

    #[test]
    fn folding_stops_at_the_stripe_floor() {
        let append = Append::new(b",");
        let chain = [
            (9, Merge, "c"),
            (8, Merge, "b"),
            (6, Merge, "a"),
            (5, Put, "x"),
        ];
        // A snapshot at 7: 6 and 5 belong to the older stripe.
        let (out, at) = fold_of(&chain, Some(&append), Some(7), false);
        assert_eq!(out, vec![e(9, Merge, "b,c")]);
        assert_eq!(at, Some(6));
        // Bottommost does not help: older stripes of the key remain.
        let (out, _) = fold_of(&chain, Some(&append), Some(7), true);
        assert_eq!(out, vec![e(9, Merge, "b,c")]);
    }

    #[test]
    fn without_a_base_only_the_bottommost_output_full_merges() {
        let append = Append::new(b",");
        let chain = [(9, Merge, "c"), (8, Merge, "b")];
        assert_eq!(
            fold_of(&chain, Some(&append), None, false).0,
            vec![e(9, Merge, "b,c")]
        );
        assert_eq!(
            fold_of(&chain, Some(&append), None, true).0,
            vec![e(9, Put, "b,c")]
        );
        // No partial merge: the operands stay, unless bottommost.
        assert_eq!(
            fold_of(&chain, Some(&NoPartial), None, false).0,
            vec![e(9, Merge, "c"), e(8, Merge, "b")]
        );
        assert_eq!(
            fold_of(&chain, Some(&NoPartial), None, true).0,
            vec![e(9, Put, "b,c")]
        );
        // A lone operand stays as it is.
        assert_eq!(
            fold_of(&[(9, Merge, "c")], Some(&append), None, false).0,
            vec![e(9, Merge, "c")]
        );
    }

    /// Append, recording how many operands each `partial_merge` call is given.
    #[derive(Debug, Default)]
    struct Recording(std::sync::Mutex<Vec<usize>>);

    impl MergeOperator for Recording {
        fn name(&self) -> &str {
            "recording"
        }
        fn full_merge(
            &self,
            key: &[u8],
            existing: Option<&[u8]>,
            operands: &[&[u8]],
        ) -> Result<Vec<u8>, MergeError> {
            Append::new(b",").full_merge(key, existing, operands)
        }
        fn partial_merge(&self, key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
            if let Ok(mut calls) = self.0.lock() {
                calls.push(operands.len());
            }
            Append::new(b",").partial_merge(key, operands)
        }
    }

    /// `MergeOperator::partial_merge` is never called with fewer than two operands (its
    /// contract): a lone operand, alone or above a stripe floor, stays as it is. A
    /// mutation run found `operands.len() >= 2` replaceable by `true` unnoticed.
    #[test]
    fn partial_merge_is_never_asked_to_fold_one_operand() {
        let op = Recording::default();
        assert_eq!(
            fold_of(&[(9, Merge, "c")], Some(&op), None, false).0,
            vec![e(9, Merge, "c")]
        );
        let above_floor = [(9, Merge, "c"), (6, Merge, "a"), (5, Put, "x")];
        assert_eq!(
            fold_of(&above_floor, Some(&op), Some(7), false).0,
            vec![e(9, Merge, "c")]
        );
        assert_eq!(
            fold_of(&[(9, Merge, "c"), (8, Merge, "b")], Some(&op), None, false).0,
            vec![e(9, Merge, "b,c")]
        );
        let calls = op.0.lock().map(|c| c.clone()).unwrap_or_default();
        assert_eq!(calls, vec![2], "operand counts of each partial_merge call");
    }

    #[test]
    fn no_operator_or_a_refusal_keeps_the_chain_unchanged() {
        let chain = [
            (9, Merge, "c"),
            (8, Merge, "b"),
            (7, Put, "a"),
            (5, Put, "old"),
        ];
        let kept = vec![e(9, Merge, "c"), e(8, Merge, "b"), e(7, Put, "a")];
        let (out, at) = fold_of(&chain, None, None, true);
        assert_eq!(out, kept);
        assert_eq!(at, Some(5));
        let counter = crate::merge::U64Add;
        assert_eq!(fold_of(&chain, Some(&counter), None, true).0, kept);
    }
}
