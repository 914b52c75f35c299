//! Model-based test: random puts, deletes, batches, snapshots, gets, scans in both
//! directions, flushes, manual compactions and reopens against an in-memory model with
//! history, with tiny memtables and files so flushes and compactions run constantly.
//! Every read is compared. The seed of a failure is printed; rerun one seed with
//! `STRATA_SEED=<n> cargo test --test model_based`.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use strata::{Db, Options, ReadOptions, WriteBatch, WriteOptions};

fn run(seed: u64, n: usize, opts: &Options) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut db = Some(Db::open(dir.path(), opts.clone()).expect("open"));
    let mut model = Model::default();
    let wo = WriteOptions::default();
    for (step, op) in random_ops(seed, n, 300, true).into_iter().enumerate() {
        let ctx = || format!("seed {seed} step {step} op {op:?}");
        let d = db.as_ref().expect("open db");
        match &op {
            Op::Put(k, v) => {
                d.put(&wo, k, v)
                    .unwrap_or_else(|e| panic!("{}: {e}", ctx()));
                model.map.insert(k.clone(), v.clone());
            }
            Op::Delete(k) => {
                d.delete(&wo, k)
                    .unwrap_or_else(|e| panic!("{}: {e}", ctx()));
                model.map.remove(k);
            }
            Op::Batch(items) => {
                let mut b = WriteBatch::new();
                for (k, v) in items {
                    match v {
                        Some(v) => {
                            b.put(k, v);
                            model.map.insert(k.clone(), v.clone());
                        }
                        None => {
                            b.delete(k);
                            model.map.remove(k);
                        }
                    }
                }
                d.write(&wo, b).unwrap_or_else(|e| panic!("{}: {e}", ctx()));
            }
            Op::TakeSnapshot => {
                if model.snapshots.len() < 8 {
                    model
                        .snapshots
                        .push((d.snapshot(), Arc::new(model.map.clone())));
                }
            }
            Op::ReleaseSnapshot(i) => {
                if *i < model.snapshots.len() {
                    model.snapshots.remove(*i);
                }
            }
            Op::Get(k, snap) => {
                let (ro, expected) = match snap.and_then(|i| model.snapshots.get(i)) {
                    Some((s, m)) => (
                        ReadOptions {
                            snapshot: Some(s.clone()),
                            ..Default::default()
                        },
                        m.get(k).cloned(),
                    ),
                    None => (ReadOptions::default(), model.map.get(k).cloned()),
                };
                let got = d.get(&ro, k).unwrap_or_else(|e| panic!("{}: {e}", ctx()));
                assert_eq!(got, expected, "{}", ctx());
            }
            Op::Scan {
                forward,
                from,
                to,
                snapshot,
                limit,
            } => {
                let (snap, map): (_, &BTreeMap<_, _>) =
                    match snapshot.and_then(|i| model.snapshots.get(i)) {
                        Some((s, m)) => (Some(s.clone()), m),
                        None => (None, &model.map),
                    };
                let got = db_scan(d, snap, *forward, from, to, *limit)
                    .unwrap_or_else(|e| panic!("{}: {e}", ctx()));
                assert_eq!(
                    got,
                    model_scan(map, *forward, from, to, *limit),
                    "{}",
                    ctx()
                );
            }
            Op::Flush => d.flush().unwrap_or_else(|e| panic!("{}: {e}", ctx())),
            Op::CompactRange(a, b) => d
                .compact_range(a.as_deref(), b.as_deref())
                .unwrap_or_else(|e| panic!("{}: {e}", ctx())),
            Op::Reopen => {
                model.snapshots.clear();
                db.take()
                    .expect("db")
                    .close()
                    .unwrap_or_else(|e| panic!("{}: {e}", ctx()));
                db = Some(
                    Db::open(dir.path(), opts.clone()).unwrap_or_else(|e| panic!("{}: {e}", ctx())),
                );
            }
        }
    }
    // Final full comparison, both directions.
    let d = db.as_ref().expect("db");
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
        let opts = Options {
            compaction_priority: strata::CompactionPriority::OldestSmallestSeqFirst,
            compression: strata::Compression::Lz4,
            max_background_jobs: 3,
            ..tiny_options()
        };
        run(1000 + seed, 1500, &opts);
    }
}

#[test]
fn model_based_fixed_outputs_without_snapshot_filter() {
    for seed in seeds().into_iter().take(4) {
        let opts = Options {
            output_partitioning: strata::OutputPartitioning::Fixed,
            snapshot_filter: false,
            ..tiny_options()
        };
        run(2000 + seed, 1500, &opts);
    }
}
