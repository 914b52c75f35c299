//! Protects: `Db::multi_get` / `multi_get_cf` (docs/ARCHITECTURE.md §5.2). Checked key
//! by key against `get` and against a model, in the caller's order, with duplicates
//! and missing keys in the batch, at the current state and at held snapshots, over
//! memtables, L0 and deeper levels, merges, range deletes, virtual tables (delayed
//! compaction) and the snapshot filter, in two column families; and with direct reads,
//! where a batch reads its blocks ahead together.

mod common;

use common::{append_operator, direct_io_tempdir, model_merge, tiny_options, ModelMap};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::{
    CfHandle, CfOptions, Db, DelayedCompaction, Options, ReadOptions, Snapshot, WriteOptions,
};

fn key(i: u32) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

/// Checks one batch at `snapshot` (or now) in `cf`: `multi_get` equals `get` key by
/// key, and with `model`, the model.
fn check(
    db: &Db,
    cf: &CfHandle,
    snapshot: Option<&Snapshot>,
    batch: &[Vec<u8>],
    model: Option<&ModelMap>,
    ctx: &str,
) {
    let ro = match snapshot {
        Some(s) => ReadOptions::default().with_snapshot(s.clone()),
        None => ReadOptions::default(),
    };
    let got = db.multi_get_cf(&ro, cf, batch);
    assert_eq!(got.len(), batch.len(), "{ctx}");
    for (k, answer) in batch.iter().zip(got) {
        let answer = answer.unwrap_or_else(|e| panic!("{ctx}: multi_get {k:?}: {e}"));
        let single = db.get_cf(&ro, cf, k).unwrap();
        assert_eq!(answer, single, "{ctx}: key {}", String::from_utf8_lossy(k));
        if let Some(m) = model {
            assert_eq!(answer.as_ref(), m.get(k), "{ctx}: model, key {k:?}");
        }
    }
}

fn run(name: &str, opts: Options, seed: u64) {
    let dir = if opts.use_direct_reads {
        match direct_io_tempdir(name) {
            Some(dir) => dir,
            None => return,
        }
    } else {
        tempfile::tempdir().unwrap()
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let other = db
        .create_cf(
            "other",
            CfOptions::default().with_merge_operator(Some(append_operator())),
        )
        .unwrap();
    let cfs = [db.default_cf(), other];
    let wo = WriteOptions::default();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut models = [ModelMap::new(), ModelMap::new()];
    let mut snaps: Vec<(Snapshot, [ModelMap; 2])> = Vec::new();
    for step in 0..6000u32 {
        let f = rng.random_range(0..2usize);
        let k = key(rng.random_range(0..400));
        let v = format!("v{step}-{}", "x".repeat(rng.random_range(0..60))).into_bytes();
        match rng.random_range(0..20u32) {
            0..=9 => {
                db.put_cf(&wo, &cfs[f], &k, &v).unwrap();
                models[f].insert(k, v);
            }
            10..=12 => {
                db.delete_cf(&wo, &cfs[f], &k).unwrap();
                models[f].remove(&k);
            }
            13..=17 => {
                db.merge_cf(&wo, &cfs[f], &k, &v).unwrap();
                model_merge(&mut models[f], &k, &v);
            }
            18 => {
                let end = key(rng.random_range(0..400));
                if k <= end {
                    db.delete_range_cf(&wo, &cfs[f], &k, &end).unwrap();
                    let doomed: Vec<_> = models[f].range(k..end).map(|(k, _)| k.clone()).collect();
                    for d in doomed {
                        models[f].remove(&d);
                    }
                }
            }
            _ => {
                if snaps.len() < 4 {
                    snaps.push((db.snapshot(), models.clone()));
                } else {
                    snaps.remove(rng.random_range(0..snaps.len()));
                }
            }
        }
        if step % 150 == 149 {
            // Batches of 1 to 64 keys, with repeats and keys never written.
            let n = rng.random_range(1..=64usize);
            let batch: Vec<Vec<u8>> = (0..n).map(|_| key(rng.random_range(0..450))).collect();
            for (c, cf) in cfs.iter().enumerate() {
                let ctx = format!("{name} seed {seed} step {step} family {c}");
                check(&db, cf, None, &batch, Some(&models[c]), &ctx);
                for (j, (s, m)) in snaps.iter().enumerate() {
                    let ctx = format!("{ctx} snapshot {j}");
                    check(&db, cf, Some(s), &batch, Some(&m[c]), &ctx);
                }
            }
        }
    }
    assert!(db
        .multi_get(&ReadOptions::default(), &[] as &[&[u8]])
        .is_empty());
    let counters = db.stats().counters;
    if opts.delayed_compaction.is_some() {
        assert!(
            counters.gets_through_virtual > 0,
            "{name} seed {seed}: no lookup met a virtual table: {counters:?}"
        );
    }
    assert_eq!(
        counters.multi_get_blocks_read_ahead > 0,
        opts.use_direct_reads,
        "{name} seed {seed}: blocks read ahead: {counters:?}"
    );
    drop(snaps);
    db.close().unwrap();
}

#[test]
fn multi_get_answers_as_get_does_key_by_key() {
    let delayed = DelayedCompaction::new().with_vct(12).with_vsmt(2);
    let sets: Vec<(&str, Options)> = vec![
        ("tiny", tiny_options()),
        (
            "no snapshot filter",
            tiny_options().with_snapshot_filter(false),
        ),
        (
            "delayed compaction",
            tiny_options().with_delayed_compaction(Some(delayed)),
        ),
        (
            "direct reads, small cache",
            tiny_options()
                .with_use_direct_reads(true)
                .with_block_cache_capacity(64 << 10),
        ),
    ];
    for (name, opts) in sets {
        for seed in 1..=2 {
            run(name, opts.clone(), seed);
        }
    }
}
