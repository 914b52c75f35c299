//! Protects: `Db::checkpoint` (docs/ARCHITECTURE.md §7.7). A checkpoint opens as a
//! database holding exactly the state at the call (every family, tables and unflushed
//! writes alike), its tables are hard links (no table bytes written), it stays apart
//! from the source afterwards, checkpoints taken while a writer runs hold every write
//! acknowledged before the call and no hole, tables on several data paths land in the
//! checkpoint's own directory, and bad targets are refused by name.

mod common;

use common::{append_operator, family_contents, model_merge, paths_under, tiny_options, ModelMap};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use strata::{CfHandle, CfOptions, Db, ErrorKind, Options, ReadOptions, WriteOptions};

fn wo() -> WriteOptions {
    WriteOptions::default()
}

fn model_contents(m: &ModelMap) -> Vec<(Vec<u8>, Vec<u8>)> {
    m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// Writes to two families (puts, merges, a range delete), some flushed and compacted,
/// the last ones only in the WAL; returns the models.
fn fill(db: &Db, logs: &CfHandle) -> [ModelMap; 2] {
    let mut models = [ModelMap::new(), ModelMap::new()];
    for i in 0..600u32 {
        let k = format!("k{:03}", i % 250).into_bytes();
        let v = format!("v{i}").into_bytes();
        if i % 3 == 0 {
            db.merge_cf(&wo(), logs, &k, &v).unwrap();
            model_merge(&mut models[1], &k, &v);
        } else {
            db.put(&wo(), &k, &v).unwrap();
            models[0].insert(k, v);
        }
        if i == 300 {
            db.compact_range(None, None).unwrap();
            db.delete_range(&wo(), b"k100", b"k120").unwrap();
            let doomed: Vec<_> = models[0]
                .range(b"k100".to_vec()..b"k120".to_vec())
                .map(|(k, _)| k.clone())
                .collect();
            for k in doomed {
                models[0].remove(&k);
            }
        }
    }
    models
}

fn opts() -> (Options, CfOptions) {
    let family = CfOptions::default().with_merge_operator(Some(append_operator()));
    (tiny_options(), family)
}

fn open(dir: &Path) -> Db {
    let (opts, family) = opts();
    Db::open_cf(dir, opts, &[("logs", family)]).expect("open the checkpoint")
}

fn check(db: &Db, models: &[ModelMap; 2], ctx: &str) {
    let logs = db.cf("logs").expect("the family is in the checkpoint");
    assert_eq!(
        family_contents(db, &db.default_cf()),
        model_contents(&models[0]),
        "{ctx}: default"
    );
    assert_eq!(
        family_contents(db, &logs),
        model_contents(&models[1]),
        "{ctx}: logs"
    );
}

#[test]
fn a_checkpoint_opens_to_the_state_at_the_call_and_links_every_table() {
    let tmp = tempfile::tempdir().unwrap();
    let (o, family) = opts();
    let db = Db::open(tmp.path().join("db"), o).unwrap();
    let logs = db.create_cf("logs", family).unwrap();
    let models = fill(&db, &logs);
    db.wait_for_compactions().unwrap();
    let cp = tmp.path().join("cp");
    let info = db.checkpoint(&cp).unwrap();
    assert!(info.tables_linked > 0, "{info:?}");
    assert_eq!(info.tables_copied, 0, "{info:?}");
    assert!(info.wal_bytes_copied > 0, "the unflushed writes: {info:?}");
    // Hard links: every table of the checkpoint is the source's file (same inode).
    let mut linked = 0;
    for e in std::fs::read_dir(&cp).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        if name.to_string_lossy().ends_with(".sst") {
            let src = tmp.path().join("db").join(&name);
            assert_eq!(e.metadata().unwrap().ino(), src.metadata().unwrap().ino());
            linked += 1;
        }
    }
    assert_eq!(linked, info.tables_linked);

    // The source goes on; the checkpoint does not see it, and the reverse.
    db.put(&wo(), b"after", b"1").unwrap();
    db.compact_range(None, None).unwrap();
    let c = open(&cp);
    check(&c, &models, "checkpoint");
    c.put(&wo(), b"only-in-checkpoint", b"1").unwrap();
    c.compact_range(None, None).unwrap();
    assert_eq!(
        db.get(&ReadOptions::default(), b"only-in-checkpoint")
            .unwrap(),
        None
    );
    c.close().unwrap();
    let c = open(&cp);
    assert_eq!(c.get(&ReadOptions::default(), b"after").unwrap(), None);
    c.close().unwrap();
    db.close().unwrap();
}

#[test]
fn a_checkpoint_of_several_data_paths_keeps_its_tables_in_its_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let (o, family) = opts();
    let o = paths_under(tmp.path(), o);
    let db = Db::open(tmp.path().join("db"), o).unwrap();
    let logs = db.create_cf("logs", family).unwrap();
    let models = fill(&db, &logs);
    db.wait_for_compactions().unwrap();
    let deeper = ["db-mid", "db-slow"]
        .iter()
        .flat_map(|d| std::fs::read_dir(tmp.path().join(d)).unwrap())
        .count();
    assert!(deeper > 0, "the workload placed no table beyond path 0");
    let cp = tmp.path().join("cp");
    db.checkpoint(&cp).unwrap();
    db.close().unwrap();
    // Opened without data paths: every table is in `cp`.
    let c = open(&cp);
    check(&c, &models, "checkpoint of three data paths");
    c.close().unwrap();
}

/// Checkpoints taken while a writer puts keys in order, with flushes, WAL releases
/// and compactions every few writes: each holds every write acknowledged before its
/// call, and exactly a prefix of the writes (no hole).
#[test]
fn checkpoints_beside_a_writer_hold_every_acknowledged_write_and_no_hole() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(tmp.path().join("db"), tiny_options()).unwrap());
    let acked = Arc::new(AtomicUsize::new(0));
    const WRITES: usize = 15_000;
    let w = {
        let (db, acked) = (Arc::clone(&db), Arc::clone(&acked));
        std::thread::spawn(move || {
            for i in 0..WRITES {
                db.put(&wo(), format!("p{i:06}").as_bytes(), &[b'x'; 30])
                    .unwrap();
                acked.store(i + 1, Ordering::Release);
            }
        })
    };
    let (mut n, mut racing) = (0, 0);
    while !w.is_finished() || n < 10 {
        racing += usize::from(!w.is_finished());
        let before = acked.load(Ordering::Acquire);
        let cp = tmp.path().join(format!("cp{n}"));
        db.checkpoint(&cp).unwrap();
        let c = Db::open(&cp, tiny_options()).unwrap();
        let seen = family_contents(&c, &c.default_cf());
        for (i, (k, _)) in seen.iter().enumerate() {
            assert_eq!(
                k,
                format!("p{i:06}").as_bytes(),
                "checkpoint {n}: a hole at {i}"
            );
        }
        assert!(
            seen.len() >= before,
            "checkpoint {n}: {} keys, {before} acknowledged before the call",
            seen.len()
        );
        c.close().unwrap();
        std::fs::remove_dir_all(&cp).unwrap();
        n += 1;
    }
    w.join().unwrap();
    assert!(racing >= 5, "only {racing} checkpoints raced the writer");
    Arc::try_unwrap(db).ok().unwrap().close().unwrap();
}

#[test]
fn bad_targets_are_refused_by_name_and_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path().join("db"), tiny_options()).unwrap();
    db.put(&wo(), b"a", b"1").unwrap();
    let full = tmp.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("x"), b"x").unwrap();
    let e = db.checkpoint(&full).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("not empty"), "{e}");
    assert_eq!(std::fs::read_dir(&full).unwrap().count(), 1);

    // An existing empty directory is a fine target.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    db.checkpoint(&empty).unwrap();
    db.close().unwrap();

    let r = Db::open_read_only(tmp.path().join("db"), tiny_options()).unwrap();
    let e = r.checkpoint(tmp.path().join("from-read-only")).unwrap_err();
    assert!(e.to_string().contains("read-only"), "{e}");
    let c = Db::open(&empty, tiny_options()).unwrap();
    assert_eq!(
        c.get(&ReadOptions::default(), b"a").unwrap(),
        Some(b"1".to_vec())
    );
    c.close().unwrap();
}

/// The file system of the source without hard links: `FileSystem::link`'s default.
struct NoLinks(strata::env::PosixFs);

impl strata::env::FileSystem for NoLinks {
    fn create(&self, p: &Path) -> strata::Result<Box<dyn strata::env::WritableFile>> {
        self.0.create(p)
    }
    fn open_random(&self, p: &Path) -> strata::Result<Arc<dyn strata::env::RandomAccessFile>> {
        self.0.open_random(p)
    }
    fn open_sequential(&self, p: &Path) -> strata::Result<Box<dyn strata::env::SequentialFile>> {
        self.0.open_sequential(p)
    }
    fn rename(&self, from: &Path, to: &Path) -> strata::Result<()> {
        self.0.rename(from, to)
    }
    fn remove(&self, p: &Path) -> strata::Result<()> {
        self.0.remove(p)
    }
    fn list(&self, dir: &Path) -> strata::Result<Vec<String>> {
        self.0.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> strata::Result<()> {
        self.0.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> strata::Result<()> {
        self.0.sync_dir(dir)
    }
    fn exists(&self, p: &Path) -> bool {
        self.0.exists(p)
    }
    fn file_size(&self, p: &Path) -> strata::Result<u64> {
        self.0.file_size(p)
    }
    fn lock(&self, p: &Path) -> strata::Result<Box<dyn strata::env::FileLock>> {
        self.0.lock(p)
    }
}

/// Where tables cannot be linked they are copied, byte for byte: the checkpoint holds
/// new files of the same sizes and opens to the same state.
#[test]
fn tables_that_cannot_be_linked_are_copied() {
    let tmp = tempfile::tempdir().unwrap();
    let (o, family) = opts();
    let builder = Db::builder().file_system(Arc::new(NoLinks(strata::env::PosixFs)));
    let db = builder.open(tmp.path().join("db"), o).unwrap();
    let logs = db.create_cf("logs", family).unwrap();
    let models = fill(&db, &logs);
    db.wait_for_compactions().unwrap();
    let cp = tmp.path().join("cp");
    let info = db.checkpoint(&cp).unwrap();
    assert_eq!(info.tables_linked, 0, "{info:?}");
    assert!(info.tables_copied > 0, "{info:?}");
    let table_bytes: u64 = ["default", "logs"]
        .iter()
        .map(|n| db.cf_stats(&db.cf(n).unwrap()).space.live_table_bytes)
        .sum();
    assert_eq!(info.table_bytes_copied, table_bytes);
    for e in std::fs::read_dir(&cp).unwrap() {
        let e = e.unwrap();
        if e.file_name().to_string_lossy().ends_with(".sst") {
            let src = tmp.path().join("db").join(e.file_name());
            assert_ne!(e.metadata().unwrap().ino(), src.metadata().unwrap().ino());
            assert_eq!(e.metadata().unwrap().len(), src.metadata().unwrap().len());
        }
    }
    db.close().unwrap();
    let c = open(&cp);
    check(&c, &models, "copied checkpoint");
    c.close().unwrap();
}

/// A power cut at every step of a checkpoint: every operation from the k-th on fails
/// (whatever its kind), then the machine crashes (unsynced bytes and directory entries
/// revert). The source recovers every acknowledged write; the checkpoint is either
/// no database (no `CURRENT`) or whole (it opens to exactly the state at the call),
/// and it is whole whenever `checkpoint` returned `Ok`. (The fault file system has no hard links:
/// tables are copied, the longest path.)
#[test]
fn a_crash_at_any_step_of_a_checkpoint_leaves_a_whole_checkpoint_or_none() {
    use strata::env::{FaultFs, FaultKinds, FaultRule};
    let open = |fs: &FaultFs, path: &str| {
        Db::builder()
            .file_system(Arc::new(fs.clone()))
            .open(path, tiny_options())
    };
    let sync = WriteOptions::default().with_sync(true);
    let want = |i: u32| format!("v{i}-{}", "y".repeat(30)).into_bytes();
    let check = |db: &Db, ctx: &str| {
        for i in 0..400u32 {
            let got = db
                .get(&ReadOptions::default(), format!("k{i:04}").as_bytes())
                .unwrap_or_else(|e| panic!("{ctx}: get {i}: {e}"));
            assert_eq!(got, Some(want(i)), "{ctx}: key {i}");
        }
    };
    let (mut k, mut whole, mut absent) = (0u64, 0, 0);
    loop {
        let fs = FaultFs::new();
        let db = open(&fs, "/db").unwrap();
        for i in 0..400u32 {
            db.put(&sync, format!("k{i:04}").as_bytes(), &want(i))
                .unwrap();
            if i == 300 {
                db.flush().unwrap();
            }
        }
        db.wait_for_compactions().unwrap();
        fs.inject(FaultRule::sticky(FaultKinds::ALL, k));
        let made = db.checkpoint("/cp");
        let injected = fs.faults_injected() > 0;
        drop(db);
        fs.crash();
        fs.clear_faults();
        let ctx = format!("fault from op {k} ({made:?})");
        let db = open(&fs, "/db").unwrap_or_else(|e| panic!("{ctx}: reopen: {e}"));
        check(&db, &format!("{ctx}: source"));
        db.close().unwrap();
        // A checkpoint is a database once its `CURRENT` exists.
        let exists = fs.files().iter().any(|p| p == Path::new("/cp/CURRENT"));
        if made.is_ok() || exists {
            let cp = open(&fs, "/cp").unwrap_or_else(|e| panic!("{ctx}: open checkpoint: {e}"));
            check(&cp, &format!("{ctx}: checkpoint"));
            cp.close().unwrap();
            whole += 1;
        } else {
            absent += 1;
        }
        if !injected {
            assert!(made.is_ok(), "{ctx}: a checkpoint with no fault failed");
            break;
        }
        k += 1;
    }
    assert!(
        k > 20 && whole > 0 && absent > 10,
        "k={k} whole={whole} absent={absent}"
    );
}

/// Checkpoints taken while column families are created, filled and dropped: each
/// opens, and each family in it holds all of the one batch written into it or none
/// (a family and its batch are never half there).
#[test]
fn checkpoints_beside_family_creates_and_drops_open_consistently() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(tmp.path().join("db"), tiny_options()).unwrap());
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let w = {
        let (db, stop) = (Arc::clone(&db), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut live: Vec<CfHandle> = Vec::new();
            let mut i = 0u32;
            while !stop.load(Ordering::Relaxed) && i < 400 {
                let cf = db
                    .create_cf(&format!("f{i}"), CfOptions::default())
                    .unwrap();
                let mut batch = strata::WriteBatch::new();
                for j in 0..10u32 {
                    batch.put_cf(&cf, format!("k{j}").as_bytes(), b"v");
                }
                db.write(&wo(), batch).unwrap();
                live.push(cf);
                if live.len() > 3 {
                    db.drop_cf(&live.remove(0)).unwrap();
                }
                i += 1;
            }
        })
    };
    let (mut n, mut families_seen) = (0, 0);
    while n < 15 {
        let cp = tmp.path().join(format!("cp{n}"));
        db.checkpoint(&cp).unwrap();
        let c = Db::open(&cp, tiny_options()).unwrap_or_else(|e| panic!("checkpoint {n}: {e}"));
        for name in c.cf_names() {
            let cf = c.cf(&name).unwrap();
            let keys = family_contents(&c, &cf).len();
            assert!(
                name == "default" || keys == 0 || keys == 10,
                "checkpoint {n}: family {name} holds {keys} keys"
            );
            families_seen += usize::from(name != "default");
        }
        c.close().unwrap();
        std::fs::remove_dir_all(&cp).unwrap();
        n += 1;
    }
    stop.store(true, Ordering::Relaxed);
    w.join().unwrap();
    assert!(families_seen > 0, "no checkpoint held a created family");
    Arc::try_unwrap(db).ok().unwrap().close().unwrap();
}
