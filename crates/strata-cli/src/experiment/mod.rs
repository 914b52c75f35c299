//! `strata experiment`: each paper's experiment, reproduced at this machine's scale.
//!
//! - `aligned`: Kim et al. §VI-B (aligned compaction, Figures 10 and 11).
//! - `snapshot-filter`: Kim et al. §VI-C (snapshot filters, Figures 12–14).
//! - `dcompaction`: Pan et al. §2.2 and §4 (delayed compaction, Figures 2, 3, 10–19).
//! - `query-compaction`: the CS561 query-driven compaction paper (Figures 1–8).
//! - `hotrap`: Qiu et al. §4.2 and §4.5 (HotRAP: YCSB mixes on two tiers, Tables 3–5).
//! - `laser`: Saxena et al. §7.1 (LASER's cost model against measured blocks, Figure 7).
//!
//! Every run prints a table, appends one JSON object per configuration to
//! `results/experiment-<name>.jsonl` (or `--json`), and draws an SVG chart.

mod aligned;
mod dcompaction;
mod hotrap;
mod laser;
mod query_compaction;
mod snapshot_filter;

use crate::engine::EngineStats;
use crate::error::{CliError, Result};
use crate::plot::{draw, PlotArgs, Series};
use crate::results::Provenance;
use clap::{Args, Subcommand};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `strata experiment`.
#[derive(Args, Debug)]
pub struct ExperimentArgs {
    #[command(subcommand)]
    which: Which,
}

#[derive(Subcommand, Debug)]
enum Which {
    /// Aligned vs fixed-size compaction outputs: write amplification by fanout and skew.
    Aligned(Box<aligned::AlignedArgs>),
    /// Point lookups and scans at old snapshots, with and without snapshot filters.
    SnapshotFilter(Box<snapshot_filter::SnapshotFilterArgs>),
    /// Delayed compaction (virtual tables) against rewriting every compaction:
    /// datasets D1-D4, sensitivity to volume, record size, VCT and VSMT, devices.
    Dcompaction(Box<dcompaction::DcompactionArgs>),
    /// Query-driven compaction (scans writing back what they merged) against the
    /// engine without it: sequential and interleaved workloads by range fraction.
    QueryCompaction(Box<query_compaction::QueryCompactionArgs>),
    /// HotRAP against everything-on-FD, RocksDB-fat and time-aware tiering on a fast
    /// and a slow device model: YCSB RO/RW/WH/UH by distribution, and the ablations.
    Hotrap(Box<hotrap::HotrapArgs>),
    /// LASER's cost model (Figure 7) against the blocks reads and compactions really
    /// touch, for tables of equi-width column groups.
    Laser(Box<laser::LaserArgs>),
}

/// Runs `strata experiment`.
///
/// # Errors
/// Engine, I/O and plotting errors.
pub fn run(args: &ExperimentArgs) -> Result<()> {
    match &args.which {
        Which::Aligned(a) => aligned::run(a),
        Which::SnapshotFilter(a) => snapshot_filter::run(a),
        Which::Dcompaction(a) => dcompaction::run(a),
        Which::QueryCompaction(a) => query_compaction::run(a),
        Which::Hotrap(a) => hotrap::run(a),
        Which::Laser(a) => laser::run(a),
    }
}

/// Appends `row` (with provenance) as one JSON line to `path`.
fn append_json<T: Serialize>(path: &Path, row: &T, prov: &Provenance) -> Result<()> {
    let mut v = serde_json::to_value(row).map_err(|e| CliError::Plot(e.to_string()))?;
    if let Some(obj) = v.as_object_mut() {
        obj.insert("git_revision".into(), prov.git_revision.clone().into());
        obj.insert(
            "machine".into(),
            serde_json::to_value(&prov.machine).unwrap_or_default(),
        );
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| CliError::io("create_dir_all", dir, e))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| CliError::io("open", path, e))?;
    writeln!(f, "{v}").map_err(|e| CliError::io("write", path, e))
}

/// Draws one grouped bar chart: `groups` on the x axis, one bar per series.
fn chart(
    output: &Path,
    title: &str,
    metric: &str,
    groups: Vec<String>,
    series: Vec<String>,
    values: Vec<Vec<Option<f64>>>,
) -> Result<()> {
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| CliError::io("create_dir_all", dir, e))?;
    }
    let s = Series {
        benchmarks: groups,
        engines: series,
        values,
    };
    let args = PlotArgs {
        input: PathBuf::new(),
        output: output.to_path_buf(),
        metric: metric.to_string(),
        title: Some(title.to_string()),
        width: 1100,
        height: 550,
    };
    draw(&s, &args)?;
    println!("chart: {}", output.display());
    Ok(())
}

/// Parses a comma-separated list of numbers.
fn parse_list<T: std::str::FromStr>(s: &str, flag: &str) -> Result<Vec<T>> {
    s.split(',')
        .filter(|x| !x.trim().is_empty())
        .map(|x| {
            x.trim()
                .parse()
                .map_err(|_| CliError::Usage(format!("invalid value '{x}' in '--{flag}'")))
        })
        .collect()
}

/// The value of the engine counter `name`; `None` iff the engine has no such counter.
fn counter(stats: &EngineStats, name: &str) -> Option<u64> {
    stats.counter(name)
}

/// Copies the closed database `from` into `to` (replaced if present), file by file,
/// leaving out its `LOCK`. Requires: `from` holds files only, no directories.
fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    if to.exists() {
        std::fs::remove_dir_all(to).map_err(|e| CliError::io("remove_dir_all", to, e))?;
    }
    std::fs::create_dir_all(to).map_err(|e| CliError::io("create_dir_all", to, e))?;
    for entry in std::fs::read_dir(from).map_err(|e| CliError::io("read_dir", from, e))? {
        let entry = entry.map_err(|e| CliError::io("read_dir", from, e))?;
        if entry.file_name() == "LOCK" {
            continue;
        }
        let dst = to.join(entry.file_name());
        std::fs::copy(entry.path(), &dst).map_err(|e| CliError::io("copy", &dst, e))?;
    }
    Ok(())
}
