//! Engine conformance: the same checks run against every [`KvEngine`] (test builds only).
//!
//! Each engine is compared with a `BTreeMap` model: puts, overwrites, deletes (present
//! and absent keys), atomic batches, scans in both directions from no key, an existing
//! key and a key between keys, with limits and early stops, across flushes and
//! compactions, from two threads at once, and after a close and reopen. The memory
//! engine, Strata and (with the `fjall` feature) fjall run them here, and RocksDB in a
//! build with the `rocksdb` feature (too slow to build for CI's test suite: run
//! `cargo test --release -p strata-cli --features rocksdb --bin strata conformance`).

use super::options::{EngineFlags, EngineKind};
use super::{BatchOp, Commit, Direction, KvEngine, Scan};
use clap::Parser;
use std::collections::BTreeMap;
use std::path::Path;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

#[derive(Parser)]
struct FlagsOnly {
    #[command(flatten)]
    e: EngineFlags,
}

/// The engine flags with every default, as an empty command line gives them.
pub fn default_flags() -> EngineFlags {
    match FlagsOnly::try_parse_from(["t"]) {
        Ok(f) => f.e,
        Err(e) => panic!("default flags do not parse: {e}"),
    }
}

/// Flags for a small `engine` database in `dir`: 64 KiB memtables and tables, so a few
/// thousand keys make several tables on more than one level.
///
/// fjall gets 1 MiB memtables and tables: fjall 3.1.13's workers can deadlock when
/// memtable-rotation requests fill their bounded queue (every worker and the writer
/// blocked sending to it; fjall pull request #323, open). With 64 KiB memtables
/// `fjall_engine_spreads_keys_over_keyspaces` hung in a CI run on 2026-11-25 (gdb: every
/// thread in `flume::Sender::send`), as `engine_fjall` did before (its note).
pub fn small_flags(engine: EngineKind, dir: &Path) -> EngineFlags {
    let (buffer, base) = match engine {
        EngineKind::Fjall => (1 << 20, 4 << 20),
        _ => (64 << 10, 256 << 10),
    };
    EngineFlags {
        engine,
        db: dir.to_path_buf(),
        write_buffer_size: buffer,
        target_file_size_base: buffer as u64,
        max_bytes_for_level_base: base,
        level0_file_num_compaction_trigger: 4,
        ..default_flags()
    }
}

/// Scans with an end (an exclusive upper bound in either direction) visit exactly the
/// model's keys below it: forward and reverse, from an end, from a key below the end
/// and from a key at or above it (forward: nothing; reverse: from below the end).
fn assert_end_bounds(e: &dyn KvEngine, model: &Model, keys: &[&Vec<u8>]) {
    let name = e.name();
    let at = |q: usize| keys.get(keys.len() * q / 4).map(|k| k.as_slice());
    let (Some(low), Some(mid), Some(high)) = (at(1), at(2), at(3)) else {
        return;
    };
    let want = |lo: Option<&[u8]>, hi_incl: Option<&[u8]>, end: &[u8]| -> Model {
        model
            .iter()
            .filter(|(k, _)| {
                let k = k.as_slice();
                lo.is_none_or(|l| k >= l) && hi_incl.is_none_or(|h| k <= h) && k < end
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let (fwd, rev) = (Direction::Forward, Direction::Reverse);
    let cases: [(Option<&[u8]>, Direction, Model); 6] = [
        (None, fwd, want(None, None, high)),
        (Some(low), fwd, want(Some(low), None, high)),
        (Some(high), fwd, Model::new()),
        (None, rev, want(None, None, high)),
        (Some(mid), rev, want(None, Some(mid), high)),
        (Some(high), rev, want(None, None, high)),
    ];
    for (start, dir, expected) in cases {
        let scan = Scan::new(start, dir, usize::MAX).until(Some(high));
        assert_eq!(scan_of(e, scan), expected, "{name}: {scan:?}");
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(i: u32, round: u32) -> Vec<u8> {
    format!("value-{i}-{round}-{}", "x".repeat((i % 7) as usize * 10)).into_bytes()
}

fn scan_all(e: &dyn KvEngine, start: Option<&[u8]>, dir: Direction, limit: usize) -> Model {
    scan_of(e, Scan::new(start, dir, limit))
}

/// The entries `scan` visits, checked to come in its direction's order.
fn scan_of(e: &dyn KvEngine, scan: Scan<'_>) -> Model {
    let dir = scan.direction;
    let mut out = Model::new();
    let mut order: Vec<Vec<u8>> = Vec::new();
    let n = e
        .scan(scan, &mut |k, v| {
            order.push(k.to_vec());
            out.insert(k.to_vec(), v.to_vec());
            true
        })
        .expect("scan");
    assert_eq!(n, order.len(), "{}: scan count", e.name());
    let mut sorted = order.clone();
    sorted.sort();
    if dir == Direction::Reverse {
        sorted.reverse();
    }
    assert_eq!(order, sorted, "{}: scan order {dir:?}", e.name());
    out
}

/// Asserts that `e` holds exactly `model`: full scans both ways, every key's `get`,
/// absent keys, and bounded scans from a present and an absent key.
pub fn assert_matches(e: &dyn KvEngine, model: &Model) {
    let name = e.name();
    assert_eq!(
        &scan_all(e, None, Direction::Forward, usize::MAX),
        model,
        "{name}: forward scan"
    );
    assert_eq!(
        &scan_all(e, None, Direction::Reverse, usize::MAX),
        model,
        "{name}: reverse scan"
    );
    for (k, v) in model {
        assert_eq!(e.get(k).expect("get").as_ref(), Some(v), "{name}: get");
    }
    for absent in [&b""[..], b"key", b"key000000x", b"zzz"] {
        if !model.contains_key(absent) {
            assert_eq!(e.get(absent).expect("get"), None, "{name}: absent key");
        }
    }
    let keys: Vec<&Vec<u8>> = model.keys().collect();
    assert_end_bounds(e, model, &keys);
    if let Some(&mid) = keys.get(keys.len() / 2) {
        // From a present key: it is included, in both directions.
        let fwd = scan_all(e, Some(mid), Direction::Forward, 5);
        let want: Model = model
            .range(mid.clone()..)
            .take(5)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(fwd, want, "{name}: forward from a present key");
        let rev = scan_all(e, Some(mid), Direction::Reverse, 5);
        let want: Model = model
            .range(..=mid.clone())
            .rev()
            .take(5)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(rev, want, "{name}: reverse from a present key");
        // From just after it (absent): the next key forward, the key itself reverse.
        let mut after = mid.clone();
        after.push(0);
        if !model.contains_key(&after) {
            let fwd = scan_all(e, Some(&after), Direction::Forward, 1);
            let want: Model = model
                .range(after.clone()..)
                .take(1)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            assert_eq!(fwd, want, "{name}: forward from an absent key");
            let rev = scan_all(e, Some(&after), Direction::Reverse, 1);
            let want: Model = model
                .range(..after.clone())
                .rev()
                .take(1)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            assert_eq!(rev, want, "{name}: reverse from an absent key");
        }
    }
    // The visitor stops the scan.
    let mut seen = 0;
    let n = e
        .scan(
            Scan::new(None, Direction::Forward, usize::MAX),
            &mut |_, _| {
                seen += 1;
                seen < 3
            },
        )
        .expect("scan");
    assert_eq!(n, model.len().min(3), "{name}: visitor stop");
    assert_eq!(
        e.scan(Scan::new(None, Direction::Reverse, 0), &mut |_, _| true)
            .expect("scan"),
        0,
        "{name}: limit 0"
    );
}

/// Puts, overwrites, deletes and batches, checked against the model after each step,
/// then again after a flush, a range compaction, a full compaction and a wait.
///
/// An engine without `empty_keys` (fjall) must refuse a write of the empty key with an
/// error, writing nothing; the others must store it.
pub fn check_basic(e: &dyn KvEngine, empty_keys: bool) -> Model {
    let mut model = Model::new();
    assert_matches(e, &model);
    for i in 0..200 {
        e.put(&key(i), &value(i, 0)).expect("put");
        model.insert(key(i), value(i, 0));
    }
    assert_matches(e, &model);
    for i in (0..200).step_by(3) {
        e.put(&key(i), &value(i, 1)).expect("overwrite");
        model.insert(key(i), value(i, 1));
    }
    for i in (0..200).step_by(5) {
        e.delete(&key(i)).expect("delete");
        model.remove(&key(i));
    }
    e.delete(b"never-written")
        .expect("deleting an absent key is fine");
    if empty_keys {
        e.put(b"", b"empty key").expect("empty key");
        model.insert(Vec::new(), b"empty key".to_vec());
    } else {
        assert!(e.put(b"", b"empty key").is_err(), "{}: empty key", e.name());
        assert!(e.delete(b"").is_err(), "{}: empty key", e.name());
        let refused = [
            BatchOp::Put(b"in-refused-batch", b"x"),
            BatchOp::Delete(b""),
        ];
        assert!(e.write_batch(&refused).is_err(), "{}: empty key", e.name());
    }
    e.put(b"empty-value", b"").expect("empty value");
    model.insert(b"empty-value".to_vec(), Vec::new());
    assert_matches(e, &model);

    // A batch: puts, an overwrite, deletes, and a key put then deleted in one batch.
    let (k1, k2, k3, k4) = (key(1), key(3), key(4), key(500));
    let (v1, v4) = (value(1, 9), value(500, 9));
    let ops = [
        BatchOp::Put(&k1, &v1),
        BatchOp::Delete(&k2),
        BatchOp::Put(&k4, &v4),
        BatchOp::Delete(&k3),
        BatchOp::Put(b"batch-put-then-delete", b"x"),
        BatchOp::Delete(b"batch-put-then-delete"),
    ];
    e.write_batch(&ops).expect("batch");
    model.insert(k1.clone(), v1);
    model.remove(&k2);
    model.insert(k4.clone(), v4);
    model.remove(&k3);
    e.write_batch(&[]).expect("empty batch");
    assert_matches(e, &model);

    e.flush().expect("flush");
    assert_matches(e, &model);
    // Deletes after the flush shadow values already in tables.
    for i in (1..200).step_by(7) {
        e.delete(&key(i)).expect("delete");
        model.remove(&key(i));
    }
    e.flush().expect("flush");
    e.compact(Some(&key(50)), Some(&key(150)))
        .expect("range compaction");
    assert_matches(e, &model);
    e.compact(None, None).expect("full compaction");
    e.wait_for_compactions().expect("wait");
    assert_matches(e, &model);
    let _ = e.stats();
    model
}

/// Enough keys through small memtables to make tables on several levels, overwritten
/// and partly deleted, from two threads at once; the model check runs before and after
/// the background work settles.
pub fn check_many(e: &dyn KvEngine, model: &mut Model) {
    const N: u32 = 6000;
    std::thread::scope(|s| {
        for t in 0..2u32 {
            s.spawn(move || {
                for i in (t..N).step_by(2) {
                    e.put(&key(10_000 + i), &value(i, 2)).expect("put");
                }
                for i in (t..N).step_by(6) {
                    e.delete(&key(10_000 + i)).expect("delete");
                }
            });
        }
    });
    for i in 0..N {
        if i % 6 < 2 {
            model.remove(&key(10_000 + i));
        } else {
            model.insert(key(10_000 + i), value(i, 2));
        }
    }
    assert_matches(e, model);
    e.wait_for_compactions().expect("wait");
    assert_matches(e, model);
}

/// The database survives a close and reopen with the model's contents.
pub fn check_reopen(open: &dyn Fn() -> Box<dyn KvEngine>, e: Box<dyn KvEngine>, model: &Model) {
    // Unflushed writes too: they must come back from the log.
    let mut model = model.clone();
    e.put(b"after-last-flush", b"from the log").expect("put");
    model.insert(b"after-last-flush".to_vec(), b"from the log".to_vec());
    e.delete(&key(2)).expect("delete");
    model.remove(&key(2));
    e.close().expect("close");
    let e = open();
    assert_matches(e.as_ref(), &model);
    e.close().expect("close");
}

/// Every check on the engine `kind` in a fresh directory under `dir`.
pub fn check_engine(kind: EngineKind, dir: &Path) {
    let flags = small_flags(kind, &dir.join("db"));
    let e = super::open(&flags, false).expect("open");
    let mut model = check_basic(e.as_ref(), kind != EngineKind::Fjall);
    check_many(e.as_ref(), &mut model);
    let stats = e.stats();
    let files: u64 = stats.levels.iter().map(|l| l.files).sum();
    let bytes: u64 = stats.levels.iter().map(|l| l.size_bytes).sum();
    assert!(files > 0 && bytes > 0, "{kind:?}: no tables in {stats:?}");
    // Live table bytes are whole files. Strata's level bytes are too (no virtual tables
    // here); fjall's count data blocks only (their `file_size` metadata); RocksDB's
    // are parsed from `rocksdb.cfstats`, rounded to two decimals of their unit.
    let live = stats.live_table_bytes;
    match kind {
        EngineKind::Fjall => assert!(live > bytes, "{kind:?}: live {live} <= {bytes}"),
        EngineKind::Rocksdb => assert!(
            live.abs_diff(bytes) <= live / 50,
            "{kind:?}: live {live}, levels {bytes}"
        ),
        EngineKind::Strata => assert_eq!(live, bytes, "{kind:?}"),
    }
    assert!(!stats.level_table.is_empty(), "{kind:?}: no level table");
    let reopen = || super::open(&flags, true).expect("reopen");
    check_reopen(&reopen, e, &model);
    // The reopened database is kept (keep = true) but deleted on a fresh open.
    let e = super::open(&flags, false).expect("fresh open");
    assert_matches(e.as_ref(), &Model::new());
    // Without --transaction_db only Strata runs transactions (it needs no special open).
    let t = e.transaction(&[], &[BatchOp::Put(b"t", b"1")]);
    assert_eq!(t.is_ok(), kind == EngineKind::Strata, "{kind:?}: {t:?}");
    e.close().expect("close");
    check_transactions(kind, dir);
}

/// A transaction on a database opened with `--transaction_db`: reads for update count
/// what they found, its writes land together, plain reads and scans see them.
pub fn check_transactions(kind: EngineKind, dir: &Path) {
    let flags = EngineFlags {
        transaction_db: true,
        ..small_flags(kind, &dir.join("txn-db"))
    };
    let e = super::open(&flags, false).expect("open");
    let mut model = Model::new();
    e.put(&key(1), &value(1, 0)).expect("put");
    model.insert(key(1), value(1, 0));
    let ops = [
        BatchOp::Put(&key(2), &value(2, 1)),
        BatchOp::Delete(&key(1)),
        BatchOp::Put(&key(3), &value(3, 1)),
    ];
    let done = e
        .transaction(&[&key(1), &key(9)], &ops)
        .expect("transaction");
    assert_eq!(done, Commit::Done { found: 1 }, "{kind:?}");
    model.remove(&key(1));
    model.insert(key(2), value(2, 1));
    model.insert(key(3), value(3, 1));
    assert_matches(e.as_ref(), &model);
    e.close().expect("close");
}

/// `--num_column_families=4` on the engine `kind`: puts, overwrites, deletes and
/// batches spanning families read back by `get` (before and after a flush, a
/// compaction and a reopen), scans refused, and each family opened alone holds exactly
/// the model's keys that [`super::family_of`] routes to it: the families really hold
/// the data, split by the shared routing function.
pub fn check_families(kind: EngineKind, dir: &Path) {
    const N: usize = 4;
    let flags = EngineFlags {
        num_column_families: N,
        ..small_flags(kind, &dir.join("cf-db"))
    };
    let e = super::open(&flags, false).expect("open");
    let mut model = Model::new();
    for i in 0..3000 {
        e.put(&key(i), &value(i, 0)).expect("put");
        model.insert(key(i), value(i, 0));
    }
    for i in (0..3000).step_by(4) {
        e.delete(&key(i)).expect("delete");
        model.remove(&key(i));
    }
    // Batches whose updates land in different families, applied together.
    for b in 0..50u32 {
        let keys: Vec<Vec<u8>> = (0..8).map(|j| key(5000 + b * 8 + j)).collect();
        let vals: Vec<Vec<u8>> = (0..8).map(|j| value(b * 8 + j, 1)).collect();
        let mut ops: Vec<BatchOp<'_>> = keys
            .iter()
            .zip(&vals)
            .map(|(k, v)| BatchOp::Put(k, v))
            .collect();
        let gone = key(b * 8 + 1);
        ops.push(BatchOp::Delete(&gone));
        e.write_batch(&ops).expect("batch");
        for (k, v) in keys.iter().zip(&vals) {
            model.insert(k.clone(), v.clone());
        }
        model.remove(&gone);
    }
    let check_gets = |e: &dyn KvEngine, model: &Model| {
        for (k, v) in model {
            assert_eq!(e.get(k).expect("get").as_ref(), Some(v), "{kind:?}: get");
        }
        for i in (0..3000).step_by(4) {
            assert_eq!(e.get(&key(i)).expect("get"), None, "{kind:?}: deleted");
        }
    };
    check_gets(e.as_ref(), &model);
    let scan = e.scan(Scan::new(None, Direction::Forward, 10), &mut |_, _| true);
    assert!(
        matches!(&scan, Err(crate::error::CliError::Usage(m)) if m.contains("column families")),
        "{kind:?}: a scan over {N} families must be refused: {scan:?}"
    );
    e.flush().expect("flush");
    e.compact(None, None).expect("compact");
    check_gets(e.as_ref(), &model);
    let names: Vec<String> = (0..N).map(super::family_name).collect();
    assert_eq!(e.cf_names().expect("names"), names, "{kind:?}");
    let stats = e.stats();
    assert!(
        stats.levels.iter().map(|l| l.files).sum::<u64>() >= N as u64,
        "{kind:?}"
    );
    e.close().expect("close");

    let e = super::open(&flags, true).expect("reopen");
    check_gets(e.as_ref(), &model);
    e.close().expect("close");

    // Each family alone: exactly its share of the model.
    for (f, name) in names.iter().enumerate() {
        let one = super::Families::One(name.clone());
        let e = super::open_families(&flags, true, &one).expect("open one family");
        let got = scan_all(e.as_ref(), None, Direction::Forward, usize::MAX);
        let want: Model = model
            .iter()
            .filter(|(k, _)| super::family_of(k, N) == f)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert!(
            want.len() > model.len() / (2 * N),
            "{kind:?}: skewed routing"
        );
        assert_eq!(got, want, "{kind:?}: family {name}");
        e.close().expect("close");
    }
    let missing = super::Families::One("nope".into());
    let err = super::open_families(&flags, true, &missing).map(|_| ());
    assert!(
        matches!(&err, Err(crate::error::CliError::Usage(m)) if m.contains("`nope`") && m.contains("cf3")),
        "{kind:?}: {err:?}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_engine_conforms() {
        let e = super::super::memory::MemoryEngine::default();
        let mut model = check_basic(&e, true);
        check_many(&e, &mut model);
    }

    #[test]
    fn strata_engine_conforms() {
        let tmp = tempfile::tempdir().expect("tempdir");
        check_engine(EngineKind::Strata, tmp.path());
    }

    #[test]
    fn strata_engine_spreads_keys_over_column_families() {
        let tmp = tempfile::tempdir().expect("tempdir");
        check_families(EngineKind::Strata, tmp.path());
    }

    #[cfg(feature = "fjall")]
    #[test]
    fn fjall_engine_conforms() {
        let tmp = tempfile::tempdir().expect("tempdir");
        check_engine(EngineKind::Fjall, tmp.path());
    }

    #[cfg(feature = "fjall")]
    #[test]
    fn fjall_engine_spreads_keys_over_keyspaces() {
        let tmp = tempfile::tempdir().expect("tempdir");
        check_families(EngineKind::Fjall, tmp.path());
    }

    #[cfg(feature = "rocksdb")]
    #[test]
    fn rocksdb_engine_conforms() {
        let tmp = tempfile::tempdir().expect("tempdir");
        check_engine(EngineKind::Rocksdb, tmp.path());
    }

    /// The routing function: no hashing for one family, FNV-1a 64 otherwise (pinned
    /// values, so every engine and every version routes a key to the same family),
    /// and an even spread.
    #[test]
    fn family_of_is_fnv1a_modulo_n() {
        use super::super::family_of;
        assert_eq!(family_of(b"anything", 1), 0);
        assert_eq!(family_of(b"anything", 0), 0);
        // FNV-1a 64 of "" is the offset basis 0xcbf29ce484222325; of "a" 0xaf63dc4c8601ec8c.
        assert_eq!(family_of(b"", 7), (0xcbf2_9ce4_8422_2325u64 % 7) as usize);
        assert_eq!(
            family_of(b"a", 1000),
            (0xaf63_dc4c_8601_ec8cu64 % 1000) as usize
        );
        let mut counts = [0usize; 4];
        for i in 0..4000 {
            counts[family_of(&key(i), 4)] += 1;
        }
        assert!(
            counts.iter().all(|&c| (800..1200).contains(&c)),
            "{counts:?}"
        );
        assert_eq!(super::super::family_name(0), "default");
        assert_eq!(super::super::family_name(3), "cf3");
    }
}
