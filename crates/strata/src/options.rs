//! Options: what the database does, each field with its unit and default.
//!
//! `Options` is passed to [`crate::Db::open`]; [`ReadOptions`] and [`WriteOptions`] per
//! call. [`Options::validate`] rejects impossible values with
//! [`crate::Error::InvalidArgument`] naming the field. None of these options can change
//! while the database is open; none changes the on-disk format except `compression`
//! (per block, self-describing, so mixing is fine).

use crate::env::{FileSystem, PosixFs};
use crate::error::{Error, Result};
use crate::snapshot::Snapshot;
use std::fmt;
use std::sync::Arc;

/// Per-block compression of SSTable data blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
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
pub enum CompactionPriority {
    /// RocksDB's default: the file whose overlapping bytes in the next level, divided by
    /// its own size, is smallest (least write amplification now). Default.
    #[default]
    MinOverlappingRatio,
    /// The file whose smallest sequence number is oldest (the data waiting longest).
    OldestSmallestSeqFirst,
}

/// What recovery does with a damaged write-ahead log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WalRecoveryMode {
    /// A torn or corrupt record at the *tail* of the newest log (an interrupted write)
    /// is dropped with everything after it; corruption anywhere else is an error.
    /// Default.
    #[default]
    TolerateCorruptedTailRecords,
    /// Any damage in any log is an error.
    AbsoluteConsistency,
    /// Replay stops at the first damaged record of any log; later data is discarded.
    PointInTime,
}

/// How compaction cuts its output into files. (Technique hook: aligned compaction.)
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OutputPartitioning {
    /// Cut when a file reaches `target_file_size_base` (and at the user-key boundary
    /// following it).
    Fixed,
    /// Cut at the key boundaries of the overlapping files two levels down, within
    /// `[target / variance, target * variance]` (Kim et al., Algorithm 1). Default, with
    /// variance 2: it cut write amplification by 15.7% at fanout 10 and 16.8% at fanout
    /// 2 in `strata experiment aligned` (docs/experiments/aligned-compaction.md).
    Aligned {
        /// Allowed size variance around the target file size (> 1.0).
        variance: f64,
    },
}

/// Options of an open database.
#[derive(Clone)]
pub struct Options {
    /// Create the database if it does not exist. Default: true.
    pub create_if_missing: bool,
    /// Fail if the database already exists. Default: false.
    pub error_if_exists: bool,
    /// Bytes a memtable may hold before it is switched for a new one and flushed.
    /// Larger: fewer, larger L0 files and less write amplification; more memory and a
    /// longer WAL replay. Default: 64 MiB.
    pub write_buffer_size: usize,
    /// Memtables (active + immutable) allowed before writes stop to wait for a flush.
    /// Default: 2.
    pub max_write_buffer_number: usize,
    /// Target size of a compaction output file, bytes. Default: 64 MiB.
    pub target_file_size_base: u64,
    /// Target size of L1, bytes. Default: 256 MiB.
    pub max_bytes_for_level_base: u64,
    /// Each level's target is this multiple of the previous level's. Default: 10.
    pub max_bytes_for_level_multiplier: f64,
    /// Number of levels (L0..L{n-1}). Default: 7.
    pub num_levels: usize,
    /// L0 file count that triggers an L0→L1 compaction. Default: 4.
    pub level0_file_num_compaction_trigger: usize,
    /// L0 file count at which each write group is delayed by 1 ms. Default: 20.
    pub level0_slowdown_writes_trigger: usize,
    /// L0 file count at which writes stop until compaction catches up. Default: 36.
    pub level0_stop_writes_trigger: usize,
    /// Estimated bytes of pending compaction above which writes are delayed. 0 disables.
    /// Default: 64 GiB.
    pub soft_pending_compaction_bytes_limit: u64,
    /// Estimated bytes of pending compaction above which writes stop. 0 disables.
    /// Default: 256 GiB.
    pub hard_pending_compaction_bytes_limit: u64,
    /// Uncompressed size of an SSTable data block, bytes. Default: 4096.
    pub block_size: usize,
    /// Keys between restart points in a data block. Default: 16.
    pub block_restart_interval: usize,
    /// Bloom filter bits per key; 0 disables filters. Default: 10 (about 1% false
    /// positives).
    pub bloom_bits_per_key: u32,
    /// Block cache capacity, bytes; 0 disables the cache. Default: 32 MiB.
    pub block_cache_capacity: usize,
    /// Table files kept open (table cache entries). Default: 1000.
    pub max_open_files: usize,
    /// Data-block compression. Default: none.
    pub compression: Compression,
    /// Background threads for flushes and compactions (at least 2: one may always
    /// flush). Default: 2.
    pub max_background_jobs: usize,
    /// Compaction file-selection priority. Default: min overlapping ratio.
    pub compaction_priority: CompactionPriority,
    /// How compaction output is cut into files. Default: aligned, variance 2.
    pub output_partitioning: OutputPartitioning,
    /// Skip tables whose smallest sequence number is newer than the read's snapshot.
    /// Default: true.
    pub snapshot_filter: bool,
    /// Verify every block checksum of a table when it is opened. Default: false (block
    /// checksums are always verified when a block is read).
    pub paranoid_checks: bool,
    /// What recovery does with a damaged write-ahead log. Default: tolerate a torn tail.
    pub wal_recovery_mode: WalRecoveryMode,
    /// MANIFEST size, bytes, above which the next version change starts a new MANIFEST
    /// holding one snapshot of the version (bounds recovery time). Default: 64 MiB.
    pub max_manifest_file_size: u64,
    /// The file system everything goes through. Default: [`PosixFs`].
    pub fs: Arc<dyn FileSystem>,
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
            num_levels: 7,
            level0_file_num_compaction_trigger: 4,
            level0_slowdown_writes_trigger: 20,
            level0_stop_writes_trigger: 36,
            soft_pending_compaction_bytes_limit: 64 << 30,
            hard_pending_compaction_bytes_limit: 256 << 30,
            block_size: 4096,
            block_restart_interval: 16,
            bloom_bits_per_key: 10,
            block_cache_capacity: 32 << 20,
            max_open_files: 1000,
            compression: Compression::None,
            max_background_jobs: 2,
            compaction_priority: CompactionPriority::MinOverlappingRatio,
            output_partitioning: OutputPartitioning::Aligned { variance: 2.0 },
            snapshot_filter: true,
            paranoid_checks: false,
            wal_recovery_mode: WalRecoveryMode::TolerateCorruptedTailRecords,
            max_manifest_file_size: 64 << 20,
            fs: Arc::new(PosixFs),
        }
    }
}

impl fmt::Debug for Options {
    /// Every option but the file system (a component, not a setting).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("create_if_missing", &self.create_if_missing)
            .field("error_if_exists", &self.error_if_exists)
            .field("write_buffer_size", &self.write_buffer_size)
            .field("max_write_buffer_number", &self.max_write_buffer_number)
            .field("target_file_size_base", &self.target_file_size_base)
            .field("max_bytes_for_level_base", &self.max_bytes_for_level_base)
            .field(
                "max_bytes_for_level_multiplier",
                &self.max_bytes_for_level_multiplier,
            )
            .field("num_levels", &self.num_levels)
            .field(
                "level0_file_num_compaction_trigger",
                &self.level0_file_num_compaction_trigger,
            )
            .field(
                "level0_slowdown_writes_trigger",
                &self.level0_slowdown_writes_trigger,
            )
            .field(
                "level0_stop_writes_trigger",
                &self.level0_stop_writes_trigger,
            )
            .field(
                "soft_pending_compaction_bytes_limit",
                &self.soft_pending_compaction_bytes_limit,
            )
            .field(
                "hard_pending_compaction_bytes_limit",
                &self.hard_pending_compaction_bytes_limit,
            )
            .field("block_size", &self.block_size)
            .field("block_restart_interval", &self.block_restart_interval)
            .field("bloom_bits_per_key", &self.bloom_bits_per_key)
            .field("block_cache_capacity", &self.block_cache_capacity)
            .field("max_open_files", &self.max_open_files)
            .field("compression", &self.compression)
            .field("max_background_jobs", &self.max_background_jobs)
            .field("compaction_priority", &self.compaction_priority)
            .field("output_partitioning", &self.output_partitioning)
            .field("snapshot_filter", &self.snapshot_filter)
            .field("paranoid_checks", &self.paranoid_checks)
            .field("wal_recovery_mode", &self.wal_recovery_mode)
            .field("max_manifest_file_size", &self.max_manifest_file_size)
            .finish_non_exhaustive()
    }
}

fn check(cond: bool, what: &str) -> Result<()> {
    if cond {
        Ok(())
    } else {
        Err(Error::InvalidArgument(what.to_string()))
    }
}

impl Options {
    /// Rejects impossible values.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the first bad field.
    pub fn validate(&self) -> Result<()> {
        check(
            self.write_buffer_size >= 4096,
            "write_buffer_size must be >= 4096",
        )?;
        check(
            self.max_write_buffer_number >= 2,
            "max_write_buffer_number must be >= 2",
        )?;
        check(
            self.target_file_size_base >= 1024,
            "target_file_size_base must be >= 1024",
        )?;
        check(
            self.max_bytes_for_level_base >= 1024,
            "max_bytes_for_level_base must be >= 1024",
        )?;
        check(
            self.max_bytes_for_level_multiplier > 1.0,
            "max_bytes_for_level_multiplier must be > 1",
        )?;
        check(
            (3..=32).contains(&self.num_levels),
            "num_levels must be in 3..=32",
        )?;
        check(
            self.level0_file_num_compaction_trigger >= 1,
            "level0_file_num_compaction_trigger must be >= 1",
        )?;
        check(
            self.level0_slowdown_writes_trigger >= self.level0_file_num_compaction_trigger,
            "level0_slowdown_writes_trigger must be >= level0_file_num_compaction_trigger",
        )?;
        check(
            self.level0_stop_writes_trigger >= self.level0_slowdown_writes_trigger,
            "level0_stop_writes_trigger must be >= level0_slowdown_writes_trigger",
        )?;
        check(
            (64..=(1 << 24)).contains(&self.block_size),
            "block_size must be in 64..=16MiB",
        )?;
        check(
            self.block_restart_interval >= 1,
            "block_restart_interval must be >= 1",
        )?;
        check(
            self.bloom_bits_per_key <= 64,
            "bloom_bits_per_key must be <= 64",
        )?;
        check(self.max_open_files >= 16, "max_open_files must be >= 16")?;
        check(
            self.max_background_jobs >= 2,
            "max_background_jobs must be >= 2",
        )?;
        if let OutputPartitioning::Aligned { variance } = self.output_partitioning {
            check(
                variance > 1.0 && variance.is_finite(),
                "aligned variance must be > 1",
            )?;
        }
        Ok(())
    }
}

/// Options of one write.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOptions {
    /// Return only after the write's log bytes are fsynced. Without it a crash of the
    /// machine (not of the process) may lose the most recent writes. Default: false.
    pub sync: bool,
}

/// Options of one read or iterator.
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    /// Read as of this snapshot; `None` reads the latest state. Default: none.
    pub snapshot: Option<Snapshot>,
    /// Iterators yield only keys `>= lower_bound`. Default: unbounded.
    pub lower_bound: Option<Vec<u8>>,
    /// Iterators yield only keys `< upper_bound`. Default: unbounded.
    pub upper_bound: Option<Vec<u8>>,
}
