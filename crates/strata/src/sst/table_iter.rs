//! [`TableIterator`]: the two-level iterator over one table (index block → data blocks).
//!
//! Adds to the [`InternalIterator`] contract: it owns an `Arc<Table>`, so it may outlive
//! the table cache entry that produced it; the current data block is an `Arc` (shared
//! with the block cache), so keys and values borrow from it until the iterator moves.
//! The first error (bad block, failed read) is kept and makes the iterator invalid
//! for good; later moves are no-ops.

use super::block::Block;
use super::block_iter::BlockIter;
use super::readahead::Readahead;
use super::Table;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::{self, compare_internal};
use std::cmp::Ordering;
use std::sync::Arc;

/// Iterates a table's entries in internal-key order.
pub struct TableIterator {
    table: Arc<Table>,
    index: BlockIter,
    /// Iterator over the data block the index currently points at (`None` before the
    /// first block is loaded).
    data: Option<BlockIter>,
    /// Offset of the block loaded in `data`, to avoid re-reading it.
    data_offset: Option<u64>,
    err: Option<Error>,
    /// Whether blocks read from the file are added to the block cache.
    fill_cache: bool,
    /// Bytes read ahead of sequential block reads (direct I/O files only).
    readahead: Readahead,
}

impl std::fmt::Debug for TableIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableIterator")
            .field("table", &self.table.path())
            .field("data_offset", &self.data_offset)
            .field("err", &self.err)
            .finish_non_exhaustive()
    }
}

impl TableIterator {
    pub(crate) fn new(table: Arc<Table>, fill_cache: bool) -> Self {
        // A cached index block that cannot be read back makes an iterator that is
        // never valid and reports the error.
        let (index, err) = match table.index_block() {
            Ok(b) => (b, None),
            Err(e) => (Arc::new(Block::empty()), Some(e)),
        };
        TableIterator {
            table,
            index: BlockIter::new(index),
            data: None,
            data_offset: None,
            err,
            fill_cache,
            readahead: Readahead::default(),
        }
    }

    fn fail(&mut self, e: Error) {
        if self.err.is_none() {
            self.err = Some(e);
        }
        if let Some(d) = &mut self.data {
            d.invalidate();
        }
    }

    /// Loads the data block the index points at (unpositioned), or unpositions the data
    /// iterator if the index is exhausted. Returns true iff a block is loaded.
    fn load_data_block(&mut self) -> bool {
        if !self.index.valid() {
            if self.index.is_corrupt() {
                let offset = self.table.index_block_offset();
                self.fail(self.table.corruption(offset, "malformed index entry"));
            }
            if let Some(d) = &mut self.data {
                d.invalidate();
            }
            return false;
        }
        let handle = match self.table.index_handle(self.index.value()) {
            Ok(h) => h,
            Err(e) => {
                self.fail(e);
                return false;
            }
        };
        if self.data_offset == Some(handle.offset) && self.data.is_some() {
            return true;
        }
        let ra = Some(&mut self.readahead);
        match self
            .table
            .read_data_block_ahead(handle, self.fill_cache, ra)
        {
            Ok(block) => {
                match &mut self.data {
                    Some(d) => d.reset(block),
                    None => self.data = Some(BlockIter::new(block)),
                }
                self.data_offset = Some(handle.offset);
                true
            }
            Err(e) => {
                self.data_offset = None;
                self.fail(e);
                false
            }
        }
    }

    /// Turns a corrupt data iterator, or an entry whose key is not a well-formed
    /// internal key, into the sticky error (naming this table and the block's offset);
    /// true iff an error is set. So every consumer (the read path, compaction) can rely
    /// on the keys a table iterator yields.
    fn check_data(&mut self) -> bool {
        if self.err.is_some() {
            return true;
        }
        let reason = match &self.data {
            Some(d) if d.is_corrupt() => Some("malformed data block entry"),
            Some(d) if d.valid() && key::parse_internal_key(d.key()).is_none() => {
                Some("malformed internal key")
            }
            _ => None,
        };
        if let Some(reason) = reason {
            let offset = self.data_offset.unwrap_or(0);
            self.fail(self.table.corruption(offset, reason));
            return true;
        }
        false
    }

    fn data_valid(&self) -> bool {
        self.data.as_ref().is_some_and(BlockIter::valid)
    }

    /// Moves forward over empty or exhausted data blocks.
    fn skip_empty_forward(&mut self) {
        while !self.check_data() && !self.data_valid() {
            if !self.index.valid() {
                return;
            }
            self.index.next();
            if !self.load_data_block() {
                return;
            }
            if let Some(d) = &mut self.data {
                d.seek_to_first();
            }
        }
    }

    /// Moves backward over empty or exhausted data blocks.
    fn skip_empty_backward(&mut self) {
        while !self.check_data() && !self.data_valid() {
            if !self.index.valid() {
                return;
            }
            self.index.prev();
            if !self.load_data_block() {
                return;
            }
            if let Some(d) = &mut self.data {
                d.seek_to_last();
            }
        }
    }
}

impl InternalIterator for TableIterator {
    fn valid(&self) -> bool {
        self.err.is_none() && self.data_valid()
    }

    fn seek_to_first(&mut self) {
        if self.err.is_some() {
            return;
        }
        self.index.seek_to_first();
        if self.load_data_block() {
            if let Some(d) = &mut self.data {
                d.seek_to_first();
            }
        }
        self.skip_empty_forward();
    }

    fn seek_to_last(&mut self) {
        if self.err.is_some() {
            return;
        }
        self.index.seek_to_last();
        if self.load_data_block() {
            if let Some(d) = &mut self.data {
                d.seek_to_last();
            }
        }
        self.skip_empty_backward();
    }

    fn seek(&mut self, target: &[u8]) {
        if self.err.is_some() {
            return;
        }
        self.index.seek(target);
        if self.load_data_block() {
            if let Some(d) = &mut self.data {
                d.seek(target);
            }
        }
        self.skip_empty_forward();
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.seek(target);
        if self.valid() {
            if compare_internal(self.key(), target) == Ordering::Greater {
                self.prev();
            }
        } else if self.err.is_none() {
            self.seek_to_last();
        }
    }

    fn next(&mut self) {
        if !self.valid() {
            return;
        }
        if let Some(d) = &mut self.data {
            d.next();
        }
        self.skip_empty_forward();
    }

    fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        if let Some(d) = &mut self.data {
            d.prev();
        }
        self.skip_empty_backward();
    }

    fn key(&self) -> &[u8] {
        self.data.as_ref().map(BlockIter::key).unwrap_or_default()
    }

    fn value(&self) -> &[u8] {
        self.data.as_ref().map(BlockIter::value).unwrap_or_default()
    }

    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.duplicate()),
            None => Ok(()),
        }
    }
}
