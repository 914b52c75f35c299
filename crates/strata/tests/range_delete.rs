//! Range deletions end to end, by name: reads at and before the tombstone in every
//! source (memtable, L0, deeper levels), reopen (WAL and tables), space reclaimed by
//! compaction, tombstone-only tables, a thousand tombstones, refusal of an inverted
//! range, and whole files under a tombstone dropped without being rewritten (unless a
//! snapshot still sees them). The model-based and metamorphic workloads delete ranges
//! too.

mod common;

use common::{db_scan, table_bytes, tiny_options};
use strata::{Db, ErrorKind, ReadOptions, WriteBatch, WriteOptions};

fn wo() -> WriteOptions {
    WriteOptions::default()
}

fn key(i: u32) -> Vec<u8> {
    format!("k{i:05}").into_bytes()
}

/// The keys of a full scan in `forward` or reverse order, in ascending order.
fn keys(db: &Db, ro: &ReadOptions, forward: bool) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = db_scan(db, ro.snapshot.clone(), forward, &None, &None, usize::MAX)
        .expect("scan")
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    if !forward {
        out.reverse();
    }
    out
}

/// Keys 0..n written, then [lo, hi) deleted by one tombstone: every read path agrees,
/// a snapshot taken before still sees them, and so does it after flushes and
/// compactions move the tombstone and the keys between levels.
#[test]
fn reads_honour_a_tombstone_in_every_source() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), tiny_options()).unwrap();
    let n = 400;
    for i in 0..n {
        db.put(&wo(), &key(i), b"value").unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    let before = db.snapshot();
    db.delete_range(&wo(), &key(100), &key(200)).unwrap();
    // Rewritten after the tombstone: visible again.
    db.put(&wo(), &key(150), b"again").unwrap();
    let expect: Vec<Vec<u8>> = (0..n)
        .filter(|&i| !(100..200).contains(&i) || i == 150)
        .map(key)
        .collect();
    let check = |db: &Db, at: &str| {
        let ro = ReadOptions::default();
        assert_eq!(keys(db, &ro, true), expect, "{at}: forward");
        assert_eq!(keys(db, &ro, false), expect, "{at}: reverse");
        for i in [0, 99, 100, 149, 151, 199, 200, n - 1] {
            let want = !(100..200).contains(&i);
            assert_eq!(
                db.get(&ro, &key(i)).unwrap().is_some(),
                want,
                "{at}: key {i}"
            );
        }
        assert_eq!(db.get(&ro, &key(150)).unwrap(), Some(b"again".to_vec()));
        let mut it = db.iter(&ro).unwrap();
        it.seek(&key(100));
        assert_eq!(it.key(), key(150), "{at}: seek into the range");
        it.seek_for_prev(&key(199));
        assert_eq!(it.key(), key(150), "{at}: seek_for_prev into the range");
    };
    let old = |db: &Db, at: &str| {
        let ro = ReadOptions::default().with_snapshot(Some(before.clone()));
        assert_eq!(keys(db, &ro, true).len(), n as usize, "{at}: snapshot");
        assert_eq!(
            db.get(&ro, &key(120)).unwrap(),
            Some(b"value".to_vec()),
            "{at}"
        );
    };
    check(&db, "memtable");
    old(&db, "memtable");
    db.flush().unwrap();
    check(&db, "L0");
    old(&db, "L0");
    db.compact_range(None, None).unwrap();
    check(&db, "compacted with a snapshot");
    old(&db, "compacted with a snapshot");
    drop(before);
    db.compact_range(None, None).unwrap();
    check(&db, "compacted");
    db.close().unwrap();
    let db = Db::open(dir.path(), tiny_options()).unwrap();
    check(&db, "reopened");
    db.close().unwrap();
}

/// A tombstone in the WAL only (no flush) survives a reopen.
#[test]
fn a_tombstone_replays_from_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let opts = tiny_options().with_write_buffer_size(1 << 20);
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    for i in 0..50 {
        db.put(&wo(), &key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    db.delete_range(&wo(), &key(10), &key(40)).unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(keys(&db, &ReadOptions::default(), true).len(), 20);
    db.close().unwrap();
}

/// Deleting nine tenths of the keys with one tombstone reclaims their space once a
/// compaction reaches the bottom; the tombstone itself is then gone (the tables are
/// smaller than the survivors would need with it).
#[test]
fn compaction_reclaims_the_space_of_deleted_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), tiny_options()).unwrap();
    for i in 0..2000 {
        db.put(&wo(), &key(i), &[b'x'; 100]).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    let full = table_bytes(&db);
    db.delete_range(&wo(), &key(100), &key(1900)).unwrap();
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    db.wait_for_compactions().unwrap();
    let after = table_bytes(&db);
    assert!(after * 5 < full, "{full} bytes before, {after} after");
    assert_eq!(keys(&db, &ReadOptions::default(), true).len(), 200);
    db.close().unwrap();
}

/// A flush of a memtable holding only a tombstone writes a table of tombstones only,
/// and it still deletes the keys below it.
#[test]
fn a_table_of_tombstones_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), tiny_options()).unwrap();
    for i in 0..100 {
        db.put(&wo(), &key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    let snap = db.snapshot();
    db.delete_range(&wo(), &key(0), &key(1000)).unwrap();
    db.flush().unwrap();
    let ro = ReadOptions::default();
    assert!(keys(&db, &ro, true).is_empty());
    assert_eq!(db.get(&ro, &key(5)).unwrap(), None);
    let old = ReadOptions::default().with_snapshot(Some(snap));
    assert_eq!(keys(&db, &old, false).len(), 100);
    db.close().unwrap();
}

/// A thousand overlapping tombstones: every key's answer matches a model.
#[test]
fn a_thousand_tombstones() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), tiny_options()).unwrap();
    let n = 3000u32;
    for i in 0..n {
        db.put(&wo(), &key(i), b"v").unwrap();
    }
    let mut live = vec![true; n as usize];
    let mut x = 12345u32;
    for t in 0..1000u32 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let a = (x >> 8) % n;
        let b = (a + 1 + (x >> 20) % 4).min(n);
        db.delete_range(&wo(), &key(a), &key(b)).unwrap();
        live[a as usize..b as usize]
            .iter_mut()
            .for_each(|l| *l = false);
        if t % 300 == 0 {
            db.flush().unwrap();
        }
    }
    let want: Vec<Vec<u8>> = (0..n).filter(|&i| live[i as usize]).map(key).collect();
    let ro = ReadOptions::default();
    assert_eq!(keys(&db, &ro, true), want);
    db.compact_range(None, None).unwrap();
    assert_eq!(keys(&db, &ro, false), want);
    for i in 0..n {
        assert_eq!(
            db.get(&ro, &key(i)).unwrap().is_some(),
            live[i as usize],
            "key {i}"
        );
    }
    db.close().unwrap();
}

#[test]
fn an_inverted_range_is_refused_and_an_empty_one_deletes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), tiny_options()).unwrap();
    db.put(&wo(), b"m", b"v").unwrap();
    let before = db.latest_sequence();
    let e = db.delete_range(&wo(), b"z", b"a").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let mut b = WriteBatch::new();
    b.put(b"n", b"v");
    b.delete_range(b"q", b"p");
    assert_eq!(
        db.write(&wo(), b).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(db.latest_sequence(), before, "nothing was written");
    db.delete_range(&wo(), b"m", b"m").unwrap();
    assert_eq!(
        db.get(&ReadOptions::default(), b"m").unwrap(),
        Some(b"v".to_vec())
    );
    db.close().unwrap();
}

/// Files wholly under a newer tombstone are deleted by a metadata-only edit: after a
/// range delete over every key, compaction writes nothing, every table (the tombstone's
/// own too, once it hides nothing) is gone, and a reopen agrees.
#[test]
fn covered_files_are_dropped_without_being_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), tiny_options()).unwrap();
    for i in 0..2000 {
        db.put(&wo(), &key(i), &[b'x'; 100]).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    // And one L0 file, older than the tombstone too.
    for i in 0..20 {
        db.put(&wo(), &key(i * 7), b"again").unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let before = db.stats();
    let files: usize = before.levels.iter().map(|l| l.files).sum();
    assert!(files > 10, "{}", before.level_table());
    db.delete_range(&wo(), &key(0), &key(2000)).unwrap();
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    db.wait_for_compactions().unwrap();
    let after = db.stats();
    let c = |s: &strata::DbStats| s.counters.clone();
    let (b, a) = (c(&before), c(&after));
    assert_eq!(
        a.compaction_bytes_written - b.compaction_bytes_written,
        0,
        "{}",
        after.level_table()
    );
    assert_eq!(a.compaction_bytes_read - b.compaction_bytes_read, 0);
    // Every data file, and the tombstone's table.
    assert_eq!(
        a.files_dropped_by_range_delete - b.files_dropped_by_range_delete,
        files as u64 + 1
    );
    assert!(a.bytes_dropped_by_range_delete > b.bytes_dropped_by_range_delete);
    assert_eq!(table_bytes(&db), 0, "{}", after.level_table());
    assert!(keys(&db, &ReadOptions::default(), true).is_empty());
    db.close().unwrap();
    let db = Db::open(dir.path(), tiny_options()).unwrap();
    assert!(keys(&db, &ReadOptions::default(), true).is_empty());
    assert_eq!(db.get(&ReadOptions::default(), &key(7)).unwrap(), None);
    db.close().unwrap();
}

/// A database of keys `[0, n)` with 100-byte values, flushed and compacted.
fn compacted(dir: &std::path::Path, n: u32) -> Db {
    let db = Db::open(dir, tiny_options()).unwrap();
    for i in 0..n {
        db.put(&wo(), &key(i), &[b'x'; 100]).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    db
}

/// A snapshot taken before the range delete sees every key through any number of
/// compactions: no file it can see is dropped. (The compactions made meanwhile keep
/// the entries it sees beside the tombstone, in the same files, so those are left to
/// rewrites once it is released.)
#[test]
fn a_snapshot_keeps_covered_files() {
    let dir = tempfile::tempdir().unwrap();
    let n = 2000u32;
    let db = compacted(dir.path(), n);
    let snap = db.snapshot();
    db.delete_range(&wo(), &key(0), &key(n)).unwrap();
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    db.wait_for_compactions().unwrap();
    assert_eq!(db.stats().counters.files_dropped_by_range_delete, 0);
    let old = ReadOptions::default().with_snapshot(Some(snap.clone()));
    assert_eq!(keys(&db, &old, true).len(), n as usize);
    assert_eq!(db.get(&old, &key(1234)).unwrap(), Some(vec![b'x'; 100]));
    assert!(keys(&db, &ReadOptions::default(), true).is_empty());
    drop((old, snap));
    db.compact_range(None, None).unwrap();
    db.wait_for_compactions().unwrap();
    assert!(keys(&db, &ReadOptions::default(), true).is_empty());
    db.close().unwrap();
}

/// Files straddling the ends of a range delete stay (their keys outside it are still
/// read), while the files inside it are dropped.
#[test]
fn partly_covered_files_are_rewritten_not_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let n = 2000u32;
    let db = compacted(dir.path(), n);
    db.wait_for_compactions().unwrap();
    let before = db.stats().counters;
    // Odd bounds, so they fall inside files rather than between them.
    db.delete_range(&wo(), &key(101), &key(1899)).unwrap();
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    db.wait_for_compactions().unwrap();
    let after = db.stats().counters;
    assert!(after.files_dropped_by_range_delete > before.files_dropped_by_range_delete);
    assert!(
        after.compaction_bytes_written > before.compaction_bytes_written,
        "the files holding the ends are rewritten"
    );
    let want: Vec<Vec<u8>> = (0..n)
        .filter(|i| !(101..1899).contains(i))
        .map(key)
        .collect();
    assert_eq!(keys(&db, &ReadOptions::default(), true), want);
    assert_eq!(keys(&db, &ReadOptions::default(), false), want);
    db.close().unwrap();
}

/// A family's tombstones drop only that family's files: the same keys in the default
/// family, under no tombstone, stay whole through both families' compactions.
#[test]
fn tombstones_of_one_family_drop_no_file_of_another() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), tiny_options()).unwrap();
    let other = db.create_cf("other", tiny_options().cf_options()).unwrap();
    let n = 1000;
    for i in 0..n {
        db.put(&wo(), &key(i), &[b'x'; 100]).unwrap();
        db.put_cf(&wo(), &other, &key(i), &[b'y'; 100]).unwrap();
    }
    db.compact_range(None, None).unwrap();
    db.compact_range_cf(&other, None, None).unwrap();
    db.wait_for_compactions().unwrap();
    let before = db.stats().counters;
    db.delete_range_cf(&wo(), &other, &key(0), &key(n)).unwrap();
    db.compact_range_cf(&other, None, None).unwrap();
    db.compact_range(None, None).unwrap();
    db.wait_for_compactions().unwrap();
    let after = db.stats().counters;
    assert!(after.files_dropped_by_range_delete > before.files_dropped_by_range_delete);
    let ro = ReadOptions::default();
    assert_eq!(keys(&db, &ro, true).len(), n as usize);
    let mut it = db.iter_cf(&ro, &other).unwrap();
    it.seek_to_first();
    assert!(!it.valid(), "every key of the family is deleted");
    db.close().unwrap();
}
