//! Protects: `Db::open_read_only` (docs/ARCHITECTURE.md §7.6). It sees the database as
//! of its open (tables and the WALs' unflushed writes), beside a writer that holds the
//! database and keeps writing, flushing and compacting; several read-only handles open
//! at once; every write path is refused by name; and it writes nothing at all (a file
//! system that fails and counts every mutating call sees none).

mod common;

use common::{append_operator, family_contents, model_merge, tiny_options, ModelMap};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use strata::env::{FileLock, FileSystem, PosixFs, RandomAccessFile, SequentialFile, WritableFile};
use strata::{CfOptions, Db, ErrorKind, ReadOptions, TransactionOptions, WriteBatch, WriteOptions};

fn wo() -> WriteOptions {
    WriteOptions::default()
}

fn model_contents(m: &ModelMap) -> Vec<(Vec<u8>, Vec<u8>)> {
    m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// Random puts, deletes, merges and range deletes over two families, with flushes and
/// compactions, by a writer that stays open; after every round a read-only handle
/// opened beside it must read exactly the model at that point (scans both ways and
/// every key by `get`), and must keep reading it while the writer goes on, compacts,
/// and deletes the tables the read-only handle opened.
#[test]
fn a_read_only_open_reads_the_writers_state_as_of_its_open() {
    let dir = tempfile::tempdir().unwrap();
    let opts = tiny_options();
    let family = CfOptions::default().with_merge_operator(Some(append_operator()));
    let writer = Db::open(dir.path(), opts.clone()).unwrap();
    let logs = writer.create_cf("logs", family.clone()).unwrap();
    let mut models = [ModelMap::new(), ModelMap::new()];
    let mut rng = StdRng::seed_from_u64(7);
    let mut readers: Vec<(Db, [ModelMap; 2])> = Vec::new();
    let mut deleted_under_a_reader = 0;
    for round in 0..12 {
        for i in 0..300 {
            let f = rng.random_range(0..2usize);
            let cf = if f == 0 {
                writer.default_cf()
            } else {
                logs.clone()
            };
            let key = format!("k{:03}", rng.random_range(0..200u32)).into_bytes();
            let value = format!("r{round}-{i}").into_bytes();
            match rng.random_range(0..20u32) {
                0..=10 => {
                    writer.put_cf(&wo(), &cf, &key, &value).unwrap();
                    models[f].insert(key, value);
                }
                11..=13 => {
                    writer.delete_cf(&wo(), &cf, &key).unwrap();
                    models[f].remove(&key);
                }
                14..=18 => {
                    writer.merge_cf(&wo(), &cf, &key, &value).unwrap();
                    model_merge(&mut models[f], &key, &value);
                }
                _ => {
                    let end = format!("k{:03}", rng.random_range(0..200u32)).into_bytes();
                    if key <= end {
                        writer.delete_range_cf(&wo(), &cf, &key, &end).unwrap();
                        let doomed: Vec<Vec<u8>> =
                            models[f].range(key..end).map(|(k, _)| k.clone()).collect();
                        for k in doomed {
                            models[f].remove(&k);
                        }
                    }
                }
            }
        }
        match round % 3 {
            0 => writer.flush().unwrap(),
            1 => writer.compact_range(None, None).unwrap(),
            // Round 2: the last writes are in the WAL only.
            _ => {}
        }
        let reader = Db::builder()
            .open_cf_read_only(dir.path(), opts.clone(), &[("logs", family.clone())])
            .unwrap_or_else(|e| panic!("round {round}: read-only open: {e}"));
        check(&reader, &models, &format!("round {round}, at its open"));
        readers.push((reader, models.clone()));
        // Every reader still reads its own point in time, though the writer has moved
        // on and compacted away tables it opened.
        let tables_at_open = tables(dir.path());
        writer.compact_range(None, None).unwrap();
        writer.wait_for_compactions().unwrap();
        let now = tables(dir.path());
        deleted_under_a_reader += tables_at_open.iter().filter(|t| !now.contains(t)).count();
        for (j, (r, m)) in readers.iter().enumerate() {
            check(r, m, &format!("round {round}, reader of round {j}"));
        }
    }
    for (r, _) in readers {
        r.close().unwrap();
    }
    writer.close().unwrap();
    assert!(
        deleted_under_a_reader >= 10,
        "the writer deleted only {deleted_under_a_reader} tables readers had open"
    );
}

/// The table files in `dir`.
fn tables(dir: &Path) -> Vec<std::ffi::OsString> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".sst"))
        .collect()
}

fn check(db: &Db, models: &[ModelMap; 2], ctx: &str) {
    let ro = ReadOptions::default();
    let logs = db.cf("logs").expect("the family is open");
    for (cf, model) in [db.default_cf(), logs].iter().zip(models) {
        assert_eq!(
            family_contents(db, cf),
            model_contents(model),
            "{ctx}: family {}",
            cf.name()
        );
        for i in 0..200u32 {
            let k = format!("k{i:03}").into_bytes();
            assert_eq!(
                db.get_cf(&ro, cf, &k).unwrap().as_ref(),
                model.get(&k),
                "{ctx}: get {i}"
            );
        }
    }
}

/// Writes, flushes, compactions, family changes and transaction commits of a read-only
/// handle are refused by name and change nothing; reads, snapshots, stats and close
/// work.
#[test]
fn every_write_path_of_a_read_only_handle_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), tiny_options()).unwrap();
    db.put(&wo(), b"a", b"1").unwrap();
    db.close().unwrap();

    let r = Db::open_read_only(dir.path(), tiny_options()).unwrap();
    let before = r.latest_sequence();
    let refused = |e: strata::Error| {
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(e.to_string().contains("read-only"), "{e}");
    };
    refused(r.put(&wo(), b"b", b"2").unwrap_err());
    refused(r.delete(&wo(), b"a").unwrap_err());
    refused(r.merge(&wo(), b"a", b"x").unwrap_err());
    refused(r.delete_range(&wo(), b"a", b"z").unwrap_err());
    let mut batch = WriteBatch::new();
    batch.put(b"c", b"3");
    refused(r.write(&wo(), batch).unwrap_err());
    refused(r.flush().unwrap_err());
    refused(r.compact_range(None, None).unwrap_err());
    refused(r.create_cf("x", CfOptions::default()).unwrap_err());
    refused(r.drop_cf(&r.default_cf()).unwrap_err());
    let mut txn = r.transaction(&TransactionOptions::default());
    txn.put(b"t", b"1").unwrap();
    refused(txn.commit(&wo()).unwrap_err());
    r.wait_for_compactions().unwrap();
    assert_eq!(r.latest_sequence(), before);
    let snap = r.snapshot();
    let ro = ReadOptions::default().with_snapshot(snap);
    assert_eq!(r.get(&ro, b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(r.get(&ReadOptions::default(), b"b").unwrap(), None);
    r.verify_checksums().unwrap();
    r.close().unwrap();
}

/// A file system that refuses and counts every call that would change the disk
/// (create, rename, remove, mkdir, directory fsync, lock).
struct NoWritesFs {
    inner: PosixFs,
    attempts: AtomicUsize,
}

impl NoWritesFs {
    fn refuse<T>(&self, op: strata::IoOp, path: &Path) -> strata::Result<T> {
        self.attempts.fetch_add(1, Ordering::Relaxed);
        Err(strata::Error::Io {
            op,
            path: path.to_path_buf(),
            source: std::io::Error::from(std::io::ErrorKind::ReadOnlyFilesystem),
        })
    }
}

impl FileSystem for NoWritesFs {
    fn create(&self, path: &Path) -> strata::Result<Box<dyn WritableFile>> {
        self.refuse(strata::IoOp::Create, path)
    }
    fn open_random(&self, path: &Path) -> strata::Result<Arc<dyn RandomAccessFile>> {
        self.inner.open_random(path)
    }
    fn open_sequential(&self, path: &Path) -> strata::Result<Box<dyn SequentialFile>> {
        self.inner.open_sequential(path)
    }
    fn rename(&self, from: &Path, _to: &Path) -> strata::Result<()> {
        self.refuse(strata::IoOp::Rename, from)
    }
    fn remove(&self, path: &Path) -> strata::Result<()> {
        self.refuse(strata::IoOp::Remove, path)
    }
    fn list(&self, dir: &Path) -> strata::Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> strata::Result<()> {
        self.refuse(strata::IoOp::Mkdir, dir)
    }
    fn sync_dir(&self, dir: &Path) -> strata::Result<()> {
        self.refuse(strata::IoOp::FsyncDir, dir)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn file_size(&self, path: &Path) -> strata::Result<u64> {
        self.inner.file_size(path)
    }
    fn lock(&self, path: &Path) -> strata::Result<Box<dyn FileLock>> {
        self.refuse(strata::IoOp::Lock, path)
    }
}

/// A read-only open works on a medium that refuses every write, while the writer
/// holds the database and its WAL holds unflushed writes; it makes no mutating call.
/// A missing database is an error that creates nothing.
#[test]
fn a_read_only_open_writes_nothing_and_needs_no_lock() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Db::open(dir.path(), tiny_options()).unwrap();
    for i in 0..500u32 {
        writer
            .put(&wo(), format!("k{i:04}").as_bytes(), &[b'v'; 40])
            .unwrap();
    }
    writer.flush().unwrap();
    writer.put(&wo(), b"wal-only", b"yes").unwrap();
    // The directory listing compared below must not change by the writer's own work.
    writer.wait_for_compactions().unwrap();
    let listing = |p: &Path| {
        let mut v: Vec<_> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };
    let fs = Arc::new(NoWritesFs {
        inner: PosixFs,
        attempts: AtomicUsize::new(0),
    });
    let builder = Db::builder().file_system(fs.clone());
    // The writer deletes a flushed WAL after the flush's install wakes its waiter, so
    // on a loaded machine the deletion can land after `wait_for_compactions`: take the
    // listing once it has stopped changing (the writer does nothing more on its own).
    let mut before = listing(dir.path());
    for _ in 0..100 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let now = listing(dir.path());
        if now == before {
            break;
        }
        before = now;
    }
    let a = builder
        .open_read_only(dir.path(), tiny_options())
        .expect("read-only open on a medium refusing writes");
    let b = builder.open_read_only(dir.path(), tiny_options()).unwrap();
    let ro = ReadOptions::default();
    for r in [&a, &b] {
        assert_eq!(r.get(&ro, b"wal-only").unwrap(), Some(b"yes".to_vec()));
        assert_eq!(family_contents(r, &r.default_cf()).len(), 501);
        let mut it = r.iter(&ro).unwrap();
        it.seek(b"k0100");
        assert_eq!(it.key(), b"k0100");
    }
    // A write by the writer after the opens is not seen.
    writer.put(&wo(), b"later", b"1").unwrap();
    assert_eq!(a.get(&ro, b"later").unwrap(), None);
    a.close().unwrap();
    drop(b);
    assert_eq!(
        fs.attempts.load(Ordering::Relaxed),
        0,
        "a mutating call was made"
    );
    assert_eq!(listing(dir.path()), before, "the directory changed");
    writer.close().unwrap();

    let missing = dir.path().join("nothing");
    let e = builder
        .open_read_only(&missing, tiny_options())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(!missing.exists());
    assert_eq!(fs.attempts.load(Ordering::Relaxed), 0);
}

/// Read-only opens race a writer that puts keys in order while its memtables flush,
/// its WALs are released and its tables compacted away every few writes: every open
/// succeeds (opening again when the database moved under it) and sees exactly a
/// prefix of the writes holding every write acknowledged before it, never a state
/// with a hole (a released WAL's writes missing between older tables and newer logs),
/// and never an older prefix than the open before it.
#[test]
fn read_only_opens_racing_a_writer_see_a_prefix_of_its_writes() {
    let dir = tempfile::tempdir().unwrap();
    let opts = tiny_options().with_max_open_files(4096);
    let writer = Arc::new(Db::open(dir.path(), opts.clone()).unwrap());
    const WRITES: usize = 20_000;
    let acked = Arc::new(AtomicUsize::new(0));
    let w = {
        let (writer, acked) = (Arc::clone(&writer), Arc::clone(&acked));
        std::thread::spawn(move || {
            for i in 0..WRITES {
                writer
                    .put(&wo(), format!("p{i:06}").as_bytes(), &[b'x'; 30])
                    .unwrap();
                acked.store(i + 1, Ordering::Release);
            }
        })
    };
    let mut last = 0usize;
    let (mut opens, mut racing) = (0, 0);
    // Open until the writer is done, and at least 20 times.
    while !w.is_finished() || opens < 20 {
        let attempt = opens;
        opens += 1;
        racing += usize::from(!w.is_finished());
        let before = acked.load(Ordering::Acquire);
        let r = Db::open_read_only(dir.path(), opts.clone())
            .unwrap_or_else(|e| panic!("open {attempt}: {e}"));
        let seen = family_contents(&r, &r.default_cf());
        for (i, (k, _)) in seen.iter().enumerate() {
            assert_eq!(
                k,
                format!("p{i:06}").as_bytes(),
                "open {attempt}: a hole before key {i} (saw {} keys)",
                seen.len()
            );
        }
        assert!(
            seen.len() >= last,
            "open {attempt}: {} < {last} keys",
            seen.len()
        );
        assert!(
            seen.len() >= before,
            "open {attempt}: {} keys, {before} acknowledged before the open",
            seen.len()
        );
        last = seen.len();
        drop(r);
    }
    w.join().unwrap();
    assert!(racing >= 5, "only {racing} opens raced the writer");
    let r = Db::open_read_only(dir.path(), opts.clone()).unwrap();
    assert_eq!(family_contents(&r, &r.default_cf()).len(), WRITES);
    drop(r);
    Arc::try_unwrap(writer).ok().unwrap().close().unwrap();
}
