//! HotRAP (Qiu et al., "HotRAP: Hot Record Retention and Promotion for LSM-trees with
//! Tiered Storage", §4.1, §4.2 and §4.5): YCSB mixes on a fast and a slow tier, and
//! the ablations of Tables 3–5.
//!
//! Shape of the paper's set-up, kept: records of 24-byte keys (1 KiB records by
//! default), FD : SD = 1 : 10 (the fast budget is 1/11 of the loaded bytes), write
//! buffer and target file FD / 160, L1 FD / 40, a block cache of 0.12% of the data,
//! 16 KiB blocks, 10-bit blooms, direct reads and direct flush and compaction I/O, 16
//! client threads, a run phase of twice the loaded records measured over its final
//! 10%, FD on `nvme` and SD on `gp3` through the device model (both tiers are one
//! disk here). The paper's scale is 110 GB loaded; `--records` sets ours (the default,
//! 60,000 records of 1 KiB, is 1/1800 of it: the ratios hold, the absolute times do
//! not).
//!
//! Modes: `fd` (everything on the fast device: the upper bound), `fat` (RocksDB-fat),
//! `time` (time-aware tiering, the higher anchor; `--time_aware_window`), `hotrap`;
//! and for the ablations `no-retain`, `no-by-compaction`, `no-hotness-check` (and,
//! through `--modes`, `no-hot-aware-pick`). All run
//! in Strata, on the same device model, so their times compare.
//!
//! Reported per cell (workload × distribution × mode): throughput and get latency
//! (p50, p99, p99.9) over the final 10%; the FD hit rate there ((fast + cache) /
//! (fast + cache + slow) table and cache answers of gets; modes without hooks have
//! none); slow-tier table reads per operation; and, over the whole run phase, bytes
//! promoted (by flush and by compaction), retained, and compaction I/O (the ablation
//! tables' columns).

use super::{append_json, chart, counter};
use crate::engine::options::{DbPathFlag, DeviceFlag, EngineFlags, TieringFlag, TIME_AWARE_WINDOW};
use crate::engine::{self, EngineStats};
use crate::error::{CliError, Result};
use crate::results::{Provenance, ReportFlags};
use crate::ycsb::workload::{Distribution, OpKind, WorkloadName};
use crate::ycsb::{self, PerOp, YcsbArgs};
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `strata experiment hotrap`.
#[derive(Args, Debug, Clone)]
pub struct HotrapArgs {
    /// Engine flags (sizes, paths, devices, tiering and background jobs are set by the
    /// experiment; `--time_aware_window` passes through). `--db` is the scratch
    /// directory.
    #[command(flatten)]
    pub engine: EngineFlags,
    /// Records loaded.
    #[arg(long = "records", default_value_t = 60_000)]
    pub records: u64,
    /// Value size in bytes (the paper: 1,000 and 176, with 24-byte keys).
    #[arg(long = "value_size", default_value_t = 1000)]
    pub value_size: usize,
    /// Operations of the run phase, as a multiple of `--records` (the paper: 2).
    #[arg(long = "run_factor", default_value_t = 2.0)]
    pub run_factor: f64,
    /// Client threads.
    #[arg(long = "threads", default_value_t = 16)]
    pub threads: usize,
    /// Background jobs (`max_background_jobs`; the paper's §4.1: 8). Compactions
    /// between device models mostly wait on the models, so more jobs than cores
    /// still overlap them.
    #[arg(long = "background_jobs", default_value_t = 8)]
    pub background_jobs: usize,
    /// Workloads (the paper's Table 2: ro, rw, wh, uh).
    #[arg(long = "workloads", default_value = "ro,rw,wh,uh")]
    pub workloads: String,
    /// Distributions (hotspot is 5% of the keys taking 95% of the requests).
    #[arg(long = "distributions", default_value = "hotspot,zipfian,uniform")]
    pub distributions: String,
    /// Modes of the main matrix.
    #[arg(long = "modes", default_value = "fd,fat,time,hotrap")]
    pub modes: String,
    /// Run the ablations (Tables 3–5) after the matrix.
    #[arg(long = "ablations", default_value_t = true, action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub ablations: bool,
    /// The fast tier's device model (a preset or `latency_us,mib_per_s,iops`).
    #[arg(long = "fd_device", default_value = "nvme")]
    pub fd_device: String,
    /// The slow tier's device model.
    #[arg(long = "sd_device", default_value = "gp3")]
    pub sd_device: String,
    /// Direct reads and direct flush and compaction I/O (the paper's set-up).
    #[arg(long = "direct_io", default_value_t = true, action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub direct_io: bool,
    /// Random seed.
    #[arg(long = "seed", default_value_t = 301)]
    pub seed: u64,
    /// JSON-lines output.
    #[arg(long = "json", default_value = "results/experiment-hotrap.jsonl")]
    pub json: PathBuf,
    /// Chart output (throughput by cell and mode).
    #[arg(long = "chart", default_value = "results/experiment-hotrap.svg")]
    pub chart: PathBuf,
}

/// What runs in a cell's database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Fd,
    Fat,
    Time,
    Hotrap,
    NoRetain,
    NoByCompaction,
    NoHotnessCheck,
    NoHotAwarePick,
}

impl Mode {
    const ALL: [Mode; 8] = [
        Mode::Fd,
        Mode::Fat,
        Mode::Time,
        Mode::Hotrap,
        Mode::NoRetain,
        Mode::NoByCompaction,
        Mode::NoHotnessCheck,
        Mode::NoHotAwarePick,
    ];

    fn name(self) -> &'static str {
        match self {
            Mode::Fd => "fd",
            Mode::Fat => "fat",
            Mode::Time => "time",
            Mode::Hotrap => "hotrap",
            Mode::NoRetain => "no-retain",
            Mode::NoByCompaction => "no-by-compaction",
            Mode::NoHotnessCheck => "no-hotness-check",
            Mode::NoHotAwarePick => "no-hot-aware-pick",
        }
    }

    fn parse(s: &str) -> Result<Mode> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| CliError::Usage(format!("invalid value '{s}' in '--modes'")))
    }
}

/// The set-up's sizes, scaled from the loaded bytes.
#[derive(Clone, Copy, Debug, Serialize)]
struct Shape {
    /// The fast budget: 1/11 of the loaded bytes.
    fd_size: u64,
    /// Write buffer and target file: FD / 160.
    file: u64,
    /// L1: FD / 40.
    l1: u64,
    /// Block cache: 0.12% of the loaded bytes.
    cache: u64,
}

impl Shape {
    fn of(args: &HotrapArgs) -> Shape {
        let loaded = args.records * (KEY_SIZE + args.value_size) as u64;
        let fd_size = loaded / 11;
        Shape {
            fd_size,
            file: (fd_size / 160).max(4 << 10),
            l1: (fd_size / 40).max(4 << 10),
            cache: (loaded / 10_000 * 12).max(64 << 10),
        }
    }
}

/// The paper's key size.
const KEY_SIZE: usize = 24;

/// One result row.
#[derive(Debug, Serialize)]
struct Row {
    experiment: &'static str,
    part: &'static str,
    workload: String,
    distribution: String,
    mode: &'static str,
    records: u64,
    value_size: usize,
    threads: usize,
    background_jobs: usize,
    operations: u64,
    shape: Shape,
    fd_device: String,
    sd_device: String,
    /// Over the final 10% of the run phase.
    window_ops: u64,
    window_seconds: f64,
    ops_per_sec: f64,
    get_p50_us: Option<f64>,
    get_p99_us: Option<f64>,
    get_p999_us: Option<f64>,
    hit_rate: Option<f64>,
    slow_reads_per_op: Option<f64>,
    /// Over the whole run phase.
    promoted_bytes: u64,
    promoted_by_flush_bytes: u64,
    promoted_by_compaction_bytes: u64,
    retained_bytes: u64,
    compaction_bytes: u64,
    /// Inserts the promotion cache refused for being full (its sealed batches
    /// queued, waiting for L0 to drain; whole run phase): where promotion lost
    /// records.
    cache_refused_full: u64,
    /// RALT's hot-set size and limit at the end of the run.
    hot_set_bytes: u64,
    hot_set_limit: u64,
    /// Every figure of the tree hooks (`DbStats::tree_hooks`) at the end of the run
    /// phase, as they stand: counters since the database opened for the load (the
    /// load's compactions count; it makes no gets), gauges now. Empty for modes
    /// without hooks.
    hooks: std::collections::BTreeMap<String, u64>,
    run_seconds: f64,
}

/// Runs `strata experiment hotrap`.
///
/// # Errors
/// Bad flags, engine and I/O errors.
pub fn run(args: &HotrapArgs) -> Result<()> {
    let workloads: Vec<WorkloadName> = list(&args.workloads, "workloads")?;
    let distributions: Vec<Distribution> = list(&args.distributions, "distributions")?;
    let modes = args
        .modes
        .split(',')
        .filter(|m| !m.trim().is_empty())
        .map(|m| Mode::parse(m.trim()))
        .collect::<Result<Vec<_>>>()?;
    if args.records == 0 || args.threads == 0 || args.run_factor.is_nan() || args.run_factor <= 0.0
    {
        return Err(CliError::Usage(
            "invalid value: --records, --threads and --run_factor must be > 0".into(),
        ));
    }
    let prov = Provenance::gather();
    let shape = Shape::of(args);
    println!(
        "HotRAP experiment: {} records of {} B (fast budget {} B, files {} B, L1 {} B, \
         cache {} B), {} threads, FD {} / SD {}",
        args.records,
        KEY_SIZE + args.value_size,
        shape.fd_size,
        shape.file,
        shape.l1,
        shape.cache,
        args.threads,
        args.fd_device,
        args.sd_device
    );
    let mut cells = Vec::new();
    for &w in &workloads {
        for &d in &distributions {
            for &m in &modes {
                cells.push(("matrix", w, d, m));
            }
        }
    }
    if args.ablations {
        for m in [Mode::Hotrap, Mode::NoRetain, Mode::NoByCompaction] {
            cells.push(("table3-5", WorkloadName::Rw, Distribution::Hotspot, m));
        }
        for m in [Mode::Hotrap, Mode::NoHotnessCheck] {
            cells.push(("table4", WorkloadName::Ro, Distribution::Uniform, m));
        }
    }
    println!(
        "{:<9} {:<4} {:<8} {:<17} {:>10} {:>8} {:>8} {:>9} {:>8} {:>10} {:>12} {:>12} {:>12}",
        "part",
        "wl",
        "dist",
        "mode",
        "ops/s",
        "p50 us",
        "p99 us",
        "p99.9 us",
        "hit",
        "slow/op",
        "promoted B",
        "retained B",
        "compact B"
    );
    let mut rows = Vec::new();
    for (part, w, d, m) in cells {
        let row = run_cell(args, shape, (part, w, d, m))?;
        let opt = |v: Option<f64>, digits: usize| {
            v.map_or_else(|| "-".to_string(), |v| format!("{v:.digits$}"))
        };
        println!(
            "{:<9} {:<4} {:<8} {:<17} {:>10.0} {:>8} {:>8} {:>9} {:>8} {:>10} {:>12} {:>12} {:>12}",
            row.part,
            row.workload,
            row.distribution,
            row.mode,
            row.ops_per_sec,
            opt(row.get_p50_us, 0),
            opt(row.get_p99_us, 0),
            opt(row.get_p999_us, 0),
            opt(row.hit_rate.map(|h| h * 100.0), 1),
            opt(row.slow_reads_per_op, 3),
            row.promoted_bytes,
            row.retained_bytes,
            row.compaction_bytes
        );
        append_json(&args.json, &row, &prov)?;
        rows.push(row);
    }
    draw(args, &rows)
}

/// Parses a comma-separated list of clap value names.
fn list<T: ValueEnum>(s: &str, flag: &str) -> Result<Vec<T>> {
    s.split(',')
        .filter(|x| !x.trim().is_empty())
        .map(|x| {
            T::from_str(x.trim(), true)
                .map_err(|_| CliError::Usage(format!("invalid value '{x}' in '--{flag}'")))
        })
        .collect()
}

/// The engine flags of one cell's database under `root`.
fn flags_for(args: &HotrapArgs, shape: Shape, mode: Mode, root: &Path) -> Result<EngineFlags> {
    let mut f = args.engine.clone();
    let fast = root.join("fast");
    f.db = fast.join("db");
    f.use_existing_db = false;
    f.write_buffer_size = shape.file as usize;
    f.target_file_size_base = shape.file;
    f.max_bytes_for_level_base = shape.l1;
    f.max_background_jobs = args.background_jobs;
    f.cache_size = shape.cache as usize;
    f.block_size = 16 << 10;
    f.bloom_bits = 10;
    f.use_direct_reads = args.direct_io;
    f.use_direct_io_for_flush_and_compaction = args.direct_io;
    f.fd_size = shape.fd_size;
    let device = |path_index: usize, model: &str| DeviceFlag {
        path_index,
        model: model.to_string(),
    };
    if mode == Mode::Fd {
        f.tiering = TieringFlag::Off;
        f.db_paths = Vec::new();
        f.device = vec![device(0, &args.fd_device)];
    } else {
        f.db_paths = vec![
            DbPathFlag {
                path: fast,
                target_size: shape.fd_size,
            },
            DbPathFlag {
                path: root.join("slow"),
                target_size: 0,
            },
        ];
        f.device = vec![device(0, &args.fd_device), device(1, &args.sd_device)];
        f.tiering = match mode {
            Mode::Fat => TieringFlag::Fat,
            Mode::Time => TieringFlag::Time,
            _ => TieringFlag::Hotrap,
        };
        f.no_retain = mode == Mode::NoRetain;
        f.no_promote_by_compaction = mode == Mode::NoByCompaction;
        f.no_hotness_check = mode == Mode::NoHotnessCheck;
        f.no_hot_aware_pick = mode == Mode::NoHotAwarePick;
    }
    // The flags of one mode are refused under another: the passed-through window
    // and hot-set settings go only to the mode they tune.
    if f.tiering != TieringFlag::Time {
        f.time_aware_window = TIME_AWARE_WINDOW;
    }
    if f.tiering != TieringFlag::Hotrap {
        (f.hot_set_limit, f.auto_tune, f.no_promote_by_flush) = (0, true, false);
        f.no_hot_aware_pick = false;
    }
    for d in &f.device {
        d.device_model()?;
    }
    Ok(f)
}

/// Loads a fresh database, runs 90% of the operations, then measures the last 10%.
fn run_cell(
    args: &HotrapArgs,
    shape: Shape,
    (part, workload, distribution, mode): (&'static str, WorkloadName, Distribution, Mode),
) -> Result<Row> {
    let root = args.engine.db.join(format!(
        "{}-{}-{}",
        workload.name(),
        distribution_name(distribution),
        mode.name()
    ));
    if root.exists() {
        std::fs::remove_dir_all(&root).map_err(|e| CliError::io("remove_dir_all", &root, e))?;
    }
    for dir in [root.join("fast"), root.join("slow")] {
        std::fs::create_dir_all(&dir).map_err(|e| CliError::io("create_dir_all", &dir, e))?;
    }
    let flags = flags_for(args, shape, mode, &root)?;
    let operations = (args.records as f64 * args.run_factor) as u64;
    let warm_ops = operations - operations / 10;
    let y = YcsbArgs {
        workload,
        phase: ycsb::Phase::Both,
        records: args.records,
        operations: warm_ops,
        key_size: KEY_SIZE,
        insert_order: ycsb::InsertOrder::Hashed,
        value_size: args.value_size,
        compression_ratio: 0.5,
        distribution: Some(distribution),
        zipf_const: crate::ycsb::generator::ZIPFIAN_CONSTANT,
        hotspot_fraction: 0.05,
        hotspot_op_fraction: 0.95,
        hotspot_offset: 0.0,
        max_scan_length: 100,
        // The experiment settles the load itself (below), after a flush.
        settle_load: false,
        threads: args.threads,
        seed: args.seed,
        engine: flags.clone(),
        report: ReportFlags {
            json: None,
            no_json: true,
            histogram: false,
            statistics: false,
        },
    };
    y.validate()?;
    let engine = engine::open(&flags, false)?;
    ycsb::load(engine.as_ref(), &y)?;
    // The load leaves compaction debt (at this scale nothing stalls it: a 200,000-record
    // load left L2 at nine times its target); the paper's long load paces itself, so
    // the run starts from a settled tree here. Without this, a faster mode had less
    // wall time to pay the debt and started its window with a fast tier several times
    // its budget.
    engine.flush()?;
    engine.wait_for_compactions()?;
    let loaded = engine.stats();
    let run_start = Instant::now();
    let warm = ycsb::run_ops_from(engine.as_ref(), &y, args.records)?;
    let inserted = args.records + inserts(&warm);
    let before = engine.stats();
    let window = YcsbArgs {
        operations: operations / 10,
        seed: args.seed + 1,
        ..y.clone()
    };
    let start = Instant::now();
    let measured = ycsb::run_ops_from(engine.as_ref(), &window, inserted)?;
    let window_seconds = start.elapsed().as_secs_f64();
    let run_seconds = run_start.elapsed().as_secs_f64();
    let after = engine.stats();
    engine.close()?;
    Ok(row(
        (part, workload, distribution, mode),
        args,
        shape,
        (&measured, window_seconds, run_seconds),
        (&loaded, &before, &after),
    ))
}

fn inserts(per: &PerOp) -> u64 {
    per[OpKind::Insert.index()].ops
}

fn distribution_name(d: Distribution) -> String {
    d.to_possible_value()
        .map_or_else(|| format!("{d:?}"), |v| v.get_name().to_string())
}

/// A counter's growth between two snapshots (0 where the engine has none).
fn grew(before: &EngineStats, after: &EngineStats, name: &str) -> u64 {
    counter(after, name)
        .unwrap_or(0)
        .saturating_sub(counter(before, name).unwrap_or(0))
}

fn row(
    (part, workload, distribution, mode): (&'static str, WorkloadName, Distribution, Mode),
    args: &HotrapArgs,
    shape: Shape,
    (measured, window_seconds, run_seconds): (&PerOp, f64, f64),
    (loaded, before, after): (&EngineStats, &EngineStats, &EngineStats),
) -> Row {
    let window_ops: u64 = measured.iter().map(|s| s.ops).sum();
    let gets = &measured[OpKind::Read.index()];
    let latency = |q: f64| (gets.ops > 0).then(|| gets.micros_at(q));
    let hooks = |name: &str| grew(before, after, &format!("hooks.{name}"));
    let (fast, cache, slow) = (hooks("gets_fast"), hooks("gets_cache"), hooks("gets_slow"));
    let answered = fast + cache + slow;
    let slow_reads = match (before.paths.get(1), after.paths.get(1)) {
        (Some(b), Some(a)) => Some(a.reads.saturating_sub(b.reads)),
        _ => None,
    };
    let whole = |name: &str| grew(loaded, after, &format!("hooks.{name}"));
    let by_flush = whole("promoted_by_flush_bytes");
    let by_compaction = whole("promoted_by_compaction_bytes");
    let compaction = |s: &EngineStats| s.compaction_bytes_read + s.compaction_bytes_written;
    Row {
        experiment: "hotrap",
        part,
        workload: workload.name().to_string(),
        distribution: distribution_name(distribution),
        mode: mode.name(),
        records: args.records,
        value_size: args.value_size,
        threads: args.threads,
        background_jobs: args.background_jobs,
        operations: (args.records as f64 * args.run_factor) as u64,
        shape,
        fd_device: args.fd_device.clone(),
        sd_device: args.sd_device.clone(),
        window_ops,
        window_seconds,
        ops_per_sec: window_ops as f64 / window_seconds.max(1e-9),
        get_p50_us: latency(0.5),
        get_p99_us: latency(0.99),
        get_p999_us: latency(0.999),
        hit_rate: (answered > 0).then(|| (fast + cache) as f64 / answered as f64),
        slow_reads_per_op: slow_reads.map(|r| r as f64 / window_ops.max(1) as f64),
        promoted_bytes: by_flush + by_compaction,
        promoted_by_flush_bytes: by_flush,
        promoted_by_compaction_bytes: by_compaction,
        retained_bytes: whole("retained_bytes"),
        compaction_bytes: compaction(after).saturating_sub(compaction(loaded)),
        cache_refused_full: whole("cache_refused_full"),
        hot_set_bytes: counter(after, "hooks.ralt_hot_bytes").unwrap_or(0),
        hot_set_limit: counter(after, "hooks.ralt_hot_limit").unwrap_or(0),
        hooks: after
            .counters
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix("hooks.")?.to_string(), *v)))
            .collect(),
        run_seconds,
    }
}

/// One grouped bar chart of the matrix: a group per workload and distribution, a bar
/// per mode.
fn draw(args: &HotrapArgs, rows: &[Row]) -> Result<()> {
    let matrix: Vec<&Row> = rows.iter().filter(|r| r.part == "matrix").collect();
    let mut groups: Vec<String> = Vec::new();
    let mut modes: Vec<&'static str> = Vec::new();
    for r in &matrix {
        let g = format!("{} {}", r.workload, r.distribution);
        if !groups.contains(&g) {
            groups.push(g);
        }
        if !modes.contains(&r.mode) {
            modes.push(r.mode);
        }
    }
    if groups.is_empty() {
        return Ok(());
    }
    let values = groups
        .iter()
        .map(|g| {
            modes
                .iter()
                .map(|m| {
                    matrix
                        .iter()
                        .find(|r| {
                            r.mode == *m && format!("{} {}", r.workload, r.distribution) == *g
                        })
                        .map(|r| r.ops_per_sec)
                })
                .collect()
        })
        .collect();
    chart(
        &args.chart,
        &format!(
            "HotRAP experiment: throughput over the final 10% ({} records of {} B, {} threads, \
             FD {} / SD {})",
            args.records,
            KEY_SIZE + args.value_size,
            args.threads,
            args.fd_device,
            args.sd_device
        ),
        "ops/s",
        groups,
        modes.iter().map(|m| m.to_string()).collect(),
        values,
    )
}

#[cfg(test)]
mod tests;
