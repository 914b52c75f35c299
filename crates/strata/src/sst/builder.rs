//! [`TableBuilder`]: writes one SSTable front to back.
//!
//! Role: flushes and compactions create one builder per output file, `add` entries in
//! internal-key order, then `finish` (or drop the builder and delete the file on
//! failure). The builder never reads back what it wrote.
//!
//! Index separators: the index entry of a data block is emitted only when the next
//! block's first key is known, so it can be a short key `s` with
//! `last(block) <= s < first(next)` (LevelDB's shortest separator, on user keys, with
//! the seek trailer `(MAX_SEQUENCE, KIND_SEEK)` so `s` sorts before every real entry of
//! its user key). The last block gets a short successor of its last key.
//!
//! Block cuts: a data block is finished once its size estimate reaches `block_size`
//! (checked after each add), and also *before* an entry that could push it past
//! [`crate::limits::MAX_BLOCK_LEN`], so every data block is either within that bound or
//! holds a single entry (`crate::limits` invariant 2). The second rule never fires for
//! entries within the write limits and a `block_size` of at most 16 MiB, so it changes
//! no table written before it.
//!
//! Range tombstones ([`TableBuilder::set_range_dels`]) go to a range-deletion block
//! after the properties' inputs are known; a table with one is written as format
//! version 2 and its smallest and largest keys cover the tombstones too (the largest
//! as `(end, MAX_SEQUENCE, RangeDelete)`, which sorts before every real entry of
//! `end`, since `end` is exclusive).

use super::block::{max_add_growth, BlockBuilder};
use super::compression::{seal_block, BLOCK_TRAILER_LEN, MAX_BLOCK_LEN};
use super::filter::FilterBuilder;
use super::footer::{BlockHandle, Footer, FORMAT_VERSION, FORMAT_VERSION_RANGE_DEL};
use super::{properties, range_del_block, TableOptions, TableProperties};
use crate::env::WritableFile;
use crate::error::{Error, Result};
use crate::key::{self, compare_internal, pack_trailer, ValueKind, KIND_SEEK, MAX_SEQUENCE};
use crate::range_del::Fragments;
use crate::Compression;
use std::cmp::Ordering;

/// Builds one table file. Single owner; not shared between threads.
pub struct TableBuilder {
    out: BlockWriter,
    opts: TableOptions,
    data_block: BlockBuilder,
    index_block: BlockBuilder,
    filter: Option<FilterBuilder>,
    /// The last key added (empty before the first add).
    last_key: Vec<u8>,
    /// Handle of the last flushed data block, waiting for the next key to pick its
    /// separator.
    pending_index: Option<BlockHandle>,
    props: TableProperties,
    scratch: Vec<u8>,
    /// Set once a write failed: the file is unusable and later calls fail.
    failed: bool,
    /// The table's range tombstones, already cut to its key range by the caller.
    range_dels: Fragments,
}

/// The file plus the running offset and a reusable buffer for sealed blocks.
struct BlockWriter {
    file: Box<dyn WritableFile>,
    offset: u64,
    sealed: Vec<u8>,
}

impl BlockWriter {
    /// Seals `raw` (compressing with `c` if worthwhile), appends it, returns its handle
    /// and its size on disk (with trailer).
    fn write(&mut self, raw: &[u8], c: Compression) -> Result<(BlockHandle, u64)> {
        seal_block(raw, c, &mut self.sealed);
        let handle = BlockHandle {
            offset: self.offset,
            size: (self.sealed.len() - BLOCK_TRAILER_LEN) as u64,
        };
        self.file.append(&self.sealed)?;
        self.offset += self.sealed.len() as u64;
        Ok((handle, self.sealed.len() as u64))
    }
}

impl TableBuilder {
    /// A builder writing to `file` (which must be empty).
    pub fn new(file: Box<dyn WritableFile>, opts: TableOptions) -> TableBuilder {
        let filter =
            (opts.bloom_bits_per_key > 0).then(|| FilterBuilder::new(opts.bloom_bits_per_key));
        TableBuilder {
            out: BlockWriter {
                offset: file.len(),
                file,
                sealed: Vec::new(),
            },
            data_block: BlockBuilder::new(opts.block_restart_interval),
            index_block: BlockBuilder::new(1),
            filter,
            last_key: Vec::new(),
            pending_index: None,
            props: TableProperties {
                column_group: opts.column_group,
                smallest_seqno: u64::MAX,
                ..TableProperties::default()
            },
            scratch: Vec::new(),
            failed: false,
            range_dels: Fragments::default(),
            opts,
        }
    }

    /// Appends an entry.
    ///
    /// Requires: `ikey` is a well-formed internal key strictly greater (under
    /// [`compare_internal`]) than the previous one.
    ///
    /// # Errors
    /// [`Error::Internal`] for a malformed or out-of-order key, or if an earlier write
    /// failed (the engine broke the precondition: every table is written from a sorted
    /// stream of its own keys); I/O errors from the file, and
    /// [`Error::InvalidArgument`] for an entry or index block the format cannot encode
    /// (offsets over u32, see [`BlockBuilder::add`]); after those the builder is
    /// unusable.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        if self.failed {
            return Err(Error::Internal("table builder failed earlier".into()));
        }
        let parsed = key::parse_internal_key(ikey)
            .ok_or_else(|| Error::Internal("table builder: malformed internal key".into()))?;
        let first = self.props.num_entries == 0;
        if !first && compare_internal(ikey, &self.last_key) != Ordering::Greater {
            return Err(Error::Internal(format!(
                "table keys out of order: key=`{}` after `{}`",
                ikey.escape_ascii(),
                self.last_key.escape_ascii()
            )));
        }
        let growth = max_add_growth(ikey.len(), value.len());
        if self.data_block.size_estimate().saturating_add(growth) > MAX_BLOCK_LEN {
            // Cut before, not after: the block stays within the reader's bound.
            self.flush_data_block()?;
        }
        if let Some(handle) = self.pending_index.take() {
            separator(&self.last_key, ikey, &mut self.scratch);
            self.add_index_entry(handle)?;
        }
        if let Some(f) = &mut self.filter {
            if first || key::user_key(&self.last_key) != parsed.user_key {
                f.add(parsed.user_key);
            }
        }
        let p = &mut self.props;
        if first {
            p.smallest_key = ikey.to_vec();
        }
        p.num_entries += 1;
        p.num_deletions += u64::from(parsed.kind == ValueKind::Delete);
        p.raw_key_size += ikey.len() as u64;
        p.raw_value_size += value.len() as u64;
        p.smallest_seqno = p.smallest_seqno.min(parsed.seq);
        p.largest_seqno = p.largest_seqno.max(parsed.seq);
        self.last_key.clear();
        self.last_key.extend_from_slice(ikey);
        if let Err(e) = self.data_block.add(ikey, value) {
            self.failed = true;
            return Err(e);
        }
        if self.data_block.size_estimate() >= self.opts.block_size {
            self.flush_data_block()?;
        }
        Ok(())
    }

    /// Gives the table these range tombstones (replacing any given before). They are
    /// written by [`TableBuilder::finish`].
    pub fn set_range_dels(&mut self, frags: Fragments) {
        self.range_dels = frags;
    }

    /// Bytes written so far plus the current (unfinished) data block.
    pub fn estimated_size(&self) -> u64 {
        self.out.offset + self.data_block.size_estimate() as u64
    }

    /// Writes the last data block, the filter, index and properties blocks and the
    /// footer, then fsyncs the file. Returns the properties with `file_size` and
    /// `format_version` filled. An empty table (no `add`) is valid.
    ///
    /// # Errors
    /// I/O errors from the file; [`Error::Internal`] if an earlier call failed.
    pub fn finish(mut self) -> Result<TableProperties> {
        if self.failed {
            return Err(Error::Internal("table builder failed earlier".into()));
        }
        self.flush_data_block()?;
        if let Some(handle) = self.pending_index.take() {
            successor(&self.last_key, &mut self.scratch);
            self.add_index_entry(handle)?;
        }
        let filter = match &self.filter {
            Some(f) => {
                let (h, n) = self.out.write(&f.finish(), Compression::None)?;
                self.props.filter_size = n;
                Some(h)
            }
            None => None,
        };
        let (index, n) = self
            .out
            .write(self.index_block.finish(), Compression::None)?;
        self.props.index_size = n;
        self.props.largest_key = std::mem::take(&mut self.last_key);
        let format_version = self.write_range_dels()?;
        if self.props.num_entries == 0 && self.props.num_range_deletions == 0 {
            self.props.smallest_seqno = 0;
        }
        let props_raw = properties::encode(&self.props, self.opts.compression);
        let (properties, _) = self.out.write(&props_raw, Compression::None)?;
        let footer = Footer {
            filter,
            index,
            properties,
            format_version,
        };
        let footer = footer.encode();
        self.out.file.append(&footer)?;
        self.out.offset += footer.len() as u64;
        self.out.file.sync()?;
        self.props.file_size = self.out.offset;
        self.props.format_version = format_version;
        Ok(self.props)
    }

    /// Writes the range-deletion block, if there are tombstones, and widens the
    /// properties to cover them. Returns the table's format version.
    fn write_range_dels(&mut self) -> Result<u32> {
        let frags = std::mem::take(&mut self.range_dels);
        let (Some(first), Some(last)) = (frags.fragments().first(), frags.fragments().last())
        else {
            return Ok(FORMAT_VERSION);
        };
        let (handle, _) = self
            .out
            .write(&range_del_block::encode(&frags)?, Compression::None)?;
        let p = &mut self.props;
        p.range_del_block = Some(handle);
        p.num_range_deletions = frags.len() as u64;
        for f in frags.fragments() {
            for &s in &f.seqs {
                p.smallest_seqno = p.smallest_seqno.min(s);
                p.largest_seqno = p.largest_seqno.max(s);
            }
        }
        let mut lo = Vec::new();
        let newest = first.seqs.first().copied().unwrap_or(0);
        key::append_internal_key(&mut lo, &first.start, newest, ValueKind::RangeDelete);
        if p.num_entries == 0 || compare_internal(&lo, &p.smallest_key) == Ordering::Less {
            p.smallest_key = lo;
        }
        let mut hi = Vec::new();
        key::append_internal_key(&mut hi, &last.end, MAX_SEQUENCE, ValueKind::RangeDelete);
        if p.num_entries == 0 || compare_internal(&hi, &p.largest_key) == Ordering::Greater {
            p.largest_key = hi;
        }
        Ok(FORMAT_VERSION_RANGE_DEL)
    }

    /// Adds the index entry `self.scratch -> handle`.
    fn add_index_entry(&mut self, handle: BlockHandle) -> Result<()> {
        // One small allocation per data block (every few KiB), not per entry.
        let mut v = Vec::with_capacity(20);
        handle.encode_to(&mut v);
        let added = self.index_block.add(&self.scratch, &v);
        self.failed |= added.is_err();
        added
    }

    fn flush_data_block(&mut self) -> Result<()> {
        if self.data_block.is_empty() {
            return Ok(());
        }
        let written = self
            .out
            .write(self.data_block.finish(), self.opts.compression);
        self.data_block.reset();
        match written {
            Ok((handle, n)) => {
                self.pending_index = Some(handle);
                self.props.num_data_blocks += 1;
                self.props.data_size += n;
                Ok(())
            }
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }
}

/// Appends the seek trailer so a shortened user key sorts before all its real entries.
fn push_seek_trailer(out: &mut Vec<u8>) {
    out.extend_from_slice(&pack_trailer(MAX_SEQUENCE, KIND_SEEK).to_le_bytes());
}

/// Sets `out` to a short internal key `s` with `a <= s < b`. Requires: `a < b`.
pub(crate) fn separator(a: &[u8], b: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let (ua, ub) = (key::user_key(a), key::user_key(b));
    let common = ua.iter().zip(ub).take_while(|(x, y)| x == y).count();
    if let (Some(&x), Some(&y)) = (ua.get(common), ub.get(common)) {
        if x < 0xff && x + 1 < y {
            out.extend_from_slice(ua.get(..common).unwrap_or_default());
            out.push(x + 1);
            push_seek_trailer(out);
            return;
        }
    }
    out.extend_from_slice(a);
}

/// Sets `out` to a short internal key `>= a`.
pub(crate) fn successor(a: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let ua = key::user_key(a);
    if let Some(i) = ua.iter().position(|&x| x != 0xff) {
        out.extend_from_slice(ua.get(..i).unwrap_or_default());
        out.push(ua.get(i).copied().unwrap_or(0).wrapping_add(1));
        push_seek_trailer(out);
        return;
    }
    out.extend_from_slice(a);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::make_internal_key;

    #[test]
    fn separators_lie_between_their_neighbours() {
        let cases: &[(&[u8], u64, &[u8], u64)] = &[
            (b"abc", 5, b"abz", 5),
            (b"abc", 5, b"abd", 5),
            (b"abc", 5, b"abc", 4),
            (b"ab", 5, b"abc", 9),
            (b"a\xff", 5, b"b", 9),
            (b"", 1, b"\0", 1),
            (b"\xff\xff", 1, b"\xff\xff\x01", 1),
        ];
        let mut s = Vec::new();
        for &(ua, sa, ub, sb) in cases {
            let a = make_internal_key(ua, sa, ValueKind::Put);
            let b = make_internal_key(ub, sb, ValueKind::Put);
            separator(&a, &b, &mut s);
            assert_ne!(compare_internal(&s, &a), Ordering::Less, "{ua:?} {ub:?}");
            assert_eq!(compare_internal(&s, &b), Ordering::Less, "{ua:?} {ub:?}");
            successor(&a, &mut s);
            assert_ne!(compare_internal(&s, &a), Ordering::Less);
        }
        separator(
            &make_internal_key(b"apple", 1, ValueKind::Put),
            &make_internal_key(b"cherry", 1, ValueKind::Put),
            &mut s,
        );
        assert_eq!(key::user_key(&s), b"b");
    }
}
