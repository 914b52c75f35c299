//! Optimistic transactions (snapshot isolation, validated at commit) and the indexed
//! write batch they buffer their writes in.
//!
//! # Role
//! [`crate::Db::transaction`] begins a [`Transaction`]: it pins a snapshot, buffers
//! writes in a [`WriteBatchWithIndex`], reads its own writes over the snapshot
//! ([`Transaction::get`], [`Transaction::iter`]), records the keys it reads with
//! [`Transaction::get_for_update`], and at [`Transaction::commit`] hands its batch,
//! its snapshot's sequence number and its keys to the database's conflict check
//! (`db/conflict.rs`), which the write leader runs atomically with the write.
//! Lifecycle: begun → reads and writes → committed, or rolled back (also on drop).
//!
//! # Isolation
//! Snapshot isolation, as RocksDB's `OptimisticTransactionDB` with `set_snapshot` and
//! fjall's optimistic transactions: every read sees the snapshot taken at begin plus
//! the transaction's own writes, and the commit fails with [`crate::ErrorKind::Conflict`]
//! iff a key the transaction wrote, or read with `get_for_update`, has a version
//! (put or delete, by a transaction or a plain write) committed after the snapshot.
//! Keys read with plain `get` or by iterators are not checked: two transactions that
//! each read what the other writes can both commit (write skew). Use
//! `get_for_update` on the keys whose values the writes depend on to rule that out.
//!
//! # Invariants
//! 1. A transaction writes all of its batch or nothing, and only at `commit`.
//! 2. A failed commit (conflict or error) writes nothing; a rollback or a drop writes
//!    nothing.
//! 3. The snapshot is held from begin to the end of the commit, so compaction keeps
//!    every version newer than it and the conflict check is exact.
//!
//! # Concurrency
//! A `Transaction` has one owner (it is `Send`, not shared); any number run at once.
//!
//! # See also
//! docs/ARCHITECTURE.md §16; `tests/bank_transfer.rs`, `tests/transaction_conflicts.rs`,
//! the transaction ops of `tests/model_based.rs`; `txn/tests.rs` (the iterator against
//! a model).

mod base_delta;
mod indexed_batch;
#[cfg(test)]
mod tests;

pub use base_delta::BaseDeltaIterator;
pub use indexed_batch::{BatchValue, WriteBatchWithIndex};

use crate::error::Result;
use crate::{CfHandle, Db, ReadOptions, Snapshot, WriteOptions};
use std::collections::BTreeSet;

/// Options of one transaction. None yet: the isolation level is fixed (snapshot
/// isolation, see [`Transaction`]) and write options are given at commit. Build with
/// `TransactionOptions::default()`.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct TransactionOptions {}

/// An optimistic transaction: reads a snapshot taken at begin plus its own writes,
/// buffers its writes, and commits them atomically unless a key it wrote or read with
/// [`Self::get_for_update`] was written by anyone after its snapshot. Begun by
/// [`Db::transaction`]; see the module docs for the isolation level.
///
/// Dropping it without [`Self::commit`] rolls it back.
pub struct Transaction<'db> {
    db: &'db Db,
    /// Pinned from begin until the transaction ends (module invariant 3).
    snapshot: Snapshot,
    writes: WriteBatchWithIndex,
    /// Keys read with `get_for_update`, as `(family id, key)` (checked at commit with
    /// the written keys).
    read_for_update: BTreeSet<(u32, Vec<u8>)>,
}

impl<'db> Transaction<'db> {
    pub(crate) fn begin(db: &'db Db, _options: &TransactionOptions) -> Self {
        Transaction {
            db,
            snapshot: db.snapshot(),
            writes: WriteBatchWithIndex::new(),
            read_for_update: BTreeSet::new(),
        }
    }

    /// The snapshot every read of this transaction sees (under its own writes).
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// `ro` reading at this transaction's snapshot.
    fn at_snapshot(&self, ro: &ReadOptions) -> ReadOptions {
        ro.clone().with_snapshot(self.snapshot.clone())
    }

    /// The value of `key`: this transaction's own write if it has one, else the value at
    /// its snapshot. `ro.snapshot` is ignored: a transaction always reads its own.
    ///
    /// # Errors
    /// As [`Db::get`].
    pub fn get(&self, ro: &ReadOptions, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.writes
            .get_from_batch_and_db(self.db, &self.at_snapshot(ro), key)
    }

    /// As [`Self::get`], and records `key` so that the commit fails if anyone writes it
    /// after this transaction's snapshot (whether or not this transaction writes it).
    ///
    /// # Errors
    /// As [`Db::get`]; the key is recorded even then.
    pub fn get_for_update(&mut self, ro: &ReadOptions, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.read_for_update.insert((0, key.to_vec()));
        self.get(ro, key)
    }

    /// [`Self::get`] in column family `cf`.
    ///
    /// # Errors
    /// As [`Db::get_cf`].
    pub fn get_cf(&self, ro: &ReadOptions, cf: &CfHandle, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.writes
            .get_from_batch_and_db_cf(self.db, &self.at_snapshot(ro), cf, key)
    }

    /// [`Self::get_for_update`] in column family `cf`: a write of `key` in `cf` after
    /// the snapshot fails the commit.
    ///
    /// # Errors
    /// As [`Db::get_cf`]; the key is recorded even then.
    pub fn get_for_update_cf(
        &mut self,
        ro: &ReadOptions,
        cf: &CfHandle,
        key: &[u8],
    ) -> Result<Option<Vec<u8>>> {
        self.read_for_update.insert((cf.id(), key.to_vec()));
        self.get_cf(ro, cf, key)
    }

    /// Sets `key` to `value` in this transaction.
    ///
    /// # Errors
    /// `InvalidArgument` if the update would break a size limit (as for
    /// [`crate::WriteBatch`]); nothing is recorded and the transaction stays usable.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.writes.put(key, value)
    }

    /// Deletes `key` in this transaction.
    ///
    /// # Errors
    /// As [`Self::put`].
    pub fn delete(&mut self, key: &[u8]) -> Result<()> {
        self.writes.delete(key)
    }

    /// [`Self::put`] in column family `cf`.
    ///
    /// # Errors
    /// As [`Self::put`].
    pub fn put_cf(&mut self, cf: &CfHandle, key: &[u8], value: &[u8]) -> Result<()> {
        self.writes.put_cf(cf, key, value)
    }

    /// [`Self::delete`] in column family `cf`.
    ///
    /// # Errors
    /// As [`Self::put`].
    pub fn delete_cf(&mut self, cf: &CfHandle, key: &[u8]) -> Result<()> {
        self.writes.delete_cf(cf, key)
    }

    /// [`Self::iter`] over column family `cf`.
    ///
    /// # Errors
    /// As [`Db::iter_cf`].
    pub fn iter_cf(&self, ro: &ReadOptions, cf: &CfHandle) -> Result<BaseDeltaIterator<'_>> {
        self.writes.iter_cf(self.db, &self.at_snapshot(ro), cf)
    }

    /// An iterator over this transaction's view: the snapshot within `ro`'s bounds with
    /// the transaction's writes laid over it. `ro.snapshot` is ignored. Keys it yields
    /// are not recorded for the conflict check.
    ///
    /// # Errors
    /// As [`Db::iter`].
    pub fn iter(&self, ro: &ReadOptions) -> Result<BaseDeltaIterator<'_>> {
        self.writes.iter(self.db, &self.at_snapshot(ro))
    }

    /// The writes buffered so far.
    pub fn writes(&self) -> &WriteBatchWithIndex {
        &self.writes
    }

    /// Writes this transaction's updates atomically, iff no key it wrote or read with
    /// [`Self::get_for_update`] has a version committed after its snapshot. The check
    /// and the write are one step of the commit order: no write can come between them.
    /// A transaction with no writes only checks.
    ///
    /// # Errors
    /// - `Conflict` ([`crate::Error::Conflict`] names the first conflicting key): nothing
    ///   was written; run the whole transaction again.
    /// - Otherwise as [`Db::write`] (`InvalidArgument`, `Poisoned`, a retryable I/O
    ///   error), and `Io` or `Corruption` from a table read of the check.
    pub fn commit(self, wo: &WriteOptions) -> Result<()> {
        let Transaction {
            db,
            snapshot,
            writes,
            read_for_update: mut keys,
        } = self;
        let (batch, written) = writes.into_parts();
        keys.extend(written);
        db.write_unless_changed(
            wo,
            batch,
            snapshot.sequence(),
            keys.iter().map(|(family, key)| (*family, key.as_slice())),
        )
    }

    /// Discards this transaction's writes. Same as dropping it.
    pub fn rollback(self) {}
}

impl std::fmt::Debug for Transaction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("snapshot", &self.snapshot)
            .field("writes", &self.writes.len())
            .field("read_for_update", &self.read_for_update.len())
            .finish_non_exhaustive()
    }
}
