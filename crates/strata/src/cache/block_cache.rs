//! [`BlockCache`]: decoded data blocks keyed by `(file number, block offset)`, weighted
//! by bytes.
//!
//! Values are `Arc<Block>`: a hit clones the `Arc` (no copy of the block), and a block
//! evicted while an iterator still reads it stays alive until that iterator lets go.
//! Eviction is quick_cache's CLOCK-Pro-like policy, per shard.

use crate::sst::Block;
use quick_cache::sync::Cache;
use quick_cache::Weighter;
use std::sync::Arc;

/// Weighs a block by the memory it pins.
#[derive(Clone, Copy, Debug, Default)]
struct BlockWeighter;

impl Weighter<(u64, u64), Arc<Block>> for BlockWeighter {
    fn weight(&self, _key: &(u64, u64), block: &Arc<Block>) -> u64 {
        // Never 0: zero-weight entries are never evicted by quick_cache.
        (block.charge() as u64).max(1)
    }
}

/// A thread-safe, byte-bounded cache of decoded data blocks.
pub struct BlockCache {
    cache: Cache<(u64, u64), Arc<Block>, BlockWeighter>,
    capacity: usize,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("capacity", &self.capacity)
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
            cache: Cache::with_weighter(items, capacity_bytes as u64, BlockWeighter),
            capacity: capacity_bytes,
        }
    }

    /// Bytes of blocks held now.
    pub fn usage(&self) -> usize {
        self.cache.weight() as usize
    }

    /// The configured capacity, bytes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Number of blocks held now.
    pub fn len(&self) -> usize {
        self.cache.len()
    }

    /// True iff the cache holds no block.
    pub fn is_empty(&self) -> bool {
        self.cache.is_empty()
    }

    /// The block at `offset` of table `file_number`, if cached.
    pub fn get(&self, file_number: u64, offset: u64) -> Option<Arc<Block>> {
        self.cache.get(&(file_number, offset))
    }

    /// Caches a block (replacing any entry with the same key). A block heavier than a
    /// shard's capacity is not kept.
    pub fn insert(&self, file_number: u64, offset: u64, block: Arc<Block>) {
        self.cache.insert((file_number, offset), block);
    }

    /// Drops every cached block of `file_number` (after its file is deleted). Walks
    /// the whole cache: call on file deletion, not on hot paths.
    pub fn erase_file(&self, file_number: u64) {
        self.cache.retain(|&(f, _), _| f != file_number);
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
        c.erase_file(1);
        assert_eq!(c.usage(), 0);
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
    fn zero_capacity_holds_nothing() {
        let c = BlockCache::new(0);
        c.insert(1, 0, block(100));
        assert_eq!(c.usage(), 0);
        assert!(c.get(1, 0).is_none());
    }
}
