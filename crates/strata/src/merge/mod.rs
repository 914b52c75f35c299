//! Merge operators: read-modify-write without the read.
//!
//! A merge ([`crate::WriteBatch::merge`], [`crate::Db::merge`]) records an *operand*
//! (an internal entry of kind `Merge`) instead of a value. Readers resolve a key's
//! *merge chain* — its visible operands, newest first, down to a base (the newest
//! `Put`, a `Delete`, or nothing) — with the configured [`MergeOperator`]: the value
//! is `full_merge(key, base, operands oldest first)`. Compaction folds chains early
//! (`compaction::merge_chain`), so chains stay short without any reader paying for it.
//!
//! # The operator contract
//! - `full_merge(key, existing, operands)` must be a pure function of its arguments:
//!   readers at different times, flushes and compactions call it on the same chain
//!   and must agree.
//! - `partial_merge(key, operands)` may combine consecutive operands into one operand
//!   `p` only if for every base `b`,
//!   `full_merge(key, b, [..before, p, after..]) == full_merge(key, b, [..before, operands.., after..])`.
//!   Returning `None` is always allowed (compaction then keeps the operands).
//! - `check_operand(key, operand)` refuses an operand `full_merge` could never apply
//!   (a counter increment of the wrong width). [`crate::Db::write`] runs it on every
//!   merge of a batch before anything is queued, so a malformed operand is
//!   `InvalidArgument` and nothing is written; without the check it would be
//!   acknowledged and then make every read of the key fail. It must accept every
//!   operand `full_merge` can apply and be a pure function of its arguments.
//! - An operator is identified by [`MergeOperator::name`]: the `OPTIONS` file records
//!   it, and opening a database with an operator of another name is refused (operands
//!   written for one operator would be misread by another).
//!
//! # Built-in operators
//! [`U64Add`] (8-byte little-endian counters), [`Append`] (byte strings joined by a
//! separator) and [`Max`] (bytewise maximum). All three are associative: they
//! implement [`AssociativeMergeOperator`], the fast path whose one function gives
//! both the full and the partial merge.

mod builtin;
pub(crate) mod chain;

pub use builtin::{Append, Max, U64Add};

use std::fmt;

/// Why an operator could not merge (for example an operand of the wrong size). Reads
/// of the key fail with [`crate::ErrorKind::MergeFailed`] carrying this reason;
/// compaction keeps such a chain unmerged, so nothing is lost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeError {
    /// What went wrong, in the operator's words.
    pub reason: String,
}

impl MergeError {
    /// A failure with this reason.
    pub fn new(reason: impl Into<String>) -> MergeError {
        MergeError {
            reason: reason.into(),
        }
    }
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

/// Combines merge operands with a key's older value. See the module docs for the
/// contract. Set it with [`crate::Options::merge_operator`].
pub trait MergeOperator: Send + Sync {
    /// The operator's identity, recorded in the `OPTIONS` file: one line, and a new
    /// name whenever the meaning of operands changes.
    fn name(&self) -> &str;

    /// The value of `key` after applying `operands` (oldest first) to `existing` (the
    /// newest older value, or `None` if the key did not exist or was deleted).
    ///
    /// # Errors
    /// A [`MergeError`] when the operands cannot be applied.
    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError>;

    /// One operand equivalent to `operands` (oldest first, at least two), or `None`
    /// to keep them apart. The default keeps them apart.
    fn partial_merge(&self, key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        let _ = (key, operands);
        None
    }

    /// `Ok` iff `operand` is one this operator can apply to `key`; run on every merge
    /// before a write is acknowledged (see the module docs). The default accepts
    /// every operand.
    ///
    /// # Errors
    /// A [`MergeError`] saying what is wrong with the operand.
    fn check_operand(&self, key: &[u8], operand: &[u8]) -> Result<(), MergeError> {
        let _ = (key, operand);
        Ok(())
    }
}

/// The fast path for operators whose operands and values are the same type and whose
/// merge is associative (RocksDB's `AssociativeMergeOperator`): one function gives
/// both [`MergeOperator::full_merge`] (a left fold from `existing`) and
/// [`MergeOperator::partial_merge`] (a left fold from the oldest operand).
pub trait AssociativeMergeOperator: Send + Sync {
    /// As [`MergeOperator::name`].
    fn name(&self) -> &str;

    /// `existing` combined with one newer `operand`. Must be associative.
    ///
    /// # Errors
    /// A [`MergeError`] when the operand cannot be applied.
    fn merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operand: &[u8],
    ) -> Result<Vec<u8>, MergeError>;

    /// As [`MergeOperator::check_operand`]; the default accepts every operand.
    ///
    /// # Errors
    /// A [`MergeError`] saying what is wrong with the operand.
    fn check_operand(&self, key: &[u8], operand: &[u8]) -> Result<(), MergeError> {
        let _ = (key, operand);
        Ok(())
    }
}

impl<T: AssociativeMergeOperator> MergeOperator for T {
    fn name(&self) -> &str {
        AssociativeMergeOperator::name(self)
    }

    fn check_operand(&self, key: &[u8], operand: &[u8]) -> Result<(), MergeError> {
        AssociativeMergeOperator::check_operand(self, key, operand)
    }

    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError> {
        let Some((first, rest)) = operands.split_first() else {
            return Ok(existing.unwrap_or_default().to_vec());
        };
        let mut acc = self.merge(key, existing, first)?;
        for op in rest {
            acc = self.merge(key, Some(&acc), op)?;
        }
        Ok(acc)
    }

    fn partial_merge(&self, key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        let (first, rest) = operands.split_first()?;
        let mut acc = first.to_vec();
        for op in rest {
            acc = self.merge(key, Some(&acc), op).ok()?;
        }
        Some(acc)
    }
}

/// Operators compare by name: the identity the `OPTIONS` file records.
impl PartialEq for dyn MergeOperator {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl fmt::Debug for dyn MergeOperator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MergeOperator({:?})", self.name())
    }
}

/// The built-in operator named `name` (as [`MergeOperator::name`] spells it), so an
/// `OPTIONS` file naming one decodes to the operator itself.
pub(crate) fn builtin_by_name(name: &str) -> Option<std::sync::Arc<dyn MergeOperator>> {
    builtin::by_name(name)
}

/// The operator a column family's operands were written for, by the name its
/// `OPTIONS` file records: the built-in itself, or, for an application's operator this
/// open was not given, a stand-in of that name that refuses every operand and merge.
/// So the name stays recorded and checked at the next open, new operands are refused
/// before they are acknowledged, reads of keys with operands fail naming the missing
/// operator, and compactions keep such chains as they are (a refused merge keeps its
/// operands, `compaction::merge_chain`).
pub(crate) fn recorded(name: &str) -> std::sync::Arc<dyn MergeOperator> {
    builtin::by_name(name).unwrap_or_else(|| {
        std::sync::Arc::new(Unavailable {
            name: name.to_string(),
        })
    })
}

/// See [`recorded`].
struct Unavailable {
    name: String,
}

impl Unavailable {
    fn refusal(&self) -> MergeError {
        MergeError::new(format!(
            "merge operator `{}` recorded for this column family was not given at open",
            self.name
        ))
    }
}

impl MergeOperator for Unavailable {
    fn name(&self) -> &str {
        &self.name
    }

    fn full_merge(
        &self,
        _key: &[u8],
        _existing: Option<&[u8]>,
        _operands: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError> {
        Err(self.refusal())
    }

    fn check_operand(&self, _key: &[u8], _operand: &[u8]) -> Result<(), MergeError> {
        Err(self.refusal())
    }
}
