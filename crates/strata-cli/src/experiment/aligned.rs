//! Aligned compaction (Kim et al., "HTAP amplifies I/O in LSM-trees", §VI-B).
//!
//! Shape of the paper's experiment, kept: random 64-bit integer keys (8-byte
//! big-endian, so byte order is numeric order) over a key range equal to the number of
//! writes, 1 KiB values, write-only; fanout 2, 6 and 10 with fixed vs aligned output
//! partitioning; then fanout 2 with zipfian constants 0.0–1.1. Scaled down: the paper
//! writes 200 M keys with 64 MiB memtables and files; here `--scale=1` writes 400 K
//! keys (~400 MiB) with 2 MiB memtables and files and an 8 MiB L1, so the tree is as
//! deep relative to its data (fanout 2 reaches L6).
//!
//! Reported per run: bytes written per level, total write amplification (table bytes
//! written / bytes flushed), the false-overlap ratio (compaction input bytes that were
//! overhang / all compaction input bytes), and write throughput. The workload and the
//! measurements go through the engine trait, so `--engine=rocksdb` (with the `rocksdb`
//! feature) runs the same stream against RocksDB for its write amplification.

use super::{append_json, chart, counter, parse_list};
use crate::engine::options::{EngineFlags, PartitioningFlag};
use crate::engine::{self, EngineStats};
use crate::error::Result;
use crate::results::Provenance;
use crate::runner::run_parallel;
use crate::values::ValueGenerator;
use crate::ycsb::generator::Zipfian;
use clap::Args;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::path::PathBuf;

/// `strata experiment aligned`.
#[derive(Args, Debug, Clone)]
pub struct AlignedArgs {
    /// Engine flags (sizes below are set by the experiment; compression, cache, bloom
    /// and background jobs pass through). `--db` is the scratch directory.
    #[command(flatten)]
    pub engine: EngineFlags,
    /// Size multiplier: writes = 400,000 × scale (memtable and file sizes fixed).
    #[arg(long = "scale", default_value_t = 1.0)]
    pub scale: f64,
    /// Value size, bytes (the paper: 1024).
    #[arg(long = "value_size", default_value_t = 1024)]
    pub value_size: usize,
    /// Fanouts (max_bytes_for_level_multiplier) for the uniform-key part.
    #[arg(long = "fanouts", default_value = "2,6,10")]
    pub fanouts: String,
    /// Zipfian constants for the skew part (run at fanout 2); empty to skip.
    #[arg(long = "zipf", default_value = "0.0,0.5,0.9,0.99,1.1")]
    pub zipf: String,
    /// Output partitionings to compare.
    #[arg(long = "modes", default_value = "fixed,aligned")]
    pub modes: String,
    /// Memtable and target file size, bytes.
    #[arg(long = "file_size", default_value_t = 2 << 20)]
    pub file_size: usize,
    /// Random seed.
    #[arg(long = "seed", default_value_t = 7)]
    pub seed: u64,
    /// JSON-lines output.
    #[arg(long = "json", default_value = "results/experiment-aligned.jsonl")]
    pub json: PathBuf,
    /// Chart output directory.
    #[arg(long = "charts", default_value = "docs/experiments")]
    pub charts: PathBuf,
}

/// One run's figures.
#[derive(Clone, Debug, Serialize)]
struct Row {
    experiment: &'static str,
    engine: &'static str,
    mode: String,
    fanout: f64,
    zipf: f64,
    writes: u64,
    seconds: f64,
    ops_per_sec: f64,
    settle_seconds: f64,
    ops_per_sec_settled: f64,
    flush_bytes: u64,
    compaction_bytes_written: u64,
    compaction_bytes_read: u64,
    write_amplification: f64,
    false_overlap_ratio: Option<f64>,
    level_write_bytes: Vec<u64>,
    level_sizes: Vec<u64>,
    stats: EngineStats,
}

/// Writes `writes` random keys through the engine `flags` select; returns the figures.
fn one_run(args: &AlignedArgs, mode: &str, fanout: f64, zipf: f64) -> Result<Row> {
    let writes = (400_000.0 * args.scale).max(1000.0) as u64;
    let mut flags = args.engine.clone();
    flags.write_buffer_size = args.file_size;
    flags.target_file_size_base = args.file_size as u64;
    flags.max_bytes_for_level_base = 4 * args.file_size as u64;
    flags.max_bytes_for_level_multiplier = fanout;
    flags.num_levels = 12;
    flags.use_existing_db = false;
    flags.compaction_output_partitioning = if mode == "aligned" {
        PartitioningFlag::Aligned
    } else {
        PartitioningFlag::Fixed
    };
    let engine = engine::open(&flags, false)?;
    if engine
        .unavailable_stats()
        .contains(&engine::stat::WRITE_AMPLIFICATION)
    {
        let name = engine.name();
        engine.close()?;
        return Err(crate::error::CliError::Usage(format!(
            "'experiment aligned' measures write amplification, which {name} does not expose"
        )));
    }
    let zipfian = (zipf > 0.0).then(|| Zipfian::new(writes, zipf));
    let label = format!("{mode} f={fanout} z={zipf}");
    let (_, elapsed) = run_parallel(&label, 1, Some(writes), |_, progress| {
        let mut rng = SmallRng::seed_from_u64(args.seed);
        let mut zipfian = zipfian.clone();
        let mut values = ValueGenerator::new(args.seed ^ 0x5eed, 0.5, args.value_size);
        for i in 0..writes {
            let k = match zipfian.as_mut() {
                // Scrambled so the hot keys are spread over the key space.
                Some(z) => crate::ycsb::generator::fnv1a64(z.next(&mut rng)) % writes,
                None => rng.random_range(0..writes),
            };
            engine.put(&k.to_be_bytes(), values.next(args.value_size))?;
            if i % 1024 == 1023 {
                progress.add(1024);
            }
        }
        Ok(())
    })?;
    let seconds = elapsed.as_secs_f64();
    let settle = std::time::Instant::now();
    engine.wait_for_compactions()?;
    let settle_seconds = settle.elapsed().as_secs_f64();
    let stats = engine.stats();
    let name = engine.name();
    engine.close()?;
    let false_overlap_ratio = match (
        counter(&stats, "compaction_false_overlap_bytes"),
        counter(&stats, "compaction_input_entry_bytes"),
    ) {
        (Some(f), Some(t)) if t > 0 => Some(f as f64 / t as f64),
        _ => None,
    };
    Ok(Row {
        experiment: "aligned",
        engine: name,
        mode: mode.to_string(),
        fanout,
        zipf,
        writes,
        seconds,
        ops_per_sec: writes as f64 / seconds,
        settle_seconds,
        ops_per_sec_settled: writes as f64 / (seconds + settle_seconds),
        flush_bytes: stats.flush_bytes_written,
        compaction_bytes_written: stats.compaction_bytes_written,
        compaction_bytes_read: stats.compaction_bytes_read,
        write_amplification: stats.write_amplification(),
        false_overlap_ratio,
        level_write_bytes: stats.levels.iter().map(|l| l.write_bytes).collect(),
        level_sizes: stats.levels.iter().map(|l| l.size_bytes).collect(),
        stats,
    })
}

fn print_row(r: &Row) {
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let levels: Vec<String> = r
        .level_write_bytes
        .iter()
        .enumerate()
        .filter(|(_, &b)| b > 0)
        .map(|(i, &b)| format!("L{i}:{:.0}", mib(b)))
        .collect();
    println!(
        "{:<8} {:<8} fanout={:<4} zipf={:<5} {:>9.0} ops/s ({:>7.0} settled)  W-Amp {:>6.3}  false-overlap {:>6}  writes(MiB) {}",
        r.engine,
        r.mode,
        r.fanout,
        r.zipf,
        r.ops_per_sec,
        r.ops_per_sec_settled,
        r.write_amplification,
        r.false_overlap_ratio
            .map_or("-".to_string(), |x| format!("{:.1}%", 100.0 * x)),
        levels.join(" ")
    );
}

/// Runs `strata experiment aligned`.
///
/// # Errors
/// Engine, I/O and plotting errors; bad lists are usage errors.
pub fn run(args: &AlignedArgs) -> Result<()> {
    let fanouts: Vec<f64> = parse_list(&args.fanouts, "fanouts")?;
    let zipfs: Vec<f64> = parse_list(&args.zipf, "zipf")?;
    let modes: Vec<String> = args
        .modes
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    let prov = Provenance::gather();
    let mut rows = Vec::new();
    let configs = fanouts
        .iter()
        .map(|&f| (f, 0.0))
        .chain(zipfs.iter().map(|&z| (2.0, z)));
    for (fanout, zipf) in configs {
        if zipf == 0.0
            && rows
                .iter()
                .any(|r: &Row| r.fanout == fanout && r.zipf == 0.0)
        {
            continue; // fanout 2 uniform already ran in the fanout part
        }
        for mode in &modes {
            let row = one_run(args, mode, fanout, zipf)?;
            print_row(&row);
            append_json(&args.json, &row, &prov)?;
            rows.push(row);
        }
        let this: Vec<&Row> = rows
            .iter()
            .filter(|r| r.fanout == fanout && r.zipf == zipf)
            .collect();
        if let [base, other, ..] = this.as_slice() {
            println!(
                "  -> {} vs {}: write amplification {:+.1}%, throughput {:+.1}% (settled {:+.1}%)",
                other.mode,
                base.mode,
                100.0 * (other.write_amplification / base.write_amplification - 1.0),
                100.0 * (other.ops_per_sec / base.ops_per_sec - 1.0),
                100.0 * (other.ops_per_sec_settled / base.ops_per_sec_settled - 1.0)
            );
        }
    }
    draw_charts(args, &rows, &modes)
}

fn draw_charts(args: &AlignedArgs, rows: &[Row], modes: &[String]) -> Result<()> {
    let engine = rows.first().map_or("strata", |r| r.engine);
    let mut groups = Vec::new();
    let mut values = Vec::new();
    let mut fo_groups = Vec::new();
    let mut fo_values = Vec::new();
    let mut seen = Vec::new();
    for r in rows {
        let key = (r.fanout.to_bits(), r.zipf.to_bits());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let label = if r.zipf == 0.0 {
            format!("fanout {} uniform", r.fanout)
        } else {
            format!("fanout {} zipf {}", r.fanout, r.zipf)
        };
        let find = |m: &str| {
            rows.iter()
                .find(|x| x.fanout == r.fanout && x.zipf == r.zipf && x.mode == m)
        };
        groups.push(label.clone());
        values.push(
            modes
                .iter()
                .map(|m| find(m).map(|x| x.write_amplification))
                .collect(),
        );
        fo_groups.push(label);
        fo_values.push(
            modes
                .iter()
                .map(|m| {
                    find(m)
                        .and_then(|x| x.false_overlap_ratio)
                        .map(|v| 100.0 * v)
                })
                .collect(),
        );
    }
    chart(
        &args.charts.join(format!("aligned-write-amp-{engine}.svg")),
        "Write amplification: fixed vs aligned compaction outputs",
        "write amplification",
        groups,
        modes.to_vec(),
        values,
    )?;
    chart(
        &args
            .charts
            .join(format!("aligned-false-overlap-{engine}.svg")),
        "False overlaps: % of compaction input bytes",
        "false-overlap %",
        fo_groups,
        modes.to_vec(),
        fo_values,
    )
}
