//! Model-based test: random puts, deletes, batches, snapshots, gets, scans in both
//! directions, flushes, manual compactions, reopens, column families (created,
//! dropped and recreated, written alone and in batches spanning families, read at
//! snapshots) and optimistic transactions (reads
//! of their own writes, scans, `get_for_update`, outside writes and flushes while they
//! are open, commit or rollback) against an in-memory model with history, with tiny
//! memtables and files so flushes and compactions run constantly.
//! Every read is compared. Each seed draws its keys from a universe of its own
//! ([`common::KeyUniverse`]: a few dozen to tens of thousands of keys, decimal, binary,
//! long or sharing long prefixes). The seed of a failure is printed; rerun one seed
//! with `STRATA_SEED=<n> cargo test --test model_based`.

mod common;

use common::*;
use strata::{
    CompactionPriority, Compression, Db, DelayedCompaction, Options, OutputPartitioning,
    StatisticsSnapshot,
};

fn run(seed: u64, n: usize, opts: &Options) -> StatisticsSnapshot {
    let dir = tempfile::tempdir().expect("tempdir");
    run_in(dir.path(), seed, n, opts)
}

/// Runs the workload of `seed` in `dir`; returns the database's counters at the end.
fn run_in(dir: &std::path::Path, seed: u64, n: usize, opts: &Options) -> StatisticsSnapshot {
    let universe = KeyUniverse::for_seed(seed);
    let ops = random_ops(seed, n, &universe, true);
    let (db, model, _) = run_ops(
        &Db::builder(),
        dir,
        opts,
        &ops,
        true,
        &format!("seed {seed} ({universe})"),
    );
    // Final full comparison, both directions.
    let d = &db;
    let all = db_scan(d, None, true, &None, &None, usize::MAX).expect("scan");
    assert_eq!(
        all,
        model_scan(&model.map, true, &None, &None, usize::MAX),
        "seed {seed} final"
    );
    d.wait_for_compactions().expect("idle");
    let all = db_scan(d, None, false, &None, &None, usize::MAX).expect("scan");
    assert_eq!(
        all,
        model_scan(&model.map, false, &None, &None, usize::MAX),
        "seed {seed} final rev"
    );
    // Every live family, and no other.
    let mut names: Vec<String> = std::iter::once("default".to_string())
        .chain(model.families.keys().map(|&n| family_name(n)))
        .collect();
    let mut live = d.cf_names();
    names.sort();
    live.sort();
    assert_eq!(
        live, names,
        "seed {seed} families (in id order, the default first)"
    );
    for (&n, map) in &model.families {
        let cf = d.cf(&family_name(n)).expect("family");
        for forward in [true, false] {
            let all = scan(
                Source::Family(d, &cf, None),
                forward,
                &None,
                &None,
                usize::MAX,
            )
            .expect("scan");
            assert_eq!(
                all,
                model_scan(map, forward, &None, &None, usize::MAX),
                "seed {seed} final, family {n}, forward {forward}"
            );
        }
    }
    d.stats().counters
}

fn seeds() -> Vec<u64> {
    match std::env::var("STRATA_SEED") {
        Ok(s) => vec![s.parse().expect("STRATA_SEED is a number")],
        Err(_) => {
            let n: u64 = std::env::var("STRATA_SEEDS")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(12);
            (0..n).collect()
        }
    }
}

#[test]
fn model_based_tiny_files() {
    for seed in seeds() {
        run(seed, 1500, &tiny_options());
    }
}

#[test]
fn model_based_oldest_seq_priority_and_compression() {
    for seed in seeds().into_iter().take(4) {
        let opts = tiny_options()
            .with_compaction_priority(CompactionPriority::OldestSmallestSeqFirst)
            .with_every_level(|l| l.with_compression(Compression::Lz4))
            .with_max_background_jobs(3);
        run(1000 + seed, 1500, &opts);
    }
}

#[test]
fn model_based_fixed_outputs_without_snapshot_filter() {
    for seed in seeds().into_iter().take(4) {
        let opts = tiny_options()
            .with_output_partitioning(OutputPartitioning::Fixed)
            .with_snapshot_filter(false);
        run(2000 + seed, 1500, &opts);
    }
}

/// Direct I/O for table reads (gets, scans, compaction inputs) and for flush and
/// compaction outputs, on a real file system (O_DIRECT needs one; skipped with a note
/// where the temp directory refuses it). Only the block cache caches table data here.
#[test]
fn model_based_direct_io() {
    for seed in seeds().into_iter().take(4) {
        let Some(dir) = direct_io_tempdir("model_based_direct_io") else {
            return;
        };
        let opts = tiny_options()
            .with_use_direct_reads(true)
            .with_use_direct_io_for_flush_and_compaction(true)
            .with_every_level(|l| l.with_compression(Compression::Lz4));
        run_in(dir.path(), 3000 + seed, 1500, &opts);
    }
}

/// L0, L1 and L2+ in three directories (`db_paths`): every reopen finds each table in
/// its own path.
#[test]
fn model_based_three_data_paths() {
    for seed in seeds().into_iter().take(4) {
        let root = tempfile::tempdir().expect("tempdir");
        let opts = paths_under(root.path(), tiny_options());
        run_in(&root.path().join("db"), 5000 + seed, 1500, &opts);
    }
}

/// Three seeds from `first_seed` on a fast and a slow path (a 24 KiB fast budget:
/// L0 and a stretched L1 fast, deeper levels slow) with `tiering`, across reopens.
fn run_tiered(tiering: strata::Tiering, first_seed: u64) {
    for seed in seeds().into_iter().take(3) {
        let root = tempfile::tempdir().expect("tempdir");
        let opts = tiny_options()
            .with_db_paths(vec![
                strata::DbPath::new(root.path().join("db-fast"), 24 << 10),
                strata::DbPath::new(root.path().join("db-slow"), 0),
            ])
            .with_tiering(Some(tiering));
        run_in(&root.path().join("db"), first_seed + seed, 1500, &opts);
    }
}

/// Two tiers (`Options::tiering`, RocksDB-fat).
#[test]
fn model_based_tiering_fat() {
    run_tiered(strata::Tiering::fat(), 5500);
}

/// HotRAP (`TieringMode::HotRap`): the fat tiers with RALT, hot-aware picking and
/// retention.
#[test]
fn model_based_tiering_hotrap() {
    run_tiered(strata::Tiering::hotrap(), 5600);
}

/// HotRAP without retention and without promotion by compaction, every copy promoted
/// by flush (no hotness check): promoted L0 tables are the only way back up.
#[test]
fn model_based_tiering_hotrap_promotion_by_flush_only() {
    run_tiered(
        strata::Tiering::hotrap()
            .with_retain(false)
            .with_promote_by_compaction(false)
            .with_hotness_check(false),
        5700,
    );
}

/// Time-aware tiering (`TieringMode::TimeAware`) with a window of 5 ms.
#[test]
fn model_based_tiering_time_aware() {
    run_tiered(
        strata::Tiering::time_aware(std::time::Duration::from_millis(5)),
        5800,
    );
}

/// Index blocks and filters in the block cache (`cache_index_and_filter_blocks`), a
/// cache small enough that they are evicted and read back from the files often.
#[test]
fn model_based_index_and_filter_blocks_in_a_small_cache() {
    for seed in seeds().into_iter().take(4) {
        let opts = tiny_options()
            .with_cache_index_and_filter_blocks(true)
            .with_block_cache_capacity(16 << 10);
        run(6000 + seed, 1500, &opts);
    }
}

/// `use_direct_reads` alone (tables written buffered, read direct), with no block
/// cache: every table read goes to the device.
#[test]
fn model_based_direct_reads_without_block_cache() {
    for seed in seeds().into_iter().take(3) {
        let Some(dir) = direct_io_tempdir("model_based_direct_reads_without_block_cache") else {
            return;
        };
        let opts = tiny_options()
            .with_use_direct_reads(true)
            .with_block_cache_capacity(0);
        run_in(dir.path(), 4000 + seed, 1500, &opts);
    }
}

/// Delayed compaction with a virtual compaction threshold of 3, 8 and 16 and a merge
/// threshold of 2: rewrites of fewer real tables become virtual tables, which gets,
/// scans, snapshots, transactions, reopens and later real compactions read through
/// their parents; reads ask for merges of the tables they meet, and at VCT 3 a garbage
/// bound of 1% rewrites tables for space all the time. VCT 8 found tiles whose first
/// key collided with a neighbour's range-tombstone bound.
#[test]
fn model_based_delayed_compaction() {
    let (mut virtualized, mut merges, mut rewrites) = (0, 0, 0);
    for seed in seeds().into_iter().take(4) {
        for (vct, ratio) in [(3, 0.01), (8, 0.1), (16, 0.1)] {
            let delayed = DelayedCompaction::new()
                .with_vct(vct)
                .with_vsmt(2)
                .with_max_garbage_ratio(ratio);
            let opts = tiny_options().with_delayed_compaction(Some(delayed));
            let s = run(7000 + seed, 1500, &opts);
            virtualized += s.virtual_compactions;
            merges += s.virtual_merges;
            rewrites += s.virtual_rewrites_for_space;
        }
    }
    println!(
        "virtual compactions: {virtualized}, merges: {merges}, rewrites for space: {rewrites}"
    );
    assert!(virtualized > 0, "no compaction was deferred");
    assert!(merges > 0, "no read asked for a merge that ran");
}
