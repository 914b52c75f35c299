//! What one run of `experiment dcompaction` is: an operation stream ([`Stream`]) on an
//! engine configuration ([`Config`]), and the engine flags that configuration becomes.
//!
//! Two runs with equal [`Spec`]s are the same measurement (the streams are seeded, the
//! configuration is the whole of the engine's settings), so the driver runs each spec
//! once per invocation and lets parts share it: D1 and D4 are one run (D4 reads after
//! loading the D1 stream), the 6 GB point of the volume part and the 256 B point of
//! the record part are D1, VCT 12 is D1 with the option on.

use super::DcompactionArgs;
use crate::engine::options::{
    CompactionStyleFlag, DeviceFlag, EngineFlags, EngineKind, PartitioningFlag,
};
use std::path::Path;

/// Operations of `--scale=1` (the paper's 24 M is `--scale=3`).
pub const OPS_PER_SCALE: f64 = 8_000_000.0;
/// The paper's data volume (GB) of `--scale=3`: §4.1's D1 and D4, 6 GB of 256 B records.
pub const PAPER_GB_AT_SCALE_3: f64 = 6.0;
/// Key bytes (§4.1: 16-byte keys; zero-padded decimal, so byte order is number order).
pub const KEY_SIZE: usize = 16;
/// The paper's record (value) size, bytes.
pub const PAPER_VALUE_SIZE: usize = 256;

/// One operation stream: `operations` operations over `key_space` keys drawn from a
/// scrambled zipfian, each a write with probability `write_ratio` (else a get), then
/// a read-only phase of `read_ops` gets from the same distribution.
#[derive(Clone, Debug, PartialEq)]
pub struct Stream {
    /// The paper's name for it (`D1`..`D4`), or the sensitivity point (`4GB`, `384B`).
    pub dataset: String,
    /// Operations of the main phase.
    pub operations: u64,
    /// Keys the zipfian ranks are scattered over (the paper: the operation count).
    pub key_space: u64,
    /// Fraction of the main phase's operations that are writes.
    pub write_ratio: f64,
    /// Value bytes of each write.
    pub value_size: usize,
    /// Gets of the read phase after the main phase settles (0: none).
    pub read_ops: u64,
}

impl Stream {
    /// A stream of `operations` over as many keys, with a read phase of `read_phase`
    /// times its operations.
    pub fn new(
        dataset: impl Into<String>,
        operations: u64,
        write_ratio: f64,
        value_size: usize,
        read_phase: f64,
    ) -> Stream {
        let operations = operations.max(1);
        Stream {
            dataset: dataset.into(),
            operations,
            key_space: operations,
            write_ratio,
            value_size,
            read_ops: (operations as f64 * read_phase.max(0.0)).round() as u64,
        }
    }

    /// The paper's data volume (GB) that this stream's stands for at `scale`: D1's
    /// record bytes at any scale stand for the paper's 6 GB, and volume is linear.
    pub fn volume_gb_equivalent(&self, scale: f64) -> f64 {
        let d1 = OPS_PER_SCALE * scale * PAPER_VALUE_SIZE as f64;
        let this = self.operations as f64 * self.value_size as f64;
        PAPER_GB_AT_SCALE_3 * this / d1.max(1.0)
    }
}

/// One engine configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The engine.
    pub engine: EngineKind,
    /// RocksDB universal compaction (else leveled).
    pub universal: bool,
    /// Strata's delayed compaction on.
    pub delayed: bool,
    /// Aligned output partitioning (Strata; else fixed).
    pub aligned: bool,
    /// VCT and VSMT when `delayed`.
    pub vct: usize,
    /// See `vct`.
    pub vsmt: usize,
    /// A `--device` preset under the database (Strata only), else the real disk.
    pub device: Option<&'static str>,
}

impl Config {
    /// Strata with the option off or on (the paper's VCT 12 and VSMT 5).
    pub fn strata(delayed: bool, aligned: bool) -> Config {
        let d = strata::DelayedCompaction::new();
        Config {
            engine: EngineKind::Strata,
            universal: false,
            delayed,
            aligned,
            vct: d.vct,
            vsmt: d.vsmt,
            device: None,
        }
    }

    /// RocksDB, leveled or universal, on the same streams.
    pub fn rocksdb(universal: bool) -> Config {
        Config {
            engine: EngineKind::Rocksdb,
            universal,
            delayed: false,
            ..Config::strata(false, false)
        }
    }

    /// This configuration with VCT `vct`.
    pub fn with_vct(self, vct: usize) -> Config {
        Config { vct, ..self }
    }

    /// This configuration with VSMT `vsmt`.
    pub fn with_vsmt(self, vsmt: usize) -> Config {
        Config { vsmt, ..self }
    }

    /// This configuration on the device preset `device`.
    pub fn on_device(self, device: &'static str) -> Config {
        Config {
            device: Some(device),
            ..self
        }
    }

    /// `fixed` or `aligned` (RocksDB: `fixed`, its only way).
    pub fn partitioning(&self) -> &'static str {
        if self.aligned && self.engine == EngineKind::Strata {
            "aligned"
        } else {
            "fixed"
        }
    }

    /// A short name for tables and charts: `strata off fixed`, `strata dC aligned`,
    /// `rocksdb leveled`; VCT and VSMT when they are not the paper's.
    pub fn label(&self) -> String {
        match self.engine {
            EngineKind::Strata => {
                let d = strata::DelayedCompaction::new();
                let mut s = format!(
                    "strata {} {}",
                    if self.delayed { "dC" } else { "off" },
                    self.partitioning()
                );
                if self.delayed && (self.vct, self.vsmt) != (d.vct, d.vsmt) {
                    s.push_str(&format!(" vct{} vsmt{}", self.vct, self.vsmt));
                }
                s
            }
            _ if self.universal => "rocksdb universal".into(),
            _ => "rocksdb leveled".into(),
        }
    }
}

/// One run: a stream on a configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// The operations.
    pub stream: Stream,
    /// The engine settings.
    pub config: Config,
}

/// Block cache bytes for `stream`: 1/8 of its records' bytes (at least 1 MiB).
pub fn cache_bytes(stream: &Stream) -> usize {
    let data = stream.operations as f64 * (KEY_SIZE + stream.value_size) as f64;
    ((data / 8.0) as usize).max(1 << 20)
}

/// The engine flags of `spec`, with the database in `db`: `--memtable_size`
/// memtables, files half that, L1 two and a half times (the paper's 4 MiB, 2 MiB,
/// 10 MiB), fanout 10, direct I/O (unless `--direct_io=false`), the block cache of
/// [`cache_bytes`]; everything else as `args.engine` says.
pub fn engine_flags(args: &DcompactionArgs, spec: &Spec, db: &Path) -> EngineFlags {
    let c = &spec.config;
    let memtable = args.memtable_size;
    let mut f = args.engine.clone();
    f.db = db.to_path_buf();
    f.engine = c.engine;
    f.use_existing_db = false;
    f.write_buffer_size = memtable;
    f.target_file_size_base = (memtable / 2).max(1) as u64;
    f.max_bytes_for_level_base = (memtable as u64).saturating_mul(5) / 2;
    f.max_bytes_for_level_multiplier = 10.0;
    f.use_direct_reads = args.direct_io;
    f.use_direct_io_for_flush_and_compaction = args.direct_io;
    f.cache_size = cache_bytes(&spec.stream);
    f.compaction_style = if c.universal {
        CompactionStyleFlag::Universal
    } else {
        CompactionStyleFlag::Level
    };
    f.compaction_output_partitioning = if c.aligned {
        PartitioningFlag::Aligned
    } else {
        PartitioningFlag::Fixed
    };
    f.delayed_compaction = c.delayed;
    // The experiment reports RocksDB's stall time and WAL bytes: tickers only.
    f.rocksdb_statistics = true;
    f.vct = c.vct;
    f.vsmt = c.vsmt;
    if let Some(model) = c.device {
        f.device = vec![DeviceFlag {
            path_index: 0,
            model: model.to_string(),
        }];
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_three_is_the_papers_six_gigabytes() {
        let s = Stream::new("D1", (OPS_PER_SCALE * 3.0) as u64, 1.0, 256, 1.0);
        assert!((s.volume_gb_equivalent(3.0) - 6.0).abs() < 1e-9);
        // Half the records, twice the size: D1's volume at scale 1.
        let s = Stream::new("x", (OPS_PER_SCALE * 0.5) as u64, 1.0, 512, 0.0);
        assert!((s.volume_gb_equivalent(1.0) - 6.0).abs() < 1e-9);
        let s = Stream::new(
            "4GB",
            (OPS_PER_SCALE * 0.05 * 4.0 / 6.0) as u64,
            1.0,
            256,
            0.0,
        );
        assert!((s.volume_gb_equivalent(0.05) - 4.0).abs() < 1e-4);
        assert_eq!(s.read_ops, 0);
        assert_eq!(s.key_space, s.operations);
    }

    #[test]
    fn labels_name_what_differs_from_the_paper() {
        assert_eq!(Config::strata(false, false).label(), "strata off fixed");
        assert_eq!(Config::strata(true, true).label(), "strata dC aligned");
        assert_eq!(
            Config::strata(true, false).with_vct(4).label(),
            "strata dC fixed vct4 vsmt5"
        );
        assert_eq!(Config::rocksdb(true).label(), "rocksdb universal");
        assert_eq!(Config::rocksdb(false).partitioning(), "fixed");
    }
}
