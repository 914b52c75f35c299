//! Data and index blocks: sorted entries with key prefix compression and restart points.
//!
//! Role: [`BlockBuilder`] is filled by the table builder (data blocks, and the index
//! block with a restart interval of 1); [`Block::decode`] validates the bytes read back
//! (after the trailer was checked and the contents decompressed); [`super::BlockIter`]
//! walks a decoded block.
//!
//! # Format (block contents, before the trailer)
//! ```text
//! entry*            shared: varint32 | non_shared: varint32 | value_len: varint32
//!                   | key_delta: non_shared bytes | value: value_len bytes
//! restarts          num_restarts × u32 LE, offsets of restart entries, ascending
//! num_restarts      u32 LE, >= 1
//! ```
//! An entry's key is the first `shared` bytes of the previous entry's key followed by
//! `key_delta`. Every `restart_interval`-th entry is a restart point and has
//! `shared == 0`, so a reader can binary-search the restart array and decode from there.
//!
//! # Invariants
//! 1. Keys are strictly ascending under [`crate::key::compare_internal`] (the builder's
//!    caller enforces it), which makes the binary search over restarts correct.
//! 2. The first entry (offset 0) is always a restart point, so an empty restart array
//!    never occurs; `num_restarts >= 1` even for an empty block.
//! 3. Every restart offset, entry header field and the restart count fit in u32:
//!    [`BlockBuilder::add`] refuses (with an error, before changing anything) an entry
//!    that would break this, so nothing is ever truncated. The data blocks the table
//!    builder writes are far smaller (at most [`crate::limits::MAX_BLOCK_LEN`], or one
//!    entry; see `crate::limits` invariant 2).

use crate::coding::{get_fixed32, put_fixed32, put_varint32, MAX_VARINT32_LEN};
use crate::error::{Error, Result};

/// Bytes of the `num_restarts` field at the end of a block.
const NUM_RESTARTS_LEN: usize = 4;
/// Bytes of one restart slot.
const RESTART_LEN: usize = 4;

/// Bytes of an empty block's contents: the restart slot of offset 0 and the count.
pub const EMPTY_BLOCK_LEN: usize = RESTART_LEN + NUM_RESTARTS_LEN;

/// Upper bound on how much one [`BlockBuilder::add`] of a key of `key_len` bytes and a
/// value of `value_len` bytes grows [`BlockBuilder::size_estimate`]: three varint32
/// headers, the key delta (at most the key), the value and a possible new restart slot.
/// `crate::limits` proves its block bounds with it.
pub const fn max_add_growth(key_len: usize, value_len: usize) -> usize {
    3 * MAX_VARINT32_LEN + key_len + value_len + RESTART_LEN
}

/// Accumulates sorted entries into one block's contents.
#[derive(Debug)]
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    /// Entries since the last restart point.
    counter: usize,
    restart_interval: usize,
    last_key: Vec<u8>,
    num_entries: usize,
}

impl BlockBuilder {
    /// A builder placing a restart point every `restart_interval` entries (0 is treated
    /// as 1).
    pub fn new(restart_interval: usize) -> Self {
        BlockBuilder {
            buf: Vec::new(),
            restarts: vec![0],
            counter: 0,
            restart_interval: restart_interval.max(1),
            last_key: Vec::new(),
            num_entries: 0,
        }
    }

    /// Appends an entry.
    ///
    /// Requires: `key` sorts after every key added since the last [`Self::reset`]
    /// (not checked here: the table builder checks it once for data and index blocks).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the sizes if the entry cannot be encoded: a
    /// key or value length, or the entry's offset as a restart point, does not fit in
    /// u32 (invariant 3). The builder is then unchanged.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let restart = self.counter >= self.restart_interval;
        let shared = if restart {
            0
        } else {
            self.last_key
                .iter()
                .zip(key)
                .take_while(|(a, b)| a == b)
                .count()
        };
        let delta = key.get(shared..).unwrap_or_default();
        let too_large = || {
            Error::InvalidArgument(format!(
                "block entry too large: key_len=`{}` value_len=`{}` block_len=`{}`",
                key.len(),
                value.len(),
                self.buf.len()
            ))
        };
        let u32_of = |n: usize| u32::try_from(n).map_err(|_| too_large());
        let (shared_u32, delta_u32, value_u32) =
            (u32_of(shared)?, u32_of(delta.len())?, u32_of(value.len())?);
        if restart {
            let offset = u32_of(self.buf.len())?;
            // The count of restarts is written as u32 by `finish`.
            u32_of(self.restarts.len() + 1)?;
            self.restarts.push(offset);
            self.counter = 0;
        }
        put_varint32(&mut self.buf, shared_u32);
        put_varint32(&mut self.buf, delta_u32);
        put_varint32(&mut self.buf, value_u32);
        self.buf.extend_from_slice(delta);
        self.buf.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(delta);
        self.counter += 1;
        self.num_entries += 1;
        Ok(())
    }

    /// Appends the restart array and returns the finished contents. The borrow lasts
    /// until the next [`Self::reset`]; calling `add` before `reset` is a logic error.
    pub fn finish(&mut self) -> &[u8] {
        for &r in &self.restarts {
            put_fixed32(&mut self.buf, r);
        }
        // `add` never lets the restart count exceed u32::MAX (invariant 3).
        debug_assert!(u32::try_from(self.restarts.len()).is_ok());
        let n = u32::try_from(self.restarts.len()).unwrap_or(u32::MAX);
        put_fixed32(&mut self.buf, n);
        &self.buf
    }

    /// Empties the builder for the next block, keeping its allocations.
    pub fn reset(&mut self) {
        self.buf.clear();
        self.restarts.clear();
        self.restarts.push(0);
        self.counter = 0;
        self.last_key.clear();
        self.num_entries = 0;
    }

    /// Size the contents would have if finished now.
    pub fn size_estimate(&self) -> usize {
        self.buf.len() + self.restarts.len() * RESTART_LEN + NUM_RESTARTS_LEN
    }

    /// True iff no entry was added since the last reset.
    pub fn is_empty(&self) -> bool {
        self.num_entries == 0
    }
}

/// Validated, decompressed contents of one block. Immutable; shared by `Arc` between
/// the block cache and iterators.
#[derive(Debug)]
pub struct Block {
    data: Box<[u8]>,
    /// Offset where the restart array starts (= end of the entries).
    restarts_offset: usize,
    num_restarts: usize,
}

impl Block {
    /// Checks the restart array of `contents` and wraps it. Entries themselves are
    /// validated lazily by iterators, which report bad entries as corruption.
    ///
    /// # Errors
    /// A static description if the restart array does not fit or points outside the
    /// entries. Never panics, whatever the input.
    pub fn decode(contents: Vec<u8>) -> Result<Block, &'static str> {
        let len = contents.len();
        let n_pos = len
            .checked_sub(NUM_RESTARTS_LEN)
            .ok_or("block shorter than its restart count")?;
        let num_restarts = get_fixed32(&contents, n_pos).ok_or("truncated restart count")? as usize;
        if num_restarts == 0 {
            return Err("block has no restart points");
        }
        let restarts_offset = num_restarts
            .checked_mul(4)
            .and_then(|b| n_pos.checked_sub(b))
            .ok_or("restart array larger than block")?;
        let block = Block {
            data: contents.into_boxed_slice(),
            restarts_offset,
            num_restarts,
        };
        let mut prev = 0;
        for i in 0..num_restarts {
            let r = block.restart(i).ok_or("restart array truncated")?;
            if (i == 0 && r != 0) || (i > 0 && r <= prev) || (r >= restarts_offset && r != 0) {
                return Err("restart point out of order or out of range");
            }
            prev = r;
        }
        Ok(block)
    }

    /// A block without entries (one restart at 0): what a table iterator walks when
    /// its table's index block could not be read.
    pub(crate) fn empty() -> Block {
        Block {
            data: vec![0, 0, 0, 0, 1, 0, 0, 0].into_boxed_slice(),
            restarts_offset: 0,
            num_restarts: 1,
        }
    }

    /// The `i`-th restart offset, `None` if out of range.
    #[inline]
    pub(crate) fn restart(&self, i: usize) -> Option<usize> {
        if i >= self.num_restarts {
            return None;
        }
        let pos = self.restarts_offset.checked_add(i.checked_mul(4)?)?;
        get_fixed32(&self.data, pos).map(|v| v as usize)
    }

    /// Number of restart points (>= 1).
    #[inline]
    pub fn num_restarts(&self) -> usize {
        self.num_restarts
    }

    /// End of the entry area.
    #[inline]
    pub(crate) fn entries_end(&self) -> usize {
        self.restarts_offset
    }

    /// The raw contents.
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Bytes of memory this block pins (for cache weighting).
    pub fn charge(&self) -> usize {
        self.data.len() + std::mem::size_of::<Block>()
    }

    /// Decodes the entry header at `offset`: `(shared, key_delta range, value range,
    /// next entry offset)`; `None` if malformed or extending past the entry area.
    // Always inlined: called once per entry a seek or scan passes over, where the
    // call and the `Option<Entry>` returned through memory cost as much as the
    // decoding (callgrind: 10,600 -> 9,835 instructions per readrandom get).
    #[inline(always)]
    pub(crate) fn decode_entry(&self, offset: usize) -> Option<Entry> {
        let area = self.data.get(..self.restarts_offset)?;
        let mut p = offset;
        let mut field = || -> Option<usize> {
            let rest = area.get(p..)?;
            // Fast path: all three header fields are usually single bytes.
            let (v, n) = match rest.first() {
                Some(&b) if b < 0x80 => (u32::from(b), 1),
                _ => crate::coding::get_varint32(rest)?,
            };
            p += n;
            Some(v as usize)
        };
        let shared = field()?;
        let non_shared = field()?;
        let value_len = field()?;
        let key_start = p;
        let key_end = key_start.checked_add(non_shared)?;
        let value_end = key_end.checked_add(value_len)?;
        if value_end > area.len() {
            return None;
        }
        Some(Entry {
            shared,
            key_delta: key_start..key_end,
            value: key_end..value_end,
        })
    }
}

/// A decoded entry header (ranges index [`Block::data`]).
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub shared: usize,
    pub key_delta: std::ops::Range<usize>,
    pub value: std::ops::Range<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_rejects_garbage_without_panicking() {
        assert!(Block::decode(vec![]).is_err());
        assert!(Block::decode(vec![0, 0, 0, 0]).is_err());
        assert!(Block::decode(vec![0xff; 8]).is_err());
        // One restart at offset 0, no entries: a valid empty block.
        assert!(Block::decode(vec![0, 0, 0, 0, 1, 0, 0, 0]).is_ok());
        for len in 0..64 {
            for fill in [0u8, 1, 0x7f, 0x80, 0xff] {
                let _ = Block::decode(vec![fill; len]);
            }
        }
    }

    #[test]
    fn builder_places_restarts_every_interval() {
        let mut b = BlockBuilder::new(3);
        for i in 0..10u32 {
            b.add(&i.to_be_bytes(), b"v").expect("small entry");
        }
        let block = Block::decode(b.finish().to_vec()).expect("valid");
        assert_eq!(block.num_restarts(), 4);
    }

    #[test]
    fn each_add_grows_the_estimate_by_at_most_max_add_growth() {
        let mut b = BlockBuilder::new(2);
        assert_eq!(b.size_estimate(), EMPTY_BLOCK_LEN);
        for i in 0..20usize {
            let key = vec![b'a' + (i % 26) as u8; 1 + i * 37];
            let value = vec![7u8; i * 101];
            let before = b.size_estimate();
            b.add(&key, &value).expect("small entry");
            assert!(b.size_estimate() - before <= max_add_growth(key.len(), value.len()));
        }
        let estimate = b.size_estimate();
        assert_eq!(b.finish().len(), estimate);
    }
}
