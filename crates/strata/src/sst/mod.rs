//! SSTables: immutable sorted files of internal-key entries, and their reader.
//!
//! # Role
//! Flushes and compactions write tables with [`TableBuilder`] (built → sealed by
//! `finish`, which fsyncs). The table cache opens them as [`Table`]s (read by many
//! threads at once through point lookups and [`TableIterator`]s). Once no version
//! references a table, the database deletes its file; open handles keep working until
//! dropped.
//!
//! # Format (format version 1; version 2 adds the range-deletion block)
//! ```text
//! +--------------------+  offset 0
//! | data block 0       |  entries with prefix-compressed internal keys  } each block:
//! | data block 1       |                                                 } contents ++
//! | ...                |                                                 } type: u8 ++
//! | data block n-1     |                                                 } crc: u32 LE
//! +--------------------+
//! | filter block       |  bloom filter over user keys (absent if bits_per_key = 0)
//! +--------------------+
//! | index block        |  one entry per data block: separator key -> block handle
//! +--------------------+
//! | range-del block    |  format version 2 only: the table's range tombstones
//! +--------------------+  (`range_del_block`), located by the properties
//! | properties block   |  tagged table statistics
//! +--------------------+
//! | footer (64 bytes)  |  filter/index/properties handles, version, crc, magic
//! +--------------------+  file size
//! ```
//! All fixed-width integers are little-endian; varints are LEB128 ([`crate::coding`]).
//!
//! - **Block trailer** ([`compression`]): every block is `stored ++ type ++ crc`,
//!   `crc = mask_crc(crc32c(stored ++ type))`; type 1 = raw, 2 = LZ4, 3 = zstd
//!   (compressed payloads are prefixed by their raw length as a varint). A block is
//!   compressed only if that saves at least 12.5%. Filter, index and properties blocks
//!   are always raw.
//! - **Data and index blocks** ([`block`]): entries
//!   `shared: varint | non_shared: varint | value_len: varint | key_delta | value`,
//!   then `restarts: u32 × n`, `n: u32`. Data blocks restart every
//!   `block_restart_interval` entries; the index block restarts at every entry.
//! - **Index values**: a block handle `offset: varint64 | size: varint64` (size excludes
//!   the 5-byte trailer).
//! - **Filter block** ([`filter`]): cache-line-blocked bloom, `lines ++ probes: u8 ++
//!   num_lines: u32`.
//! - **Properties block** ([`properties`]): `tag: varint | len: varint | value` records.
//! - **Footer** ([`footer`]): three fixed `(offset u64, size u64)` handles (filter size 0 =
//!   no filter), `format_version: u32 = 1`, `crc: u32` over the first 52 bytes,
//!   `magic: u64 = 0x5354_5241_5453_5354`.
//!
//! Worked example: one entry `("a", seq 1, Put) -> "x"` with restart interval 16 gives
//! the data block contents `00 09 01 61 01 01 00 00 00 00 00 00 78 | 00 00 00 00 |
//! 01 00 00 00` (shared 0, key length 9, value length 1, key `a` + trailer
//! `0x101` LE, value `x`, one restart at 0, count 1), followed by `01` (raw) and the
//! 4-byte masked CRC32C of those 22 bytes. The frozen fixture
//! `src/sst/fixtures/sst_v1.sst` pins a whole file.
//!
//! # Invariants
//! 1. Entries are strictly ascending under [`crate::key::compare_internal`], enforced by
//!    [`TableBuilder::add`]; every reader's binary search depends on it.
//! 2. For data block `B` with successor `C`, its index key `s` satisfies
//!    `last(B) <= s < first(C)`; for the last block `s >= last(B)`. A shortened `s`
//!    has a user key strictly between its neighbours' and the seek trailer, so a point
//!    lookup only ever needs the one block the index points to.
//! 3. The filter holds every user key of the table (no false negatives).
//! 4. Every byte before the footer belongs to exactly one checksummed block, and every
//!    block is checked when read; the footer has its own CRC. Any damage is reported
//!    as [`crate::Error::Corruption`] with the file path and the block's offset.
//! 5. Decoders never panic and bound every allocation by the file size (or
//!    [`compression::MAX_BLOCK_LEN`] for decompression).
//! 6. Format changes bump [`FORMAT_VERSION`] and add a frozen fixture; tags and type
//!    bytes are append-only and 0 is never a valid value.
//!
//! # Concurrency
//! [`TableBuilder`] has one owner. [`Table`] is immutable and `Send + Sync`; share it by
//! `Arc`. Iterators are single-threaded and hold their table alive.
//!
//! # See also
//! [`crate::cache`] (block and table caches); the tests in `src/sst/tests/` (model
//! round trips against a `BTreeMap`, every-byte corruption and truncation, the frozen
//! v1 fixture `src/sst/fixtures/sst_v1.sst`).

pub mod block;
pub mod block_iter;
mod builder;
pub mod compression;
pub mod filter;
pub mod footer;
pub mod properties;
pub(crate) mod range_del_block;
mod readahead;
mod table;
mod table_iter;

#[cfg(test)]
mod tests;

pub use block::Block;
pub use builder::TableBuilder;
pub(crate) use table::Fetch;
pub use table::Table;
pub use table_iter::TableIterator;
// The format's parts by short name, for the fuzz checks and `strata sst-dump` (the
// engine names them through their modules).
#[cfg(feature = "internals")]
pub use {
    block::BlockBuilder,
    block_iter::BlockIter,
    footer::{BlockHandle, Footer, FORMAT_VERSION, TABLE_MAGIC},
};

use crate::options::{Compression, LevelOptions, Options};

/// How a table is built. Affects only the files written with it; readers need none of
/// it (everything is self-describing).
#[derive(Clone, Debug)]
pub struct TableOptions {
    /// Target uncompressed size of a data block, bytes: a block is cut once it reaches
    /// this. Larger: smaller index, better compression; more bytes read per lookup.
    pub block_size: usize,
    /// Entries between restart points in data blocks (>= 1; 0 is treated as 1).
    /// Larger: better prefix compression; longer scans inside a block on seek.
    pub block_restart_interval: usize,
    /// Bloom filter bits per distinct user key; 0 writes no filter.
    pub bloom_bits_per_key: u32,
    /// Compression of data blocks.
    pub compression: Compression,
    /// Column group recorded in the properties ([`crate::version::file_meta::ALL_COLUMNS`]
    /// for row tables).
    pub column_group: u32,
}

impl TableOptions {
    /// The options of tables written to `level` under `o` ([`Options::level`]: the
    /// last entry of `o.levels` extends downward), for column group 0.
    pub fn for_level(o: &Options, level: usize) -> Self {
        Self::from_level(o.level(level))
    }

    /// The table options one [`LevelOptions`] entry describes, for column group 0.
    pub fn from_level(l: &LevelOptions) -> Self {
        TableOptions {
            block_size: l.block_size,
            block_restart_interval: l.block_restart_interval,
            bloom_bits_per_key: l.bloom_bits_per_key,
            compression: l.compression,
            column_group: 0,
        }
    }
}

impl Default for TableOptions {
    fn default() -> Self {
        Self::from_level(&LevelOptions::DEFAULT)
    }
}

/// Statistics of one table, stored in its properties block.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TableProperties {
    /// Entries (all kinds).
    pub num_entries: u64,
    /// Tombstones among them.
    pub num_deletions: u64,
    /// Data blocks.
    pub num_data_blocks: u64,
    /// Sum of internal-key lengths.
    pub raw_key_size: u64,
    /// Sum of value lengths.
    pub raw_value_size: u64,
    /// Bytes of data blocks on disk (with trailers).
    pub data_size: u64,
    /// Bytes of the index block on disk (with trailer).
    pub index_size: u64,
    /// Bytes of the filter block on disk (with trailer); 0 without a filter.
    pub filter_size: u64,
    /// Smallest internal key (empty for an empty table).
    pub smallest_key: Vec<u8>,
    /// Largest internal key (empty for an empty table).
    pub largest_key: Vec<u8>,
    /// Smallest sequence number of any entry (0 for an empty table).
    pub smallest_seqno: u64,
    /// Largest sequence number of any entry.
    pub largest_seqno: u64,
    /// Column group stored by the table.
    pub column_group: u32,
    /// Size of the file, bytes (from the file, not the properties block).
    pub file_size: u64,
    /// Format version (from the footer).
    pub format_version: u32,
    /// Range tombstones in the range-deletion block (one per fragment and sequence
    /// number).
    pub num_range_deletions: u64,
    /// Where the range-deletion block is (format version 2), if the table has one.
    pub range_del_block: Option<footer::BlockHandle>,
}
