//! Exact engine statistics: counters bumped where the event happens, never estimated.
//!
//! [`Statistics`] holds the counters shared (`Arc`) by every component that reads or
//! writes. Per-level compaction figures are kept by the database under its state lock
//! and reported together in [`DbStats`].
//!
//! # Why the counters are sharded
//! A point lookup bumps three to five counters. Kept as one set of process-wide
//! atomics, every bump by one core invalidates the cache line in every other core that
//! bumped it, so two readers slow each other down on counters alone. Each thread
//! instead adds to one of [`SHARDS`] copies ([`Statistics::local`]), each on its own
//! cache lines; a thread picks its shard once, round-robin, so up to [`SHARDS`]
//! threads never share one. [`Statistics::snapshot`] sums the shards. Counts stay
//! exact: every add lands in exactly one shard and is never lost, and a snapshot taken
//! while threads add sees each add or not, as with one atomic per counter.

pub(crate) mod path;
pub(crate) mod purpose;

pub use path::{LatencyHistogram, PathStatsSnapshot};
pub use purpose::IoBytes;

use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

macro_rules! counters {
    ($( $(#[$doc:meta])* $name:ident ),* $(,)?) => {
        /// One shard of the live counters. Bump with
        /// `Statistics::add(&stats.local().field, n)`.
        #[derive(Debug, Default)]
        #[repr(align(128))]
        pub struct Counters {
            $( $(#[$doc])* pub $name: AtomicU64, )*
        }

        /// A point-in-time copy of the engine's live counters (`Statistics`).
        #[derive(Clone, Debug, Default, PartialEq, Eq)]
        pub struct StatisticsSnapshot {
            $( $(#[$doc])* pub $name: u64, )*
        }

        impl Statistics {
            /// Sums every counter over the shards.
            pub fn snapshot(&self) -> StatisticsSnapshot {
                let mut total = StatisticsSnapshot::default();
                for shard in self.shards.iter() {
                    $( total.$name += shard.$name.load(Ordering::Relaxed); )*
                }
                total
            }
        }

        impl StatisticsSnapshot {
            /// `(name, value)` pairs in declaration order, for printing and JSON.
            pub fn pairs(&self) -> Vec<(&'static str, u64)> {
                vec![ $( (stringify!($name), self.$name), )* ]
            }
        }
    };
}

counters! {
    /// User key+value bytes accepted by writes.
    user_bytes_written,
    /// Bytes appended to write-ahead logs.
    wal_bytes_written,
    /// WAL fsyncs issued.
    wal_syncs,
    /// Write groups committed (one WAL write each).
    write_groups,
    /// Writes committed (members of all groups).
    writes,
    /// Bytes of SSTables written by flushes.
    flush_bytes_written,
    /// Bytes of SSTables read by compactions.
    compaction_bytes_read,
    /// Bytes of SSTables written by compactions.
    compaction_bytes_written,
    /// Key + value bytes of every entry compactions read (the base of the
    /// false-overlap ratio).
    compaction_input_entry_bytes,
    /// Key + value bytes of compaction input that were false overlaps: entries of
    /// output-level files outside the upper inputs' key range (Kim et al. §III).
    compaction_false_overlap_bytes,
    /// Files moved down a level by metadata only (no I/O) instead of being compacted.
    trivial_moves,
    /// Files deleted by metadata only (no I/O) because no reader could see any entry
    /// of them: under newer range tombstones, or tombstones with nothing left to hide
    /// (`compaction::covered`).
    files_dropped_by_range_delete,
    /// Bytes of the files counted by `files_dropped_by_range_delete`: what a rewrite
    /// would have read.
    bytes_dropped_by_range_delete,
    /// Compactions that replaced their inputs by virtual tables (no data written).
    virtual_compactions,
    /// Virtual tables those compactions made.
    virtual_tables_created,
    /// Input bytes those compactions did not read (a rewrite would have).
    virtual_bytes_deferred,
    /// Slices those compactions made (a virtual table has one per parent it reads).
    virtual_slices_created,
    /// Of `compaction_bytes_read`, the bytes real compactions read through the
    /// slices of virtual tables (a slice's referenced bytes).
    virtual_slice_bytes_read,
    /// Compactions that rewrote virtual tables because reads asked for it
    /// (`compaction::requests`), and their bytes (parts of `compaction_bytes_*`).
    virtual_merges,
    /// Bytes `virtual_merges` read.
    virtual_merge_bytes_read,
    /// Bytes `virtual_merges` wrote.
    virtual_merge_bytes_written,
    /// Compactions that rewrote a virtual table to free its parents' garbage
    /// (`DelayedCompaction::max_garbage_ratio`).
    virtual_rewrites_for_space,
    /// Bytes `virtual_rewrites_for_space` read.
    virtual_rewrite_bytes_read,
    /// Bytes `virtual_rewrites_for_space` wrote.
    virtual_rewrite_bytes_written,
    /// Requests reads made for the compaction of a virtual table (each table once).
    virtual_merge_requests,
    /// Point lookups that met a virtual table holding their key in its range.
    gets_through_virtual,
    /// Data blocks a `multi_get` read ahead, together, from files read with direct I/O
    /// (`db::read::multi_get`, docs §5.2).
    multi_get_blocks_read_ahead,
    /// Of `tables_probed`, the parents of virtual tables probed by point lookups and
    /// transaction conflict checks.
    virtual_parents_probed,
    /// Scans whose merged entries were written back (`Options::query_compaction`),
    /// each installed as one edit.
    query_compactions,
    /// Write-backs discarded at the claim: a file they read left its level or became
    /// busy, a busy job writes their range, or a level at or below their output level
    /// gained a file in their range. Their outputs were collected; no data was lost.
    query_compactions_discarded_stale,
    /// Write-backs abandoned before any table was written: the scan moved backward,
    /// sought again or failed, or the database was closing, poisoned or its family
    /// dropped.
    query_compactions_discarded_abandoned,
    /// Scans that covered a range the trigger declined (too few levels or bytes, or
    /// too little to gain by the profit rule); they wrote nothing.
    query_compactions_discarded_below_threshold,
    /// Finished scans whose write-back was dropped because the background queue
    /// was full (`QueryCompaction::background`).
    query_compactions_discarded_queue_full,
    /// Table bytes write-backs wrote (the range's tables and the boundary remainders).
    query_compaction_bytes_written,
    /// Table bytes write-backs read: the boundary remainders only (the range's
    /// entries came from the scan).
    query_compaction_bytes_read,
    /// Files write-backs deleted (every file they read from, boundary files included).
    query_compaction_files_removed,
    /// Of `query_compaction_files_removed`, the boundary files whose part outside the
    /// range was rewritten at their own level.
    query_compaction_files_split,
    /// Entries the scans buffered that no output kept (old versions, covered entries,
    /// folded merge operands).
    query_compaction_entries_dropped,
    /// Wall time write-backs spent on the scans' threads, in microseconds.
    query_compaction_micros,
    /// Wall time of compaction jobs (not flushes), in microseconds.
    compaction_micros,
    /// Values compaction filters removed (`compaction_filter::Decision::Remove`).
    compaction_filter_removed,
    /// Values compaction filters changed (`compaction_filter::Decision::Change`).
    compaction_filter_changed,
    /// Changes compaction filters asked for with a value over `MAX_VALUE_LEN`: refused,
    /// the value kept (it could not be read back).
    compaction_filter_changes_refused,
    /// Compaction jobs abandoned because a snapshot taken while they ran could see an
    /// entry their filter changed (their inputs are compacted again).
    compaction_filter_jobs_abandoned,
    /// Compactions not started because their output would not fit on its path beside
    /// the running ones' and the room kept for flushes (`db::room`); picked again
    /// after a backoff.
    compactions_deferred_for_space,
    /// Point lookups served.
    gets,
    /// Tables whose contents a point lookup examined (after the snapshot filter).
    tables_probed,
    /// Tables skipped by the snapshot filter (smallest seqno newer than the snapshot).
    snapshot_filter_skips,
    /// Memtables skipped by the snapshot filter (empty, or only newer entries).
    snapshot_filter_memtable_skips,
    /// Bloom filter checks.
    bloom_checked,
    /// Bloom checks that answered "definitely absent".
    bloom_negatives,
    /// Bloom checks that answered "maybe" for a key the table did not hold.
    bloom_false_positives,
    /// Data/index/filter blocks read from files.
    blocks_read,
    /// Of `blocks_read`, the data blocks compactions read as their inputs (so a
    /// per-lookup figure can leave out the background's reads).
    compaction_blocks_read,
    /// Bytes of blocks read from files.
    block_bytes_read,
    /// Of `block_bytes_read`, the bytes of the blocks counted by
    /// `compaction_blocks_read` (so the foreground's read bytes can be told apart).
    compaction_block_bytes_read,
    /// Block cache hits.
    block_cache_hits,
    /// Block cache misses.
    block_cache_misses,
    /// Microseconds writers spent delayed by write slowdown.
    write_slowdown_micros,
    /// Times a writer waited because writes were stopped.
    write_stops,
    /// Of `write_stops`, the waits for a memtable (every one full, flushes behind)
    /// rather than for compactions (L0 files or pending bytes at the stop limit).
    write_stops_on_memtables,
    /// Microseconds writers spent waiting in `write_stops`.
    write_stop_micros,
    /// Background jobs (flushes, compactions) that failed with a retryable error and
    /// were abandoned, to be retried after a backoff instead of poisoning the database.
    background_retries,
    /// Memtables switched (and so flushed) because memtables passed half the memory
    /// budget (`Options::memory_budget`, docs §4.4).
    memory_budget_flushes,
    /// Write groups slowed by 1 ms because memtables passed 3/4 of the budget.
    memory_budget_slowdowns,
    /// Waits (up to 100 ms each, counted in `write_stops` too) of writes stopped
    /// because memtables passed 7/8 of the budget.
    memory_budget_stops,
    /// Calls after a background job that gave freed heap back to the system, with a
    /// memory budget (`malloc_trim`, glibc only; docs §4.4).
    memory_budget_heap_trims,
    /// Microseconds those calls took.
    memory_budget_heap_trim_micros,
    /// Times the database entered the no-space state (a full disk or quota met by a
    /// write, flush, compaction or MANIFEST edit; `Db::resume`, docs §7.8).
    no_space_errors,
    /// Writes refused with `NoSpace` (each batch of a refused group counts).
    no_space_writes_refused,
    /// Resume attempts made while out of space (automatic and `Db::resume`).
    no_space_resume_attempts,
    /// Times the database left the no-space state.
    no_space_resumes,
    /// Microseconds spent in the no-space state, summed over the resumes.
    no_space_micros,
    /// Calls of an event listener that panicked (caught; the other listeners and
    /// later events still ran; `crate::listener`).
    listener_panics,
}

/// Copies of the counters (a power of two): enough that the threads of a many-core
/// machine rarely share one, few enough that a snapshot stays cheap.
pub const SHARDS: usize = 32;

/// The engine's counters, sharded per thread (see the module docs).
#[derive(Debug)]
pub struct Statistics {
    shards: Box<[Counters; SHARDS]>,
}

impl Default for Statistics {
    fn default() -> Statistics {
        Statistics {
            shards: Box::new(std::array::from_fn(|_| Counters::default())),
        }
    }
}

/// Hands each thread its shard index, round-robin.
static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static SHARD: usize = NEXT_SHARD.fetch_add(1, Ordering::Relaxed) % SHARDS;
}

/// The calling thread's shard index, below [`SHARDS`].
#[inline]
fn shard_index() -> usize {
    SHARD.with(|s| *s)
}

impl Statistics {
    /// The calling thread's shard.
    #[inline]
    #[expect(
        clippy::indexing_slicing,
        reason = "the index is reduced modulo the length"
    )]
    pub fn local(&self) -> &Counters {
        &self.shards[shard_index() % SHARDS]
    }

    /// Adds `n` to a counter of a shard ([`Statistics::local`]).
    #[inline]
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// Compaction and flush figures of one level.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct LevelStats {
    /// Files in the level now.
    pub files: usize,
    /// Bytes of those files.
    pub size: u64,
    /// Compaction score (>= 1 means the level wants compaction).
    pub score: f64,
    /// Bytes read by compactions whose output went to this level (from the level above
    /// and from this one).
    pub read_bytes: u64,
    /// Bytes read from the *input* level `N` by compactions into this level.
    pub read_bytes_from_upper: u64,
    /// Bytes written into this level (flushes for L0, compactions otherwise).
    pub write_bytes: u64,
    /// Compactions (or flushes, for L0) that wrote into this level.
    pub count: u64,
    /// Of `files`, the virtual tables (tables whose entries are slices of parents,
    /// `Options::delayed_compaction`); their `size` is the bytes they reference.
    pub virtual_files: usize,
}

/// Where a database's table bytes are, from its current version: every physical table
/// once, and the parents of virtual tables with the bytes their slices reference.
/// Exact: computed from the version's metadata, not sampled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TableSpace {
    /// Every table file the version needs on disk (real level files and parents),
    /// each once: RocksDB's `rocksdb.live-sst-files-size`.
    pub live_table_bytes: u64,
    /// Distinct parents of virtual tables (tables in no level, kept for their slices).
    pub parents: u64,
    /// The parents' file sizes, summed.
    pub parent_bytes: u64,
    /// The bytes of the parents that live slices reference.
    pub referenced_bytes: u64,
    /// Parent bytes no live slice references, parent by parent: on disk, unreachable
    /// by any read, bounded by `DelayedCompaction::max_garbage_ratio`.
    pub garbage_bytes: u64,
}

/// Everything [`crate::Db::stats`] reports.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct DbStats {
    /// One entry per level, L0 first.
    pub levels: Vec<LevelStats>,
    /// Process-wide counters.
    pub counters: StatisticsSnapshot,
    /// Bytes held by the block cache now (by every database sharing it).
    pub block_cache_usage: u64,
    /// Table I/O per data path, indexed by path id (one entry, the database
    /// directory, without `Options::db_paths`).
    pub paths: Vec<PathStatsSnapshot>,
    /// Table bytes on disk, parents and their garbage.
    pub space: TableSpace,
    /// Named figures of the family's tree hooks, if it has any (for
    /// `TieringMode::HotRap`: RALT's gauges and counters, `ralt_*`).
    pub tree_hooks: Vec<(&'static str, u64)>,
}

impl DbStats {
    /// Bytes written to SSTables (flush + compaction).
    pub fn table_bytes_written(&self) -> u64 {
        self.counters.flush_bytes_written + self.counters.compaction_bytes_written
    }

    /// Every table byte read and written, over every data path: reads by gets, scans,
    /// compactions and anything else, plus writes by flushes and compactions (WAL,
    /// MANIFEST and OPTIONS bytes are not table bytes). Block-cache hits read nothing.
    /// Equals `io_bytes_read().total() + io_bytes_written().total()` exactly.
    pub fn total_io_bytes(&self) -> u64 {
        self.paths
            .iter()
            .map(|p| p.bytes_read + p.bytes_written)
            .sum()
    }

    /// Table bytes read over every data path, by purpose.
    pub fn io_bytes_read(&self) -> IoBytes {
        self.paths
            .iter()
            .fold(IoBytes::default(), |acc, p| acc.plus(p.read_by))
    }

    /// Table bytes written over every data path, by purpose.
    pub fn io_bytes_written(&self) -> IoBytes {
        self.paths
            .iter()
            .fold(IoBytes::default(), |acc, p| acc.plus(p.written_by))
    }

    /// Write amplification: bytes written to tables by flush and compaction, divided by
    /// bytes flushed (RocksDB's definition in its level table "Sum" row). 0 if nothing was
    /// flushed.
    pub fn write_amplification(&self) -> f64 {
        let flushed = self.counters.flush_bytes_written;
        if flushed == 0 {
            0.0
        } else {
            self.table_bytes_written() as f64 / flushed as f64
        }
    }

    /// Renders one line per data path: table reads and writes with their bytes, and
    /// the read latency (mean; p50 and p99 as bucket upper bounds).
    pub fn path_table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Path  Reads     Read(MB)  Writes    Write(MB)  Mean(us)  P50(us)  P99(us)  Dir"
        );
        let mb = |b: u64| b as f64 / (1u64 << 20) as f64;
        let us = |d: std::time::Duration| d.as_secs_f64() * 1e6;
        for (i, p) in self.paths.iter().enumerate() {
            let h = &p.read_latency;
            let _ = writeln!(
                s,
                "{:<4}{:>7}{:>13.1}{:>8}{:>13.1}{:>10.1}{:>9.1}{:>9.1}  {}",
                i,
                p.reads,
                mb(p.bytes_read),
                p.writes,
                mb(p.bytes_written),
                us(h.mean()),
                us(h.quantile(0.5)),
                us(h.quantile(0.99)),
                p.path.display()
            );
        }
        s
    }

    /// Renders RocksDB's level table.
    pub fn level_table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Level  Files  Virt  Size(MB)  Score  Read(GB)  Write(GB)  W-Amp  Comp(cnt)"
        );
        let _ = writeln!(s, "{}", "-".repeat(76));
        let gb = |b: u64| b as f64 / (1u64 << 30) as f64;
        let mut total = LevelStats::default();
        for (i, l) in self.levels.iter().enumerate() {
            let wamp = if l.read_bytes_from_upper > 0 {
                l.write_bytes as f64 / l.read_bytes_from_upper as f64
            } else {
                0.0
            };
            let _ = writeln!(
                s,
                "L{:<5}{:>6}{:>6}{:>10.1}{:>7.2}{:>10.3}{:>11.3}{:>7.2}{:>11}",
                i,
                l.files,
                l.virtual_files,
                l.size as f64 / (1u64 << 20) as f64,
                l.score,
                gb(l.read_bytes),
                gb(l.write_bytes),
                wamp,
                l.count
            );
            total.files += l.files;
            total.virtual_files += l.virtual_files;
            total.size += l.size;
            total.read_bytes += l.read_bytes;
            total.write_bytes += l.write_bytes;
            total.count += l.count;
        }
        let _ = writeln!(
            s,
            "Sum   {:>6}{:>6}{:>10.1}{:>7}{:>10.3}{:>11.3}{:>7.2}{:>11}",
            total.files,
            total.virtual_files,
            total.size as f64 / (1u64 << 20) as f64,
            "",
            gb(total.read_bytes),
            gb(total.write_bytes),
            self.write_amplification(),
            total.count
        );
        s
    }
}

impl fmt::Display for DbStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.level_table())?;
        for (k, v) in self.counters.pairs() {
            writeln!(f, "{k}: {v}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sharding loses nothing: adds from many threads sum exactly, and threads use
    /// different shards.
    #[test]
    fn sharded_counts_are_exact() {
        let stats = Statistics::default();
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        Statistics::add(&stats.local().gets, 1);
                    }
                    Statistics::add(&stats.local().block_bytes_read, 7);
                });
            }
        });
        let total = stats.snapshot();
        assert_eq!(total.gets, 80_000);
        assert_eq!(total.block_bytes_read, 56);
        let used = stats
            .shards
            .iter()
            .filter(|c| c.gets.load(Ordering::Relaxed) > 0)
            .count();
        assert!(used > 1, "8 threads shared one shard");
    }
}
