//! `strata compare`: aggregates repeated runs of several engines into one table per
//! benchmark: median ops/sec of each engine, the ratio candidate/baseline for each
//! baseline (`--baseline=rocksdb,fjall`), median P99, W-Amp (the engine's own flush
//! and compaction bytes), IO W-Amp (bytes the process wrote over a fill's bytes,
//! `process_write_amplification`: every engine alike) and peak RSS.
//!
//! Input: the JSON lines `bench`/`ycsb` append (see `results`). Records are grouped by
//! `name` (in order of first appearance) and `engine`; the median is taken over the runs
//! of each group (mean of the middle two for an even count).

use crate::error::{CliError, Result};
use crate::results::{metric, read_records, text};
use clap::Args;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::PathBuf;

/// `strata compare`.
#[derive(Args, Clone, Debug)]
pub struct CompareArgs {
    /// JSON-lines results file.
    #[arg(long = "input", default_value = "results/bench.jsonl")]
    pub input: PathBuf,
    /// Engine in the ratio's numerator.
    #[arg(long = "candidate", default_value = "strata")]
    pub candidate: String,
    /// Engines in the ratios' denominators, comma-separated (one ratio line each).
    #[arg(long = "baseline", default_value = "rocksdb", value_delimiter = ',')]
    pub baseline: Vec<String>,
}

/// Medians of one engine on one benchmark.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineRow {
    /// Engine name.
    pub engine: String,
    /// Runs aggregated.
    pub runs: usize,
    /// Median ops/sec.
    pub ops_per_sec: f64,
    /// Median P99 latency, microseconds.
    pub p99: Option<f64>,
    /// Median write amplification.
    pub write_amplification: Option<f64>,
    /// Median bytes the process wrote over the fill's bytes (fills only).
    pub process_write_amplification: Option<f64>,
    /// Median peak RSS, KiB.
    pub peak_rss_kb: Option<f64>,
}

/// One benchmark's table.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchTable {
    /// Benchmark name.
    pub name: String,
    /// One row per engine, in order of first appearance.
    pub rows: Vec<EngineRow>,
    /// Per baseline (in the order given): candidate median ops/sec divided by the
    /// baseline's, if both ran.
    pub ratios: Vec<(String, Option<f64>)>,
}

/// The median of `v` (mean of the middle two for even length); `None` if empty.
pub fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v.get(m).copied()
    } else {
        Some((v.get(m - 1)? + v.get(m)?) / 2.0)
    }
}

/// Groups `records` by benchmark and engine and takes medians.
pub fn aggregate(records: &[Value], candidate: &str, baselines: &[String]) -> Vec<BenchTable> {
    let mut names: Vec<&str> = Vec::new();
    for r in records {
        if let Some(n) = text(r, "name") {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let of_bench: Vec<&Value> = records
                .iter()
                .filter(|r| text(r, "name") == Some(name))
                .collect();
            let mut engines: Vec<&str> = Vec::new();
            for r in &of_bench {
                let e = text(r, "engine").unwrap_or("unknown");
                if !engines.contains(&e) {
                    engines.push(e);
                }
            }
            let rows: Vec<EngineRow> = engines
                .into_iter()
                .map(|engine| {
                    let runs: Vec<&&Value> = of_bench
                        .iter()
                        .filter(|r| text(r, "engine").unwrap_or("unknown") == engine)
                        .collect();
                    let med = |key: &str| {
                        let mut v: Vec<f64> = runs.iter().filter_map(|r| metric(r, key)).collect();
                        median(&mut v)
                    };
                    EngineRow {
                        engine: engine.to_string(),
                        runs: runs.len(),
                        ops_per_sec: med("ops_per_sec").unwrap_or(0.0),
                        p99: med("p99"),
                        write_amplification: med("write_amplification"),
                        process_write_amplification: med("process_write_amplification"),
                        peak_rss_kb: med("peak_rss_kb"),
                    }
                })
                .collect();
            let ops = |e: &str| rows.iter().find(|r| r.engine == e).map(|r| r.ops_per_sec);
            let ratios = baselines
                .iter()
                .map(|baseline| {
                    let ratio = match (ops(candidate), ops(baseline)) {
                        (Some(c), Some(b)) if b > 0.0 => Some(c / b),
                        _ => None,
                    };
                    (baseline.clone(), ratio)
                })
                .collect();
            BenchTable {
                name: name.to_string(),
                rows,
                ratios,
            }
        })
        .collect()
}

/// Renders the tables as text.
pub fn render(tables: &[BenchTable], candidate: &str) -> String {
    let mut s = String::new();
    let opt = |v: Option<f64>, prec: usize| v.map_or("-".to_string(), |v| format!("{v:.prec$}"));
    for t in tables {
        let _ = writeln!(s, "== {} ==", t.name);
        let _ = writeln!(
            s,
            "{:<13} {:>5} {:>14} {:>12} {:>7} {:>9} {:>14}",
            "engine", "runs", "ops/sec(med)", "P99(us)", "W-Amp", "IO W-Amp", "peak RSS(MiB)"
        );
        for r in &t.rows {
            let _ = writeln!(
                s,
                "{:<13} {:>5} {:>14.0} {:>12} {:>7} {:>9} {:>14}",
                r.engine,
                r.runs,
                r.ops_per_sec,
                opt(r.p99, 2),
                opt(r.write_amplification, 2),
                opt(r.process_write_amplification, 2),
                opt(r.peak_rss_kb.map(|k| k / 1024.0), 1)
            );
        }
        for (baseline, ratio) in &t.ratios {
            let _ = writeln!(
                s,
                "ratio {candidate}/{baseline} (ops/sec): {}",
                opt(*ratio, 3)
            );
        }
        s.push('\n');
    }
    s
}

/// Runs `strata compare`.
///
/// # Errors
/// An unreadable input, a bad line, or an input with no records.
pub fn run(args: &CompareArgs) -> Result<()> {
    let records = read_records(&args.input)?;
    if records.is_empty() {
        return Err(CliError::BadInput(format!(
            "no records in `{}`",
            args.input.display()
        )));
    }
    let tables = aggregate(&records, &args.candidate, &args.baseline);
    print!("{}", render(&tables, &args.candidate));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::parse_records;
    use std::path::Path;

    #[test]
    fn median_odd_even_empty() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }

    #[test]
    fn aggregates_synthetic_runs() {
        let lines = r#"
{"name":"fillrandom","engine":"strata","ops_per_sec":100.0,"p99":5.0,"write_amplification":3.0,"peak_rss_kb":2048}
{"name":"fillrandom","engine":"rocksdb","ops_per_sec":80.0,"p99":6.0,"write_amplification":4.0,"peak_rss_kb":4096}
{"name":"fillrandom","engine":"strata","ops_per_sec":120.0,"p99":4.0,"write_amplification":3.2,"peak_rss_kb":2048}
{"name":"fillrandom","engine":"rocksdb","ops_per_sec":100.0,"p99":7.0,"write_amplification":4.2,"peak_rss_kb":4096}
{"name":"fillrandom","engine":"strata","ops_per_sec":90.0,"p99":9.0,"write_amplification":3.1,"peak_rss_kb":2048}
{"name":"fillrandom","engine":"rocksdb","ops_per_sec":90.0,"p99":8.0,"write_amplification":4.1,"peak_rss_kb":4096}
{"name":"readrandom","engine":"strata","ops_per_sec":50.0}
"#;
        let recs = parse_records(lines.as_bytes(), Path::new("synthetic")).expect("parse");
        let t = aggregate(&recs, "strata", &["rocksdb".to_string()]);
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].name, "fillrandom");
        let s = &t[0].rows[0];
        assert_eq!((s.engine.as_str(), s.runs), ("strata", 3));
        assert_eq!(s.ops_per_sec, 100.0);
        assert_eq!(s.p99, Some(5.0));
        assert_eq!(s.write_amplification, Some(3.1));
        let r = &t[0].rows[1];
        assert_eq!(r.ops_per_sec, 90.0);
        assert!(t[0].ratios[0]
            .1
            .is_some_and(|x| (x - 100.0 / 90.0).abs() < 1e-9));
        assert_eq!(t[1].ratios[0].1, None);
        assert_eq!(t[1].rows[0].p99, None);
        let text = render(&t, "strata");
        assert!(text.contains("== fillrandom =="), "{text}");
        assert!(
            text.contains("ratio strata/rocksdb (ops/sec): 1.111"),
            "{text}"
        );
        assert!(text.contains("4.0"), "{text}"); // rocksdb peak RSS 4 MiB
    }

    #[test]
    fn one_ratio_per_baseline_and_null_w_amp_is_a_dash() {
        let lines = r#"
{"name":"fillseq","engine":"strata","ops_per_sec":300.0,"write_amplification":1.0}
{"name":"fillseq","engine":"rocksdb","ops_per_sec":200.0,"write_amplification":1.0}
{"name":"fillseq","engine":"fjall","ops_per_sec":150.0,"write_amplification":null,"process_write_amplification":2.25}
"#;
        let recs = parse_records(lines.as_bytes(), Path::new("synthetic")).expect("parse");
        let baselines = ["rocksdb".to_string(), "fjall".to_string(), "x".to_string()];
        let t = aggregate(&recs, "strata", &baselines);
        let r: Vec<Option<f64>> = t[0].ratios.iter().map(|(_, r)| *r).collect();
        assert_eq!(r, vec![Some(1.5), Some(2.0), None]);
        assert_eq!(t[0].rows[2].write_amplification, None);
        assert_eq!(t[0].rows[2].process_write_amplification, Some(2.25));
        assert_eq!(t[0].rows[0].process_write_amplification, None);
        let text = render(&t, "strata");
        assert!(text.contains("      - "), "{text}");
        assert!(text.contains(" 2.25 "), "{text}");
        assert!(
            text.contains("ratio strata/rocksdb (ops/sec): 1.500"),
            "{text}"
        );
        assert!(
            text.contains("ratio strata/fjall (ops/sec): 2.000"),
            "{text}"
        );
        assert!(text.contains("ratio strata/x (ops/sec): -"), "{text}");
    }
}
