//! Results: one JSON object per benchmark (or YCSB phase), appended to a JSON-lines file.
//!
//! Role: `bench` and `ycsb` build a [`Record`] per result and [`append`] it to `--json`
//! (default `results/<kind>.jsonl`; `--no_json` disables). `plot` and `compare` read
//! records back leniently with [`read_records`] as `serde_json::Value`s, so files from
//! older builds with fewer fields still load.
//!
//! Every record carries the run's provenance: git revision (`git rev-parse HEAD` at run
//! time, `unknown` outside a checkout), hostname, CPU count, timestamp, and the peak
//! resident set size of the process; and how the engine applied the flags
//! (`option_mapping`, from `engine::mapping`). Figures the engine does not expose are
//! `null` and named in `unavailable_stats`, never written as 0.

use crate::engine::mapping::OptionMapping;
use crate::engine::{stat, EngineStats, KvEngine, LevelReport, PathReport};
use crate::error::{CliError, Result};
use crate::runner::OpStats;
use clap::Args;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// Where results go and what extra is printed.
#[derive(Args, Clone, Debug, Serialize)]
pub struct ReportFlags {
    /// Append one JSON object per result to this file (default: results/<command>.jsonl).
    #[arg(long = "json")]
    pub json: Option<PathBuf>,
    /// Do not write JSON results.
    #[arg(long = "no_json", default_value_t = false)]
    pub no_json: bool,
    /// Print the full latency histogram of each result.
    #[arg(long = "histogram", default_value_t = false, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub histogram: bool,
    /// Print the engine's counters after each result.
    #[arg(long = "statistics", default_value_t = false, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub statistics: bool,
}

impl ReportFlags {
    /// The JSON-lines file for a `kind` of run, or `None` if disabled.
    pub fn json_path(&self, kind: &str) -> Option<PathBuf> {
        if self.no_json {
            return None;
        }
        Some(
            self.json
                .clone()
                .unwrap_or_else(|| Path::new("results").join(format!("{kind}.jsonl"))),
        )
    }
}

/// Latency summary of one kind of operation, microseconds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct OpSummary {
    /// Operations.
    pub operations: u64,
    /// Operations per second over the phase's wall time.
    pub ops_per_sec: f64,
    /// Reads that found their key.
    pub found: u64,
    /// Mean latency.
    pub mean_us: f64,
    /// Median latency.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// Worst latency.
    pub max_us: f64,
}

impl OpSummary {
    /// Summarizes `s` measured over `seconds` of wall time.
    pub fn of(s: &OpStats, seconds: f64) -> OpSummary {
        OpSummary {
            operations: s.ops,
            ops_per_sec: if seconds > 0.0 {
                s.ops as f64 / seconds
            } else {
                0.0
            },
            found: s.found,
            mean_us: s.hist.mean() / 1000.0,
            p50_us: s.micros_at(0.5),
            p99_us: s.micros_at(0.99),
            p999_us: s.micros_at(0.999),
            max_us: s.hist.max() as f64 / 1000.0,
        }
    }
}

/// The machine a result was measured on.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// Host name (`unknown` if unreadable).
    pub hostname: String,
    /// CPUs available to the process.
    pub nproc: usize,
}

/// The compaction debt a fill leaves when it returns.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Debt {
    /// Files in L0.
    pub l0_files: u64,
    /// Bytes in L0.
    pub l0_bytes: u64,
    /// Bytes of every live table (0 where the engine does not count them).
    pub live_table_bytes: u64,
}

/// One result line.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    /// `bench` or `ycsb`.
    pub kind: String,
    /// Benchmark name (`fillrandom`), a fill's settled result (`fillrandom_settled`,
    /// after a `waitforcompaction`) or YCSB phase (`ycsb-a/run`).
    pub name: String,
    /// `strata`, `rocksdb` or `fjall`; `rocksdb-floor` or `fjall-floor` for the peer
    /// driven directly (`bench --floor`).
    pub engine: String,
    /// Operations done.
    pub operations: u64,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Throughput.
    pub ops_per_sec: f64,
    /// Wall microseconds per operation (all threads together).
    pub micros_per_op: f64,
    /// Key + value megabytes (MiB) per second.
    pub mb_per_sec: f64,
    /// Median latency, microseconds.
    pub p50: f64,
    /// 99th percentile latency, microseconds (readseq and readreverse: of the means
    /// of chunks of 256 entries, which smooths the tail).
    pub p99: f64,
    /// 99.9th percentile latency, microseconds.
    pub p999: f64,
    /// Reads that found their key (reads only).
    pub found: Option<u64>,
    /// Per operation type (YCSB).
    pub ops: BTreeMap<String, OpSummary>,
    /// (flush + compaction bytes written) / flush bytes written, cumulative; `None`
    /// (`null`) where the engine does not count those bytes.
    pub write_amplification: Option<f64>,
    /// WAL bytes written, cumulative (`null` if unavailable).
    pub wal_bytes: Option<u64>,
    /// Table bytes written by flushes, cumulative (`null` if unavailable).
    pub flush_bytes: Option<u64>,
    /// Table bytes written by compactions, cumulative (`null` if unavailable).
    pub compaction_bytes_written: Option<u64>,
    /// Table bytes read by compactions, cumulative (`null` if unavailable).
    pub compaction_bytes_read: Option<u64>,
    /// Bytes of the live table files after the result, each file once
    /// ([`EngineStats::live_table_bytes`]; `null` if unavailable).
    pub live_table_bytes: Option<u64>,
    /// The statistics the engine does not expose (`engine::stat` names); empty for
    /// Strata and RocksDB.
    pub unavailable_stats: Vec<String>,
    /// Per-level figures after the result.
    pub levels: Vec<LevelReport>,
    /// Table I/O per data path, cumulative (Strata only; omitted when empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<PathReport>,
    /// Every engine counter.
    pub counters: BTreeMap<String, u64>,
    /// The full option set of the run (engine flags and workload flags).
    pub options: serde_json::Value,
    /// How the engine applied each engine flag (`engine::mapping::of`).
    pub option_mapping: Vec<OptionMapping>,
    /// `git rev-parse HEAD`, or `unknown`.
    pub git_revision: String,
    /// Where it ran.
    pub machine: Machine,
    /// Seconds since the Unix epoch.
    pub timestamp: u64,
    /// The same instant, `YYYY-MM-DDTHH:MM:SSZ`.
    pub time: String,
    /// Peak resident set size of the process during the result (VmHWM), KiB.
    pub peak_rss_kb: Option<u64>,
    /// Bytes the whole process handed to `write`-family system calls during the
    /// result (`wchar` of `/proc/self/io`: WAL, tables, manifests, logs, whatever the
    /// engine writes, counted the same way for every engine); `null` where the
    /// platform does not say. A `<fill>_settled` result counts the fill and the wait.
    pub process_write_bytes: Option<u64>,
    /// A fill's (or its settled result's) `process_write_bytes` over the key and value
    /// bytes it wrote: the write amplification of every engine, measured alike, WAL
    /// included (omitted elsewhere).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process_write_amplification: Option<f64>,
    /// A `<fill>_settled` result: the compaction debt the fill left (omitted
    /// elsewhere).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub debt_at_fill_end: Option<Debt>,
}

/// Facts about the run that do not change between its results.
#[derive(Clone, Debug)]
pub struct Provenance {
    /// See [`Record::git_revision`].
    pub git_revision: String,
    /// See [`Record::machine`].
    pub machine: Machine,
}

impl Provenance {
    /// Gathers revision and machine facts (runs `git` once).
    pub fn gather() -> Provenance {
        // The working directory's checkout, else the one the binary was built in.
        let exe_dir = std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf));
        let git_revision = [None, exe_dir]
            .into_iter()
            .find_map(|dir| git_head(dir.as_deref()))
            .unwrap_or_else(|| "unknown".to_string());
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .or_else(|_| std::fs::read_to_string("/etc/hostname"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".to_string());
        Provenance {
            git_revision,
            machine: Machine {
                hostname,
                nproc: std::thread::available_parallelism().map_or(1, |n| n.get()),
            },
        }
    }
}

/// `git rev-parse HEAD` in `dir` (or the working directory).
fn git_head(dir: Option<&Path>) -> Option<String> {
    let mut cmd = std::process::Command::new("git");
    if let Some(d) = dir {
        cmd.arg("-C").arg(d);
    }
    cmd.args(["rev-parse", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Builds a record from the overall stats of a result and the engine's stats after it.
/// Figures in `engine`'s [`KvEngine::unavailable_stats`] become `None`.
#[expect(clippy::too_many_arguments, reason = "plain data assembly")]
pub fn record(
    kind: &str,
    name: &str,
    overall: &OpStats,
    seconds: f64,
    found: Option<u64>,
    ops: BTreeMap<String, OpSummary>,
    stats: &EngineStats,
    engine: &dyn KvEngine,
    options: serde_json::Value,
    option_mapping: &[OptionMapping],
    prov: &Provenance,
) -> Record {
    let unavailable = engine.unavailable_stats();
    let known = |name: &str, v: u64| (!unavailable.contains(&name)).then_some(v);
    let s = OpSummary::of(overall, seconds);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Record {
        kind: kind.to_string(),
        name: name.to_string(),
        engine: engine.name().to_string(),
        operations: overall.ops,
        seconds,
        ops_per_sec: s.ops_per_sec,
        micros_per_op: if overall.ops > 0 {
            seconds * 1e6 / overall.ops as f64
        } else {
            0.0
        },
        mb_per_sec: if seconds > 0.0 {
            overall.bytes as f64 / (1u64 << 20) as f64 / seconds
        } else {
            0.0
        },
        p50: s.p50_us,
        p99: s.p99_us,
        p999: s.p999_us,
        found,
        ops,
        write_amplification: (!unavailable.contains(&stat::WRITE_AMPLIFICATION))
            .then(|| stats.write_amplification()),
        wal_bytes: known(stat::WAL_BYTES, stats.wal_bytes),
        flush_bytes: known(stat::FLUSH_BYTES_WRITTEN, stats.flush_bytes_written),
        compaction_bytes_written: known(
            stat::COMPACTION_BYTES_WRITTEN,
            stats.compaction_bytes_written,
        ),
        compaction_bytes_read: known(stat::COMPACTION_BYTES_READ, stats.compaction_bytes_read),
        live_table_bytes: known(stat::LIVE_TABLE_BYTES, stats.live_table_bytes),
        unavailable_stats: unavailable.iter().map(|s| (*s).to_string()).collect(),
        levels: stats.levels.clone(),
        paths: stats.paths.clone(),
        counters: stats.counters.iter().cloned().collect(),
        options,
        option_mapping: option_mapping.to_vec(),
        git_revision: prov.git_revision.clone(),
        machine: prov.machine.clone(),
        timestamp: now,
        time: iso8601(now),
        peak_rss_kb: peak_rss_kb(),
        process_write_bytes: None,
        process_write_amplification: None,
        debt_at_fill_end: None,
    }
}

/// Resets the process's peak-RSS mark (Linux: `5` into `/proc/self/clear_refs`), so the
/// next [`peak_rss_kb`] covers only what follows. Best effort.
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The process's peak resident set size in KiB (`VmHWM`), if the platform says.
pub fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Bytes this process has handed to `write`-family system calls since it started, by
/// all its threads (`wchar` of `/proc/self/io`), if the platform says.
pub fn process_write_bytes() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("wchar:"))
        .and_then(|v| v.trim().parse().ok())
}

/// `secs` since the epoch as `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian, UTC).
pub fn iso8601(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Appends `record` (a [`Record`], or another command's row) as one JSON line to
/// `path`, creating parent directories.
///
/// # Errors
/// [`CliError::Io`] or [`CliError::Json`].
pub fn append(path: &Path, record: &impl Serialize) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| CliError::io("create_dir_all", dir, e))?;
    }
    let mut line = serde_json::to_string(record)?;
    line.push('\n');
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| CliError::io("open", path, e))?;
    f.write_all(line.as_bytes())
        .map_err(|e| CliError::io("write", path, e))
}

/// Every JSON object in a JSON-lines file (blank lines skipped).
///
/// # Errors
/// [`CliError::Io`], or [`CliError::BadRecord`] naming the first bad line.
pub fn read_records(path: &Path) -> Result<Vec<serde_json::Value>> {
    let f = std::fs::File::open(path).map_err(|e| CliError::io("open", path, e))?;
    parse_records(std::io::BufReader::new(f), path)
}

/// [`read_records`] over any reader; `path` only names the source in errors.
///
/// # Errors
/// As [`read_records`].
pub fn parse_records(r: impl BufRead, path: &Path) -> Result<Vec<serde_json::Value>> {
    let mut out = Vec::new();
    for (i, line) in r.lines().enumerate() {
        let line = line.map_err(|e| CliError::io("read", path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(&line).map_err(|source| CliError::BadRecord {
                path: path.to_path_buf(),
                line: i + 1,
                source,
            })?;
        out.push(v);
    }
    Ok(out)
}

/// A numeric field of a record (`ops_per_sec`, `p99`, ...), looked up by `/`-separated
/// path (`ops/read/p99_us`).
pub fn metric(v: &serde_json::Value, path: &str) -> Option<f64> {
    path.split('/')
        .try_fold(v, |v, k| v.get(k))
        .and_then(serde_json::Value::as_f64)
}

/// A string field of a record.
pub fn text<'a>(v: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(serde_json::Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::memory::MemoryEngine;

    #[test]
    fn iso8601_known_instants() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso8601(1_700_000_000), "2023-11-14T22:13:20Z");
    }

    #[test]
    fn records_round_trip_through_jsonl() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("sub/bench.jsonl");
        let mut s = OpStats::default();
        s.record_nanos(2000, 116);
        let mapping = crate::engine::mapping::of(&crate::engine::conformance::default_flags());
        let stats = EngineStats {
            flush_bytes_written: 10,
            compaction_bytes_written: 20,
            live_table_bytes: 30,
            counters: vec![("gets".into(), 5)],
            ..EngineStats::default()
        };
        let prov = Provenance::gather();
        let r = record(
            "bench",
            "fillrandom",
            &s,
            1.0,
            None,
            BTreeMap::new(),
            &stats,
            &MemoryEngine::default(),
            serde_json::json!({"num": 1}),
            &mapping,
            &prov,
        );
        append(&path, &r).expect("append");
        append(&path, &r).expect("append");
        let rs = read_records(&path).expect("read");
        assert_eq!(rs.len(), 2);
        assert_eq!(text(&rs[0], "name"), Some("fillrandom"));
        assert_eq!(text(&rs[0], "engine"), Some("memory"));
        assert_eq!(metric(&rs[0], "write_amplification"), Some(3.0));
        assert_eq!(metric(&rs[0], "flush_bytes"), Some(10.0));
        assert_eq!(metric(&rs[0], "live_table_bytes"), Some(30.0));
        assert_eq!(rs[0]["unavailable_stats"], serde_json::json!([]));
        assert_eq!(
            rs[0]["option_mapping"][0]["flag"],
            serde_json::json!(mapping[0].flag)
        );
        assert_eq!(
            rs[0]["option_mapping"].as_array().map(Vec::len),
            Some(mapping.len())
        );
        assert_eq!(metric(&rs[0], "counters/gets"), Some(5.0));
        assert_eq!(metric(&rs[0], "options/num"), Some(1.0));
        assert!(metric(&rs[0], "p50").is_some_and(|p| (p - 2.0).abs() < 0.01));
        assert!(!text(&rs[0], "git_revision").unwrap_or("").is_empty());
    }

    #[test]
    fn unavailable_figures_are_null_not_zero() {
        let engine = MemoryEngine::with_unavailable_stats(&[
            stat::WAL_BYTES,
            stat::FLUSH_BYTES_WRITTEN,
            stat::COMPACTION_BYTES_WRITTEN,
            stat::COMPACTION_BYTES_READ,
            stat::LIVE_TABLE_BYTES,
            stat::WRITE_AMPLIFICATION,
        ]);
        let r = record(
            "bench",
            "fillrandom",
            &OpStats::default(),
            1.0,
            None,
            BTreeMap::new(),
            &EngineStats::default(),
            &engine,
            serde_json::json!({}),
            &[],
            &Provenance::gather(),
        );
        let v = serde_json::to_value(&r).expect("json");
        for field in [
            "write_amplification",
            "wal_bytes",
            "flush_bytes",
            "compaction_bytes_written",
            "compaction_bytes_read",
            "live_table_bytes",
        ] {
            assert!(v[field].is_null(), "{field}: {v}");
        }
        assert_eq!(v["unavailable_stats"].as_array().map(Vec::len), Some(6));
        assert_eq!(metric(&v, "write_amplification"), None);
    }

    #[test]
    fn bad_lines_are_named() {
        let data = b"{\"a\":1}\n\nnot json\n";
        let err = parse_records(&data[..], Path::new("x.jsonl")).expect_err("error");
        assert!(matches!(err, CliError::BadRecord { line: 3, .. }));
    }

    #[test]
    fn json_path_defaults_and_disables() {
        let mut f = ReportFlags {
            json: None,
            no_json: false,
            histogram: false,
            statistics: false,
        };
        assert_eq!(
            f.json_path("bench"),
            Some(PathBuf::from("results/bench.jsonl"))
        );
        f.json = Some(PathBuf::from("x.jsonl"));
        assert_eq!(f.json_path("bench"), Some(PathBuf::from("x.jsonl")));
        f.no_json = true;
        assert_eq!(f.json_path("bench"), None);
    }
}
