//! The conflict rule of optimistic transactions (docs/ARCHITECTURE.md §16): a commit
//! fails with `Conflict` iff a key the transaction wrote, or read with
//! `get_for_update`, has a version (a put, a delete, a merge operand, a range deletion
//! covering it) committed after its snapshot, wherever that version
//! lives by the time of the commit: the active memtable, an immutable memtable, an L0
//! table or a deeper level. What it protects: a check limited to memtables (RocksDB's,
//! which answers `TryAgain` once the history is flushed) or to some of the sources
//! would let a lost update through; a check that looked at versions older than the
//! snapshot would refuse commits it must accept.

use std::sync::Arc;
use strata::env::{FaultFs, FaultKinds, FaultRule};
use strata::{
    Db, Error, ErrorKind, Options, ReadOptions, Transaction, TransactionOptions, WriteOptions,
};

/// Where the concurrent write sits when the transaction commits.
#[derive(Clone, Copy, Debug)]
enum Place {
    Memtable,
    Immutable,
    L0,
    Deeper,
}

const PLACES: [Place; 4] = [Place::Memtable, Place::Immutable, Place::L0, Place::Deeper];

fn open(fs: &FaultFs) -> Db {
    // Flushed tables stay in L0 unless a test compacts them.
    let opts = Options::default()
        .with_merge_operator(Some(Arc::new(strata::merge::Append::new(b","))))
        .with_level0_file_num_compaction_trigger(100)
        .with_level0_slowdown_writes_trigger(100)
        .with_level0_stop_writes_trigger(100);
    Db::builder()
        .file_system(Arc::new(fs.clone()))
        .open("/db", opts)
        .expect("open")
}

fn wo() -> WriteOptions {
    WriteOptions::default()
}

fn ro() -> ReadOptions {
    ReadOptions::default()
}

/// Moves everything written so far to `place`, and checks it got there.
fn move_to(db: &Db, fs: &FaultFs, place: Place) {
    let files = |db: &Db| -> Vec<usize> { db.stats().levels.iter().map(|l| l.files).collect() };
    match place {
        Place::Memtable => {}
        Place::Immutable => {
            // Table files cannot be created: the switched memtable stays immutable.
            fs.inject(FaultRule::sticky(FaultKinds::CREATE, 0).on_path(".sst"));
            let before = files(db);
            let err = db.flush().expect_err("flushes fail");
            assert!(err.is_retryable(), "{err}");
            assert_eq!(files(db), before, "nothing was flushed");
        }
        Place::L0 => {
            db.flush().expect("flush");
            assert!(files(db)[0] > 0, "{:?}", files(db));
        }
        Place::Deeper => {
            db.compact_range(None, None).expect("compact");
            let f = files(db);
            assert_eq!(f[0], 0, "{f:?}");
            assert!(f[1..].iter().any(|&n| n > 0), "{f:?}");
        }
    }
}

fn assert_conflict(result: strata::Result<()>, key: &[u8], ctx: Place) {
    let Err(err) = result else {
        panic!("{ctx:?}: the commit succeeded, a conflict was missed")
    };
    assert_eq!(err.kind(), ErrorKind::Conflict, "{ctx:?}: {err}");
    match err {
        Error::Conflict {
            key: k,
            snapshot,
            committed,
        } => {
            assert_eq!(k, key, "{ctx:?}");
            assert!(committed > snapshot, "{ctx:?}: {committed} <= {snapshot}");
        }
        other => panic!("{ctx:?}: {other}"),
    }
}

/// Runs `case` once per place, each time on a fresh database; `case` gets the place,
/// the database, and a function that moves everything written so far to the place.
fn in_every_place(case: impl Fn(Place, &Db, &dyn Fn())) {
    for place in PLACES {
        let fs = FaultFs::new();
        let db = open(&fs);
        case(place, &db, &|| move_to(&db, &fs, place));
        fs.clear_faults();
    }
}

fn begin(db: &Db) -> Transaction<'_> {
    db.transaction(&TransactionOptions::default())
}

#[test]
fn a_write_after_the_snapshot_conflicts_wherever_it_lives() {
    in_every_place(|place, db, move_writes| {
        db.put(&wo(), b"k", b"before").unwrap();
        let mut txn = begin(db);
        assert_eq!(txn.get(&ro(), b"k").unwrap(), Some(b"before".to_vec()));
        txn.put(b"k", b"txn").unwrap();
        db.put(&wo(), b"k", b"concurrent").unwrap();
        move_writes();
        assert_eq!(txn.get(&ro(), b"k").unwrap(), Some(b"txn".to_vec()));
        assert_conflict(txn.commit(&wo()), b"k", place);
        assert_eq!(db.get(&ro(), b"k").unwrap(), Some(b"concurrent".to_vec()));
    });
}

#[test]
fn a_delete_after_the_snapshot_conflicts_wherever_it_lives() {
    in_every_place(|place, db, move_writes| {
        db.put(&wo(), b"k", b"before").unwrap();
        let mut txn = begin(db);
        txn.delete(b"k").unwrap();
        db.delete(&wo(), b"k").unwrap();
        move_writes();
        assert_conflict(txn.commit(&wo()), b"k", place);
    });
}

/// A range deletion covering the key, or a merge operand on it, is a version too.
#[test]
fn a_range_deletion_or_a_merge_after_the_snapshot_conflicts_wherever_it_lives() {
    in_every_place(|place, db, move_writes| {
        db.put(&wo(), b"k", b"before").unwrap();
        db.put(&wo(), b"m", b"before").unwrap();
        let (mut ranged, mut merged) = (begin(db), begin(db));
        ranged.put(b"k", b"txn").unwrap();
        merged.get_for_update(&ro(), b"m").unwrap();
        merged.put(b"other", b"txn").unwrap();
        db.delete_range(&wo(), b"j", b"l").unwrap();
        db.merge(&wo(), b"m", b"operand").unwrap();
        move_writes();
        assert_conflict(ranged.commit(&wo()), b"k", place);
        assert_conflict(merged.commit(&wo()), b"m", place);
        // A range deletion that does not cover the key is no conflict.
        let mut beside = begin(db);
        beside.put(b"k", b"txn").unwrap();
        db.delete_range(&wo(), b"a", b"k").unwrap();
        beside
            .commit(&wo())
            .unwrap_or_else(|e| panic!("{place:?}: {e}"));
    });
}

#[test]
fn versions_before_the_snapshot_never_conflict_wherever_they_live() {
    in_every_place(|place, db, move_writes| {
        db.put(&wo(), b"k", b"before").unwrap();
        db.delete(&wo(), b"gone").unwrap();
        db.put(&wo(), b"read", b"r").unwrap();
        db.delete_range(&wo(), b"k", b"kz").unwrap();
        db.put(&wo(), b"k", b"before").unwrap();
        db.merge(&wo(), b"read", b"s").unwrap();
        move_writes();
        let mut txn = begin(db);
        txn.put(b"k", b"txn").unwrap();
        txn.put(b"gone", b"back").unwrap();
        let read = txn.get_for_update(&ro(), b"read").unwrap();
        assert_eq!(read, Some(b"r,s".to_vec()));
        // Writes to other keys after the snapshot do not matter either.
        db.put(&wo(), b"other", b"x").unwrap();
        txn.commit(&wo())
            .unwrap_or_else(|e| panic!("{place:?}: {e}"));
        assert_eq!(db.get(&ro(), b"k").unwrap(), Some(b"txn".to_vec()));
        assert_eq!(db.get(&ro(), b"gone").unwrap(), Some(b"back".to_vec()));
    });
}

#[test]
fn get_for_update_conflicts_and_plain_get_does_not() {
    in_every_place(|place, db, move_writes| {
        db.put(&wo(), b"a", b"1").unwrap();
        let (mut locked, mut unlocked, mut read_only) = (begin(db), begin(db), begin(db));
        locked.put(b"c", b"sum").unwrap();
        unlocked.put(b"c", b"sum").unwrap();
        locked.get_for_update(&ro(), b"a").unwrap();
        unlocked.get(&ro(), b"a").unwrap();
        read_only.get_for_update(&ro(), b"a").unwrap();
        db.put(&wo(), b"a", b"2").unwrap();
        move_writes();
        assert_conflict(locked.commit(&wo()), b"a", place);
        assert_conflict(read_only.commit(&wo()), b"a", place);
        unlocked.commit(&wo()).expect("a plain read is not checked");
    });
}

#[test]
fn the_first_of_two_transactions_on_a_key_wins() {
    let fs = FaultFs::new();
    let db = open(&fs);
    let mut first = begin(&db);
    let mut second = begin(&db);
    first.put(b"k", b"first").unwrap();
    second.put(b"k", b"second").unwrap();
    second.put(b"other", b"second").unwrap();
    first.commit(&wo()).unwrap();
    assert_conflict(second.commit(&wo()), b"k", Place::Memtable);
    assert_eq!(db.get(&ro(), b"k").unwrap(), Some(b"first".to_vec()));
    assert_eq!(
        db.get(&ro(), b"other").unwrap(),
        None,
        "no trace of the loser"
    );
}

#[test]
fn rollback_and_drop_leave_no_trace() {
    let fs = FaultFs::new();
    let db = open(&fs);
    let seq = db.latest_sequence();
    let mut txn = begin(&db);
    txn.put(b"k", b"v").unwrap();
    txn.rollback();
    {
        let mut txn = begin(&db);
        txn.put(b"k", b"v").unwrap();
    }
    let mut txn = begin(&db);
    txn.put(b"k", b"v").unwrap();
    db.put(&wo(), b"k", b"plain").unwrap();
    assert!(txn.commit(&wo()).is_err());
    assert_eq!(db.latest_sequence(), seq + 1, "only the plain write");
    db.close().unwrap();
    let db = open(&fs);
    assert_eq!(db.get(&ro(), b"k").unwrap(), Some(b"plain".to_vec()));
}

/// The check reads no table whose entries are all older than the snapshot: a
/// transaction over old, compacted data costs memtable probes only.
#[test]
fn the_check_skips_tables_older_than_the_snapshot() {
    let fs = FaultFs::new();
    let db = open(&fs);
    for i in 0..100u32 {
        db.put(&wo(), format!("k{i:03}").as_bytes(), b"old")
            .unwrap();
    }
    db.compact_range(None, None).unwrap();
    let mut txn = begin(&db);
    for i in 0..100u32 {
        txn.put(format!("k{i:03}").as_bytes(), b"new").unwrap();
    }
    let probed = db.stats().counters.tables_probed;
    txn.commit(&wo()).unwrap();
    assert_eq!(db.stats().counters.tables_probed, probed);
}

/// Transactions over column families: a key conflicts only with writes of the same key
/// in the same family, wherever the write lives; a transaction reads its own writes in
/// each family (gets and iterators); its writes in several families commit atomically;
/// a family dropped under it makes the commit fail and write nothing.
#[test]
fn transactions_span_column_families_and_conflict_per_family() {
    for place in PLACES {
        let fs = FaultFs::new();
        let db = open(&fs);
        let cf = db.create_cf("c", strata::CfOptions::default()).expect("cf");
        db.put_cf(&wo(), &cf, b"k", b"old").expect("put");
        // The same key in another family: never a conflict.
        let mut other = db.transaction(&TransactionOptions::default());
        other.put(b"k", b"default").expect("put");
        // The same key in the same family, written after the snapshot: a conflict.
        let mut same = db.transaction(&TransactionOptions::default());
        assert_eq!(
            same.get_for_update_cf(&ro(), &cf, b"k").expect("get"),
            Some(b"old".to_vec())
        );
        same.put_cf(&cf, b"x", b"1").expect("put");
        db.put_cf(&wo(), &cf, b"k", b"new").expect("put");
        if !matches!(place, Place::Memtable) {
            db.put(&wo(), b"pad", b"so the default family flushes too")
                .expect("put");
        }
        move_to_family(&db, &fs, &cf, place);
        fs.clear_faults();
        assert_conflict(same.commit(&wo()), b"k", place);
        other
            .commit(&wo())
            .expect("the same key in another family does not conflict");
        assert_eq!(db.get_cf(&ro(), &cf, b"x").expect("get"), None, "{place:?}");
    }

    let fs = FaultFs::new();
    let db = open(&fs);
    let a = db.create_cf("a", strata::CfOptions::default()).expect("a");
    let b = db.create_cf("b", strata::CfOptions::default()).expect("b");
    db.put_cf(&wo(), &a, b"base", b"1").expect("put");
    let mut txn = db.transaction(&TransactionOptions::default());
    txn.put_cf(&a, b"own", b"a").expect("put");
    txn.put_cf(&b, b"own", b"b").expect("put");
    txn.put(b"own", b"d").expect("put");
    txn.delete_cf(&a, b"base").expect("delete");
    assert_eq!(
        txn.get_cf(&ro(), &a, b"own").expect("get"),
        Some(b"a".to_vec())
    );
    assert_eq!(
        txn.get_cf(&ro(), &b, b"own").expect("get"),
        Some(b"b".to_vec())
    );
    assert_eq!(txn.get(&ro(), b"own").expect("get"), Some(b"d".to_vec()));
    assert_eq!(txn.get_cf(&ro(), &a, b"base").expect("get"), None);
    let mut it = txn.iter_cf(&ro(), &a).expect("iter");
    it.seek_to_first();
    let mut keys = Vec::new();
    while it.valid() {
        keys.push(it.key().to_vec());
        it.next();
    }
    it.status().expect("status");
    drop(it);
    assert_eq!(
        keys,
        vec![b"own".to_vec()],
        "the base key is deleted in the txn"
    );
    txn.commit(&wo()).expect("commit");
    assert_eq!(
        db.get_cf(&ro(), &a, b"own").expect("get"),
        Some(b"a".to_vec())
    );
    assert_eq!(
        db.get_cf(&ro(), &b, b"own").expect("get"),
        Some(b"b".to_vec())
    );
    assert_eq!(db.get(&ro(), b"own").expect("get"), Some(b"d".to_vec()));
    assert_eq!(db.get_cf(&ro(), &a, b"base").expect("get"), None);

    // A family dropped while a transaction writes it: the commit writes nothing.
    let mut txn = db.transaction(&TransactionOptions::default());
    txn.put(b"lost", b"1").expect("put");
    txn.put_cf(&b, b"lost", b"1").expect("put");
    db.drop_cf(&b).expect("drop");
    let err = txn.commit(&wo()).expect_err("dropped family");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert_eq!(db.get(&ro(), b"lost").expect("get"), None);
}

/// [`move_to`] for one family: `flush_cf` / `compact_range_cf` of `cf`.
fn move_to_family(db: &Db, fs: &FaultFs, cf: &strata::CfHandle, place: Place) {
    match place {
        Place::Memtable => {}
        Place::Immutable => {
            fs.inject(FaultRule::sticky(FaultKinds::CREATE, 0).on_path(".sst"));
            let err = db.flush_cf(cf).expect_err("flushes fail");
            assert!(err.is_retryable(), "{err}");
        }
        Place::L0 => db.flush_cf(cf).expect("flush"),
        Place::Deeper => db.compact_range_cf(cf, None, None).expect("compact"),
    }
}
