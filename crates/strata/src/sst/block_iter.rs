//! A cursor over one decoded [`Block`].
//!
//! Role: used for data blocks by [`super::TableIterator`] and [`super::Table::get`], and
//! for the index block. Keys are internal keys ordered by
//! [`crate::key::compare_internal`].
//!
//! Corruption: a malformed entry makes the iterator invalid with
//! [`BlockIter::is_corrupt`] set; the owner turns that into
//! [`crate::Error::Corruption`] naming the file and block offset (the iterator knows
//! neither).
//!
//! Cost: `seek` is a binary search over restart keys (stored whole, so compared in
//! place) plus at most `restart_interval` decoded entries; `prev` re-decodes from the
//! previous restart point. The key buffer is reused across moves and blocks.

use super::block::Block;
use crate::key::compare_internal;
use std::cmp::Ordering;
use std::ops::Range;
use std::sync::Arc;

/// A positioned cursor over one block. Not thread-safe to share; cheap to create.
#[derive(Debug)]
pub struct BlockIter {
    block: Arc<Block>,
    /// The current key, rebuilt from the prefix-compressed entries.
    key: Vec<u8>,
    value: Range<usize>,
    /// Offset of the current entry; `>= entries_end` means not positioned.
    current: usize,
    /// Offset of the entry after the current one.
    next: usize,
    /// Index of the last restart point at or before `current`.
    restart_index: usize,
    corrupt: bool,
}

impl BlockIter {
    /// An unpositioned iterator over `block`.
    pub fn new(block: Arc<Block>) -> Self {
        Self::with_key_buf(block, Vec::new())
    }

    /// Like [`Self::new`], reusing `buf`'s allocation for keys (the get path passes a
    /// per-thread buffer so that a warm lookup allocates nothing).
    pub fn with_key_buf(block: Arc<Block>, mut buf: Vec<u8>) -> Self {
        buf.clear();
        let end = block.entries_end();
        BlockIter {
            block,
            key: buf,
            value: 0..0,
            current: end,
            next: end,
            restart_index: 0,
            corrupt: false,
        }
    }

    /// Re-targets this iterator at another block (unpositioned), keeping the buffer.
    pub fn reset(&mut self, block: Arc<Block>) {
        let end = block.entries_end();
        self.block = block;
        self.key.clear();
        self.value = 0..0;
        self.current = end;
        self.next = end;
        self.restart_index = 0;
        self.corrupt = false;
    }

    /// Gives back the key buffer.
    pub fn into_key_buf(self) -> Vec<u8> {
        self.key
    }

    /// True iff positioned at an entry.
    #[inline]
    pub fn valid(&self) -> bool {
        !self.corrupt && self.current < self.block.entries_end()
    }

    /// True iff a malformed entry was met (the iterator is then invalid).
    pub fn is_corrupt(&self) -> bool {
        self.corrupt
    }

    /// The current key; empty if not valid. Valid until the iterator moves.
    #[inline]
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The current value; empty if not valid. Valid until the iterator moves.
    #[inline]
    pub fn value(&self) -> &[u8] {
        self.block
            .data()
            .get(self.value.clone())
            .unwrap_or_default()
    }

    /// Positions at the first entry.
    pub fn seek_to_first(&mut self) {
        self.seek_to_restart(0);
        self.parse_next();
    }

    /// Positions at the last entry.
    pub fn seek_to_last(&mut self) {
        self.seek_to_restart(self.block.num_restarts().saturating_sub(1));
        while self.parse_next() && self.next < self.block.entries_end() {}
    }

    /// Positions at the first entry `>= target`.
    pub fn seek(&mut self, target: &[u8]) {
        if self.corrupt {
            return;
        }
        // Find the last restart point whose key is < target.
        let (mut left, mut right) = (0usize, self.block.num_restarts().saturating_sub(1));
        while left < right {
            let mid = left + (right - left).div_ceil(2);
            match self.restart_key(mid) {
                Some(k) if compare_internal(k, target) == Ordering::Less => left = mid,
                Some(_) => right = mid - 1,
                None => return self.mark_corrupt(),
            }
        }
        self.seek_to_restart(left);
        while self.parse_next() {
            if compare_internal(&self.key, target) != Ordering::Less {
                return;
            }
        }
    }

    /// Positions at the last entry `<= target`.
    #[cfg_attr(
        not(feature = "internals"),
        allow(
            dead_code,
            reason = "tests and the `block` fuzz check; tables compose seek and prev"
        )
    )]
    pub fn seek_for_prev(&mut self, target: &[u8]) {
        self.seek(target);
        if self.valid() {
            if compare_internal(&self.key, target) == Ordering::Greater {
                self.prev();
            }
        } else if !self.corrupt {
            self.seek_to_last();
        }
    }

    /// Moves to the next entry. Requires `valid()` (otherwise a no-op).
    pub fn next(&mut self) {
        if self.valid() {
            self.parse_next();
        }
    }

    /// Moves to the previous entry (invalid before the first). Requires `valid()`.
    pub fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        let original = self.current;
        loop {
            match self.block.restart(self.restart_index) {
                Some(r) if r < original => break,
                Some(_) if self.restart_index > 0 => self.restart_index -= 1,
                Some(_) => return self.invalidate(),
                None => return self.mark_corrupt(),
            }
        }
        self.seek_to_restart(self.restart_index);
        while self.parse_next() && self.next < original {}
    }

    /// The whole key stored at restart point `i` (restart entries share nothing).
    fn restart_key(&self, i: usize) -> Option<&[u8]> {
        let e = self.block.decode_entry(self.block.restart(i)?)?;
        if e.shared != 0 {
            return None;
        }
        self.block.data().get(e.key_delta)
    }

    fn seek_to_restart(&mut self, i: usize) {
        self.key.clear();
        self.restart_index = i;
        match self.block.restart(i) {
            Some(r) => self.next = r,
            None => self.mark_corrupt(),
        }
    }

    /// Leaves the iterator unpositioned (not corrupt), keeping block and buffer.
    pub fn invalidate(&mut self) {
        self.current = self.block.entries_end();
        self.next = self.current;
        self.key.clear();
        self.value = 0..0;
    }

    fn mark_corrupt(&mut self) {
        self.corrupt = true;
        self.invalidate();
    }

    /// Decodes the entry at `next`; false (and not positioned) at the end or on
    /// corruption.
    fn parse_next(&mut self) -> bool {
        if self.corrupt {
            return false;
        }
        self.current = self.next;
        if self.current >= self.block.entries_end() {
            self.invalidate();
            return false;
        }
        let Some(e) = self.block.decode_entry(self.current) else {
            self.mark_corrupt();
            return false;
        };
        if e.shared > self.key.len() {
            self.mark_corrupt();
            return false;
        }
        let Some(delta) = self.block.data().get(e.key_delta) else {
            self.mark_corrupt();
            return false;
        };
        self.key.truncate(e.shared);
        self.key.extend_from_slice(delta);
        self.next = e.value.end;
        self.value = e.value;
        while self.restart_index + 1 < self.block.num_restarts() {
            match self.block.restart(self.restart_index + 1) {
                Some(r) if r <= self.current => self.restart_index += 1,
                _ => break,
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::block::BlockBuilder;
    use super::*;
    use crate::key::{make_internal_key, ValueKind};

    fn ikey(i: u32) -> Vec<u8> {
        make_internal_key(format!("key{:06}", i * 2).as_bytes(), 7, ValueKind::Put)
    }

    fn build(n: u32, interval: usize) -> Arc<Block> {
        let mut b = BlockBuilder::new(interval);
        for i in 0..n {
            b.add(&ikey(i), format!("value{i}").as_bytes())
                .expect("small entry");
        }
        Arc::new(Block::decode(b.finish().to_vec()).expect("valid block"))
    }

    #[test]
    fn round_trip_across_restart_intervals() {
        for interval in [1, 2, 3, 7, 16, 100] {
            for n in [0u32, 1, 2, 15, 16, 17, 200] {
                let block = build(n, interval);
                let mut it = BlockIter::new(Arc::clone(&block));
                it.seek_to_first();
                for i in 0..n {
                    assert!(it.valid(), "interval {interval} n {n} i {i}");
                    assert_eq!(it.key(), &ikey(i)[..]);
                    assert_eq!(it.value(), format!("value{i}").as_bytes());
                    it.next();
                }
                assert!(!it.valid() && !it.is_corrupt());
                it.seek_to_last();
                for i in (0..n).rev() {
                    assert!(it.valid());
                    assert_eq!(it.key(), &ikey(i)[..]);
                    it.prev();
                }
                assert!(!it.valid() && !it.is_corrupt());
                for i in 0..n {
                    // Exact hits, and targets between keys (odd numbers are absent).
                    it.seek(&ikey(i));
                    assert_eq!(it.key(), &ikey(i)[..]);
                    let between = make_internal_key(
                        format!("key{:06}", i * 2 + 1).as_bytes(),
                        7,
                        ValueKind::Put,
                    );
                    it.seek(&between);
                    if i + 1 < n {
                        assert_eq!(it.key(), &ikey(i + 1)[..]);
                    } else {
                        assert!(!it.valid());
                    }
                    it.seek_for_prev(&between);
                    assert_eq!(it.key(), &ikey(i)[..]);
                    it.seek_for_prev(&ikey(i));
                    assert_eq!(it.key(), &ikey(i)[..]);
                }
                it.seek_for_prev(b"\0\0\0\0\0\0\0\0\0");
                assert!(!it.valid());
            }
        }
    }

    #[test]
    fn malformed_entries_mark_corrupt_without_panicking() {
        let block = build(50, 4);
        let data = block.data().to_vec();
        for pos in 0..data.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = data.clone();
                bad[pos] ^= flip;
                let Ok(b) = Block::decode(bad) else { continue };
                let mut it = BlockIter::new(Arc::new(b));
                it.seek_to_first();
                let mut steps = 0;
                while it.valid() && steps < 100 {
                    it.next();
                    steps += 1;
                }
                it.seek_to_last();
                while it.valid() && steps < 200 {
                    it.prev();
                    steps += 1;
                }
                it.seek(&ikey(25));
                it.seek_for_prev(&ikey(25));
            }
        }
    }
}
