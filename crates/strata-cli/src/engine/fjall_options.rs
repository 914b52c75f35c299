//! The settings the fjall adapter derives from [`EngineFlags`], as plain values.
//!
//! Kept outside the feature-gated adapter (like `rocks_stats.rs`) so the mapping and its
//! checks are compiled and tested in every build; `fjall.rs` only hands these values to
//! fjall's builders, and `mapping.rs` describes them in the JSON results.
//!
//! fjall 3 (`fjall` 3.1, `lsm-tree` 3.1) has a fixed tree shape in places where Strata
//! and RocksDB have options: 7 levels, L1 sized as table target size × L0 threshold,
//! write stalls at 20 L0 runs and a halt at 30, a halt at 4 sealed memtables. It has no
//! zstd codec and no size-tiered strategy (`--compaction_style=universal`).
//! These, and values fjall would panic on (block size outside 1 KiB..=1 MiB, fewer
//! than 10 cached files, no worker thread), are usage errors here.

use super::options::{CompactionStyleFlag, CompressionFlag, EngineFlags, TieringFlag};
use crate::error::{CliError, Result};

/// fjall's marker file at the database root (`fjall::file::VERSION_MARKER`).
pub const VERSION_MARKER: &str = "version";
/// fjall's directory of keyspaces (`fjall::file::KEYSPACES_FOLDER`).
pub const KEYSPACES_DIR: &str = "keyspaces";
/// The one keyspace the adapter uses.
pub const KEYSPACE: &str = "default";
/// Levels of every fjall 3 tree ("currently hard coded to 7").
pub const LEVELS: usize = 7;
/// L0 runs from which fjall slows writes down (`Keyspace::local_backpressure`).
pub const L0_STALL_RUNS: usize = 20;
/// L0 runs at which fjall halts writes.
pub const L0_HALT_RUNS: usize = 30;
/// Sealed memtables at which fjall halts writes.
pub const SEALED_MEMTABLE_HALT: usize = 4;

/// A data block codec fjall 3 has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FjallCodec {
    /// Uncompressed.
    None,
    /// LZ4 (fjall's default `lz4` feature).
    Lz4,
}

/// Everything the adapter sets, derived from the flags.
#[derive(Clone, Debug, PartialEq)]
pub struct FjallPlan {
    /// `Builder::cache_size` (`--cache_size`).
    pub cache_bytes: u64,
    /// `KeyspaceCreateOptions::max_memtable_size` (`--write_buffer_size`).
    pub memtable_bytes: u64,
    /// `data_block_size_policy` (`--block_size`), every level.
    pub block_size: u32,
    /// `data_block_restart_interval_policy` (`--block_restart_interval`), every level.
    pub restart_interval: u8,
    /// `data_block_compression_policy`: entry `i` for level `i`, the last for deeper ones.
    pub compression: Vec<FjallCodec>,
    /// Bloom bits per key on every level (`--bloom_bits`); `None` = no filters.
    pub bloom_bits_per_key: Option<f32>,
    /// `Leveled::with_l0_threshold` (`--level0_file_num_compaction_trigger`).
    pub l0_threshold: u8,
    /// `Leveled::with_table_target_size` (`--target_file_size_base`).
    pub table_target_size: u64,
    /// `Leveled::with_level_ratio_policy` (`--max_bytes_for_level_multiplier`).
    pub level_ratio: f32,
    /// `Builder::worker_threads` (`--max_background_jobs`).
    pub worker_threads: usize,
    /// `Builder::max_cached_files` (`--open_files`).
    pub max_cached_files: usize,
    /// fdatasync the journal on every write (`--sync`).
    pub sync: bool,
    /// Refuse to open a missing database (`--create_if_missing=false`), checked by the
    /// adapter: fjall always creates.
    pub create_if_missing: bool,
    /// Refuse to open an existing database (`--error_if_exists`), checked by the adapter.
    pub error_if_exists: bool,
}

fn usage(flag: &str, msg: &str) -> CliError {
    CliError::Usage(format!(
        "invalid value for '--{flag}' with --engine=fjall: {msg}"
    ))
}

fn codec(c: CompressionFlag, flag: &str) -> Result<FjallCodec> {
    match c {
        CompressionFlag::None => Ok(FjallCodec::None),
        CompressionFlag::Lz4 => Ok(FjallCodec::Lz4),
        CompressionFlag::Zstd => Err(usage(flag, "fjall 3 has no zstd codec (none or lz4)")),
    }
}

impl FjallPlan {
    /// The settings `flags` ask for.
    ///
    /// # Errors
    /// [`CliError::Usage`] naming a flag fjall cannot honour (universal compaction, zstd,
    /// out-of-range values fjall would panic on).
    pub fn from_flags(flags: &EngineFlags) -> Result<FjallPlan> {
        if flags.compaction_style != CompactionStyleFlag::Level {
            // lsm-tree 3.1 exports leveled and FIFO strategies only (its size-tiered
            // one is commented out, a stub), so there is nothing to map universal onto.
            return Err(usage(
                "compaction_style",
                "the adapter runs fjall's leveled strategy only (level); universal runs on \
                 --engine=rocksdb",
            ));
        }
        if flags.tiering != TieringFlag::Off {
            return Err(usage(
                "tiering",
                "fjall 3 keeps every table in one folder: it has no tiers (off)",
            ));
        }
        if !flags.max_bytes_for_level_multiplier_additional.is_empty() {
            return Err(usage(
                "max_bytes_for_level_multiplier_additional",
                "the adapter gives fjall one level ratio (--max_bytes_for_level_multiplier)",
            ));
        }
        let compression = if flags.compression_per_level.is_empty() {
            vec![codec(flags.compression_type, "compression_type")?]
        } else {
            flags
                .compression_per_level
                .iter()
                .map(|&c| codec(c, "compression_per_level"))
                .collect::<Result<_>>()?
        };
        let block_size = u32::try_from(flags.block_size)
            .ok()
            .filter(|b| (1024..=1 << 20).contains(b))
            .ok_or_else(|| usage("block_size", "must be in 1024..=1048576"))?;
        let restart_interval = u8::try_from(flags.block_restart_interval)
            .ok()
            .filter(|&r| r > 0)
            .ok_or_else(|| usage("block_restart_interval", "must be in 1..=255"))?;
        let l0_threshold = u8::try_from(flags.level0_file_num_compaction_trigger)
            .ok()
            .filter(|&t| t > 0)
            .ok_or_else(|| usage("level0_file_num_compaction_trigger", "must be in 1..=255"))?;
        if flags.open_files < 10 {
            return Err(usage("open_files", "fjall needs at least 10"));
        }
        if flags.max_background_jobs == 0 {
            return Err(usage("max_background_jobs", "must be at least 1"));
        }
        Ok(FjallPlan {
            cache_bytes: flags.cache_size as u64,
            memtable_bytes: flags.write_buffer_size as u64,
            block_size,
            restart_interval,
            compression,
            bloom_bits_per_key: (flags.bloom_bits > 0).then_some(flags.bloom_bits as f32),
            l0_threshold,
            table_target_size: flags.target_file_size_base,
            level_ratio: flags.max_bytes_for_level_multiplier as f32,
            worker_threads: flags.max_background_jobs,
            max_cached_files: flags.open_files,
            sync: flags.sync,
            create_if_missing: flags.create_if_missing,
            error_if_exists: flags.error_if_exists,
        })
    }

    /// The L1 target fjall derives: table target size × L0 threshold (it has no option
    /// for the level base).
    pub fn l1_target_bytes(&self) -> u64 {
        self.table_target_size
            .saturating_mul(u64::from(self.l0_threshold))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::conformance::default_flags;

    #[test]
    fn reference_shape_maps_onto_fjall() {
        let flags = EngineFlags {
            write_buffer_size: 8 << 20,
            target_file_size_base: 8 << 20,
            max_bytes_for_level_base: 32 << 20,
            bloom_bits: 10,
            cache_size: 64 << 20,
            max_background_jobs: 2,
            ..default_flags()
        };
        let p = FjallPlan::from_flags(&flags).expect("valid");
        assert_eq!(p.memtable_bytes, 8 << 20);
        assert_eq!(p.table_target_size, 8 << 20);
        assert_eq!(p.l0_threshold, 4);
        // 8 MiB tables × 4 L0 files: the reference shape's 32 MiB L1 exactly.
        assert_eq!(p.l1_target_bytes(), flags.max_bytes_for_level_base);
        assert_eq!(p.bloom_bits_per_key, Some(10.0));
        assert_eq!(p.cache_bytes, 64 << 20);
        assert_eq!(p.compression, vec![FjallCodec::None]);
        assert_eq!(p.worker_threads, 2);
        assert_eq!(p.level_ratio, 10.0);
    }

    #[test]
    fn what_fjall_cannot_do_is_a_usage_error_naming_the_flag() {
        let cases: Vec<(EngineFlags, &str)> = vec![
            (
                EngineFlags {
                    compression_type: CompressionFlag::Zstd,
                    ..default_flags()
                },
                "--compression_type",
            ),
            (
                EngineFlags {
                    compression_per_level: vec![CompressionFlag::None, CompressionFlag::Zstd],
                    ..default_flags()
                },
                "--compression_per_level",
            ),
            (
                EngineFlags {
                    compaction_style: CompactionStyleFlag::Universal,
                    ..default_flags()
                },
                "--compaction_style",
            ),
            (
                EngineFlags {
                    block_size: 512,
                    ..default_flags()
                },
                "--block_size",
            ),
            (
                EngineFlags {
                    block_restart_interval: 300,
                    ..default_flags()
                },
                "--block_restart_interval",
            ),
            (
                EngineFlags {
                    level0_file_num_compaction_trigger: 256,
                    ..default_flags()
                },
                "--level0_file_num_compaction_trigger",
            ),
        ];
        for (flags, flag) in cases {
            let msg = FjallPlan::from_flags(&flags)
                .expect_err("rejected")
                .to_string();
            assert!(msg.contains(flag), "{msg}");
        }
        let p = FjallPlan::from_flags(&EngineFlags {
            compression_per_level: vec![CompressionFlag::None, CompressionFlag::Lz4],
            bloom_bits: 0,
            ..default_flags()
        })
        .expect("valid");
        assert_eq!(p.compression, vec![FjallCodec::None, FjallCodec::Lz4]);
        assert_eq!(p.bloom_bits_per_key, None);
    }
}
