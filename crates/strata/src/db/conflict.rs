//! The commit-time conflict check of optimistic transactions: "has any of these keys a
//! version committed after this snapshot?", answered exactly.
//!
//! # Role
//! [`crate::Transaction::commit`] calls [`write_unless_changed`] with its batch, its
//! snapshot's sequence number and the keys it wrote or read with `get_for_update`. The
//! check runs inside the write leader (`write.rs` invariant 7), so it sees every write
//! sequenced before the batch and nothing can be sequenced between it and the batch.
//!
//! # Exactness
//! Each key is looked up with [`read::newer_sequence`], which walks the read path's
//! sources (memtables, then the tables that may hold the key) and skips only tables
//! whose entries are all at or below the snapshot. So a newer version is found wherever
//! it lives, a flushed or compacted one included: there is no "history too short"
//! answer as in RocksDB's memtable-only check. Compaction cannot hide a newer version:
//! the transaction's snapshot is live, so compaction keeps the newest version of every
//! key above it (`compaction::gc`: a tombstone is dropped only in stripe 0, at or below
//! the oldest snapshot), and sequence numbers are never rewritten.
//!
//! # Invariants
//! 1. A key has a conflict iff its newest version visible at the check has a sequence
//!    number greater than the snapshot's (whatever its kind: put, delete or merge).
//! 2. A failed check writes nothing and consumes no sequence number.
//!
//! # See also
//! docs/ARCHITECTURE.md §16, `txn/` (the transaction), `tests/transaction_conflicts.rs`
//! and `tests/bank_transfer.rs`.

use super::{read, write, DbInner, SuperVersion};
use crate::error::{Error, Result};
use crate::key::{LookupKey, SequenceNumber};
use crate::options::WriteOptions;
use crate::WriteBatch;
use std::sync::Arc;

/// Fails with [`Error::Conflict`] naming the first key of `keys` whose newest version
/// is newer than `snapshot` (invariant 1).
///
/// Exact for every write published when it runs: the write leader calls it after its
/// drain, when every sequenced write is published; a caller outside the write queue
/// gets the answer as of the writes acknowledged before the call.
///
/// # Errors
/// `Conflict`; `Io` or `Corruption` from a table read.
fn check<'k>(
    inner: &DbInner,
    snapshot: SequenceNumber,
    keys: impl IntoIterator<Item = (u32, &'k [u8])>,
) -> Result<()> {
    // Sequence first, then the views: each holds every write up to it (read.rs).
    let read_seq = inner.versions.last_sequence();
    let mut lookup = LookupKey::default();
    // Keys come grouped by family: load each family's view once.
    let mut current: Option<(u32, arc_swap::Guard<Arc<SuperVersion>>)> = None;
    for (family, key) in keys {
        let sv = match &current {
            Some((id, sv)) if *id == family => sv,
            _ => {
                let sv = match inner.state.lock().families.get(&family) {
                    Some(f) => f.family.super_version.load(),
                    None => {
                        return Err(Error::InvalidArgument(format!(
                            "the transaction touches a dropped column family: id=`{family}`"
                        )))
                    }
                };
                &current.insert((family, sv)).1
            }
        };
        lookup.set(key, read_seq);
        if let Some(committed) = read::newer_sequence(inner, sv, &lookup, snapshot)? {
            return Err(Error::Conflict {
                key: key.to_vec(),
                snapshot,
                committed,
            });
        }
    }
    Ok(())
}

/// Commits `batch` iff no key of `keys` has a version newer than `snapshot`, checked
/// atomically with the commit (`write.rs` invariant 7). An empty `batch` is only
/// checked: there is nothing to order against later writes.
///
/// # Errors
/// `Conflict` (nothing written); otherwise as [`crate::Db::write`].
pub(crate) fn write_unless_changed<'k>(
    inner: &DbInner,
    wo: &WriteOptions,
    batch: WriteBatch,
    snapshot: SequenceNumber,
    keys: impl IntoIterator<Item = (u32, &'k [u8])>,
) -> Result<()> {
    batch.check_limits()?;
    if batch.is_empty() {
        return check(inner, snapshot, keys);
    }
    let mut keys = Some(keys);
    write::write_validated(inner, wo, batch, &mut |inner| match keys.take() {
        Some(keys) => check(inner, snapshot, keys),
        None => Err(Error::Internal("a write validation ran twice".into())),
    })
}
