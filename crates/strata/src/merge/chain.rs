//! Resolving a key's merge chain on the read path (point lookups and the user
//! iterator). Compaction folds chains with its own rules (`compaction::merge_chain`).

use super::MergeOperator;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::{self, SequenceNumber, ValueKind};
use std::sync::Arc;

/// Where a walk down one source's entries of a key ended.
pub(crate) enum Chain {
    /// At the chain's base: `Some(value)` for a `Put`, `None` for a `Delete`.
    Base(Option<Vec<u8>>),
    /// The source holds no older entry of the key: older sources continue the chain.
    Open,
}

/// Pushes the operands of `user_key` onto `newest_first`, walking from the iterator's
/// position (the newest entry of the key visible to the read) to its base. An entry
/// older than `floor` (the newest range tombstone covering the key, 0 for none) is
/// deleted: the tombstone is the base.
///
/// Requires: `it` is positioned by a seek to the lookup key (so every entry it meets
/// for `user_key` is visible to the read).
///
/// # Errors
/// The iterator's error; `Internal` for a malformed key (sources validate keys).
pub(crate) fn collect(
    it: &mut dyn InternalIterator,
    user_key: &[u8],
    floor: SequenceNumber,
    newest_first: &mut Vec<Vec<u8>>,
) -> Result<Chain> {
    while it.valid() {
        let parsed = key::parse_internal_key(it.key())
            .ok_or_else(|| Error::Internal("malformed internal key in a merge chain".into()))?;
        if parsed.user_key != user_key {
            break;
        }
        if parsed.seq < floor {
            return Ok(Chain::Base(None));
        }
        match parsed.kind {
            ValueKind::Merge => newest_first.push(it.value().to_vec()),
            ValueKind::Put => return Ok(Chain::Base(Some(it.value().to_vec()))),
            // Range tombstones are not point entries; treat one as a delete if met.
            ValueKind::Delete | ValueKind::RangeDelete => return Ok(Chain::Base(None)),
        }
        it.next();
    }
    it.status()?;
    // Older sources continue the chain; a tombstone floor ends it here.
    Ok(if floor > 0 {
        Chain::Base(None)
    } else {
        Chain::Open
    })
}

/// The value of `user_key`: `base` with the operands applied, or `base` itself when
/// there are none. `newest_first` is the order the read met them in.
///
/// # Errors
/// `InvalidArgument` if there are operands but no operator is configured;
/// `MergeFailed` if the operator refuses them.
pub(crate) fn resolve(
    operator: Option<&Arc<dyn MergeOperator>>,
    user_key: &[u8],
    base: Option<&[u8]>,
    newest_first: &[Vec<u8>],
) -> Result<Option<Vec<u8>>> {
    if newest_first.is_empty() {
        return Ok(base.map(<[u8]>::to_vec));
    }
    let operator = operator.ok_or_else(|| no_operator(user_key))?;
    let oldest_first: Vec<&[u8]> = newest_first.iter().rev().map(Vec::as_slice).collect();
    operator
        .full_merge(user_key, base, &oldest_first)
        .map(Some)
        .map_err(|e| Error::merge_failed(operator.name(), user_key, e.reason))
}

/// The error for merge operands met without an operator to apply them.
pub(crate) fn no_operator(user_key: &[u8]) -> Error {
    Error::InvalidArgument(format!(
        "key `{}` has merge operands but no merge_operator is configured: open the \
         database with the operator that wrote them",
        user_key.escape_ascii()
    ))
}
