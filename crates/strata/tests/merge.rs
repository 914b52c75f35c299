//! Merge operators end to end: counters resolved across memtables, tables and levels,
//! snapshots across folds, compaction folding chains, and the clear errors (no
//! operator, another operator, an operator's refusal). The random workloads of the
//! model-based and metamorphic tests merge too (append); this file pins the cases by
//! name.

mod common;

use common::{db_scan, table_bytes, tiny_options, AppendNoPartial};
use std::sync::Arc;
use strata::merge::{Max, U64Add};
use strata::{Db, ErrorKind, MergeOperator, Options, ReadOptions, WriteBatch, WriteOptions};

fn wo() -> WriteOptions {
    WriteOptions::default()
}

fn counter(db: &Db, ro: &ReadOptions, k: &[u8]) -> Option<u64> {
    db.get(ro, k)
        .expect("get")
        .map(|v| U64Add::decode(&v).expect("8 bytes"))
}

fn counters() -> Options {
    tiny_options().with_merge_operator(Some(Arc::new(U64Add)))
}

fn key(i: u32) -> Vec<u8> {
    format!("c{i:04}").into_bytes()
}

/// Every (key, value) of a full scan in `forward` or reverse order.
fn scan(db: &Db, ro: &ReadOptions, forward: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    db_scan(db, ro.snapshot.clone(), forward, &None, &None, usize::MAX).expect("scan")
}

#[test]
fn counters_resolve_across_memtables_tables_and_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), counters()).unwrap();
    let keys = 50u32;
    let mut snaps = Vec::new();
    for round in 1..=40u64 {
        for i in 0..keys {
            db.merge(&wo(), &key(i), &U64Add::operand(round)).unwrap();
        }
        if round % 10 == 0 {
            snaps.push((db.snapshot(), round * (round + 1) / 2));
            db.flush().unwrap();
        }
    }
    // A put in the middle of a chain resets it; a delete too.
    db.put(&wo(), &key(0), &U64Add::operand(1000)).unwrap();
    db.merge(&wo(), &key(0), &U64Add::operand(1)).unwrap();
    db.delete(&wo(), &key(1)).unwrap();
    db.merge(&wo(), &key(1), &U64Add::operand(7)).unwrap();
    let total = 40 * 41 / 2;
    let check = |db: &Db, snaps: &[(strata::Snapshot, u64)]| {
        let ro = ReadOptions::default();
        assert_eq!(counter(db, &ro, &key(0)), Some(1001));
        assert_eq!(counter(db, &ro, &key(1)), Some(7));
        for i in 2..keys {
            assert_eq!(counter(db, &ro, &key(i)), Some(total), "key {i}");
        }
        let fwd = scan(db, &ro, true);
        let mut rev = scan(db, &ro, false);
        rev.reverse();
        assert_eq!(fwd, rev, "both directions agree");
        assert_eq!(fwd.len(), keys as usize);
        for (s, sum) in snaps {
            let ro = ReadOptions::default().with_snapshot(Some(s.clone()));
            for i in 0..keys {
                assert_eq!(counter(db, &ro, &key(i)), Some(*sum), "key {i} at {sum}");
            }
            let at = scan(db, &ro, false);
            assert!(at.iter().all(|(_, v)| U64Add::decode(v).unwrap() == *sum));
        }
    };
    check(&db, &snaps);
    db.compact_range(None, None).unwrap();
    check(&db, &snaps);
    snaps.clear();
    db.compact_range(None, None).unwrap();
    check(&db, &snaps);
    db.close().unwrap();
    let db = Db::open(dir.path(), counters()).unwrap();
    check(&db, &snaps);
    db.close().unwrap();
}

/// With no snapshot, a full compaction leaves one entry per key: the tables shrink
/// from thousands of operands to one 8-byte value per key. Also without a partial
/// merge: the bottommost compaction full-merges from "no base".
#[test]
fn compaction_folds_chains_into_one_entry_per_key() {
    let ops: Vec<(&str, Arc<dyn MergeOperator>, Vec<u8>)> = vec![
        ("u64 add", Arc::new(U64Add), U64Add::operand(1).to_vec()),
        ("no partial merge", Arc::new(AppendNoPartial), b"x".to_vec()),
    ];
    for (name, op, operand) in ops {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), tiny_options().with_merge_operator(Some(op))).unwrap();
        for _ in 0..60 {
            for i in 0..20 {
                db.merge(&wo(), &key(i), &operand).unwrap();
            }
        }
        db.flush().unwrap();
        db.compact_range(None, None).unwrap();
        db.wait_for_compactions().unwrap();
        // 1,200 operands of >= 14 bytes each as written; 20 values after folding.
        let bytes = table_bytes(&db);
        let value = db.get(&ReadOptions::default(), &key(3)).unwrap().unwrap();
        let per_key = 6 + 8 + value.len() as u64;
        assert!(
            bytes < 20 * per_key + 2048,
            "{name}: {bytes} table bytes after a full compaction"
        );
        if name == "u64 add" {
            assert_eq!(U64Add::decode(&value).unwrap(), 60);
        } else {
            assert_eq!(value, vec![&b"x"[..]; 60].join(&b","[..]));
        }
        db.close().unwrap();
    }
}

#[test]
fn merging_without_an_operator_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), tiny_options().with_merge_operator(None)).unwrap();
    let before = db.latest_sequence();
    let e = db.merge(&wo(), b"k", b"x").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("merge_operator"), "{e}");
    let mut b = WriteBatch::new();
    b.put(b"a", b"1");
    b.merge(b"k", b"x");
    assert_eq!(
        db.write(&wo(), b).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(db.latest_sequence(), before, "nothing was written");
    assert_eq!(db.get(&ReadOptions::default(), b"a").unwrap(), None);
    db.close().unwrap();
}

#[test]
fn operands_read_without_an_operator_are_an_error_not_a_value() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), counters()).unwrap();
    db.put(&wo(), b"plain", b"v").unwrap();
    db.merge(&wo(), b"n", &U64Add::operand(2)).unwrap();
    db.flush().unwrap();
    db.merge(&wo(), b"n", &U64Add::operand(3)).unwrap();
    db.close().unwrap();

    let db = Db::open(dir.path(), tiny_options().with_merge_operator(None)).unwrap();
    let ro = ReadOptions::default();
    assert_eq!(db.get(&ro, b"plain").unwrap(), Some(b"v".to_vec()));
    let e = db.get(&ro, b"n").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    for forward in [true, false] {
        let mut it = db.iter(&ro).unwrap();
        if forward {
            it.seek_to_first();
            while it.valid() {
                it.next();
            }
        } else {
            it.seek_to_last();
            while it.valid() {
                it.prev();
            }
        }
        let e = it.status().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    }
    // Compaction without an operator keeps every operand.
    db.compact_range(None, None).unwrap();
    db.close().unwrap();

    let db = Db::open(dir.path(), counters()).unwrap();
    assert_eq!(counter(&db, &ReadOptions::default(), b"n"), Some(5));
    db.close().unwrap();
}

#[test]
fn reopening_with_another_operator_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    Db::open(dir.path(), counters()).unwrap().close().unwrap();
    let e = Db::open(
        dir.path(),
        tiny_options().with_merge_operator(Some(Arc::new(Max))),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("strata.max") && msg.contains("strata.u64_add"),
        "{msg}"
    );
    Db::open(dir.path(), counters()).unwrap().close().unwrap();
}

#[test]
fn an_operators_refusal_is_merge_failed_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), counters()).unwrap();
    let ro = ReadOptions::default();
    db.put(&wo(), b"k", b"abc").unwrap();
    db.merge(&wo(), b"k", &U64Add::operand(1)).unwrap();
    let e = db.get(&ro, b"k").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MergeFailed, "{e}");
    assert!(e.to_string().contains("strata.u64_add"), "{e}");
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(
        db.get(&ro, b"k").unwrap_err().kind(),
        ErrorKind::MergeFailed
    );
    let mut it = db.iter(&ro).unwrap();
    it.seek_to_first();
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::MergeFailed);
    // A put resets the key.
    db.put(&wo(), b"k", &U64Add::operand(40)).unwrap();
    db.merge(&wo(), b"k", &U64Add::operand(2)).unwrap();
    assert_eq!(counter(&db, &ro, b"k"), Some(42));
    db.close().unwrap();
}
