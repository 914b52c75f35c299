//! One memory budget for the memtables and the block cache of one or more databases
//! (RocksDB's `WriteBufferManager` charged to its block cache; docs/ARCHITECTURE.md
//! §4.4).
//!
//! # What is charged
//! - **Memtables**, every column family's, active and immutable, from the moment their
//!   arena takes a block until it is freed (after the flush is installed and the last
//!   reader lets go): the arena's real allocations, 64 KiB blocks and large nodes
//!   (`memtable/arena.rs` charges them as it makes them and releases them when it
//!   drops).
//! - **The block cache**: the budget owns one; every database opened with the budget
//!   reads through a handle of it (`BlockCache::share`). Its capacity follows the
//!   memtables: `limit − memtables`, but never below `limit / 8`
//!   (`MIN_CACHE_FRACTION`), so the cache gives memory back (evicting) as memtables
//!   grow and takes it again as they are flushed. Index and filter blocks are charged
//!   when they are cached (`Options::cache_index_and_filter_blocks`); otherwise they
//!   live in each open table, outside the budget.
//!
//! # What the write path does with it (`db::write::make_room`)
//! - memtables at half the budget or more (`MemoryBudget::memtable_share`) with this
//!   database's active memtables holding at least half of that: the largest active
//!   memtable is switched and flushed (RocksDB's `ShouldFlush`);
//! - memtables at 3/4 of the budget: each write group is slowed by 1 ms;
//! - memtables at 7/8 (the cache at its floor): writes stop until a flush frees memory,
//!   if this database has a flush to wait for (a database cannot flush another's
//!   memtables, and stopping for them could wait forever).
//!
//! Everything else a database allocates is outside the budget: table readers and
//! their open files (`max_open_files`), write batches in flight, compaction and flush
//! buffers, iterators. docs/performance.md measures that overhead. So that what a
//! background job freed does not stay resident in its thread's allocator arena, the
//! background threads give freed heap back after every job (`release_freed_heap`).
//!
//! # Concurrency
//! Counters are atomics; the cache's capacity is changed with hysteresis
//! (`REBALANCE_STEP`) so that a write group rarely takes the cache's shard locks.

use crate::cache::BlockCache;
use crate::error::{Error, Result};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The cache never shrinks below this fraction of the budget (1/8).
const MIN_CACHE_FRACTION: usize = 8;
/// The cache's capacity is moved only when its target moved by at least this
/// fraction of the budget (1/64).
const REBALANCE_STEP: usize = 64;
/// The smallest budget accepted: 128 KiB (two memtable arena blocks; the tests run
/// budgets this small so that small workloads meet every threshold).
pub const MIN_MEMORY_BUDGET: usize = 128 << 10;

/// A memory budget shared by the memtables and the block cache of the databases
/// opened with it ([`crate::DbBuilder::memory_budget`], or `Options::memory_budget`
/// for a budget of one database's own). A cheap handle: clones share one budget.
///
/// ```
/// # fn main() -> strata::Result<()> {
/// let budget = strata::MemoryBudget::new(256 << 20)?;
/// let dir = tempfile::tempdir().expect("tempdir");
/// let db = strata::Db::builder()
///     .memory_budget(&budget)
///     .open(dir.path(), strata::Options::default())?;
/// db.put(&Default::default(), b"k", b"v")?;
/// assert!(budget.memtable_usage() > 0);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct MemoryBudget {
    inner: Arc<Budget>,
}

impl std::fmt::Debug for MemoryBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryBudget")
            .field("limit", &self.limit())
            .field("memtables", &self.memtable_usage())
            .field("block_cache", &self.block_cache_usage())
            .finish()
    }
}

/// The shared state of a [`MemoryBudget`]; memtable arenas hold it to charge
/// themselves.
pub(crate) struct Budget {
    limit: usize,
    /// Bytes the charged memtable arenas hold.
    memtables: AtomicUsize,
    /// The budget's cache; databases take handles of it.
    cache: BlockCache,
    /// The capacity last given to the cache.
    cache_capacity: AtomicUsize,
    /// Held while the cache's capacity is moved, so the last capacity set is the
    /// last one computed (two movers racing could otherwise leave the cache at a
    /// stale size that the hysteresis then never corrects).
    moving: Mutex<()>,
}

impl MemoryBudget {
    /// A budget of `limit` bytes for memtables and the block cache together.
    ///
    /// # Errors
    /// `InvalidArgument` if `limit` is below [`MIN_MEMORY_BUDGET`] (128 KiB).
    pub fn new(limit: usize) -> Result<MemoryBudget> {
        if limit < MIN_MEMORY_BUDGET {
            return Err(Error::InvalidArgument(format!(
                "memory_budget too small: {limit} bytes, at least {MIN_MEMORY_BUDGET}"
            )));
        }
        Ok(MemoryBudget {
            inner: Arc::new(Budget {
                limit,
                memtables: AtomicUsize::new(0),
                cache: BlockCache::new(limit),
                cache_capacity: AtomicUsize::new(limit),
                moving: Mutex::new(()),
            }),
        })
    }

    /// The budget, bytes.
    pub fn limit(&self) -> usize {
        self.inner.limit
    }

    /// Bytes the memtables charged to the budget hold now (every database's).
    pub fn memtable_usage(&self) -> usize {
        self.inner.memtables.load(Ordering::Relaxed)
    }

    /// Bytes of blocks the budget's cache holds now (every database's).
    pub fn block_cache_usage(&self) -> usize {
        self.inner.cache.usage()
    }

    /// Memtables and cache together: at most about the limit, beyond it only while
    /// memtables alone pass 7/8 of it (writes are stopped then).
    pub fn usage(&self) -> usize {
        self.memtable_usage() + self.block_cache_usage()
    }

    /// The memtable total past which the largest active memtable is flushed: half the
    /// budget.
    pub(crate) fn memtable_share(&self) -> usize {
        self.inner.limit / 2
    }

    /// The memtable total past which writes are slowed: 3/4 of the budget.
    pub(crate) fn slowdown_at(&self) -> usize {
        self.inner.limit / 4 * 3
    }

    /// The memtable total past which writes stop: 7/8 of the budget, where the cache
    /// is at its floor.
    pub(crate) fn stop_at(&self) -> usize {
        self.inner.limit - self.inner.limit / MIN_CACHE_FRACTION
    }

    /// A handle of the budget's block cache for one database.
    pub(crate) fn cache_handle(&self) -> BlockCache {
        self.inner.cache.share()
    }

    /// What a memtable arena charges itself to.
    pub(crate) fn charge(&self) -> Arc<Budget> {
        Arc::clone(&self.inner)
    }

    /// Moves the cache's capacity to follow the memtables (see the module docs).
    pub(crate) fn rebalance(&self) {
        self.inner.rebalance();
    }
}

/// After a flush or compaction job of a database with a budget: asks the allocator to
/// give the heap pages freed since back to the system, and counts the call and its
/// time in `stats`. A no-op where the allocator has no such call (anything but glibc).
///
/// Why: glibc gives each allocating thread an arena of its own and keeps the pages
/// freed in it resident until its top can be cut. A job frees its buffers (table
/// builders, index and filter blocks, read-ahead) in a background thread's arena,
/// under chunks still in use, so the process holds memory that neither the budget nor
/// anyone else uses (fillrandom then readrandom under a 64 MiB budget peaked 21 MiB
/// lower with it; docs/performance.md). `malloc_trim` walks every arena, each under
/// its own lock, so an allocation in the foreground may wait for one arena's walk
/// (about 0.1 ms, up to a few ms with hundreds of MiB of heap): once per job.
///
/// Requires: no lock held that a foreground thread might take.
pub(crate) fn release_freed_heap(stats: &crate::stats::Statistics) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let started = std::time::Instant::now();
        // SAFETY: `malloc_trim` takes no pointers and locks each arena itself; it is
        // safe to call from any thread at any time.
        unsafe {
            libc::malloc_trim(0);
        }
        let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        let local = stats.local();
        crate::stats::Statistics::add(&local.memory_budget_heap_trims, 1);
        crate::stats::Statistics::add(&local.memory_budget_heap_trim_micros, micros);
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = stats;
}

impl Budget {
    /// An arena took `bytes`.
    pub(crate) fn grow(&self, bytes: usize) {
        self.memtables.fetch_add(bytes, Ordering::Relaxed);
    }

    /// An arena freed `bytes`: the cache may take them.
    pub(crate) fn shrink(&self, bytes: usize) {
        self.memtables.fetch_sub(bytes, Ordering::Relaxed);
        self.rebalance();
    }

    /// The cache's capacity for the memtables charged now.
    fn target(&self) -> usize {
        self.limit
            .saturating_sub(self.memtables.load(Ordering::Relaxed))
            .max(self.limit / MIN_CACHE_FRACTION)
    }

    fn rebalance(&self) {
        let far = |current: usize| self.target().abs_diff(current) >= self.limit / REBALANCE_STEP;
        // The common case, every write group: within the step, no lock.
        if !far(self.cache_capacity.load(Ordering::Relaxed)) {
            return;
        }
        let _moving = self.moving.lock();
        if far(self.cache_capacity.load(Ordering::Relaxed)) {
            let target = self.target();
            self.cache.set_capacity(target);
            self.cache_capacity.store(target, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_gives_way_to_memtables_down_to_its_floor() {
        let b = MemoryBudget::new(64 << 20).expect("budget");
        assert_eq!(b.inner.cache.capacity(), 64 << 20);
        b.inner.grow(16 << 20);
        b.rebalance();
        assert_eq!(b.inner.cache.capacity(), 48 << 20);
        // A move smaller than 1/64 of the budget leaves the capacity alone.
        b.inner.grow(512 << 10);
        b.rebalance();
        assert_eq!(b.inner.cache.capacity(), 48 << 20);
        b.inner.grow(60 << 20);
        b.rebalance();
        assert_eq!(b.inner.cache.capacity(), 8 << 20, "the floor is 1/8");
        b.inner.shrink((60 << 20) + (16 << 20) + (512 << 10));
        assert_eq!(b.inner.cache.capacity(), 64 << 20);
        assert_eq!(b.memtable_usage(), 0);
        assert_eq!(
            (b.memtable_share(), b.slowdown_at(), b.stop_at()),
            (32 << 20, 48 << 20, 56 << 20)
        );
        assert!(MemoryBudget::new(64 << 10).is_err());
    }
}
