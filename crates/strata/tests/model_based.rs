//! Model-based test: random puts, deletes, batches, snapshots, gets, scans in both
//! directions, flushes, manual compactions and reopens against an in-memory model with
//! history, with tiny memtables and files so flushes and compactions run constantly.
//! Every read is compared. The seed of a failure is printed; rerun one seed with
//! `STRATA_SEED=<n> cargo test --test model_based`.

mod common;

use common::*;
use strata::{CompactionPriority, Compression, Db, Options, OutputPartitioning};

fn run(seed: u64, n: usize, opts: &Options) {
    let dir = tempfile::tempdir().expect("tempdir");
    let ops = random_ops(seed, n, 300, true);
    let (db, model, _) = run_ops(
        &Db::builder(),
        dir.path(),
        opts,
        &ops,
        true,
        &format!("seed {seed}"),
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
