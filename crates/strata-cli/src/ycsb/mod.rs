//! `strata ycsb`: the YCSB core workloads on Strata, RocksDB or fjall.
//!
//! Role: the load phase inserts `--records` keys (`user` + zero-padded digits; key
//! numbers split into contiguous ranges over threads, and by default scattered over the
//! key space as YCSB's `insertorder=hashed` does, see [`InsertOrder`]); the run phase
//! performs `--operations`
//! operations of the workload's mix ([`workload`]) with keys from the request
//! distribution ([`generator`]). Each phase prints an overall db_bench-style line and one
//! line per operation type, and appends one JSON record with per-type summaries.
//!
//! Inserts in the run phase take fresh key numbers from a shared counter starting at
//! `--records`; reads choose among keys whose insert has completed (YCSB's acknowledged
//! counter, simplified to a running maximum): every such key under zipfian and latest,
//! the loaded ones only under uniform and hotspot (YCSB's bounds).

pub mod generator;
pub mod workload;

use crate::bench::report;
use crate::bench::workloads::thread_seed;
use crate::engine::options::EngineFlags;
use crate::engine::{self, Direction, EngineStats, KvEngine, Scan};
use crate::error::{CliError, Result};
use crate::keys::KeyFormat;
use crate::results::{self, OpSummary, Provenance, ReportFlags};
use crate::runner::{run_parallel, Budget, OpStats, Progress, PROGRESS_CHUNK};
use crate::settle::{self, Unsettled};
use crate::values::ValueGenerator;
use clap::{Args, ValueEnum};
use generator::KeyChooser;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use workload::{Distribution, Mix, OpKind, WorkloadName};

/// `--phase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Insert the records only.
    Load,
    /// Run the operations on an existing database.
    Run,
    /// Load, then run.
    Both,
}

/// `--insert_order`: how a key number becomes the digits of its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InsertOrder {
    /// Key numbers are scattered by a bijection over the key space, so the load inserts
    /// in random key order and scans cover keys inserted at different times (YCSB's
    /// default, `insertorder=hashed`; a permutation here, so no two numbers collide).
    Hashed,
    /// The digits are the key number: the load inserts in ascending key order.
    Ordered,
}

/// Writes the key of a key number: [`KeyFormat`] after [`InsertOrder`].
#[derive(Clone, Copy, Debug)]
struct KeyMap {
    format: KeyFormat,
    /// `Some(bits)` scatters numbers over `0..2^bits` (the largest power of two the
    /// format can express); `None` keeps them as they are.
    scatter_bits: Option<u32>,
}

impl KeyMap {
    fn new(format: KeyFormat, order: InsertOrder) -> KeyMap {
        let scatter_bits = (order == InsertOrder::Hashed).then(|| format.capacity().ilog2());
        KeyMap {
            format,
            scatter_bits,
        }
    }

    /// Key numbers this map keeps distinct.
    fn capacity(&self) -> u64 {
        match self.scatter_bits {
            Some(bits) => 1u64.checked_shl(bits).unwrap_or(u64::MAX),
            None => self.format.capacity(),
        }
    }

    #[inline]
    fn write(&self, n: u64, buf: &mut Vec<u8>) {
        let digits = match self.scatter_bits {
            Some(bits) => scatter(n, bits),
            None => n,
        };
        self.format.write(digits, buf);
    }
}

/// A bijection of `0..2^bits` (`n` below that): two odd multiplications and xor-shifts,
/// each invertible modulo `2^bits`, so neighbouring numbers land far apart and no two
/// collide (YCSB hashes with FNV and tolerates collisions; a permutation keeps every
/// `found` count exact).
fn scatter(n: u64, bits: u32) -> u64 {
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let shift = (bits / 2).max(1);
    let mut x = n & mask;
    x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15) & mask;
    x ^= x >> shift;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9) & mask;
    x ^= x >> shift;
    x
}

/// `strata ycsb`.
#[derive(Args, Clone, Debug, Serialize)]
pub struct YcsbArgs {
    /// Workload.
    #[arg(long = "workload", value_enum, default_value_t = WorkloadName::A)]
    pub workload: WorkloadName,
    /// Which phase(s) to run.
    #[arg(long = "phase", value_enum, default_value_t = Phase::Both)]
    pub phase: Phase,
    /// Records inserted by the load phase (and assumed present by the run phase).
    #[arg(long = "records", default_value_t = 1_000_000)]
    pub records: u64,
    /// Operations of the run phase.
    #[arg(long = "operations", default_value_t = 1_000_000)]
    pub operations: u64,
    /// Key size in bytes (`user` + zero-padded number).
    #[arg(long = "key_size", default_value_t = 16)]
    pub key_size: usize,
    /// Key order of the load (and of the run phase's inserts).
    #[arg(long = "insert_order", value_enum, default_value_t = InsertOrder::Hashed)]
    pub insert_order: InsertOrder,
    /// Value size in bytes (YCSB's default record is 10 fields of 100 bytes).
    #[arg(long = "value_size", default_value_t = 100)]
    pub value_size: usize,
    /// Fraction of each value that is random.
    #[arg(long = "compression_ratio", default_value_t = 0.5)]
    pub compression_ratio: f64,
    /// Request distribution (default: the workload's).
    #[arg(long = "distribution", value_enum)]
    pub distribution: Option<Distribution>,
    /// Zipfian constant.
    #[arg(long = "zipf_const", default_value_t = generator::ZIPFIAN_CONSTANT)]
    pub zipf_const: f64,
    /// Hot fraction of the key space (hotspot).
    #[arg(long = "hotspot_fraction", default_value_t = 0.05)]
    pub hotspot_fraction: f64,
    /// Fraction of requests to the hot keys (hotspot).
    #[arg(long = "hotspot_op_fraction", default_value_t = 0.95)]
    pub hotspot_op_fraction: f64,
    /// Where the hot keys start, as a fraction of the loaded records (hotspot; 0 = the
    /// first `--hotspot_fraction` of them). Hotspot and uniform draw over the loaded
    /// records only, as YCSB does: a run's inserts neither grow nor slide the hot set;
    /// two runs whose hot ranges do not overlap share no hot key.
    #[arg(long = "hotspot_offset", default_value_t = 0.0)]
    pub hotspot_offset: f64,
    /// Longest scan of workload E (lengths are uniform in 1..=this).
    #[arg(long = "max_scan_length", default_value_t = 100)]
    pub max_scan_length: usize,
    /// After the load phase, wait until compactions are done and report the load's
    /// settled rate too (`ycsb-<workload>/load_settled`: the records over the load's time
    /// plus the wait's), so a load that leaves compaction debt behind is not counted
    /// as finished. The run phase then starts from the settled tree.
    #[arg(long = "settle_load", default_value_t = true, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub settle_load: bool,
    /// Concurrent client threads.
    #[arg(long = "threads", default_value_t = 1)]
    pub threads: usize,
    /// Seed of keys, operations and values.
    #[arg(long = "seed", default_value_t = 301)]
    pub seed: u64,
    /// Engine options.
    #[command(flatten)]
    pub engine: EngineFlags,
    /// Output options.
    #[command(flatten)]
    pub report: ReportFlags,
}

const PREFIX: &[u8] = b"user";

impl YcsbArgs {
    fn keys(&self) -> KeyMap {
        let format = KeyFormat {
            key_size: self.key_size,
            prefix: PREFIX,
        };
        KeyMap::new(format, self.insert_order)
    }

    /// The request distribution in force.
    pub fn distribution(&self) -> Distribution {
        self.distribution
            .unwrap_or_else(|| self.workload.mix().distribution)
    }

    /// Rejects impossible values.
    ///
    /// # Errors
    /// [`CliError::Usage`] naming the flag.
    pub fn validate(&self) -> Result<()> {
        let bad = |flag: &str, why: &str| {
            Err(CliError::Usage(format!(
                "invalid value for '--{flag}': {why}"
            )))
        };
        if self.key_size <= PREFIX.len() {
            return bad("key_size", "must be > 4 (keys are `user` + digits)");
        }
        if self.records == 0 {
            return bad("records", "must be > 0");
        }
        if self.records.saturating_add(self.operations) > self.keys().capacity() {
            return bad("key_size", "too short for --records + --operations keys");
        }
        if !(self.zipf_const > 0.0 && self.zipf_const < 1.0) {
            return bad("zipf_const", "must be in (0, 1)");
        }
        if !(self.hotspot_fraction > 0.0 && self.hotspot_fraction <= 1.0) {
            return bad("hotspot_fraction", "must be in (0, 1]");
        }
        if !(0.0..=1.0).contains(&self.hotspot_op_fraction) {
            return bad("hotspot_op_fraction", "must be in [0, 1]");
        }
        // With slack: 1 - 0.8 rounds below 0.2.
        if !(self.hotspot_offset >= 0.0
            && self.hotspot_offset + self.hotspot_fraction <= 1.0 + 1e-9)
        {
            return bad("hotspot_offset", "must be in [0, 1 - hotspot_fraction]");
        }
        if self.threads == 0 || self.threads > 1024 {
            return bad("threads", "must be in 1..=1024");
        }
        if self.max_scan_length == 0 {
            return bad("max_scan_length", "must be > 0");
        }
        if self.engine.num_column_families == 0 {
            return bad("num_column_families", "must be > 0");
        }
        if self.engine.num_column_families > 1 && self.workload == WorkloadName::E {
            return bad(
                "num_column_families",
                "workload E scans, and scans are not meaningful over several column \
                 families (keys are spread by hash); use --num_column_families=1",
            );
        }
        if !(0.0..=1.0).contains(&self.compression_ratio) {
            return bad("compression_ratio", "must be in [0, 1]");
        }
        Ok(())
    }

    fn chooser(&self) -> KeyChooser {
        match self.distribution() {
            Distribution::Uniform => KeyChooser::Uniform {
                items: self.records,
            },
            Distribution::Zipfian => {
                // YCSB's `expectednewkeys`: twice the inserts the run expects.
                let inserts: f64 = (self.workload.mix().ops.iter())
                    .filter(|(kind, _)| *kind == OpKind::Insert)
                    .map(|(_, p)| p)
                    .sum();
                let expected = (self.operations as f64 * inserts * 2.0) as u64;
                KeyChooser::scrambled_zipfian_in(
                    self.records,
                    self.records.saturating_add(expected),
                    self.zipf_const,
                )
            }
            Distribution::Hotspot => KeyChooser::Hotspot {
                items: self.records,
                set_fraction: self.hotspot_fraction,
                op_fraction: self.hotspot_op_fraction,
                start: (self.records as f64 * self.hotspot_offset) as u64,
            },
            Distribution::Latest => KeyChooser::latest(self.records, self.zipf_const),
        }
    }
}

/// Per-operation-type statistics of one thread.
pub(crate) type PerOp = [OpStats; 5];

/// Runs `strata ycsb`.
///
/// # Errors
/// Bad flags, engine errors, or failure to write results.
pub fn run(args: &YcsbArgs) -> Result<()> {
    args.validate()?;
    let json_path = args.report.json_path("ycsb");
    let prov = Provenance::gather();
    let options = serde_json::to_value(args)?;
    let keep = args.phase == Phase::Run;
    let mapping = engine::mapping::of(&args.engine);
    let engine = engine::open(&args.engine, keep)?;
    println!(
        "Engine: {}  Workload: {}  Distribution: {:?}  Records: {}  Operations: {}  Threads: {}",
        engine.name(),
        args.workload.name(),
        args.distribution(),
        args.records,
        args.operations,
        args.threads
    );
    let mut phases = Vec::new();
    if args.phase != Phase::Run {
        phases.push(("load", load as PhaseFn));
    }
    if args.phase != Phase::Load {
        phases.push(("run", run_ops as PhaseFn));
    }
    for (phase, f) in phases {
        results::reset_peak_rss();
        let name = format!("ycsb-{}/{phase}", args.workload.name());
        let written_before = results::process_write_bytes();
        let start = Instant::now();
        let per_op = f(engine.as_ref(), args)?;
        let seconds = start.elapsed().as_secs_f64();
        let written = settle::written_since(written_before);
        let stats = engine.stats();
        let (overall, found, ops) = report_phase(&name, &per_op, seconds, &stats, args);
        let load = phase == "load";
        let amplification = load
            .then(|| settle::write_amplification(written, overall.bytes))
            .flatten();
        if let Some(a) = amplification {
            println!("process_write_amplification: {a:.2}");
        }
        let record = |name: &str, ops_of: &OpStats, seconds: f64, found, ops, stats: &_| {
            results::record(
                "ycsb",
                name,
                ops_of,
                seconds,
                found,
                ops,
                stats,
                engine.as_ref(),
                options.clone(),
                &mapping,
                &prov,
            )
        };
        if let Some(path) = &json_path {
            let mut r = record(&name, &overall, seconds, found, ops, &stats);
            r.process_write_bytes = written;
            r.process_write_amplification = amplification;
            results::append(path, &r)?;
        }
        if load && args.settle_load {
            let unsettled = Unsettled::after(&name, &overall, seconds, &stats, written_before);
            let start = Instant::now();
            engine.wait_for_compactions()?;
            let settled = unsettled.settled_by(start.elapsed().as_secs_f64());
            settled.print();
            if let Some(path) = &json_path {
                let stats = engine.stats();
                let mut r = record(
                    &settled.name,
                    &settled.stats,
                    settled.seconds,
                    None,
                    BTreeMap::new(),
                    &stats,
                );
                settled.complete(&mut r);
                results::append(path, &r)?;
            }
        }
    }
    engine.close()?;
    if let Some(p) = json_path {
        eprintln!("results appended to {}", p.display());
    }
    Ok(())
}

type PhaseFn = fn(&dyn KvEngine, &YcsbArgs) -> Result<PerOp>;

fn merge_threads(parts: Vec<PerOp>) -> PerOp {
    let mut out = PerOp::default();
    for p in &parts {
        for (o, s) in out.iter_mut().zip(p) {
            o.merge(s);
        }
    }
    out
}

fn report_phase(
    name: &str,
    per_op: &PerOp,
    seconds: f64,
    stats: &EngineStats,
    args: &YcsbArgs,
) -> (OpStats, Option<u64>, BTreeMap<String, OpSummary>) {
    let mut overall = OpStats::default();
    for s in per_op {
        overall.merge(s);
    }
    let reads = &per_op[OpKind::Read.index()];
    let found = (reads.ops > 0).then_some((reads.found, reads.ops));
    println!(
        "{}",
        report::summary_line(name, &overall, seconds, found, None)
    );
    println!("{}", report::percentiles_line(&overall));
    let mut ops = BTreeMap::new();
    for kind in OpKind::ALL {
        let s = &per_op[kind.index()];
        if s.ops == 0 {
            continue;
        }
        let found =
            matches!(kind, OpKind::Read | OpKind::ReadModifyWrite).then_some((s.found, s.ops));
        println!(
            "  {}  {}",
            report::summary_line(kind.name(), s, seconds, found, None),
            report::percentiles_line(s)
        );
        if args.report.histogram {
            print!("{}", report::histogram(s));
        }
        ops.insert(kind.name().to_string(), OpSummary::of(s, seconds));
    }
    if args.report.statistics {
        for (k, v) in &stats.counters {
            println!("{k}: {v}");
        }
    }
    println!("write_amplification: {:.2}", stats.write_amplification());
    (overall, found.map(|(f, _)| f), ops)
}

/// The load phase: `args.records` inserts.
pub(crate) fn load(engine: &dyn KvEngine, args: &YcsbArgs) -> Result<PerOp> {
    let threads = args.threads;
    let n = args.records;
    let label = format!("ycsb-{} load", args.workload.name());
    let (parts, _) = run_parallel(&label, threads, Some(n), |tid, p: &Progress| {
        let Budget::Count(count) = Budget::split(n, threads, tid, 0) else {
            return Ok(PerOp::default());
        };
        let first = (n / threads as u64) * tid as u64 + (tid as u64).min(n % threads as u64);
        let fmt = args.keys();
        let mut values = ValueGenerator::new(
            thread_seed(args.seed, 1 << 20, tid),
            args.compression_ratio,
            args.value_size,
        );
        let mut key = Vec::with_capacity(args.key_size);
        let mut per = PerOp::default();
        let s = &mut per[OpKind::Insert.index()];
        for i in 0..count {
            fmt.write(first + i, &mut key);
            let v = values.next(args.value_size);
            let start = Instant::now();
            engine.put(&key, v)?;
            s.record(start, key.len() + v.len());
            if (i + 1) % PROGRESS_CHUNK == 0 {
                p.add(PROGRESS_CHUNK);
            }
        }
        Ok(per)
    })?;
    Ok(merge_threads(parts))
}

/// YCSB's acknowledged-insert counter: reads may choose only keys below `limit`, and
/// `limit` advances only over a *contiguous* run of completed inserts, so a read never
/// picks a key whose insert another thread has claimed but not finished.
struct AckedCounter {
    limit: AtomicU64,
    done: std::sync::Mutex<std::collections::BTreeSet<u64>>,
}

impl AckedCounter {
    fn new(start: u64) -> Self {
        AckedCounter {
            limit: AtomicU64::new(start),
            done: std::sync::Mutex::new(std::collections::BTreeSet::new()),
        }
    }

    /// Keys `0..limit()` are all inserted.
    fn limit(&self) -> u64 {
        self.limit.load(Ordering::Acquire)
    }

    /// Records that the insert of key number `k` completed.
    fn ack(&self, k: u64) {
        // A poisoned lock only means another worker panicked; the set is still valid.
        let mut done = self
            .done
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        done.insert(k);
        let mut limit = self.limit.load(Ordering::Relaxed);
        while done.remove(&limit) {
            limit += 1;
        }
        self.limit.store(limit, Ordering::Release);
    }
}

fn run_ops(engine: &dyn KvEngine, args: &YcsbArgs) -> Result<PerOp> {
    run_ops_from(engine, args, args.records)
}

/// The run phase, `args.operations` operations, on a database holding keys
/// `0..inserted` (`args.records` after a load; more after an earlier run phase on the
/// same database): inserts continue at `inserted`, and the distribution's shape (a
/// zipfian's scrambling) stays that of `args.records`.
pub(crate) fn run_ops_from(engine: &dyn KvEngine, args: &YcsbArgs, inserted: u64) -> Result<PerOp> {
    let threads = args.threads;
    let mix: Mix = args.workload.mix();
    let next_insert = AtomicU64::new(inserted);
    let acked = AckedCounter::new(inserted);
    let chooser = args.chooser();
    let label = format!("ycsb-{} run", args.workload.name());
    let (parts, _) = run_parallel(&label, threads, Some(args.operations), |tid, p| {
        let Budget::Count(count) = Budget::split(args.operations, threads, tid, 0) else {
            return Ok(PerOp::default());
        };
        let mut rng = SmallRng::seed_from_u64(thread_seed(args.seed, 2 << 20, tid));
        let mut chooser = chooser.clone();
        let mut values = ValueGenerator::new(
            thread_seed(args.seed, 3 << 20, tid),
            args.compression_ratio,
            args.value_size,
        );
        let fmt = args.keys();
        let mut key = Vec::with_capacity(args.key_size);
        let mut per = PerOp::default();
        for i in 0..count {
            let kind = mix.pick(rng.random());
            if kind == OpKind::Insert {
                let k = next_insert.fetch_add(1, Ordering::Relaxed);
                fmt.write(k, &mut key);
                let v = values.next(args.value_size);
                let start = Instant::now();
                engine.put(&key, v)?;
                per[kind.index()].record(start, key.len() + v.len());
                acked.ack(k);
            } else {
                let existing = acked.limit();
                fmt.write(chooser.next(&mut rng, existing), &mut key);
                let s = &mut per[kind.index()];
                match kind {
                    OpKind::Read => {
                        let start = Instant::now();
                        let got = engine.get_len(&key)?;
                        s.record(start, got.map_or(0, |len| key.len() + len));
                        s.found += u64::from(got.is_some());
                    }
                    OpKind::Update => {
                        let v = values.next(args.value_size);
                        let start = Instant::now();
                        engine.put(&key, v)?;
                        s.record(start, key.len() + v.len());
                    }
                    OpKind::ReadModifyWrite => {
                        let v = values.next(args.value_size);
                        let start = Instant::now();
                        let got = engine.get_len(&key)?;
                        engine.put(&key, v)?;
                        s.record(start, 2 * key.len() + v.len() + got.unwrap_or(0));
                        s.found += u64::from(got.is_some());
                    }
                    OpKind::Scan => {
                        let len = rng.random_range(1..=args.max_scan_length);
                        let mut bytes = 0;
                        let start = Instant::now();
                        engine.scan(
                            Scan::new(Some(&key), Direction::Forward, len),
                            &mut |k, v| {
                                bytes += k.len() + v.len();
                                true
                            },
                        )?;
                        s.record(start, bytes);
                    }
                    OpKind::Insert => {}
                }
            }
            if (i + 1) % PROGRESS_CHUNK == 0 {
                p.add(PROGRESS_CHUNK);
            }
        }
        Ok(per)
    })?;
    Ok(merge_threads(parts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        y: YcsbArgs,
    }

    fn parse(args: &[&str]) -> std::result::Result<YcsbArgs, clap::Error> {
        T::try_parse_from(std::iter::once("t").chain(args.iter().copied())).map(|t| t.y)
    }

    #[test]
    fn flags_parse_and_validate() {
        let y = parse(&["--workload=d", "--records=1000", "--threads=2"]).expect("parse");
        assert_eq!(y.distribution(), Distribution::Latest);
        y.validate().expect("valid");
        let y = parse(&["--workload=d", "--distribution=uniform"]).expect("parse");
        assert_eq!(y.distribution(), Distribution::Uniform);
        assert!(parse(&["--workload=z"]).is_err());
        assert!(parse(&["--phase=later"]).is_err());
        let y = parse(&["--zipf_const=1.5"]).expect("parse");
        assert!(matches!(y.validate(), Err(CliError::Usage(m)) if m.contains("--zipf_const")));
        let y = parse(&["--key_size=4"]).expect("parse");
        assert!(matches!(y.validate(), Err(CliError::Usage(m)) if m.contains("--key_size")));
        let y = parse(&["--workload=a"]).expect("parse");
        assert_eq!(y.distribution(), Distribution::Zipfian);
        // Engine flags are shared with bench.
        let y = parse(&["--write_buffer_size=8388608", "--engine=strata"]).expect("parse");
        assert_eq!(y.engine.write_buffer_size, 8 << 20);
    }

    #[test]
    fn scatter_is_a_permutation_and_scatters() {
        for bits in 1..=16u32 {
            let n = 1u64 << bits;
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let x = scatter(i, bits);
                assert!(x < n, "bits {bits}: {i} -> {x}");
                assert!(
                    !std::mem::replace(&mut seen[x as usize], true),
                    "bits {bits}: collision"
                );
            }
        }
        // Neighbouring numbers land far apart (an ordered load would be ascending).
        let ascending = (0..1000u64)
            .filter(|&i| scatter(i + 1, 39) > scatter(i, 39))
            .count();
        assert!(
            (300..700).contains(&ascending),
            "{ascending} of 1000 ascending"
        );
        // The default 16-byte key: 12 digits, scattered over 2^39 numbers.
        let y = parse(&[]).expect("parse");
        assert_eq!(y.keys().capacity(), 1 << 39);
        let y = parse(&["--insert_order=ordered"]).expect("parse");
        assert_eq!(y.keys().capacity(), 1_000_000_000_000);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        y.keys().write(7, &mut a);
        assert_eq!(a, b"user000000000007");
        parse(&[]).expect("parse").keys().write(7, &mut b);
        assert_eq!(b.len(), 16);
        assert_ne!(a, b);
    }

    #[test]
    fn phases_on_memory_engine() {
        use crate::engine::memory::MemoryEngine;
        for (w, order) in ["a", "b", "c", "d", "e", "f", "ro", "rw", "wh", "uh"]
            .into_iter()
            .zip(["hashed", "ordered"].into_iter().cycle())
        {
            for dist in ["uniform", "zipfian", "hotspot", "latest"] {
                let e = MemoryEngine::default();
                let y = parse(&[
                    &format!("--workload={w}"),
                    &format!("--distribution={dist}"),
                    &format!("--insert_order={order}"),
                    "--records=2000",
                    "--operations=3000",
                    "--threads=2",
                ])
                .expect("parse");
                y.validate().expect("valid");
                let loaded = load(&e, &y).expect("load");
                assert_eq!(loaded[OpKind::Insert.index()].ops, 2000);
                assert_eq!(e.len(), 2000);
                let ran = run_ops(&e, &y).expect("run");
                let total: u64 = ran.iter().map(|s| s.ops).sum();
                assert_eq!(total, 3000, "{w} {dist}");
                let reads = &ran[OpKind::Read.index()];
                assert_eq!(reads.found, reads.ops, "{w} {dist}: every read hits");
                let inserts = ran[OpKind::Insert.index()].ops;
                assert_eq!(e.len() as u64, 2000 + inserts);
                for (kind, p) in y.workload.mix().ops {
                    let got = ran[kind.index()].ops as f64 / 3000.0;
                    assert!((got - p).abs() < 0.05, "{w} {dist} {kind:?}: {got} vs {p}");
                }
            }
        }
    }
}
