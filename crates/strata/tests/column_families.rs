//! Column families: separate trees in one database, sharing the WAL.
//!
//! What it protects (issue 13 item 1, docs/ARCHITECTURE.md §17):
//! - Families are separate keyspaces with their own options (memtable size, merge
//!   operator), read, iterated, flushed and compacted on their own.
//! - A batch spanning families is atomic: after a crash it is there whole or not at
//!   all.
//! - Recovery replays each family from its own log number: a family flushed long ago
//!   keeps the WALs it needs, a family that was just flushed does not replay its old
//!   records twice, and an empty family does not pin old WALs.
//! - `create_cf` and `drop_cf` are durable; a dropped family's records in the WAL are
//!   skipped at replay, its id is never reused, its handle still reads what it held,
//!   and its files are deleted once nothing holds them.
//! - A database without families is written exactly as before (format v1 MANIFEST
//!   and WAL records), and `Db::list_cfs` reads the families without opening.

mod common;

use common::{append_operator, key, on, tiny_options};
use strata::env::{FaultFs, FileSystem};
use strata::{CfOptions, Db, ErrorKind, Options, ReadOptions, WriteBatch, WriteOptions};

const DIR: &str = "/db";

fn ro() -> ReadOptions {
    ReadOptions::default()
}

fn sync() -> WriteOptions {
    WriteOptions::default().with_sync(true)
}

fn files(fs: &FaultFs, suffix: &str) -> Vec<String> {
    let mut v: Vec<String> = fs
        .list(std::path::Path::new(DIR))
        .expect("list")
        .into_iter()
        .filter(|n| n.ends_with(suffix))
        .collect();
    v.sort();
    v
}

fn scan(db: &Db, cf: &strata::CfHandle) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = db.iter_cf(&ro(), cf).expect("iter");
    it.seek_to_first();
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().expect("iter status");
    out
}

#[test]
fn families_are_separate_keyspaces_with_their_own_options() {
    let fs = FaultFs::new();
    let db = on(&fs).open(DIR, Options::default()).expect("open");
    let logs = db
        .create_cf(
            "logs",
            CfOptions::default()
                .with_write_buffer_size(4096)
                .with_merge_operator(Some(append_operator())),
        )
        .expect("create");
    assert_eq!(logs.name(), "logs");
    assert_eq!(logs.id(), 1);
    assert_eq!(
        db.create_cf("logs", CfOptions::default())
            .expect_err("twice")
            .kind(),
        ErrorKind::InvalidArgument
    );
    db.put(&sync(), b"k", b"default").expect("put");
    db.put_cf(&sync(), &logs, b"k", b"logs").expect("put_cf");
    assert_eq!(db.get(&ro(), b"k").expect("get"), Some(b"default".to_vec()));
    assert_eq!(
        db.get_cf(&ro(), &logs, b"k").expect("get"),
        Some(b"logs".to_vec())
    );
    // The merge operator is the family's: the default family has none.
    db.merge_cf(&sync(), &logs, b"m", b"a").expect("merge");
    db.merge_cf(&sync(), &logs, b"m", b"b").expect("merge");
    assert_eq!(
        db.get_cf(&ro(), &logs, b"m").expect("get"),
        Some(b"a,b".to_vec())
    );
    let e = db.merge(&sync(), b"m", b"x").expect_err("no operator");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    // Also in a batch that names another family, and in a family without one.
    let mut mixed = WriteBatch::new();
    mixed.merge_cf(&logs, b"m", b"ok");
    mixed.merge(b"m", b"x");
    let e = db
        .write(&sync(), mixed)
        .expect_err("default has no operator");
    assert!(e.to_string().contains("`default`"), "{e}");
    let plain = db.create_cf("plain", CfOptions::default()).expect("plain");
    let e = db
        .merge_cf(&sync(), &plain, b"m", b"x")
        .expect_err("no operator");
    assert!(e.to_string().contains("`plain`"), "{e}");
    db.drop_cf(&plain).expect("drop");
    assert_eq!(
        db.get_cf(&ro(), &logs, b"m").expect("get"),
        Some(b"a,b".to_vec())
    );
    // The family's small memtable flushes on its own: the default family stays in
    // its memtable.
    for i in 0..200u32 {
        db.put_cf(&WriteOptions::default(), &logs, &key(i), &[b'v'; 64])
            .expect("put");
    }
    db.wait_for_compactions().expect("idle");
    let l = db.cf_stats(&logs);
    assert!(l.levels.iter().map(|s| s.files).sum::<usize>() > 0, "{l:?}");
    let d = db.stats();
    assert_eq!(d.levels.iter().map(|s| s.files).sum::<usize>(), 0);
    // Deletes and range deletes stay in their family.
    db.delete_range_cf(&sync(), &logs, &key(0), &key(100))
        .expect("range");
    db.delete_cf(&sync(), &logs, b"k").expect("delete");
    assert_eq!(db.get(&ro(), b"k").expect("get"), Some(b"default".to_vec()));
    assert_eq!(db.get_cf(&ro(), &logs, &key(5)).expect("get"), None);
    assert_eq!(scan(&db, &logs).len(), 100 + 1, "keys 100..200 and `m`");
    db.compact_range_cf(&logs, None, None).expect("compact");
    assert_eq!(scan(&db, &logs).len(), 101);
    assert_eq!(db.cf_names(), vec!["default", "logs"]);
    db.close().expect("close");

    // Reopen: the family is back (its options given again) with its data.
    assert_eq!(Db::list_cfs_on(&fs, DIR), vec!["default", "logs"]);
    let opts = CfOptions::default().with_merge_operator(Some(append_operator()));
    let db = on(&fs)
        .open_cf(DIR, Options::default(), &[("logs", opts)])
        .expect("reopen");
    let logs = db.cf("logs").expect("family");
    assert_eq!(
        db.get_cf(&ro(), &logs, b"m").expect("get"),
        Some(b"a,b".to_vec())
    );
    assert_eq!(
        db.get_cf(&ro(), &logs, &key(150)).expect("get"),
        Some(vec![b'v'; 64])
    );
    assert_eq!(db.get(&ro(), b"k").expect("get"), Some(b"default".to_vec()));
    assert!(db.cf("nope").is_none());
    db.merge_cf(&sync(), &logs, b"m2", b"x").expect("merge");
    db.merge_cf(&sync(), &logs, b"m2", b"y").expect("merge");
    db.close().expect("close");
    let e = on(&fs)
        .open_cf(DIR, Options::default(), &[("nope", CfOptions::default())])
        .map(|_| ())
        .expect_err("unknown family");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("nope"), "{e}");
    // Reopened without its options, the family runs with those `OPTIONS` recorded,
    // its merge operator included (tests/family_options_persisted.rs has the rest).
    let db = on(&fs).open(DIR, Options::default()).expect("reopen");
    let logs = db.cf("logs").expect("family");
    assert_eq!(
        db.get_cf(&ro(), &logs, b"m2")
            .expect("the recorded operator"),
        Some(b"x,y".to_vec())
    );
    db.close().expect("close");
}

/// The helper the tests use on the fault file system (`Db::list_cfs` reads a real
/// directory).
trait ListOn {
    fn list_cfs_on(fs: &FaultFs, dir: &str) -> Vec<String>;
}

impl ListOn for Db {
    fn list_cfs_on(fs: &FaultFs, dir: &str) -> Vec<String> {
        let db = on(fs).open(dir, Options::default()).expect("open to list");
        let names = db.cf_names();
        db.close().expect("close");
        names
    }
}

#[test]
fn a_batch_spanning_families_is_atomic_across_a_crash() {
    let fs = FaultFs::new();
    let db = on(&fs).open(DIR, tiny_options()).expect("open");
    let a = db.create_cf("a", tiny_options().cf_options()).expect("a");
    let b = db.create_cf("b", tiny_options().cf_options()).expect("b");
    for i in 0..300u32 {
        let mut batch = WriteBatch::new();
        batch.put(&key(i), b"d");
        batch.put_cf(&a, &key(i), b"a");
        batch.delete_cf(&b, &key(i.saturating_sub(1)));
        batch.put_cf(&b, &key(i), b"b");
        db.write(&WriteOptions::default().with_sync(i % 50 == 0), batch)
            .expect("write");
    }
    drop(db);
    fs.crash();
    let db = on(&fs).open(DIR, tiny_options()).expect("reopen");
    let (a, b) = (db.cf("a").expect("a"), db.cf("b").expect("b"));
    // Whatever prefix survived, every batch in it survived whole.
    let n = scan(&db, &a).len();
    assert!(n > 250, "synced batches lost: {n}");
    assert_eq!(scan(&db, &db.default_cf()).len(), n);
    let in_b = scan(&db, &b);
    assert_eq!(in_b, vec![(key(n as u32 - 1), b"b".to_vec())]);
}

/// A switch does not fsync the WAL it closes; the flush that follows must, before its
/// table takes any of that WAL's writes. Otherwise the other family, which replays
/// that WAL after a crash, comes back without its half of a batch whose other half the
/// table kept.
#[test]
fn a_flush_syncs_the_wals_its_memtable_was_written_to_first() {
    let fs = FaultFs::new();
    let db = on(&fs).open(DIR, tiny_options()).expect("open");
    let b = db.create_cf("b", tiny_options().cf_options()).expect("b");
    let mut batch = WriteBatch::new();
    batch.put(b"x", b"default half");
    batch.put_cf(&b, b"x", b"b half");
    db.write(&WriteOptions::default(), batch).expect("write");
    db.flush_cf(&db.default_cf())
        .expect("flush the default family only");
    fs.crash();
    drop(db);
    let db = on(&fs).open(DIR, tiny_options()).expect("reopen");
    let b = db.cf("b").expect("b");
    assert_eq!(
        db.get(&ro(), b"x").expect("get"),
        Some(b"default half".to_vec())
    );
    assert_eq!(
        db.get_cf(&ro(), &b, b"x").expect("get b"),
        Some(b"b half".to_vec()),
        "the batch came back whole"
    );
}

#[test]
fn families_flushed_at_different_times_recover_from_their_own_log_numbers() {
    let fs = FaultFs::new();
    let opts = Options::default().with_write_buffer_size(64 << 10);
    let db = on(&fs).open(DIR, opts.clone()).expect("open");
    let hot = db
        .create_cf("hot", CfOptions::default().with_write_buffer_size(8 << 10))
        .expect("hot");
    let cold = db.create_cf("cold", CfOptions::default()).expect("cold");
    // `cold` gets a few writes early, then only `hot` is written: its small memtable
    // switches (and the WAL with it) many times. `cold`'s writes stay in the first
    // WALs, which must be kept.
    for i in 0..10u32 {
        db.put_cf(&sync(), &cold, &key(i), b"cold").expect("cold");
    }
    for i in 0..2000u32 {
        db.put_cf(&WriteOptions::default(), &hot, &key(i), &[b'h'; 40])
            .expect("hot");
    }
    db.flush_cf(&hot).expect("flush hot");
    db.put(&sync(), b"d", b"default").expect("default");
    let wals = files(&fs, ".log");
    assert!(wals.len() >= 2, "the cold family's WAL is kept: {wals:?}");
    drop(db);
    fs.crash();
    let db = on(&fs).open(DIR, opts.clone()).expect("reopen");
    let (hot, cold) = (db.cf("hot").expect("hot"), db.cf("cold").expect("cold"));
    assert_eq!(scan(&db, &cold).len(), 10);
    assert_eq!(scan(&db, &hot).len(), 2000);
    assert_eq!(db.get(&ro(), b"d").expect("get"), Some(b"default".to_vec()));
    // Once every family has flushed (open flushes the replay), old WALs go.
    db.flush().expect("flush");
    for i in 0..500u32 {
        db.put_cf(&WriteOptions::default(), &hot, &key(i), &[b'x'; 40])
            .expect("hot");
    }
    db.flush().expect("flush");
    assert!(files(&fs, ".log").len() <= 2, "{:?}", files(&fs, ".log"));
    db.close().expect("close");
}

#[test]
fn an_empty_family_does_not_pin_old_wals() {
    let fs = FaultFs::new();
    let db = on(&fs)
        .open(DIR, Options::default().with_write_buffer_size(8 << 10))
        .expect("open");
    let _idle = db.create_cf("idle", CfOptions::default()).expect("idle");
    for i in 0..3000u32 {
        db.put(&WriteOptions::default(), &key(i), &[b'v'; 40])
            .expect("put");
    }
    db.flush().expect("flush");
    let wals = files(&fs, ".log");
    assert!(wals.len() <= 2, "the idle family pins WALs: {wals:?}");
    db.close().expect("close");
}

#[test]
fn a_dropped_family_is_gone_durably_and_its_files_follow_its_last_reader() {
    let fs = FaultFs::new();
    let opts = Options::default().with_write_buffer_size(8 << 10);
    let db = on(&fs).open(DIR, opts.clone()).expect("open");
    let gone = db.create_cf("gone", CfOptions::default()).expect("gone");
    for i in 0..1000u32 {
        db.put_cf(&WriteOptions::default(), &gone, &key(i), &[b'g'; 40])
            .expect("put");
    }
    db.flush_cf(&gone).expect("flush");
    // Unflushed writes of the family sit in the WAL when it is dropped.
    for i in 0..10u32 {
        db.put_cf(&sync(), &gone, &key(5000 + i), b"wal")
            .expect("put");
    }
    let tables = files(&fs, ".sst");
    assert!(!tables.is_empty());
    let mut it = db.iter_cf(&ro(), &gone).expect("iter");
    db.drop_cf(&gone).expect("drop");
    assert!(gone.is_dropped());
    assert!(db.cf("gone").is_none());
    let e = db
        .put_cf(&sync(), &gone, b"k", b"v")
        .expect_err("write to dropped");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert_eq!(
        db.drop_cf(&gone).expect_err("twice").kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        db.drop_cf(&db.default_cf()).expect_err("default").kind(),
        ErrorKind::InvalidArgument
    );
    // The handle and the iterator still read what the family held.
    assert_eq!(
        db.get_cf(&ro(), &gone, &key(7)).expect("get"),
        Some(vec![b'g'; 40])
    );
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    assert_eq!(n, 1010);
    assert_eq!(files(&fs, ".sst"), tables, "files held by readers stay");
    drop(it);
    drop(gone);
    db.put(&sync(), b"after", b"drop").expect("put");
    // The flush thread sweeps obsolete files right after each flush, which may be just
    // after `flush` returns: give it a moment.
    let mut now = Vec::new();
    for _ in 0..200 {
        db.flush().expect("flush (runs the obsolete-file sweep)");
        now = files(&fs, ".sst");
        if tables.iter().all(|t| !now.contains(t)) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(
        tables.iter().all(|t| !now.contains(t)),
        "the dropped family's files {tables:?} are deleted: {now:?}"
    );
    // Ids are never reused.
    let next = db.create_cf("next", CfOptions::default()).expect("next");
    assert_eq!(next.id(), 2);
    db.put_cf(&sync(), &next, b"n", b"1").expect("put");
    drop(db);
    fs.crash();
    // Recovery skips the dropped family's WAL records and keeps the drop.
    let db = on(&fs).open(DIR, opts).expect("reopen");
    assert_eq!(db.cf_names(), vec!["default", "next"]);
    assert_eq!(
        db.get_cf(&ro(), &db.cf("next").expect("next"), b"n")
            .expect("get"),
        Some(b"1".to_vec())
    );
    assert_eq!(
        db.get(&ro(), b"after").expect("get"),
        Some(b"drop".to_vec())
    );
    db.close().expect("close");
}

#[test]
fn a_database_without_families_writes_format_v1_and_list_cfs_reads_a_real_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), Options::default()).expect("open");
    db.put(&sync(), b"a", b"1").expect("put");
    db.flush().expect("flush");
    db.close().expect("close");
    // No family tag (6..9) and no family flag in the MANIFEST: a v1 reader reads it.
    let manifest = std::fs::read_dir(dir.path())
        .expect("ls")
        .filter_map(|e| e.ok())
        .find(|e| e.file_name().to_string_lossy().starts_with("MANIFEST-"))
        .expect("manifest");
    let bytes = std::fs::read(manifest.path()).expect("read");
    assert!(!bytes.is_empty());
    assert_eq!(Db::list_cfs(dir.path()).expect("list"), vec!["default"]);
    let db = Db::open(dir.path(), Options::default()).expect("reopen");
    db.create_cf("x", CfOptions::default()).expect("x");
    db.close().expect("close");
    assert_eq!(
        Db::list_cfs(dir.path()).expect("list"),
        vec!["default", "x"]
    );
    let missing = dir.path().join("missing");
    assert_eq!(
        Db::list_cfs(&missing).expect_err("no database").kind(),
        ErrorKind::InvalidArgument
    );
}

#[test]
fn a_family_reopened_with_fewer_levels_than_its_tree_is_refused_by_name() {
    let fs = FaultFs::new();
    let db = on(&fs).open(DIR, tiny_options()).expect("open");
    let deep = db
        .create_cf("deep", tiny_options().with_num_levels(6).cf_options())
        .expect("deep");
    for i in 0..3000u32 {
        db.put_cf(&WriteOptions::default(), &deep, &key(i % 700), &[b'v'; 30])
            .expect("put");
    }
    db.compact_range_cf(&deep, None, None).expect("compact");
    let deepest = db
        .cf_stats(&deep)
        .levels
        .iter()
        .rposition(|l| l.files > 0)
        .expect("files");
    assert!(deepest >= 3, "tree depth {deepest}");
    db.close().expect("close");
    let e = on(&fs)
        .open_cf(
            DIR,
            tiny_options(),
            &[("deep", tiny_options().with_num_levels(3).cf_options())],
        )
        .map(|_| ())
        .expect_err("too few levels");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("deep"), "{e}");
}

/// A database written by the last release before column families (commit 327bedb,
/// by `strata ldb`: 300 loaded keys, a delete, two range deletes, u64 merges, and a
/// put and a merge still in the WAL) opens unchanged, and grows families.
#[test]
fn a_database_written_by_the_release_before_column_families_opens_unchanged() {
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/db-release-327bedb");
    let dir = tempfile::tempdir().expect("tempdir");
    for entry in std::fs::read_dir(&fixture).expect("fixture") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).expect("copy");
    }
    let opts =
        Options::default().with_merge_operator(Some(std::sync::Arc::new(strata::merge::U64Add)));
    assert_eq!(Db::list_cfs(dir.path()).expect("list"), vec!["default"]);
    let check = |db: &Db| {
        let all = scan(db, &db.default_cf());
        let deleted = |i: u32| i == 5 || (10..20).contains(&i) || (100..110).contains(&i);
        let mut want: Vec<(Vec<u8>, Vec<u8>)> = (0..300u32)
            .filter(|&i| !deleted(i))
            .map(|i| (key(i), format!("value-{i}").into_bytes()))
            .collect();
        want.push((b"counter".to_vec(), 42u64.to_le_bytes().to_vec()));
        want.push((b"tail".to_vec(), b"in-the-wal".to_vec()));
        want.sort();
        assert_eq!(all, want);
    };
    let db = Db::open(dir.path(), opts.clone()).expect("open the old database");
    check(&db);
    let cf = db.create_cf("new", CfOptions::default()).expect("create");
    db.put_cf(&sync(), &cf, b"k", b"v").expect("put");
    db.close().expect("close");
    let db = Db::open(dir.path(), opts).expect("reopen");
    check(&db);
    let cf = db.cf("new").expect("family");
    assert_eq!(
        db.get_cf(&ro(), &cf, b"k").expect("get"),
        Some(b"v".to_vec())
    );
    db.close().expect("close");
}

/// A family written once and never again would keep every WAL since; once the closed
/// WALs hold more than four times what all memtables may, the family holding the
/// oldest WAL is flushed (RocksDB's default `max_total_wal_size`).
#[test]
fn a_rarely_written_family_does_not_keep_wals_forever() {
    let fs = FaultFs::new();
    let opts = Options::default().with_write_buffer_size(8 << 10);
    let db = on(&fs).open(DIR, opts.clone()).expect("open");
    let rare = db
        .create_cf("rare", CfOptions::default().with_write_buffer_size(8 << 10))
        .expect("rare");
    db.put_cf(&sync(), &rare, b"once", b"1").expect("put");
    let mut most = 0;
    for i in 0..20_000u32 {
        db.put(&WriteOptions::default(), &key(i), &[b'v'; 100])
            .expect("put");
        if i % 500 == 0 {
            most = most.max(files(&fs, ".log").len());
        }
    }
    // 4 × (2 families × 8 KiB × 2 memtables) = 128 KiB of closed WALs, ~8 KiB each.
    assert!(most <= 24, "WALs kept: {most}");
    assert!(
        db.cf_stats(&rare).levels[0].files > 0,
        "the rare family was flushed"
    );
    drop(db);
    fs.crash();
    let db = on(&fs).open(DIR, opts).expect("reopen");
    let rare = db.cf("rare").expect("rare");
    assert_eq!(
        db.get_cf(&ro(), &rare, b"once").expect("get"),
        Some(b"1".to_vec())
    );
    assert_eq!(scan(&db, &db.default_cf()).len(), 20_000);
}
