//! One run of `experiment dcompaction`: the phases a [`Spec`] drives through the engine
//! trait, and the figures they give ([`Row`]).
//!
//! A run opens a fresh database and: (1) drives the stream's main phase and waits for
//! compactions; (2) drives its read phase (gets only, the same key distribution) and
//! waits again, so merges the reads asked for are counted; (3) records the virtual
//! tables and garbage left; (4) flushes, records the live table bytes, compacts the
//! whole key range and records them again (space amplification). Every byte figure is
//! an engine counter or gauge, never an estimate; latencies come from the runner's HDR
//! histograms, per operation.

use super::row::{IoBytes, Latency, Phase, Row};
use super::spec::{cache_bytes, engine_flags, Spec, KEY_SIZE};
use super::DcompactionArgs;
use crate::engine::options::EngineKind;
use crate::engine::{self, EngineStats, KvEngine, VirtualSpace};
use crate::error::Result;
use crate::experiment::{copy_dir, counter};
use crate::keys::KeyFormat;
use crate::runner::{run_parallel, Budget, OpStats, PROGRESS_CHUNK};
use crate::values::ValueGenerator;
use crate::ycsb::generator::KeyChooser;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::time::Instant;

/// A counter's growth from `a` to `b`; `None` iff the engine lacks it.
fn delta(a: &EngineStats, b: &EngineStats, name: &str) -> Option<u64> {
    Some(counter(b, name)?.saturating_sub(counter(a, name)?))
}

fn per(n: Option<u64>, d: Option<u64>) -> Option<f64> {
    match (n, d) {
        (Some(n), Some(d)) if d > 0 => Some(n as f64 / d as f64),
        _ => None,
    }
}

/// Drives `ops` operations (writes with probability `write_ratio`, else gets) of the
/// keys `keys` draws over `key_space`, on `args.threads` threads, then waits for
/// compactions. `seed` fixes the stream: the same on every engine.
#[allow(clippy::too_many_arguments)]
fn phase(
    args: &DcompactionArgs,
    engine: &dyn KvEngine,
    keys: &KeyChooser,
    key_space: u64,
    ops: u64,
    write_ratio: f64,
    value_size: usize,
    seed: u64,
    label: &str,
) -> Result<Phase> {
    let before = engine.stats();
    let threads = args.threads.max(1);
    let (results, elapsed) = run_parallel(label, threads, Some(ops), |tid, progress| {
        let tid = tid as u64;
        let mut rng = SmallRng::seed_from_u64(seed ^ tid.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut keys = keys.clone();
        let mut values = ValueGenerator::new(seed ^ 0x5eed ^ tid, 0.5, value_size);
        let format = KeyFormat {
            key_size: KEY_SIZE,
            prefix: b"",
        };
        let mut key = Vec::with_capacity(KEY_SIZE);
        let (mut writes, mut gets) = (OpStats::default(), OpStats::default());
        let budget = Budget::split(ops, threads, tid as usize, 0);
        let mut i = 0;
        while budget.allows(i) {
            format.write(keys.next(&mut rng, key_space), &mut key);
            if rng.random::<f64>() < write_ratio {
                let value = values.next(value_size);
                let t = Instant::now();
                engine.put(&key, value)?;
                writes.record(t, key.len() + value.len());
            } else {
                let t = Instant::now();
                let got = engine.get_len(&key)?;
                gets.record(t, got.unwrap_or(0));
                gets.found += u64::from(got.is_some());
            }
            i += 1;
            if i % PROGRESS_CHUNK == 0 {
                progress.add(PROGRESS_CHUNK);
            }
        }
        Ok((writes, gets))
    })?;
    let (mut writes, mut gets) = (OpStats::default(), OpStats::default());
    for (w, g) in &results {
        writes.merge(w);
        gets.merge(g);
    }
    let ran = engine.stats();
    let settle = Instant::now();
    engine.wait_for_compactions()?;
    let settle_seconds = settle.elapsed().as_secs_f64();
    let after = engine.stats();
    let seconds = elapsed.as_secs_f64();
    let stalled = match engine.name() {
        "rocksdb" => delta(&before, &ran, "rocksdb.stall.micros"),
        _ => delta(&before, &ran, "write_slowdown_micros")
            .zip(delta(&before, &ran, "write_stop_micros"))
            .map(|(a, b)| a + b),
    };
    let get_calls = delta(&before, &after, "gets");
    let blocks = delta(&before, &after, "block_bytes_read");
    let compaction_blocks = delta(&before, &after, "compaction_block_bytes_read");
    Ok(Phase {
        seconds,
        ops_per_sec: ops as f64 / seconds.max(1e-9),
        writes: Latency::of(&writes),
        gets: Latency::of(&gets),
        found: gets.found,
        stall_fraction: stalled
            .filter(|_| writes.ops > 0)
            .map(|s| s as f64 / (seconds * 1e6 * threads as f64).max(1.0)),
        settle_seconds,
        tables_probed_per_get: per(delta(&before, &after, "tables_probed"), get_calls),
        parents_probed_per_get: per(delta(&before, &after, "virtual_parents_probed"), get_calls),
        virtual_merges: delta(&before, &after, "virtual_merges"),
        compaction_bytes_read: after
            .compaction_bytes_read
            .saturating_sub(before.compaction_bytes_read),
        compaction_bytes_written: after
            .compaction_bytes_written
            .saturating_sub(before.compaction_bytes_written),
        io: IoBytes {
            wal: after.wal_bytes.saturating_sub(before.wal_bytes),
            flush: after
                .flush_bytes_written
                .saturating_sub(before.flush_bytes_written),
            compaction: (after.compaction_bytes_read + after.compaction_bytes_written)
                .saturating_sub(before.compaction_bytes_read + before.compaction_bytes_written),
            get: blocks
                .zip(compaction_blocks)
                .map(|(b, c)| b.saturating_sub(c)),
        },
    })
}

/// The main phase of `spec` on `engine` (a fresh database), and the statistics and
/// virtual tables once it settled.
fn main_phase(args: &DcompactionArgs, spec: &Spec, engine: &dyn KvEngine) -> Result<Loaded> {
    let s = &spec.stream;
    let keys = KeyChooser::scrambled_zipfian(s.key_space, args.zipf);
    let label = format!("{} {}", s.dataset, spec.config.label());
    let main = phase(
        args,
        engine,
        &keys,
        s.key_space,
        s.operations,
        s.write_ratio,
        s.value_size,
        args.seed,
        &label,
    )?;
    Ok(Loaded {
        main,
        at_main: engine.stats(),
        virtual_at_main: engine.virtual_space(),
    })
}

/// Runs the read phase of `spec` on `engine` and ends the run: the virtual tables
/// left, then (iff `compact`) a flush and a whole-range compaction for space
/// amplification. `loaded` is the main phase, from this open or the load it was
/// copied from.
fn finish(
    args: &DcompactionArgs,
    spec: &Spec,
    engine: &dyn KvEngine,
    loaded: Loaded,
    compact: bool,
) -> Result<Row> {
    let Loaded {
        main,
        at_main,
        virtual_at_main,
    } = loaded;
    let s = &spec.stream;
    let read = if s.read_ops > 0 {
        let keys = KeyChooser::scrambled_zipfian(s.key_space, args.zipf);
        let label = format!("{} reads {}", s.dataset, spec.config.label());
        let seed = args.seed ^ 0x7ead;
        Some(phase(
            args,
            engine,
            &keys,
            s.key_space,
            s.read_ops,
            0.0,
            s.value_size,
            seed,
            &label,
        )?)
    } else {
        None
    };
    let stats = engine.stats();
    let virtual_space = engine.virtual_space();
    let (live, compacted) = if compact {
        engine.flush()?;
        engine.wait_for_compactions()?;
        let live = engine.stats().live_table_bytes;
        engine.compact(None, None)?;
        (live, Some(engine.stats().live_table_bytes))
    } else {
        (stats.live_table_bytes, None)
    };
    let c = &spec.config;
    let scale = if c.device.is_some() {
        args.device_scale
    } else {
        args.scale
    };
    let read_r = read.as_ref().map_or(0, |p| p.compaction_bytes_read);
    let read_w = read.as_ref().map_or(0, |p| p.compaction_bytes_written);
    Ok(Row {
        experiment: "dcompaction",
        part: String::new(),
        dataset: s.dataset.clone(),
        config: c.label(),
        engine: engine.name(),
        compaction_style: if c.universal { "universal" } else { "level" },
        delayed_compaction: c.delayed,
        vct: c.delayed.then_some(c.vct),
        vsmt: c.delayed.then_some(c.vsmt),
        max_garbage_ratio: c.delayed.then_some(args.engine.virtual_garbage_ratio),
        partitioning: c.partitioning(),
        device: c.device,
        scale,
        operations: s.operations,
        key_space: s.key_space,
        write_ratio: s.write_ratio,
        value_size: s.value_size,
        volume_gb_equivalent: s.volume_gb_equivalent(scale),
        threads: args.threads.max(1),
        cache_bytes: cache_bytes(s),
        main,
        compaction_bytes_read: at_main.compaction_bytes_read,
        compaction_bytes_written: at_main.compaction_bytes_written,
        flush_bytes_written: at_main.flush_bytes_written,
        write_amplification: at_main.write_amplification(),
        compaction_seconds: counter(&at_main, "compaction_micros").map(|m| m as f64 / 1e6),
        read,
        compaction_bytes_read_after_reads: at_main.compaction_bytes_read + read_r,
        compaction_bytes_written_after_reads: at_main.compaction_bytes_written + read_w,
        virtual_compactions: counter(&stats, "virtual_compactions"),
        virtual_space_after_main: virtual_at_main,
        virtual_space,
        live_table_bytes_after_main: at_main.live_table_bytes,
        live_table_bytes: live,
        live_table_bytes_compacted: compacted,
        space_amplification: compacted.filter(|&c| c > 0).map(|c| live as f64 / c as f64),
        compaction_bound: None,
        reused: false,
        repeats: 1,
        repeat: Some(0),
        stats,
    })
}

/// Closes `engine` after `work` ran on it; `work`'s error wins over the close's.
fn with_engine<T>(
    engine: Box<dyn KvEngine>,
    work: impl FnOnce(&dyn KvEngine) -> Result<T>,
) -> Result<T> {
    let out = work(&*engine);
    let closed = engine.close();
    let out = out?;
    closed?;
    Ok(out)
}

/// Runs `spec` from an empty database in `db`: main phase, read phase, end state.
///
/// # Errors
/// Engine and I/O errors; [`crate::error::CliError::Usage`] for a configuration the
/// engine cannot run.
pub fn run(args: &DcompactionArgs, spec: &Spec, db: &Path) -> Result<Row> {
    let engine = engine::open(&engine_flags(args, spec, db), false)?;
    with_engine(engine, |e| {
        let loaded = main_phase(args, spec, e)?;
        finish(args, spec, e, loaded, true)
    })
}

/// The main phase of a run; for [`load`], of a database closed after it, to be copied
/// for each read-only run.
#[derive(Clone)]
pub struct Loaded {
    /// The main phase.
    main: Phase,
    /// The statistics once it settled.
    at_main: EngineStats,
    /// The virtual tables once it settled.
    virtual_at_main: Option<VirtualSpace>,
}

/// Runs the main phase of `spec` into `db`, waits and closes it, for [`read_copy`].
///
/// # Errors
/// As [`run`].
pub fn load(args: &DcompactionArgs, spec: &Spec, db: &Path) -> Result<Loaded> {
    let engine = engine::open(&engine_flags(args, spec, db), false)?;
    with_engine(engine, |e| main_phase(args, spec, e))
}

/// Copies the database `loaded` (in `from`) into `db` and runs the read phase of
/// `spec` on it with `spec`'s configuration (which may differ from the load's in what
/// only reads use, such as VSMT). The row's main phase is the load's. No space
/// amplification: the copy is not compacted.
///
/// # Errors
/// As [`run`].
pub fn read_copy(
    args: &DcompactionArgs,
    spec: &Spec,
    loaded: &Loaded,
    from: &Path,
    db: &Path,
) -> Result<Row> {
    if spec.config.engine != EngineKind::Strata {
        return Err(crate::error::CliError::Usage(
            "experiment dcompaction: copies of a loaded database are Strata's only".into(),
        ));
    }
    copy_dir(from, db)?;
    let mut flags = engine_flags(args, spec, db);
    flags.use_existing_db = true;
    let engine = engine::open(&flags, true)?;
    with_engine(engine, |e| finish(args, spec, e, loaded.clone(), false))
}
