//! Engine flags: every field of [`strata::Options`] as a db_bench-named command-line flag.
//!
//! Role: flattened (`#[command(flatten)]`) into `bench`, `ycsb` and `ldb`, so one set of
//! flags configures either engine identically. Defaults are read from
//! [`strata::Options::default`] at parse time, so they never drift from the engine.
//! [`EngineFlags::strata_options`] converts and validates; a rejected value becomes a
//! one-line error naming the flag. The RocksDB and fjall adapters map the same struct
//! (`mapping.rs` describes how, flag by flag).
//!
//! Per-level options: `--block_size`, `--block_restart_interval`, `--bloom_bits` and
//! `--compression_type` set every level; `--compression_per_level=none,none,lz4` (as
//! RocksDB's `compression_per_level`: entry `i` for level `i`, the last for every
//! deeper level) overrides the codec level by level.
//!
//! RocksDB-only: `--compaction_style=universal` and the `--universal_*` flags, with
//! RocksDB's defaults ([`universal_defaults`]). Strata ([`EngineFlags::strata_options`])
//! and fjall refuse `universal` with a usage error naming the flag; with `level` the
//! universal flags are unused, as in RocksDB.
//!
//! Not flags: the components injected through `strata::DbBuilder` (file system,
//! shared block cache).

use crate::error::{CliError, Result};
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use strata::{
    CompactionPriority, Compression, DelayedCompaction, OutputPartitioning, WalRecoveryMode,
};

fn d() -> strata::Options {
    strata::Options::default()
}

/// The default per-level options (every level's, by default).
fn dl() -> strata::LevelOptions {
    strata::LevelOptions::default()
}

fn default_partitioning() -> PartitioningFlag {
    match d().output_partitioning {
        OutputPartitioning::Aligned { .. } => PartitioningFlag::Aligned,
        _ => PartitioningFlag::Fixed,
    }
}

fn default_vct() -> usize {
    d().delayed_compaction.unwrap_or_default().vct
}

fn default_vsmt() -> usize {
    d().delayed_compaction.unwrap_or_default().vsmt
}

fn default_garbage_ratio() -> f64 {
    d().delayed_compaction.unwrap_or_default().max_garbage_ratio
}

/// Query-driven compaction's settings by default (the option itself is off).
fn qc() -> strata::QueryCompaction {
    d().query_compaction.unwrap_or_default()
}

fn default_variance() -> f64 {
    match d().output_partitioning {
        OutputPartitioning::Aligned { variance } => variance,
        _ => 2.0,
    }
}

/// Which storage engine runs the workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// This crate's engine.
    Strata,
    /// RocksDB through the `rocksdb` crate (needs the `rocksdb` cargo feature).
    Rocksdb,
    /// fjall 3 through the `fjall` crate (needs the `fjall` cargo feature).
    Fjall,
}

/// `--compression_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompressionFlag {
    /// No compression.
    None,
    /// LZ4.
    Lz4,
    /// Zstandard.
    Zstd,
}

/// `--compaction_pri`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum CompactionPriFlag {
    /// Smallest overlap with the next level, relative to the file's size.
    MinOverlappingRatio,
    /// Oldest smallest sequence number first.
    OldestSmallestSeqFirst,
}

/// `--compaction_style`: db_bench's, by name (db_bench's numbers `0` and `1` are
/// aliases). FIFO is not offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionStyleFlag {
    /// Leveled compaction: every engine.
    #[value(alias = "0")]
    Level,
    /// Universal (tiered) compaction: RocksDB only; strata and fjall refuse it.
    #[value(alias = "1")]
    Universal,
}

/// RocksDB's defaults of the `--universal_*` flags (`CompactionOptionsUniversal()` in
/// `include/rocksdb/universal_compaction.h`, RocksDB 11.8, the rocksdb crate 0.25's),
/// fixed here so the flags parse alike in builds without the `rocksdb` feature.
/// db_bench's own flags default to 0, meaning "keep RocksDB's default"; these are the
/// values that leaves.
pub mod universal_defaults {
    /// `size_ratio`, percent.
    pub const SIZE_RATIO: u32 = 1;
    /// `min_merge_width`, sorted runs.
    pub const MIN_MERGE_WIDTH: u32 = 2;
    /// `max_merge_width`, sorted runs: `UINT_MAX`, no limit.
    pub const MAX_MERGE_WIDTH: u32 = u32::MAX;
    /// `max_size_amplification_percent`.
    pub const MAX_SIZE_AMPLIFICATION_PERCENT: u32 = 200;
}

/// `--compaction_output_partitioning`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PartitioningFlag {
    /// Cut at the target file size.
    Fixed,
    /// Cut at the grandparent level's boundaries (`--aligned_variance`).
    Aligned,
}

/// `--time_aware_window`'s default, seconds.
pub(crate) const TIME_AWARE_WINDOW: u64 = 60;

/// `--tiering`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TieringFlag {
    /// Levels placed by `--db_paths` alone.
    Off,
    /// Two tiers, the HotRAP paper's RocksDB-fat: `--db_paths` entry 0 is the fast
    /// path, entry 1 the slow one; the levels that fit in `--fd_size` are fast, the
    /// last of them stretched to fill it.
    Fat,
    /// `fat`'s tiers with HotRAP's hotness tracker (RALT), retention of hot records
    /// in the last fast level, the promotion cache and promotion by compaction
    /// and by flush (Strata only).
    Hotrap,
    /// `fat`'s tiers with time-aware tiering: records written in the last
    /// `--time_aware_window` seconds stay in the last fast level; no promotion
    /// (Strata only).
    Time,
}

/// `--wal_recovery_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum WalRecoveryFlag {
    /// Drop a torn tail of the newest log; other damage is an error.
    TolerateCorruptedTailRecords,
    /// Any damage is an error.
    AbsoluteConsistency,
    /// Stop replay at the first damaged record.
    PointInTime,
}

/// Flags that open and configure the engine. Names and meanings follow RocksDB's db_bench.
#[derive(Args, Clone, Debug, Serialize)]
pub struct EngineFlags {
    /// Database directory.
    #[arg(long = "db", default_value = "./strata-data")]
    pub db: PathBuf,
    /// Storage engine.
    #[arg(long = "engine", value_enum, default_value_t = EngineKind::Strata)]
    pub engine: EngineKind,
    /// Reuse the database in --db instead of deleting it first.
    #[arg(long = "use_existing_db", default_value_t = false, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub use_existing_db: bool,
    /// Create the database if missing.
    #[arg(long = "create_if_missing", default_value_t = d().create_if_missing, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub create_if_missing: bool,
    /// Fail if the database already exists.
    #[arg(long = "error_if_exists", default_value_t = d().error_if_exists, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub error_if_exists: bool,
    /// Memtable size in bytes before it is flushed.
    #[arg(long = "write_buffer_size", default_value_t = d().write_buffer_size)]
    pub write_buffer_size: usize,
    /// Memtables (active + immutable) before writes stop.
    #[arg(long = "max_write_buffer_number", default_value_t = d().max_write_buffer_number)]
    pub max_write_buffer_number: usize,
    /// Target compaction output file size, bytes.
    #[arg(long = "target_file_size_base", default_value_t = d().target_file_size_base)]
    pub target_file_size_base: u64,
    /// Target size of L1, bytes.
    #[arg(long = "max_bytes_for_level_base", default_value_t = d().max_bytes_for_level_base)]
    pub max_bytes_for_level_base: u64,
    /// Size ratio between adjacent levels.
    #[arg(long = "max_bytes_for_level_multiplier",
          default_value_t = d().max_bytes_for_level_multiplier)]
    pub max_bytes_for_level_multiplier: f64,
    /// L0 files that trigger an L0->L1 compaction.
    #[arg(long = "level0_file_num_compaction_trigger",
          default_value_t = d().level0_file_num_compaction_trigger)]
    pub level0_file_num_compaction_trigger: usize,
    /// L0 files at which writes are slowed.
    #[arg(long = "level0_slowdown_writes_trigger",
          default_value_t = d().level0_slowdown_writes_trigger)]
    pub level0_slowdown_writes_trigger: usize,
    /// L0 files at which writes stop.
    #[arg(long = "level0_stop_writes_trigger", default_value_t = d().level0_stop_writes_trigger)]
    pub level0_stop_writes_trigger: usize,
    /// Pending compaction bytes above which writes slow down (0 disables).
    #[arg(long = "soft_pending_compaction_bytes_limit",
          default_value_t = d().soft_pending_compaction_bytes_limit)]
    pub soft_pending_compaction_bytes_limit: u64,
    /// Pending compaction bytes above which writes stop (0 disables).
    #[arg(long = "hard_pending_compaction_bytes_limit",
          default_value_t = d().hard_pending_compaction_bytes_limit)]
    pub hard_pending_compaction_bytes_limit: u64,
    /// Number of levels.
    #[arg(long = "num_levels", default_value_t = d().num_levels)]
    pub num_levels: usize,
    /// Bloom filter bits per key (0 disables), every level.
    #[arg(long = "bloom_bits", default_value_t = dl().bloom_bits_per_key)]
    pub bloom_bits: u32,
    /// Block cache capacity in bytes (0 disables).
    #[arg(long = "cache_size", default_value_t = d().block_cache_capacity)]
    pub cache_size: usize,
    /// One memory budget for memtables (every family's) and the block cache, bytes
    /// (0: none). Strata: `Options::memory_budget` (`--cache_size` ignored); RocksDB:
    /// a WriteBufferManager of half the budget charged to an LRU cache of the budget.
    #[arg(long = "memory_budget", default_value_t = d().memory_budget)]
    pub memory_budget: usize,
    /// Uncompressed data block size, bytes, every level.
    #[arg(long = "block_size", default_value_t = dl().block_size)]
    pub block_size: usize,
    /// Keys between restart points in a block, every level.
    #[arg(long = "block_restart_interval", default_value_t = dl().block_restart_interval)]
    pub block_restart_interval: usize,
    /// Table files kept open.
    #[arg(long = "open_files", alias = "max_open_files", default_value_t = d().max_open_files)]
    pub open_files: usize,
    /// Data block compression, every level (unless --compression_per_level).
    #[arg(long = "compression_type", value_enum, default_value_t = CompressionFlag::None)]
    pub compression_type: CompressionFlag,
    /// Data block compression per level, comma-separated (`none,none,lz4`: L0 and L1
    /// raw, L2 and deeper LZ4); overrides --compression_type.
    #[arg(long = "compression_per_level", value_enum, value_delimiter = ',')]
    pub compression_per_level: Vec<CompressionFlag>,
    /// Background flush + compaction threads.
    #[arg(long = "max_background_jobs", default_value_t = d().max_background_jobs)]
    pub max_background_jobs: usize,
    /// Which file of a level compaction picks first.
    #[arg(long = "compaction_pri", value_enum,
          default_value_t = CompactionPriFlag::MinOverlappingRatio)]
    pub compaction_pri: CompactionPriFlag,
    /// Compaction style: `level`, or `universal` (RocksDB only: strata and fjall refuse
    /// it). db_bench's `0` and `1` are accepted too.
    #[arg(long = "compaction_style", value_enum, default_value_t = CompactionStyleFlag::Level)]
    pub compaction_style: CompactionStyleFlag,
    /// Universal compaction: a sorted run joins the runs picked before it if their
    /// total size, plus this percent, is at least its size (RocksDB's `size_ratio`).
    /// Used only with --compaction_style=universal.
    #[arg(long = "universal_size_ratio", default_value_t = universal_defaults::SIZE_RATIO)]
    pub universal_size_ratio: u32,
    /// Universal compaction: fewest sorted runs one compaction merges (RocksDB's
    /// `min_merge_width`). Used only with --compaction_style=universal.
    #[arg(long = "universal_min_merge_width",
          default_value_t = universal_defaults::MIN_MERGE_WIDTH)]
    pub universal_min_merge_width: u32,
    /// Universal compaction: most sorted runs one compaction merges (RocksDB's
    /// `max_merge_width`; the default, 4294967295, is UINT_MAX: no limit). Used only
    /// with --compaction_style=universal.
    #[arg(long = "universal_max_merge_width",
          default_value_t = universal_defaults::MAX_MERGE_WIDTH)]
    pub universal_max_merge_width: u32,
    /// Universal compaction: once the sorted runs other than the oldest exceed this
    /// percent of the oldest run's size, every run is merged into one (RocksDB's
    /// `max_size_amplification_percent`). Used only with --compaction_style=universal.
    #[arg(long = "universal_max_size_amplification_percent",
          default_value_t = universal_defaults::MAX_SIZE_AMPLIFICATION_PERCENT)]
    pub universal_max_size_amplification_percent: u32,
    /// How compaction output is cut into files.
    #[arg(long = "compaction_output_partitioning", value_enum,
          default_value_t = default_partitioning())]
    pub compaction_output_partitioning: PartitioningFlag,
    /// Size variance allowed by aligned partitioning (> 1).
    #[arg(long = "aligned_variance", default_value_t = default_variance())]
    pub aligned_variance: f64,
    /// Skip tables newer than the read's snapshot.
    #[arg(long = "snapshot_filter", default_value_t = d().snapshot_filter, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub snapshot_filter: bool,
    /// Every value of the database (and of families created with these flags)
    /// carries a deadline (`ldb put --ttl`): expired values are hidden from reads and
    /// removed by compactions (Options::expiring_values). Chosen at creation; such a
    /// database has no merges.
    #[arg(long = "expiring_values", default_value_t = d().expiring_values, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub expiring_values: bool,
    /// Rewrite tables older than this many seconds in place, so that compaction
    /// filters (expiry included) reach quiet levels (0: off;
    /// Options::periodic_compaction_seconds).
    #[arg(long = "periodic_compaction_seconds", default_value_t = d().periodic_compaction_seconds)]
    pub periodic_compaction_seconds: u64,
    /// Delayed compaction (experimental): a compaction that would rewrite fewer than
    /// `--vct` real tables replaces its inputs by virtual tables instead of writing
    /// (Options::delayed_compaction).
    #[arg(long = "delayed_compaction", default_value_t = d().delayed_compaction.is_some(),
          num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub delayed_compaction: bool,
    /// Virtual compaction threshold (>= 2): real tables a compaction must read to be
    /// run rather than deferred. Used only with --delayed_compaction.
    #[arg(long = "vct", default_value_t = default_vct())]
    pub vct: usize,
    /// Virtual-table merge threshold (>= 2): a read that meets a virtual table of at
    /// least this many slices asks for it and its siblings to be rewritten into real
    /// tables, in the background. Used only with --delayed_compaction.
    #[arg(long = "vsmt", default_value_t = default_vsmt())]
    pub vsmt: usize,
    /// Most garbage (parent bytes no virtual table reads) kept, as a fraction of the
    /// live table bytes, in (0, 1]; above it the virtual table holding the
    /// least-referenced parent is rewritten first. Used only with --delayed_compaction
    /// (DelayedCompaction::max_garbage_ratio).
    #[arg(long = "virtual_garbage_ratio", default_value_t = default_garbage_ratio())]
    pub virtual_garbage_ratio: f64,
    /// Query-driven compaction (experimental): a forward scan writes back what it
    /// merged from --query_compaction_start_level down into the deepest level holding
    /// its range (Options::query_compaction).
    #[arg(long = "query_compaction", default_value_t = d().query_compaction.is_some(),
          num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub query_compaction: bool,
    /// Fraction of scans that write back, in (0, 1]. Used only with
    /// --query_compaction (QueryCompaction::selectivity).
    #[arg(long = "query_compaction_selectivity", default_value_t = qc().selectivity)]
    pub query_compaction_selectivity: f64,
    /// Shallowest level a scan writes back (1..num_levels). Used only with
    /// --query_compaction.
    #[arg(long = "query_compaction_start_level", default_value_t = qc().start_level)]
    pub query_compaction_start_level: usize,
    /// Levels above the deepest one that must hold the range (>= 1). Used only with
    /// --query_compaction.
    #[arg(long = "query_compaction_min_levels", default_value_t = qc().min_levels)]
    pub query_compaction_min_levels: usize,
    /// Fewest merged bytes a write-back must hold. Used only with --query_compaction.
    #[arg(long = "query_compaction_min_bytes", default_value_t = qc().min_bytes)]
    pub query_compaction_min_bytes: u64,
    /// Profit rule, in [0, 1]: the bytes above the deepest level, as a fraction of
    /// the range's, a write-back needs. Used only with --query_compaction.
    #[arg(long = "query_compaction_profit", default_value_t = qc().profit)]
    pub query_compaction_profit: f64,
    /// Most bytes of merged entries a scan buffers (>= 1). Used only with
    /// --query_compaction (QueryCompaction::max_buffer_bytes).
    #[arg(long = "query_compaction_buffer", default_value_t = qc().max_buffer_bytes)]
    pub query_compaction_buffer: u64,
    /// Write back on a background worker (a queue of four; a full queue drops the
    /// write-back) instead of the scan's thread. Used only with --query_compaction.
    #[arg(long = "query_compaction_background", default_value_t = qc().background,
          num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub query_compaction_background: bool,
    /// Least fraction of a scan's merged entries that are older versions, in [0, 1],
    /// for it to write back. Used only with --query_compaction
    /// (QueryCompaction::min_obsolete).
    #[arg(long = "query_compaction_min_obsolete", default_value_t = qc().min_obsolete)]
    pub query_compaction_min_obsolete: f64,
    /// Verify every block checksum of a table when it is opened.
    #[arg(long = "paranoid_checks", default_value_t = d().paranoid_checks, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub paranoid_checks: bool,
    /// Pipelined writes: groups insert into the memtable concurrently and publish in
    /// sequence order.
    #[arg(long = "enable_pipelined_write", default_value_t = d().enable_pipelined_write,
          num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub enable_pipelined_write: bool,
    /// Read table files with O_DIRECT (bypass the page cache; the block cache is the
    /// only cache). Fails at open where the file system refuses O_DIRECT.
    #[arg(long = "use_direct_reads", default_value_t = d().use_direct_reads, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub use_direct_reads: bool,
    /// Write flush and compaction outputs with O_DIRECT (WAL and MANIFEST stay
    /// buffered).
    #[arg(long = "use_direct_io_for_flush_and_compaction",
          default_value_t = d().use_direct_io_for_flush_and_compaction, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub use_direct_io_for_flush_and_compaction: bool,
    /// Keep index blocks and bloom filters in the block cache (charged, evictable)
    /// instead of with each open table (RocksDB's `cache_index_and_filter_blocks`).
    #[arg(long = "cache_index_and_filter_blocks",
          default_value_t = d().cache_index_and_filter_blocks, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub cache_index_and_filter_blocks: bool,
    /// Data paths for table files, `DIR:BYTES,DIR:BYTES,...` (RocksDB's `db_paths`):
    /// levels fill the paths in order, each path holding levels up to its target bytes,
    /// the last taking the rest. Empty: tables in `--db`. A DIR may not contain `,`.
    #[arg(long = "db_paths", value_delimiter = ',', value_parser = parse_db_path)]
    pub db_paths: Vec<DbPathFlag>,
    /// Two storage tiers over `--db_paths` entries 0 (fast) and 1 (slow): `off`, `fat`
    /// (the levels that fit in `--fd_size` on the fast path, the last of them
    /// stretched to fill it; the rest on the slow path), `hotrap` (`fat` with
    /// HotRAP's hotness tracker, retention and promotion) or `time` (`fat` keeping
    /// recently written records fast, RocksDB's time-aware tiering).
    #[arg(long = "tiering", value_enum, default_value_t = TieringFlag::Off)]
    pub tiering: TieringFlag,
    /// The fast tier's budget in bytes of level targets for `--tiering`; 0 takes
    /// `--db_paths` entry 0's target.
    #[arg(long = "fd_size", default_value_t = 0)]
    pub fd_size: u64,
    /// `--tiering=time`: seconds a written record stays in the fast tier.
    #[arg(long = "time_aware_window", default_value_t = TIME_AWARE_WINDOW)]
    pub time_aware_window: u64,
    /// `--tiering=hotrap`: RALT's hot-set limit in bytes, fixed (auto-tuning off); 0
    /// auto-tunes it (or, with `--auto_tune=false`, fixes it at half the fast
    /// budget).
    #[arg(long = "hot_set_limit", default_value_t = 0)]
    pub hot_set_limit: u64,
    /// `--tiering=hotrap`: auto-tune RALT's hot-set limit (HotRAP Algorithm 1).
    #[arg(long = "auto_tune", default_value_t = true, action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub auto_tune: bool,
    /// `--tiering=hotrap` ablation: no retention of hot records (only promoted
    /// copies go back to the fast tier).
    #[arg(long = "no_retain")]
    pub no_retain: bool,
    /// `--tiering=hotrap` ablation: promote every cached copy, hot or not.
    #[arg(long = "no_hotness_check")]
    pub no_hotness_check: bool,
    /// `--tiering=hotrap` ablation: compactions drop the copies they take.
    #[arg(long = "no_promote_by_compaction")]
    pub no_promote_by_compaction: bool,
    /// `--tiering=hotrap` ablation: a full promotion cache's copies are dropped.
    #[arg(long = "no_promote_by_flush")]
    pub no_promote_by_flush: bool,
    /// `--tiering=hotrap` ablation: compactions out of the last fast level take the
    /// policy's own file, not the least hot one.
    #[arg(long = "no_hot_aware_pick")]
    pub no_hot_aware_pick: bool,
    /// Per-level factors on the fanout, comma-separated (RocksDB's
    /// `max_bytes_for_level_multiplier_additional`): entry k (k >= 1) stretches L(k+1)
    /// and every deeper level; entry 0 is never read. Empty: every factor 1.
    #[arg(
        long = "max_bytes_for_level_multiplier_additional",
        value_delimiter = ','
    )]
    pub max_bytes_for_level_multiplier_additional: Vec<f64>,
    /// Simulate a device under a data path, `PATH_INDEX:PRESET` (nvme, sata-ssd, gp3,
    /// hdd) or `PATH_INDEX:LATENCY_US,MIB_PER_S,IOPS`; repeat the flag for several
    /// paths. Index i is `--db_paths` entry i, or `--db` itself (index 0, WAL and
    /// MANIFEST included) without `--db_paths`. Every file I/O in that directory waits
    /// as the model says (strata only; docs/devices.md).
    #[arg(long = "device", value_parser = parse_device)]
    pub device: Vec<DeviceFlag>,
    /// MANIFEST size (bytes) above which a new MANIFEST is started.
    #[arg(long = "max_manifest_file_size", default_value_t = d().max_manifest_file_size)]
    pub max_manifest_file_size: u64,
    /// What recovery does with a damaged WAL.
    #[arg(long = "wal_recovery_mode", value_enum,
          default_value_t = WalRecoveryFlag::TolerateCorruptedTailRecords)]
    pub wal_recovery_mode: WalRecoveryFlag,
    /// Open the database for optimistic transactions (RocksDB's
    /// `OptimisticTransactionDB`, fjall's `OptimisticTxDatabase`) and run each write of
    /// fillseq, fillrandom, overwrite and readrandomwriterandom as a transaction, retried
    /// on conflict (db_bench's `--transaction_db` / `--optimistic_transaction_db`).
    #[arg(long = "transaction_db", alias = "optimistic_transaction_db",
          default_value_t = false, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub transaction_db: bool,
    /// Column families (db_bench's `--num_column_families`): `default` plus `cf1` ..
    /// `cf{N-1}`, each configured by these flags, created where missing. Every key
    /// lives in one family, picked by a hash of the key (FNV-1a 64 modulo N), and a
    /// batch spanning families is atomic. Scans (readseq, readreverse, seekrandom, YCSB
    /// E) are refused with N > 1: no one family holds a key range. 1 hashes nothing.
    #[arg(long = "num_column_families", default_value_t = 1)]
    pub num_column_families: usize,
    /// RocksDB: collect statistics (db_bench's `--statistics`, which here prints the
    /// counters), at the level that keeps tickers only
    /// (`StatsLevel::ExceptHistogramOrTimers`): the WAL bytes and RocksDB's counters.
    /// Off (RocksDB's default, and what comparisons run): flush and compaction bytes,
    /// hence write amplification, are summed from RocksDB's event log in `LOG`
    /// instead. Strata and fjall always count (nothing to switch).
    #[arg(long = "rocksdb_statistics", default_value_t = false, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub rocksdb_statistics: bool,
    /// fsync the WAL on every write.
    #[arg(long = "sync", default_value_t = false, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub sync: bool,
}

/// One entry of `--db_paths`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DbPathFlag {
    /// The directory.
    pub path: PathBuf,
    /// Its target size in bytes.
    pub target_size: u64,
}

/// One `--device` flag.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeviceFlag {
    /// The data path it models.
    pub path_index: usize,
    /// The model, as given (a preset name or `latency_us,mib_per_s,iops`).
    pub model: String,
}

impl DeviceFlag {
    /// The model (already checked by the parser).
    ///
    /// # Errors
    /// [`CliError::Usage`] if the text is not a model (only for a flag built by hand).
    pub fn device_model(&self) -> Result<strata::env::DeviceModel> {
        self.model
            .parse()
            .map_err(|e| CliError::Usage(format!("invalid value for '--device': {e}")))
    }
}

/// Parses `PATH_INDEX:MODEL`, checking that MODEL is a preset or figures.
fn parse_device(s: &str) -> std::result::Result<DeviceFlag, String> {
    let (index, model) = s
        .split_once(':')
        .ok_or_else(|| format!("expected PATH_INDEX:PRESET, got `{s}`"))?;
    let path_index = index
        .parse()
        .map_err(|e| format!("bad path index `{index}` in `{s}`: {e}"))?;
    model
        .parse::<strata::env::DeviceModel>()
        .map_err(|e| e.to_string())?;
    Ok(DeviceFlag {
        path_index,
        model: model.to_string(),
    })
}

/// Parses `DIR:BYTES` (split at the last `:`, so a DIR may contain `:`).
fn parse_db_path(s: &str) -> std::result::Result<DbPathFlag, String> {
    let (dir, bytes) = s
        .rsplit_once(':')
        .ok_or_else(|| format!("expected DIR:BYTES, got `{s}`"))?;
    let target_size = bytes
        .parse()
        .map_err(|e| format!("bad target bytes `{bytes}` in `{s}`: {e}"))?;
    if dir.is_empty() {
        return Err(format!("empty directory in `{s}`"));
    }
    Ok(DbPathFlag {
        path: PathBuf::from(dir),
        target_size,
    })
}

/// Strata option field → the flag that sets it, to name the flag in validation errors.
const FIELD_TO_FLAG: &[(&str, &str)] = &[
    ("write_buffer_size", "write_buffer_size"),
    ("max_write_buffer_number", "max_write_buffer_number"),
    ("target_file_size_base", "target_file_size_base"),
    ("max_bytes_for_level_base", "max_bytes_for_level_base"),
    (
        "max_bytes_for_level_multiplier",
        "max_bytes_for_level_multiplier",
    ),
    ("num_levels", "num_levels"),
    (
        "level0_file_num_compaction_trigger",
        "level0_file_num_compaction_trigger",
    ),
    (
        "level0_slowdown_writes_trigger",
        "level0_slowdown_writes_trigger",
    ),
    ("level0_stop_writes_trigger", "level0_stop_writes_trigger"),
    ("block_size", "block_size"),
    ("block_restart_interval", "block_restart_interval"),
    ("bloom_bits_per_key", "bloom_bits"),
    ("levels.len()", "compression_per_level"),
    ("block_cache_capacity", "cache_size"),
    ("memory_budget", "memory_budget"),
    ("max_open_files", "open_files"),
    ("max_background_jobs", "max_background_jobs"),
    ("output_partitioning.variance", "aligned_variance"),
    ("soft_pending", "soft_pending_compaction_bytes_limit"),
    ("hard_pending", "hard_pending_compaction_bytes_limit"),
    ("db_paths", "db_paths"),
    ("tiering.fast_path", "db_paths"),
    ("tiering.slow_path", "db_paths"),
    ("tiering.fd_size", "fd_size"),
    ("tiering.window", "time_aware_window"),
    ("tiering.hot_set_limit", "hot_set_limit"),
    ("tiering.retain", "no_retain"),
    ("tiering.promote_by_compaction", "no_promote_by_compaction"),
    ("tiering.promote_by_flush", "no_promote_by_flush"),
    ("tiering.hotness_check", "no_hotness_check"),
    ("tiering.hot_aware_pick", "no_hot_aware_pick"),
    (
        "max_bytes_for_level_multiplier_additional",
        "max_bytes_for_level_multiplier_additional",
    ),
    (
        "query_compaction.selectivity",
        "query_compaction_selectivity",
    ),
    (
        "query_compaction.start_level",
        "query_compaction_start_level",
    ),
    ("query_compaction.min_levels", "query_compaction_min_levels"),
    ("query_compaction.profit", "query_compaction_profit"),
    (
        "query_compaction.max_buffer_bytes",
        "query_compaction_buffer",
    ),
    (
        "query_compaction.min_obsolete",
        "query_compaction_min_obsolete",
    ),
    ("delayed_compaction.vct", "vct"),
    ("delayed_compaction.vsmt", "vsmt"),
    (
        "delayed_compaction.max_garbage_ratio",
        "virtual_garbage_ratio",
    ),
];

/// Turns a strata validation message into a one-line error naming the flag.
/// Per-level fields (`levels[2].block_size=...`) map to the flag that sets them.
pub fn validation_error(message: &str) -> CliError {
    let field = match message.strip_prefix("levels[") {
        Some(rest) => rest.split_once("].").map_or(message, |(_, f)| f),
        None => message,
    };
    let flag = FIELD_TO_FLAG
        .iter()
        .filter(|(name, _)| field.starts_with(name))
        .max_by_key(|(name, _)| name.len())
        .map(|(_, flag)| *flag);
    match flag {
        Some(flag) => CliError::Usage(format!("invalid value for '--{flag}': {message}")),
        None => CliError::Usage(format!("invalid options: {message}")),
    }
}

impl EngineFlags {
    /// Strata's `Options::tiering` for these flags.
    ///
    /// # Errors
    /// [`CliError::Usage`] naming a flag of one mode set under another
    /// (`--time_aware_window` off its default without `--tiering=time`, a HotRAP flag
    /// without `--tiering=hotrap`): such a flag would do nothing.
    pub(crate) fn strata_tiering(&self) -> Result<Option<strata::Tiering>> {
        let hotrap_flags = [
            ("hot_set_limit", self.hot_set_limit != 0),
            ("auto_tune", !self.auto_tune),
            ("no_retain", self.no_retain),
            ("no_hotness_check", self.no_hotness_check),
            ("no_promote_by_compaction", self.no_promote_by_compaction),
            ("no_promote_by_flush", self.no_promote_by_flush),
            ("no_hot_aware_pick", self.no_hot_aware_pick),
        ];
        let stray = |flag: &str, mode: &str| {
            Err(CliError::Usage(format!(
                "invalid value for '--{flag}': applies to --tiering={mode} only"
            )))
        };
        if self.tiering != TieringFlag::Time && self.time_aware_window != TIME_AWARE_WINDOW {
            return stray("time_aware_window", "time");
        }
        if self.tiering != TieringFlag::Hotrap {
            if let Some((flag, _)) = hotrap_flags.iter().find(|(_, set)| *set) {
                return stray(flag, "hotrap");
            }
        }
        let mut t = match self.tiering {
            TieringFlag::Off => return Ok(None),
            TieringFlag::Fat => strata::Tiering::fat(),
            TieringFlag::Hotrap => strata::Tiering::hotrap(),
            TieringFlag::Time => {
                strata::Tiering::time_aware(std::time::Duration::from_secs(self.time_aware_window))
            }
        }
        .with_fd_size(self.fd_size);
        let budget = |t: &strata::Tiering| {
            let opts = strata::Options::default().with_db_paths(
                self.db_paths
                    .iter()
                    .map(|p| strata::DbPath::new(p.path.clone(), p.target_size))
                    .collect(),
            );
            t.budget(&opts)
        };
        match (self.hot_set_limit, self.auto_tune) {
            (0, true) => {}
            (0, false) => {
                t = t.with_hot_set_limit(strata::HotSetLimit::Fixed(budget(&t) / 2));
            }
            (n, _) => t = t.with_hot_set_limit(strata::HotSetLimit::Fixed(n)),
        }
        for (off, with) in [
            (
                self.no_retain,
                strata::Tiering::with_retain as fn(_, _) -> _,
            ),
            (self.no_hotness_check, strata::Tiering::with_hotness_check),
            (
                self.no_promote_by_compaction,
                strata::Tiering::with_promote_by_compaction,
            ),
            (
                self.no_promote_by_flush,
                strata::Tiering::with_promote_by_flush,
            ),
            (self.no_hot_aware_pick, strata::Tiering::with_hot_aware_pick),
        ] {
            if off {
                t = with(t, false);
            }
        }
        Ok(Some(t))
    }

    /// RocksDB's level sizing for these flags: its `max_bytes_for_level_base` and
    /// `max_bytes_for_level_multiplier_additional`. The factors are the
    /// `--max_bytes_for_level_multiplier_additional` ones rounded to integers (at least
    /// 1; empty when every factor is 1). With `--tiering=fat`, Strata's stretch
    /// (`strata::TierLayout`), rounded down so RocksDB's fast levels also fit the
    /// budget, goes where RocksDB reads it: on the last fast level's factor, or, when
    /// that level is L1 (whose target RocksDB always takes from the base, as Strata
    /// does: factor 0 is never read), on the base itself.
    ///
    /// # Errors
    /// As [`EngineFlags::shared_options`].
    pub fn rocksdb_level_sizing(&self) -> Result<(u64, Vec<i32>)> {
        let mut base = self.max_bytes_for_level_base;
        let mut factors = self.max_bytes_for_level_multiplier_additional.clone();
        if self.tiering != TieringFlag::Off {
            if let Some(layout) = strata::TierLayout::of(&self.shared_options()?) {
                let stretch = layout.stretch.floor();
                match layout.last_fast_level {
                    1 => base = (base as f64 * stretch) as u64,
                    level => {
                        let at = level - 1;
                        if factors.len() <= at {
                            factors.resize(at + 1, 1.0);
                        }
                        if let Some(f) = factors.get_mut(at) {
                            *f = (*f * stretch).floor();
                        }
                    }
                }
            }
        }
        let ints: Vec<i32> = factors
            .iter()
            // `as` saturates; a factor below 1 is 1 for RocksDB.
            .map(|&f| (f.round() as i32).max(1))
            .collect();
        let factors = if ints.iter().all(|&i| i == 1) {
            Vec::new()
        } else {
            ints
        };
        Ok((base, factors))
    }

    /// The Strata options these flags describe, validated: [`EngineFlags::shared_options`]
    /// after refusing what Strata cannot do. Every direct open of Strata goes through
    /// here, so no flag Strata cannot honour is silently ignored.
    ///
    /// # Errors
    /// [`CliError::Usage`] naming the flag: `--compaction_style=universal` (Strata
    /// compacts by level only), or a value the engine rejects.
    pub fn strata_options(&self) -> Result<strata::Options> {
        if self.compaction_style != CompactionStyleFlag::Level {
            return Err(CliError::Usage(
                "invalid value for '--compaction_style' with --engine=strata: strata \
                 compacts by level only (level); universal runs on --engine=rocksdb"
                    .into(),
            ));
        }
        self.shared_options()
    }

    /// Strata's reading of the flags every engine shares, validated. [`super::open`]
    /// checks every engine's flags with it, so a value is refused alike whichever
    /// engine runs; it ignores the flags of compaction styles Strata lacks (the
    /// `--compaction_style` family), which only [`EngineFlags::strata_options`] refuses.
    ///
    /// # Errors
    /// [`CliError::Usage`] naming the flag whose value the engine rejects.
    pub fn shared_options(&self) -> Result<strata::Options> {
        // Checked even with delayed compaction off, so a bad value never hides until
        // the flag that uses it is turned on; the messages are the engine's own.
        if self.vct < 2 {
            return Err(validation_error(&format!(
                "delayed_compaction.vct=`{}` must be >= 2",
                self.vct
            )));
        }
        if self.vsmt < 2 {
            return Err(validation_error(&format!(
                "delayed_compaction.vsmt=`{}` must be >= 2",
                self.vsmt
            )));
        }
        let ratio = self.virtual_garbage_ratio;
        if ratio.is_nan() || ratio <= 0.0 || ratio > 1.0 {
            return Err(validation_error(&format!(
                "delayed_compaction.max_garbage_ratio=`{ratio}` must be in (0, 1]"
            )));
        }
        let level = strata::LevelOptions::default()
            .with_block_size(self.block_size)
            .with_block_restart_interval(self.block_restart_interval)
            .with_bloom_bits_per_key(self.bloom_bits)
            .with_compression(self.compression_type.into());
        let levels = if self.compression_per_level.is_empty() {
            vec![level]
        } else {
            self.compression_per_level
                .iter()
                .map(|&c| level.clone().with_compression(c.into()))
                .collect()
        };
        let o = strata::Options::default()
            .with_create_if_missing(self.create_if_missing)
            .with_error_if_exists(self.error_if_exists)
            .with_write_buffer_size(self.write_buffer_size)
            .with_max_write_buffer_number(self.max_write_buffer_number)
            .with_target_file_size_base(self.target_file_size_base)
            .with_max_bytes_for_level_base(self.max_bytes_for_level_base)
            .with_max_bytes_for_level_multiplier(self.max_bytes_for_level_multiplier)
            .with_max_bytes_for_level_multiplier_additional(
                self.max_bytes_for_level_multiplier_additional.clone(),
            )
            .with_num_levels(self.num_levels)
            .with_level0_file_num_compaction_trigger(self.level0_file_num_compaction_trigger)
            .with_level0_slowdown_writes_trigger(self.level0_slowdown_writes_trigger)
            .with_level0_stop_writes_trigger(self.level0_stop_writes_trigger)
            .with_soft_pending_compaction_bytes_limit(self.soft_pending_compaction_bytes_limit)
            .with_hard_pending_compaction_bytes_limit(self.hard_pending_compaction_bytes_limit)
            .with_block_cache_capacity(self.cache_size)
            .with_memory_budget(self.memory_budget)
            .with_max_open_files(self.open_files)
            .with_max_background_jobs(self.max_background_jobs)
            .with_compaction_priority(match self.compaction_pri {
                CompactionPriFlag::MinOverlappingRatio => CompactionPriority::MinOverlappingRatio,
                CompactionPriFlag::OldestSmallestSeqFirst => {
                    CompactionPriority::OldestSmallestSeqFirst
                }
            })
            .with_output_partitioning(match self.compaction_output_partitioning {
                PartitioningFlag::Fixed => OutputPartitioning::Fixed,
                PartitioningFlag::Aligned => OutputPartitioning::Aligned {
                    variance: self.aligned_variance,
                },
            })
            .with_snapshot_filter(self.snapshot_filter)
            .with_delayed_compaction(self.delayed_compaction.then(|| {
                DelayedCompaction::new()
                    .with_vct(self.vct)
                    .with_vsmt(self.vsmt)
                    .with_max_garbage_ratio(self.virtual_garbage_ratio)
            }))
            .with_query_compaction(self.query_compaction.then(|| {
                strata::QueryCompaction::new()
                    .with_selectivity(self.query_compaction_selectivity)
                    .with_start_level(self.query_compaction_start_level)
                    .with_min_levels(self.query_compaction_min_levels)
                    .with_min_bytes(self.query_compaction_min_bytes)
                    .with_profit(self.query_compaction_profit)
                    .with_max_buffer_bytes(self.query_compaction_buffer)
                    .with_background(self.query_compaction_background)
                    .with_min_obsolete(self.query_compaction_min_obsolete)
            }))
            // The harness's counters (`KvEngine::merge`, `mergerandom`), but for values
            // with deadlines, which have no merges.
            .with_merge_operator(
                (!self.expiring_values)
                    .then(|| Arc::new(strata::merge::U64Add) as Arc<dyn strata::MergeOperator>),
            )
            .with_expiring_values(self.expiring_values)
            .with_periodic_compaction_seconds(self.periodic_compaction_seconds)
            .with_paranoid_checks(self.paranoid_checks)
            .with_enable_pipelined_write(self.enable_pipelined_write)
            .with_use_direct_reads(self.use_direct_reads)
            .with_use_direct_io_for_flush_and_compaction(
                self.use_direct_io_for_flush_and_compaction,
            )
            .with_cache_index_and_filter_blocks(self.cache_index_and_filter_blocks)
            .with_db_paths(
                self.db_paths
                    .iter()
                    .map(|p| strata::DbPath::new(p.path.clone(), p.target_size))
                    .collect(),
            )
            .with_tiering(self.strata_tiering()?)
            .with_max_manifest_file_size(self.max_manifest_file_size)
            .with_wal_recovery_mode(match self.wal_recovery_mode {
                WalRecoveryFlag::TolerateCorruptedTailRecords => {
                    WalRecoveryMode::TolerateCorruptedTailRecords
                }
                WalRecoveryFlag::AbsoluteConsistency => WalRecoveryMode::AbsoluteConsistency,
                WalRecoveryFlag::PointInTime => WalRecoveryMode::PointInTime,
            })
            .with_levels(levels);
        o.validate().map_err(|e| match e {
            strata::Error::InvalidArgument(msg) => validation_error(&msg),
            other => CliError::Strata(other),
        })?;
        Ok(o)
    }
}

impl From<CompressionFlag> for Compression {
    fn from(c: CompressionFlag) -> Compression {
        match c {
            CompressionFlag::None => Compression::None,
            CompressionFlag::Lz4 => Compression::Lz4,
            CompressionFlag::Zstd => Compression::Zstd,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        e: EngineFlags,
    }

    fn parse(args: &[&str]) -> std::result::Result<EngineFlags, clap::Error> {
        T::try_parse_from(std::iter::once("t").chain(args.iter().copied())).map(|t| t.e)
    }

    #[test]
    fn defaults_match_engine_defaults() {
        let e = parse(&[]).expect("parse");
        let o = e.strata_options().expect("valid");
        // The engine's defaults, plus the harness's counter operator.
        let d = strata::Options::default()
            .with_merge_operator(Some(std::sync::Arc::new(strata::merge::U64Add)));
        assert_eq!(o.write_buffer_size, d.write_buffer_size);
        assert_eq!(o.block_cache_capacity, d.block_cache_capacity);
        assert_eq!(o, d);
        assert_eq!(o.level(0).bloom_bits_per_key, 10);
        assert_eq!(o.level(0).compression, Compression::None);
        assert!(o.snapshot_filter);
        assert_eq!(o.delayed_compaction, None);
        assert!(!e.delayed_compaction);
        assert_eq!(e.vct, strata::DelayedCompaction::new().vct);
    }

    #[test]
    fn query_compaction_flags() {
        let strata = |args: &[&str]| parse(args).expect("parse").strata_options();
        assert_eq!(strata(&[]).expect("valid").query_compaction, None);
        assert_eq!(
            strata(&["--query_compaction"])
                .expect("valid")
                .query_compaction,
            Some(strata::QueryCompaction::new())
        );
        let o = strata(&[
            "--query_compaction=true",
            "--query_compaction_selectivity=0.25",
            "--query_compaction_start_level=1",
            "--query_compaction_min_levels=2",
            "--query_compaction_min_bytes=4096",
            "--query_compaction_profit=0.5",
            "--query_compaction_buffer=1048576",
            "--query_compaction_background",
        ])
        .expect("valid");
        assert_eq!(
            o.query_compaction,
            Some(
                strata::QueryCompaction::new()
                    .with_selectivity(0.25)
                    .with_start_level(1)
                    .with_min_levels(2)
                    .with_min_bytes(4096)
                    .with_profit(0.5)
                    .with_max_buffer_bytes(1 << 20)
                    .with_background(true)
            )
        );
        // Out of range: refused naming the flag, by the engine's own check.
        for (arg, flag) in [
            (
                "--query_compaction_selectivity=0",
                "query_compaction_selectivity",
            ),
            (
                "--query_compaction_start_level=0",
                "query_compaction_start_level",
            ),
            (
                "--query_compaction_min_levels=0",
                "query_compaction_min_levels",
            ),
            ("--query_compaction_profit=2", "query_compaction_profit"),
            ("--query_compaction_buffer=0", "query_compaction_buffer"),
            (
                "--query_compaction_min_obsolete=2",
                "query_compaction_min_obsolete",
            ),
        ] {
            let err = strata(&["--query_compaction", arg]).expect_err(arg);
            assert!(matches!(err, CliError::Usage(_)), "{arg}: {err:?}");
            assert!(
                err.to_string()
                    .starts_with(&format!("invalid value for '--{flag}'")),
                "{arg}: {err}"
            );
        }
    }

    #[test]
    fn delayed_compaction_flags() {
        // Off unless asked; --vct alone changes nothing but is still checked.
        let o = parse(&["--vct=3"])
            .expect("parse")
            .strata_options()
            .expect("valid");
        assert_eq!(o.delayed_compaction, None);
        let o = parse(&["--delayed_compaction=true"])
            .expect("parse")
            .strata_options()
            .expect("valid");
        assert_eq!(o.delayed_compaction, Some(strata::DelayedCompaction::new()));
        let o = parse(&["--delayed_compaction=false", "--vct=5"])
            .expect("parse")
            .strata_options()
            .expect("valid");
        assert_eq!(o.delayed_compaction, None);
        for args in [
            &["--delayed_compaction", "--vct=1"][..],
            &["--delayed_compaction=true", "--vct=0"][..],
            &["--vct=1"][..],
        ] {
            let e = parse(args).expect("parses");
            let err = e.strata_options().expect_err("vct < 2");
            assert!(matches!(err, CliError::Usage(_)), "{args:?}: {err:?}");
            let msg = err.to_string();
            assert!(msg.starts_with("invalid value for '--vct'"), "{msg}");
            assert!(msg.contains(">= 2"), "{msg}");
        }
        // The engine's own check maps to the flag too.
        let msg = validation_error("delayed_compaction.vct=`1` must be >= 2").to_string();
        assert!(msg.starts_with("invalid value for '--vct'"), "{msg}");
        let err = parse(&["--vct=many"]).expect_err("error");
        assert!(err.to_string().contains("--vct"), "{err}");
        let err = parse(&["--delayed_compaction=maybe"]).expect_err("error");
        assert!(err.to_string().contains("--delayed_compaction"), "{err}");

        // --vsmt and --virtual_garbage_ratio: the engine's defaults, mapped together.
        let e = parse(&[]).expect("parse");
        assert_eq!(e.vsmt, strata::DelayedCompaction::new().vsmt);
        assert_eq!(e.vsmt, 5);
        assert_eq!(e.virtual_garbage_ratio, 0.1);
        let o = parse(&[
            "--delayed_compaction",
            "--vct=6",
            "--vsmt=3",
            "--virtual_garbage_ratio=0.5",
        ])
        .expect("parse")
        .strata_options()
        .expect("valid");
        assert_eq!(
            o.delayed_compaction,
            Some(
                strata::DelayedCompaction::new()
                    .with_vct(6)
                    .with_vsmt(3)
                    .with_max_garbage_ratio(0.5)
            )
        );
        // Ratio 1 is the top of the range; alone they change nothing.
        let o = parse(&["--vsmt=2", "--virtual_garbage_ratio=1"])
            .expect("parse")
            .strata_options()
            .expect("valid");
        assert_eq!(o.delayed_compaction, None);
        // Out of range: refused with or without --delayed_compaction, naming the flag.
        for (args, flag, rule) in [
            (&["--delayed_compaction", "--vsmt=1"][..], "vsmt", ">= 2"),
            (&["--vsmt=0"][..], "vsmt", ">= 2"),
            (
                &["--delayed_compaction", "--virtual_garbage_ratio=0"][..],
                "virtual_garbage_ratio",
                "(0, 1]",
            ),
            (
                &["--virtual_garbage_ratio=1.5"][..],
                "virtual_garbage_ratio",
                "(0, 1]",
            ),
            (
                &["--virtual_garbage_ratio=-0.1"][..],
                "virtual_garbage_ratio",
                "(0, 1]",
            ),
            (
                &["--virtual_garbage_ratio=NaN"][..],
                "virtual_garbage_ratio",
                "(0, 1]",
            ),
        ] {
            let e = parse(args).expect("parses");
            let err = e.strata_options().expect_err("out of range");
            assert!(matches!(err, CliError::Usage(_)), "{args:?}: {err:?}");
            let msg = err.to_string();
            assert!(
                msg.starts_with(&format!("invalid value for '--{flag}'")),
                "{args:?}: {msg}"
            );
            assert!(msg.contains(rule), "{args:?}: {msg}");
            // Every engine refuses it alike.
            assert!(e.shared_options().is_err(), "{args:?}");
        }
        // The engine's own checks map to the flags too.
        let msg = validation_error("delayed_compaction.vsmt=`1` must be >= 2").to_string();
        assert!(msg.starts_with("invalid value for '--vsmt'"), "{msg}");
        let msg = validation_error("delayed_compaction.max_garbage_ratio=`2` must be in (0, 1]")
            .to_string();
        assert!(
            msg.starts_with("invalid value for '--virtual_garbage_ratio'"),
            "{msg}"
        );
        for bad in ["--vsmt=five", "--virtual_garbage_ratio=lots"] {
            let err = parse(&[bad]).expect_err("error");
            let flag = bad.split('=').next().unwrap_or_default();
            assert!(err.to_string().contains(flag), "{err}");
        }
    }

    /// The tiering flags: HotRAP's limit and ablations, time-aware tiering's window;
    /// a HotRAP switch in another mode is refused naming its flag.
    #[test]
    fn tiering_flags_reach_the_tiering_option() {
        let shape = [
            "--db_paths=/fast:1000000,/slow:0",
            "--max_bytes_for_level_base=100000",
        ];
        let tiering = |args: &[&str]| {
            parse(&[&shape[..], args].concat())
                .expect("parse")
                .strata_options()
                .map(|o| o.tiering)
        };
        let t = tiering(&[
            "--tiering=hotrap",
            "--hot_set_limit=4096",
            "--no_retain",
            "--no_hotness_check",
            "--no_promote_by_compaction",
            "--no_promote_by_flush",
            "--no_hot_aware_pick",
        ])
        .expect("valid");
        assert_eq!(
            t,
            Some(
                strata::Tiering::hotrap()
                    .with_hot_set_limit(strata::HotSetLimit::Fixed(4096))
                    .with_retain(false)
                    .with_hotness_check(false)
                    .with_promote_by_compaction(false)
                    .with_promote_by_flush(false)
                    .with_hot_aware_pick(false)
            )
        );
        let t = tiering(&["--tiering=hotrap", "--auto_tune=false"]).expect("valid");
        assert_eq!(
            t.map(|t| t.hot_set_limit),
            Some(strata::HotSetLimit::Fixed(500_000))
        );
        let t = tiering(&["--tiering=time", "--time_aware_window=90"]).expect("valid");
        assert_eq!(
            t,
            Some(strata::Tiering::time_aware(std::time::Duration::from_secs(
                90
            )))
        );
        let e = tiering(&["--tiering=fat", "--no_retain"]).expect_err("refused");
        assert!(e.to_string().contains("'--no_retain'"), "{e}");
        // A flag of one mode under another does nothing: refused, by name (found by
        // review: these were accepted).
        for (args, flag) in [
            (
                &["--tiering=hotrap", "--time_aware_window=5"][..],
                "time_aware_window",
            ),
            (
                &["--tiering=fat", "--time_aware_window=5"],
                "time_aware_window",
            ),
            (&["--tiering=off", "--no_retain"], "no_retain"),
            (&["--tiering=off", "--hot_set_limit=4096"], "hot_set_limit"),
            (&["--tiering=fat", "--auto_tune=false"], "auto_tune"),
        ] {
            let e = tiering(args).expect_err("refused");
            assert!(
                e.to_string().contains(&format!("'--{flag}'")),
                "{args:?}: {e}"
            );
        }
        let e = tiering(&["--tiering=time", "--time_aware_window=0"]).expect_err("refused");
        assert!(e.to_string().contains("'--time_aware_window'"), "{e}");
    }

    #[test]
    fn every_flag_reaches_its_option() {
        let e = parse(&[
            "--write_buffer_size=8388608",
            "--max_write_buffer_number=3",
            "--target_file_size_base=4096",
            "--max_bytes_for_level_base=33554432",
            "--max_bytes_for_level_multiplier=8",
            "--level0_file_num_compaction_trigger=2",
            "--level0_slowdown_writes_trigger=5",
            "--level0_stop_writes_trigger=9",
            "--soft_pending_compaction_bytes_limit=1",
            "--hard_pending_compaction_bytes_limit=2",
            "--num_levels=5",
            "--bloom_bits=12",
            "--cache_size=1048576",
            "--block_size=8192",
            "--block_restart_interval=8",
            "--open_files=100",
            "--compression_type=zstd",
            "--max_background_jobs=4",
            "--compaction_pri=oldest_smallest_seq_first",
            "--compaction_output_partitioning=aligned",
            "--aligned_variance=3",
            "--snapshot_filter=false",
            "--delayed_compaction",
            "--vct=4",
            "--vsmt=7",
            "--virtual_garbage_ratio=0.25",
            "--paranoid_checks",
            "--enable_pipelined_write=false",
            "--use_direct_reads",
            "--use_direct_io_for_flush_and_compaction=1",
            "--wal_recovery_mode=point_in_time",
            "--create_if_missing=0",
            "--error_if_exists=1",
        ])
        .expect("parse");
        let o = e.strata_options().expect("valid");
        assert_eq!(o.write_buffer_size, 8 << 20);
        assert_eq!(o.max_write_buffer_number, 3);
        assert_eq!(o.target_file_size_base, 4096);
        assert_eq!(o.max_bytes_for_level_base, 32 << 20);
        assert_eq!(o.max_bytes_for_level_multiplier, 8.0);
        assert_eq!(o.level0_file_num_compaction_trigger, 2);
        assert_eq!(o.level0_slowdown_writes_trigger, 5);
        assert_eq!(o.level0_stop_writes_trigger, 9);
        assert_eq!(o.soft_pending_compaction_bytes_limit, 1);
        assert_eq!(o.hard_pending_compaction_bytes_limit, 2);
        assert_eq!(o.num_levels, 5);
        assert_eq!(o.levels.len(), 1);
        assert_eq!(o.level(3).bloom_bits_per_key, 12);
        assert_eq!(o.block_cache_capacity, 1 << 20);
        assert_eq!(o.level(3).block_size, 8192);
        assert_eq!(o.level(3).block_restart_interval, 8);
        assert_eq!(o.max_open_files, 100);
        assert_eq!(o.level(3).compression, Compression::Zstd);
        assert_eq!(o.max_background_jobs, 4);
        assert_eq!(
            o.compaction_priority,
            CompactionPriority::OldestSmallestSeqFirst
        );
        assert_eq!(
            o.output_partitioning,
            OutputPartitioning::Aligned { variance: 3.0 }
        );
        assert!(!o.snapshot_filter);
        assert_eq!(
            o.delayed_compaction,
            Some(
                strata::DelayedCompaction::new()
                    .with_vct(4)
                    .with_vsmt(7)
                    .with_max_garbage_ratio(0.25)
            )
        );
        assert!(o.paranoid_checks);
        assert!(!o.enable_pipelined_write);
        assert!(o.use_direct_reads);
        assert!(o.use_direct_io_for_flush_and_compaction);
        assert_eq!(o.wal_recovery_mode, WalRecoveryMode::PointInTime);
        assert!(!o.create_if_missing);
        assert!(o.error_if_exists);
    }

    #[test]
    fn compression_per_level_is_a_policy_vector() {
        let e = parse(&[
            "--compression_type=zstd",
            "--compression_per_level=none,none,lz4",
            "--block_size=8192",
        ])
        .expect("parse");
        let o = e.strata_options().expect("valid");
        assert_eq!(o.levels.len(), 3);
        let codecs: Vec<Compression> = (0..7).map(|l| o.level(l).compression).collect();
        assert_eq!(
            codecs[..3],
            [Compression::None, Compression::None, Compression::Lz4]
        );
        assert!(codecs[3..].iter().all(|&c| c == Compression::Lz4));
        assert!((0..7).all(|l| o.level(l).block_size == 8192));
        let e = parse(&[
            "--num_levels=3",
            "--compression_per_level=none,lz4,lz4,zstd",
        ])
        .expect("parses");
        let msg = e.strata_options().expect_err("too many").to_string();
        assert!(
            msg.starts_with("invalid value for '--compression_per_level'"),
            "{msg}"
        );
        let err = parse(&["--compression_per_level=none,snappy"]).expect_err("error");
        assert!(err.to_string().contains("--compression_per_level"), "{err}");
    }

    #[test]
    fn bad_values_are_rejected_naming_the_flag() {
        let err = parse(&["--compression_type=snappy"]).expect_err("error");
        assert!(err.to_string().contains("--compression_type"), "{err}");
        let err = parse(&["--num_levels=abc"]).expect_err("error");
        assert!(err.to_string().contains("--num_levels"), "{err}");
        let e = parse(&["--num_levels=2"]).expect("parses");
        let msg = e.strata_options().expect_err("invalid").to_string();
        assert!(msg.starts_with("invalid value for '--num_levels'"), "{msg}");
        let e = parse(&["--bloom_bits=100"]).expect("parses");
        let msg = e.strata_options().expect_err("invalid").to_string();
        assert!(msg.starts_with("invalid value for '--bloom_bits'"), "{msg}");
        let e = parse(&["--block_size=10"]).expect("parses");
        let msg = e.strata_options().expect_err("invalid").to_string();
        assert!(msg.starts_with("invalid value for '--block_size'"), "{msg}");
        let e = parse(&[
            "--compaction_output_partitioning=aligned",
            "--aligned_variance=0.5",
        ])
        .expect("parses");
        let msg = e.strata_options().expect_err("invalid").to_string();
        assert!(
            msg.starts_with("invalid value for '--aligned_variance'"),
            "{msg}"
        );
    }

    #[test]
    fn compaction_style_defaults_and_names() {
        // RocksDB's own defaults (CompactionOptionsUniversal()), leveled by default.
        let e = parse(&[]).expect("parse");
        assert_eq!(e.compaction_style, CompactionStyleFlag::Level);
        assert_eq!(e.universal_size_ratio, 1);
        assert_eq!(e.universal_min_merge_width, 2);
        assert_eq!(e.universal_max_merge_width, u32::MAX);
        assert_eq!(e.universal_max_size_amplification_percent, 200);
        let e = parse(&[
            "--compaction_style=universal",
            "--universal_size_ratio=10",
            "--universal_min_merge_width=3",
            "--universal_max_merge_width=8",
            "--universal_max_size_amplification_percent=150",
        ])
        .expect("parse");
        assert_eq!(e.compaction_style, CompactionStyleFlag::Universal);
        assert_eq!(
            (
                e.universal_size_ratio,
                e.universal_min_merge_width,
                e.universal_max_merge_width,
                e.universal_max_size_amplification_percent
            ),
            (10, 3, 8, 150)
        );
        // db_bench's numbers.
        for (arg, style) in [
            ("--compaction_style=0", CompactionStyleFlag::Level),
            ("--compaction_style=1", CompactionStyleFlag::Universal),
            ("--compaction_style=level", CompactionStyleFlag::Level),
        ] {
            assert_eq!(parse(&[arg]).expect(arg).compaction_style, style, "{arg}");
        }
        for bad in [
            &["--compaction_style=fifo"][..],
            &["--compaction_style=2"][..],
            &["--universal_max_merge_width=-1"][..],
            &["--universal_size_ratio=4294967296"][..],
        ] {
            let err = parse(bad).expect_err("rejected");
            let flag = bad[0].split('=').next().unwrap_or_default();
            assert!(err.to_string().contains(flag), "{bad:?}: {err}");
        }
    }

    #[test]
    fn strata_refuses_universal_naming_the_flag() {
        let e = parse(&["--compaction_style=universal"]).expect("parse");
        let err = e.strata_options().expect_err("refused");
        assert!(matches!(err, CliError::Usage(_)), "{err:?}");
        let msg = err.to_string();
        assert!(
            msg.starts_with("invalid value for '--compaction_style' with --engine=strata"),
            "{msg}"
        );
        // The checks every engine shares still pass: RocksDB runs universal.
        e.shared_options().expect("shared checks pass");
        // The universal flags alone change nothing for Strata.
        let o = parse(&["--universal_size_ratio=50", "--universal_min_merge_width=5"])
            .expect("parse")
            .strata_options()
            .expect("level is fine");
        assert_eq!(
            o,
            parse(&[]).expect("parse").strata_options().expect("valid")
        );
    }
}
