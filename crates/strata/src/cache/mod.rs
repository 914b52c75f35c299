//! Caches: decoded data blocks ([`BlockCache`]) and open tables ([`TableCache`]).
//!
//! Role: one of each per database. The table cache maps file numbers to open
//! [`crate::sst::Table`]s (bounding open file handles by `max_open_files`); the block
//! cache maps `(file number, block offset)` to decoded blocks, weighted by bytes.
//! Both are thread-safe and sharded internally (`quick_cache`), so readers never take a
//! global lock.
//!
//! Invariant: file numbers are never reused within a database, and each database
//! keys the block cache through its own handle (`BlockCache::share`), so a block
//! cache key never names two different blocks, even when databases share one cache
//! (injected with [`crate::db::DbBuilder::block_cache`]).

mod block_cache;
mod table_cache;

pub use block_cache::BlockCache;
pub(crate) use table_cache::PinnedTable;
pub use table_cache::TableCache;
