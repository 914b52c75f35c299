//! [`BlockCache`]: decoded blocks keyed by `(owner, file number, block offset)`,
//! weighted by bytes.
//!
//! Values are data blocks and, with `Options::cache_index_and_filter_blocks`, index
//! blocks and bloom filters too, each behind an `Arc`: a hit clones the `Arc` (no copy
//! of the block), and a block evicted while an iterator still reads it stays alive
//! until that iterator lets go. Blocks of one table sit at distinct offsets, so a
//! filter and a data block never share a key. Eviction is quick_cache's
//! CLOCK-Pro-like policy, per shard; index and filter blocks get no priority over
//! data blocks (RocksDB's `cache_index_and_filter_blocks_with_high_priority` is not
//! built; ARCHITECTURE §14).
//!
//! Sharing: one cache's memory may serve several databases. File numbers are unique
//! only within one database, so each database reads and writes through its own
//! *handle* ([`BlockCache::share`]), whose `owner` id is part of every key: two
//! databases' blocks never collide, yet they compete for one capacity.

use crate::sst::filter::BloomFilter;
use crate::sst::Block;
use quick_cache::sync::Cache;
use quick_cache::Weighter;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// `(owner, file number, block offset)`.
type Key = (u64, u64, u64);

/// A cached value: a data or index block, or a table's bloom filter.
#[derive(Clone)]
enum Cached {
    Block(Arc<Block>),
    Filter(Arc<BloomFilter>),
}

/// Memory an entry pins beyond its value's own charge: the `Arc`'s two counts, the
/// cache's key and value slots, and an estimate of 32 bytes for quick_cache's
/// per-entry state and the allocator's chunk header of the value's bytes. RocksDB's
/// default `kFullChargeCacheMetadata` charges the same kinds of overhead, so that the
/// capacity bounds what the cache really holds on to (about 2% more than the bytes of
/// 4 KiB blocks).
const ENTRY_OVERHEAD: usize = 2 * std::mem::size_of::<usize>()
    + std::mem::size_of::<Key>()
    + std::mem::size_of::<Cached>()
    + 32;

/// Weighs a value by the memory it pins, entry overhead included.
#[derive(Clone, Copy, Debug, Default)]
struct BlockWeighter;

impl Weighter<Key, Cached> for BlockWeighter {
    fn weight(&self, _key: &Key, value: &Cached) -> u64 {
        let charge = match value {
            Cached::Block(b) => b.charge(),
            Cached::Filter(f) => f.charge(),
        };
        (charge + ENTRY_OVERHEAD) as u64
    }
}

/// The storage every handle of one cache shares.
struct Store {
    cache: Cache<Key, Cached, BlockWeighter>,
    /// Moved by a memory budget (`set_capacity`); fixed otherwise.
    capacity: AtomicUsize,
    /// The next unused owner id ([`BlockCache::share`]).
    next_owner: AtomicU64,
}

/// A thread-safe, byte-bounded cache of decoded data blocks, as seen by one owner
/// (one database).
///
/// Create one with [`BlockCache::new`] and give it to [`crate::DbBuilder::block_cache`]
/// to share its memory among databases: each database reads and writes through a handle
/// of its own, so databases never see each other's blocks but compete for one capacity.
pub struct BlockCache {
    store: Arc<Store>,
    owner: u64,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("owner", &self.owner)
            .field("capacity", &self.capacity())
            .field("usage", &self.usage())
            .finish()
    }
}

/// Typical block size used to size the cache's hash tables.
const ESTIMATED_BLOCK_CHARGE: usize = 4096;

impl BlockCache {
    /// A cache holding up to `capacity_bytes` of blocks (0 holds nothing).
    pub fn new(capacity_bytes: usize) -> BlockCache {
        let items = (capacity_bytes / ESTIMATED_BLOCK_CHARGE).max(16);
        BlockCache {
            store: Arc::new(Store {
                cache: Cache::with_weighter(items, capacity_bytes as u64, BlockWeighter),
                capacity: AtomicUsize::new(capacity_bytes),
                next_owner: AtomicU64::new(1),
            }),
            owner: 0,
        }
    }

    /// A new handle on the same memory with a key space of its own: blocks cached
    /// through it are invisible to `self` and to every other handle. A database
    /// opened with a shared cache takes one handle for itself.
    pub(crate) fn share(&self) -> BlockCache {
        BlockCache {
            store: Arc::clone(&self.store),
            owner: self.store.next_owner.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Bytes of blocks held now, by every handle of this cache.
    pub fn usage(&self) -> usize {
        self.store.cache.weight() as usize
    }

    /// The capacity, bytes (shared by every handle): as configured, or as a memory
    /// budget last set it.
    pub fn capacity(&self) -> usize {
        self.store.capacity.load(Ordering::Relaxed)
    }

    /// Changes the capacity (every handle's), evicting down to a smaller one: a memory
    /// budget gives the cache what the memtables leave (`memory_budget`).
    pub(crate) fn set_capacity(&self, bytes: usize) {
        self.store.capacity.store(bytes, Ordering::Relaxed);
        self.store.cache.set_capacity(bytes as u64);
    }

    /// Number of blocks held now, by every handle of this cache.
    pub fn len(&self) -> usize {
        self.store.cache.len()
    }

    /// True iff the cache holds no block (of any handle).
    pub fn is_empty(&self) -> bool {
        self.store.cache.is_empty()
    }

    /// The block at `offset` of table `file_number`, if this handle cached it.
    pub(crate) fn get(&self, file_number: u64, offset: u64) -> Option<Arc<Block>> {
        match self.store.cache.get(&(self.owner, file_number, offset))? {
            Cached::Block(b) => Some(b),
            Cached::Filter(_) => None,
        }
    }

    /// The block at `offset` of table `file_number`, if this handle cached it, without
    /// marking it used (a batch's read-ahead looks, `Table::block_to_fetch`).
    pub(crate) fn peek(&self, file_number: u64, offset: u64) -> Option<Arc<Block>> {
        match self.store.cache.peek(&(self.owner, file_number, offset))? {
            Cached::Block(b) => Some(b),
            Cached::Filter(_) => None,
        }
    }

    /// [`BlockCache::peek`] of a bloom filter.
    pub(crate) fn peek_filter(&self, file_number: u64, offset: u64) -> Option<Arc<BloomFilter>> {
        match self.store.cache.peek(&(self.owner, file_number, offset))? {
            Cached::Filter(f) => Some(f),
            Cached::Block(_) => None,
        }
    }

    /// True iff this handle holds an entry at `offset` of table `file_number`.
    pub(crate) fn contains(&self, file_number: u64, offset: u64) -> bool {
        self.store
            .cache
            .contains_key(&(self.owner, file_number, offset))
    }

    /// Caches a block under this handle (replacing any entry with the same key). A
    /// block heavier than a shard's capacity is not kept.
    pub(crate) fn insert(&self, file_number: u64, offset: u64, block: Arc<Block>) {
        self.store
            .cache
            .insert((self.owner, file_number, offset), Cached::Block(block));
    }

    /// The bloom filter at `offset` of table `file_number`, if this handle cached it.
    pub(crate) fn get_filter(&self, file_number: u64, offset: u64) -> Option<Arc<BloomFilter>> {
        match self.store.cache.get(&(self.owner, file_number, offset))? {
            Cached::Filter(f) => Some(f),
            Cached::Block(_) => None,
        }
    }

    /// Caches a table's bloom filter under this handle, as [`BlockCache::insert`].
    pub(crate) fn insert_filter(&self, file_number: u64, offset: u64, filter: Arc<BloomFilter>) {
        self.store
            .cache
            .insert((self.owner, file_number, offset), Cached::Filter(filter));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(len: usize) -> Arc<Block> {
        let mut v = vec![0u8; len.max(8)];
        let n = v.len();
        v[n - 4..].copy_from_slice(&1u32.to_le_bytes());
        v[n - 8..n - 4].copy_from_slice(&0u32.to_le_bytes());
        Arc::new(Block::decode(v).expect("valid"))
    }

    #[test]
    fn usage_stays_within_capacity() {
        let c = BlockCache::new(64 << 10);
        for i in 0..200u64 {
            c.insert(1, i * 4096, block(4000));
            assert!(c.usage() <= c.capacity(), "usage {}", c.usage());
        }
        assert!(c.usage() > 0);
        assert!(!c.is_empty());
    }

    #[test]
    fn hit_returns_the_same_block_without_copying() {
        let c = BlockCache::new(1 << 20);
        let b = block(100);
        c.insert(3, 0, Arc::clone(&b));
        let got = c.get(3, 0).expect("cached");
        assert!(Arc::ptr_eq(&got, &b));
        assert!(c.get(3, 1).is_none());
        assert!(c.get(4, 0).is_none());
    }

    #[test]
    fn filters_are_cached_weighed_and_kept_apart_from_blocks() {
        let c = BlockCache::new(1 << 20);
        let mut bits = crate::sst::filter::FilterBuilder::new(10);
        for i in 0..1000u32 {
            bits.add(&i.to_le_bytes());
        }
        let f = Arc::new(BloomFilter::decode(bits.finish()).expect("valid"));
        c.insert_filter(5, 4096, Arc::clone(&f));
        assert!(Arc::ptr_eq(&c.get_filter(5, 4096).expect("cached"), &f));
        assert!(c.get(5, 4096).is_none(), "a filter is not a block");
        assert_eq!(c.usage(), f.charge() + ENTRY_OVERHEAD);
        c.insert(5, 0, block(100));
        assert!(c.get_filter(5, 0).is_none(), "a block is not a filter");
    }

    #[test]
    fn zero_capacity_holds_nothing() {
        let c = BlockCache::new(0);
        c.insert(1, 0, block(100));
        assert_eq!(c.usage(), 0);
        assert!(c.get(1, 0).is_none());
    }

    #[test]
    fn shared_handles_never_see_each_others_blocks() {
        let a = BlockCache::new(1 << 20);
        let b = a.share();
        let (x, y) = (block(100), block(200));
        a.insert(7, 0, Arc::clone(&x));
        b.insert(7, 0, Arc::clone(&y));
        assert!(Arc::ptr_eq(&a.get(7, 0).expect("a's block"), &x));
        assert!(Arc::ptr_eq(&b.get(7, 0).expect("b's block"), &y));
        assert_eq!(a.len(), 2, "one store");
        assert_eq!(a.usage(), b.usage());
    }
}
