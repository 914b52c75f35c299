//! Delayed compaction (Pan, Yue and Xiong, "dCompaction: Speeding up Compaction of the
//! LSM-Tree via Delayed Compaction", JCST 2017, §2.2 and §4).
//!
//! Shape of the paper's experiment, kept (§4.1): 16-byte keys and 256-byte values;
//! keys from a scrambled zipfian (0.99) over a key space equal to the operation count;
//! 4 MiB memtables, 2 MiB files, 4 KiB blocks, fanout 10, a 10 MiB L1; datasets D1–D4
//! with write ratios 1.0, 0.8, 0.2 and 0.0 (D4 reads after loading the D1 stream, so
//! D1 and D4 are one run); VCT 12 and VSMT 5. `--scale=1` is 8 M operations (2 GiB of
//! records), `--scale=3` the paper's 24 M. Every engine runs with direct I/O and a block
//! cache of 1/8 of the data, so reads reach the disk as on the paper's 2 GB machine.
//!
//! Compared on the same streams: Strata with the option off and on, each with fixed
//! and aligned output partitioning, and (with `--features rocksdb`) RocksDB leveled and
//! universal. Configurations alternate within each stream (the order rotates from one
//! stream to the next), so no engine always runs first.
//!
//! Parts (`--parts`): `d1`..`d4` (Figs. 10–12), `volume` (Figs. 13, 14), `record`
//! (Fig. 15), `vct` (Figs. 16, 17), `vsmt` (Fig. 18), `devices` (Fig. 19 on the `hdd`
//! model, and D1 on `sata-ssd`), `motivation` (Figs. 2 and 3 from the baseline's
//! counters). A run two parts share is run once ([`spec::Spec`]).
//!
//! Per run ([`measure::Row`]): throughput, write and get latency (mean, P99), the share
//! of the main phase writers spent stalled, compaction bytes read and written after
//! compactions settle and again after the read phase, W-Amp, tables and parents probed
//! per get, virtual tables and garbage at the end, and space amplification (live table
//! bytes over the same after a whole-range compaction).

mod charts;
mod measure;
mod parts;
mod report;
mod row;
mod spec;

use super::append_json;
use crate::engine::options::{EngineFlags, EngineKind};
use crate::error::{CliError, Result};
use crate::results::Provenance;
use clap::Args;
use row::Row;
use spec::{Config, Spec, Stream, OPS_PER_SCALE, PAPER_GB_AT_SCALE_3, PAPER_VALUE_SIZE};
use std::path::PathBuf;

/// `strata experiment dcompaction`.
#[derive(Args, Debug, Clone)]
pub struct DcompactionArgs {
    /// Engine flags (sizes, cache, direct I/O, partitioning and delayed compaction are
    /// set by the experiment; compression, bloom bits, L0 triggers and background jobs
    /// pass through). `--db` is the scratch directory.
    #[command(flatten)]
    pub engine: EngineFlags,
    /// Size multiplier: 8,000,000 × scale operations per dataset (3 = the paper's 24 M).
    #[arg(long = "scale", default_value_t = 1.0)]
    pub scale: f64,
    /// Parts to run, comma-separated: d1, d2, d3, d4, volume, record, vct, vsmt,
    /// devices, motivation (or `all`).
    #[arg(long = "parts", default_value = "all")]
    pub parts: String,
    /// Memtable bytes; files are half of it and L1 two and a half times (the paper: 4 MiB,
    /// 2 MiB, 10 MiB). Smaller keeps a tiny `--scale` as deep a tree as the paper's.
    #[arg(long = "memtable_size", default_value_t = 4 << 20)]
    pub memtable_size: usize,
    /// Value bytes (the paper's records: 256).
    #[arg(long = "value_size", default_value_t = PAPER_VALUE_SIZE)]
    pub value_size: usize,
    /// Zipfian constant of the keys (scrambled).
    #[arg(long = "zipf", default_value_t = 0.99)]
    pub zipf: f64,
    /// Client threads of every phase.
    #[arg(long = "threads", default_value_t = 1)]
    pub threads: usize,
    /// Gets of the read phase after each stream's main phase, as a fraction of its
    /// operations (the D1 stream's read phase is D4: the paper's is 1).
    #[arg(long = "read_phase", default_value_t = 1.0)]
    pub read_phase: f64,
    /// Direct I/O for table reads and writes on every engine (false only where the
    /// file system refuses O_DIRECT).
    #[arg(long = "direct_io", default_value_t = true, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub direct_io: bool,
    /// Paper-equivalent data volumes (GB) of the volume part (§4.2.1: 4–8).
    #[arg(long = "volumes", default_value = "4,5,6,7,8")]
    pub volumes: String,
    /// Value sizes of the record part (§4.2.2), at the data volume of D1.
    #[arg(long = "record_sizes", default_value = "128,256,384,512,640")]
    pub record_sizes: String,
    /// VCTs of the vct part (§4.2.3).
    #[arg(long = "vcts", default_value = "4,8,12,16,20")]
    pub vcts: String,
    /// VSMTs of the vsmt part (§4.2.4).
    #[arg(long = "vsmts", default_value = "3,4,5,6,7,9,11")]
    pub vsmts: String,
    /// Scale of the devices part, whose simulated disks are far slower.
    #[arg(long = "device_scale", default_value_t = 0.01)]
    pub device_scale: f64,
    /// Runs of each configuration on each stream; throughputs, latencies and byte
    /// counts are reported as medians (the VSMT part's read copies run once).
    #[arg(long = "repeats", default_value_t = 1)]
    pub repeats: usize,
    /// Random seed of every stream.
    #[arg(long = "seed", default_value_t = 7)]
    pub seed: u64,
    /// JSON-lines output.
    #[arg(long = "json", default_value = "results/experiment-dcompaction.jsonl")]
    pub json: PathBuf,
    /// Chart output directory.
    #[arg(long = "charts", default_value = "docs/experiments")]
    pub charts: PathBuf,
}

/// The parts, in the order they run (later parts reuse earlier runs).
const PARTS: &[&str] = &[
    "d1",
    "d2",
    "d3",
    "d4",
    "vct",
    "vsmt",
    "volume",
    "record",
    "motivation",
    "devices",
];

/// Why RocksDB does not run, or `None` if this binary has it.
fn rocksdb_missing() -> Option<&'static str> {
    (!cfg!(feature = "rocksdb")).then_some(
        "this binary was built without `--features rocksdb` \
         (cargo build --release -p strata-cli --features rocksdb)",
    )
}

/// Runs the groups of runs and keeps every row, so later parts reuse earlier runs.
struct Driver<'a> {
    args: &'a DcompactionArgs,
    prov: Provenance,
    /// Every spec run so far, with its repeats.
    done: Vec<(Spec, Vec<Row>)>,
    /// The rows reported so far (medians of repeats).
    rows: Vec<Row>,
    /// Rounds run so far: rotates the configurations of the next.
    rounds: usize,
}

impl Driver<'_> {
    /// Runs `configs` on `stream` for `part` (`--repeats` rounds of them, in an order
    /// rotated from one round to the next); prints the stream's table of medians and
    /// appends its rows.
    fn group(&mut self, part: &str, stream: &Stream, configs: &[Config]) -> Result<Vec<Row>> {
        let runs = self.runs(part, stream, configs)?;
        self.emit(part, stream, runs)
    }

    /// [`Driver::group`] without printing or appending: each configuration's runs.
    /// A spec an earlier part ran is not run again: its runs come back marked `reused`.
    fn runs(&mut self, part: &str, stream: &Stream, configs: &[Config]) -> Result<Vec<Vec<Row>>> {
        let n = configs.len().max(1);
        let repeats = self.args.repeats.max(1);
        let mut runs: Vec<Vec<Row>> = vec![Vec::new(); configs.len()];
        for round in 0..repeats {
            for i in 0..configs.len() {
                let j = (i + self.rounds) % n;
                let (Some(config), Some(slot)) = (configs.get(j), runs.get_mut(j)) else {
                    continue;
                };
                let spec = Spec {
                    stream: stream.clone(),
                    config: config.clone(),
                };
                if let Some((_, earlier)) = self.done.iter().find(|(s, _)| same_run(s, &spec)) {
                    if round == 0 {
                        slot.extend(earlier.iter().map(|r| Row {
                            reused: true,
                            ..r.clone()
                        }));
                    }
                    continue;
                }
                let mut r = measure::run(self.args, &spec, &self.args.engine.db.join("run"))?;
                r.repeat = Some(round);
                r.repeats = repeats;
                slot.push(r);
            }
            self.rounds += 1;
        }
        for (config, slot) in configs.iter().zip(&mut runs) {
            let spec = Spec {
                stream: stream.clone(),
                config: config.clone(),
            };
            if !self.done.iter().any(|(s, _)| same_run(s, &spec)) {
                self.done.push((spec, slot.clone()));
            }
            for r in slot.iter_mut() {
                r.part = part.to_string();
                r.dataset = stream.dataset.clone();
            }
        }
        Ok(runs)
    }

    /// Marks, prints and appends the rows of one stream: each configuration's runs
    /// (when there are several) and their median, which alone is printed and kept.
    fn emit(&mut self, part: &str, stream: &Stream, runs: Vec<Vec<Row>>) -> Result<Vec<Row>> {
        let mut rows = Vec::new();
        for repeats in &runs {
            if repeats.len() > 1 {
                for r in repeats {
                    append_json(&self.args.json, r, &self.prov)?;
                }
            }
            rows.extend(Row::median(repeats));
        }
        mark_compaction_bound(&mut rows);
        let title = format!(
            "{part}: {} ({} ops, writes {:.0}%, {} B values, {:.2} GB-equiv., then {} gets{})",
            stream.dataset,
            stream.operations,
            100.0 * stream.write_ratio,
            stream.value_size,
            rows.first().map_or(0.0, |r| r.volume_gb_equivalent),
            stream.read_ops,
            match rows.first().map_or(1, |r| r.repeats) {
                1 => String::new(),
                n => format!("; medians of {n} runs"),
            }
        );
        report::print_header(&title);
        // Strata first, off before on, fixed before aligned; then RocksDB.
        rows.sort_by_key(|r| {
            let p = r.partitioning != "fixed";
            let d = r.delayed_compaction;
            (r.engine != "strata", p, d, r.vct, r.vsmt, r.config.clone())
        });
        for r in &rows {
            report::print_row(r);
            append_json(&self.args.json, r, &self.prov)?;
        }
        let refs: Vec<&Row> = rows.iter().collect();
        report::print_legend(&refs);
        report::print_effect(&refs);
        self.rows.extend(rows.iter().cloned());
        Ok(rows)
    }
}

/// True iff `a` and `b` are the same measurement: the same operations on the same
/// configuration (the dataset's name aside).
fn same_run(a: &Spec, b: &Spec) -> bool {
    let (s, t) = (&a.stream, &b.stream);
    a.config == b.config
        && (s.operations, s.key_space, s.value_size, s.read_ops)
            == (t.operations, t.key_space, t.value_size, t.read_ops)
        && s.write_ratio == t.write_ratio
}

/// Sets `compaction_bound` on each row from the Strata-off row of its partitioning
/// (RocksDB's rows: fixed).
fn mark_compaction_bound(rows: &mut [Row]) {
    let bound: Vec<(&'static str, Option<bool>)> = ["fixed", "aligned"]
        .into_iter()
        .map(|p| {
            let b = rows
                .iter()
                .find(|r| r.engine == "strata" && !r.delayed_compaction && r.partitioning == p)
                .and_then(|r| r.main.stall_fraction)
                .map(|s| s >= 0.2);
            (p, b)
        })
        .collect();
    for r in rows.iter_mut() {
        r.compaction_bound = bound
            .iter()
            .find(|(p, _)| *p == r.partitioning)
            .and_then(|(_, b)| *b);
    }
}

/// Parses `--parts`.
fn parse_parts(s: &str) -> Result<Vec<&'static str>> {
    let asked: Vec<&str> = s
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if asked.contains(&"all") {
        return Ok(PARTS.to_vec());
    }
    if let Some(bad) = asked.iter().find(|p| !PARTS.contains(p)) {
        return Err(CliError::Usage(format!(
            "invalid value '{bad}' in '--parts' (expected {} or all)",
            PARTS.join(", ")
        )));
    }
    Ok(PARTS
        .iter()
        .copied()
        .filter(|p| asked.contains(p))
        .collect())
}

/// Refuses flag values the experiment cannot run, naming the flag.
fn check(args: &DcompactionArgs) -> Result<()> {
    let bad = |flag: &str, rule: &str| {
        Err(CliError::Usage(format!(
            "invalid value for '--{flag}': {rule}"
        )))
    };
    let positive = |x: f64| x > 0.0 && x.is_finite();
    if !positive(args.scale) {
        return bad("scale", "must be > 0");
    }
    if !positive(args.device_scale) {
        return bad("device_scale", "must be > 0");
    }
    if args.zipf.is_nan() || args.zipf <= 0.0 || args.zipf >= 1.0 {
        return bad("zipf", "must be in (0, 1)");
    }
    if args.read_phase.is_nan() || args.read_phase < 0.0 || args.read_phase.is_infinite() {
        return bad("read_phase", "must be >= 0");
    }
    if args.memtable_size < 8192 {
        return bad("memtable_size", "must be >= 8192");
    }
    if args.value_size == 0 {
        return bad("value_size", "must be > 0");
    }
    if args.repeats == 0 {
        return bad("repeats", "must be >= 1");
    }
    Ok(())
}

/// Runs `strata experiment dcompaction`.
///
/// # Errors
/// Engine, I/O and plotting errors; bad flags are usage errors.
pub fn run(args: &DcompactionArgs) -> Result<()> {
    check(args)?;
    let parts = parse_parts(&args.parts)?;
    let volumes: Vec<f64> = super::parse_list(&args.volumes, "volumes")?;
    let records: Vec<usize> = super::parse_list(&args.record_sizes, "record_sizes")?;
    let vcts: Vec<usize> = super::parse_list(&args.vcts, "vcts")?;
    let vsmts: Vec<usize> = super::parse_list(&args.vsmts, "vsmts")?;
    if args.engine.engine != EngineKind::Strata {
        println!("note: --engine is ignored: the experiment runs Strata and, where built, RocksDB");
    }
    let rocksdb = match rocksdb_missing() {
        Some(why) => {
            println!("RocksDB skipped: {why}; running Strata only");
            false
        }
        None => true,
    };
    let mut d = Driver {
        args,
        prov: Provenance::gather(),
        done: Vec::new(),
        rows: Vec::new(),
        rounds: 0,
    };
    let base = (OPS_PER_SCALE * args.scale).round() as u64;
    let stream =
        |name: &str, ops: u64, w: f64, v: usize| Stream::new(name, ops, w, v, args.read_phase);
    let d1 = stream("D1", base, 1.0, args.value_size);
    let mut overall = vec![
        Config::strata(false, false),
        Config::strata(true, false),
        Config::strata(false, true),
        Config::strata(true, true),
    ];
    let mut baseline = vec![Config::strata(false, false)];
    if rocksdb {
        overall.extend([Config::rocksdb(false), Config::rocksdb(true)]);
        baseline.push(Config::rocksdb(false));
    }
    let volume_stream = |v: f64| {
        let ops = (OPS_PER_SCALE * args.scale * v / PAPER_GB_AT_SCALE_3).round() as u64;
        stream(&format!("{v}GB"), ops, 1.0, args.value_size)
    };
    let (off, on) = (Config::strata(false, false), Config::strata(true, false));
    for part in parts {
        match part {
            // D4 is the read phase of the D1 run: one run for both.
            "d1" | "d4" if !d.rows.iter().any(|r| r.dataset == "D1") => {
                d.group("overall", &d1, &overall)?;
            }
            "d2" => {
                d.group(
                    "overall",
                    &stream("D2", base, 0.8, args.value_size),
                    &overall,
                )?;
            }
            "d3" => {
                d.group(
                    "overall",
                    &stream("D3", base, 0.2, args.value_size),
                    &overall,
                )?;
            }
            "vct" => {
                let mut configs = vec![off.clone()];
                configs.extend(vcts.iter().map(|&v| on.clone().with_vct(v)));
                d.group("vct", &d1, &configs)?;
            }
            "vsmt" => parts::vsmt(&mut d, &d1, &vsmts)?,
            "volume" => {
                let mut configs = vec![off.clone(), on.clone()];
                if rocksdb {
                    configs.push(Config::rocksdb(false));
                }
                for &v in &volumes {
                    d.group("volume", &volume_stream(v), &configs)?;
                }
            }
            "record" => {
                for &size in &records {
                    let ops = (base as f64 * PAPER_VALUE_SIZE as f64 / size as f64).round();
                    let s = stream(&format!("{size}B"), ops as u64, 1.0, size);
                    d.group("record", &s, &[off.clone(), on.clone()])?;
                }
            }
            "motivation" => {
                let mut streams = vec![
                    d1.clone(),
                    stream("D2", base, 0.8, args.value_size),
                    stream("D3", base, 0.2, args.value_size),
                ];
                streams.extend(volumes.iter().map(|&v| volume_stream(v)));
                for s in &streams {
                    d.group("motivation", s, &baseline)?;
                }
                let rows: Vec<&Row> = d.rows.iter().filter(|r| r.part == "motivation").collect();
                report::print_motivation(&rows);
            }
            "devices" => parts::devices(&mut d)?,
            _ => {}
        }
    }
    charts::draw(args, &d.rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_parse_in_running_order() {
        assert_eq!(
            parse_parts("d4,vct,d1").expect("ok"),
            vec!["d1", "d4", "vct"]
        );
        assert_eq!(parse_parts("all").expect("ok").len(), PARTS.len());
        let err = parse_parts("d1,d5").expect_err("bad part");
        assert!(err.to_string().contains("'d5' in '--parts'"), "{err}");
    }
}
