//! `strata bench`: db_bench-style micro-benchmarks on Strata, RocksDB or fjall.
//!
//! Role: parses nothing itself ([`flags`] does), opens the engine once, runs each of
//! `--benchmarks` in order ([`workloads`]), prints db_bench's lines ([`report`]) and
//! appends one JSON record per benchmark (`results`).

pub mod flags;
pub mod floor;
#[cfg(feature = "prometheus")]
pub mod prometheus;
pub mod report;
pub mod workloads;

use crate::engine;
use crate::error::Result;
use crate::results::{self, Provenance};
use crate::runner::OpStats;
use crate::settle::{self, Unsettled};
use flags::{BenchArgs, Benchmark};
use std::collections::BTreeMap;

/// Runs `strata bench`.
///
/// # Errors
/// Bad flags, the engine's errors, or failure to write results.
pub fn run(args: &BenchArgs) -> Result<()> {
    args.validate()?;
    // The floor is the peer at its best: RocksDB without statistics, its default.
    let floored;
    let args = if args.floor && args.engine.rocksdb_statistics {
        floored = BenchArgs {
            engine: engine::options::EngineFlags {
                rocksdb_statistics: false,
                ..args.engine.clone()
            },
            ..args.clone()
        };
        &floored
    } else {
        args
    };
    let json_path = args.report.json_path("bench");
    let prov = Provenance::gather();
    let options = serde_json::to_value(args)?;
    let mapping = engine::mapping::of(&args.engine);
    // Before the open: the engine registers its metrics with the recorder installed
    // then. Served until the run returns.
    #[cfg(feature = "prometheus")]
    let endpoint = args.prometheus.map(prometheus::serve).transpose()?;
    #[cfg(feature = "prometheus")]
    if let Some(e) = &endpoint {
        println!("Prometheus: http://{}/metrics", e.addr());
    }
    let engine = engine::open(&args.engine, false)?;
    let floor = args
        .floor
        .then(|| floor::direct(engine.as_ref()))
        .transpose()?;
    let name = if args.floor {
        format!("{}-floor", engine.name())
    } else {
        engine.name().to_string()
    };
    print_header(args, &name, &mapping);
    if args.engine.num_column_families > 1 {
        // The database's families (an existing database may have more than are used).
        println!("Families:   {}", engine.cf_names()?.join(", "));
    }
    // The fill a `waitforcompaction` right after it settles.
    let mut unsettled: Option<Unsettled> = None;
    for (index, &b) in args.benchmarks.iter().enumerate() {
        results::reset_peak_rss();
        let written_before = results::process_write_bytes();
        let outcome = workloads::run(engine.as_ref(), floor, args, b, index)?;
        // Before anything is printed: the fill's bytes are the engine's.
        let written = settle::written_since(written_before);
        let Some(out) = outcome else {
            let stats = engine.stats();
            print!("{}", stats.level_table);
            if engine
                .unavailable_stats()
                .contains(&engine::stat::WRITE_AMPLIFICATION)
            {
                println!(
                    "write_amplification: unavailable ({} counts no flush/compaction bytes)",
                    engine.name()
                );
            } else {
                println!("write_amplification: {:.2}", stats.write_amplification());
            }
            if !engine
                .unavailable_stats()
                .contains(&engine::stat::LIVE_TABLE_BYTES)
            {
                println!("live_table_bytes: {}", stats.live_table_bytes);
            }
            unsettled = None;
            continue;
        };
        println!(
            "{}",
            report::summary_line(
                b.name(),
                &out.stats,
                out.seconds,
                out.found,
                out.note.as_deref()
            )
        );
        println!("{}", report::percentiles_line(&out.stats));
        if args.report.histogram {
            print!("{}", report::histogram(&out.stats));
        }
        let stats = engine.stats();
        let fill = matches!(
            b,
            Benchmark::Fillseq | Benchmark::Fillrandom | Benchmark::Overwrite
        );
        let settled = match (b, unsettled.take()) {
            _ if fill => {
                unsettled = Some(Unsettled::after(
                    b.name(),
                    &out.stats,
                    out.seconds,
                    &stats,
                    written_before,
                ));
                None
            }
            (Benchmark::Waitforcompaction, Some(fill)) => Some(fill.settled_by(out.seconds)),
            _ => None,
        };
        let amplification = fill
            .then(|| settle::write_amplification(written, out.stats.bytes))
            .flatten();
        if let Some(a) = amplification {
            println!("process_write_amplification: {a:.2}");
        }
        if let Some(s) = &settled {
            s.print();
        }
        if args.report.statistics {
            for (k, v) in &stats.counters {
                println!("{k}: {v}");
            }
        }
        if let Some(path) = &json_path {
            // A record of this benchmark: the engine's figures now, under `name`.
            let record = |name_of: &str, ops: &OpStats, seconds: f64, found: Option<u64>| {
                let mut rec = results::record(
                    "bench",
                    name_of,
                    ops,
                    seconds,
                    found,
                    BTreeMap::new(),
                    &stats,
                    engine.as_ref(),
                    options.clone(),
                    &mapping,
                    &prov,
                );
                rec.engine.clone_from(&name);
                rec
            };
            let mut rec = record(b.name(), &out.stats, out.seconds, out.found.map(|(f, _)| f));
            rec.process_write_bytes = written;
            rec.process_write_amplification = amplification;
            results::append(path, &rec)?;
            if let Some(s) = settled {
                let mut rec = record(&s.name, &s.stats, s.seconds, None);
                s.complete(&mut rec);
                results::append(path, &rec)?;
            }
        }
    }
    engine.close()?;
    if let Some(p) = json_path {
        eprintln!("results appended to {}", p.display());
    }
    Ok(())
}

fn print_header(args: &BenchArgs, engine: &str, mapping: &[engine::mapping::OptionMapping]) {
    println!("Engine:     {engine}");
    let not_exact: Vec<&str> = mapping
        .iter()
        .filter(|m| m.flag != "-" && m.fidelity != engine::mapping::Fidelity::Exact)
        .map(|m| m.flag.as_str())
        .collect();
    if !not_exact.is_empty() {
        println!(
            "Mapping:    not exact for {} (see option_mapping in the JSON)",
            not_exact.join(", ")
        );
    }
    println!("Keys:       {} bytes each", args.key_size);
    println!(
        "Values:     {} bytes each ({} bytes after compression)",
        args.value_size,
        (args.value_size as f64 * args.compression_ratio).round()
    );
    println!("Entries:    {}", args.num);
    println!("Threads:    {}", args.threads);
    println!(
        "Benchmarks: {}",
        args.benchmarks
            .iter()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(",")
    );
    println!("{}", "-".repeat(48));
}
