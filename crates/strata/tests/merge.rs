//! Merge operators end to end: counters resolved across memtables, tables and levels,
//! snapshots across folds, compaction folding chains, order-sensitive (append) chains
//! read back exactly across flushes, compactions, reopens and snapshots, and the clear
//! errors (no operator, another operator, an operator's refusal). The random workloads
//! of the model-based and metamorphic tests merge too (append); this file pins the
//! cases by name.

mod common;

use common::{append_operator, db_scan, table_bytes, tiny_options, AppendNoPartial};
use std::collections::BTreeMap;
use std::sync::Arc;
use strata::merge::{Max, U64Add};
use strata::{
    CfOptions, Db, ErrorKind, MergeOperator, Options, ReadOptions, Snapshot, WriteBatch,
    WriteOptions,
};

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

/// A malformed operand (a one-byte counter increment) is refused before it is
/// acknowledged, wherever it comes from: `Db::merge`, a batch (whose other updates are
/// then not written either), a named family's operator. Before
/// the check, `merge` returned `Ok` and every later read of the key failed.
#[test]
fn operands_the_operator_cannot_apply_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), counters()).unwrap();
    let counts = db
        .create_cf(
            "counts",
            CfOptions::default().with_merge_operator(Some(Arc::new(U64Add))),
        )
        .unwrap();
    let words = db
        .create_cf(
            "words",
            CfOptions::default().with_merge_operator(Some(append_operator())),
        )
        .unwrap();
    let ro = ReadOptions::default();
    db.merge(&wo(), b"n", &U64Add::operand(1)).unwrap();
    let before = db.latest_sequence();

    let e = db.merge(&wo(), b"n", b"5").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let msg = e.to_string();
    for part in ["strata.u64_add", "key=`n`", "8-byte", "`default`"] {
        assert!(msg.contains(part), "{part} missing from: {msg}");
    }

    // The bad operand is the batch's third record: the put and the good merge before
    // it are not written either.
    let mut b = WriteBatch::new();
    b.put(b"a", b"1");
    b.merge_cf(&words, b"w", b"any bytes");
    b.merge_cf(&counts, b"c", &[1, 2, 3]);
    let e = db.write(&wo(), b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(
        e.to_string().contains("`counts`") && e.to_string().contains("record=2"),
        "{e}"
    );

    assert_eq!(db.latest_sequence(), before, "nothing was written");
    assert_eq!(db.get(&ro, b"a").unwrap(), None);
    assert_eq!(db.get_cf(&ro, &words, b"w").unwrap(), None);
    assert_eq!(counter(&db, &ro, b"n"), Some(1), "the key stays readable");

    // The same batch with well-formed operands goes through.
    let mut b = WriteBatch::new();
    b.put(b"a", b"1");
    b.merge_cf(&words, b"w", b"any bytes");
    b.merge_cf(&counts, b"c", &U64Add::operand(7));
    db.write(&wo(), b).unwrap();
    assert_eq!(
        db.get_cf(&ro, &counts, b"c").unwrap(),
        Some(U64Add::operand(7).to_vec())
    );
    db.close().unwrap();
}

/// An application's operator the open was not given: its operands are an error to
/// read (never a value), new ones are refused, compaction keeps them, and the
/// operator given again reads them. (A built-in operator recorded in `OPTIONS` is
/// simply adopted by an open that gives none.)
#[test]
fn operands_read_without_an_operator_are_an_error_not_a_value() {
    let dir = tempfile::tempdir().unwrap();
    let app = || tiny_options().with_merge_operator(Some(Arc::new(AppendNoPartial)));
    let db = Db::open(dir.path(), app()).unwrap();
    db.put(&wo(), b"plain", b"v").unwrap();
    db.merge(&wo(), b"n", b"2").unwrap();
    db.flush().unwrap();
    db.merge(&wo(), b"n", b"3").unwrap();
    db.close().unwrap();

    let db = Db::open(dir.path(), tiny_options().with_merge_operator(None)).unwrap();
    let ro = ReadOptions::default();
    assert_eq!(db.get(&ro, b"plain").unwrap(), Some(b"v".to_vec()));
    // The stand-in of the recorded operator refuses the merge, naming it.
    let e = db.get(&ro, b"n").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MergeFailed, "{e}");
    assert!(e.to_string().contains("was not given at open"), "{e}");
    let e = db.merge(&wo(), b"n", b"4").unwrap_err();
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
        assert_eq!(e.kind(), ErrorKind::MergeFailed, "{e}");
    }
    // Compaction without the operator keeps every operand.
    db.compact_range(None, None).unwrap();
    db.close().unwrap();

    let db = Db::open(dir.path(), app()).unwrap();
    assert_eq!(db.get(&ro, b"n").unwrap(), Some(b"2,3".to_vec()));
    db.close().unwrap();

    // A built-in recorded operator is adopted by an open that gives none.
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), counters()).unwrap();
    db.merge(&wo(), b"n", &U64Add::operand(2)).unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), tiny_options().with_merge_operator(None)).unwrap();
    db.merge(&wo(), b"n", &U64Add::operand(3)).unwrap();
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

/// The order-sensitive operators: `Append` with `,` (compaction may partial-merge its
/// operands) and the same meaning without a partial merge (compaction keeps operands
/// until it reaches a base or the bottom). A chain folded or resolved in any order but
/// oldest first reads back as another string.
fn appends() -> Vec<(&'static str, Arc<dyn MergeOperator>)> {
    vec![
        ("append", append_operator()),
        ("append without partial merge", Arc::new(AppendNoPartial)),
    ]
}

/// What a read should see: user key to value.
type Expected = BTreeMap<Vec<u8>, String>;

/// Asserts that `db` reads exactly `now` with no snapshot and each snapshot's map at
/// that snapshot: a get of every key (and of one key never written), and full scans
/// forward and backward.
fn check_appends(db: &Db, now: &Expected, snaps: &[(&str, Snapshot, Expected)], ctx: &str) {
    let views = std::iter::once(("now", None, now))
        .chain(snaps.iter().map(|(n, s, m)| (*n, Some(s.clone()), m)));
    for (view, snap, want) in views {
        let ro = ReadOptions::default().with_snapshot(snap.clone());
        for (k, v) in want {
            let got = db
                .get(&ro, k)
                .unwrap_or_else(|e| panic!("{ctx} {view}: {e}"));
            let got = got.map(|g| String::from_utf8(g).unwrap());
            assert_eq!(
                got.as_deref(),
                Some(v.as_str()),
                "{ctx}, {view}: get {}",
                k.escape_ascii()
            );
        }
        assert_eq!(db.get(&ro, b"never written").unwrap(), None, "{ctx}");
        let want: Vec<(Vec<u8>, Vec<u8>)> = want
            .iter()
            .map(|(k, v)| (k.clone(), v.clone().into_bytes()))
            .collect();
        let fwd = scan(db, &ro, true);
        same_entries(&fwd, &want, &format!("{ctx}, {view}: forward scan"));
        let mut rev = scan(db, &ro, false);
        rev.reverse();
        same_entries(&rev, &want, &format!("{ctx}, {view}: reverse scan"));
    }
}

/// Asserts `got == want`, naming the first entry that differs (not all of them).
fn same_entries(got: &[(Vec<u8>, Vec<u8>)], want: &[(Vec<u8>, Vec<u8>)], ctx: &str) {
    let show = |e: Option<&(Vec<u8>, Vec<u8>)>| {
        e.map(|(k, v)| format!("{} = {}", k.escape_ascii(), v.escape_ascii()))
    };
    if let Some(i) = (0..got.len().max(want.len())).find(|&i| got.get(i) != want.get(i)) {
        panic!(
            "{ctx}: entry {i} is {:?}, expected {:?}",
            show(got.get(i)),
            show(want.get(i))
        );
    }
}

/// Files in L0, and in all deeper levels.
fn l0_and_deeper_files(db: &Db) -> (usize, usize) {
    let levels = db.stats().levels;
    let deeper = levels.iter().skip(1).map(|l| l.files).sum();
    (levels.first().map_or(0, |l| l.files), deeper)
}

/// Append chains over 120 keys, each round's operand a letter (`a` for round 0, `b`
/// for round 1, ...): a quarter of the keys start from a put of `base`, a quarter are
/// deleted before round 4, a quarter are operands only and a quarter are reset by a
/// put of `reset` before round 5. The chains are spread over the bottom level, several
/// L0 files and the memtable, with snapshots held inside them (between rounds, on
/// tables and in the memtable); every read must give the letters in write order after
/// each flush, `compact_range` (with the snapshots held, then released one by one) and
/// reopen. With either operator, folding or resolving a chain newest first fails.
#[test]
fn append_chains_keep_their_order_across_flushes_compactions_snapshots_and_reopen() {
    for (name, op) in appends() {
        let dir = tempfile::tempdir().unwrap();
        // Memtables large enough that only the test flushes; four L0 files compact.
        let opts = tiny_options()
            .with_merge_operator(Some(op))
            .with_write_buffer_size(64 << 10)
            .with_level0_file_num_compaction_trigger(4);
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        let keys = 120u32;
        let mut now = Expected::new();
        let mut snaps: Vec<(&str, Snapshot, Expected)> = Vec::new();
        // One round: the category's put or delete first, then an operand for every key.
        let round = |db: &Db, now: &mut Expected, r: u8| {
            let letter = char::from(b'a' + r).to_string();
            for i in 0..keys {
                let k = key(i);
                match (i % 4, r) {
                    (0, 0) => {
                        db.put(&wo(), &k, b"base").unwrap();
                        now.insert(k.clone(), "base".into());
                    }
                    (1, 4) => {
                        db.delete(&wo(), &k).unwrap();
                        now.remove(&k);
                    }
                    (3, 5) => {
                        db.put(&wo(), &k, b"reset").unwrap();
                        now.insert(k.clone(), "reset".into());
                    }
                    _ => {}
                }
                db.merge(&wo(), &k, letter.as_bytes()).unwrap();
                let v = match now.get(&k) {
                    Some(old) => format!("{old},{letter}"),
                    None => letter.clone(),
                };
                now.insert(k, v);
            }
        };
        // Rounds a-c in the bottom level (folded there into one value per key).
        for r in 0..3 {
            round(&db, &mut now, r);
            db.flush().unwrap();
        }
        db.compact_range(None, None).unwrap();
        // Rounds d-g in four L0 files, which an automatic compaction merges into L1
        // while snapshot "e" holds the chains apart.
        for r in 3..7 {
            round(&db, &mut now, r);
            db.flush().unwrap();
            if r == 4 {
                snaps.push(("snapshot after e", db.snapshot(), now.clone()));
            }
        }
        db.wait_for_compactions().unwrap();
        // Rounds h-i in two L0 files, a snapshot between them.
        round(&db, &mut now, 7);
        db.flush().unwrap();
        snaps.push(("snapshot after h", db.snapshot(), now.clone()));
        round(&db, &mut now, 8);
        db.flush().unwrap();
        // Rounds j-k in the memtable, a snapshot between them.
        round(&db, &mut now, 9);
        snaps.push(("snapshot after j", db.snapshot(), now.clone()));
        round(&db, &mut now, 10);
        let (l0, deeper) = l0_and_deeper_files(&db);
        assert!(
            l0 >= 2 && deeper >= 1,
            "{name}: {l0} L0 files, {deeper} deeper"
        );

        // The exact strings, spelled out for one key of each kind.
        assert_eq!(now[&key(0)], "base,a,b,c,d,e,f,g,h,i,j,k");
        assert_eq!(now[&key(1)], "e,f,g,h,i,j,k");
        assert_eq!(now[&key(2)], "a,b,c,d,e,f,g,h,i,j,k");
        assert_eq!(now[&key(3)], "reset,f,g,h,i,j,k");
        assert_eq!(snaps[0].2[&key(1)], "e");
        assert_eq!(snaps[0].2[&key(3)], "a,b,c,d,e");
        assert_eq!(snaps[2].2[&key(0)], "base,a,b,c,d,e,f,g,h,i,j");

        check_appends(&db, &now, &snaps, &format!("{name}, spread out"));
        db.flush().unwrap();
        check_appends(&db, &now, &snaps, &format!("{name}, flushed"));
        db.compact_range(None, None).unwrap();
        check_appends(&db, &now, &snaps, &format!("{name}, compacted"));
        // Released one by one, oldest first: each compaction folds across the stripe
        // boundary the snapshot held.
        while !snaps.is_empty() {
            snaps.remove(0);
            db.compact_range(None, None).unwrap();
            let ctx = format!("{name}, compacted with {} snapshots", snaps.len());
            check_appends(&db, &now, &snaps, &ctx);
        }
        db.close().unwrap();

        let db = Db::open(dir.path(), opts.clone()).unwrap();
        check_appends(&db, &now, &[], &format!("{name}, reopened"));
        // Chains grow on the folded values: a table of round l over round k's values,
        // round m in the memtable.
        round(&db, &mut now, 11);
        db.flush().unwrap();
        round(&db, &mut now, 12);
        assert_eq!(now[&key(1)], "e,f,g,h,i,j,k,l,m");
        check_appends(&db, &now, &[], &format!("{name}, reopened and merged"));
        db.compact_range(None, None).unwrap();
        check_appends(&db, &now, &[], &format!("{name}, reopened and compacted"));
        db.close().unwrap();
        let db = Db::open(dir.path(), opts).unwrap();
        check_appends(&db, &now, &[], &format!("{name}, reopened twice"));
        db.close().unwrap();
    }
}

/// One key's chain, spelled out: `a` put and `b` merged in the bottom level, `c` and
/// `d` in L0 files, `e` and `f` in the memtable, with snapshots after `c` and after
/// `e`. A second key is deleted between `x` (in a table) and `y`, `z`; a third has
/// operands only, one per place. Every read gives the values in write order, at each
/// snapshot too, after a flush, a compaction with the snapshots held, and a reopen.
#[test]
fn a_snapshot_inside_an_append_chain_reads_its_prefix_in_order() {
    for (name, op) in appends() {
        let dir = tempfile::tempdir().unwrap();
        let opts = tiny_options().with_merge_operator(Some(op));
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        db.put(&wo(), b"chain", b"a").unwrap();
        db.merge(&wo(), b"chain", b"b").unwrap();
        db.merge(&wo(), b"deleted", b"x").unwrap();
        db.merge(&wo(), b"operands", b"1").unwrap();
        db.compact_range(None, None).unwrap();
        db.merge(&wo(), b"chain", b"c").unwrap();
        db.delete(&wo(), b"deleted").unwrap();
        db.merge(&wo(), b"operands", b"2").unwrap();
        db.flush().unwrap();
        let at_c = db.snapshot();
        db.merge(&wo(), b"chain", b"d").unwrap();
        db.merge(&wo(), b"deleted", b"y").unwrap();
        db.merge(&wo(), b"operands", b"3").unwrap();
        db.flush().unwrap();
        db.merge(&wo(), b"chain", b"e").unwrap();
        db.merge(&wo(), b"operands", b"4").unwrap();
        let at_e = db.snapshot();
        db.merge(&wo(), b"chain", b"f").unwrap();
        db.merge(&wo(), b"deleted", b"z").unwrap();
        db.merge(&wo(), b"operands", b"5").unwrap();

        let expect = |pairs: &[(&str, &str)]| -> Expected {
            pairs
                .iter()
                .map(|(k, v)| (k.as_bytes().to_vec(), v.to_string()))
                .collect()
        };
        let now = expect(&[
            ("chain", "a,b,c,d,e,f"),
            ("deleted", "y,z"),
            ("operands", "1,2,3,4,5"),
        ]);
        let snaps = vec![
            (
                "snapshot after c",
                at_c,
                expect(&[("chain", "a,b,c"), ("operands", "1,2")]),
            ),
            (
                "snapshot after e",
                at_e,
                expect(&[
                    ("chain", "a,b,c,d,e"),
                    ("deleted", "y"),
                    ("operands", "1,2,3,4"),
                ]),
            ),
        ];
        check_appends(&db, &now, &snaps, &format!("{name}, spread out"));
        db.flush().unwrap();
        check_appends(&db, &now, &snaps, &format!("{name}, flushed"));
        db.compact_range(None, None).unwrap();
        check_appends(&db, &now, &snaps, &format!("{name}, compacted"));
        drop(snaps);
        db.compact_range(None, None).unwrap();
        check_appends(&db, &now, &[], &format!("{name}, compacted unpinned"));
        db.close().unwrap();
        let db = Db::open(dir.path(), opts).unwrap();
        check_appends(&db, &now, &[], &format!("{name}, reopened"));
        db.close().unwrap();
    }
}
