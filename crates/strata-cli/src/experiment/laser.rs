//! LASER's cost-model validation (Saxena et al., "Real-Time LSM-Trees for HTAP
//! Workloads", §7.1, Figure 7): for tables whose levels below L0 hold equi-width
//! column groups of each size, the blocks a point read, a scan and compaction really
//! touch, beside what the model (`strata::table::cost`) predicts for that tree.
//!
//! Shape of the paper's experiment, kept: the narrow table (an 8-byte key and 30 ×
//! i32, T = 2, levels 0..=7, L0 rows, cg_size ∈ {1, 2, 3, 6, 15, 30}) and the wide one
//! (100 × i32, T = 10, levels 0..=4, cg_size ∈ {1, 4, 10, 100}); uniformly spread
//! keys; point reads and scans projecting the first `k` columns; write amplification
//! measured as the paper measures it, rows loaded into L0 with compaction off, then
//! compacted until no level is over its target. Scaled down: the paper loads 400 M
//! narrow and 200 M wide rows; here `--rows` (default 200,000), with the level base
//! sized so the data reaches the last level.
//!
//! Counted exactly: data blocks read by the foreground (a one-byte block cache, so
//! every data block a read needs is one miss, and index and filter blocks, held by
//! each open table, are never counted), and compaction bytes written. The model is
//! given the measured tree: `P_i`, the share of the rows each level holds, from its
//! runs' entries, and `B_ji` from each run's entries and bytes.

use super::{append_json, chart, parse_list};
use crate::error::{CliError, Result};
use crate::results::Provenance;
use clap::Args;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use strata::env::{DeviceFs, DeviceModel, PosixFs};
use strata::table::cost::{groups_needed, TreeShape};
use strata::table::{Layout, RunInfo, Schema, Table, Value};
use strata::{Db, Options, ReadOptions, WriteOptions};

/// `strata experiment laser`.
#[derive(Args, Debug, Clone)]
pub struct LaserArgs {
    /// Scratch directory (each design's database is made and removed under it).
    #[arg(long = "db", default_value = "/tmp/strata-experiment-laser")]
    pub db: PathBuf,
    /// `narrow` (30 columns, T = 2, 8 levels) or `wide` (100 columns, T = 10, 5).
    #[arg(long = "table", default_value = "narrow")]
    pub table: String,
    /// Rows loaded.
    #[arg(long = "rows", default_value_t = 200_000)]
    pub rows: u64,
    /// Group sizes (equi-width at every level below L0); default the paper's.
    #[arg(long = "cg_sizes")]
    pub cg_sizes: Option<String>,
    /// Projection sizes `k` (the first k columns); default a spread over 1..=c.
    #[arg(long = "projections")]
    pub projections: Option<String>,
    /// Point reads per projection size.
    #[arg(long = "gets", default_value_t = 2000)]
    pub gets: u64,
    /// Scans per projection size.
    #[arg(long = "scans", default_value_t = 20)]
    pub scans: u64,
    /// A scan's share of the rows.
    #[arg(long = "scan_fraction", default_value_t = 0.01)]
    pub scan_fraction: f64,
    /// Data block size, bytes.
    #[arg(long = "block_size", default_value_t = 4096)]
    pub block_size: usize,
    /// Random seed.
    #[arg(long = "seed", default_value_t = 7)]
    pub seed: u64,
    /// A device model the reads run on (`nvme`, `sata-ssd`, `gp3`, `hdd` or
    /// `LATENCY_US,MIB_PER_S,IOPS`; docs/devices.md), so latencies are the device's;
    /// loading and compaction run without it. Block counts do not depend on it.
    #[arg(long = "device")]
    pub device: Option<String>,
    /// Read with direct I/O (`use_direct_reads`), past the page cache.
    #[arg(long = "direct_reads", default_value_t = false)]
    pub direct_reads: bool,
    /// JSON-lines output.
    #[arg(long = "json", default_value = "results/experiment-laser.jsonl")]
    pub json: PathBuf,
    /// Chart output directory.
    #[arg(long = "charts", default_value = "docs/experiments")]
    pub charts: PathBuf,
}

/// The table's shape: columns, size ratio, deepest level.
#[derive(Clone, Copy, Debug)]
struct Shape {
    columns: usize,
    size_ratio: f64,
    last_level: usize,
}

/// One measurement beside its prediction.
#[derive(Clone, Debug, Serialize)]
struct Row {
    experiment: &'static str,
    table: String,
    rows: u64,
    cg_size: usize,
    /// `point`, `scan` or `write`.
    measure: &'static str,
    /// The projection size (0 for `write`).
    k: usize,
    /// Point and scan: data blocks per operation; write: blocks written per row.
    measured_blocks: f64,
    model_blocks: f64,
    /// measured / model.
    ratio: f64,
    /// Scans: the model plus one block per run read (a scan's range starts and ends
    /// inside blocks, which Eq. 6 leaves out); else the model.
    model_with_ends: f64,
    /// Point and scan: microseconds per operation; write: seconds compacting.
    latency: f64,
    /// The device model the reads ran on (`none`: this machine's disk).
    device: String,
    /// Whether reads used direct I/O.
    direct_reads: bool,
    /// Scans: rows per scan.
    rows_per_op: f64,
    /// Per level (0..=L): the share of the rows it holds.
    level_shares: Vec<f64>,
}

/// Scrambles `i` into a key spread uniformly over u64 (a bijection: no two rows share
/// a key).
fn key_of(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn engine<T>(r: strata::Result<T>) -> Result<T> {
    r.map_err(CliError::from)
}

/// Options for the tree: `T`, levels `0..=L`, the level base so `rows` fill it, and
/// L0's triggers (`load`: never compact).
fn options(args: &LaserArgs, shape: Shape, load: bool) -> Options {
    let row_bytes = 8 + 6 * shape.columns as u64 + 24;
    let data = args.rows.saturating_mul(row_bytes);
    let levels_span: f64 = (0..shape.last_level)
        .map(|i| shape.size_ratio.powi(i as i32))
        .sum();
    let base = ((data as f64 / levels_span) as u64).max(256 << 10);
    let trigger = if load { 1 << 20 } else { 4 };
    let mut o = Options::default()
        .with_create_if_missing(true)
        .with_num_levels(shape.last_level + 1)
        .with_max_bytes_for_level_multiplier(shape.size_ratio)
        .with_max_bytes_for_level_base(base)
        .with_target_file_size_base((base / 4).clamp(256 << 10, 8 << 20))
        // At least 8 memtables' worth of rows, so L0 is over its trigger after the
        // load and compaction starts by itself.
        .with_write_buffer_size(((data / 8) as usize).clamp(64 << 10, 4 << 20))
        .with_level0_file_num_compaction_trigger(trigger);
    o.level0_slowdown_writes_trigger = trigger.max(20);
    o.level0_stop_writes_trigger = trigger.max(36);
    o.with_every_level(|l| l.with_block_size(args.block_size))
}

/// The layout of equi-width groups of `cg` columns below L0.
fn layout(columns: usize, cg: usize) -> Result<Layout> {
    let widths: Vec<String> = (0..columns)
        .step_by(cg.max(1))
        .map(|from| (cg.min(columns - from)).to_string())
        .collect();
    let below = if cg >= columns {
        "row".to_owned()
    } else {
        widths.join(",")
    };
    engine(Layout::parse(&format!("row;{below}"), columns))
}

/// Per level, the share of the rows it holds (a level's runs each hold every row of
/// the level: the largest run's entries).
fn shares(runs: &[RunInfo], levels: usize) -> Vec<f64> {
    let mut per = vec![0u64; levels];
    for r in runs {
        if let Some(p) = per.get_mut(r.level) {
            *p = (*p).max(r.entries);
        }
    }
    let total: u64 = per.iter().sum();
    per.iter()
        .map(|&e| e as f64 / total.max(1) as f64)
        .collect()
}

/// The groups of each level, as the model takes them.
fn groups_of(runs: &[RunInfo], level: usize) -> Vec<Vec<u32>> {
    runs.iter()
        .filter(|r| r.level == level)
        .map(|r| {
            r.columns
                .iter()
                .filter_map(|&c| u32::try_from(c).ok())
                .collect()
        })
        .collect()
}

/// Model: data blocks per point read of the first `k` columns (Eq. 5 at the level
/// holding the key, weighted by the share of rows each level holds).
fn model_point(runs: &[RunInfo], shares: &[f64], k: usize) -> f64 {
    let projection: Vec<u32> = (0..k as u32).collect();
    shares
        .iter()
        .enumerate()
        .map(|(level, p)| p * groups_needed(&groups_of(runs, level), &projection) as f64)
        .sum()
}

/// Model: data blocks per scan of `s` rows of the first `k` columns (Eq. 6, with
/// `s_i` from the level shares and `1/B_ji` from each run's entries and bytes), and
/// the runs it reads.
fn model_scan(runs: &[RunInfo], shares: &[f64], s: f64, k: usize, block: usize) -> (f64, f64) {
    let read: Vec<&RunInfo> = runs
        .iter()
        .filter(|r| r.columns.iter().any(|&c| c < k))
        .collect();
    let blocks = read
        .iter()
        .map(|r| {
            let b = r.entries as f64 * block as f64 / r.bytes.max(1) as f64;
            s * shares.get(r.level).copied().unwrap_or(0.0) / b.max(1e-9)
        })
        .sum();
    (blocks, read.len() as f64)
}

/// Runs `strata experiment laser`.
///
/// # Errors
/// Usage errors, engine and I/O errors.
pub fn run(args: &LaserArgs) -> Result<()> {
    let prov = Provenance::gather();
    let (shape, default_cg, default_k) = match args.table.as_str() {
        "narrow" => (
            Shape {
                columns: 30,
                size_ratio: 2.0,
                last_level: 7,
            },
            "1,2,3,6,15,30",
            "1,2,3,5,10,15,20,25,30",
        ),
        "wide" => (
            Shape {
                columns: 100,
                size_ratio: 10.0,
                last_level: 4,
            },
            "1,4,10,100",
            "1,2,5,10,20,40,60,80,100",
        ),
        t => return Err(CliError::Usage(format!("--table={t}: narrow or wide"))),
    };
    let cgs: Vec<usize> = parse_list(args.cg_sizes.as_deref().unwrap_or(default_cg), "cg_sizes")?;
    let ks: Vec<usize> = parse_list(
        args.projections.as_deref().unwrap_or(default_k),
        "projections",
    )?;
    if let Some(bad) = cgs
        .iter()
        .chain(&ks)
        .find(|&&x| x == 0 || x > shape.columns)
    {
        return Err(CliError::Usage(format!(
            "{bad}: group and projection sizes are 1..={}",
            shape.columns
        )));
    }
    println!(
        "LASER Figure 7 ({} table): {} rows, {} columns, T = {}, levels 0..={}, {} B blocks; \
         reads on device {}{}",
        args.table,
        args.rows,
        shape.columns,
        shape.size_ratio,
        shape.last_level,
        args.block_size,
        args.device
            .as_deref()
            .unwrap_or("none (this machine's disk)"),
        if args.direct_reads {
            ", direct I/O"
        } else {
            ", through the page cache"
        }
    );
    let mut rows = Vec::new();
    for &cg in &cgs {
        for row in one_design(args, shape, cg, &ks)? {
            println!(
                "cg_size={:>3} {:<5} k={:>3}: measured {:>10.3} model {:>10.3} ({:.2}x) \
                 with ends {:>10.3} ({:.2}x) {:>9.1} {}",
                row.cg_size,
                row.measure,
                row.k,
                row.measured_blocks,
                row.model_blocks,
                row.ratio,
                row.model_with_ends,
                row.measured_blocks / row.model_with_ends.max(1e-12),
                row.latency,
                if row.measure == "write" { "s" } else { "us/op" }
            );
            append_json(&args.json, &row, &prov)?;
            rows.push(row);
        }
    }
    charts(args, &cgs, &ks, &rows)
}

/// Loads, compacts and reads one design; its rows.
fn one_design(args: &LaserArgs, shape: Shape, cg: usize, ks: &[usize]) -> Result<Vec<Row>> {
    let dir = args.db.join(format!("{}-cg{cg}", args.table));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| CliError::io("remove_dir_all", &dir, e))?;
    }
    let c = shape.columns;
    let schema_text: Vec<String> = std::iter::once("id:u64".to_owned())
        .chain((1..=c).map(|i| format!("a{i}:i32")))
        .collect();
    let schema = engine(Schema::parse(&schema_text.join(",")))?;
    // Load into L0 with compaction off.
    let db = engine(Db::open(&dir, options(args, shape, true)))?;
    let t = engine(Table::create(&db, "t", schema, layout(c, cg)?))?;
    let wo = WriteOptions::default();
    let mut rng = SmallRng::seed_from_u64(args.seed);
    for i in 0..args.rows {
        let row: Vec<Value> = (0..c).map(|_| Value::I32(rng.random())).collect();
        engine(t.insert(&wo, &Value::U64(key_of(i)), &row))?;
    }
    engine(db.flush())?;
    drop(t);
    engine(db.close())?;
    // Compact until no level is over its target. The table's family is listed with
    // the new options each time: unlisted, it would keep those it recorded at load.
    let o = options(args, shape, false);
    let db = engine(Db::open_cf(&dir, o.clone(), &[("t", o.cf_options())]))?;
    let before = db.stats().counters.compaction_bytes_written;
    let started = Instant::now();
    engine(db.wait_for_compactions())?;
    let compact_secs = started.elapsed().as_secs_f64();
    let written = db.stats().counters.compaction_bytes_written - before;
    engine(db.close())?;
    // Read with a one-byte block cache: every data block a read needs is a miss.
    let mut o = options(args, shape, false);
    o.block_cache_capacity = 1;
    o.use_direct_reads = args.direct_reads;
    let builder = match &args.device {
        None => Db::builder(),
        Some(model) => {
            let model: DeviceModel = model
                .parse()
                .map_err(|e| CliError::Usage(format!("--device={model}: {e}")))?;
            let fs = DeviceFs::new(Arc::new(PosixFs)).with_device(dir.clone(), model);
            Db::builder().file_system(Arc::new(fs))
        }
    };
    let db = engine(builder.open_cf(&dir, o.clone(), &[("t", o.cf_options())]))?;
    let t = engine(Table::open(&db, "t"))?;
    let runs = t.runs();
    let level_shares = shares(&runs, shape.last_level + 1);
    let model_shape = TreeShape {
        size_ratio: shape.size_ratio,
        last_level: shape.last_level,
        row_entries_per_block: row_entries_per_block(&runs, args.block_size, c),
        columns: c,
    };
    // Eq. 4 over the design's levels, as the paper draws it.
    let groups_per_level = vec![c.div_ceil(cg); shape.last_level];
    let base = Row {
        experiment: "laser-fig7",
        table: args.table.clone(),
        rows: args.rows,
        cg_size: cg,
        measure: "write",
        k: 0,
        measured_blocks: written as f64 / args.block_size as f64 / args.rows.max(1) as f64,
        model_blocks: model_shape.write_cost(&groups_per_level),
        ratio: 0.0,
        model_with_ends: 0.0,
        latency: compact_secs,
        device: args.device.clone().unwrap_or_else(|| "none".into()),
        direct_reads: args.direct_reads,
        rows_per_op: 0.0,
        level_shares: level_shares.clone(),
    };
    let mut out = vec![base.clone()];
    let ro = ReadOptions::default();
    let misses = || db.stats().counters.block_cache_misses;
    let s = args.rows as f64 * args.scan_fraction;
    let span = (u64::MAX as f64 * args.scan_fraction) as u64;
    for &k in ks {
        let projection: Vec<usize> = (0..k).collect();
        let mut rng = SmallRng::seed_from_u64(args.seed ^ k as u64);
        let (m0, started) = (misses(), Instant::now());
        for _ in 0..args.gets {
            let key = Value::U64(key_of(rng.random_range(0..args.rows)));
            if engine(t.get(&ro, &key, &projection))?.is_none() {
                return Err(CliError::BadInput(format!("{key} lost")));
            }
        }
        let gets = args.gets.max(1) as f64;
        out.push(Row {
            measure: "point",
            k,
            measured_blocks: (misses() - m0) as f64 / gets,
            model_blocks: model_point(&runs, &level_shares, k),
            latency: started.elapsed().as_secs_f64() * 1e6 / gets,
            ..base.clone()
        });
        let (m0, started) = (misses(), Instant::now());
        let mut seen = 0u64;
        for _ in 0..args.scans {
            let from = rng.random_range(0..u64::MAX - span);
            let (lo, hi) = (Value::U64(from), Value::U64(from + span));
            for row in engine(t.scan(&ro, (Some(&lo), Some(&hi)), &projection, false))? {
                engine(row)?;
                seen += 1;
            }
        }
        let scans = args.scans.max(1) as f64;
        let (model, runs_read) = model_scan(&runs, &level_shares, s, k, args.block_size);
        out.push(Row {
            measure: "scan",
            k,
            measured_blocks: (misses() - m0) as f64 / scans,
            model_blocks: model,
            model_with_ends: model + runs_read,
            latency: started.elapsed().as_secs_f64() * 1e6 / scans,
            rows_per_op: seen as f64 / scans,
            ..base.clone()
        });
    }
    drop(t);
    engine(db.close())?;
    std::fs::remove_dir_all(&dir).map_err(|e| CliError::io("remove_dir_all", &dir, e))?;
    for r in &mut out {
        r.ratio = r.measured_blocks / r.model_blocks.max(1e-12);
        if r.measure != "scan" {
            r.model_with_ends = r.model_blocks;
        }
    }
    Ok(out)
}

/// `B`: entries per block of a row run of `c` columns, from the whole-row runs
/// written (else from a group run, scaled by Eq. 3 back to a row's width).
fn row_entries_per_block(runs: &[RunInfo], block: usize, c: usize) -> f64 {
    let per_block = |r: &RunInfo| r.entries as f64 * block as f64 / r.bytes.max(1) as f64;
    runs.iter()
        .find(|r| r.columns.len() == c)
        .map(per_block)
        .or_else(|| {
            runs.first()
                .map(|r| per_block(r) * (1 + r.columns.len()) as f64 / (1 + c) as f64)
        })
        .unwrap_or(1.0)
}

/// The charts: blocks per point read and per scan by projection size, one bar per
/// design, measured beside the model; write blocks per row by design.
fn charts(args: &LaserArgs, cgs: &[usize], ks: &[usize], rows: &[Row]) -> Result<()> {
    let find = |cg: usize, measure: &str, k: usize| {
        rows.iter()
            .find(|r| r.cg_size == cg && r.measure == measure && r.k == k)
    };
    let series: Vec<String> = cgs
        .iter()
        .flat_map(|cg| [format!("cg={cg}"), format!("cg={cg} model")])
        .collect();
    for (measure, title) in [
        ("point", "data blocks per point read"),
        ("scan", "data blocks per scan"),
    ] {
        // values[k][design, measured then model]
        let values = ks
            .iter()
            .map(|&k| {
                cgs.iter()
                    .flat_map(|&cg| {
                        let r = find(cg, measure, k);
                        [r.map(|r| r.measured_blocks), r.map(|r| r.model_blocks)]
                    })
                    .collect()
            })
            .collect();
        chart(
            &chart_path(&args.charts, &args.table, measure),
            &format!(
                "LASER Fig. 7 ({} table): {title} by projection size k",
                args.table
            ),
            "blocks",
            ks.iter().map(|k| format!("k={k}")).collect(),
            series.clone(),
            values,
        )?;
    }
    chart(
        &chart_path(&args.charts, &args.table, "write"),
        &format!(
            "LASER Fig. 7 ({} table): blocks written per row by compaction",
            args.table
        ),
        "blocks per row",
        cgs.iter().map(|cg| format!("cg={cg}")).collect(),
        vec!["measured".into(), "model (Eq. 4)".into()],
        cgs.iter()
            .map(|&cg| {
                let r = find(cg, "write", 0);
                vec![r.map(|r| r.measured_blocks), r.map(|r| r.model_blocks)]
            })
            .collect(),
    )
}

fn chart_path(dir: &Path, table: &str, measure: &str) -> PathBuf {
    dir.join(format!("laser-fig7-{table}-{measure}.svg"))
}
