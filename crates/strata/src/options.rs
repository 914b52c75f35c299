//! Options: what the database does, each setting with its unit, default, scope and
//! mutability.
//!
//! # The options model
//! Configuration comes in three kinds, kept apart (docs/ARCHITECTURE.md §15):
//! - **Database options**, [`Options`]: memtable and file sizes, level targets,
//!   triggers, threads, recovery behaviour. Passed to [`crate::Db::open`]; the
//!   per-tree ones among them are the default column family's.
//! - **Per-level options**, [`LevelOptions`], held in the policy vector
//!   [`Options::levels`]: how the tables *written to* one level are built (block size,
//!   restart interval, compression, bloom bits). Entry `i` applies to level `i`; the
//!   last entry extends downward to every deeper level, so `vec![LevelOptions::default()]`
//!   configures all levels and `[none, none, lz4]` compresses L2 and below. Look a
//!   level up with [`Options::level`].
//! - **Per-family options**, [`CfOptions`]: the fields of [`Options`] that belong to
//!   one tree (memtable and file sizes, level targets and triggers, compaction
//!   priority, output partitioning, snapshot filter, per-level table options, merge
//!   operator). The default column family takes them from the `Options` passed to
//!   open; every other family from the `CfOptions` it was created or opened with
//!   ([`crate::Db::create_cf`], [`crate::Db::open_cf`]), which the `OPTIONS` file
//!   records and a later open without them gives back. The rest of
//!   `Options` (WAL, caches, threads, paths, recovery) is shared by every family.
//! - **Components**: objects rather than settings (the file system, a shared block
//!   cache). They are injected through [`crate::db::DbBuilder`], never stored in
//!   `Options`, and are not persisted.
//!
//! [`ReadOptions`] and [`WriteOptions`] configure one call.
//!
//! Every option's documentation ends with the same three facts: its **Default**,
//! whether it is **runtime-mutable** (none is today: options are fixed while the
//! database is open; change them by reopening) and its **format** effect (whether it
//! changes what is written to disk, and whether a reopen with another value can read
//! what was written before). Options of techniques still under evaluation are marked
//! **Experimental.** (their meaning or default may change).
//!
//! # Building options
//! Every option struct and enum is `#[non_exhaustive]`: new options arrive without
//! breaking callers. Outside this crate, build them from `Default` and the chainable
//! `with_*` setters:
//! ```
//! use strata::{Compression, LevelOptions, Options, WriteOptions};
//! let opts = Options::default()
//!     .with_write_buffer_size(8 << 20)
//!     .with_levels(vec![
//!         LevelOptions::default(),                                   // L0
//!         LevelOptions::default(),                                   // L1
//!         LevelOptions::default().with_compression(Compression::Lz4), // L2 and deeper
//!     ]);
//! assert_eq!(opts.level(5).compression, Compression::Lz4);
//! let every_level = Options::default().with_every_level(|l| l.with_block_size(16 << 10));
//! assert_eq!(every_level.level(0).block_size, 16 << 10);
//! let wo = WriteOptions::default().with_sync(true);
//! # let _ = wo;
//! ```
//!
//! # Validation and persistence
//! [`Options::validate`] (called by `open`) rejects impossible values with
//! [`crate::Error::InvalidArgument`] naming the field and its value. Each open records
//! its options in the `OPTIONS` file, and the next open checks the new options against
//! the database: see [`crate::options_file`].

use crate::compaction_filter::CompactionFilterFactory;
use crate::error::{Error, Result};
use crate::merge::MergeOperator;
use crate::snapshot::Snapshot;
use crate::tiering::Tiering;
use std::fmt::Display;
use std::sync::Arc;

/// The largest allowed [`Options::num_levels`]. Recovery replays the MANIFEST with this
/// many levels, so a tree deeper than the configured `num_levels` is reported as an
/// option error (not as MANIFEST corruption).
pub const MAX_LEVELS: usize = 32;

/// Per-block compression of SSTable data blocks.
///
/// Format: each block records its codec in its trailer, so tables with different
/// codecs mix freely and changing the codec between opens is always compatible.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Compression {
    /// Blocks are stored as is. Default.
    #[default]
    None,
    /// LZ4 block format (fast, modest ratio).
    Lz4,
    /// Zstandard at level 3 (slower, better ratio).
    Zstd,
}

/// Which file of a level a compaction picks first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CompactionPriority {
    /// RocksDB's default: the file whose overlapping bytes in the next level, divided by
    /// its own size, is smallest (least write amplification now). Default.
    #[default]
    MinOverlappingRatio,
    /// The file whose smallest sequence number is oldest (the data waiting longest).
    OldestSmallestSeqFirst,
}

/// What recovery does with a damaged write-ahead log.
///
/// In every mode, records must continue each other's sequence numbers across logs. A
/// WAL is not fsynced when writes move to the next one (only before a sync write, a
/// flush or a close), so a crash can keep a newer WAL's records and lose an older
/// one's unsynced tail; replay stops at such a gap (an error under
/// `AbsoluteConsistency`), so what is recovered is always a prefix of the writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum WalRecoveryMode {
    /// A torn or corrupt record at the *tail* of a log (an interrupted write) is
    /// dropped with the rest of that log, and replay goes on only if the next log
    /// continues the sequence; corruption followed by valid records is an error.
    /// Default.
    #[default]
    TolerateCorruptedTailRecords,
    /// Any damage in any log, or a gap in sequence numbers, is an error.
    AbsoluteConsistency,
    /// Replay stops at the first damaged record of any log; later data is discarded.
    PointInTime,
}

/// How compaction cuts its output into files. (Technique hook: aligned compaction.)
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum OutputPartitioning {
    /// Cut when a file reaches `target_file_size_base` (and at the user-key boundary
    /// following it).
    Fixed,
    /// Cut at the key boundaries of the overlapping files two levels down, within
    /// `[target / variance, target * variance]` (Kim et al., Algorithm 1). Default, with
    /// variance 2: it cut write amplification by 15.7% at fanout 10 and 16.8% at fanout
    /// 2 in `strata experiment aligned` (docs/experiments/aligned-compaction.md).
    Aligned {
        /// Allowed size variance around the target file size (> 1.0, finite).
        variance: f64,
    },
}

/// Delayed compaction (Pei et al., "dCompaction", 2017): a compaction that would read
/// fewer than `vct` real tables writes no data; it replaces its inputs by *virtual
/// tables* over them (ARCHITECTURE §7.1.1), and a later compaction that meets them
/// reads each real table once. Reads that meet a virtual table of `vsmt` slices or
/// more ask for it to be merged, and the bytes parents keep alive without a slice
/// reading them are bounded by `max_garbage_ratio`. The value of
/// [`Options::delayed_compaction`].
///
/// Build with [`DelayedCompaction::new`] (the paper's VCT 12 and VSMT 5, garbage at
/// most 10% of the table bytes) and the `with_` methods.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct DelayedCompaction {
    /// The virtual compaction threshold (the paper's VCT): a compaction is deferred
    /// while it would read fewer real tables than this, each virtual input counting
    /// its parents. So a virtual table has at most `vct - 1` slices.
    ///
    /// Default: 12. Range: >= 2.
    pub vct: usize,
    /// The virtual-table merge threshold (the paper's VSMT): a read that meets a
    /// virtual table of at least this many slices asks for it and its siblings to be
    /// merged into real tables, in the background. Above `vct - 1` no table reaches
    /// it, and reads never ask.
    ///
    /// Default: 5. Range: >= 2.
    pub vsmt: usize,
    /// The most garbage (parent bytes no live slice references) the tree keeps, as a
    /// fraction of its live table bytes; above it the policy rewrites the virtual
    /// table holding the least-referenced parent before any size-triggered work.
    ///
    /// Default: 0.1. Range: (0, 1].
    pub max_garbage_ratio: f64,
}

impl DelayedCompaction {
    /// The paper's setting: VCT 12, VSMT 5; garbage at most 10% of the table bytes.
    pub fn new() -> DelayedCompaction {
        DelayedCompaction {
            vct: 12,
            vsmt: 5,
            max_garbage_ratio: 0.1,
        }
    }

    /// This setting with the virtual compaction threshold `vct`.
    pub fn with_vct(self, vct: usize) -> DelayedCompaction {
        DelayedCompaction { vct, ..self }
    }

    /// This setting with the virtual-table merge threshold `vsmt`.
    pub fn with_vsmt(self, vsmt: usize) -> DelayedCompaction {
        DelayedCompaction { vsmt, ..self }
    }

    /// This setting with the garbage bound `max_garbage_ratio`.
    pub fn with_max_garbage_ratio(self, max_garbage_ratio: f64) -> DelayedCompaction {
        DelayedCompaction {
            max_garbage_ratio,
            ..self
        }
    }
}

impl Default for DelayedCompaction {
    fn default() -> Self {
        DelayedCompaction::new()
    }
}

/// Query-driven compaction: a forward scan writes the entries it merged from the
/// deeper levels back into the tree as the range's tables in the deepest level holding
/// it, deleting the files they came from (ARCHITECTURE §6.12). The value of
/// [`Options::query_compaction`].
///
/// Build with [`QueryCompaction::new`] and the `with_` methods. The defaults are
/// provisional: they are to be set from the experiment
/// (docs/experiments/query-driven-compaction.md).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct QueryCompaction {
    /// The fraction of qualifying scans that write back (the paper's
    /// QueryDrivenCompactionSelectivity), chosen deterministically: every
    /// `1 / selectivity`-th scan of the database.
    ///
    /// Default: 1.0. Range: (0, 1].
    pub selectivity: f64,
    /// The shallowest level whose entries a scan writes back; the levels above it
    /// (and the memtables) stay where they are.
    ///
    /// Default: 2. Range: 1..`num_levels`.
    pub start_level: usize,
    /// The fewest levels from `start_level` on, above the deepest level holding data
    /// in the scanned range, that must hold data in it too.
    ///
    /// Default: 1. Range: >= 1.
    pub min_levels: usize,
    /// The fewest bytes of merged entries a write-back must hold.
    ///
    /// Default: 0.
    pub min_bytes: u64,
    /// The profit rule: the bytes of files above the deepest level that overlap the
    /// range must be at least this fraction of all the overlapping files' bytes, so
    /// that a scan of a range written back moments ago does not rewrite it.
    ///
    /// Default: 0.1. Range: [0, 1].
    pub profit: f64,
    /// The most bytes of merged entries a scan buffers; a longer scan writes back the
    /// range up to where its buffer filled.
    ///
    /// Default: 64 MiB. Range: >= 1.
    pub max_buffer_bytes: u64,
    /// Write back on a background thread instead of the scan's: a finished scan
    /// hands its buffer to a queue of at most four write-backs and returns; when the
    /// queue is full the write-back is dropped (counted), so a scan never waits.
    ///
    /// Default: false.
    pub background: bool,
    /// The least fraction of the merged entries that must be older versions of a key
    /// (which the write-back may drop). A range of one version per key gains nothing
    /// on later scans from being written back; it only moves compaction work.
    ///
    /// Default: 0.05 (docs/experiments/query-driven-compaction.md: never worse than
    /// 0 there, and it removes the sequential workload's loss with unique keys); 0
    /// turns the rule off. Range: [0, 1].
    pub min_obsolete: f64,
}

impl QueryCompaction {
    /// Every scan from L2 down with at least one level above its deepest level
    /// writes back, if that level's files hold at least 10% of the range's bytes and
    /// at least 5% of the merged entries are older versions.
    pub fn new() -> QueryCompaction {
        QueryCompaction {
            selectivity: 1.0,
            start_level: 2,
            min_levels: 1,
            min_bytes: 0,
            profit: 0.1,
            max_buffer_bytes: 64 << 20,
            background: false,
            min_obsolete: 0.05,
        }
    }

    /// This setting with `selectivity`.
    pub fn with_selectivity(self, selectivity: f64) -> QueryCompaction {
        QueryCompaction {
            selectivity,
            ..self
        }
    }

    /// This setting with `start_level`.
    pub fn with_start_level(self, start_level: usize) -> QueryCompaction {
        QueryCompaction {
            start_level,
            ..self
        }
    }

    /// This setting with `min_levels`.
    pub fn with_min_levels(self, min_levels: usize) -> QueryCompaction {
        QueryCompaction { min_levels, ..self }
    }

    /// This setting with `min_bytes`.
    pub fn with_min_bytes(self, min_bytes: u64) -> QueryCompaction {
        QueryCompaction { min_bytes, ..self }
    }

    /// This setting with `profit`.
    pub fn with_profit(self, profit: f64) -> QueryCompaction {
        QueryCompaction { profit, ..self }
    }

    /// This setting with `background`.
    pub fn with_background(self, background: bool) -> QueryCompaction {
        QueryCompaction { background, ..self }
    }

    /// This setting with `min_obsolete`.
    pub fn with_min_obsolete(self, min_obsolete: f64) -> QueryCompaction {
        QueryCompaction {
            min_obsolete,
            ..self
        }
    }

    /// This setting with `max_buffer_bytes`.
    pub fn with_max_buffer_bytes(self, max_buffer_bytes: u64) -> QueryCompaction {
        QueryCompaction {
            max_buffer_bytes,
            ..self
        }
    }
}

impl Default for QueryCompaction {
    fn default() -> Self {
        QueryCompaction::new()
    }
}

/// One directory tables may be placed in: an entry of [`Options::db_paths`].
///
/// Build it with [`DbPath::new`]. Format: the entry's index is the `path_id` every
/// table written there records in the MANIFEST, so an entry may be moved (its files
/// with it) but not reordered while it holds tables.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DbPath {
    /// The directory. Absolute or relative to the working directory; UTF-8 with no
    /// line break and no blank at either end (it is recorded in the `OPTIONS` text).
    pub path: std::path::PathBuf,
    /// Bytes of tables this path is meant to hold. Placement reads it as a budget for
    /// whole levels (see [`Options::db_paths`]); it is not enforced against the disk,
    /// and the last path's target is ignored (it takes whatever the others do not).
    pub target_size: u64,
}

impl DbPath {
    /// The path `path` with a budget of `target_size` bytes.
    pub fn new(path: impl Into<std::path::PathBuf>, target_size: u64) -> DbPath {
        DbPath {
            path: path.into(),
            target_size,
        }
    }
}

/// The most entries [`Options::db_paths`] may have.
pub const MAX_DB_PATHS: usize = 16;

/// How the tables written to one level are built: one entry of [`Options::levels`].
///
/// Scope: the level(s) the entry applies to (see [`Options::levels`]). Runtime-mutable:
/// no. Format: these settings shape only the tables written from now on; every table
/// is self-describing, so a reopen with other values reads older tables unchanged.
/// (Planned additions: storage tier and column-group layout.)
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct LevelOptions {
    /// Uncompressed size at which a data block is cut, bytes. Larger: a smaller index
    /// and better compression; more bytes read and decoded per point lookup.
    ///
    /// Default: 4096. Range: 64..=16 MiB. Runtime-mutable: no. Format: new tables only.
    pub block_size: usize,
    /// Keys between restart points in a data block. Larger: better key prefix
    /// compression; a longer linear scan inside a block on each seek.
    ///
    /// Default: 16. Range: >= 1. Runtime-mutable: no. Format: new tables only.
    pub block_restart_interval: usize,
    /// Compression of data blocks (filter, index and properties blocks are never
    /// compressed). A block is kept compressed only if that saves at least 12.5%.
    ///
    /// Default: [`Compression::None`]. Runtime-mutable: no. Format: per block,
    /// self-describing; changing it is compatible.
    pub compression: Compression,
    /// Bloom filter bits per key; 0 writes no filter. 10 gives about 1% false
    /// positives; more bits: fewer wasted block reads, more memory and disk.
    ///
    /// Default: 10. Range: 0..=64. Runtime-mutable: no. Format: new tables only (a table
    /// without a filter is read without one).
    pub bloom_bits_per_key: u32,
}

impl LevelOptions {
    /// The defaults, usable in constant context.
    pub const DEFAULT: LevelOptions = LevelOptions {
        block_size: 4096,
        block_restart_interval: 16,
        compression: Compression::None,
        bloom_bits_per_key: 10,
    };

    /// Rejects impossible values; `entry` names this entry in the message
    /// (`levels[2]`).
    fn validate(&self, entry: &str) -> Result<()> {
        check(
            (64..=(1 << 24)).contains(&self.block_size),
            format_args!("{entry}.block_size"),
            self.block_size,
            "must be in 64..=16MiB",
        )?;
        check(
            self.block_restart_interval >= 1,
            format_args!("{entry}.block_restart_interval"),
            self.block_restart_interval,
            "must be >= 1",
        )?;
        check(
            self.bloom_bits_per_key <= 64,
            format_args!("{entry}.bloom_bits_per_key"),
            self.bloom_bits_per_key,
            "must be <= 64",
        )
    }
}

impl Default for LevelOptions {
    fn default() -> Self {
        LevelOptions::DEFAULT
    }
}

/// What [`Options::level`] returns if `levels` is empty (which `validate` rejects).
static DEFAULT_LEVEL: LevelOptions = LevelOptions::DEFAULT;

/// Options of an open database. See the module docs for the options model.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Options {
    /// Create the database if it does not exist.
    ///
    /// Default: true. Runtime-mutable: no (checked at open). Format: none.
    pub create_if_missing: bool,
    /// Fail if the database already exists.
    ///
    /// Default: false. Runtime-mutable: no (checked at open). Format: none.
    pub error_if_exists: bool,
    /// Bytes a memtable may hold before it is switched for a new one and flushed.
    /// Larger: fewer, larger L0 files and less write amplification; more memory and a
    /// longer WAL replay.
    ///
    /// Default: 64 MiB. Range: >= 4096. Runtime-mutable: no. Format: none.
    pub write_buffer_size: usize,
    /// Memtables (active + immutable) allowed before writes stop to wait for a flush.
    /// More: absorbs write bursts; more memory.
    ///
    /// Default: 2. Range: >= 2. Runtime-mutable: no. Format: none.
    pub max_write_buffer_number: usize,
    /// Target size of a compaction output file, bytes. Larger: fewer files and less
    /// metadata; coarser compactions.
    ///
    /// Default: 64 MiB. Range: >= 1024. Runtime-mutable: no. Format: none.
    pub target_file_size_base: u64,
    /// Target size of L1, bytes; deeper targets grow by
    /// `max_bytes_for_level_multiplier`.
    ///
    /// Default: 256 MiB. Range: >= 1024. Runtime-mutable: no. Format: none.
    pub max_bytes_for_level_base: u64,
    /// Each level's target is this multiple of the previous level's (the fanout).
    /// Larger: fewer levels, more write amplification per level.
    ///
    /// Default: 10. Range: > 1. Runtime-mutable: no. Format: none.
    pub max_bytes_for_level_multiplier: f64,
    /// Per-level factors on the fanout, as RocksDB's option of this name: the target
    /// of L*i* (*i* >= 2) is L*i−1*'s × `max_bytes_for_level_multiplier` ×
    /// `max_bytes_for_level_multiplier_additional[i − 1]`, an entry past the end
    /// counting as 1. So entry *k* (*k* >= 1) stretches L*k+1* and, through it, every
    /// deeper target; entry 0 is never read (L1's target is the base), as in RocksDB. Used to size one level apart from the geometric series (a fast tier's
    /// last level, say); non-integer factors are allowed (RocksDB's are integers).
    ///
    /// Default: empty (every factor 1). Range: at most `num_levels` entries, each
    /// finite and > 0. Runtime-mutable: no. Format: none (the OPTIONS file records
    /// it only when set).
    pub max_bytes_for_level_multiplier_additional: Vec<f64>,
    /// Number of levels (L0..L{n-1}).
    ///
    /// Default: 7. Range: 3..=[`MAX_LEVELS`]. Runtime-mutable: no. Format: the MANIFEST
    /// places every table at a level, so a database cannot be reopened with fewer
    /// levels than its deepest non-empty level + 1 (open fails with `InvalidArgument`;
    /// see docs/ARCHITECTURE.md §15.3). Growing it is always allowed.
    pub num_levels: usize,
    /// L0 file count that triggers an L0→L1 compaction.
    ///
    /// Default: 4. Range: >= 1. Runtime-mutable: no. Format: none.
    pub level0_file_num_compaction_trigger: usize,
    /// L0 file count at which each write group is delayed by 1 ms.
    ///
    /// Default: 20. Range: >= `level0_file_num_compaction_trigger`. Runtime-mutable: no.
    /// Format: none.
    pub level0_slowdown_writes_trigger: usize,
    /// L0 file count at which writes stop until compaction catches up.
    ///
    /// Default: 36. Range: >= `level0_slowdown_writes_trigger`. Runtime-mutable: no.
    /// Format: none.
    pub level0_stop_writes_trigger: usize,
    /// Estimated bytes of pending compaction above which writes are delayed, bytes;
    /// 0 disables.
    ///
    /// Default: 64 GiB. Runtime-mutable: no. Format: none.
    pub soft_pending_compaction_bytes_limit: u64,
    /// Estimated bytes of pending compaction above which writes stop, bytes; 0
    /// disables.
    ///
    /// Default: 256 GiB. Runtime-mutable: no. Format: none.
    pub hard_pending_compaction_bytes_limit: u64,
    /// Capacity of the block cache the database creates, bytes; 0 disables the cache.
    /// Ignored when a shared cache is injected with
    /// [`crate::db::DbBuilder::block_cache`].
    ///
    /// Default: 32 MiB. Runtime-mutable: no. Format: none.
    pub block_cache_capacity: usize,
    /// One memory budget for the memtables of every column family and the block
    /// cache, bytes; 0: none (each family's memtables are bounded by
    /// `write_buffer_size × max_write_buffer_number`, the cache by
    /// `block_cache_capacity`). With a budget the database makes a
    /// [`crate::MemoryBudget`] of this size (several databases share one through
    /// [`crate::DbBuilder::memory_budget`], which overrides this field): the block
    /// cache is the budget's, its capacity the budget less the memtables (never below
    /// 1/8 of it), and `block_cache_capacity` is ignored; when memtables pass half the
    /// budget the largest active one is flushed, past 3/4 writes slow, past 7/8 they
    /// stop until a flush frees memory (docs/ARCHITECTURE.md §4.4). Index and filter
    /// blocks are charged only when cached ([`Options::cache_index_and_filter_blocks`]).
    ///
    /// Default: 0. Range: 0, or at least [`crate::MIN_MEMORY_BUDGET`] (128 KiB).
    /// Runtime-mutable: no. Format: none.
    pub memory_budget: usize,
    /// Keep each open table's index block and bloom filter in the block cache, charged
    /// to its capacity and evictable like data blocks, instead of in the table for as
    /// long as it is open (RocksDB's `cache_index_and_filter_blocks`; MyRocks turns it
    /// on by default). True: memory for table metadata is bounded by the block cache,
    /// at the price of reading an evicted index block or filter from the file again
    /// (a device read with [`Options::use_direct_reads`]); false: metadata memory grows
    /// with the open tables and a lookup never reads it from the file. Index blocks and
    /// filters get no priority over data blocks, and L0's are not pinned (RocksDB's
    /// `..._with_high_priority` and `pin_l0_filter_and_index_blocks_in_cache` are not
    /// built). Without a block cache the option has no effect. Open reads and checks
    /// both blocks, as without the option, then caches them.
    ///
    /// Default: false. Runtime-mutable: no. Format: none.
    pub cache_index_and_filter_blocks: bool,
    /// Table files kept open (table cache entries). More: fewer re-opens (each reads
    /// a footer, index and filter); more file handles and memory. Up to half of them
    /// are pinned by their files for the files' lives, so that a lookup in them skips
    /// the cache (ARCHITECTURE §5.5).
    ///
    /// Default: 1000. Range: >= 16. Runtime-mutable: no. Format: none.
    pub max_open_files: usize,
    /// Background threads for flushes and compactions (one of them only ever flushes,
    /// so a flush never waits behind a compaction).
    ///
    /// Default: 2. Range: >= 2. Runtime-mutable: no. Format: none.
    pub max_background_jobs: usize,
    /// Which file of a level a compaction picks first.
    ///
    /// Default: [`CompactionPriority::MinOverlappingRatio`]. Runtime-mutable: no.
    /// Format: none.
    pub compaction_priority: CompactionPriority,
    /// How compaction output is cut into files.
    ///
    /// Experimental. (Aligned compaction, Kim et al.; the meaning and default may
    /// change as the technique is evaluated.)
    ///
    /// Default: `Aligned { variance: 2.0 }`. Range: variance > 1 and finite.
    /// Runtime-mutable: no. Format: none (only where files are cut).
    pub output_partitioning: OutputPartitioning,
    /// Skip tables and memtables whose smallest sequence number is newer than the
    /// read's snapshot (they cannot hold a visible version).
    ///
    /// Experimental. (Snapshot filters; the meaning and default may change as the
    /// technique is evaluated.)
    ///
    /// Default: true. Runtime-mutable: no. Format: none (uses the `smallest_seqno`
    /// every table's metadata already records).
    pub snapshot_filter: bool,
    /// Defer small compactions as virtual tables ([`DelayedCompaction`]); `None` is off.
    ///
    /// Experimental. (Delayed compaction; the meaning and default may change as the
    /// technique is evaluated.)
    ///
    /// Default: `None`. Range: `vct >= 2`, `vsmt >= 2`, `max_garbage_ratio` in
    /// (0, 1]. Runtime-mutable: no. Format: OPTIONS key `delayed_compaction` (`off` or
    /// `vct:<n>,vsmt:<n>,garbage:<ratio>`); a virtual table in the MANIFEST is
    /// edit format version 3 (a database that never made one stays v1/v2). A database
    /// reopened with it off still reads, compacts and keeps its virtual tables.
    pub delayed_compaction: Option<DelayedCompaction>,
    /// Scans write back what they merged ([`QueryCompaction`]); `None` is off.
    ///
    /// Experimental. (Query-driven compaction; the meaning and defaults may change as
    /// the technique is evaluated.)
    ///
    /// Default: `None`. Range: see [`QueryCompaction`]'s fields. Runtime-mutable: no.
    /// Format: OPTIONS key `query_compaction` (`off` or
    /// `selectivity:<f>,start_level:<n>,min_levels:<n>,min_bytes:<n>,profit:<f>,buffer:<n>,background:<bool>,min_obsolete:<f>`);
    /// a write-back writes ordinary tables, so a database reopened with it off reads
    /// the same.
    pub query_compaction: Option<QueryCompaction>,
    /// Two storage tiers for the tree ([`Tiering`]): the levels that fit in a fast
    /// budget on a fast data path, the rest on a slow one; `None` places levels by
    /// `db_paths` alone (RocksDB's rule).
    ///
    /// Experimental (the first part of HotRAP: tiers and RocksDB-fat sizing).
    ///
    /// Default: `None`. Range: see [`Tiering`]'s fields; needs two `db_paths`.
    /// Runtime-mutable: no. Format: OPTIONS key `tiering`, written only when set;
    /// turning it on or off changes where new tables go, never a format, so a
    /// database opens either way.
    pub tiering: Option<Tiering>,
    /// Verify every block checksum of a table when it is opened (block checksums are
    /// always verified when a block is read). Slower opens; damage found earlier.
    ///
    /// Default: false. Runtime-mutable: no. Format: none.
    pub paranoid_checks: bool,
    /// What recovery does with a damaged write-ahead log.
    ///
    /// Default: [`WalRecoveryMode::TolerateCorruptedTailRecords`]. Runtime-mutable: no
    /// (used at open). Format: none.
    pub wal_recovery_mode: WalRecoveryMode,
    /// MANIFEST size, bytes, above which the next version change starts a new MANIFEST
    /// holding one snapshot of the version (bounds recovery time).
    ///
    /// Default: 64 MiB. Runtime-mutable: no. Format: none.
    pub max_manifest_file_size: u64,
    /// Pipelined writes: a write group gives up the WAL as soon as its record is
    /// appended, so the next group appends while this one inserts into the memtable,
    /// and several groups insert at once. Reads still see whole groups in sequence
    /// order: a group becomes visible only after every earlier one (see
    /// `docs/ARCHITECTURE.md` §4.1). Off: one group at a time appends,
    /// inserts and publishes, as in LevelDB.
    ///
    /// RocksDB splits this into `enable_pipelined_write` (WAL of group N+1 beside the
    /// memtable insert of group N) and `allow_concurrent_memtable_write` (the members
    /// of one group insert in parallel); Strata's form lets whole groups insert in
    /// parallel, which is what two writers need: their groups rarely have more than one
    /// member.
    ///
    /// Default: true. Runtime-mutable: no. Format: none.
    pub enable_pipelined_write: bool,
    /// Read table files with direct I/O (`O_DIRECT` on Linux), bypassing the
    /// operating system's page cache: user reads (gets, iterators) and compaction
    /// reads. The block cache ([`Options::block_cache_capacity`], or a shared one) is
    /// then the only cache of table data, so size it for the working set; the table
    /// cache still keeps each open table's index, filter and properties in memory
    /// (unless [`Options::cache_index_and_filter_blocks`] puts the first two in the
    /// block cache).
    /// True: no double caching (page cache + block cache) and memory the OS cannot
    /// reclaim from elsewhere; false: the page cache absorbs block-cache misses and
    /// reads ahead for scans and compactions (Strata does no compaction readahead of
    /// its own, see docs/ARCHITECTURE.md §14).
    ///
    /// Reads are rounded out to the file's direct-I/O alignment (`statx`
    /// `STATX_DIOALIGN`, else 4096 bytes). WAL and MANIFEST reads stay buffered. The
    /// file system must support `O_DIRECT` in the database directory: open probes it
    /// and fails with [`crate::Error::InvalidArgument`] naming the path and this option
    /// otherwise (never a silent fallback). Linux only; elsewhere open fails the same
    /// way. An injected [`crate::env::FileSystem`] receives it as
    /// [`crate::env::FileOptions::direct`].
    ///
    /// Default: false. Runtime-mutable: no. Format: none.
    pub use_direct_reads: bool,
    /// Write the table files of flushes and compactions with direct I/O (`O_DIRECT`),
    /// bypassing the page cache: blocks go from an aligned 1 MiB write buffer to the
    /// device; the last partial block is written padded and the file cut back to its
    /// length (`ftruncate`) before the fsync. True: flushes and compactions do not
    /// evict the page cache's other data; false: writes return as soon as the page
    /// cache has them (the fsync at the end pays). WAL, MANIFEST, `CURRENT` and
    /// `OPTIONS` stay buffered, as in RocksDB. The tables written are byte for byte the
    /// ones a buffered write produces.
    ///
    /// Like [`Options::use_direct_reads`], open probes the directory and fails with
    /// [`crate::Error::InvalidArgument`] naming the path and this option if the file
    /// system refuses `O_DIRECT`.
    ///
    /// Default: false. Runtime-mutable: no. Format: none.
    pub use_direct_io_for_flush_and_compaction: bool,
    /// The directories table files are placed in, as RocksDB's `db_paths`: entry `i`
    /// is data path `i`. Empty: every table in the database directory (one path, id
    /// 0). Otherwise tables live only in these directories (the database directory
    /// may be one of them) and the WALs, MANIFEST, `CURRENT` and `OPTIONS` stay in the
    /// database directory.
    ///
    /// Placement (RocksDB's rule, `compaction::ByLevel`, unless [`Options::tiering`]
    /// names a fast and a slow path): whole levels fill the paths in order. L0 is counted as large as L1; a level goes to the
    /// first path whose `target_size` still holds it after the levels above it there;
    /// the last path takes every level that fits nowhere else. Flushes write L0's path;
    /// a compaction writes its output level's, and moves a file down without rewriting
    /// it only within one path. Statistics per path: [`crate::DbStats::paths`].
    ///
    /// Open creates missing directories for a new database; for an existing one every
    /// directory must exist ([`crate::Error::InvalidArgument`] naming it otherwise),
    /// and a table the MANIFEST names must be in its path's directory. Each directory
    /// belongs to one database: open deletes table files there that its MANIFEST does
    /// not name.
    ///
    /// Default: empty. Range: at most [`MAX_DB_PATHS`] entries, distinct directories.
    /// Runtime-mutable: no. Format: each table records its path's index; a reopen may
    /// move a directory (with its files) or append paths, not reorder or drop one that
    /// holds tables.
    pub db_paths: Vec<DbPath>,
    /// Per-level table options, a policy vector: entry `i` applies to tables written
    /// to level `i`, and the last entry to every deeper level too. Flushes write L0;
    /// a compaction writes its output level.
    ///
    /// Default: `vec![LevelOptions::default()]` (the same options for every level).
    /// Range: 1..=`num_levels` entries, each valid. Runtime-mutable: no. Format: see
    /// [`LevelOptions`] (new tables only; always compatible).
    pub levels: Vec<LevelOptions>,

    /// Resolves merge operands ([`crate::WriteBatch::merge`]) on reads and folds
    /// them in flushes and compactions. Without one, a batch holding a merge is
    /// refused (`InvalidArgument`) and reading a key that has operands fails, never a
    /// silent plain value.
    ///
    /// Default: `None`. Runtime-mutable: no. Format: the `OPTIONS` file records the
    /// operator's [`MergeOperator::name`]; reopening a database with an operator of
    /// another name is `InvalidArgument` (the built-ins decode back to themselves),
    /// and reopening it without one gives it the recorded one (an application's
    /// operator by a stand-in that refuses its operands, naming it).
    pub merge_operator: Option<Arc<dyn MergeOperator>>,

    /// Makes the filter each compaction job runs on the values it rewrites: keep,
    /// remove or change them ([`crate::compaction_filter`], with its snapshot rule).
    ///
    /// Default: `None`. Runtime-mutable: no. Format: not persisted (a filter is
    /// code: a database reopened without it keeps everything from then on).
    pub compaction_filter_factory: Option<Arc<dyn CompactionFilterFactory>>,

    /// Rewrites any table (L1 and below) older than this many seconds in place, so
    /// that every value passes through the compaction filter at least this often,
    /// even in a level no write reaches (RocksDB's `periodic_compaction_seconds`).
    /// A table's age is its `creation_time` in the MANIFEST; a table recorded without
    /// one (written before the field existed) is due at once. The rewrite counts as
    /// any compaction (`Reason::Periodic`).
    ///
    /// Default: 0 (off). Runtime-mutable: no. Format: none (the `OPTIONS` file records
    /// it when set).
    pub periodic_compaction_seconds: u64,

    /// Every value of the family carries a deadline ([`crate::Db::put_with_ttl`],
    /// [`crate::WriteBatch::put_with_ttl`]; a plain `put` never expires): reads stop
    /// seeing a value once its deadline has passed, and compactions remove it (a
    /// built-in compaction filter, in front of [`Self::compaction_filter_factory`];
    /// set [`Self::periodic_compaction_seconds`] so that quiet levels are reached too).
    /// Such a family has no merges: a merge operator is refused.
    ///
    /// Default: false. Runtime-mutable: no; chosen when the family (for the default
    /// family, the database) is created. Format: each value ends in an 8-byte
    /// deadline (`expiry`'s layout, docs/ARCHITECTURE.md §7.9), and the family's
    /// MANIFEST records hold the choice (the `OPTIONS` file shows it when set).
    /// Reopening with `true` a family created without it is `InvalidArgument`;
    /// reopening with `false` one created with it keeps it on.
    pub expiring_values: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            create_if_missing: true,
            error_if_exists: false,
            write_buffer_size: 64 << 20,
            max_write_buffer_number: 2,
            target_file_size_base: 64 << 20,
            max_bytes_for_level_base: 256 << 20,
            max_bytes_for_level_multiplier: 10.0,
            max_bytes_for_level_multiplier_additional: Vec::new(),
            num_levels: 7,
            level0_file_num_compaction_trigger: 4,
            level0_slowdown_writes_trigger: 20,
            level0_stop_writes_trigger: 36,
            soft_pending_compaction_bytes_limit: 64 << 30,
            hard_pending_compaction_bytes_limit: 256 << 30,
            block_cache_capacity: 32 << 20,
            memory_budget: 0,
            cache_index_and_filter_blocks: false,
            max_open_files: 1000,
            max_background_jobs: 2,
            compaction_priority: CompactionPriority::MinOverlappingRatio,
            output_partitioning: OutputPartitioning::Aligned { variance: 2.0 },
            snapshot_filter: true,
            delayed_compaction: None,
            query_compaction: None,
            tiering: None,
            paranoid_checks: false,
            wal_recovery_mode: WalRecoveryMode::TolerateCorruptedTailRecords,
            max_manifest_file_size: 64 << 20,
            enable_pipelined_write: true,
            use_direct_reads: false,
            use_direct_io_for_flush_and_compaction: false,
            db_paths: Vec::new(),
            levels: vec![LevelOptions::DEFAULT],
            merge_operator: None,
            compaction_filter_factory: None,
            periodic_compaction_seconds: 0,
            expiring_values: false,
        }
    }
}

/// Chainable setters, one per field: `with_<field>(value)` sets `<field>`.
macro_rules! setters {
    ($ty:ident { $($setter:ident => $field:ident: $t:ty,)* }) => {
        impl $ty {
            $(
                #[doc = concat!("Sets [`", stringify!($ty), "::", stringify!($field),
                                "`] (chainable).")]
                #[must_use]
                pub fn $setter(mut self, value: $t) -> Self {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}

setters!(Options {
    with_create_if_missing => create_if_missing: bool,
    with_error_if_exists => error_if_exists: bool,
    with_block_cache_capacity => block_cache_capacity: usize,
    with_memory_budget => memory_budget: usize,
    with_cache_index_and_filter_blocks => cache_index_and_filter_blocks: bool,
    with_max_open_files => max_open_files: usize,
    with_max_background_jobs => max_background_jobs: usize,
    with_paranoid_checks => paranoid_checks: bool,
    with_wal_recovery_mode => wal_recovery_mode: WalRecoveryMode,
    with_max_manifest_file_size => max_manifest_file_size: u64,
    with_enable_pipelined_write => enable_pipelined_write: bool,
    with_use_direct_reads => use_direct_reads: bool,
    with_use_direct_io_for_flush_and_compaction => use_direct_io_for_flush_and_compaction: bool,
    with_db_paths => db_paths: Vec<DbPath>,
});

setters!(LevelOptions {
    with_block_size => block_size: usize,
    with_block_restart_interval => block_restart_interval: usize,
    with_compression => compression: Compression,
    with_bloom_bits_per_key => bloom_bits_per_key: u32,
});

/// Declares [`CfOptions`] from the list of per-tree fields of [`Options`], once: the
/// struct, its setters, and the conversions both ways, so a field added to the list
/// is a family option everywhere.
macro_rules! cf_options {
    ($($setter:ident => $field:ident: $t:ty,)*) => {
        /// The options of one column family: the per-tree fields of [`Options`], each
        /// documented there. Build from [`CfOptions::default`] (the defaults of
        /// [`Options`]) or from a database's options with [`Options::cf_options`], and
        /// the chainable setters.
        ///
        /// Format: persisted per family in the `OPTIONS` file (a `[CFOptions]`
        /// section each, `options_file`); a family reopened without its `CfOptions`
        /// takes the ones its section records (docs/ARCHITECTURE.md §15, §17).
        #[derive(Clone, Debug, PartialEq)]
        #[non_exhaustive]
        pub struct CfOptions {
            $(
                #[doc = concat!("See [`Options::", stringify!($field), "`].")]
                pub $field: $t,
            )*
        }

        setters!(CfOptions { $($setter => $field: $t,)* });
        setters!(Options { $($setter => $field: $t,)* });

        impl CfOptions {
            /// The names of the per-tree fields, as [`Options`] names them (what a
            /// family's `OPTIONS` section may hold).
            pub(crate) const FIELD_NAMES: &'static [&'static str] = &[$(stringify!($field),)*];
        }

        impl Options {
            /// The per-tree fields of these options, as a column family's options.
            pub fn cf_options(&self) -> CfOptions {
                CfOptions { $($field: self.$field.clone(),)* }
            }

            /// These options with the per-tree fields of `cf`: the whole configuration
            /// a family runs with.
            pub(crate) fn with_cf_options(mut self, cf: &CfOptions) -> Options {
                $(self.$field = cf.$field.clone();)*
                self
            }
        }
    };
}

cf_options! {
    with_write_buffer_size => write_buffer_size: usize,
    with_max_write_buffer_number => max_write_buffer_number: usize,
    with_target_file_size_base => target_file_size_base: u64,
    with_max_bytes_for_level_base => max_bytes_for_level_base: u64,
    with_max_bytes_for_level_multiplier => max_bytes_for_level_multiplier: f64,
    with_max_bytes_for_level_multiplier_additional => max_bytes_for_level_multiplier_additional: Vec<f64>,
    with_num_levels => num_levels: usize,
    with_level0_file_num_compaction_trigger => level0_file_num_compaction_trigger: usize,
    with_level0_slowdown_writes_trigger => level0_slowdown_writes_trigger: usize,
    with_level0_stop_writes_trigger => level0_stop_writes_trigger: usize,
    with_soft_pending_compaction_bytes_limit => soft_pending_compaction_bytes_limit: u64,
    with_hard_pending_compaction_bytes_limit => hard_pending_compaction_bytes_limit: u64,
    with_compaction_priority => compaction_priority: CompactionPriority,
    with_output_partitioning => output_partitioning: OutputPartitioning,
    with_snapshot_filter => snapshot_filter: bool,
    with_delayed_compaction => delayed_compaction: Option<DelayedCompaction>,
    with_query_compaction => query_compaction: Option<QueryCompaction>,
    with_tiering => tiering: Option<Tiering>,
    with_levels => levels: Vec<LevelOptions>,
    with_merge_operator => merge_operator: Option<Arc<dyn MergeOperator>>,
    with_compaction_filter_factory => compaction_filter_factory: Option<Arc<dyn CompactionFilterFactory>>,
    with_periodic_compaction_seconds => periodic_compaction_seconds: u64,
    with_expiring_values => expiring_values: bool,
}

impl Default for CfOptions {
    fn default() -> Self {
        Options::default().cf_options()
    }
}

impl CfOptions {
    /// Applies `f` to every entry of [`CfOptions::levels`] (chainable), as
    /// [`Options::with_every_level`].
    #[must_use]
    pub fn with_every_level(mut self, f: impl FnMut(LevelOptions) -> LevelOptions) -> Self {
        self.levels = self.levels.into_iter().map(f).collect();
        self
    }
}

/// `Ok` iff `cond`; otherwise `InvalidArgument` as ``field=`value` rule``.
fn check(cond: bool, field: impl Display, value: impl Display, rule: &str) -> Result<()> {
    if cond {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!("{field}=`{value}` {rule}")))
    }
}

impl Options {
    /// The table options of level `level`: `levels[level]`, or the last entry for a
    /// level beyond the vector. The borrow lives as long as `self`.
    ///
    /// An empty `levels` (which [`Options::validate`] rejects) yields the defaults.
    pub fn level(&self, level: usize) -> &LevelOptions {
        self.levels
            .get(level)
            .or(self.levels.last())
            .unwrap_or(&DEFAULT_LEVEL)
    }

    /// Applies `f` to every entry of [`Options::levels`] (chainable): the convenience
    /// for setting one per-level option on every level, e.g.
    /// `opts.with_every_level(|l| l.with_compression(Compression::Lz4))`.
    #[must_use]
    pub fn with_every_level(mut self, f: impl FnMut(LevelOptions) -> LevelOptions) -> Self {
        self.levels = self.levels.into_iter().map(f).collect();
        self
    }

    /// Rejects impossible values.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the first bad field and its value, as
    /// ``num_levels=`2` must be in 3..=32`` (per-level fields as `levels[i].field`).
    pub fn validate(&self) -> Result<()> {
        check(
            !(self.expiring_values && self.merge_operator.is_some()),
            "expiring_values",
            self.expiring_values,
            "cannot be combined with a merge_operator (an operand carries no deadline)",
        )?;
        check(
            self.memory_budget == 0 || self.memory_budget >= crate::MIN_MEMORY_BUDGET,
            "memory_budget",
            self.memory_budget,
            "must be 0 (none) or >= 131072 (128 KiB)",
        )?;
        check(
            self.write_buffer_size >= 4096,
            "write_buffer_size",
            self.write_buffer_size,
            "must be >= 4096",
        )?;
        check(
            self.max_write_buffer_number >= 2,
            "max_write_buffer_number",
            self.max_write_buffer_number,
            "must be >= 2",
        )?;
        check(
            self.target_file_size_base >= 1024,
            "target_file_size_base",
            self.target_file_size_base,
            "must be >= 1024",
        )?;
        check(
            self.max_bytes_for_level_base >= 1024,
            "max_bytes_for_level_base",
            self.max_bytes_for_level_base,
            "must be >= 1024",
        )?;
        check(
            self.max_bytes_for_level_multiplier > 1.0,
            "max_bytes_for_level_multiplier",
            self.max_bytes_for_level_multiplier,
            "must be > 1",
        )?;
        check(
            (3..=MAX_LEVELS).contains(&self.num_levels),
            "num_levels",
            self.num_levels,
            "must be in 3..=32",
        )?;
        check(
            self.max_bytes_for_level_multiplier_additional.len() <= self.num_levels,
            "max_bytes_for_level_multiplier_additional.len()",
            self.max_bytes_for_level_multiplier_additional.len(),
            "must be <= num_levels",
        )?;
        for (i, &m) in self
            .max_bytes_for_level_multiplier_additional
            .iter()
            .enumerate()
        {
            check(
                m.is_finite() && m > 0.0,
                format_args!("max_bytes_for_level_multiplier_additional[{i}]"),
                m,
                "must be finite and > 0",
            )?;
        }
        check(
            self.level0_file_num_compaction_trigger >= 1,
            "level0_file_num_compaction_trigger",
            self.level0_file_num_compaction_trigger,
            "must be >= 1",
        )?;
        check(
            self.level0_slowdown_writes_trigger >= self.level0_file_num_compaction_trigger,
            "level0_slowdown_writes_trigger",
            self.level0_slowdown_writes_trigger,
            "must be >= level0_file_num_compaction_trigger",
        )?;
        check(
            self.level0_stop_writes_trigger >= self.level0_slowdown_writes_trigger,
            "level0_stop_writes_trigger",
            self.level0_stop_writes_trigger,
            "must be >= level0_slowdown_writes_trigger",
        )?;
        check(
            self.max_open_files >= 16,
            "max_open_files",
            self.max_open_files,
            "must be >= 16",
        )?;
        check(
            self.max_background_jobs >= 2,
            "max_background_jobs",
            self.max_background_jobs,
            "must be >= 2",
        )?;
        if let Some(d) = self.delayed_compaction {
            check(d.vct >= 2, "delayed_compaction.vct", d.vct, "must be >= 2")?;
            check(
                d.vsmt >= 2,
                "delayed_compaction.vsmt",
                d.vsmt,
                "must be >= 2",
            )?;
            let r = d.max_garbage_ratio;
            check(
                r > 0.0 && r <= 1.0,
                "delayed_compaction.max_garbage_ratio",
                r,
                "must be in (0, 1]",
            )?;
        }
        if let Some(q) = self.query_compaction {
            check(
                q.selectivity > 0.0 && q.selectivity <= 1.0,
                "query_compaction.selectivity",
                q.selectivity,
                "must be in (0, 1]",
            )?;
            check(
                (1..self.num_levels).contains(&q.start_level),
                "query_compaction.start_level",
                q.start_level,
                "must be in 1..num_levels",
            )?;
            check(
                q.min_levels >= 1,
                "query_compaction.min_levels",
                q.min_levels,
                "must be >= 1",
            )?;
            check(
                (0.0..=1.0).contains(&q.profit),
                "query_compaction.profit",
                q.profit,
                "must be in [0, 1]",
            )?;
            check(
                (0.0..=1.0).contains(&q.min_obsolete),
                "query_compaction.min_obsolete",
                q.min_obsolete,
                "must be in [0, 1]",
            )?;
            check(
                q.max_buffer_bytes >= 1,
                "query_compaction.max_buffer_bytes",
                q.max_buffer_bytes,
                "must be >= 1",
            )?;
        }
        if let OutputPartitioning::Aligned { variance } = self.output_partitioning {
            check(
                variance > 1.0 && variance.is_finite(),
                "output_partitioning.variance",
                variance,
                "must be > 1 and finite",
            )?;
        }
        check(
            (1..=self.num_levels).contains(&self.levels.len()),
            "levels.len()",
            self.levels.len(),
            "must be in 1..=num_levels",
        )?;
        for (i, level) in self.levels.iter().enumerate() {
            level.validate(&format!("levels[{i}]"))?;
        }
        self.validate_db_paths()?;
        match &self.tiering {
            Some(t) => crate::tiering::validate(t, self),
            None => Ok(()),
        }
    }

    /// The `db_paths` part of [`Options::validate`].
    fn validate_db_paths(&self) -> Result<()> {
        check(
            self.db_paths.len() <= MAX_DB_PATHS,
            "db_paths.len()",
            self.db_paths.len(),
            "must be <= 16",
        )?;
        for (i, p) in self.db_paths.iter().enumerate() {
            let text = p.path.to_str().ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "db_paths[{i}].path=`{}` must be UTF-8",
                    p.path.display()
                ))
            })?;
            check(
                !text.is_empty() && text.trim() == text && !text.contains(['\n', '\r']),
                format_args!("db_paths[{i}].path"),
                text,
                "must be non-empty, with no line break and no blank at either end",
            )?;
            if let Some(j) = self.db_paths.iter().take(i).position(|q| q.path == p.path) {
                return Err(Error::InvalidArgument(format!(
                    "db_paths[{i}].path=`{text}` repeats db_paths[{j}]"
                )));
            }
        }
        Ok(())
    }
}

/// Options of one write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteOptions {
    /// Return only after the write's log bytes are fsynced. Without it a crash of the
    /// machine (not of the process) may lose the most recent writes; with it each
    /// write group waits for an fsync.
    ///
    /// Default: false. Scope: this write. Format: none.
    pub sync: bool,
}

setters!(WriteOptions {
    with_sync => sync: bool,
});

/// Options of one read or iterator.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Read as of this snapshot; `None` reads the latest state.
    ///
    /// Default: none. Scope: this read.
    pub snapshot: Option<Snapshot>,
    /// Iterators yield only keys `>= lower_bound`; `None` is unbounded.
    ///
    /// Default: none. Scope: this iterator (point reads ignore it).
    pub lower_bound: Option<Vec<u8>>,
    /// Iterators yield only keys `< upper_bound`; `None` is unbounded.
    ///
    /// Default: none. Scope: this iterator (point reads ignore it).
    pub upper_bound: Option<Vec<u8>>,
}

impl ReadOptions {
    /// Sets [`ReadOptions::snapshot`] (chainable); takes a `Snapshot` or an `Option`.
    #[must_use]
    pub fn with_snapshot(mut self, snapshot: impl Into<Option<Snapshot>>) -> Self {
        self.snapshot = snapshot.into();
        self
    }

    /// Sets [`ReadOptions::lower_bound`] (chainable); takes a `Vec<u8>` or an `Option`.
    #[must_use]
    pub fn with_lower_bound(mut self, bound: impl Into<Option<Vec<u8>>>) -> Self {
        self.lower_bound = bound.into();
        self
    }

    /// Sets [`ReadOptions::upper_bound`] (chainable); takes a `Vec<u8>` or an `Option`.
    #[must_use]
    pub fn with_upper_bound(mut self, bound: impl Into<Option<Vec<u8>>>) -> Self {
        self.upper_bound = bound.into();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_level_entry_extends_downward() {
        let o = Options::default().with_levels(vec![
            LevelOptions::default(),
            LevelOptions::default().with_block_size(8192),
            LevelOptions::default().with_compression(Compression::Lz4),
        ]);
        assert_eq!(o.level(0).compression, Compression::None);
        assert_eq!(o.level(1).block_size, 8192);
        assert_eq!(o.level(1).compression, Compression::None);
        for l in 2..MAX_LEVELS + 3 {
            assert_eq!(o.level(l).compression, Compression::Lz4, "L{l}");
        }
        assert!(o.validate().is_ok());
        let empty = Options::default().with_levels(Vec::new());
        assert_eq!(empty.level(3), &LevelOptions::default());
    }

    #[test]
    fn every_level_setter_touches_every_entry() {
        let o = Options::default()
            .with_levels(vec![LevelOptions::default(); 3])
            .with_every_level(|l| l.with_bloom_bits_per_key(0));
        assert!(o.levels.iter().all(|l| l.bloom_bits_per_key == 0));
        assert_eq!(o.levels.len(), 3);
    }

    #[test]
    fn cf_options_round_trip_through_options() {
        let cf = CfOptions::default()
            .with_write_buffer_size(1 << 20)
            .with_num_levels(5)
            .with_snapshot_filter(false);
        let opts = Options::default()
            .with_max_open_files(77)
            .with_cf_options(&cf);
        assert_eq!(opts.cf_options(), cf);
        assert_eq!(opts.write_buffer_size, 1 << 20);
        assert_eq!(opts.num_levels, 5);
        assert_eq!(opts.max_open_files, 77, "a database-wide field stays");
        assert_eq!(CfOptions::default(), Options::default().cf_options());
    }

    #[test]
    fn validation_names_the_field_and_value() {
        let msg = |o: Options| match o.validate() {
            Err(Error::InvalidArgument(m)) => m,
            other => panic!("expected InvalidArgument, got {other:?}"),
        };
        assert_eq!(
            msg(Options::default().with_num_levels(2)),
            "num_levels=`2` must be in 3..=32"
        );
        assert_eq!(
            msg(Options::default().with_levels(vec![
                LevelOptions::default(),
                LevelOptions::default().with_block_size(10)
            ])),
            "levels[1].block_size=`10` must be in 64..=16MiB"
        );
        assert_eq!(
            msg(Options::default().with_levels(Vec::new())),
            "levels.len()=`0` must be in 1..=num_levels"
        );
        assert_eq!(
            msg(Options::default()
                .with_num_levels(3)
                .with_levels(vec![LevelOptions::default(); 4])),
            "levels.len()=`4` must be in 1..=num_levels"
        );
        assert_eq!(
            msg(Options::default()
                .with_output_partitioning(OutputPartitioning::Aligned { variance: 0.5 })),
            "output_partitioning.variance=`0.5` must be > 1 and finite"
        );
        assert_eq!(
            msg(Options::default()
                .with_delayed_compaction(Some(DelayedCompaction::new().with_vct(1)))),
            "delayed_compaction.vct=`1` must be >= 2"
        );
        assert!(Options::default()
            .with_delayed_compaction(Some(DelayedCompaction::new().with_vct(2)))
            .validate()
            .is_ok());
        assert!(Options::default().validate().is_ok());
    }
}
