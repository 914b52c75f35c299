//! The memtable iterator: an [`InternalIterator`] over one memtable's skiplist.

use std::fmt;
use std::sync::Arc;

use super::skiplist::Cursor;
use super::MemTable;
use crate::error::Result;
use crate::iter::InternalIterator;

/// A cursor over a [`MemTable`] that keeps it alive through an `Arc`.
///
/// Adds to the [`InternalIterator`] contract: it never fails (`status()` is always `Ok`);
/// `prev`, `seek_for_prev` and `seek_to_last` are O(log n) searches (LevelDB's design);
/// `key()`/`value()` borrow the memtable's arena and in fact stay valid for the life of
/// the iterator, not only until the next move. Entries added after a seek may or may not
/// be seen by later `next`/`prev` calls.
pub struct MemTableIterator {
    table: Arc<MemTable>,
    pos: Cursor,
}

impl fmt::Debug for MemTableIterator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemTableIterator")
            .field("valid", &self.valid())
            .finish()
    }
}

impl MemTableIterator {
    pub(super) fn new(table: Arc<MemTable>) -> MemTableIterator {
        let pos = table.list.unpositioned();
        MemTableIterator { table, pos }
    }
}

impl InternalIterator for MemTableIterator {
    fn valid(&self) -> bool {
        self.pos.is_valid()
    }

    fn seek_to_first(&mut self) {
        self.pos = self.table.list.first();
    }

    fn seek_to_last(&mut self) {
        self.pos = self.table.list.last();
    }

    fn seek(&mut self, target: &[u8]) {
        self.pos = self.table.list.seek(target);
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.pos = self.table.list.seek_for_prev(target);
    }

    fn next(&mut self) {
        self.pos = self.table.list.next(self.pos);
    }

    fn prev(&mut self) {
        self.pos = self.table.list.prev(self.pos);
    }

    fn key(&self) -> &[u8] {
        debug_assert!(self.valid(), "key() requires valid()");
        self.table.list.entry(&self.pos).map_or(&[], |e| e.0)
    }

    fn value(&self) -> &[u8] {
        debug_assert!(self.valid(), "value() requires valid()");
        self.table.list.entry(&self.pos).map_or(&[], |e| e.1)
    }

    fn status(&self) -> Result<()> {
        Ok(())
    }
}
