//! `strata`: benchmarks, YCSB, results tooling and a hand-editing tool for Strata
//! databases (and, with the `rocksdb` or `fjall` feature, RocksDB or fjall for
//! side-by-side runs).
//!
//! ```text
//! strata bench   --benchmarks=fillrandom,readrandom --num=1000000 [--num_column_families=N]
//!                [engine flags]
//! strata ycsb    --workload=a --phase=both --records=N --operations=M [engine flags]
//! strata ldb     --db=DIR [--hex] [--cf=NAME] put K V | get K | delete K | scan | dump | load
//!                | compact | verify | list_cfs | create_cf NAME | drop_cf NAME
//! strata stress  --db=DIR [--threads=N] [--duration=S] [--column_families=N] [engine flags]
//!                | --verify_only
//! strata sst-dump FILE [--scan] [--hex]
//! strata backup  --backup_dir=DIR create --db=DIR | list | verify [--backup_id=N]
//!                | restore [--backup_id=N] --to=DIR | purge --keep=N | delete --backup_id=N
//! strata plot    --input=results/bench.jsonl --output=plot.svg [--metric=ops_per_sec]
//! strata compare --input=results/compare.jsonl
//! strata experiment aligned|snapshot-filter|dcompaction [--scale=...]
//! strata device-bench --path=DIR [--device=PRESET|latency_us,mib_per_s,iops]
//! ```
//! Every failure prints one line, `error: ...`, and exits with status 1 (2 for a bad
//! command line).

mod backup;
mod bench;
mod compare;
mod device_bench;
mod engine;
mod error;
mod experiment;
mod keys;
mod ldb;
mod plot;
mod results;
mod runner;
mod settle;
mod sst_dump;
mod stress;
mod table;
mod values;
mod ycsb;

use clap::{Parser, Subcommand};
use error::{one_line, CliError};
use std::process::ExitCode;

/// The strata command.
#[derive(Parser, Debug)]
#[command(name = "strata", version, about = "Strata LSM key-value engine tools")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// db_bench-style benchmarks.
    ///
    /// Flags keep db_bench's names and meanings, except that --num writes and --reads
    /// reads are split among --threads (db_bench gives each thread the full count).
    /// Results are printed and appended as JSON lines to --json
    /// (default results/bench.jsonl; --no_json to skip).
    Bench(Box<bench::flags::BenchArgs>),
    /// YCSB workloads A-F, RO, RW, WH, UH.
    Ycsb(Box<ycsb::YcsbArgs>),
    /// Read and edit a database by hand.
    Ldb(Box<ldb::LdbArgs>),
    /// Random multi-threaded workload checked against an expected-state file (survives
    /// kill -9); --verify_only checks a database against it.
    Stress(Box<stress::StressArgs>),
    /// Properties (and with --scan, entries) of one table file.
    SstDump(sst_dump::SstDumpArgs),
    /// Incremental backups of a database: create, list, verify, restore, purge, delete.
    Backup(Box<backup::BackupArgs>),
    /// Bar chart of a results file (SVG).
    Plot(plot::PlotArgs),
    /// Median table per benchmark and engine from a results file.
    Compare(compare::CompareArgs),
    /// Reproduce a paper's experiment (aligned, snapshot-filter, dcompaction).
    Experiment(experiment::ExperimentArgs),
    /// Tables of typed columns: create, load, get, update, delete, scan, compact, show.
    Table(Box<table::TableArgs>),
    /// Measure a disk, or a device model over it, with direct I/O: 4 KiB and 16 KiB
    /// random reads at queue depth 1 and 16, 1 MiB sequential read and write.
    DeviceBench(Box<device_bench::DeviceBenchArgs>),
}

/// Parses the command line; a bad one becomes a single line naming the problem
/// (help and version requests are returned as is, to be printed in full).
fn parse<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    Cli::try_parse_from(args)
}

/// The first paragraph of a clap error on one line; it names the flag or value
/// (`error: unexpected argument '--foo' found`, `error: the following required arguments
/// were not provided: <KEY>`). Usage and tips are dropped.
fn first_line(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let line = rendered
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    if line.is_empty() {
        "error: bad command line".to_string()
    } else if line.starts_with("error:") {
        line
    } else {
        format!("error: {line}")
    }
}

fn is_broken_pipe(e: &CliError) -> bool {
    matches!(e, CliError::Stdio(_, io) if io.kind() == std::io::ErrorKind::BrokenPipe)
}

fn main() -> ExitCode {
    let cli = match parse(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    ExitCode::from(2)
                } else {
                    ExitCode::SUCCESS
                };
            }
            eprintln!("{}", first_line(&e));
            return ExitCode::from(2);
        }
    };
    let result = match &cli.command {
        Command::Bench(a) => bench::run(a),
        Command::Ycsb(a) => ycsb::run(a),
        Command::Ldb(a) => ldb::run(a),
        Command::Stress(a) => stress::run(a),
        Command::SstDump(a) => sst_dump::run(a),
        Command::Backup(a) => backup::run(a),
        Command::Table(a) => table::run(a),
        Command::Plot(a) => plot::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Experiment(a) => experiment::run(a),
        Command::DeviceBench(a) => device_bench::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", one_line(&e));
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err_line(args: &[&str]) -> String {
        match parse(std::iter::once("strata").chain(args.iter().copied())) {
            Ok(c) => panic!("parsed: {c:?}"),
            Err(e) => first_line(&e),
        }
    }

    #[test]
    fn unknown_flag_is_one_line_naming_it() {
        let l = err_line(&["bench", "--nmu=5"]);
        assert!(l.starts_with("error:") && l.contains("--nmu"), "{l}");
        assert!(!l.contains('\n'));
    }

    #[test]
    fn bad_values_name_the_flag() {
        let l = err_line(&["bench", "--num=lots"]);
        assert!(l.contains("--num") && l.contains("lots"), "{l}");
        let l = err_line(&["bench", "--benchmarks=fillrandom,fillbogus"]);
        assert!(l.contains("fillbogus") && l.contains("--benchmarks"), "{l}");
        let l = err_line(&["bench", "--compression_type=snappy"]);
        assert!(l.contains("snappy"), "{l}");
        let l = err_line(&["bench", "--sync=maybe"]);
        assert!(l.contains("--sync"), "{l}");
        let l = err_line(&["ycsb", "--workload=g"]);
        assert!(l.contains("--workload"), "{l}");
        let l = err_line(&["frobnicate"]);
        assert!(l.contains("frobnicate"), "{l}");
        let l = err_line(&["ldb", "get"]);
        assert!(l.contains("<KEY>"), "{l}");
    }

    #[test]
    fn ldb_help_hides_use_existing_db_but_bench_shows_it() {
        let help = |cmd: &str| match parse(["strata", cmd, "--help"]) {
            Ok(c) => panic!("parsed: {c:?}"),
            Err(e) => e.to_string(),
        };
        assert!(!help("ldb").contains("--use_existing_db"));
        assert!(help("ldb").contains("--compression_per_level"));
        assert!(help("bench").contains("--use_existing_db"));
        // Hidden, not removed: the shared flag still parses.
        assert!(parse(["strata", "ldb", "--use_existing_db=true", "dump"]).is_ok());
    }

    #[test]
    fn db_bench_flags_parse() {
        let cli = parse([
            "strata",
            "bench",
            "--benchmarks=fillseq,fillrandom,overwrite,readrandom,readseq,readreverse,seekrandom,readwhilewriting,deleterandom,compact,stats",
            "--db=/tmp/x",
            "--num=5000000",
            "--reads=500000",
            "--key_size=16",
            "--value_size=100",
            "--write_buffer_size=8388608",
            "--target_file_size_base=8388608",
            "--max_bytes_for_level_base=33554432",
            "--max_bytes_for_level_multiplier=10",
            "--bloom_bits=10",
            "--cache_size=67108864",
            "--compression_type=none",
            "--max_background_jobs=2",
            "--threads=1",
            "--sync=false",
            "--seed=7",
            "--use_existing_db=0",
            "--duration=0",
            "--seek_nexts=10",
            "--reverse_iterator",
            "--statistics",
            "--histogram=1",
            "--compaction_pri=min_overlapping_ratio",
            "--compaction_output_partitioning=aligned",
            "--aligned_variance=2",
            "--snapshot_filter=true",
            "--paranoid_checks=false",
            "--use_direct_reads=false",
            "--use_direct_io_for_flush_and_compaction=false",
            "--engine=rocksdb",
            "--json=out.jsonl",
        ])
        .expect("parse");
        let Command::Bench(b) = cli.command else {
            panic!("not bench");
        };
        assert_eq!(b.benchmarks.len(), 11);
        assert_eq!(b.num, 5_000_000);
        assert_eq!(b.read_count(), 500_000);
        assert!(b.reverse_iterator && b.report.statistics && b.report.histogram);
        assert!(!b.engine.sync);
        assert_eq!(b.engine.engine, engine::options::EngineKind::Rocksdb);
        b.validate().expect("valid");
    }

    #[test]
    fn engine_fjall_is_accepted_wherever_rocksdb_is() {
        for cmd in ["bench", "ycsb", "ldb"] {
            let mut args = vec!["strata", cmd, "--engine=fjall", "--db=/tmp/x"];
            if cmd == "ldb" {
                args.push("scan");
            }
            let cli = parse(args).expect("parse");
            let engine = match cli.command {
                Command::Bench(b) => b.engine.engine,
                Command::Ycsb(y) => y.engine.engine,
                Command::Ldb(l) => l.engine.engine,
                _ => panic!("{cmd}: wrong command"),
            };
            assert_eq!(engine, engine::options::EngineKind::Fjall, "{cmd}");
        }
    }

    #[test]
    fn reads_default_to_num() {
        let cli = parse(["strata", "bench", "--num=10"]).expect("parse");
        let Command::Bench(b) = cli.command else {
            panic!("not bench");
        };
        assert_eq!(b.read_count(), 10);
    }

    #[test]
    fn impossible_bench_values_are_usage_errors() {
        for args in [
            &["strata", "bench", "--key_size=3", "--num=10000"][..],
            &["strata", "bench", "--threads=0"],
            &["strata", "bench", "--num=0"],
        ] {
            let cli = parse(args.iter().copied()).expect("parse");
            let Command::Bench(b) = cli.command else {
                panic!("not bench");
            };
            assert!(matches!(b.validate(), Err(CliError::Usage(_))), "{args:?}");
        }
    }
}
