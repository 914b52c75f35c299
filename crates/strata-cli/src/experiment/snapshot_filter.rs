//! Snapshot filters (Kim et al., "HTAP amplifies I/O in LSM-trees", §VI-C).
//!
//! Shape of the paper's experiment, kept: the key space is loaded; one writer thread
//! keeps updating random keys; a reader takes a snapshot, waits a think time, then does
//! `--lookups` point lookups (and, separately, range scans) at that snapshot. Compared:
//! snapshot filter on/off × bloom filters on/off × uniform/zipfian(0.99) keys × think
//! times. Scaled down: 300 K keys of 256 B with 1 MiB memtables and files (the paper:
//! 100 M keys, 64 MiB), and a writer paced at `--write_rate` so every configuration
//! sees the same number of newer versions (the paper's writer runs unpaced).
//!
//! Each configuration starts from a copy of the same loaded database, and the filter
//! on/off pair runs back to back, alternating which goes first.
//!
//! Reported: mean and p99 lookup latency, tables probed per lookup (tables whose bloom
//! filter or blocks the lookup examined), tables skipped by the snapshot filter, bloom
//! checks and false positives per lookup, blocks read per lookup; for scans, latency and
//! blocks read per scan. The counters are exact; the latencies are medians-free single
//! runs on a noisy 2-core machine and are the secondary evidence.

use super::{append_json, chart, copy_dir, parse_list};
use crate::engine::options::EngineFlags;
use crate::error::{CliError, Result};
use crate::results::Provenance;
use crate::runner::OpStats;
use crate::values::ValueGenerator;
use crate::ycsb::generator::{fnv1a64, Zipfian};
use clap::Args;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use strata::{Db, ReadOptions, StatisticsSnapshot, WriteOptions};

/// `strata experiment snapshot-filter`.
#[derive(Args, Debug, Clone)]
pub struct SnapshotFilterArgs {
    /// Engine flags (sizes, bloom and snapshot filter are set by the experiment).
    /// `--db` is the scratch directory.
    #[command(flatten)]
    pub engine: EngineFlags,
    /// Keys loaded.
    #[arg(long = "keys", default_value_t = 300_000)]
    pub keys: u64,
    /// Value size, bytes.
    #[arg(long = "value_size", default_value_t = 256)]
    pub value_size: usize,
    /// Memtable and target file size, bytes.
    #[arg(long = "file_size", default_value_t = 1 << 20)]
    pub file_size: usize,
    /// Point lookups per configuration.
    #[arg(long = "lookups", default_value_t = 50_000)]
    pub lookups: u64,
    /// Think times between taking the snapshot and the first lookup, seconds.
    #[arg(long = "think", default_value = "0,2,10")]
    pub think: String,
    /// Writer pace, updates per second (0 = as fast as it can).
    #[arg(long = "write_rate", default_value_t = 20_000)]
    pub write_rate: u64,
    /// Key distributions: `uniform`, `zipf` (constant --zipf_const).
    #[arg(long = "dists", default_value = "uniform,zipf")]
    pub dists: String,
    /// Zipfian constant.
    #[arg(long = "zipf_const", default_value_t = 0.99)]
    pub zipf_const: f64,
    /// Bloom bits per key to compare (0 = no bloom filters).
    #[arg(long = "blooms", default_value = "10,0")]
    pub blooms: String,
    /// Scan lengths measured after the longest think time (bloom on, uniform).
    #[arg(long = "scans", default_value = "100,10000,100000")]
    pub scans: String,
    /// Times each filter on/off pair is repeated; the figures reported are medians.
    #[arg(long = "repeats", default_value_t = 3)]
    pub repeats: usize,
    /// Random seed.
    #[arg(long = "seed", default_value_t = 11)]
    pub seed: u64,
    /// JSON-lines output.
    #[arg(
        long = "json",
        default_value = "results/experiment-snapshot-filter.jsonl"
    )]
    pub json: PathBuf,
    /// Chart output directory.
    #[arg(long = "charts", default_value = "docs/experiments")]
    pub charts: PathBuf,
}

/// One configuration's figures.
#[derive(Clone, Debug, Serialize)]
struct Row {
    experiment: &'static str,
    kind: &'static str,
    snapshot_filter: bool,
    bloom_bits: u32,
    dist: String,
    think_secs: f64,
    scan_length: u64,
    operations: u64,
    mean_us: f64,
    p99_us: f64,
    tables_probed_per_op: f64,
    snapshot_skips_per_op: f64,
    bloom_checked_per_op: f64,
    bloom_false_positives_per_op: f64,
    blocks_read_per_op: f64,
    block_cache_misses_per_op: f64,
    writes_during_run: u64,
}

#[derive(Clone, Copy)]
enum Dist {
    Uniform,
    Zipf,
}

/// Picks keys: uniform, or scrambled zipfian (hot keys spread over the key space).
struct KeyPicker {
    n: u64,
    zipf: Option<Zipfian>,
}

impl KeyPicker {
    fn new(dist: Dist, n: u64, theta: f64) -> Self {
        KeyPicker {
            n,
            zipf: matches!(dist, Dist::Zipf).then(|| Zipfian::new(n, theta)),
        }
    }
    fn next(&mut self, rng: &mut SmallRng) -> [u8; 8] {
        let k = match self.zipf.as_mut() {
            Some(z) => fnv1a64(z.next(rng)) % self.n,
            None => rng.random_range(0..self.n),
        };
        k.to_be_bytes()
    }
}

fn options(args: &SnapshotFilterArgs, bloom: u32, filter: bool) -> Result<strata::Options> {
    Ok(args
        .engine
        .strata_options()?
        .with_write_buffer_size(args.file_size)
        .with_target_file_size_base(args.file_size as u64)
        .with_max_bytes_for_level_base(4 * args.file_size as u64)
        .with_every_level(|l| l.with_bloom_bits_per_key(bloom))
        .with_snapshot_filter(filter))
}

/// Loads every key once (random order), settles compactions, closes.
fn load(args: &SnapshotFilterArgs, dir: &Path, bloom: u32) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| CliError::io("remove_dir_all", dir, e))?;
    }
    let db = Db::open(dir, options(args, bloom, true)?)?;
    let mut order: Vec<u64> = (0..args.keys).collect();
    let mut rng = SmallRng::seed_from_u64(args.seed);
    for i in (1..order.len()).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    let mut values = ValueGenerator::new(args.seed, 0.5, args.value_size);
    let wo = WriteOptions::default();
    for k in order {
        db.put(&wo, &k.to_be_bytes(), values.next(args.value_size))?;
    }
    db.wait_for_compactions()?;
    db.close()?;
    Ok(())
}

fn per_op(after: u64, before: u64, ops: u64) -> f64 {
    after.saturating_sub(before) as f64 / ops.max(1) as f64
}

struct Config<'a> {
    bloom: u32,
    filter: bool,
    dist: Dist,
    dist_name: &'a str,
    think: f64,
    scan_length: u64,
}

/// One configuration: copy the loaded db, start the paced writer, snapshot, think,
/// measure.
fn measure(args: &SnapshotFilterArgs, base: &Path, c: &Config<'_>) -> Result<Row> {
    let dir = args.engine.db.join("run");
    copy_dir(base, &dir)?;
    // The measured phase runs on `--device`'s model, if any (the load does not).
    let db = crate::engine::strata::db_builder(&args.engine, &dir)?
        .open(&dir, options(args, c.bloom, c.filter)?)?;
    let stop = AtomicBool::new(false);
    let written = AtomicU64::new(0);
    let result = std::thread::scope(|s| {
        let writer = s.spawn(|| -> Result<()> {
            let mut rng = SmallRng::seed_from_u64(args.seed ^ 0xabc);
            let mut keys = KeyPicker::new(c.dist, args.keys, args.zipf_const);
            let mut values = ValueGenerator::new(args.seed ^ 0xdef, 0.5, args.value_size);
            let wo = WriteOptions::default();
            let start = Instant::now();
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                db.put(&wo, &keys.next(&mut rng), values.next(args.value_size))?;
                n += 1;
                written.store(n, Ordering::Relaxed);
                if args.write_rate > 0 {
                    let due = Duration::from_secs_f64(n as f64 / args.write_rate as f64);
                    if let Some(wait) = due.checked_sub(start.elapsed()) {
                        std::thread::sleep(wait);
                    }
                }
            }
            Ok(())
        });
        let read = reader(args, &db, c);
        stop.store(true, Ordering::Relaxed);
        let w = writer
            .join()
            .map_err(|_| CliError::WorkerPanic("snapshot-filter writer".into()))?;
        w.and(read)
    });
    let writes = written.load(Ordering::Relaxed);
    db.close()?;
    let (stats, ops, before, after) = result?;
    Ok(Row {
        experiment: "snapshot-filter",
        kind: if c.scan_length > 0 { "scan" } else { "lookup" },
        snapshot_filter: c.filter,
        bloom_bits: c.bloom,
        dist: c.dist_name.to_string(),
        think_secs: c.think,
        scan_length: c.scan_length,
        operations: ops,
        mean_us: stats.hist.mean() / 1000.0,
        p99_us: stats.micros_at(0.99),
        tables_probed_per_op: per_op(after.tables_probed, before.tables_probed, ops),
        snapshot_skips_per_op: per_op(
            after.snapshot_filter_skips,
            before.snapshot_filter_skips,
            ops,
        ),
        bloom_checked_per_op: per_op(after.bloom_checked, before.bloom_checked, ops),
        bloom_false_positives_per_op: per_op(
            after.bloom_false_positives,
            before.bloom_false_positives,
            ops,
        ),
        // The lookups' own reads: compactions run beside them.
        blocks_read_per_op: per_op(
            after
                .blocks_read
                .saturating_sub(after.compaction_blocks_read),
            before
                .blocks_read
                .saturating_sub(before.compaction_blocks_read),
            ops,
        ),
        block_cache_misses_per_op: per_op(after.block_cache_misses, before.block_cache_misses, ops),
        writes_during_run: writes,
    })
}

type Measured = (OpStats, u64, StatisticsSnapshot, StatisticsSnapshot);

/// Takes the snapshot, thinks, then runs the lookups or scans at it.
fn reader(args: &SnapshotFilterArgs, db: &Db, c: &Config<'_>) -> Result<Measured> {
    let ro = ReadOptions::default().with_snapshot(db.snapshot());
    std::thread::sleep(Duration::from_secs_f64(c.think));
    let mut rng = SmallRng::seed_from_u64(args.seed ^ 0x123);
    let mut keys = KeyPicker::new(c.dist, args.keys, args.zipf_const);
    let mut stats = OpStats::default();
    let before = db.stats().counters;
    let ops = if let Some(scans) = 200_000u64.checked_div(c.scan_length) {
        let scans = scans.clamp(3, 2000);
        for _ in 0..scans {
            let start = keys.next(&mut rng);
            let t = Instant::now();
            let mut it = db.iter(&ro)?;
            it.seek(&start);
            let mut n = 0;
            while it.valid() && n < c.scan_length {
                n += 1;
                it.next();
            }
            it.status()?;
            stats.record(t, 0);
        }
        scans
    } else {
        for _ in 0..args.lookups {
            let k = keys.next(&mut rng);
            let t = Instant::now();
            let v = db.get(&ro, &k)?;
            stats.record(t, v.map_or(0, |v| v.len()));
        }
        args.lookups
    };
    let after = db.stats().counters;
    Ok((stats, ops, before, after))
}

fn print_row(r: &Row) {
    println!(
        "{:<6} bloom={:<2} {:<7} think={:<4} {}filter={:<5} mean {:>8.2}us p99 {:>8.2}us  probed/op {:>6.2} skipped/op {:>6.2} bloomFP/op {:>6.3} blocks/op {:>7.2}  (writes {})",
        r.kind,
        r.bloom_bits,
        r.dist,
        r.think_secs,
        if r.scan_length > 0 { format!("len={} ", r.scan_length) } else { String::new() },
        r.snapshot_filter,
        r.mean_us,
        r.p99_us,
        r.tables_probed_per_op,
        r.snapshot_skips_per_op,
        r.bloom_false_positives_per_op,
        r.blocks_read_per_op,
        r.writes_during_run
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    crate::compare::median(&mut v).unwrap_or(0.0)
}

/// A row whose figures are the medians of `runs` (same configuration).
fn median_row(runs: &[Row]) -> Option<Row> {
    let first = runs.first()?;
    let m = |f: fn(&Row) -> f64| median(runs.iter().map(f).collect());
    Some(Row {
        mean_us: m(|r| r.mean_us),
        p99_us: m(|r| r.p99_us),
        tables_probed_per_op: m(|r| r.tables_probed_per_op),
        snapshot_skips_per_op: m(|r| r.snapshot_skips_per_op),
        bloom_checked_per_op: m(|r| r.bloom_checked_per_op),
        bloom_false_positives_per_op: m(|r| r.bloom_false_positives_per_op),
        blocks_read_per_op: m(|r| r.blocks_read_per_op),
        block_cache_misses_per_op: m(|r| r.block_cache_misses_per_op),
        writes_during_run: m(|r| r.writes_during_run as f64) as u64,
        ..first.clone()
    })
}

fn compare(off: &Row, on: &Row) {
    let pct = |a: f64, b: f64| if a > 0.0 { 100.0 * (b / a - 1.0) } else { 0.0 };
    println!(
        "  -> filter on vs off: mean latency {:+.1}%, tables probed {:+.1}%, blocks read {:+.1}%",
        pct(off.mean_us, on.mean_us),
        pct(off.tables_probed_per_op, on.tables_probed_per_op),
        pct(off.blocks_read_per_op, on.blocks_read_per_op)
    );
}

/// Runs `strata experiment snapshot-filter`.
///
/// # Errors
/// Engine, I/O and plotting errors; bad lists are usage errors.
pub fn run(args: &SnapshotFilterArgs) -> Result<()> {
    let thinks: Vec<f64> = parse_list(&args.think, "think")?;
    let blooms: Vec<u32> = parse_list(&args.blooms, "blooms")?;
    let scans: Vec<u64> = parse_list(&args.scans, "scans")?;
    let dists: Vec<(Dist, String)> = args
        .dists
        .split(',')
        .map(|d| match d.trim() {
            "uniform" => Ok((Dist::Uniform, "uniform".to_string())),
            "zipf" => Ok((Dist::Zipf, format!("zipf{}", args.zipf_const))),
            other => Err(CliError::Usage(format!(
                "invalid value '{other}' in '--dists'"
            ))),
        })
        .collect::<Result<_>>()?;
    let prov = Provenance::gather();
    let mut rows: Vec<Row> = Vec::new();
    let mut flip = false;
    for &bloom in &blooms {
        let base = args.engine.db.join(format!("base-bloom{bloom}"));
        eprintln!("loading {} keys (bloom {bloom})...", args.keys);
        load(args, &base, bloom)?;
        let mut configs: Vec<(Dist, &str, f64, u64)> = Vec::new();
        for (dist, name) in &dists {
            for &t in &thinks {
                configs.push((*dist, name.as_str(), t, 0));
            }
        }
        if bloom == blooms.first().copied().unwrap_or(10) {
            let longest = thinks.iter().copied().fold(0.0, f64::max);
            for &len in &scans {
                configs.push((Dist::Uniform, "uniform", longest, len));
            }
        }
        for (dist, dist_name, think, scan_length) in configs {
            let mut runs: [Vec<Row>; 2] = [Vec::new(), Vec::new()];
            for _ in 0..args.repeats.max(1) {
                let order = if flip { [true, false] } else { [false, true] };
                flip = !flip;
                for filter in order {
                    let c = Config {
                        bloom,
                        filter,
                        dist,
                        dist_name,
                        think,
                        scan_length,
                    };
                    let row = measure(args, &base, &c)?;
                    print_row(&row);
                    append_json(&args.json, &row, &prov)?;
                    runs[usize::from(filter)].push(row);
                }
            }
            let [off, on] = runs;
            if let (Some(off), Some(on)) = (median_row(&off), median_row(&on)) {
                println!("  median of {} runs each:", args.repeats.max(1));
                print_row(&off);
                print_row(&on);
                compare(&off, &on);
                rows.push(off);
                rows.push(on);
            }
        }
    }
    draw_charts(args, &rows)
}

fn draw_charts(args: &SnapshotFilterArgs, rows: &[Row]) -> Result<()> {
    let series = vec!["filter off".to_string(), "filter on".to_string()];
    let lookups: Vec<&Row> = rows.iter().filter(|r| r.kind == "lookup").collect();
    let mut groups = Vec::new();
    let mut latency = Vec::new();
    let mut probed = Vec::new();
    for r in lookups.iter().filter(|r| !r.snapshot_filter) {
        let on = lookups.iter().find(|x| {
            x.snapshot_filter
                && x.bloom_bits == r.bloom_bits
                && x.dist == r.dist
                && x.think_secs == r.think_secs
        });
        groups.push(format!(
            "bloom{} {} t={}s",
            r.bloom_bits, r.dist, r.think_secs
        ));
        latency.push(vec![Some(r.mean_us), on.map(|x| x.mean_us)]);
        probed.push(vec![
            Some(r.tables_probed_per_op),
            on.map(|x| x.tables_probed_per_op),
        ]);
    }
    chart(
        &args.charts.join("snapshot-filter-latency.svg"),
        "Point lookup mean latency at an old snapshot (us)",
        "mean latency (us)",
        groups.clone(),
        series.clone(),
        latency,
    )?;
    chart(
        &args.charts.join("snapshot-filter-probes.svg"),
        "Tables probed per point lookup",
        "tables probed / lookup",
        groups,
        series.clone(),
        probed,
    )?;
    let scans: Vec<&Row> = rows.iter().filter(|r| r.kind == "scan").collect();
    if scans.is_empty() {
        return Ok(());
    }
    let mut g = Vec::new();
    let mut v = Vec::new();
    for r in scans.iter().filter(|r| !r.snapshot_filter) {
        let on = scans
            .iter()
            .find(|x| x.snapshot_filter && x.scan_length == r.scan_length);
        g.push(format!("scan {}", r.scan_length));
        v.push(vec![Some(r.mean_us), on.map(|x| x.mean_us)]);
    }
    chart(
        &args.charts.join("snapshot-filter-scans.svg"),
        "Range scan mean latency at an old snapshot (us)",
        "mean latency (us)",
        g,
        series,
        v,
    )
}
