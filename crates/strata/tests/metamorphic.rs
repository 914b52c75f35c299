//! Metamorphic: one random operation log, run against many option sets, gives the same
//! observations (every `get` and scan result, in order) under each.
//!
//! What it protects: options that change *how* the engine stores and finds data (file
//! and memtable sizes, compression, compaction priority, background threads, output
//! partitioning, the snapshot filter, bloom filters, the block cache, direct I/O, data
//! paths, how merge chains fold, delayed compaction's virtual tables) must
//! never change
//! *what* it returns. A bug that only one configuration shows (a filter false negative,
//! a partition boundary that drops a key, a snapshot filter that skips a visible table)
//! shows up as a mismatch naming the two option sets, the seed and the first differing
//! observation. Every option set is also checked against the in-memory model, read by
//! read, so that a bug all of them share fails too, naming the option set and the
//! operation. Each seed draws its keys from a universe of its own
//! ([`common::KeyUniverse`]).
//!
//! Seeds: `STRATA_SEED=<n>` replays one; `STRATA_SEEDS=<n>` or `STRATA_LONG=1` runs more.

mod common;

use common::*;
use std::sync::Arc;
use strata::env::FaultFs;
use strata::{
    CfOptions, CompactionPriority, Compression, Db, DelayedCompaction, LevelOptions, Options,
    OutputPartitioning, QueryCompaction, StatisticsSnapshot,
};

const DIR: &str = "/db";

/// Delayed compaction with virtual compaction threshold `vct`; reads ask for merges
/// of every virtual table of two slices or more.
fn delayed(vct: usize) -> DelayedCompaction {
    DelayedCompaction::new().with_vct(vct).with_vsmt(2)
}

/// A compaction filter that changes every value to itself.
fn identity_filter() -> Arc<dyn strata::compaction_filter::CompactionFilterFactory> {
    use strata::compaction_filter::{factory, CompactionFilter, Decision};
    struct Same;
    impl CompactionFilter for Same {
        fn filter(&mut self, _key: &[u8], value: &[u8]) -> Decision {
            Decision::Change(value.to_vec())
        }
    }
    factory("identity", |_| Some(Box::new(Same)))
}

fn option_sets() -> Vec<(&'static str, Options)> {
    let t = tiny_options;
    let codec = |c: Compression| move |l: LevelOptions| l.with_compression(c);
    vec![
        ("tiny", t()),
        // A compaction filter that rewrites every value it is given as itself: the
        // filter path (`Decision::Change`, the snapshot rule, the install fence) runs
        // on every compaction and must change no answer.
        (
            "tiny-identity-compaction-filter",
            t().with_compaction_filter_factory(Some(identity_filter())),
        ),
        // Periodic compaction: every table of L1 and below is rewritten in place once
        // a second old, with the identity filter on, while the workload runs.
        (
            "tiny-periodic-compaction",
            t().with_compaction_filter_factory(Some(identity_filter()))
                .with_periodic_compaction_seconds(1),
        ),
        (
            "default-sizes",
            Options::default().with_max_manifest_file_size(16 << 10),
        ),
        ("tiny-lz4", t().with_every_level(codec(Compression::Lz4))),
        ("tiny-zstd", t().with_every_level(codec(Compression::Zstd))),
        (
            // Per-level vectors: L0 raw, L1 LZ4, L2 and deeper zstd without filters.
            "tiny-per-level",
            t().with_levels(vec![
                t().level(0).clone(),
                t().level(0).clone().with_compression(Compression::Lz4),
                t().level(0)
                    .clone()
                    .with_compression(Compression::Zstd)
                    .with_bloom_bits_per_key(0)
                    .with_block_size(512),
            ]),
        ),
        (
            "tiny-oldest-seq-first",
            t().with_compaction_priority(CompactionPriority::OldestSmallestSeqFirst),
        ),
        ("tiny-jobs4", t().with_max_background_jobs(4)),
        (
            // L2 stretched fourfold (and L3 with it): other levels fill and compact at
            // other moments than in `tiny`.
            "tiny-l2-stretched",
            t().with_max_bytes_for_level_multiplier_additional(vec![1.0, 4.0]),
        ),
        (
            // Two tiers, RocksDB-fat: L0 and L1 (stretched to 16 KiB) on `/db-fast`,
            // deeper levels on `/db-slow`; compactions from L1 move across paths.
            "tiny-tiering-fat",
            t().with_db_paths(vec![
                strata::DbPath::new("/db-fast", 24 << 10),
                strata::DbPath::new("/db-slow", 0),
            ])
            .with_tiering(Some(strata::Tiering::fat())),
        ),
        (
            // HotRAP: `tiny-tiering-fat` with RALT fed by the workload's gets, hot-aware
            // picking and retention of hot keys in L1.
            "tiny-tiering-hotrap",
            t().with_db_paths(vec![
                strata::DbPath::new("/db-fast", 24 << 10),
                strata::DbPath::new("/db-slow", 0),
            ])
            .with_tiering(Some(strata::Tiering::hotrap())),
        ),
        (
            // HotRAP's ablations together: no retention of RALT's hot keys, every
            // cached copy promoted (no hotness check), a fixed hot-set limit. The
            // promotion pathways run on all copies the workload's gets make.
            "tiny-tiering-hotrap-ablations",
            t().with_db_paths(vec![
                strata::DbPath::new("/db-fast", 24 << 10),
                strata::DbPath::new("/db-slow", 0),
            ])
            .with_tiering(Some(
                strata::Tiering::hotrap()
                    .with_retain(false)
                    .with_hotness_check(false)
                    .with_hot_set_limit(strata::HotSetLimit::Fixed(4 << 10)),
            )),
        ),
        (
            // Time-aware tiering with a 20 ms window: compactions out of L1 keep the
            // keys written in the last 20 ms there, the rest go down.
            "tiny-tiering-time",
            t().with_db_paths(vec![
                strata::DbPath::new("/db-fast", 24 << 10),
                strata::DbPath::new("/db-slow", 0),
            ])
            .with_tiering(Some(strata::Tiering::time_aware(
                std::time::Duration::from_millis(20),
            ))),
        ),
        (
            // Memtables that never fill by size, charged to a 128 KiB budget whose
            // cache is squeezed to its 16 KiB floor while they hold two blocks. The
            // workload's memtables rarely reach the budget's flush line between its
            // flushes and reopens (the count is printed; tests/memory_budget.rs
            // drives the flushes and stops).
            "tiny-big-memtables-budget-128k",
            t().with_write_buffer_size(64 << 20)
                .with_memory_budget(128 << 10),
        ),
        (
            "tiny-fixed-outputs",
            t().with_output_partitioning(OutputPartitioning::Fixed),
        ),
        (
            "tiny-aligned-1.5",
            t().with_output_partitioning(OutputPartitioning::Aligned { variance: 1.5 }),
        ),
        ("tiny-no-snapshot-filter", t().with_snapshot_filter(false)),
        (
            "tiny-no-pipelined-write",
            t().with_enable_pipelined_write(false),
        ),
        (
            "tiny-bloom0-cache0",
            t().with_every_level(|l| l.with_bloom_bits_per_key(0))
                .with_block_cache_capacity(0),
        ),
        (
            "default-sizes-zstd-bloom0-cache0",
            Options::default()
                .with_every_level(|l| {
                    l.with_compression(Compression::Zstd)
                        .with_bloom_bits_per_key(0)
                })
                .with_block_cache_capacity(0),
        ),
        (
            "tiny-fixed-lz4-jobs4-oldest",
            t().with_output_partitioning(OutputPartitioning::Fixed)
                .with_every_level(codec(Compression::Lz4))
                .with_max_background_jobs(4)
                .with_compaction_priority(CompactionPriority::OldestSmallestSeqFirst)
                .with_snapshot_filter(false),
        ),
        // L0, L1 and L2+ in three directories of the fault file system.
        ("tiny-three-paths", three_data_paths()),
        // Direct I/O is a data path of `PosixFs`, so these run on a real directory
        // (`observe`); skipped with a note where the temp directory refuses O_DIRECT.
        // Merge chains that compaction can fold only into a base (no partial merge).
        (
            "tiny-merge-no-partial",
            t().with_merge_operator(Some(Arc::new(AppendNoPartial))),
        ),
        ("tiny-direct-reads", t().with_use_direct_reads(true)),
        // Index blocks and filters in a block cache too small to keep them: evicted
        // and read back from the files all the time.
        (
            "tiny-index-and-filter-in-small-cache",
            t().with_cache_index_and_filter_blocks(true)
                .with_block_cache_capacity(16 << 10),
        ),
        // Delayed compaction: rewrites of fewer than 3 real tables become virtual
        // tables, read through their parents, compacted for real later.
        (
            "tiny-delayed-vct3-garbage-1pct",
            t().with_delayed_compaction(Some(delayed(3).with_max_garbage_ratio(0.01))),
        ),
        (
            "tiny-delayed-vct12-fixed-no-snapshot-filter",
            t().with_delayed_compaction(Some(delayed(12)))
                .with_output_partitioning(OutputPartitioning::Fixed)
                .with_snapshot_filter(false),
        ),
        (
            "tiny-delayed-vct8-three-paths",
            three_data_paths().with_delayed_compaction(Some(delayed(8))),
        ),
        (
            "tiny-delayed-vct8-merge-no-partial",
            t().with_delayed_compaction(Some(delayed(8)))
                .with_merge_operator(Some(Arc::new(AppendNoPartial))),
        ),
        (
            "tiny-delayed-vct8-direct-reads",
            t().with_delayed_compaction(Some(delayed(8)))
                .with_use_direct_reads(true),
        ),
        // Query-driven compaction: forward scans write back what they merged from L1
        // down (boundary files split), inline; and from L2 on the background worker,
        // with delayed compaction's virtual tables among the files they read.
        (
            "tiny-query-compaction-l1",
            t().with_query_compaction(Some(
                QueryCompaction::new()
                    .with_start_level(1)
                    .with_profit(0.0)
                    .with_min_obsolete(0.0),
            )),
        ),
        (
            "tiny-query-compaction-l2-background-delayed-vct3-merge-no-partial",
            t().with_query_compaction(Some(QueryCompaction::new().with_background(true)))
                .with_delayed_compaction(Some(delayed(3)))
                .with_merge_operator(Some(Arc::new(AppendNoPartial))),
        ),
        (
            "tiny-direct-io-lz4-no-cache",
            t().with_use_direct_reads(true)
                .with_use_direct_io_for_flush_and_compaction(true)
                .with_every_level(codec(Compression::Lz4))
                .with_block_cache_capacity(0),
        ),
    ]
    .into_iter()
    // The workload merges: every set resolves operands the same way.
    .map(|(name, o)| match o.merge_operator {
        Some(_) => (name, o),
        None => (name, o.with_merge_operator(Some(append_operator()))),
    })
    .collect()
}

/// Option sets whose column families run with options of their own: the per-tree
/// fields of one set for the database's default family, another's for the families.
fn family_sets() -> Vec<(&'static str, Options, CfOptions)> {
    let merging = |o: Options| o.with_merge_operator(Some(append_operator()));
    vec![
        (
            "tiny-families-default-sizes",
            tiny_options(),
            merging(Options::default().with_max_manifest_file_size(16 << 10)).cf_options(),
        ),
        (
            "tiny-families-delayed-vct8",
            tiny_options(),
            tiny_options()
                .with_delayed_compaction(Some(delayed(8)))
                .cf_options(),
        ),
        (
            "default-sizes-families-tiny-lz4",
            merging(Options::default().with_max_manifest_file_size(16 << 10)),
            tiny_options()
                .with_every_level(|l| l.with_compression(Compression::Lz4))
                .with_output_partitioning(OutputPartitioning::Fixed)
                .cf_options(),
        ),
    ]
}

/// Runs `ops` on a fresh in-memory database with `opts` (on a temporary directory of
/// the real file system if `opts` asks for direct I/O), checking each observation
/// against the model as it goes and the final contents of every family at the end;
/// returns every observation, or `None` if direct I/O is refused there (printed).
/// Also returns the database's counters.
fn observe(
    ops: &[Op],
    opts: &Options,
    family: &CfOptions,
    ctx: &str,
) -> Option<(Vec<Observed>, StatisticsSnapshot)> {
    let fs = FaultFs::new();
    let real_dir = if opts.use_direct_reads || opts.use_direct_io_for_flush_and_compaction {
        Some(direct_io_tempdir(ctx)?)
    } else {
        None
    };
    let (builder, dir) = match &real_dir {
        Some(d) => (Db::builder(), d.path()),
        None => (on(&fs), std::path::Path::new(DIR)),
    };
    let (db, model, mut seen) = run_ops_with_families(&builder, dir, opts, family, ops, true, ctx);
    let d = &db;
    d.wait_for_compactions()
        .unwrap_or_else(|e| panic!("{ctx}: idle: {e}"));
    let all = db_scan(d, None, true, &None, &None, usize::MAX).expect("final scan");
    let want = model_scan(&model.map, true, &None, &None, usize::MAX);
    assert_eq!(all, want, "{ctx}: final scan against the model");
    seen.push(Observed::Scan(all));
    // Every live family in full, by name.
    let mut names = d.cf_names();
    names.sort();
    for name in names {
        let cf = d.cf(&name).expect("live family");
        let all = scan(Source::Family(d, &cf, None), true, &None, &None, usize::MAX)
            .expect("final family scan");
        let map = match name.as_str() {
            "default" => &model.map,
            _ => model
                .families
                .iter()
                .find(|&(&n, _)| family_name(n) == name)
                .map(|(_, m)| m)
                .unwrap_or_else(|| panic!("{ctx}: family {name} is not in the model")),
        };
        let want = model_scan(map, true, &None, &None, usize::MAX);
        assert_eq!(
            all, want,
            "{ctx}: final scan of family {name} against the model"
        );
        seen.push(Observed::Scan(all));
    }
    Some((seen, d.stats().counters))
}

fn seeds() -> Vec<u64> {
    if let Some(s) = std::env::var("STRATA_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return vec![s];
    }
    let n = if std::env::var("STRATA_LONG").is_ok_and(|v| v == "1") {
        60
    } else {
        std::env::var("STRATA_SEEDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(8)
    };
    (0..n).map(|s| 5000 + s).collect()
}

#[test]
fn same_observations_under_every_option_set() {
    let sets: Vec<(&str, Options, CfOptions)> = option_sets()
        .into_iter()
        .map(|(name, o)| {
            let family = o.cf_options();
            (name, o, family)
        })
        .chain(family_sets())
        .collect();
    let mut observations = 0;
    let (mut virtualized, mut written_back, mut budget_flushes) = (0, 0, 0);
    for seed in seeds() {
        let universe = KeyUniverse::for_seed(seed);
        let ops = random_ops(seed, 1200, &universe, true);
        let mut reference: Option<(&str, Vec<Observed>)> = None;
        for (name, opts, family) in &sets {
            let ctx = format!("seed {seed} ({universe}) options {name}");
            let Some((seen, counters)) = observe(&ops, opts, family, &ctx) else {
                continue;
            };
            virtualized += counters.virtual_compactions;
            written_back += counters.query_compactions;
            budget_flushes += counters.memory_budget_flushes;
            match &reference {
                None => reference = Some((name, seen)),
                Some((ref_name, want)) => {
                    assert_eq!(seen.len(), want.len(), "seed {seed}: {ref_name} vs {name}");
                    if let Some(i) = (0..want.len()).find(|&i| seen[i] != want[i]) {
                        panic!(
                            "seed {seed}: option sets {ref_name} and {name} disagree at \
                             observation {i}:\n  {ref_name}: {:?}\n  {name}: {:?}",
                            want[i], seen[i]
                        );
                    }
                    observations += seen.len();
                }
            }
        }
    }
    println!(
        "metamorphic: {} option sets, {} seeds, {observations} observations compared, \
         {virtualized} compactions deferred as virtual tables, {written_back} scans \
         written back, {budget_flushes} memtables flushed for the memory budget",
        sets.len(),
        seeds().len()
    );
    assert!(
        virtualized > 0,
        "the delayed-compaction sets deferred no compaction"
    );
    assert!(
        written_back > 0,
        "the query-compaction sets wrote no scan back"
    );
}

/// `ops` with every merge turned into a put of its operand: a workload a family
/// without a merge operator takes.
fn without_merges(ops: Vec<Op>) -> Vec<Op> {
    fn update(u: Update) -> Update {
        match u {
            Update::Merge(k, v) => Update::Put(k, v),
            Update::InCf(n, u) => Update::InCf(n, Box::new(update(*u))),
            u => u,
        }
    }
    fn op(o: Op) -> Op {
        match o {
            Op::Merge(k, v) => Op::Put(k, v),
            Op::Batch(us) => Op::Batch(us.into_iter().map(update).collect()),
            Op::InCf(n, o) => Op::InCf(n, Box::new(op(*o))),
            o => o,
        }
    }
    ops.into_iter().map(op).collect()
}

/// Values with a deadline trailer (`expiring_values`) read exactly as plain values
/// while nothing expires: every read strips the trailer, the built-in filter keeps
/// every value (alone, and in front of an application's filter that periodic
/// compaction runs), and the observations equal those of the same merge-free
/// workload without the layout.
#[test]
fn same_observations_with_value_deadlines() {
    let plain = tiny_options().with_merge_operator(None);
    let expiring = plain.clone().with_expiring_values(true);
    let sets = [
        ("tiny", plain.clone()),
        ("tiny-expiring-values", expiring.clone()),
        (
            "tiny-expiring-values-filtered-periodic",
            expiring
                .with_compaction_filter_factory(Some(identity_filter()))
                .with_periodic_compaction_seconds(1),
        ),
    ];
    let mut observations = 0;
    for seed in seeds() {
        let universe = KeyUniverse::for_seed(seed);
        let ops = without_merges(random_ops(seed, 1200, &universe, true));
        let mut reference: Option<(&str, Vec<Observed>)> = None;
        for (name, opts) in &sets {
            let ctx = format!("seed {seed} ({universe}) options {name}");
            let (seen, _) = observe(&ops, opts, &opts.cf_options(), &ctx).expect("no direct I/O");
            match &reference {
                None => reference = Some((name, seen)),
                Some((ref_name, want)) => {
                    assert_eq!(seen.len(), want.len(), "seed {seed}: {ref_name} vs {name}");
                    if let Some(i) = (0..want.len()).find(|&i| seen[i] != want[i]) {
                        panic!(
                            "seed {seed}: {ref_name} and {name} disagree at observation \
                             {i}:\n  {ref_name}: {:?}\n  {name}: {:?}",
                            want[i], seen[i]
                        );
                    }
                    observations += seen.len();
                }
            }
        }
    }
    println!("value deadlines: {observations} observations compared");
    assert!(observations > 0);
}
