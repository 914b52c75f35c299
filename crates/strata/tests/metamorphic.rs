//! Metamorphic: one random operation log, run against many option sets, gives the same
//! observations (every `get` and scan result, in order) under each.
//!
//! What it protects: options that change *how* the engine stores and finds data (file
//! and memtable sizes, compression, compaction priority, background threads, output
//! partitioning, the snapshot filter, bloom filters, the block cache) must never change
//! *what* it returns. A bug that only one configuration shows (a filter false negative,
//! a partition boundary that drops a key, a snapshot filter that skips a visible table)
//! shows up as a mismatch naming the two option sets, the seed and the first differing
//! observation. The first option set is also checked against the in-memory model.
//!
//! Seeds: `STRATA_SEED=<n>` replays one; `STRATA_SEEDS=<n>` or `STRATA_LONG=1` runs more.

mod common;

use common::*;
use std::sync::Arc;
use strata::env::FaultFs;
use strata::{CompactionPriority, Compression, Options, OutputPartitioning};

const DIR: &str = "/db";

fn option_sets() -> Vec<(&'static str, Options)> {
    let t = tiny_options;
    vec![
        ("tiny", t()),
        (
            "default-sizes",
            Options {
                max_manifest_file_size: 16 << 10,
                ..Options::default()
            },
        ),
        (
            "tiny-lz4",
            Options {
                compression: Compression::Lz4,
                ..t()
            },
        ),
        (
            "tiny-zstd",
            Options {
                compression: Compression::Zstd,
                ..t()
            },
        ),
        (
            "tiny-oldest-seq-first",
            Options {
                compaction_priority: CompactionPriority::OldestSmallestSeqFirst,
                ..t()
            },
        ),
        (
            "tiny-jobs4",
            Options {
                max_background_jobs: 4,
                ..t()
            },
        ),
        (
            "tiny-fixed-outputs",
            Options {
                output_partitioning: OutputPartitioning::Fixed,
                ..t()
            },
        ),
        (
            "tiny-aligned-1.5",
            Options {
                output_partitioning: OutputPartitioning::Aligned { variance: 1.5 },
                ..t()
            },
        ),
        (
            "tiny-no-snapshot-filter",
            Options {
                snapshot_filter: false,
                ..t()
            },
        ),
        (
            "tiny-bloom0-cache0",
            Options {
                bloom_bits_per_key: 0,
                block_cache_capacity: 0,
                ..t()
            },
        ),
        (
            "default-sizes-zstd-bloom0-cache0",
            Options {
                compression: Compression::Zstd,
                bloom_bits_per_key: 0,
                block_cache_capacity: 0,
                ..Options::default()
            },
        ),
        (
            "tiny-fixed-lz4-jobs4-oldest",
            Options {
                output_partitioning: OutputPartitioning::Fixed,
                compression: Compression::Lz4,
                max_background_jobs: 4,
                compaction_priority: CompactionPriority::OldestSmallestSeqFirst,
                snapshot_filter: false,
                ..t()
            },
        ),
    ]
}

/// Runs `ops` on a fresh in-memory database with `opts`; returns every observation.
/// With `model`, also checks each observation against the model.
fn observe(ops: &[Op], opts: &Options, check_model: bool, ctx: &str) -> Vec<Observed> {
    let fs = FaultFs::new();
    let opts = Options {
        fs: Arc::new(fs),
        ..opts.clone()
    };
    let (db, _, mut seen) = run_ops(std::path::Path::new(DIR), &opts, ops, check_model, ctx);
    let d = &db;
    d.wait_for_compactions()
        .unwrap_or_else(|e| panic!("{ctx}: idle: {e}"));
    seen.push(Observed::Scan(
        db_scan(d, None, true, &None, &None, usize::MAX).expect("final scan"),
    ));
    seen
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
    let sets = option_sets();
    let mut observations = 0;
    for seed in seeds() {
        let ops = random_ops(seed, 1200, 300, true);
        let mut reference: Option<(&str, Vec<Observed>)> = None;
        for (name, opts) in &sets {
            let ctx = format!("seed {seed} options {name}");
            let seen = observe(&ops, opts, reference.is_none(), &ctx);
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
        "metamorphic: {} option sets, {} seeds, {observations} observations compared",
        sets.len(),
        seeds().len()
    );
}
