//! `strata stress`: a multi-threaded random workload whose every acknowledged write is
//! tracked in an expected-state file, so the database can be verified after `kill -9`.
//!
//! ```text
//! strata stress --db=DIR [--max_key=N] [--threads=N] [--ops_per_thread=N | --duration=S]
//!               [--seed=N] [--value_size=N] [--expected_state=PATH] [--use_existing_db]
//!               [op mix: --put_pct --delete_pct --batch_pct --txn_pct --get_pct
//!                --scan_pct --snapshot_pct] [--flush_one_in=N] [--compact_range_one_in=N]
//!               [every engine flag: --compression_type, --write_buffer_size, ...]
//! strata stress --db=DIR --verify_only [--expected_state=PATH]
//! ```
//!
//! Role: the process side of the crash test (`scripts/crash-test.sh`, modelled on
//! RocksDB's `db_stress` + `db_crashtest.py`). A run starts fresh (deleting the database
//! and the expected state) unless `--use_existing_db`, in which case it first verifies
//! the database against the expected state and settles the writes a kill left in
//! flight. Threads then run the op mix ([`worker`]); every read is checked. A run that
//! finishes verifies every key again ([`verify`]) and prints one summary line.
//! `--verify_only` only opens, verifies, settles and prints.
//!
//! What is promised after `kill -9` (a process crash, not a power loss): every
//! acknowledged write is in the database, with `--sync` on or off, because every write
//! reaches the operating system before it is acknowledged. A mismatch exits non-zero with
//! one line naming the key, what was found and what was expected.
//!
//! Files: [`expected`] (the expected-state file), [`keyspace`] (keys and self-checking
//! values), [`worker`] (one thread), [`verify`] (the whole-database check).

pub mod expected;
pub mod keyspace;
pub mod verify;
pub mod worker;

use crate::engine::options::{EngineFlags, EngineKind};
use crate::engine::strata::db_builder;
use crate::error::{CliError, Result};
use clap::Args;
use expected::{ExpectedState, MAX_THREADS};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// `strata stress`.
#[derive(Args, Clone, Debug)]
pub struct StressArgs {
    /// Keys are 0..max_key (default 10000; an existing expected state fixes it).
    #[arg(long = "max_key")]
    pub max_key: Option<u64>,
    /// Worker threads; thread t writes the keys k with (k / 16) % threads == t.
    #[arg(long = "threads", default_value_t = 4)]
    pub threads: usize,
    /// Operations per thread (0 = no limit; then --duration must be set).
    #[arg(long = "ops_per_thread", default_value_t = 10_000)]
    pub ops_per_thread: u64,
    /// Stop after this many seconds (0 = no limit).
    #[arg(long = "duration", default_value_t = 0)]
    pub duration: u64,
    /// Random seed (default: from the clock; printed either way).
    #[arg(long = "seed")]
    pub seed: Option<u64>,
    /// Longest value in bytes, at least 12 (default 100; an existing expected state
    /// fixes it).
    #[arg(long = "value_size")]
    pub value_size: Option<u64>,
    /// The expected-state file (default: <db>/../<db-name>.expected).
    #[arg(long = "expected_state")]
    pub expected_state: Option<PathBuf>,
    /// Only verify the database against the expected state (and settle writes that
    /// were in flight when the writer was killed).
    #[arg(long = "verify_only", default_value_t = false)]
    pub verify_only: bool,
    /// Percent of operations that are single puts.
    #[arg(long = "put_pct", default_value_t = 25)]
    pub put_pct: u32,
    /// Percent of operations that are merges into counter keys (`strata.u64_add`).
    #[arg(long = "merge_pct", default_value_t = 10)]
    pub merge_pct: u32,
    /// Percent of operations that are single deletes.
    #[arg(long = "delete_pct", default_value_t = 7)]
    pub delete_pct: u32,
    /// Percent of operations that are range deletions of 1-16 keys inside one block of
    /// 16 keys, all owned by the deleting thread.
    #[arg(long = "delete_range_pct", default_value_t = 3)]
    pub delete_range_pct: u32,
    /// Percent of operations that are batches of 2-8 puts, merges and deletes.
    #[arg(long = "batch_pct", default_value_t = 10)]
    pub batch_pct: u32,
    /// Percent of operations that are optimistic transactions: 1-8 of the thread's keys
    /// read with get_for_update (and checked), rewritten, read back, then committed
    /// (retried on a conflict, which only a read of another thread's key may cause) or
    /// rolled back.
    #[arg(long = "txn_pct", default_value_t = 5)]
    pub txn_pct: u32,
    /// Percent of operations that are point reads.
    #[arg(long = "get_pct", default_value_t = 25)]
    pub get_pct: u32,
    /// Percent of operations that are range scans (forward or reverse).
    #[arg(long = "scan_pct", default_value_t = 10)]
    pub scan_pct: u32,
    /// Percent of operations that take a snapshot (checked some operations later).
    #[arg(long = "snapshot_pct", default_value_t = 5)]
    pub snapshot_pct: u32,
    /// One operation in N (per thread, on average) is a flush (0 = never).
    #[arg(long = "flush_one_in", default_value_t = 2000)]
    pub flush_one_in: u64,
    /// One operation in N is a compaction of a small key range (0 = never).
    #[arg(long = "compact_range_one_in", default_value_t = 5000)]
    pub compact_range_one_in: u64,
    /// Engine options (`--db` names the database, `--sync` syncs every write).
    #[command(flatten)]
    pub engine: EngineFlags,
}

const DEFAULT_MAX_KEY: u64 = 10_000;
const DEFAULT_VALUE_SIZE: u64 = 100;

impl StressArgs {
    /// Rejects impossible combinations.
    ///
    /// # Errors
    /// [`CliError::Usage`] naming the flag.
    pub fn validate(&self) -> Result<()> {
        let usage = |m: &str| Err(CliError::Usage(m.to_string()));
        if self.engine.engine != EngineKind::Strata {
            return usage("'--engine': stress runs on strata only");
        }
        if self.threads == 0 || self.threads > MAX_THREADS {
            return usage("invalid value for '--threads': must be in 1..=256");
        }
        if self.max_key == Some(0) {
            return usage("invalid value for '--max_key': must be > 0");
        }
        if self
            .value_size
            .is_some_and(|v| v < keyspace::VALUE_HEADER as u64)
        {
            return usage("invalid value for '--value_size': must be >= 12");
        }
        if !self.verify_only && self.ops_per_thread == 0 && self.duration == 0 {
            return usage("one of '--ops_per_thread' and '--duration' must be non-zero");
        }
        let sum = self.put_pct
            + self.merge_pct
            + self.delete_pct
            + self.delete_range_pct
            + self.batch_pct
            + self.txn_pct
            + self.get_pct
            + self.scan_pct
            + self.snapshot_pct;
        if sum != 100 {
            return Err(CliError::Usage(format!(
                "the op percentages (--put_pct, --merge_pct ... --snapshot_pct) sum to {sum}, not 100"
            )));
        }
        Ok(())
    }

    fn expected_path(&self) -> PathBuf {
        self.expected_state
            .clone()
            .unwrap_or_else(|| ExpectedState::default_path(&self.engine.db))
    }
}

/// Opens the expected state of an existing run, checking it against the flags.
fn open_expected(args: &StressArgs) -> Result<ExpectedState> {
    let path = args.expected_path();
    if !path.exists() {
        return Err(CliError::Usage(format!(
            "no expected state at '{}' (run `strata stress` without --verify_only first, \
             or pass --expected_state)",
            path.display()
        )));
    }
    let st = ExpectedState::open(&path)?;
    if args.max_key.is_some_and(|m| m != st.max_key()) {
        return Err(CliError::Usage(format!(
            "'--max_key' differs from the expected state's max_key={}",
            st.max_key()
        )));
    }
    if args.value_size.is_some_and(|v| v != st.value_size()) {
        return Err(CliError::Usage(format!(
            "'--value_size' differs from the expected state's value_size={}",
            st.value_size()
        )));
    }
    Ok(st)
}

fn print(line: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|()| out.flush())
        .map_err(|e| CliError::Stdio("stdout", e))
}

fn verified_line(what: &str, v: &verify::Verified) -> String {
    format!(
        "{what}: ok keys={} present={} in_flight_new={} in_flight_old={} scanned={}",
        v.keys, v.present, v.in_flight_new, v.in_flight_old, v.scanned
    )
}

/// Runs `strata stress`.
///
/// # Errors
/// Usage errors, a mismatch ([`CliError::Mismatch`]), engine errors.
pub fn run(args: &StressArgs) -> Result<()> {
    args.validate()?;
    let options = args.engine.strata_options()?;
    if args.verify_only {
        let mut st = open_expected(args)?;
        let db = db_builder(&args.engine, &args.engine.db)?.open(&args.engine.db, options)?;
        let v = verify::verify(&db, &st, true)?.into_result()?;
        let blocks = db.verify_checksums()?;
        db.close()?;
        st.count_verify()?;
        let (runs, verifies) = st.runs_and_verifies();
        return print(&format!(
            "{} blocks_checked={blocks} acked_writes_total={} runs={runs} verifies={verifies}",
            verified_line("verify", &v),
            st.total_acked()
        ));
    }

    let path = args.expected_path();
    let mut st = if args.engine.use_existing_db && path.exists() {
        open_expected(args)?
    } else {
        if args.engine.use_existing_db && args.engine.db.join("CURRENT").exists() {
            return Err(CliError::Usage(format!(
                "'--use_existing_db': the database exists but its expected state '{}' \
                 does not",
                path.display()
            )));
        }
        if !args.engine.use_existing_db {
            crate::engine::destroy(&args.engine.db)?;
        }
        ExpectedState::create(
            &path,
            args.max_key.unwrap_or(DEFAULT_MAX_KEY),
            args.value_size.unwrap_or(DEFAULT_VALUE_SIZE),
        )?
    };
    // Every thread must own a block of keys (keyspace::owner).
    if st.max_key() < args.threads as u64 * keyspace::BLOCK {
        return Err(CliError::Usage(format!(
            "'--max_key' must be at least {} x --threads (every thread owns blocks of keys)",
            keyspace::BLOCK
        )));
    }
    st.count_run()?;
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    });
    print(&format!(
        "stress: seed={seed} threads={} max_key={} value_size={} db={} expected_state={}",
        args.threads,
        st.max_key(),
        st.value_size(),
        args.engine.db.display(),
        st.path().display()
    ))?;
    let db = db_builder(&args.engine, &args.engine.db)?.open(&args.engine.db, options)?;
    let before = verify::verify(&db, &st, true)?.into_result()?;
    print(&verified_line("verify before run", &before))?;

    let start = Instant::now();
    let stop = AtomicBool::new(false);
    let shared = worker::Shared {
        db: &db,
        st: &st,
        args,
        deadline: (args.duration > 0).then(|| start + Duration::from_secs(args.duration)),
        stop: &stop,
    };
    let results: Vec<Result<worker::ThreadStats>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..args.threads)
            .map(|t| {
                let shared = &shared;
                s.spawn(move || worker::run(shared, t, seed))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|p| {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    Err(CliError::WorkerPanic(msg))
                })
            })
            .collect()
    });
    let secs = start.elapsed().as_secs_f64();
    let mut total = worker::ThreadStats::default();
    for r in results {
        total.add(&r?);
    }
    let after = verify::verify(&db, &st, false)?.into_result()?;
    db.close()?;
    print(&verified_line("verify after run", &after))?;
    print(&format!(
        "stress: ok seed={seed} secs={secs:.1} ops={} ops_per_sec={:.0} writes_acked={} \
         puts={} merges={} deletes={} range_deletes={} batches={} transactions={} \
         txn_conflicts={} txn_rollbacks={} gets={} scans={} snapshot_checks={} flushes={} \
         compactions={}",
        total.ops(),
        total.ops() as f64 / secs.max(1e-9),
        total.writes(),
        total.puts,
        total.merges,
        total.deletes,
        total.range_deletes,
        total.batches,
        total.transactions,
        total.txn_conflicts,
        total.txn_rollbacks,
        total.gets,
        total.scans,
        total.snapshot_checks,
        total.flushes,
        total.compactions
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        s: StressArgs,
    }

    fn parse(args: &[&str]) -> StressArgs {
        T::try_parse_from(std::iter::once("t").chain(args.iter().copied()))
            .expect("parse")
            .s
    }

    #[test]
    fn flags_parse_and_validate() {
        let a = parse(&[
            "--db=/tmp/x",
            "--max_key=100",
            "--threads=3",
            "--duration=5",
            "--ops_per_thread=0",
            "--compression_type=lz4",
            "--compaction_output_partitioning=aligned",
            "--sync=true",
        ]);
        a.validate().expect("valid");
        assert_eq!(a.max_key, Some(100));
        assert!(a.engine.sync);
        assert!(parse(&["--threads=0"]).validate().is_err());
        assert!(parse(&["--put_pct=50"]).validate().is_err());
        assert!(parse(&["--ops_per_thread=0"]).validate().is_err());
        assert!(parse(&["--value_size=4"]).validate().is_err());
    }

    #[test]
    fn run_then_verify_on_a_real_db() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let db = format!("--db={}", tmp.path().join("db").display());
        let a = parse(&[
            &db,
            "--max_key=300",
            "--threads=3",
            "--ops_per_thread=400",
            "--seed=7",
            "--write_buffer_size=8192",
            "--target_file_size_base=4096",
            "--flush_one_in=100",
            "--compact_range_one_in=200",
        ]);
        run(&a).expect("stress run");
        let again = parse(&[
            &db,
            "--use_existing_db",
            "--ops_per_thread=200",
            "--threads=2",
        ]);
        run(&again).expect("second run on the same db");
        run(&parse(&[&db, "--verify_only"])).expect("verify");

        // A lost write is reported: rewrite one key behind the stress tool's back.
        let st = ExpectedState::open(&tmp.path().join("db.expected")).expect("expected");
        let k = (0..st.max_key())
            .find(|&k| st.get(k).current.is_some())
            .expect("a present key");
        drop(st);
        let opts = parse(&[&db]).engine.strata_options().expect("options");
        let d = strata::Db::open(tmp.path().join("db"), opts).expect("open");
        d.delete(&strata::WriteOptions::default(), &keyspace::key(k))
            .expect("delete");
        d.close().expect("close");
        let err = run(&parse(&[&db, "--verify_only"])).expect_err("mismatch");
        let msg = err.to_string();
        assert!(
            matches!(err, CliError::Mismatch(_)) && msg.contains(&format!("key {k}: absent")),
            "{msg}"
        );
    }
}
