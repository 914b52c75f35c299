//! The database handle (being written; signatures are final).
#![allow(missing_docs, unused_variables, clippy::needless_pass_by_value)]

use crate::{DbStats, Options, ReadOptions, Result, Snapshot, WriteBatch, WriteOptions};
use std::path::Path;

/// An open database. `Send + Sync`: share it across threads by reference or `Arc`.
pub struct Db;

/// A user-facing iterator over `(key, value)` pairs within the read's bounds.
pub struct DbIterator;

impl DbIterator {
    pub fn valid(&self) -> bool {
        todo!()
    }
    pub fn seek_to_first(&mut self) {
        todo!()
    }
    pub fn seek_to_last(&mut self) {
        todo!()
    }
    /// First key >= `key`.
    pub fn seek(&mut self, key: &[u8]) {
        todo!()
    }
    /// Last key <= `key`.
    pub fn seek_for_prev(&mut self, key: &[u8]) {
        todo!()
    }
    pub fn next(&mut self) {
        todo!()
    }
    pub fn prev(&mut self) {
        todo!()
    }
    pub fn key(&self) -> &[u8] {
        todo!()
    }
    pub fn value(&self) -> &[u8] {
        todo!()
    }
    pub fn status(&self) -> Result<()> {
        todo!()
    }
}

impl Db {
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        todo!()
    }
    pub fn put(&self, wo: &WriteOptions, key: &[u8], value: &[u8]) -> Result<()> {
        todo!()
    }
    pub fn delete(&self, wo: &WriteOptions, key: &[u8]) -> Result<()> {
        todo!()
    }
    pub fn write(&self, wo: &WriteOptions, batch: WriteBatch) -> Result<()> {
        todo!()
    }
    pub fn get(&self, ro: &ReadOptions, key: &[u8]) -> Result<Option<Vec<u8>>> {
        todo!()
    }
    pub fn iter(&self, ro: &ReadOptions) -> Result<DbIterator> {
        todo!()
    }
    pub fn snapshot(&self) -> Snapshot {
        todo!()
    }
    /// Flushes the active memtable and waits for it to reach L0.
    pub fn flush(&self) -> Result<()> {
        todo!()
    }
    /// Compacts every file overlapping `[begin, end]` down to the bottom level.
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        todo!()
    }
    /// Waits until no flush or compaction is pending or running.
    pub fn wait_for_compactions(&self) -> Result<()> {
        todo!()
    }
    pub fn stats(&self) -> DbStats {
        todo!()
    }
    /// Stops background work, syncs the WAL, releases the lock.
    pub fn close(self) -> Result<()> {
        todo!()
    }
}
