//! Protects: values with deadlines (`Options::expiring_values`, `Db::put_with_ttl`,
//! docs/ARCHITECTURE.md §7.9). Reads never return an expired value (gets, multi_get,
//! iterators in both directions with bounds, transactions), an expired newest value
//! hides the key's older ones, plain puts never expire, the trailer never reaches a
//! reader, compactions remove exactly the expired values no snapshot can see (alone
//! and in front of an application's filter), the layout survives WAL replay and
//! reopens, and every misuse (a deadline for a family without the layout, the layout
//! turned on for old data, a merge operator beside it, a value over the limit once
//! its trailer is added) is refused with nothing written. The layout is held by the
//! MANIFEST (a lost or older OPTIONS file neither loses it nor lets it turn on for
//! plain data); tables in such a database, random iterator moves against a model,
//! checkpoints, read-only and secondary opens with plain options, and an older version
//! never coming back after a snapshot goes.

mod common;

use common::{key, tiny_options};
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use strata::compaction_filter::{self, CompactionFilter, Decision};
use strata::table::{Layout, Schema, Table, Value};
use strata::{
    CfOptions, Db, DbIterator, ErrorKind, Options, ReadOptions, TransactionOptions, WriteBatch,
    WriteOptions,
};

const LONG: Duration = Duration::from_secs(3600);
const GONE: Duration = Duration::ZERO;

fn options() -> Options {
    tiny_options()
        .with_merge_operator(None)
        .with_expiring_values(true)
}

fn plain() -> Options {
    tiny_options().with_merge_operator(None)
}

fn w() -> WriteOptions {
    WriteOptions::default()
}

fn r() -> ReadOptions {
    ReadOptions::default()
}

fn forward(mut it: DbIterator) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    out
}

fn backward(mut it: DbIterator) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    it.seek_to_last();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().unwrap();
    out.reverse();
    out
}

/// Every read path against `want` (the live keys and values) over keys `0..n`.
fn check(db: &Db, want: &BTreeMap<Vec<u8>, Vec<u8>>, n: u32, ctx: &str) {
    let all: Vec<_> = want.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(forward(db.iter(&r()).unwrap()), all, "{ctx}: forward scan");
    assert_eq!(
        backward(db.iter(&r()).unwrap()),
        all,
        "{ctx}: backward scan"
    );
    let keys: Vec<Vec<u8>> = (0..n).map(key).collect();
    let got = db.multi_get(&r(), &keys);
    for (k, g) in keys.iter().zip(got) {
        assert_eq!(g.unwrap(), want.get(k).cloned(), "{ctx}: multi_get {k:?}");
        assert_eq!(
            db.get(&r(), k).unwrap(),
            want.get(k).cloned(),
            "{ctx}: get {k:?}"
        );
        // Seeks land on the first live key at or after (before) the target, stepping
        // over expired ones in the seek's direction.
        let mut it = db.iter(&r()).unwrap();
        it.seek(k);
        let next = want.range(k.clone()..).next();
        assert_eq!(
            it.valid().then(|| it.key().to_vec()),
            next.map(|(k, _)| k.clone()),
            "{ctx}: seek {k:?}"
        );
        it.seek_for_prev(k);
        let prev = want.range(..=k.clone()).next_back();
        assert_eq!(
            it.valid().then(|| it.key().to_vec()),
            prev.map(|(k, _)| k.clone()),
            "{ctx}: seek_for_prev {k:?}"
        );
    }
    // Bounds, and direction changes across expired keys.
    let lower = key(n / 4);
    let upper = key(3 * n / 4);
    let bounded = r()
        .with_lower_bound(Some(lower.clone()))
        .with_upper_bound(Some(upper.clone()));
    let inside: Vec<_> = want
        .range(lower..upper)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(
        forward(db.iter(&bounded).unwrap()),
        inside,
        "{ctx}: bounded"
    );
    assert_eq!(
        backward(db.iter(&bounded).unwrap()),
        inside,
        "{ctx}: bounded back"
    );
    let mut it = db.iter(&r()).unwrap();
    it.seek_to_first();
    let mut zigzag = Vec::new();
    while it.valid() {
        zigzag.push(it.key().to_vec());
        it.next();
        if it.valid() {
            it.prev();
            assert_eq!(
                it.key(),
                zigzag.last().unwrap().as_slice(),
                "{ctx}: next/prev"
            );
            it.next();
        }
    }
    assert_eq!(
        zigzag,
        want.keys().cloned().collect::<Vec<_>>(),
        "{ctx}: zigzag"
    );
}

/// Keys `0..n`: every third expired at once, every third with a long deadline, the
/// rest plain; a fifth of the keys had an older plain value first.
fn fill(db: &Db, n: u32) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut want = BTreeMap::new();
    for i in 0..n {
        let k = key(i);
        if i % 5 == 0 {
            db.put(&w(), &k, b"older").unwrap();
        }
        let v = format!("value-{i}").into_bytes();
        match i % 3 {
            0 => db.put_with_ttl(&w(), &k, &v, GONE).unwrap(),
            1 => {
                db.put_with_ttl(&w(), &k, &v, LONG).unwrap();
                want.insert(k, v);
            }
            _ => {
                db.put(&w(), &k, &v).unwrap();
                want.insert(k, v);
            }
        }
    }
    want
}

#[test]
fn reads_never_see_expired_values_in_memtables_tables_or_after_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let n = 600;
    let want = fill(&db, n);
    check(&db, &want, n, "memtables and L0");
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    check(&db, &want, n, "after flushes");
    let before = db.stats().counters.compaction_filter_removed;
    db.compact_range(None, None).unwrap();
    check(&db, &want, n, "compacted");
    // Every expired value that reached the full compaction went (earlier automatic
    // compactions removed some already); none is left in the tables.
    let removed = db.stats().counters.compaction_filter_removed;
    assert_eq!(
        removed,
        u64::from(n).div_ceil(3),
        "removed ({before} before)"
    );
    db.close().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    check(&db, &want, n, "reopened");
}

#[test]
fn values_expire_by_the_clock() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    db.put_with_ttl(&w(), b"a", b"soon", Duration::from_millis(300))
        .unwrap();
    db.put(&w(), b"b", b"forever").unwrap();
    let snapshot = db.snapshot();
    let it = db.iter(&r()).unwrap();
    assert_eq!(db.get(&r(), b"a").unwrap(), Some(b"soon".to_vec()));
    std::thread::sleep(Duration::from_millis(400));
    // An iterator reads by the clock it was made with; new reads by theirs, a
    // snapshot's included.
    assert_eq!(forward(it).len(), 2);
    assert_eq!(db.get(&r(), b"a").unwrap(), None);
    let at = r().with_snapshot(snapshot);
    assert_eq!(db.get(&at, b"a").unwrap(), None);
    assert_eq!(
        forward(db.iter(&r()).unwrap()),
        vec![(b"b".to_vec(), b"forever".to_vec())]
    );
}

#[test]
fn compaction_keeps_what_a_snapshot_can_see() {
    let dir = tempfile::tempdir().unwrap();
    // One memtable: no compaction runs before the snapshot is taken.
    let db = Db::open(dir.path(), options().with_write_buffer_size(1 << 20)).unwrap();
    for i in 0..100 {
        db.put_with_ttl(&w(), &key(i), b"v", GONE).unwrap();
    }
    let snapshot = db.snapshot();
    db.compact_range(None, None).unwrap();
    assert_eq!(db.stats().counters.compaction_filter_removed, 0);
    drop(snapshot);
    db.compact_range(None, None).unwrap();
    assert_eq!(db.stats().counters.compaction_filter_removed, 100);
    assert_eq!(db.stats().levels.iter().map(|l| l.files).sum::<usize>(), 0);
}

/// Upper-cases every value it sees.
struct Upper;

impl CompactionFilter for Upper {
    fn filter(&mut self, _key: &[u8], value: &[u8]) -> Decision {
        Decision::Change(value.to_ascii_uppercase())
    }
}

#[test]
fn an_applications_filter_sees_values_without_deadlines_and_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let factory = compaction_filter::factory("upper", |_| Some(Box::new(Upper)));
    let opts = options().with_compaction_filter_factory(Some(factory));
    let db = Db::open(dir.path(), opts).unwrap();
    db.put_with_ttl(&w(), b"a", b"short", Duration::from_millis(500))
        .unwrap();
    db.put_with_ttl(&w(), b"b", b"long", LONG).unwrap();
    db.put_with_ttl(&w(), b"c", b"gone", GONE).unwrap();
    db.put(&w(), b"d", b"plain").unwrap();
    db.compact_range(None, None).unwrap();
    let c = db.stats().counters;
    assert_eq!(
        (c.compaction_filter_removed, c.compaction_filter_changed),
        (1, 3)
    );
    let got = forward(db.iter(&r()).unwrap());
    let want: Vec<(Vec<u8>, Vec<u8>)> = vec![
        (b"a".to_vec(), b"SHORT".to_vec()),
        (b"b".to_vec(), b"LONG".to_vec()),
        (b"d".to_vec(), b"PLAIN".to_vec()),
    ];
    assert_eq!(got, want);
    // The changed value kept its deadline.
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(db.get(&r(), b"a").unwrap(), None);
    assert_eq!(db.get(&r(), b"b").unwrap(), Some(b"LONG".to_vec()));
}

#[test]
fn the_wal_replays_deadlines() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options().with_write_buffer_size(1 << 20);
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    db.put_with_ttl(&w(), b"a", b"1", GONE).unwrap();
    db.put_with_ttl(&w(), b"b", b"2", LONG).unwrap();
    db.put(&w(), b"c", b"3").unwrap();
    drop(db); // no flush: the values live in the WAL only
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(
        forward(db.iter(&r()).unwrap()),
        vec![
            (b"b".to_vec(), b"2".to_vec()),
            (b"c".to_vec(), b"3".to_vec())
        ]
    );
}

#[test]
fn families_batches_and_transactions() {
    let dir = tempfile::tempdir().unwrap();
    let plain = tiny_options().with_merge_operator(None);
    let db = Db::open(dir.path(), plain.clone()).unwrap();
    let cf = db
        .create_cf("sessions", CfOptions::default().with_expiring_values(true))
        .unwrap();
    // One atomic batch over both families.
    let mut b = WriteBatch::new();
    b.put(b"user", b"u");
    b.put_with_ttl_cf(&cf, b"s1", b"live", LONG);
    b.put_with_ttl_cf(&cf, b"s2", b"dead", GONE);
    b.put_cf(&cf, b"s3", b"plain");
    db.write(&w(), b).unwrap();
    assert_eq!(db.get(&r(), b"user").unwrap(), Some(b"u".to_vec()));
    assert_eq!(db.get_cf(&r(), &cf, b"s1").unwrap(), Some(b"live".to_vec()));
    assert_eq!(db.get_cf(&r(), &cf, b"s2").unwrap(), None);
    // A transaction reads through the layout and commits plain puts into it.
    let mut txn = db.transaction(&TransactionOptions::default());
    assert_eq!(
        txn.get_for_update_cf(&r(), &cf, b"s1").unwrap(),
        Some(b"live".to_vec())
    );
    assert_eq!(txn.get_cf(&r(), &cf, b"s2").unwrap(), None);
    txn.put_cf(&cf, b"s4", b"txn").unwrap();
    txn.commit(&w()).unwrap();
    assert_eq!(db.get_cf(&r(), &cf, b"s4").unwrap(), Some(b"txn".to_vec()));

    // A deadline for the plain default family is refused, and nothing is written.
    let seq = db.latest_sequence();
    let mut b = WriteBatch::new();
    b.put_cf(&cf, b"s5", b"x");
    b.put_with_ttl(b"user", b"v", LONG);
    let e = db.write(&w(), b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("`default`"), "{e}");
    assert_eq!(db.latest_sequence(), seq);
    assert_eq!(db.get_cf(&r(), &cf, b"s5").unwrap(), None);
    let e = db.put_with_ttl(&w(), b"user", b"v", LONG).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);

    // Reopened without listing the family, it keeps its layout (recorded in OPTIONS).
    db.close().unwrap();
    let db = Db::open(dir.path(), plain).unwrap();
    let cf = db.cf("sessions").unwrap();
    assert_eq!(
        forward(db.iter_cf(&r(), &cf).unwrap()),
        vec![
            (b"s1".to_vec(), b"live".to_vec()),
            (b"s3".to_vec(), b"plain".to_vec()),
            (b"s4".to_vec(), b"txn".to_vec()),
        ]
    );
    db.put_with_ttl_cf(&w(), &cf, b"s6", b"x", GONE).unwrap();
    assert_eq!(db.get_cf(&r(), &cf, b"s6").unwrap(), None);
    // Listed with options that leave it out, it keeps it too.
    db.close().unwrap();
    let listed = [("sessions", CfOptions::default())];
    let db = Db::open_cf(
        dir.path(),
        tiny_options().with_merge_operator(None),
        &listed,
    )
    .unwrap();
    let cf = db.cf("sessions").unwrap();
    assert_eq!(db.get_cf(&r(), &cf, b"s1").unwrap(), Some(b"live".to_vec()));
    // ... and listed with it on, a plain family is refused, naming both.
    db.close().unwrap();
    let db = Db::open(dir.path(), options().with_expiring_values(false)).unwrap();
    // The open that listed it without the layout recorded the layout again.
    let cf = db.cf("sessions").unwrap();
    assert_eq!(db.get_cf(&r(), &cf, b"s1").unwrap(), Some(b"live".to_vec()));
    db.create_cf("plain", CfOptions::default()).unwrap();
    db.close().unwrap();
    let listed = [("plain", CfOptions::default().with_expiring_values(true))];
    let e = Db::open_cf(
        dir.path(),
        tiny_options().with_merge_operator(None),
        &listed,
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("`plain`: expiring_values"), "{e}");
}

#[test]
fn the_layout_is_chosen_at_creation() {
    let dir = tempfile::tempdir().unwrap();
    let plain = tiny_options().with_merge_operator(None);
    let db = Db::open(dir.path(), plain.clone()).unwrap();
    db.put(&w(), b"k", b"v").unwrap();
    db.close().unwrap();
    // Turning it on would read the last 8 bytes of old values as deadlines.
    let e = Db::open(dir.path(), options()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("expiring_values"), "{e}");

    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    db.put(&w(), b"k", b"v").unwrap();
    db.close().unwrap();
    // Opened without it, the database keeps it.
    let db = Db::open(dir.path(), plain).unwrap();
    assert_eq!(db.get(&r(), b"k").unwrap(), Some(b"v".to_vec()));
    db.put_with_ttl(&w(), b"t", b"v", GONE).unwrap();
    assert_eq!(db.get(&r(), b"t").unwrap(), None);
}

#[test]
fn misuse_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let e = Db::open(
        dir.path(),
        options().with_merge_operator(Some(Arc::new(strata::merge::U64Add))),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("expiring_values"), "{e}");
    let db = Db::open(dir.path(), options()).unwrap();
    let seq = db.latest_sequence();
    let big = vec![7u8; strata::MAX_VALUE_LEN];
    let e = db.put(&w(), b"k", &big).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(db.latest_sequence(), seq);
    let e = db.merge(&w(), b"k", b"1").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    db.close().unwrap();
    // Reopened with an operator, the recorded layout refuses it.
    let e = Db::open(
        dir.path(),
        tiny_options().with_merge_operator(Some(Arc::new(strata::merge::U64Add))),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("merge_operator"), "{e}");
    let db = Db::open(dir.path(), options()).unwrap();
    let e = db
        .create_cf(
            "m",
            CfOptions::default()
                .with_expiring_values(true)
                .with_merge_operator(Some(Arc::new(strata::merge::U64Add))),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

/// A database whose OPTIONS file is missing (deleted, lost in a copy, never written by
/// the tool that made it) keeps its layout: the MANIFEST's record holds it, so a plain
/// open (read-only, and read-write) reads values without their trailer, and expired
/// ones not at all.
#[test]
fn a_missing_options_file_does_not_lose_the_layout() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), options()).unwrap();
        db.put_with_ttl(&w(), b"k", b"value", LONG).unwrap();
        db.put_with_ttl(&w(), b"x", b"gone", GONE).unwrap();
        db.put(&w(), b"p", b"plain").unwrap();
        db.flush().unwrap();
        db.close().unwrap();
    }
    std::fs::remove_file(dir.path().join("OPTIONS")).unwrap();
    let db = Db::open_read_only(dir.path(), plain()).unwrap();
    assert_eq!(db.get(&r(), b"p").unwrap().as_deref(), Some(&b"plain"[..]));
    assert_eq!(db.get(&r(), b"k").unwrap().as_deref(), Some(&b"value"[..]));
    assert_eq!(db.get(&r(), b"x").unwrap(), None);
    drop(db);
    let db = Db::open(dir.path(), plain()).unwrap();
    db.put(&w(), b"q", b"written after").unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), plain()).unwrap();
    assert_eq!(
        db.get(&r(), b"q").unwrap().as_deref(),
        Some(&b"written after"[..])
    );
}

/// An OPTIONS file from an older writer (the `Options { .. }` debug dump, which
/// `options_file::load` reads as nothing recorded) does not let the layout be turned
/// on for data written without deadlines: the MANIFEST has no layout record.
#[test]
fn an_older_options_file_does_not_let_the_layout_turn_on_for_plain_data() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), plain()).unwrap();
        db.put(&w(), b"k", b"0123456789abcdef").unwrap();
        db.flush().unwrap();
        db.close().unwrap();
    }
    std::fs::write(dir.path().join("OPTIONS"), "Options { }\n").unwrap();
    let e = Db::open(dir.path(), options()).unwrap_err();
    assert_eq!(e.kind(), strata::ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("created without it"), "{e}");
    let db = Db::open(dir.path(), plain()).unwrap();
    assert_eq!(
        db.get(&r(), b"k").unwrap().as_deref(),
        Some(&b"0123456789abcdef"[..])
    );
}

/// A table in a database with deadlines: its family takes the database's per-tree
/// options but not the layout (rows are merged).
#[test]
fn a_table_in_a_database_with_deadlines() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let schema = Schema::parse("id:u64,a:i32,c:bytes").unwrap();
    match Table::create(&db, "t", schema, Layout::row()) {
        Err(e) => panic!("Table::create in a database with expiring_values: {e}"),
        Ok(t) => {
            t.insert(
                &w(),
                &Value::U64(1),
                &[Value::I32(7), Value::Bytes(b"xyz".to_vec())],
            )
            .unwrap();
            let got = t.get(&r(), &Value::U64(1), &[0, 1]).unwrap();
            assert!(got.is_some(), "the row reads back");
        }
    }
}

/// What a key holds in the model: `None` an expired newest value (the key is hidden).
type Model = BTreeMap<Vec<u8>, Option<Vec<u8>>>;

fn visible(m: &Model, lo: &[u8], hi: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    m.iter()
        .filter(|(k, v)| v.is_some() && k.as_slice() >= lo && k.as_slice() < hi)
        .map(|(k, v)| (k.clone(), v.clone().unwrap()))
        .collect()
}

fn at(it: &DbIterator) -> Option<(Vec<u8>, Vec<u8>)> {
    it.status().unwrap();
    it.valid().then(|| (it.key().to_vec(), it.value().to_vec()))
}

/// Random moves (seeks both ways, next/prev, direction changes) with bounds
/// over keys with older versions in deeper levels, expired/live/plain newest values,
/// runs of expired keys at both ends, against a model.
#[test]
fn random_iterator_moves_match_a_model() {
    for seed in 0..12u64 {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), options()).unwrap();
        let n = 60u32;
        let mut m: Model = BTreeMap::new();
        for round in 0..4 {
            for i in 0..n {
                if rng.random_bool(0.5) {
                    continue;
                }
                let k = key(i);
                let v = format!("v{round}-{i}").into_bytes();
                match rng.random_range(0..4) {
                    0 => {
                        db.put(&w(), &k, &v).unwrap();
                        m.insert(k, Some(v));
                    }
                    1 => {
                        db.put_with_ttl(&w(), &k, &v, LONG).unwrap();
                        m.insert(k, Some(v));
                    }
                    2 => {
                        db.put_with_ttl(&w(), &k, &v, GONE).unwrap();
                        m.insert(k, None);
                    }
                    _ => {
                        db.delete(&w(), &k).unwrap();
                        m.remove(&k);
                    }
                }
            }
            // Expired runs at both ends.
            if round == 3 {
                for i in (0..5).chain(n - 5..n) {
                    db.put_with_ttl(&w(), &key(i), b"x", GONE).unwrap();
                    m.insert(key(i), None);
                }
            }
            if round < 2 {
                db.flush().unwrap();
                if round == 0 {
                    db.compact_range(None, None).unwrap();
                }
            }
        }
        let lo_i = rng.random_range(0..n / 2);
        let hi_i = rng.random_range(n / 2..n + 2);
        let (lo, hi) = (key(lo_i), key(hi_i));
        let want = visible(&m, &lo, &hi);
        let ro = r()
            .with_lower_bound(Some(lo.clone()))
            .with_upper_bound(Some(hi.clone()));
        let mut it = db.iter(&ro).unwrap();
        let mut pos: Option<usize> = None;
        for step in 0..400 {
            let op = rng.random_range(0..6);
            let t = key(rng.random_range(0..n + 2));
            match op {
                0 => {
                    it.seek(&t);
                    let t2 = std::cmp::max(t.clone(), lo.clone());
                    pos = want.iter().position(|(k, _)| *k >= t2);
                }
                1 => {
                    it.seek_for_prev(&t);
                    pos = want.iter().rposition(|(k, _)| *k <= t);
                }
                2 => {
                    it.seek_to_first();
                    pos = (!want.is_empty()).then_some(0);
                }
                3 => {
                    it.seek_to_last();
                    pos = want.len().checked_sub(1);
                }
                4 if pos.is_some() => {
                    it.next();
                    pos = pos.map(|p| p + 1).filter(|&p| p < want.len());
                }
                5 if pos.is_some() => {
                    it.prev();
                    pos = pos.and_then(|p| p.checked_sub(1));
                }
                _ => continue,
            }
            let expect = pos.map(|p| want[p].clone());
            assert_eq!(
                at(&it),
                expect,
                "seed {seed} step {step} op {op} target {:?} bounds {:?}..{:?}",
                String::from_utf8_lossy(&t),
                String::from_utf8_lossy(&lo),
                String::from_utf8_lossy(&hi)
            );
        }
        // Point reads and a transaction's iterator over the same model.
        for i in 0..n {
            let k = key(i);
            assert_eq!(
                db.get(&r(), &k).unwrap(),
                m.get(&k).cloned().flatten(),
                "get {i}"
            );
        }
        let txn = db.transaction(&TransactionOptions::default());
        let mut ti = txn.iter(&r()).unwrap();
        ti.seek_to_last();
        let mut back = Vec::new();
        while ti.valid() {
            back.push((ti.key().to_vec(), ti.value().to_vec()));
            ti.prev();
        }
        back.reverse();
        assert_eq!(back, visible(&m, b"", b"\xff"), "seed {seed}: txn backward");
    }
}

/// A checkpoint, and read-only opens of it with plain options.
#[test]
fn checkpoint_and_read_only_open_with_plain_options() {
    let dir = tempfile::tempdir().unwrap();
    let cp = tempfile::tempdir().unwrap();
    let cpdir = cp.path().join("cp");
    let db = Db::open(dir.path(), options()).unwrap();
    db.put_with_ttl(&w(), b"a", b"live", LONG).unwrap();
    db.put_with_ttl(&w(), b"b", b"dead", GONE).unwrap();
    db.put(&w(), b"c", b"plain").unwrap();
    db.checkpoint(&cpdir).unwrap();
    for ro_open in [true, false] {
        let c = if ro_open {
            Db::open_read_only(&cpdir, plain()).unwrap()
        } else {
            Db::open(&cpdir, plain()).unwrap()
        };
        assert_eq!(c.get(&r(), b"a").unwrap().as_deref(), Some(&b"live"[..]));
        assert_eq!(c.get(&r(), b"b").unwrap(), None);
        assert_eq!(c.get(&r(), b"c").unwrap().as_deref(), Some(&b"plain"[..]));
        drop(c);
    }
}

/// Read-only opens (WAL replayed into memory) and `open_cf_read_only`
/// listing a family with the layout under plain options.
#[test]
fn read_only_opens_with_plain_options_and_a_wal() {
    use strata::CfOptions;
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), plain()).unwrap();
    let cf = db
        .create_cf("ttl", CfOptions::default().with_expiring_values(true))
        .unwrap();
    db.put_with_ttl_cf(&w(), &cf, b"a", b"live", LONG).unwrap();
    db.put_with_ttl_cf(&w(), &cf, b"b", b"dead", GONE).unwrap();
    db.put_cf(&w(), &cf, b"c", b"plain").unwrap();
    // Still open: the values are only in the WAL.
    let ro = Db::builder()
        .open_cf_read_only(dir.path(), plain(), &[("ttl", CfOptions::default())])
        .unwrap();
    let rcf = ro.cf("ttl").unwrap();
    assert_eq!(
        ro.get_cf(&r(), &rcf, b"a").unwrap().as_deref(),
        Some(&b"live"[..])
    );
    assert_eq!(ro.get_cf(&r(), &rcf, b"b").unwrap(), None);
    assert_eq!(
        ro.get_cf(&r(), &rcf, b"c").unwrap().as_deref(),
        Some(&b"plain"[..])
    );
    let mut it = ro.iter_cf(&r(), &rcf).unwrap();
    it.seek_to_last();
    assert_eq!(at(&it), Some((b"c".to_vec(), b"plain".to_vec())));
    it.prev();
    assert_eq!(at(&it), Some((b"a".to_vec(), b"live".to_vec())));
    it.prev();
    assert_eq!(at(&it), None);
}

/// An older plain version under a snapshot, an expired newer one; after the
/// snapshot goes, compactions at every depth must not bring the older one back.
#[test]
fn an_older_version_does_not_come_back_after_the_snapshot_goes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for i in 0..50 {
        db.put(&w(), &key(i), b"old").unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    let snap = db.snapshot();
    for i in 0..50 {
        db.put_with_ttl(&w(), &key(i), b"new", GONE).unwrap();
    }
    db.flush().unwrap();
    let ro_snap = r().with_snapshot(snap.clone());
    db.compact_range(None, None).unwrap();
    assert_eq!(
        db.get(&ro_snap, &key(3)).unwrap().as_deref(),
        Some(&b"old"[..])
    );
    assert_eq!(db.get(&r(), &key(3)).unwrap(), None);
    drop(ro_snap);
    drop(snap);
    // Only the expired versions' level gets compacted first, then everything.
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    db.compact_range(None, None).unwrap();
    for i in 0..50 {
        assert_eq!(db.get(&r(), &key(i)).unwrap(), None, "key {i} came back");
    }
    let mut it = db.iter(&r()).unwrap();
    it.seek_to_first();
    assert_eq!(at(&it), None);
}

/// A family with the layout that the writer creates after a secondary opened reaches
/// the secondary at its next catch-up with the layout (configured as at an open): its
/// values come without their trailer, expired ones not at all.
#[test]
fn a_secondary_follows_a_family_with_the_layout() {
    let dir = tempfile::tempdir().unwrap();
    let sec_dir = tempfile::tempdir().unwrap();
    let writer = Db::open(dir.path(), plain()).unwrap();
    writer.put(&w(), b"d", b"default").unwrap();
    let secondary = Db::open_secondary(dir.path(), sec_dir.path(), plain()).unwrap();
    let cf = writer
        .create_cf("s", strata::CfOptions::default().with_expiring_values(true))
        .unwrap();
    writer
        .put_with_ttl_cf(&w(), &cf, b"k", b"live", LONG)
        .unwrap();
    writer
        .put_with_ttl_cf(&w(), &cf, b"x", b"gone", GONE)
        .unwrap();
    writer.put_cf(&w(), &cf, b"p", b"plain").unwrap();
    writer.flush_cf(&cf).unwrap();
    writer.put_cf(&w(), &cf, b"q", b"in the wal").unwrap();
    // Without the OPTIONS file's copy, only the MANIFEST's record tells.
    std::fs::remove_file(dir.path().join("OPTIONS")).unwrap();
    secondary.try_catch_up().unwrap();
    let scf = secondary.cf("s").expect("the family reached the secondary");
    assert_eq!(
        secondary.get_cf(&r(), &scf, b"k").unwrap().as_deref(),
        Some(&b"live"[..])
    );
    assert_eq!(secondary.get_cf(&r(), &scf, b"x").unwrap(), None);
    assert_eq!(
        secondary.get_cf(&r(), &scf, b"p").unwrap().as_deref(),
        Some(&b"plain"[..])
    );
    assert_eq!(
        secondary.get_cf(&r(), &scf, b"q").unwrap().as_deref(),
        Some(&b"in the wal"[..])
    );
}
