//! `strata bench` flags: db_bench's names and meanings.
//!
//! Work is a fixed total divided among `--threads` (threads change concurrency, not the
//! amount of work; db_bench instead gives every thread the full count). Fills and
//! `deleterandom` do `--num` operations, reads do `--reads` (`-1` = `--num`);
//! `--duration` > 0 runs each benchmark for that many seconds instead.

use crate::engine::options::{EngineFlags, EngineKind};
use crate::error::{CliError, Result};
use crate::keys::KeyFormat;
use crate::results::ReportFlags;
use clap::{Args, ValueEnum};
use serde::Serialize;

/// One benchmark of `--benchmarks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
#[value(rename_all = "lowercase")]
pub enum Benchmark {
    /// Write `--num` keys in ascending order.
    Fillseq,
    /// Write `--num` uniformly random keys of `[0, num)` (with repeats).
    Fillrandom,
    /// Like fillrandom, meant for an existing database.
    Overwrite,
    /// Point reads of random keys of `[0, num)`; reports how many were found.
    Readrandom,
    /// readrandom's keys read in batches of `--batch_size` through the engine's
    /// batched call (db_bench's multireadrandom: Strata's `multi_get_cf`, RocksDB's
    /// `batched_multi_get_cf`, per-key gets for fjall); time per key.
    Multireadrandom,
    /// Iterate forward over `--reads` entries (pass after pass from the first key, so
    /// `--reads` may exceed the database; or for `--duration` seconds).
    Readseq,
    /// Iterate backward over `--reads` entries (passes from the last key, as readseq).
    Readreverse,
    /// Seek to random keys, then `--seek_nexts` steps.
    Seekrandom,
    /// `--scans` forward scans, each over every key of a random range covering
    /// `--scan_fraction` of the key space `[0, num)` (an end key bounds it).
    Rangescan,
    /// `--threads` readers doing readrandom while one writer overwrites random keys.
    Readwhilewriting,
    /// Each thread mixes random reads and writes, `--readwritepercent` reads in every
    /// hundred operations (db_bench's). With `--transaction_db` each write is a
    /// transaction that reads its key with get_for_update, then writes it.
    Readrandomwriterandom,
    /// Delete `--num` random keys.
    Deleterandom,
    /// Delete keys `[0, --deletes)` one by one, in order.
    Deleteseq,
    /// Delete keys `[0, --deletes)` with range tombstones of `--range_tombstone_width`
    /// keys each (RocksDB's `DeleteRange`); operations are tombstones.
    Deleterange,
    /// Merge `+1` into `--num` random keys (8-byte little-endian counters,
    /// `strata.u64_add`; db_bench's mergerandom with `--merge_operator=uint64add`).
    Mergerandom,
    /// Flush the memtable.
    Flush,
    /// Compact the whole key range to the bottom level.
    Compact,
    /// Wait for pending flushes and compactions.
    Waitforcompaction,
    /// Print the level table and write amplification.
    Stats,
}

impl Benchmark {
    /// The name used in output and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Benchmark::Fillseq => "fillseq",
            Benchmark::Fillrandom => "fillrandom",
            Benchmark::Overwrite => "overwrite",
            Benchmark::Readrandom => "readrandom",
            Benchmark::Multireadrandom => "multireadrandom",
            Benchmark::Readseq => "readseq",
            Benchmark::Readreverse => "readreverse",
            Benchmark::Seekrandom => "seekrandom",
            Benchmark::Rangescan => "rangescan",
            Benchmark::Readwhilewriting => "readwhilewriting",
            Benchmark::Readrandomwriterandom => "readrandomwriterandom",
            Benchmark::Deleterandom => "deleterandom",
            Benchmark::Mergerandom => "mergerandom",
            Benchmark::Deleteseq => "deleteseq",
            Benchmark::Deleterange => "deleterange",
            Benchmark::Flush => "flush",
            Benchmark::Compact => "compact",
            Benchmark::Waitforcompaction => "waitforcompaction",
            Benchmark::Stats => "stats",
        }
    }
}

/// `strata bench`.
#[derive(Args, Clone, Debug, Serialize)]
pub struct BenchArgs {
    /// Comma-separated benchmarks, run in order.
    #[arg(
        long = "benchmarks",
        value_enum,
        value_delimiter = ',',
        default_value = "fillseq,fillrandom,readrandom,readseq,stats"
    )]
    pub benchmarks: Vec<Benchmark>,
    /// Keys in the key space; operations of write benchmarks.
    #[arg(long = "num", default_value_t = 1_000_000)]
    pub num: u64,
    /// Operations of read benchmarks; -1 means --num.
    #[arg(long = "reads", default_value_t = -1, allow_negative_numbers = true)]
    pub reads: i64,
    /// Keys deleted by deleteseq and deleterange; -1 means --num.
    #[arg(long = "deletes", default_value_t = -1, allow_negative_numbers = true)]
    pub deletes: i64,
    /// Keys covered by each range tombstone of deleterange.
    #[arg(long = "range_tombstone_width", default_value_t = 100)]
    pub range_tombstone_width: u64,
    /// Key size in bytes (zero-padded decimal).
    #[arg(long = "key_size", default_value_t = 16)]
    pub key_size: usize,
    /// Value size in bytes.
    #[arg(long = "value_size", default_value_t = 100)]
    pub value_size: usize,
    /// Fraction of each value that is random (the rest repeats it).
    #[arg(long = "compression_ratio", default_value_t = 0.5)]
    pub compression_ratio: f64,
    /// Updates per write batch; keys per batch of multireadrandom.
    #[arg(long = "batch_size", default_value_t = 1)]
    pub batch_size: usize,
    /// Concurrent worker threads.
    #[arg(long = "threads", default_value_t = 1)]
    pub threads: usize,
    /// Seed of keys and values (same seed, same streams, on every engine).
    #[arg(long = "seed", default_value_t = 301)]
    pub seed: u64,
    /// Seconds per benchmark; 0 runs by count.
    #[arg(long = "duration", default_value_t = 0)]
    pub duration: u64,
    /// Scans of rangescan.
    #[arg(long = "scans", default_value_t = 100)]
    pub scans: u64,
    /// The share of the key space `[0, num)` each rangescan scan covers, in (0, 1]
    /// (not query-driven compaction's write-back selectivity).
    #[arg(long = "scan_fraction", default_value_t = 0.01)]
    pub scan_fraction: f64,
    /// Next() steps after each seek of seekrandom.
    #[arg(long = "seek_nexts", default_value_t = 0)]
    pub seek_nexts: usize,
    /// seekrandom seeks backward (seek_for_prev + prev).
    #[arg(long = "reverse_iterator", default_value_t = false, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub reverse_iterator: bool,
    /// readrandomwriterandom: reads per hundred operations (the rest are writes).
    #[arg(long = "readwritepercent", default_value_t = 90)]
    pub readwritepercent: u32,
    /// Caps the key + value bytes per second that the fills, overwrite, deleterandom
    /// and mergerandom write, split evenly over the threads (db_bench's flag of this
    /// name); 0: no cap. For measuring an engine at another engine's ingest rate.
    #[arg(long = "benchmark_write_rate_limit", default_value_t = 0)]
    pub benchmark_write_rate_limit: u64,
    /// Serve the engine's metrics (docs/ARCHITECTURE.md §10.2) in Prometheus' text
    /// format on this loopback address while the benchmarks run, e.g.
    /// 127.0.0.1:9464 (port 0: any free port; the address is printed). Strata only.
    #[arg(long = "prometheus")]
    pub prometheus: Option<std::net::SocketAddr>,
    /// Drive the peer directly (its own calls, no adapter in between) in the timed
    /// loops, to measure the floor the adapter is held to; results are named
    /// `<engine>-floor`. RocksDB or fjall, one column family, no transactions.
    #[arg(long = "floor", default_value_t = false, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub floor: bool,
    /// Engine options.
    #[command(flatten)]
    pub engine: EngineFlags,
    /// Output options.
    #[command(flatten)]
    pub report: ReportFlags,
}

impl BenchArgs {
    /// Keys deleted by deleteseq and deleterange: `--deletes`, or `--num` when negative.
    pub fn delete_count(&self) -> u64 {
        u64::try_from(self.deletes).unwrap_or(self.num)
    }

    /// Read operations: `--reads`, or `--num` when negative.
    pub fn read_count(&self) -> u64 {
        u64::try_from(self.reads).unwrap_or(self.num)
    }

    /// The key format.
    pub fn key_format(&self) -> KeyFormat {
        KeyFormat {
            key_size: self.key_size,
            prefix: b"",
        }
    }

    /// Rejects impossible combinations.
    ///
    /// # Errors
    /// [`CliError::Usage`] naming the flag.
    pub fn validate(&self) -> Result<()> {
        let usage = |m: String| Err(CliError::Usage(m));
        if self.key_size == 0 {
            return usage("invalid value for '--key_size': must be > 0".into());
        }
        if self.num == 0 {
            return usage("invalid value for '--num': must be > 0".into());
        }
        if self.num > self.key_format().capacity() {
            return usage(format!(
                "invalid value for '--key_size': {} digits cannot hold --num={}",
                self.key_size, self.num
            ));
        }
        if self.threads == 0 || self.threads > 1024 {
            return usage("invalid value for '--threads': must be in 1..=1024".into());
        }
        if self.batch_size == 0 {
            return usage("invalid value for '--batch_size': must be > 0".into());
        }
        if self.range_tombstone_width == 0 {
            return usage("invalid value for '--range_tombstone_width': must be > 0".into());
        }
        if self.delete_count() > self.num {
            return usage("invalid value for '--deletes': must be <= --num".into());
        }
        if !(0.0..=1.0).contains(&self.compression_ratio) {
            return usage("invalid value for '--compression_ratio': must be in [0, 1]".into());
        }
        if self.value_size > 64 << 20 {
            return usage("invalid value for '--value_size': must be <= 64 MiB".into());
        }
        if self.readwritepercent > 100 {
            return usage("invalid value for '--readwritepercent': must be in 0..=100".into());
        }
        if !(self.scan_fraction > 0.0 && self.scan_fraction <= 1.0) {
            return usage("invalid value for '--scan_fraction': must be in (0, 1]".into());
        }
        if self.reads < -1 {
            return usage("invalid value for '--reads': must be >= -1".into());
        }
        if self.floor {
            super::floor::check(self)?;
        }
        if let Some(addr) = self.prometheus {
            check_loopback(addr)?;
            if self.engine.engine != EngineKind::Strata {
                return usage(
                    "'--prometheus' serves Strata's metrics: it needs --engine=strata".into(),
                );
            }
            if cfg!(not(feature = "prometheus")) {
                return usage(
                    "'--prometheus' needs a strata built with `--features prometheus` (the \
                     metrics cost every operation, so benchmark builds leave them out)"
                        .into(),
                );
            }
        }
        let families = self.engine.num_column_families;
        if families == 0 {
            return usage("invalid value for '--num_column_families': must be > 0".into());
        }
        let scans = [
            Benchmark::Readseq,
            Benchmark::Readreverse,
            Benchmark::Seekrandom,
            Benchmark::Rangescan,
        ];
        if let Some(b) = self.benchmarks.iter().find(|b| scans.contains(b)) {
            if families > 1 {
                // Keys are spread over the families by a hash: no family holds a key
                // range, and scanning one would read a fraction of the data.
                return usage(format!(
                    "{} scans, and scans are not meaningful over --num_column_families={} \
                     (keys are spread by hash over the families); run it with \
                     --num_column_families=1",
                    b.name(),
                    families
                ));
            }
        }
        Ok(())
    }
}

/// `Ok` iff `addr` is a loopback address (127.0.0.0/8 or ::1).
///
/// # Errors
/// [`CliError::Usage`] naming the flag.
pub fn check_loopback(addr: std::net::SocketAddr) -> Result<()> {
    if addr.ip().is_loopback() {
        return Ok(());
    }
    Err(CliError::Usage(format!(
        "invalid value for '--prometheus': {addr} is not a loopback address \
         (127.0.0.0/8 or [::1]); the endpoint has no authentication"
    )))
}
