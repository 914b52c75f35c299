//! RALT's table files: sorted access records with an in-memory bloom filter of the
//! hot keys and an index whose entries carry prefix sums of hot bytes.
//!
//! Role: the RALT tree (`super`) writes one [`TableWriter`] per output table and opens
//! each table once with [`RaltTable::open`], which keeps the index and the filter in
//! memory for the table's life: `is_hot` and `range_hot_size` never read a data block.
//! Data blocks are read only by scans (merges, eviction, the hot-key cursor).
//!
//! # Format (RALT table, format version 1)
//! ```text
//! +--------------+-----+----------------+--------------+-------------+-------------+
//! | data block 0 | ... | data block n-1 | filter block | index block | footer (40) |
//! +--------------+-----+----------------+--------------+-------------+-------------+
//! data block    sst::block contents (restart interval 16), entry key = user key,
//!               entry value = record (record.rs); sealed raw with the SSTable block
//!               trailer (type byte 1, masked crc32c: sst::compression)
//! filter block  sst::filter over the keys that were hot when written, sealed raw
//! index block   varint32 blocks; per data block: varint32 key_len | first key
//!               | varint64 offset | varint64 sealed size | varint64 hot bytes of all
//!               earlier blocks | varint64 hot records of all earlier blocks;
//!               then varint64 hot bytes of the table | varint64 hot records
//!               | varint64 records
//!               | varint64 record bytes (Σ hot_size) | varint64 physical bytes
//!               (Σ key + value + 3) | varint32 key_len | last key; sealed raw
//! footer        filter offset u64 | filter size u64 | index offset u64
//!               | index size u64 | format version u32 (1) | magic u32, all LE
//! ```
//! Keys are strictly ascending, one record per key. A record's hot bytes are its
//! `hot_size` if it was hot when written (its rank at or above the threshold then in
//! force), else 0.
//!
//! # Invariants
//! 1. Every block is checksummed; a reader checks the footer's magic and version, the
//!    blocks' checksums and that offsets lie inside the file, and reports anything else
//!    as `Corruption` naming the file and offset. Never a panic.
//! 2. `range_hot(lo, hi)` is at least the hot bytes (and records) of the table's hot
//!    records in `[lo, hi]`: it counts the two edge blocks whole (the paper's
//!    estimate).
//! 3. The format only grows; the frozen fixture `fixtures/ralt-table-v1` pins it.

use super::record::{Keyed, Record};
use crate::coding::{
    get_fixed32, get_fixed64, get_varint32, get_varint64, put_fixed32, put_fixed64, put_varint32,
    put_varint64,
};
use crate::env::{RandomAccessFile, WritableFile};
use crate::error::{Error, Result};
use crate::sst::block::{Block, BlockBuilder};
use crate::sst::block_iter::BlockIter;
use crate::sst::compression::{seal_block, unseal_block};
use crate::sst::filter::{BloomFilter, FilterBuilder};
use crate::Compression;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The footer's magic number ("RALT" little-endian).
const MAGIC: u32 = 0x544C_4152;
/// The table format version this build writes and the newest it reads.
pub const FORMAT_VERSION: u32 = 1;
/// Bytes of the footer.
const FOOTER_LEN: usize = 40;
/// Restart interval of data blocks.
const RESTART_INTERVAL: usize = 16;

/// Bytes RALT read and wrote (its files are not under the database's counting file
/// system, so it counts its own).
#[derive(Debug, Default)]
pub struct RaltIo {
    /// Bytes read from RALT's tables.
    pub bytes_read: AtomicU64,
    /// Bytes written to RALT's tables and its table list.
    pub bytes_written: AtomicU64,
}

/// One index entry: a data block.
#[derive(Clone, Debug, PartialEq)]
struct IndexEntry {
    first_key: Vec<u8>,
    offset: u64,
    size: u64,
    hot_before: u64,
    hot_records_before: u64,
}

/// Writes one table. See the module docs for the format.
pub struct TableWriter {
    file: Box<dyn WritableFile>,
    io: Arc<RaltIo>,
    block_size: usize,
    block: BlockBuilder,
    filter: FilterBuilder,
    index: Vec<IndexEntry>,
    pending_first: Option<Vec<u8>>,
    last_key: Vec<u8>,
    hot_total: u64,
    hot_in_block: u64,
    hot_records: u64,
    hot_records_in_block: u64,
    records: u64,
    record_bytes: u64,
    phys_bytes: u64,
    offset: u64,
    value: Vec<u8>,
    sealed: Vec<u8>,
}

/// What a finished table holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableSummary {
    /// Bytes of the file.
    pub size: u64,
    /// Records in it.
    pub records: u64,
    /// Hot bytes in it.
    pub hot_bytes: u64,
}

impl TableWriter {
    /// A writer into `file`, with data blocks of about `block_size` bytes and a filter
    /// of `bloom_bits` bits per hot key.
    pub fn new(
        file: Box<dyn WritableFile>,
        io: Arc<RaltIo>,
        block_size: usize,
        bloom_bits: u32,
    ) -> TableWriter {
        TableWriter {
            file,
            io,
            block_size: block_size.max(256),
            block: BlockBuilder::new(RESTART_INTERVAL),
            filter: FilterBuilder::new(bloom_bits),
            index: Vec::new(),
            pending_first: None,
            last_key: Vec::new(),
            hot_total: 0,
            hot_in_block: 0,
            hot_records: 0,
            hot_records_in_block: 0,
            records: 0,
            record_bytes: 0,
            phys_bytes: 0,
            offset: 0,
            value: Vec::new(),
            sealed: Vec::new(),
        }
    }

    /// Bytes written so far, plus the open block.
    pub fn estimated_size(&self) -> u64 {
        self.offset + self.block.size_estimate() as u64
    }

    /// Adds `key`'s record; `hot` says whether it counts as hot.
    ///
    /// # Errors
    /// `Internal` for a key not after the previous one; I/O errors.
    pub fn add(&mut self, key: &[u8], record: &Record, hot: bool) -> Result<()> {
        if self.records > 0 && key <= self.last_key.as_slice() {
            return Err(Error::Internal(format!(
                "RALT table keys out of order: {key:x?} after {:x?}",
                self.last_key
            )));
        }
        if self.pending_first.is_none() {
            self.pending_first = Some(key.to_vec());
        }
        self.value.clear();
        record.encode_into(&mut self.value);
        self.block.add(key, &self.value)?;
        if hot {
            self.filter.add(key);
            let size = u64::from(record.hot_size);
            self.hot_total += size;
            self.hot_in_block += size;
            self.hot_records += 1;
            self.hot_records_in_block += 1;
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.records += 1;
        self.record_bytes += u64::from(record.hot_size);
        self.phys_bytes += phys_size(key, &self.value);
        if self.block.size_estimate() >= self.block_size {
            self.finish_block()?;
        }
        Ok(())
    }

    fn write_sealed(&mut self) -> Result<(u64, u64)> {
        self.file.append(&self.sealed)?;
        let at = self.offset;
        let len = self.sealed.len() as u64;
        self.offset += len;
        self.io.bytes_written.fetch_add(len, Ordering::Relaxed);
        Ok((at, len))
    }

    fn finish_block(&mut self) -> Result<()> {
        let Some(first_key) = self.pending_first.take() else {
            return Ok(());
        };
        let raw = self.block.finish().to_vec();
        seal_block(&raw, Compression::None, &mut self.sealed);
        let (offset, size) = self.write_sealed()?;
        let hot_before = self.hot_total - self.hot_in_block;
        let hot_records_before = self.hot_records - self.hot_records_in_block;
        self.index.push(IndexEntry {
            first_key,
            offset,
            size,
            hot_before,
            hot_records_before,
        });
        self.hot_in_block = 0;
        self.hot_records_in_block = 0;
        self.block.reset();
        Ok(())
    }

    /// Writes the last block, the filter, the index and the footer, and fsyncs.
    ///
    /// # Errors
    /// `Internal` for an empty table; I/O errors.
    pub fn finish(mut self) -> Result<TableSummary> {
        if self.records == 0 {
            return Err(Error::Internal("an empty RALT table".into()));
        }
        self.finish_block()?;
        let filter = self.filter.finish();
        seal_block(&filter, Compression::None, &mut self.sealed);
        let (filter_offset, filter_size) = self.write_sealed()?;
        // The u32 fields cannot saturate: keys come from table reads, so they are at
        // most `limits::MAX_KEY_LEN` (8 MiB), and a table of at most 64 MiB in blocks
        // of at least 512 bytes has fewer than 2^18 of them.
        let mut index = Vec::new();
        put_varint32(
            &mut index,
            u32::try_from(self.index.len()).unwrap_or(u32::MAX),
        );
        for e in &self.index {
            put_varint32(
                &mut index,
                u32::try_from(e.first_key.len()).unwrap_or(u32::MAX),
            );
            index.extend_from_slice(&e.first_key);
            put_varint64(&mut index, e.offset);
            put_varint64(&mut index, e.size);
            put_varint64(&mut index, e.hot_before);
            put_varint64(&mut index, e.hot_records_before);
        }
        put_varint64(&mut index, self.hot_total);
        put_varint64(&mut index, self.hot_records);
        put_varint64(&mut index, self.records);
        put_varint64(&mut index, self.record_bytes);
        put_varint64(&mut index, self.phys_bytes);
        put_varint32(
            &mut index,
            u32::try_from(self.last_key.len()).unwrap_or(u32::MAX),
        );
        index.extend_from_slice(&self.last_key);
        seal_block(&index, Compression::None, &mut self.sealed);
        let (index_offset, index_size) = self.write_sealed()?;
        let mut footer = Vec::with_capacity(FOOTER_LEN);
        put_fixed64(&mut footer, filter_offset);
        put_fixed64(&mut footer, filter_size);
        put_fixed64(&mut footer, index_offset);
        put_fixed64(&mut footer, index_size);
        put_fixed32(&mut footer, FORMAT_VERSION);
        put_fixed32(&mut footer, MAGIC);
        self.sealed = footer;
        self.write_sealed()?;
        self.file.sync()?;
        Ok(TableSummary {
            size: self.offset,
            records: self.records,
            hot_bytes: self.hot_total,
        })
    }
}

/// An open RALT table: its index and filter in memory. See the module docs.
pub struct RaltTable {
    /// The table's number (its file is `<number>.ralt`).
    pub number: u64,
    path: PathBuf,
    file: Arc<dyn RandomAccessFile>,
    io: Arc<RaltIo>,
    index: Vec<IndexEntry>,
    filter: BloomFilter,
    last_key: Vec<u8>,
    /// Bytes of the file.
    pub size: u64,
    /// Records in the table.
    pub records: u64,
    /// Hot bytes in the table.
    pub hot_bytes: u64,
    /// Hot records in the table.
    pub hot_records: u64,
    /// The hot sizes of all its records, hot or not.
    pub record_bytes: u64,
    /// The physical sizes of its records ([`phys_size`]).
    pub phys_bytes: u64,
}

/// A record's physical size: its key, its encoding and three bytes of entry header.
pub fn phys_size(key: &[u8], encoded: &[u8]) -> u64 {
    (key.len() + encoded.len() + 3) as u64
}

impl std::fmt::Debug for RaltTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RaltTable")
            .field("number", &self.number)
            .field("size", &self.size)
            .field("records", &self.records)
            .field("hot_bytes", &self.hot_bytes)
            .finish()
    }
}

/// A cursor over one sealed buffer of bytes (the index block).
struct Reader<'a> {
    src: &'a [u8],
}

impl<'a> Reader<'a> {
    fn varint32(&mut self) -> Option<u32> {
        let (v, n) = get_varint32(self.src)?;
        self.src = self.src.get(n..)?;
        Some(v)
    }

    fn varint64(&mut self) -> Option<u64> {
        let (v, n) = get_varint64(self.src)?;
        self.src = self.src.get(n..)?;
        Some(v)
    }

    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let out = self.src.get(..n)?;
        self.src = self.src.get(n..)?;
        Some(out)
    }
}

impl RaltTable {
    /// Opens the table `number` at `path` (`file` opened on it), reading its footer,
    /// index and filter.
    ///
    /// # Errors
    /// `Corruption` naming the file and offset for bad bytes; I/O errors.
    pub fn open(
        number: u64,
        path: &Path,
        file: Arc<dyn RandomAccessFile>,
        io: Arc<RaltIo>,
    ) -> Result<RaltTable> {
        let size = file.size();
        let corrupt = |offset: u64, reason: &str| Error::Corruption {
            file: path.to_path_buf(),
            offset,
            reason: format!("RALT table: {reason}"),
        };
        let footer_at = size
            .checked_sub(FOOTER_LEN as u64)
            .ok_or_else(|| corrupt(0, "shorter than its footer"))?;
        let footer = file.read_vec(footer_at, FOOTER_LEN)?;
        let field = |i: usize| get_fixed64(&footer, i * 8).unwrap_or(u64::MAX);
        let (filter_offset, filter_size, index_offset, index_size) =
            (field(0), field(1), field(2), field(3));
        if get_fixed32(&footer, 36) != Some(MAGIC) {
            return Err(corrupt(footer_at, "bad magic"));
        }
        match get_fixed32(&footer, 32) {
            Some(v) if (1..=FORMAT_VERSION).contains(&v) => {}
            v => {
                return Err(corrupt(
                    footer_at + 32,
                    &format!("unsupported format version {v:?}"),
                ))
            }
        }
        let read_block = |offset: u64, len: u64| -> Result<Vec<u8>> {
            let end = offset.checked_add(len).filter(|&e| e <= footer_at);
            let len = usize::try_from(len).ok().filter(|_| end.is_some());
            let Some(len) = len else {
                return Err(corrupt(footer_at, "block handle outside the file"));
            };
            let buf = file.read_vec(offset, len)?;
            io.bytes_read.fetch_add(len as u64, Ordering::Relaxed);
            unseal_block(buf).map_err(|r| corrupt(offset, r))
        };
        let filter = BloomFilter::decode(read_block(filter_offset, filter_size)?)
            .map_err(|r| corrupt(filter_offset, r))?;
        let index_raw = read_block(index_offset, index_size)?;
        let bad_index = || corrupt(index_offset, "malformed index");
        let mut r = Reader { src: &index_raw };
        let blocks = r.varint32().ok_or_else(bad_index)?;
        let mut index = Vec::with_capacity((blocks as usize).min(1 << 16));
        for _ in 0..blocks {
            let n = r.varint32().ok_or_else(bad_index)? as usize;
            let first_key = r.bytes(n).ok_or_else(bad_index)?.to_vec();
            let offset = r.varint64().ok_or_else(bad_index)?;
            let size = r.varint64().ok_or_else(bad_index)?;
            let hot_before = r.varint64().ok_or_else(bad_index)?;
            let hot_records_before = r.varint64().ok_or_else(bad_index)?;
            index.push(IndexEntry {
                first_key,
                offset,
                size,
                hot_before,
                hot_records_before,
            });
        }
        let hot_bytes = r.varint64().ok_or_else(bad_index)?;
        let hot_records = r.varint64().ok_or_else(bad_index)?;
        let records = r.varint64().ok_or_else(bad_index)?;
        let record_bytes = r.varint64().ok_or_else(bad_index)?;
        let phys_bytes = r.varint64().ok_or_else(bad_index)?;
        let n = r.varint32().ok_or_else(bad_index)? as usize;
        let last_key = r.bytes(n).ok_or_else(bad_index)?.to_vec();
        let ordered = index.windows(2).all(
            |w| matches!(w, [a, b] if a.first_key < b.first_key && a.hot_before <= b.hot_before),
        );
        // Data blocks lie before the filter: a handle past it is damage, caught here
        // rather than as a huge read when a scan reaches the block.
        let inside = index.iter().all(|e| {
            e.offset
                .checked_add(e.size)
                .is_some_and(|end| end <= filter_offset)
        });
        if index.is_empty()
            || !ordered
            || !inside
            || !r.src.is_empty()
            || index
                .last()
                .is_some_and(|e| e.hot_before > hot_bytes || e.hot_records_before > hot_records)
        {
            return Err(bad_index());
        }
        Ok(RaltTable {
            number,
            path: path.to_path_buf(),
            file,
            io,
            index,
            filter,
            last_key,
            size,
            records,
            hot_bytes,
            hot_records,
            record_bytes,
            phys_bytes,
        })
    }

    /// The least key in the table.
    pub fn first_key(&self) -> &[u8] {
        self.index.first().map_or(&[], |e| e.first_key.as_slice())
    }

    /// The greatest key in the table.
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// True iff `key` may have been hot when the table was written (the filter: no
    /// false negatives).
    pub fn may_be_hot(&self, key: &[u8]) -> bool {
        self.hot_bytes > 0 && self.filter.may_contain(key)
    }

    /// Hot bytes and hot records of the blocks that may hold keys in `[lo, hi]`
    /// (invariant 2), from the in-memory index.
    pub fn range_hot(&self, lo: &[u8], hi: &[u8]) -> (u64, u64) {
        if hi < self.first_key() || lo > self.last_key() || lo > hi {
            return (0, 0);
        }
        // The block holding `lo`: the last whose first key is <= lo (or the first).
        let start = self
            .index
            .partition_point(|e| e.first_key.as_slice() <= lo)
            .saturating_sub(1);
        // One past the last block whose first key is <= hi.
        let end = self.index.partition_point(|e| e.first_key.as_slice() <= hi);
        let bytes = |i: usize| self.index.get(i).map_or(self.hot_bytes, |e| e.hot_before);
        let records = |i: usize| {
            self.index
                .get(i)
                .map_or(self.hot_records, |e| e.hot_records_before)
        };
        (
            bytes(end).saturating_sub(bytes(start)),
            records(end).saturating_sub(records(start)),
        )
    }

    /// Index of the block that may hold `key` (the last whose first key is <= key).
    fn block_for(&self, key: &[u8]) -> usize {
        self.index
            .partition_point(|e| e.first_key.as_slice() <= key)
            .saturating_sub(1)
    }

    /// Reads and decodes data block `i`.
    fn read_block(&self, i: usize) -> Result<Option<Vec<Keyed>>> {
        let Some(e) = self.index.get(i) else {
            return Ok(None);
        };
        let corrupt = |reason: &str| Error::Corruption {
            file: self.path.clone(),
            offset: e.offset,
            reason: format!("RALT data block: {reason}"),
        };
        let len = usize::try_from(e.size).map_err(|_| corrupt("block too large"))?;
        let buf = self.file.read_vec(e.offset, len)?;
        self.io.bytes_read.fetch_add(e.size, Ordering::Relaxed);
        let raw = unseal_block(buf).map_err(corrupt)?;
        let block = Block::decode(raw).map_err(corrupt)?;
        let mut it = BlockIter::new(Arc::new(block));
        it.seek_to_first();
        let mut out = Vec::new();
        while it.valid() {
            let record = Record::decode(it.value()).ok_or_else(|| corrupt("malformed record"))?;
            out.push((it.key().to_vec(), record));
            it.next();
        }
        if it.is_corrupt() {
            return Err(corrupt("malformed block"));
        }
        Ok(Some(out))
    }
}

/// Walks one table's records in key order from a lower bound, a block at a time.
pub struct TableScan {
    table: Arc<RaltTable>,
    block: usize,
    records: std::vec::IntoIter<Keyed>,
    peeked: Option<Keyed>,
}

impl TableScan {
    /// A scan of `table` from the first key `>= lo`.
    ///
    /// # Errors
    /// As `TableScan::next`.
    pub fn new(table: Arc<RaltTable>, lo: &[u8]) -> Result<TableScan> {
        let block = table.block_for(lo);
        let mut scan = TableScan {
            table,
            block,
            records: Vec::new().into_iter(),
            peeked: None,
        };
        scan.load()?;
        while scan.peeked.as_ref().is_some_and(|(k, _)| k.as_slice() < lo) {
            scan.advance()?;
        }
        Ok(scan)
    }

    fn load(&mut self) -> Result<()> {
        loop {
            if let Some(r) = self.records.next() {
                self.peeked = Some(r);
                return Ok(());
            }
            match self.table.read_block(self.block)? {
                Some(records) => {
                    self.block += 1;
                    self.records = records.into_iter();
                }
                None => {
                    self.peeked = None;
                    return Ok(());
                }
            }
        }
    }

    /// The current record, if any.
    pub fn peek(&self) -> Option<&Keyed> {
        self.peeked.as_ref()
    }

    /// Moves past the current record.
    ///
    /// # Errors
    /// `Corruption` or I/O errors reading a block.
    pub fn advance(&mut self) -> Result<()> {
        self.load()
    }
}

#[cfg(test)]
mod tests;
