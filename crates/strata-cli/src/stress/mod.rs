//! `strata stress`: a multi-threaded random workload whose every acknowledged write is
//! tracked in an expected-state file, so the database can be verified after `kill -9`.
//!
//! ```text
//! strata stress --db=DIR [--max_key=N] [--threads=N] [--ops_per_thread=N | --duration=S]
//!               [--seed=N] [--value_size=N] [--column_families=N]
//!               [--expected_state=PATH] [--use_existing_db]
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
//! Column families: the database has `--column_families` families (`default`, `cf1`,
//! ...; created at the start of a run where missing). Each operation works in one
//! family picked at random, batches span families, and the expected state and the
//! verification cover every key of every family (see [`worker`], [`verify`]).
//!
//! Files: [`expected`] (the expected-state file), [`keyspace`] (keys and self-checking
//! values), [`worker`] (one thread), [`verify`] (the whole-database check).

pub mod expected;
pub mod keyspace;
pub mod space;
pub mod verify;
pub mod worker;

use crate::engine::family_name;
use crate::engine::options::{EngineFlags, EngineKind};
use crate::engine::strata::db_builder;
use crate::error::{CliError, Result};
use clap::Args;
use expected::{ExpectedState, MAX_FAMILIES, MAX_THREADS};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// `strata stress`.
///
/// `--num_column_families` (shared with `bench`) is hidden here: the families of a
/// stress run are `--column_families` (db_stress's name), fixed by the expected state.
#[derive(Args, Clone, Debug)]
#[command(mut_arg("num_column_families", |a| a.hide(true)))]
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
    /// Column families, 1..=64: `default`, `cf1`, ... Each operation works in one at
    /// random; batches span them (default 2; an existing expected state fixes it).
    #[arg(long = "column_families")]
    pub column_families: Option<usize>,
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
    /// What a write refused for a full disk (`NoSpace`) does: `fail` ends the run with
    /// the error; `wait` counts it, settles its keys back (it wrote nothing), pauses
    /// and goes on, so the run rides out a disk that fills up and is freed again
    /// (docs/ARCHITECTURE.md §7.8). Everything acknowledged is verified either way.
    #[arg(long = "on_no_space", value_enum, default_value_t = OnNoSpace::Fail)]
    pub on_no_space: OnNoSpace,
    /// Engine options (`--db` names the database, `--sync` syncs every write).
    #[command(flatten)]
    pub engine: EngineFlags,
}

/// `--on_no_space`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OnNoSpace {
    /// End the run with the error.
    Fail,
    /// Count the refusal, pause, go on.
    Wait,
}

impl OnNoSpace {
    /// True for [`OnNoSpace::Wait`].
    pub fn waits(self) -> bool {
        self == OnNoSpace::Wait
    }
}

const DEFAULT_MAX_KEY: u64 = 10_000;
const DEFAULT_VALUE_SIZE: u64 = 100;
const DEFAULT_COLUMN_FAMILIES: usize = 2;

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
            .column_families
            .is_some_and(|n| !(1..=MAX_FAMILIES).contains(&n))
        {
            return usage("invalid value for '--column_families': must be in 1..=64");
        }
        if self.engine.num_column_families != 1 {
            return usage(
                "'--num_column_families' is for bench and ycsb; stress takes \
                 '--column_families'",
            );
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
    if args.column_families.is_some_and(|n| n != st.families()) {
        return Err(CliError::Usage(format!(
            "'--column_families' differs from the expected state's families={}",
            st.families()
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
        "{what}: ok keys={} families={} present={} in_flight_new={} in_flight_old={} \
         scanned={}",
        v.keys, v.families, v.present, v.in_flight_new, v.in_flight_old, v.scanned
    )
}

/// The handles of families `0..n` of `db`, creating the missing ones with `options`'
/// per-tree fields (the families of a stress run are configured alike). Creation is
/// durable when it returns; a kill before it leaves the family missing, which the
/// verifier reads as empty.
fn families(db: &strata::Db, n: usize, options: &strata::Options) -> Result<Vec<strata::CfHandle>> {
    (0..n)
        .map(|f| {
            let name = family_name(f);
            match db.cf(&name) {
                Some(cf) => Ok(cf),
                None => Ok(db.create_cf(&name, options.cf_options())?),
            }
        })
        .collect()
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
            args.column_families.unwrap_or(DEFAULT_COLUMN_FAMILIES),
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
        "stress: seed={seed} threads={} max_key={} value_size={} column_families={} db={} \
         expected_state={}",
        args.threads,
        st.max_key(),
        st.value_size(),
        st.families(),
        args.engine.db.display(),
        st.path().display()
    ))?;
    let db = db_builder(&args.engine, &args.engine.db)?.open(&args.engine.db, options.clone())?;
    let before = verify::verify(&db, &st, true)?.into_result()?;
    print(&verified_line("verify before run", &before))?;
    let cfs = families(&db, st.families(), &options)?;

    let start = Instant::now();
    let stop = AtomicBool::new(false);
    let space = space::SpaceWatch::default();
    let shared = worker::Shared {
        space: &space,
        db: &db,
        cfs: &cfs,
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
    // What the tree hooks did in the default family (for `--tiering=hotrap`: the
    // promotion pathways a kill may have cut through); nothing without hooks.
    let hooks = db.stats().tree_hooks;
    db.close()?;
    print(&verified_line("verify after run", &after))?;
    if !hooks.is_empty() {
        let figures: Vec<String> = hooks.iter().map(|(k, v)| format!("{k}={v}")).collect();
        print(&format!("hooks: {}", figures.join(" ")))?;
    }
    print(&format!(
        "stress: ok seed={seed} secs={secs:.1} ops={} ops_per_sec={:.0} writes_acked={} \
         puts={} merges={} deletes={} range_deletes={} batches={} cross_family_batches={} \
         transactions={} txn_conflicts={} txn_rollbacks={} gets={} scans={} \
         snapshot_checks={} flushes={} compactions={} no_space_refused={} \
         no_space_streaks={}",
        total.ops(),
        total.ops() as f64 / secs.max(1e-9),
        total.writes(),
        total.puts,
        total.merges,
        total.deletes,
        total.range_deletes,
        total.batches,
        total.cross_family_batches,
        total.transactions,
        total.txn_conflicts,
        total.txn_rollbacks,
        total.gets,
        total.scans,
        total.snapshot_checks,
        total.flushes,
        total.compactions,
        total.no_space_refused,
        space.streaks()
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
        assert_eq!(a.on_no_space, OnNoSpace::Fail);
        assert!(parse(&["--on_no_space=wait"]).on_no_space.waits());
        assert!(T::try_parse_from(["t", "--on_no_space=retry"]).is_err());
        assert!(parse(&["--threads=0"]).validate().is_err());
        assert!(parse(&["--put_pct=50"]).validate().is_err());
        assert!(parse(&["--ops_per_thread=0"]).validate().is_err());
        assert!(parse(&["--value_size=4"]).validate().is_err());
        assert!(parse(&["--column_families=0"]).validate().is_err());
        assert!(parse(&["--column_families=65"]).validate().is_err());
        parse(&["--column_families=64"]).validate().expect("valid");
        assert!(parse(&["--num_column_families=2"]).validate().is_err());
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
            "--column_families=3",
        ]);
        run(&a).expect("stress run");
        // The expected state fixes the families: a different count is refused.
        let err = run(&parse(&[&db, "--use_existing_db", "--column_families=2"]))
            .expect_err("families differ");
        assert!(err.to_string().contains("families=3"), "{err}");
        let again = parse(&[
            &db,
            "--use_existing_db",
            "--ops_per_thread=200",
            "--threads=2",
        ]);
        run(&again).expect("second run on the same db");
        run(&parse(&[&db, "--verify_only"])).expect("verify");

        // Every family holds data the expected state accounts for.
        let st = ExpectedState::open(&tmp.path().join("db.expected")).expect("expected");
        assert_eq!(st.families(), 3);
        let st = &st;
        let present = |f: usize| (0..st.max_key()).filter(move |&k| st.get(f, k).current.is_some());
        for f in 0..3 {
            assert!(present(f).count() > 10, "family {f} holds almost nothing");
        }
        // A lost write is reported, naming the family: delete one key of `cf2` behind
        // the stress tool's back (its twin in `default` stays).
        let k = present(2).next().expect("a present key");
        let opts = parse(&[&db]).engine.strata_options().expect("options");
        let d = strata::Db::open(tmp.path().join("db"), opts).expect("open");
        assert_eq!(d.cf_names(), ["default", "cf1", "cf2"]);
        let cf2 = d.cf("cf2").expect("cf2");
        d.delete_cf(&strata::WriteOptions::default(), &cf2, &keyspace::key(k))
            .expect("delete");
        d.close().expect("close");
        let err = run(&parse(&[&db, "--verify_only"])).expect_err("mismatch");
        let msg = err.to_string();
        assert!(
            matches!(err, CliError::Mismatch(_))
                && msg.contains(&format!("family cf2 key {k}: absent")),
            "{msg}"
        );
    }

    /// A family the database lacks (a kill between creating the expected state and
    /// creating the family) reads as empty: fine while the expected state holds nothing
    /// in it, a mismatch naming the family once it does.
    #[test]
    fn a_missing_family_reads_as_empty() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("db");
        let db = format!("--db={}", path.display());
        let opts = parse(&[&db]).engine.strata_options().expect("options");
        strata::Db::open(&path, opts)
            .expect("create")
            .close()
            .expect("close");
        let st =
            ExpectedState::create(&tmp.path().join("db.expected"), 64, 100, 2).expect("expected");
        drop(st);
        let out = verify_only_line(&db);
        assert!(out.is_ok(), "{out:?}");
        let st = ExpectedState::open(&tmp.path().join("db.expected")).expect("expected");
        st.begin(1, 5, Some(9)).expect("begin");
        st.commit(1, 5).expect("commit");
        drop(st);
        let err = verify_only_line(&db).expect_err("mismatch");
        assert!(
            err.to_string().contains("family cf1 key 5: absent")
                && err.to_string().contains("no such family"),
            "{err}"
        );
    }

    fn verify_only_line(db: &str) -> Result<()> {
        run(&parse(&[db, "--verify_only"]))
    }
}
