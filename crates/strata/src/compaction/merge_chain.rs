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

/// Consumes the chain starting at `input`'s entry and pushes what replaces it onto
/// `out` (in internal-key order). `floor` is the snapshot below the chain's stripe
/// (entries at or below it belong to an older stripe and end the chain); `bottommost`
/// as in `VersionGc`.
///
/// Requires: `input` is on a merge operand that the version GC keeps (the newest entry
/// of its key in its stripe). Leaves `input` on the first entry after the chain.
///
/// # Errors
/// The input's error; `Internal` for a malformed internal key.
pub(crate) fn fold(
    input: &mut dyn InternalIterator,
    operator: Option<&dyn MergeOperator>,
    floor: Option<SequenceNumber>,
    bottommost: bool,
    out: &mut Vec<Entry>,
) -> Result<()> {
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
        raw.push((input.key().to_vec(), input.value().to_vec()));
        let kind = p.kind;
        input.next();
        match kind {
            ValueKind::Merge => {}
            ValueKind::Put => {
                base = raw.last().map(|(_, v)| Some(v.clone()));
                break;
            }
            ValueKind::Delete => {
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
