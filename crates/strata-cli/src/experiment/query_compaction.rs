//! Query-driven compaction ("CS561: Query-driven compaction in LSM-trees", Figures
//! 1–8), reproduced on the engine itself.
//!
//! Shape kept from the paper: inserts, then range queries (the *sequential* workload),
//! or rounds of a batch of inserts followed by a batch of range queries (the
//! *interleaved* workload, 5 or 10 rounds); range fractions from 1% to 95% of the key
//! space; 50 or 500 queries; point gets after the run. Scale: 100,000 inserts of 1 KiB
//! values (`--scale` multiplies them) into 64 KiB memtables and files, a 256 KiB L1 and
//! a fanout of 4, so the tree is five or more levels deep, as in the paper. Keys are
//! unique (each inserted once, in random order) or updates (drawn from a domain of
//! half the inserts). The block cache holds about 1% of the data: a cache hit reads
//! no table byte and never shows in `total_io_bytes`.
//!
//! Departures: each insert batch is followed by `wait_for_compactions`, so every
//! configuration queries the same settled tree (the emulator compacts synchronously);
//! the emulator counts files and has no MVCC, tombstones, bloom filters or cache.
//!
//! Per run, exact counts: `total_io_bytes` after every query (for the crossover), its
//! parts by cause (insert phase: flushes and compactions; range queries; write-backs;
//! point gets), point-get table bytes per get after the run and live table bytes.
//! The paper's files-written figure is not counted yet.

use super::{append_json, chart, parse_list};
use crate::engine::options::EngineFlags;
use crate::error::{CliError, Result};
use crate::results::Provenance;
use clap::Args;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::path::PathBuf;
use strata::{Db, DbStats, QueryCompaction, ReadOptions, WriteOptions};

/// `strata experiment query-compaction`.
#[derive(Args, Debug, Clone)]
pub struct QueryCompactionArgs {
    /// Engine flags (sizes and the option are set by the experiment). `--db` is the
    /// scratch directory.
    #[command(flatten)]
    pub engine: EngineFlags,
    /// Multiplies the paper's 100,000 inserts.
    #[arg(long = "scale", default_value_t = 1.0)]
    pub scale: f64,
    /// Value size, bytes.
    #[arg(long = "value_size", default_value_t = 1024)]
    pub value_size: usize,
    /// Workloads: `sequential`, `interleaved5`, `interleaved10`.
    #[arg(long = "workloads", default_value = "sequential,interleaved10")]
    pub workloads: String,
    /// Key sets: `unique`, `updates`.
    #[arg(long = "keys", default_value = "unique")]
    pub keys: String,
    /// Range fractions of the key space.
    #[arg(long = "fractions", default_value = "0.01,0.25,0.5,0.75,0.95")]
    pub fractions: String,
    /// Range queries per run.
    #[arg(long = "queries", default_value = "500")]
    pub queries: String,
    /// Configurations: `off`; `on` (the option's defaults: inline, from L2); `on-l1`
    /// (from L1); `on-bg` (on the background worker); `on-obs` (`min_obsolete` 0.05,
    /// today's default); `on-obs0` (`min_obsolete` 0: the defaults before it existed).
    #[arg(long = "configs", default_value = "off,on")]
    pub configs: String,
    /// Point gets after the queries.
    #[arg(long = "gets", default_value_t = 5000)]
    pub gets: u64,
    /// Random seed (the same streams for every configuration).
    #[arg(long = "seed", default_value_t = 29)]
    pub seed: u64,
    /// JSON-lines output.
    #[arg(
        long = "json",
        default_value = "results/experiment-query-compaction.jsonl"
    )]
    pub json: PathBuf,
    /// Chart output directory.
    #[arg(long = "charts", default_value = "docs/experiments/query-compaction")]
    pub charts: PathBuf,
}

/// One run's figures.
#[derive(Clone, Debug, Serialize)]
struct Row {
    experiment: &'static str,
    workload: String,
    keys: String,
    fraction: f64,
    queries: u64,
    config: String,
    inserts: u64,
    /// Cumulative `total_io_bytes` after the inserts and after each query, in order.
    total_io_after_query: Vec<u64>,
    total_io_bytes: u64,
    insert_io_bytes: u64,
    query_io_bytes: u64,
    write_back_io_bytes: u64,
    get_table_bytes_per_get: f64,
    live_table_bytes: u64,
    levels: usize,
    query_compactions: u64,
    query_compactions_declined: u64,
    query_compactions_stale: u64,
    query_compactions_queue_full: u64,
    query_compaction_files_split: u64,
    entries_returned: u64,
    query_secs: f64,
}

#[derive(Clone, Copy, Debug)]
enum Workload {
    Sequential,
    Interleaved(u64),
}

fn workload(name: &str) -> Result<Workload> {
    match name {
        "sequential" => Ok(Workload::Sequential),
        "interleaved5" => Ok(Workload::Interleaved(5)),
        "interleaved10" => Ok(Workload::Interleaved(10)),
        _ => Err(CliError::Usage(format!(
            "invalid value '{name}' in '--workloads' (sequential, interleaved5, interleaved10)"
        ))),
    }
}

fn list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(String::from)
        .collect()
}

/// The paper's tree at this scale: 64 KiB memtables and files, a 256 KiB L1, fanout
/// 4, a block cache of about 1% of the data.
fn options(args: &QueryCompactionArgs, inserts: u64, config: &str) -> Result<strata::Options> {
    let query = match config {
        "off" => None,
        "on" => Some(QueryCompaction::new()),
        "on-l1" => Some(QueryCompaction::new().with_start_level(1)),
        "on-bg" => Some(QueryCompaction::new().with_background(true)),
        "on-obs" => Some(QueryCompaction::new().with_min_obsolete(0.05)),
        "on-obs0" => Some(QueryCompaction::new().with_min_obsolete(0.0)),
        c => {
            return Err(CliError::Usage(format!(
                "invalid value '{c}' in '--configs' (off, on, on-l1, on-bg, on-obs, on-obs0)"
            )))
        }
    };
    let data = inserts.saturating_mul(args.value_size as u64 + 16);
    Ok(args
        .engine
        .strata_options()?
        .with_write_buffer_size(64 << 10)
        .with_target_file_size_base(64 << 10)
        .with_max_bytes_for_level_base(256 << 10)
        .with_max_bytes_for_level_multiplier(4.0)
        .with_num_levels(8)
        .with_block_cache_capacity((data / 100).max(64 << 10) as usize)
        .with_query_compaction(query))
}

fn key(k: u64) -> [u8; 8] {
    k.to_be_bytes()
}

/// The keys inserted, in order: a random permutation of the domain (unique), or
/// draws from a domain of half as many (updates). Returns the keys and the domain.
fn insert_keys(kind: &str, n: u64, rng: &mut SmallRng) -> Result<(Vec<u64>, u64)> {
    match kind {
        "unique" => {
            let mut keys: Vec<u64> = (0..n).collect();
            keys.shuffle(rng);
            Ok((keys, n))
        }
        "updates" => {
            let domain = (n / 2).max(1);
            Ok((
                (0..n).map(|_| rng.random_range(0..domain)).collect(),
                domain,
            ))
        }
        k => Err(CliError::Usage(format!(
            "invalid value '{k}' in '--keys' (unique, updates)"
        ))),
    }
}

/// Runs `strata experiment query-compaction`.
///
/// # Errors
/// Usage errors, engine and I/O errors.
pub fn run(args: &QueryCompactionArgs) -> Result<()> {
    let prov = Provenance::gather();
    let fractions: Vec<f64> = parse_list(&args.fractions, "fractions")?;
    let queries: Vec<u64> = parse_list(&args.queries, "queries")?;
    let inserts = (100_000.0 * args.scale).round().max(1.0) as u64;
    let mut rows: Vec<Row> = Vec::new();
    for w in list(&args.workloads) {
        let wl = workload(&w)?;
        for keys in list(&args.keys) {
            for &fraction in &fractions {
                for &q in &queries {
                    for config in list(&args.configs) {
                        let row = one(args, &w, wl, &keys, fraction, q, &config, inserts)?;
                        print_row(&row);
                        append_json(&args.json, &row, &prov)?;
                        rows.push(row);
                    }
                }
            }
        }
    }
    report(&rows);
    charts(args, &rows)
}

/// One run on a fresh database.
#[allow(clippy::too_many_arguments)]
fn one(
    args: &QueryCompactionArgs,
    name: &str,
    wl: Workload,
    keys: &str,
    fraction: f64,
    queries: u64,
    config: &str,
    inserts: u64,
) -> Result<Row> {
    let dir = args.engine.db.join("query-compaction");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| CliError::io("remove_dir_all", &dir, e))?;
    }
    let opts = options(args, inserts, config)?;
    let db = Db::open(&dir, opts).map_err(CliError::from)?;
    // The same streams for every configuration: one generator for inserts, one for
    // queries, one for gets.
    let mut rng = SmallRng::seed_from_u64(args.seed);
    let (order, domain) = insert_keys(keys, inserts, &mut rng)?;
    let mut qrng = SmallRng::seed_from_u64(args.seed ^ 0x5157);
    let rounds = match wl {
        Workload::Sequential => 1,
        Workload::Interleaved(r) => r,
    };
    let value = vec![b'v'; args.value_size];
    let wo = WriteOptions::default();
    let span = ((domain as f64 * fraction).round() as u64).clamp(1, domain);
    let mut total_io_after_query = Vec::with_capacity(queries as usize + 1);
    let (mut entries, mut query_secs) = (0u64, 0f64);
    for round in 0..rounds {
        let (from, to) = (
            (inserts * round / rounds) as usize,
            (inserts * (round + 1) / rounds) as usize,
        );
        for (i, &k) in order.get(from..to).unwrap_or_default().iter().enumerate() {
            // Values differ by insert (the first 8 bytes): no two compress alike.
            let mut v = value.clone();
            let stamp = ((from + i) as u64).to_be_bytes();
            let n = stamp.len().min(v.len());
            v[..n].copy_from_slice(&stamp[..n]);
            db.put(&wo, &key(k), &v).map_err(CliError::from)?;
        }
        db.flush().map_err(CliError::from)?;
        db.wait_for_compactions().map_err(CliError::from)?;
        if round == 0 {
            total_io_after_query.push(db.stats().total_io_bytes());
        }
        let (qfrom, qto) = (queries * round / rounds, queries * (round + 1) / rounds);
        let started = std::time::Instant::now();
        for _ in qfrom..qto {
            let lo = qrng.random_range(0..=domain - span);
            let ro = ReadOptions::default().with_upper_bound(Some(key(lo + span).to_vec()));
            let mut it = db.iter(&ro).map_err(CliError::from)?;
            it.seek(&key(lo));
            while it.valid() {
                entries += 1;
                it.next();
            }
            it.status().map_err(CliError::from)?;
            drop(it);
            total_io_after_query.push(db.stats().total_io_bytes());
        }
        query_secs += started.elapsed().as_secs_f64();
    }
    db.wait_for_compactions().map_err(CliError::from)?;
    let before_gets = db.stats();
    let mut grng = SmallRng::seed_from_u64(args.seed ^ 0x6e75);
    for _ in 0..args.gets {
        db.get(&ReadOptions::default(), &key(grng.random_range(0..domain)))
            .map_err(CliError::from)?;
    }
    let s = db.stats();
    let row = row_of(
        name,
        keys,
        fraction,
        queries,
        config,
        inserts,
        &before_gets,
        &s,
        args.gets,
    );
    db.close().map_err(CliError::from)?;
    Ok(Row {
        total_io_after_query,
        entries_returned: entries,
        query_secs,
        ..row
    })
}

/// The figures of a finished run: `s` after the gets, `before` before them.
#[allow(clippy::too_many_arguments)]
fn row_of(
    workload: &str,
    keys: &str,
    fraction: f64,
    queries: u64,
    config: &str,
    inserts: u64,
    before: &DbStats,
    s: &DbStats,
    gets: u64,
) -> Row {
    let (r, w) = (s.io_bytes_read(), s.io_bytes_written());
    let c = &s.counters;
    Row {
        experiment: "query-compaction",
        workload: workload.to_string(),
        keys: keys.to_string(),
        fraction,
        queries,
        config: config.to_string(),
        inserts,
        total_io_after_query: Vec::new(),
        total_io_bytes: s.total_io_bytes(),
        insert_io_bytes: r.flush + r.compaction + w.flush + w.compaction,
        query_io_bytes: r.scan,
        write_back_io_bytes: r.write_back + w.write_back,
        get_table_bytes_per_get: (r.get - before.io_bytes_read().get) as f64 / gets.max(1) as f64,
        live_table_bytes: s.space.live_table_bytes,
        levels: s.levels.iter().filter(|l| l.files > 0).count(),
        query_compactions: c.query_compactions,
        query_compactions_declined: c.query_compactions_discarded_below_threshold,
        query_compactions_stale: c.query_compactions_discarded_stale,
        query_compactions_queue_full: c.query_compactions_discarded_queue_full,
        query_compaction_files_split: c.query_compaction_files_split,
        entries_returned: 0,
        query_secs: 0.0,
    }
}

fn print_row(r: &Row) {
    println!(
        "{:<14} {:<8} f={:<5} q={:<4} {:<6} total {:>8.1} MiB (insert {:>7.1}, query {:>7.1}, \
         write-back {:>7.1}) get {:>7.0} B/get live {:>6.1} MiB levels {} \
         write-backs {} declined {} stale {} split {} {:.1}s",
        r.workload,
        r.keys,
        r.fraction,
        r.queries,
        r.config,
        mib(r.total_io_bytes),
        mib(r.insert_io_bytes),
        mib(r.query_io_bytes),
        mib(r.write_back_io_bytes),
        r.get_table_bytes_per_get,
        mib(r.live_table_bytes),
        r.levels,
        r.query_compactions,
        r.query_compactions_declined,
        r.query_compactions_stale,
        r.query_compaction_files_split,
        r.query_secs,
    );
}

fn mib(b: u64) -> f64 {
    b as f64 / (1 << 20) as f64
}

/// The run of `config` with the same parameters as `r`.
fn peer<'a>(rows: &'a [Row], r: &Row, config: &str) -> Option<&'a Row> {
    rows.iter().find(|p| {
        p.config == config
            && p.workload == r.workload
            && p.keys == r.keys
            && p.fraction == r.fraction
            && p.queries == r.queries
    })
}

/// Against `off`: total I/O, point-get bytes and space as ratios, and the crossover
/// (the first query count after which cumulative I/O stays below the engine's
/// without the option).
fn report(rows: &[Row]) {
    println!("\nagainst the engine without the option (ratios; crossover: queries):");
    for r in rows.iter().filter(|r| r.config != "off") {
        let Some(off) = peer(rows, r, "off") else {
            continue;
        };
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::NAN };
        println!(
            "{:<14} {:<8} f={:<5} q={:<4} {:<6} total_io {:.3} get_bytes {:.3} live {:.3} \
             crossover {}",
            r.workload,
            r.keys,
            r.fraction,
            r.queries,
            r.config,
            ratio(r.total_io_bytes as f64, off.total_io_bytes as f64),
            ratio(r.get_table_bytes_per_get, off.get_table_bytes_per_get),
            ratio(r.live_table_bytes as f64, off.live_table_bytes as f64),
            crossover(r, off).map_or("none".to_string(), |q| q.to_string()),
        );
    }
}

/// The least query count from which on `r`'s cumulative I/O stays below `off`'s.
fn crossover(r: &Row, off: &Row) -> Option<usize> {
    let n = r
        .total_io_after_query
        .len()
        .min(off.total_io_after_query.len());
    let below = |i: usize| r.total_io_after_query[i] < off.total_io_after_query[i];
    (0..n)
        .rev()
        .take_while(|&i| below(i))
        .last()
        .filter(|_| n > 0 && below(n - 1))
}

/// Total I/O by range fraction, one chart per workload and query count.
fn charts(args: &QueryCompactionArgs, rows: &[Row]) -> Result<()> {
    let configs = list(&args.configs);
    let mut groups: Vec<(String, String, u64)> = Vec::new();
    for r in rows {
        let g = (r.workload.clone(), r.keys.clone(), r.queries);
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    for (w, k, q) in groups {
        let of_group: Vec<&Row> = rows
            .iter()
            .filter(|r| r.workload == w && r.keys == k && r.queries == q)
            .collect();
        let mut fractions: Vec<f64> = of_group.iter().map(|r| r.fraction).collect();
        fractions.dedup();
        let values = fractions
            .iter()
            .map(|f| {
                configs
                    .iter()
                    .map(|c| {
                        of_group
                            .iter()
                            .find(|r| r.fraction == *f && &r.config == c)
                            .map(|r| mib(r.total_io_bytes))
                    })
                    .collect()
            })
            .collect();
        chart(
            &args.charts.join(format!("total-io-{w}-{k}-q{q}.svg")),
            &format!("Total table I/O, {w}, {k} keys, {q} range queries (MiB)"),
            "MiB",
            fractions
                .iter()
                .map(|f| format!("{}%", f * 100.0))
                .collect(),
            configs.clone(),
            values,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(config: &str, ios: &[u64]) -> Row {
        Row {
            experiment: "query-compaction",
            workload: "sequential".into(),
            keys: "unique".into(),
            fraction: 0.25,
            queries: 3,
            config: config.into(),
            inserts: 10,
            total_io_after_query: ios.to_vec(),
            total_io_bytes: *ios.last().unwrap_or(&0),
            insert_io_bytes: 0,
            query_io_bytes: 0,
            write_back_io_bytes: 0,
            get_table_bytes_per_get: 0.0,
            live_table_bytes: 0,
            levels: 0,
            query_compactions: 0,
            query_compactions_declined: 0,
            query_compactions_stale: 0,
            query_compactions_queue_full: 0,
            query_compaction_files_split: 0,
            entries_returned: 0,
            query_secs: 0.0,
        }
    }

    #[test]
    fn crossover_is_where_the_option_stays_below() {
        let off = row("off", &[10, 20, 30, 40]);
        assert_eq!(crossover(&row("on", &[10, 25, 29, 35]), &off), Some(2));
        assert_eq!(crossover(&row("on", &[9, 25, 29, 35]), &off), Some(2));
        assert_eq!(crossover(&row("on", &[9, 19, 29, 39]), &off), Some(0));
        assert_eq!(crossover(&row("on", &[9, 19, 29, 41]), &off), None);
    }
}
