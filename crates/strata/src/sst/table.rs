//! [`Table`]: an open SSTable, shared by `Arc` between readers.
//!
//! Role: opened by the table cache (or tools) from a [`RandomAccessFile`]; at open it
//! reads the footer, index block, filter and properties. It keeps the footer and
//! properties; the index block and filter it either keeps too (the default) or hands
//! to the block cache (`Options::cache_index_and_filter_blocks`, RocksDB's option of
//! that name), where they are charged and may be evicted, to be read from the file
//! again on the next use ([`Meta`]). Data blocks are read on demand through the
//! optional block cache. Point lookups go through [`Table::get`]; scans through
//! [`Table::iter`].
//!
//! Concurrency: `Table` is immutable after open and `Send + Sync`; all reads are
//! positional on the shared file handle, so any number of threads read at once.
//!
//! Allocation on the get path: the index block is an `Arc` (held or cached), cached data blocks
//! are `Arc`s cloned out of the cache (no copy), and the two key buffers that prefix
//! decoding needs are per-thread and reused, so a warm cache hit allocates nothing.

use super::block::Block;
use super::block_iter::BlockIter;
use super::compression::unseal_block;
use super::filter::BloomFilter;
use super::footer::{BlockHandle, Footer, FOOTER_LEN, FORMAT_VERSION_RANGE_DEL};
use super::range_del_block;
use super::readahead::Readahead;
use super::table_iter::TableIterator;
use super::{properties, TableProperties};
use crate::cache::BlockCache;
use crate::env::RandomAccessFile;
use crate::error::{Error, Result};
use crate::key;
use crate::range_del::Fragments;
use crate::stats::{Counters, Statistics};
use crate::Compression;
use std::cell::Cell;
use std::path::Path;
use std::sync::Arc;

thread_local! {
    /// Key buffers for [`Table::get`]: `[index iterator, data iterator]`.
    static GET_KEY_BUFS: Cell<[Vec<u8>; 2]> = const { Cell::new([Vec::new(), Vec::new()]) };
}

/// Where a table keeps one of its metadata blocks (the index block, the filter).
enum Meta<T> {
    /// Read at open and held for the table's life.
    Held(Arc<T>),
    /// Read at open into the block cache and looked up there on each use; a miss (it
    /// was evicted) reads the block from the file again and caches it.
    Cached(BlockHandle),
}

/// An open, immutable SSTable.
pub struct Table {
    file: Arc<dyn RandomAccessFile>,
    file_number: u64,
    block_cache: Option<Arc<BlockCache>>,
    stats: Arc<Statistics>,
    footer: Footer,
    index: Meta<Block>,
    filter: Option<Meta<BloomFilter>>,
    props: TableProperties,
    /// The range tombstones (format version 2), fragmented; `None` without any.
    /// Shared, so the compaction policy's view of them (`compaction::covered`) costs a
    /// reference count, not a copy, per pick.
    range_dels: Option<Arc<Fragments>>,
    #[cfg_attr(
        not(feature = "internals"),
        allow(
            dead_code,
            reason = "read only by `Table::compression`, for `strata sst-dump`"
        )
    )]
    compression: Compression,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("path", &self.path())
            .field("file_number", &self.file_number)
            .field("properties", &self.props)
            .finish_non_exhaustive()
    }
}

/// What [`Table::block_to_fetch`] tells of a point lookup in a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fetch {
    /// The filter or the index proves the key absent: nothing is read.
    Excluded,
    /// The data block the lookup reads is in the cache.
    Cached,
    /// The lookup would read this data block from the file.
    Read(BlockHandle),
    /// Not known without reading the file (a filter or index block not in the cache,
    /// no cache at all, or a bad index entry that `get` will report).
    Unknown,
}

impl Table {
    /// Opens a table: reads the footer, index, filter and properties, and checks them.
    /// With `cache_meta` and a `block_cache`, the index block and filter go into the
    /// cache instead of staying with the table (`Meta::Cached`). With `paranoid`,
    /// also reads and checks every data block.
    ///
    /// # Errors
    /// [`Error::Corruption`] naming the file and offset for a short file, bad footer or
    /// magic, unsupported format version, or a bad meta block; I/O errors from reads.
    pub fn open(
        file: Arc<dyn RandomAccessFile>,
        file_number: u64,
        block_cache: Option<Arc<BlockCache>>,
        stats: Arc<Statistics>,
        cache_meta: bool,
        paranoid: bool,
    ) -> Result<Table> {
        let size = file.size();
        let footer_offset = size
            .checked_sub(FOOTER_LEN as u64)
            .ok_or_else(|| Error::corruption(file.path(), 0, "file too short to be a table"))?;
        let mut buf = [0u8; FOOTER_LEN];
        file.read_exact_at(footer_offset, &mut buf)?;
        let footer = Footer::decode(&buf, size)
            .map_err(|r| Error::corruption(file.path(), footer_offset, r))?;
        let path = file.path();
        let read = |h: BlockHandle| read_contents(&*file, &stats, h);
        let index = Block::decode(read(footer.index)?)
            .map_err(|r| Error::corruption(path, footer.index.offset, r))?;
        let filter = match footer.filter {
            Some(h) => Some(
                BloomFilter::decode(read(h)?).map_err(|r| Error::corruption(path, h.offset, r))?,
            ),
            None => None,
        };
        let (mut props, compression) = properties::decode(&read(footer.properties)?)
            .map_err(|r| Error::corruption(path, footer.properties.offset, r))?;
        props.file_size = size;
        props.format_version = footer.format_version;
        let range_dels = match (
            footer.format_version >= FORMAT_VERSION_RANGE_DEL,
            props.range_del_block,
        ) {
            (false, _) => None,
            (true, None) => {
                return Err(Error::corruption(
                    path,
                    footer.properties.offset,
                    "format version 2 table without a range-deletion block",
                ))
            }
            (true, Some(h)) => Some(Arc::new(
                range_del_block::decode(read(h)?)
                    .map_err(|r| Error::corruption(path, h.offset, r))?,
            )),
        };
        let (index, filter) = match block_cache.as_ref().filter(|_| cache_meta) {
            Some(cache) => {
                cache.insert(file_number, footer.index.offset, Arc::new(index));
                let filter = filter.zip(footer.filter).map(|(f, h)| {
                    cache.insert_filter(file_number, h.offset, Arc::new(f));
                    Meta::Cached(h)
                });
                (Meta::Cached(footer.index), filter)
            }
            None => (
                Meta::Held(Arc::new(index)),
                filter.map(|f| Meta::Held(Arc::new(f))),
            ),
        };
        let t = Table {
            file,
            file_number,
            block_cache,
            stats,
            footer,
            index,
            filter,
            props,
            range_dels,
            compression,
        };
        if paranoid {
            t.verify_checksums()?;
        }
        Ok(t)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Point lookup. `lookup` is an internal seek key `(user_key, seq, KIND_SEEK)`.
    /// Finds the first entry `>= lookup`; iff its user key equals `lookup`'s, calls
    /// `f(ikey, value)` (borrows valid only during the call) and returns `Some` of its
    /// result. The caller interprets the entry's kind (a tombstone is a hit too).
    ///
    /// Relies on the index invariant: a separator `s` of block `B` satisfies
    /// `last(B) <= s < first(next)`, and a shortened `s` has a user key strictly between
    /// those of its neighbours, so if the first entry `>= lookup` is not in the block
    /// the index points to, it has a different user key.
    ///
    /// # Errors
    /// [`Error::Corruption`] (file, block offset) for a bad block; I/O errors.
    pub fn get<R>(&self, lookup: &[u8], f: impl FnOnce(&[u8], &[u8]) -> R) -> Result<Option<R>> {
        let local = self.stats.local();
        Statistics::add(&local.tables_probed, 1);
        if self.filter_excludes(local, key::user_key(lookup))? {
            return Ok(None);
        }
        let index_block = self.index_block()?;
        let [index_buf, mut data_buf] = GET_KEY_BUFS.take();
        let mut index = BlockIter::with_key_buf(index_block, index_buf);
        let result = self.get_in_block(lookup, f, &mut index, &mut data_buf);
        GET_KEY_BUFS.set([index.into_key_buf(), data_buf]);
        let found = result?;
        if found.is_none() && self.filter.is_some() {
            Statistics::add(&self.stats.local().bloom_false_positives, 1);
        }
        Ok(found)
    }

    /// [`Table::get`] of every entry of `lookup`'s user key from `lookup` on (each
    /// older than the last), calling `f(ikey, value)` on each until it returns false.
    /// Returns whether `f` was called. One data block is read unless the key's entries
    /// run on past its end: the next block is read only when the index separator
    /// after the block has the key's user key (a separator is at least the block's
    /// last key and below the next block's first, so one with a greater user key
    /// proves the next block holds none).
    ///
    /// # Errors
    /// As [`Table::get`].
    pub fn get_each(&self, lookup: &[u8], mut f: impl FnMut(&[u8], &[u8]) -> bool) -> Result<bool> {
        let local = self.stats.local();
        Statistics::add(&local.tables_probed, 1);
        let user_key = key::user_key(lookup);
        if self.filter_excludes(local, user_key)? {
            return Ok(false);
        }
        let mut index = BlockIter::new(self.index_block()?);
        index.seek(lookup);
        let mut called = false;
        let mut first = true;
        while index.valid() {
            let handle = self.index_handle(index.value())?;
            let mut it = BlockIter::new(self.read_data_block(handle, true)?);
            if std::mem::take(&mut first) {
                it.seek(lookup);
            } else {
                it.seek_to_first();
            }
            while it.valid() {
                let Some(k) = key::parse_internal_key(it.key()) else {
                    return Err(self.corruption(handle.offset, "malformed internal key"));
                };
                if k.user_key != user_key {
                    break;
                }
                called = true;
                if !f(it.key(), it.value()) {
                    return Ok(true);
                }
                it.next();
            }
            if it.is_corrupt() {
                return Err(self.corruption(handle.offset, "malformed data block entry"));
            }
            if it.valid() || key::user_key(index.key()) != user_key {
                break;
            }
            index.next();
        }
        if index.is_corrupt() {
            return Err(self.corruption(self.footer.index.offset, "malformed index entry"));
        }
        if !called && self.filter.is_some() {
            Statistics::add(&self.stats.local().bloom_false_positives, 1);
        }
        Ok(called)
    }

    /// For a batch that reads its blocks together (`db::read::multi_get`): what
    /// [`Table::get`] of `lookup` would read, as far as can be told without reading
    /// the file (see [`Fetch`]). Silent: counts nothing, reads nothing.
    pub(crate) fn block_to_fetch(&self, lookup: &[u8]) -> Fetch {
        let Some(cache) = self.block_cache.as_ref() else {
            return Fetch::Unknown;
        };
        let user_key = key::user_key(lookup);
        let may_contain = match &self.filter {
            None => true,
            Some(Meta::Held(f)) => f.may_contain(user_key),
            Some(Meta::Cached(h)) => match cache.peek_filter(self.file_number, h.offset) {
                Some(f) => f.may_contain(user_key),
                None => return Fetch::Unknown,
            },
        };
        if !may_contain {
            return Fetch::Excluded;
        }
        let index = match &self.index {
            Meta::Held(b) => Arc::clone(b),
            Meta::Cached(h) => match cache.peek(self.file_number, h.offset) {
                Some(b) => b,
                None => return Fetch::Unknown,
            },
        };
        let mut it = BlockIter::new(index);
        it.seek(lookup);
        if !it.valid() {
            return match it.is_corrupt() {
                true => Fetch::Unknown,
                false => Fetch::Excluded,
            };
        }
        match BlockHandle::decode(it.value()) {
            Some(h) if cache.contains(self.file_number, h.offset) => Fetch::Cached,
            Some(h) => Fetch::Read(h),
            None => Fetch::Unknown,
        }
    }

    /// True iff the table's file is read with direct I/O (`RandomAccessFile::is_direct`).
    pub(crate) fn is_direct(&self) -> bool {
        self.file.is_direct()
    }

    /// Whether the bloom filter proves `user_key` absent (counting the check in
    /// `local`, the caller's shard). Inlined: it is on every point lookup's path.
    #[inline(always)]
    fn filter_excludes(&self, local: &Counters, user_key: &[u8]) -> Result<bool> {
        let Some(filter) = &self.filter else {
            return Ok(false);
        };
        Statistics::add(&local.bloom_checked, 1);
        let may_contain = match filter {
            Meta::Held(f) => f.may_contain(user_key),
            Meta::Cached(h) => self.cached_filter(*h)?.may_contain(user_key),
        };
        if !may_contain {
            Statistics::add(&local.bloom_negatives, 1);
        }
        Ok(!may_contain)
    }

    fn get_in_block<R>(
        &self,
        lookup: &[u8],
        f: impl FnOnce(&[u8], &[u8]) -> R,
        index: &mut BlockIter,
        data_buf: &mut Vec<u8>,
    ) -> Result<Option<R>> {
        index.seek(lookup);
        if !index.valid() {
            if index.is_corrupt() {
                return Err(self.corruption(self.footer.index.offset, "malformed index entry"));
            }
            return Ok(None);
        }
        let handle = self.index_handle(index.value())?;
        let block = self.read_data_block(handle, true)?;
        let mut it = BlockIter::with_key_buf(block, std::mem::take(data_buf));
        it.seek(lookup);
        let out = if it.valid() && key::user_key(it.key()) == key::user_key(lookup) {
            Ok(Some(f(it.key(), it.value())))
        } else if it.is_corrupt() {
            Err(self.corruption(handle.offset, "malformed data block entry"))
        } else {
            Ok(None)
        };
        *data_buf = it.into_key_buf();
        out
    }

    /// The table's range tombstones, if it has any.
    pub fn range_dels(&self) -> Option<&Fragments> {
        self.range_dels.as_deref()
    }

    /// The table's range tombstones, shared (they live as long as the returned `Arc`).
    pub fn shared_range_dels(&self) -> Option<Arc<Fragments>> {
        self.range_dels.clone()
    }

    /// A two-level iterator over every entry; it keeps this table alive.
    pub fn iter(self: &Arc<Self>) -> TableIterator {
        TableIterator::new(Arc::clone(self), true)
    }

    /// Like [`Table::iter`], but blocks it reads from the file are not added to the
    /// block cache (for compactions: one pass over data no reader asked for).
    pub fn iter_no_fill(self: &Arc<Self>) -> TableIterator {
        TableIterator::new(Arc::clone(self), false)
    }

    /// Approximately where in the file the data for internal key `ikey` begins
    /// (LevelDB's `Table::ApproximateOffsetOf`): the start of the data block the index
    /// sends `ikey` to, or the end of the data blocks if `ikey` is past the last block's
    /// index key. Reads only the index block (held, or through the block cache), never
    /// a data block, so it is exact to a block: that block's entries before `ikey`
    /// count as after it, and a key just past the last entry (before the last index
    /// key, a short successor of it) gets the last block's start.
    ///
    /// Non-decreasing in `ikey` (index keys and block offsets ascend together); 0 for
    /// a key at or before the first entry; at most the end of the data blocks
    /// (`TableProperties::data_size`, as they are written from offset 0). So the
    /// difference of two answers is the bytes of the whole blocks between the keys
    /// ([`Table::approximate_range_bytes`]).
    ///
    /// # Errors
    /// [`Error::Corruption`] at the index block's offset for a malformed index entry or
    /// block handle, or a handle outside the data blocks; with a cached index block, I/O
    /// errors and corruption of its re-read.
    pub(crate) fn approximate_offset_of(&self, ikey: &[u8]) -> Result<u64> {
        let data_end = self.data_end();
        let mut index = BlockIter::new(self.index_block()?);
        index.seek(ikey);
        if !index.valid() {
            if index.is_corrupt() {
                return Err(self.corruption(self.footer.index.offset, "malformed index entry"));
            }
            return Ok(data_end);
        }
        let handle = self.index_handle(index.value())?;
        // Checked so every answer lies in `0..=data_end` and callers' differences stay
        // within the file, whatever a mis-written (but checksummed) index says.
        if handle.end().is_some_and(|e| e <= data_end) {
            Ok(handle.offset)
        } else {
            Err(self.corruption(
                self.footer.index.offset,
                "block handle in index points past the data blocks",
            ))
        }
    }

    /// Approximate bytes of the data for the user keys in `[lo_user, hi_user]` (both
    /// inclusive; 0 if `lo_user > hi_user`), from the index block alone: the span from
    /// where `lo_user`'s first entry would begin to where the first user key after
    /// `hi_user` would, exact to a data block at each end
    /// ([`Table::approximate_offset_of`]). Adjacent ranges `[a, b]`, `[b ++ 0x00, c]`
    /// add up exactly to `[a, c]`, and `["", k]` with `k` past every key of the table is
    /// all its data bytes.
    ///
    /// # Errors
    /// As [`Table::approximate_offset_of`].
    pub(crate) fn approximate_range_bytes(&self, lo_user: &[u8], hi_user: &[u8]) -> Result<u64> {
        let (start, end) = self.approximate_span(lo_user, hi_user)?;
        Ok(end.saturating_sub(start))
    }

    /// The end of the data blocks, the largest answer of
    /// [`Table::approximate_offset_of`]: the builder writes the data blocks from
    /// offset 0 and the filter (or, without one, the index block) right after them, so
    /// the footer's handles mark their end.
    pub(crate) fn data_end(&self) -> u64 {
        self.footer
            .filter
            .map_or(self.footer.index.offset, |f| f.offset)
    }

    /// Where the data of the user keys in `[lo_user, hi_user]` begins and ends, as
    /// [`Table::approximate_offset_of`] answers: `end - start` is
    /// [`Table::approximate_range_bytes`]. For a caller that scales offsets before
    /// subtracting, so that adjacent ranges still add up exactly.
    ///
    /// # Errors
    /// As [`Table::approximate_offset_of`].
    pub(crate) fn approximate_span(&self, lo_user: &[u8], hi_user: &[u8]) -> Result<(u64, u64)> {
        // `(k, MAX_SEQUENCE, KIND_SEEK)` sorts at or before every point entry of `k`
        // (data blocks hold no range-deletion entries). `hi ++ 0x00` is the least user
        // key after `hi`, so its seek key sorts after every entry of `hi` and at or
        // before every entry of any later user key.
        let first = key::make_internal_key(lo_user, key::MAX_SEQUENCE, key::KIND_SEEK);
        let after_hi = [hi_user, &[0]].concat();
        let past = key::make_internal_key(&after_hi, key::MAX_SEQUENCE, key::KIND_SEEK);
        let end = self.approximate_offset_of(&past)?;
        Ok((self.approximate_offset_of(&first)?, end))
    }

    /// The user keys of the data blocks' index entries that lie in `[lo_user,
    /// hi_user]`, ascending and without repeats: a key `u` here is where a data block
    /// ends, so a cut after `u` (before `u ++ 0x00`) falls on a block boundary and
    /// [`Table::approximate_range_bytes`] of the ranges on either side of it is exact to
    /// that block. Reads only the index block, like
    /// [`Table::approximate_offset_of`].
    ///
    /// # Errors
    /// [`Error::Corruption`] at the index block's offset for a malformed index entry;
    /// with a cached index block, I/O errors and corruption of its re-read.
    pub(crate) fn block_boundaries(&self, lo_user: &[u8], hi_user: &[u8]) -> Result<Vec<Vec<u8>>> {
        let mut out: Vec<Vec<u8>> = Vec::new();
        let mut index = BlockIter::new(self.index_block()?);
        index.seek(&key::make_internal_key(
            lo_user,
            key::MAX_SEQUENCE,
            key::KIND_SEEK,
        ));
        while index.valid() {
            let u = key::user_key(index.key());
            if u > hi_user {
                break;
            }
            if out.last().is_none_or(|last| last.as_slice() != u) {
                out.push(u.to_vec());
            }
            index.next();
        }
        if index.is_corrupt() {
            return Err(self.corruption(self.footer.index.offset, "malformed index entry"));
        }
        Ok(out)
    }

    /// Reads every block from the file (bypassing the cache), checking checksums and
    /// entry framing. Returns the number of blocks checked (data + index + properties +
    /// filter).
    ///
    /// # Errors
    /// The first [`Error::Corruption`] met, or an I/O error.
    pub fn verify_checksums(&self) -> Result<u64> {
        let mut checked = 0u64;
        let mut index = BlockIter::new(self.index_block()?);
        index.seek_to_first();
        while index.valid() {
            let handle = self.index_handle(index.value())?;
            let block = Block::decode(self.read_contents(handle)?)
                .map_err(|r| self.corruption(handle.offset, r))?;
            let mut it = BlockIter::new(Arc::new(block));
            it.seek_to_first();
            while it.valid() {
                it.next();
            }
            if it.is_corrupt() {
                return Err(self.corruption(handle.offset, "malformed data block entry"));
            }
            checked += 1;
            index.next();
        }
        if index.is_corrupt() {
            return Err(self.corruption(self.footer.index.offset, "malformed index entry"));
        }
        for h in self
            .footer
            .filter
            .iter()
            .chain([&self.footer.index, &self.footer.properties])
            .chain(self.props.range_del_block.iter())
        {
            self.read_contents(*h)?;
            checked += 1;
        }
        Ok(checked)
    }

    /// The index block (shared with iterators): the table's own, or the block cache's
    /// (read from the file again if it was evicted).
    ///
    /// # Errors
    /// Only with a cached index block: I/O errors and [`Error::Corruption`] of the
    /// re-read.
    pub(crate) fn index_block(&self) -> Result<Arc<Block>> {
        match &self.index {
            Meta::Held(b) => Ok(Arc::clone(b)),
            Meta::Cached(h) => self.read_data_block(*h, true),
        }
    }

    /// The bloom filter at `handle`, from the block cache or, after an eviction, from
    /// the file (and cached again).
    fn cached_filter(&self, handle: BlockHandle) -> Result<Arc<BloomFilter>> {
        if let Some(cache) = &self.block_cache {
            if let Some(f) = cache.get_filter(self.file_number, handle.offset) {
                Statistics::add(&self.stats.local().block_cache_hits, 1);
                return Ok(f);
            }
            Statistics::add(&self.stats.local().block_cache_misses, 1);
        }
        let filter = BloomFilter::decode(self.read_contents(handle)?)
            .map_err(|r| self.corruption(handle.offset, r))?;
        let filter = Arc::new(filter);
        if let Some(cache) = &self.block_cache {
            cache.insert_filter(self.file_number, handle.offset, Arc::clone(&filter));
        }
        Ok(filter)
    }

    /// Offset of the index block (for error messages).
    pub(crate) fn index_block_offset(&self) -> u64 {
        self.footer.index.offset
    }

    /// Decodes an index entry's value.
    pub(crate) fn index_handle(&self, value: &[u8]) -> Result<BlockHandle> {
        BlockHandle::decode(value).ok_or_else(|| {
            self.corruption(self.footer.index.offset, "malformed block handle in index")
        })
    }

    /// A data block through the block cache. On a hit, the cached `Arc` is returned
    /// without copying; on a miss the block is cached iff `fill_cache` (compactions
    /// read each block once and pass false, so they do not evict the read working set).
    pub(crate) fn read_data_block(
        &self,
        handle: BlockHandle,
        fill_cache: bool,
    ) -> Result<Arc<Block>> {
        self.read_data_block_ahead(handle, fill_cache, None)
    }

    /// [`Table::read_data_block`] for an iterator: on a cache miss of a file opened
    /// with direct I/O, the block comes through `readahead` (see `sst::readahead`).
    pub(crate) fn read_data_block_ahead(
        &self,
        handle: BlockHandle,
        fill_cache: bool,
        readahead: Option<&mut Readahead>,
    ) -> Result<Arc<Block>> {
        if let Some(cache) = &self.block_cache {
            if let Some(b) = cache.get(self.file_number, handle.offset) {
                Statistics::add(&self.stats.local().block_cache_hits, 1);
                return Ok(b);
            }
            Statistics::add(&self.stats.local().block_cache_misses, 1);
        }
        let file = &*self.file;
        let contents =
            match readahead.filter(|_| file.is_direct()) {
                Some(ra) => read_contents_with(file, &self.stats, handle, |offset, len, limit| {
                    match ra.read(file, offset, len, limit)? {
                        Some(bytes) => Ok(bytes),
                        None => file.read_vec(offset, len),
                    }
                })?,
                None => self.read_contents(handle)?,
            };
        if !fill_cache {
            // Only compactions read without filling the cache (`Table::iter_no_fill`).
            // The bytes are those `read_contents_with` counted: the block and its trailer.
            let len = handle.end().map_or(0, |end| end - handle.offset);
            Statistics::add(&self.stats.local().compaction_blocks_read, 1);
            Statistics::add(&self.stats.local().compaction_block_bytes_read, len);
        }
        let block =
            Arc::new(Block::decode(contents).map_err(|r| self.corruption(handle.offset, r))?);
        if let Some(cache) = self.block_cache.as_ref().filter(|_| fill_cache) {
            cache.insert(self.file_number, handle.offset, Arc::clone(&block));
        }
        Ok(block)
    }

    fn read_contents(&self, handle: BlockHandle) -> Result<Vec<u8>> {
        read_contents(&*self.file, &self.stats, handle)
    }

    /// A corruption error in this table's file at `offset`.
    pub(crate) fn corruption(&self, offset: u64, reason: &str) -> Error {
        Error::corruption(self.file.path(), offset, reason)
    }
}

/// Accessors for `strata sst-dump`, the fuzz checks and tests; the engine reads through
/// `get` and iterators.
#[cfg_attr(
    not(feature = "internals"),
    allow(
        dead_code,
        reason = "used by `strata sst-dump`, the fuzz checks and tests"
    )
)]
impl Table {
    /// The table's properties (from its properties block, plus file size and version).
    pub fn properties(&self) -> &TableProperties {
        &self.props
    }

    /// The compression setting the table was built with (blocks that did not compress
    /// well are stored raw regardless).
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// The file number this table was opened as.
    pub fn file_number(&self) -> u64 {
        self.file_number
    }

    /// False iff the filter proves no entry of `user_key` is in the table; true when the
    /// table has no filter, or a cached filter could not be read back. Bumps no
    /// counters of its own (see [`Table::get`]).
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        match &self.filter {
            None => true,
            Some(Meta::Held(f)) => f.may_contain(user_key),
            Some(Meta::Cached(h)) => self
                .cached_filter(*h)
                .map_or(true, |f| f.may_contain(user_key)),
        }
    }
}

/// Reads a block and checks its trailer; returns its raw (decompressed) contents.
fn read_contents(
    file: &dyn RandomAccessFile,
    stats: &Statistics,
    handle: BlockHandle,
) -> Result<Vec<u8>> {
    read_contents_with(file, stats, handle, |offset, len, _| {
        file.read_vec(offset, len)
    })
}

/// [`read_contents`] with the raw bytes `[offset, offset + len)` fetched by `fetch`,
/// which also gets the end of the table's blocks (the footer's start) as a limit.
fn read_contents_with(
    file: &dyn RandomAccessFile,
    stats: &Statistics,
    handle: BlockHandle,
    fetch: impl FnOnce(u64, usize, u64) -> Result<Vec<u8>>,
) -> Result<Vec<u8>> {
    let limit = file.size().saturating_sub(FOOTER_LEN as u64);
    let len = handle
        .end()
        .filter(|&e| e <= limit)
        .and_then(|e| usize::try_from(e - handle.offset).ok())
        .ok_or_else(|| {
            Error::corruption(
                file.path(),
                handle.offset,
                "block handle points past the end of the file",
            )
        })?;
    let buf = fetch(handle.offset, len, limit)?;
    Statistics::add(&stats.local().blocks_read, 1);
    Statistics::add(&stats.local().block_bytes_read, len as u64);
    unseal_block(buf).map_err(|r| Error::corruption(file.path(), handle.offset, r))
}
