//! A write batch with an index: a [`WriteBatch`] plus an ordered map from each user key
//! to its newest update in the batch, so the batch's owner reads its own writes.
//!
//! # Role
//! A [`crate::Transaction`] buffers its writes in one; so may a user who wants to read
//! a batch before writing it (RocksDB's `WriteBatchWithIndex`). Reads:
//! [`WriteBatchWithIndex::get_from_batch`] (the batch alone),
//! [`WriteBatchWithIndex::get_from_batch_and_db`] (the batch, else the database) and
//! [`WriteBatchWithIndex::iter`] (the batch laid over a database iterator, see
//! `base_delta.rs`). The batch is written with [`crate::Db::write`] after
//! [`WriteBatchWithIndex::into_write_batch`], or committed by its transaction.
//!
//! # Layout
//! Every update is appended to the [`WriteBatch`] as usual (so the batch replays and
//! commits unchanged; a key updated twice is there twice, and the later update wins
//! because it gets the later sequence number). The index maps the user key to a
//! [`Entry`]: a delete, or a put with the range of its value in the batch's bytes, so a
//! value is stored once. A new update of the key replaces the entry.
//!
//! # Adding an update kind
//! [`Entry`] and the public [`BatchValue`] are the only places that name the kinds of
//! update. A merge operand will be one more variant of each: the entry holding the
//! operands since the key's last put or delete (and that base, if any), and the match
//! arms that resolve them (`get_from_batch_and_db`, `BaseDeltaIterator`), which the
//! compiler lists.
//!
//! # Column families
//! The batch may update several families (`put_cf`, `delete_cf`): there is one index
//! per family, so a family's reads and its iterator see that family's updates only,
//! and the `WriteBatch` holds them all (one atomic write). The methods without `_cf`
//! are the default family's.
//!
//! # Invariants
//! 1. Each family's index holds exactly the keys the batch updates in that family,
//!    each with its last update.
//! 2. An update that would break a size limit is refused and changes nothing; the batch
//!    stays usable (a plain [`WriteBatch`] instead remembers the violation).
//!
//! # Concurrency
//! Plain data: `Send + Sync`, mutated through `&mut`; an iterator borrows it.

use super::base_delta::BaseDeltaIterator;
use crate::batch::WriteBatchInternal;
use crate::error::Result;
use crate::{CfHandle, Db, ReadOptions, WriteBatch};
use std::collections::BTreeMap;
use std::ops::Range;

/// The newest update of a key in the batch (module docs: *Adding an update kind*).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A put; its value is these bytes of the batch's data.
    Put(Range<usize>),
    /// A delete.
    Delete,
}

/// What a [`WriteBatchWithIndex`] holds for a key: its newest update in the batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BatchValue<'a> {
    /// The key is set to this value. Borrows the batch.
    Put(&'a [u8]),
    /// The key is deleted.
    Delete,
}

/// A [`WriteBatch`] that can be read: every update is also indexed by key, so
/// [`Self::get_from_batch_and_db`] and [`Self::iter`] see the batch's updates over the
/// database's contents. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct WriteBatchWithIndex {
    batch: WriteBatch,
    /// Per family id, its updated keys (module docs: *Column families*).
    indexes: BTreeMap<u32, BTreeMap<Vec<u8>, Entry>>,
}

/// The index of a family the batch does not touch.
static EMPTY: BTreeMap<Vec<u8>, Entry> = BTreeMap::new();

impl WriteBatchWithIndex {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `key = value`.
    ///
    /// # Errors
    /// `InvalidArgument` if the update would break a size limit (a key over
    /// [`crate::MAX_KEY_LEN`], a value over [`crate::MAX_VALUE_LEN`], or the batch over
    /// [`crate::MAX_BATCH_LEN`]); then nothing is added and the batch stays usable.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.batch.check_update(0, key, Some(value))?;
        self.batch.put(key, value);
        self.set_put(0, key, value.len());
        Ok(())
    }

    /// [`Self::put`] in column family `cf`.
    ///
    /// # Errors
    /// As [`Self::put`].
    pub fn put_cf(&mut self, cf: &CfHandle, key: &[u8], value: &[u8]) -> Result<()> {
        self.batch.check_update(cf.id(), key, Some(value))?;
        self.batch.put_cf(cf, key, value);
        self.set_put(cf.id(), key, value.len());
        Ok(())
    }

    /// Adds a deletion of `key`.
    ///
    /// # Errors
    /// As [`Self::put`] (`InvalidArgument` for a key over [`crate::MAX_KEY_LEN`] or a
    /// full batch).
    pub fn delete(&mut self, key: &[u8]) -> Result<()> {
        self.batch.check_update(0, key, None)?;
        self.batch.delete(key);
        self.set(0, key, Entry::Delete);
        Ok(())
    }

    /// [`Self::delete`] in column family `cf`.
    ///
    /// # Errors
    /// As [`Self::delete`].
    pub fn delete_cf(&mut self, cf: &CfHandle, key: &[u8]) -> Result<()> {
        self.batch.check_update(cf.id(), key, None)?;
        self.batch.delete_cf(cf, key);
        self.set(cf.id(), key, Entry::Delete);
        Ok(())
    }

    /// Indexes the put just appended: its value is the batch's last `value_len` bytes.
    fn set_put(&mut self, family: u32, key: &[u8], value_len: usize) {
        let end = self.batch.data().len();
        self.set(family, key, Entry::Put(end - value_len..end));
    }

    fn set(&mut self, family: u32, key: &[u8], entry: Entry) {
        let index = self.indexes.entry(family).or_default();
        match index.get_mut(key) {
            Some(e) => *e = entry,
            None => {
                index.insert(key.to_vec(), entry);
            }
        }
    }

    /// The newest update of `key` in the batch, or `None` if the batch does not touch
    /// it. The value borrows the batch.
    pub fn get_from_batch(&self, key: &[u8]) -> Option<BatchValue<'_>> {
        self.get_in(0, key)
    }

    /// [`Self::get_from_batch`] in column family `cf`.
    pub fn get_from_batch_cf(&self, cf: &CfHandle, key: &[u8]) -> Option<BatchValue<'_>> {
        self.get_in(cf.id(), key)
    }

    fn get_in(&self, family: u32, key: &[u8]) -> Option<BatchValue<'_>> {
        self.index(family).get(key).map(|e| self.value(e))
    }

    /// The value of `key` as the batch would leave it if written now over the database
    /// as read with `ro` (its snapshot, or the latest state): the batch's update if it
    /// has one, else the database's value.
    ///
    /// # Errors
    /// As [`Db::get`], when the batch does not decide.
    pub fn get_from_batch_and_db(
        &self,
        db: &Db,
        ro: &ReadOptions,
        key: &[u8],
    ) -> Result<Option<Vec<u8>>> {
        match self.get_from_batch(key) {
            Some(BatchValue::Put(v)) => Ok(Some(v.to_vec())),
            Some(BatchValue::Delete) => Ok(None),
            None => db.get(ro, key),
        }
    }

    /// [`Self::get_from_batch_and_db`] in column family `cf`.
    ///
    /// # Errors
    /// As [`Db::get_cf`], when the batch does not decide.
    pub fn get_from_batch_and_db_cf(
        &self,
        db: &Db,
        ro: &ReadOptions,
        cf: &CfHandle,
        key: &[u8],
    ) -> Result<Option<Vec<u8>>> {
        match self.get_from_batch_cf(cf, key) {
            Some(BatchValue::Put(v)) => Ok(Some(v.to_vec())),
            Some(BatchValue::Delete) => Ok(None),
            None => db.get_cf(ro, cf, key),
        }
    }

    /// An iterator over the database as read with `ro` (snapshot and bounds) with this
    /// batch's updates laid over it: a put replaces or adds a key, a delete hides it.
    /// Unpositioned; it borrows the batch, so the batch cannot change while it lives.
    ///
    /// # Errors
    /// As [`Db::iter`].
    pub fn iter(&self, db: &Db, ro: &ReadOptions) -> Result<BaseDeltaIterator<'_>> {
        Ok(BaseDeltaIterator::new(
            db.iter(ro)?,
            self,
            self.index(0),
            ro.lower_bound.clone(),
            ro.upper_bound.clone(),
        ))
    }

    /// [`Self::iter`] over column family `cf`.
    ///
    /// # Errors
    /// As [`Db::iter_cf`].
    pub fn iter_cf(
        &self,
        db: &Db,
        ro: &ReadOptions,
        cf: &CfHandle,
    ) -> Result<BaseDeltaIterator<'_>> {
        Ok(BaseDeltaIterator::new(
            db.iter_cf(ro, cf)?,
            self,
            self.index(cf.id()),
            ro.lower_bound.clone(),
            ro.upper_bound.clone(),
        ))
    }

    /// Number of updates (a key updated twice counts twice, as in the batch).
    pub fn len(&self) -> usize {
        self.batch.len()
    }

    /// True iff the batch holds no updates.
    pub fn is_empty(&self) -> bool {
        self.batch.is_empty()
    }

    /// The keys the batch updates in the default family, ascending.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &[u8]> + '_ {
        self.index(0).keys().map(Vec::as_slice)
    }

    /// Removes every update.
    pub fn clear(&mut self) {
        self.batch.clear();
        self.indexes.clear();
    }

    /// The batch to write (e.g. with [`Db::write`]).
    pub fn write_batch(&self) -> &WriteBatch {
        &self.batch
    }

    /// The batch to write, without its index.
    pub fn into_write_batch(self) -> WriteBatch {
        self.batch
    }

    /// The batch, and the keys it updates as `(family id, key)`.
    pub(crate) fn into_parts(self) -> (WriteBatch, impl Iterator<Item = (u32, Vec<u8>)>) {
        let keys = self
            .indexes
            .into_iter()
            .flat_map(|(family, index)| index.into_keys().map(move |k| (family, k)));
        (self.batch, keys)
    }

    /// The index of family `family` (empty if the batch does not touch it).
    fn index(&self, family: u32) -> &BTreeMap<Vec<u8>, Entry> {
        self.indexes.get(&family).unwrap_or(&EMPTY)
    }

    /// The public view of an entry; a put's value borrows the batch.
    pub(crate) fn value(&self, entry: &Entry) -> BatchValue<'_> {
        match entry {
            Entry::Put(range) => {
                BatchValue::Put(self.batch.data().get(range.clone()).unwrap_or_default())
            }
            Entry::Delete => BatchValue::Delete,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_update_wins_and_values_point_into_the_batch() {
        let mut b = WriteBatchWithIndex::new();
        b.put(b"a", b"1").unwrap();
        b.put(b"b", b"2").unwrap();
        b.delete(b"a").unwrap();
        b.put(b"b", b"22").unwrap();
        b.put(b"c", b"").unwrap();
        assert_eq!(b.get_from_batch(b"a"), Some(BatchValue::Delete));
        assert_eq!(b.get_from_batch(b"b"), Some(BatchValue::Put(b"22")));
        assert_eq!(b.get_from_batch(b"c"), Some(BatchValue::Put(b"")));
        assert_eq!(b.get_from_batch(b"d"), None);
        assert_eq!(b.len(), 5);
        assert_eq!(b.keys().collect::<Vec<_>>(), [b"a", b"b", b"c"]);
        let mut seen = Vec::new();
        b.write_batch()
            .iterate(|_, kind, k, v| seen.push((kind, k.to_vec(), v.to_vec())))
            .unwrap();
        assert_eq!(seen.len(), 5, "every update stays in the batch");
        b.clear();
        assert!(b.is_empty());
        assert_eq!(b.get_from_batch(b"b"), None);
    }

    #[test]
    fn an_update_over_a_limit_is_refused_and_the_batch_stays_usable() {
        let mut b = WriteBatchWithIndex::new();
        b.put(b"a", b"1").unwrap();
        let long_key = vec![0u8; crate::MAX_KEY_LEN + 1];
        let err = b.put(&long_key, b"v").unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument, "{err}");
        assert!(b.delete(&long_key).is_err());
        assert_eq!(b.len(), 1);
        assert_eq!(b.get_from_batch(&long_key), None);
        b.put(b"b", b"2").unwrap();
        assert!(b.write_batch().check_limits().is_ok());
        assert_eq!(b.get_from_batch(b"b"), Some(BatchValue::Put(b"2")));
    }
}
