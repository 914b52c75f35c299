//! `strata device-bench`: calibrates a disk, or a device model over it, with the same
//! lines fio measures (scripts/device-bench.sh runs both; docs/devices.md has the
//! tables).
//!
//! Every I/O goes through the engine's own file system with direct I/O: `PosixFs` for
//! the real disk, or `DeviceFs` over it with the model of `--device`. `--buffered`
//! reads through the page cache instead, to measure a model without the disk under it. The run writes a
//! test file of `--size` bytes in `--path` (sequential write), reads it for
//! `--duration` seconds per line (see `measure.rs`), then removes it. Results: a table
//! on stdout and one JSON object per line appended to `--json` (default
//! `results/device-bench.jsonl`), with the run's provenance as `strata bench` records.
//! With a model, each line also shows the figure the model should give
//! (`target.rs`) and the deviation from it.

mod measure;
mod target;

use crate::error::{CliError, Result};
use crate::results::{append, iso8601, Provenance};
use clap::Args;
use measure::{Measured, Pattern, Test, TESTS};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use strata::env::{DeviceFs, DeviceModel, FileOptions, FileSystem, PosixFs};
use target::Metric;

/// Name of the test file in `--path`.
const TEST_FILE: &str = "strata-device-bench.dat";

/// `strata device-bench`.
#[derive(Args, Debug, Clone)]
pub struct DeviceBenchArgs {
    /// Directory to measure; its file system must accept O_DIRECT (tmpfs before
    /// Linux 6.6 does not).
    #[arg(long)]
    pub path: PathBuf,
    /// Measure a device model over the disk instead of the disk: a preset (nvme,
    /// sata-ssd, gp3, hdd) or latency_us,mib_per_s,iops.
    #[arg(long, value_parser = parse_device)]
    pub device: Option<DeviceModel>,
    /// Bytes of the test file (whole MiB; the sequential write writes all of it).
    #[arg(long, default_value_t = 1 << 30)]
    pub size: u64,
    /// Seconds each read line runs.
    #[arg(long, default_value_t = 5.0)]
    pub duration: f64,
    /// Append one JSON object per line to this file (default:
    /// results/device-bench.jsonl).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Do not write JSON results.
    #[arg(long = "no_json", default_value_t = false)]
    pub no_json: bool,
    /// Buffered I/O instead of O_DIRECT: the reads come from the page cache, so with
    /// --device the figures are the model's alone, without this disk under it.
    #[arg(long, default_value_t = false)]
    pub buffered: bool,
}

impl DeviceBenchArgs {
    /// `direct` or `buffered`, as the header and the JSON say.
    fn io(&self) -> &'static str {
        if self.buffered {
            "buffered"
        } else {
            "direct"
        }
    }
}

fn parse_device(s: &str) -> std::result::Result<DeviceModel, String> {
    s.parse().map_err(|e: strata::Error| e.to_string())
}

/// One line of the results, as written to the JSON-lines file.
#[derive(Debug, Serialize)]
struct Row {
    kind: &'static str,
    name: &'static str,
    /// `real`, a preset name, or `latency_us,mib_per_s,iops`.
    device: String,
    /// `direct` (O_DIRECT) or `buffered` (`--buffered`).
    io: &'static str,
    path: PathBuf,
    block_size: u64,
    queue_depth: usize,
    operations: u64,
    seconds: f64,
    iops: f64,
    mib_per_sec: f64,
    mean_us: f64,
    p50_us: f64,
    p99_us: f64,
    /// With a model: the figure this line is checked on, its expected value, and the
    /// measured deviation from it in percent.
    target_metric: Option<Metric>,
    target: Option<f64>,
    deviation_pct: Option<f64>,
    /// Time the model made threads sleep during this line (beyond the real I/O).
    model_delay_secs: Option<f64>,
    size: u64,
    git_revision: String,
    machine: crate::results::Machine,
    timestamp: u64,
    time: String,
}

impl Row {
    fn measured(&self, metric: Metric) -> f64 {
        match metric {
            Metric::P50Us => self.p50_us,
            Metric::Iops => self.iops,
            Metric::MibPerSec => self.mib_per_sec,
        }
    }
}

/// Runs `strata device-bench`.
///
/// # Errors
/// Usage errors (bad `--duration`, `--size`), and the file system's errors: a
/// directory that refuses O_DIRECT is `InvalidArgument` naming the path.
pub fn run(args: &DeviceBenchArgs) -> Result<()> {
    if !(args.duration.is_finite() && args.duration > 0.0) {
        return Err(CliError::Usage(format!(
            "--duration=`{}` must be a positive number of seconds",
            args.duration
        )));
    }
    if args.size < measure::SEQ_IO {
        return Err(CliError::Usage(format!(
            "--size=`{}` must be at least 1 MiB",
            args.size
        )));
    }
    let device_fs = args
        .device
        .clone()
        .map(|model| Arc::new(DeviceFs::new(Arc::new(PosixFs)).with_device(&args.path, model)));
    let fs: Arc<dyn FileSystem> = match &device_fs {
        Some(d) => d.clone(),
        None => Arc::new(PosixFs),
    };
    let device_delay = || {
        device_fs
            .as_ref()
            .and_then(|d| d.stats(&args.path))
            .map(|s| s.delay)
    };
    let file = args.path.join(TEST_FILE);
    let opts = FileOptions::default().with_direct(!args.buffered);
    let duration = Duration::from_secs_f64(args.duration);
    let prov = Provenance::gather();
    let json = (!args.no_json).then(|| {
        args.json
            .clone()
            .unwrap_or_else(|| Path::new("results").join("device-bench.jsonl"))
    });
    let device_name = args
        .device
        .as_ref()
        .map_or_else(|| "real".to_string(), ToString::to_string);
    let mut out = std::io::stdout().lock();
    let stdout_err = |e| CliError::Stdio("stdout", e);
    writeln!(
        out,
        "device-bench: path={} device={device_name} io={} size={} MiB duration={}s revision={}",
        args.path.display(),
        args.io(),
        args.size >> 20,
        args.duration,
        prov.git_revision
    )
    .map_err(stdout_err)?;
    writeln!(
        out,
        "{:<18} {:>9} {:>10} {:>9} {:>10} {:>10} {:>10}   target",
        "test", "ops", "IOPS", "MiB/s", "mean µs", "p50 µs", "p99 µs"
    )
    .map_err(stdout_err)?;
    let result = (|| {
        for test in &TESTS {
            let before = device_delay();
            let measured = match test.pattern {
                Pattern::SeqWrite => measure::seq_write(fs.as_ref(), &file, opts, args.size)?,
                Pattern::SeqRead | Pattern::RandRead => {
                    measure::read(fs.as_ref(), &file, opts, test, duration)?
                }
            };
            let delay = device_delay()
                .zip(before)
                .map(|(after, before)| after.saturating_sub(before));
            let row = row(args, test, &measured, &device_name, delay, &prov);
            print_row(&mut out, &row).map_err(stdout_err)?;
            if let Some(path) = &json {
                append(path, &row)?;
            }
        }
        Ok(())
    })();
    // The test file goes whatever happened; a failure to remove it is secondary.
    let _ = std::fs::remove_file(&file);
    result
}

fn row(
    args: &DeviceBenchArgs,
    test: &Test,
    m: &Measured,
    device: &str,
    model_delay: Option<Duration>,
    prov: &Provenance,
) -> Row {
    let seconds = m.elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut row = Row {
        kind: "device-bench",
        name: test.name,
        device: device.to_string(),
        io: args.io(),
        path: args.path.clone(),
        block_size: test.block_size,
        queue_depth: test.queue_depth,
        operations: m.stats.ops,
        seconds,
        iops: m.stats.ops as f64 / seconds,
        mib_per_sec: m.stats.bytes as f64 / (1u64 << 20) as f64 / seconds,
        mean_us: m.stats.hist.mean() / 1000.0,
        p50_us: m.stats.micros_at(0.5),
        p99_us: m.stats.micros_at(0.99),
        target_metric: None,
        target: None,
        deviation_pct: None,
        model_delay_secs: model_delay.map(|d| d.as_secs_f64()),
        size: args.size,
        git_revision: prov.git_revision.clone(),
        machine: prov.machine.clone(),
        timestamp: now,
        time: iso8601(now),
    };
    if let Some(model) = &args.device {
        let (metric, want) = target::of(model, test);
        row.target_metric = Some(metric);
        row.target = Some(want);
        row.deviation_pct = Some((row.measured(metric) / want - 1.0) * 100.0);
    }
    row
}

fn print_row(out: &mut impl Write, r: &Row) -> std::io::Result<()> {
    let target = match (r.target_metric, r.target, r.deviation_pct) {
        (Some(metric), Some(want), Some(dev)) => {
            format!("{} {want:.1} ({dev:+.1}%)", metric.label())
        }
        _ => String::new(),
    };
    writeln!(
        out,
        "{:<18} {:>9} {:>10.0} {:>9.1} {:>10.1} {:>10.1} {:>10.1}   {target}",
        r.name, r.operations, r.iops, r.mib_per_sec, r.mean_us, r.p50_us, r.p99_us
    )
}
