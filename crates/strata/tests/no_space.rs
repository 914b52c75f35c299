//! A full disk is survived without reopening (docs/ARCHITECTURE.md §7.8).
//!
//! What it protects: `ENOSPC` at a WAL append, a flush, a compaction or a MANIFEST
//! edit moves the database to the no-space state instead of poisoning it. Writes are
//! refused with [`ErrorKind::NoSpace`] and nothing half-applied remains (the WAL record
//! cut at the short write is gone, the refused write reads as absent now and after a
//! crash); reads keep working; every acknowledged write stays readable; once space is
//! free the database resumes by itself, or at once on `Db::resume`, and the flushes and
//! compactions that failed run again. A failed fsync stays fatal.
//!
//! The disk is a [`FaultFs`] with a byte quota (a short write keeps what fits, as a
//! real full disk does) or with an injected `ENOSPC`.

mod common;

use common::{db_scan, key, on, tiny_options};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use strata::env::{FaultFs, FaultKinds, FaultRule};
use strata::{Db, ErrorKind, Options, ReadOptions, WriteOptions};

const DIR: &str = "/db";

fn sync() -> WriteOptions {
    WriteOptions::default().with_sync(true)
}

fn value(i: u32, round: u32, len: usize) -> Vec<u8> {
    let mut v = format!("v{i}-r{round}-").into_bytes();
    v.resize(len, b'a' + (i % 26) as u8);
    v
}

/// `e` and its causes, one message each.
fn cause_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// Every key of `model` reads as the model says, by point reads and by one scan.
fn check(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>, what: &str) {
    for (k, v) in model {
        let got = db
            .get(&ReadOptions::default(), k)
            .unwrap_or_else(|e| panic!("{what}: get: {e}"));
        assert_eq!(
            got.as_ref(),
            Some(v),
            "{what}: key {:?}",
            String::from_utf8_lossy(k)
        );
    }
    let scanned: BTreeMap<_, _> = db_scan(db, None, true, &None, &None, usize::MAX)
        .unwrap_or_else(|e| panic!("{what}: scan: {e}"))
        .into_iter()
        .collect();
    assert!(scanned == *model, "{what}: the scan differs from the model");
}

/// Waits until the database accepts writes again by itself (no `resume` call):
/// polls the resume counter. Returns the time it took.
fn wait_for_auto_resume(db: &Db, resumes_before: u64) -> Duration {
    let start = Instant::now();
    while db.stats().counters.no_space_resumes == resumes_before {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the database did not resume by itself within 20 s"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    start.elapsed()
}

/// A WAL append meets a full disk: the short write is cut back off, the write and
/// every later one are refused with `NoSpace`, reads keep working, and after the
/// quota is raised the database resumes by itself; a crash then recovers exactly the
/// acknowledged writes.
#[test]
fn full_wal_append_is_cut_back_and_the_database_resumes_by_itself() {
    let fs = FaultFs::new();
    // A memtable far larger than the test writes: only the WAL takes space.
    let opts = Options::default().with_write_buffer_size(64 << 20);
    let db = on(&fs).open(DIR, opts.clone()).expect("open");
    let mut model = BTreeMap::new();
    for i in 0..100u32 {
        db.put(&sync(), &key(i), &value(i, 0, 100)).expect("put");
        model.insert(key(i), value(i, 0, 100));
    }
    let wal_before: Vec<_> = fs
        .files()
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".log"))
        .map(|p| (fs.file_bytes(&p).map(|b| b.len()), p))
        .collect();
    // Room for a few hundred bytes: the next large write is a short write.
    fs.set_quota(Some(fs.used_bytes() + 300));
    let err = db
        .put(&sync(), &key(1000), &value(1000, 0, 4000))
        .expect_err("a write larger than the free space must fail");
    assert_eq!(err.kind(), ErrorKind::NoSpace, "{err}");
    assert!(err.is_retryable(), "{err}");
    // The partial record was cut off: every WAL has the bytes it had.
    for (len, p) in &wal_before {
        assert_eq!(
            fs.file_bytes(p).map(|b| b.len()),
            *len,
            "{} was not cut back",
            p.display()
        );
    }
    // Later writes are refused before they are appended, even small ones that fit.
    let ops = fs.op_count();
    for i in 0..5u32 {
        let e = db
            .put(&WriteOptions::default(), &key(2000 + i), b"x")
            .expect_err("refused");
        assert_eq!(e.kind(), ErrorKind::NoSpace, "{e}");
    }
    assert_eq!(fs.op_count(), ops, "a refused write touched the disk");
    let e = db.flush().expect_err("flush while out of space");
    assert_eq!(e.kind(), ErrorKind::NoSpace, "{e}");
    check(&db, &model, "while out of space");
    let c = db.stats().counters;
    assert_eq!(c.no_space_errors, 1);
    assert_eq!(c.no_space_writes_refused, 6);

    // Space is freed: the database resumes by itself.
    let resumes = c.no_space_resumes;
    fs.set_quota(None);
    let took = wait_for_auto_resume(&db, resumes);
    assert!(took < Duration::from_secs(3), "resumed after {took:?}");
    for i in 100..150u32 {
        db.put(&sync(), &key(i), &value(i, 1, 100))
            .expect("put after resume");
        model.insert(key(i), value(i, 1, 100));
    }
    check(&db, &model, "after the resume");
    drop(db);
    fs.crash();
    let db = on(&fs).open(DIR, opts).expect("reopen after crash");
    check(&db, &model, "after a crash");
}

/// `Db::resume` reports a disk that is still full, leaves the state on success, and
/// is a no-op on a healthy database.
#[test]
fn resume_says_whether_the_disk_has_space() {
    let fs = FaultFs::new();
    let db = on(&fs).open(DIR, Options::default()).expect("open");
    db.resume().expect("a healthy database resumes trivially");
    db.put(&sync(), b"a", b"1").expect("put");
    fs.set_quota(Some(fs.used_bytes()));
    let e = db.put(&sync(), b"b", &[7u8; 1000]).expect_err("full");
    assert_eq!(e.kind(), ErrorKind::NoSpace, "{e}");
    let e = db.resume().expect_err("still full");
    assert_eq!(e.kind(), ErrorKind::NoSpace, "{e}");
    assert!(e.to_string().contains("no space"), "{e}");
    assert!(
        fs.files()
            .iter()
            .all(|p| !p.to_string_lossy().contains("NO_SPACE_PROBE")),
        "a failed probe left its file: {:?}",
        fs.files()
    );
    fs.set_quota(None);
    db.resume().expect("resume after space was freed");
    db.put(&sync(), b"b", b"2").expect("put after resume");
    assert_eq!(
        db.get(&ReadOptions::default(), b"a").expect("get"),
        Some(b"1".to_vec())
    );
    assert_eq!(
        db.get(&ReadOptions::default(), b"b").expect("get"),
        Some(b"2".to_vec())
    );
    let c = db.stats().counters;
    assert_eq!((c.no_space_errors, c.no_space_resumes), (1, 1));
    assert!(
        c.no_space_resume_attempts >= 2,
        "{}",
        c.no_space_resume_attempts
    );
}

/// A writer that keeps going through a disk that fills up again and again, with
/// flushes and compactions meeting the full disk: each refusal waits for space (which
/// the "operator" frees by raising the quota), nothing acknowledged is lost, the
/// database is never poisoned, and no partial table is left behind.
#[test]
fn flushes_and_compactions_survive_a_disk_that_keeps_filling() {
    let fs = FaultFs::new();
    let opts = tiny_options();
    let db = on(&fs).open(DIR, opts.clone()).expect("open");
    let mut model = BTreeMap::new();
    fs.set_quota(Some(fs.used_bytes() + (256 << 10)));
    let mut refusals = 0u32;
    let mut deferred = 0u32;
    let mut i = 0u32;
    let mut round = 0u32;
    while i < 1500 {
        let k = key(i * 7 % 2400);
        let v = value(i, round, 600 + (i % 5) as usize * 200);
        match db.put(&WriteOptions::default(), &k, &v) {
            Ok(()) => {
                model.insert(k, v);
                i += 1;
                if i.is_multiple_of(500) {
                    round += 1;
                }
            }
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::NoSpace, "write {i}: {e}");
                refusals += 1;
                // A write stalled behind a compaction that had no room to start
                // (`db::room`): the database itself is not in the no-space state.
                deferred += u32::from(cause_chain(&e).contains("to start a compaction"));
                assert!(refusals < 100, "the disk never got room");
                check(&db, &model, "while out of space");
                // The operator frees space (enough for the resume probe, 1 MiB), and
                // another tenant of the disk soon takes most of it again, so the
                // disk fills again after 256 KiB more (more than any compaction of
                // these options writes at once: with less, a compaction could never
                // finish, and writes would be refused for good).
                fs.set_quota(Some(fs.used_bytes() + (1 << 20) + (256 << 10)));
                db.resume().expect("resume after space was freed");
                fs.set_quota(Some(fs.used_bytes() + (256 << 10)));
            }
        }
    }
    fs.set_quota(None);
    loop {
        match db.wait_for_compactions() {
            Ok(()) => break,
            Err(e) if e.kind() == ErrorKind::NoSpace => db.resume().expect("resume"),
            Err(e) => panic!("settle: {e}"),
        }
    }
    check(&db, &model, "after the run");
    let c = db.stats().counters;
    assert!(refusals >= 5, "the disk filled only {refusals} times");
    assert_eq!(c.no_space_errors, u64::from(refusals - deferred), "{c:?}");
    assert!(
        deferred == 0 || c.compactions_deferred_for_space > 0,
        "{c:?}"
    );
    assert_eq!(c.no_space_resumes, c.no_space_errors);
    assert!(c.flush_bytes_written > 0);
    assert!(c.compaction_bytes_written > 0);
    // Every table file on disk is live: the partial outputs of failed jobs are gone.
    // (Flushed first, so the reopen replays no WAL into a new table.)
    db.flush().expect("flush");
    db.wait_for_compactions().expect("settle");
    db.close().expect("close");
    let tables_on_disk = fs
        .files()
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(".sst"))
        .count();
    let db = on(&fs).open(DIR, opts.clone()).expect("reopen");
    // Virtual tables (delayed compaction) are metadata only: no file of their own.
    let live: usize = db
        .stats()
        .levels
        .iter()
        .map(|l| l.files - l.virtual_files)
        .sum();
    assert_eq!(tables_on_disk, live, "tables left behind");
    check(&db, &model, "after reopen");
    drop(db);
    fs.crash();
    let db = on(&fs).open(DIR, opts).expect("reopen after crash");
    check(&db, &model, "after a crash");
}

/// A MANIFEST append meets a full disk: the record is cut back off, the job is
/// abandoned, the database refuses writes until space is back, and then the flush
/// runs again; the MANIFEST recovers cleanly.
#[test]
fn full_manifest_append_is_cut_back_and_the_flush_runs_again() {
    let fs = FaultFs::new();
    let opts = Options::default();
    let db = on(&fs).open(DIR, opts.clone()).expect("open");
    let mut model = BTreeMap::new();
    for i in 0..200u32 {
        db.put(&WriteOptions::default(), &key(i), &value(i, 0, 50))
            .expect("put");
        model.insert(key(i), value(i, 0, 50));
    }
    fs.inject(
        FaultRule::once(FaultKinds::WRITE, 0)
            .on_path("MANIFEST-")
            .no_space(),
    );
    let e = db
        .flush()
        .expect_err("the flush's MANIFEST edit meets a full disk");
    assert_eq!(e.kind(), ErrorKind::NoSpace, "{e}");
    assert_eq!(fs.faults_injected(), 1);
    check(&db, &model, "while out of space");
    db.resume().expect("resume");
    db.flush().expect("flush after resume");
    assert_eq!(db.stats().levels[0].files, 1, "the flush ran again once");
    db.put(&sync(), b"after", b"1").expect("put");
    model.insert(b"after".to_vec(), b"1".to_vec());
    drop(db);
    fs.crash();
    let db = on(&fs).open(DIR, opts).expect("reopen after crash");
    check(&db, &model, "after a crash");
}

/// A MANIFEST roll-over meets a full disk: the new MANIFEST, which `CURRENT` never
/// named, is removed and the old one stays in use.
#[test]
fn full_disk_during_manifest_rollover_keeps_the_old_manifest() {
    let fs = FaultFs::new();
    let opts = tiny_options().with_max_manifest_file_size(1024);
    let db = on(&fs).open(DIR, opts.clone()).expect("open");
    let mut model = BTreeMap::new();
    let manifests = |fs: &FaultFs| {
        fs.files()
            .into_iter()
            .filter(|p| p.to_string_lossy().contains("MANIFEST-"))
            .collect::<Vec<std::path::PathBuf>>()
    };
    let mut failed = false;
    for i in 0..400u32 {
        if i == 10 {
            // The next create of a MANIFEST is a roll-over's (whichever thread's).
            fs.inject(
                FaultRule::once(FaultKinds::CREATE, 0)
                    .on_path("MANIFEST-")
                    .no_space(),
            );
        }
        while let Err(e) = db.put(&WriteOptions::default(), &key(i), &value(i, 0, 100)) {
            assert_eq!(e.kind(), ErrorKind::NoSpace, "{e}");
            assert!(!failed, "the disk filled twice: {e}");
            failed = true;
            // No MANIFEST newer than the one `CURRENT` names is left behind (an
            // older one may wait for its deletion).
            let current =
                String::from_utf8(fs.file_bytes("/db/CURRENT").expect("CURRENT")).expect("utf-8");
            let current = format!("/db/{}", current.trim());
            assert!(
                manifests(&fs)
                    .iter()
                    .all(|m| m.to_string_lossy().as_ref() <= current.as_str()),
                "{current}: {:?}",
                manifests(&fs)
            );
            db.resume().expect("resume");
        }
        model.insert(key(i), value(i, 0, 100));
    }
    loop {
        match db.wait_for_compactions() {
            Ok(()) => break,
            Err(e) if e.kind() == ErrorKind::NoSpace => {
                failed = true;
                db.resume().expect("resume")
            }
            Err(e) => panic!("settle: {e}"),
        }
    }
    assert!(failed, "no roll-over met the full disk");
    check(&db, &model, "after the run");
    db.close().expect("close");
    fs.crash();
    let db = on(&fs).open(DIR, opts).expect("reopen after crash");
    check(&db, &model, "after a crash");
}

/// A failed fsync stays fatal even when it says the disk is full.
#[test]
fn enospc_on_fsync_still_poisons() {
    let fs = FaultFs::new();
    let db = on(&fs).open(DIR, Options::default()).expect("open");
    db.put(&sync(), b"a", b"1").expect("put");
    fs.inject(
        FaultRule::once(FaultKinds::SYNC, 0)
            .on_path(".log")
            .no_space(),
    );
    let e = db.put(&sync(), b"b", b"2").expect_err("the fsync fails");
    assert_eq!(e.kind(), ErrorKind::Poisoned, "{e}");
    let e = db
        .resume()
        .expect_err("a poisoned database does not resume");
    assert_eq!(e.kind(), ErrorKind::Poisoned, "{e}");
}

/// A file system that fails the directory sync right after `CURRENT` is renamed, as
/// `PosixFs` does when opening the directory meets `EMFILE` (`IoOp::OpenDir`, an
/// operation that is retryable elsewhere). Found by review: the roll-over took that
/// for a failure before the rename and removed the new MANIFEST that `CURRENT` already
/// named, and a restart then found no MANIFEST.
struct FailDirSyncAfterCurrent {
    fs: FaultFs,
    armed: std::sync::atomic::AtomicBool,
    pending: std::sync::atomic::AtomicBool,
    fired: std::sync::atomic::AtomicU32,
}

impl strata::env::FileSystem for FailDirSyncAfterCurrent {
    fn create(&self, p: &Path) -> strata::Result<Box<dyn strata::env::WritableFile>> {
        self.fs.create(p)
    }
    fn open_random(&self, p: &Path) -> strata::Result<Arc<dyn strata::env::RandomAccessFile>> {
        self.fs.open_random(p)
    }
    fn open_sequential(&self, p: &Path) -> strata::Result<Box<dyn strata::env::SequentialFile>> {
        self.fs.open_sequential(p)
    }
    fn rename(&self, from: &Path, to: &Path) -> strata::Result<()> {
        self.fs.rename(from, to)?;
        if to.ends_with("CURRENT") && self.armed.swap(false, Ordering::SeqCst) {
            self.pending.store(true, Ordering::SeqCst);
        }
        Ok(())
    }
    fn remove(&self, p: &Path) -> strata::Result<()> {
        self.fs.remove(p)
    }
    fn list(&self, d: &Path) -> strata::Result<Vec<String>> {
        self.fs.list(d)
    }
    fn create_dir_all(&self, d: &Path) -> strata::Result<()> {
        self.fs.create_dir_all(d)
    }
    fn sync_dir(&self, d: &Path) -> strata::Result<()> {
        if self.pending.swap(false, Ordering::SeqCst) {
            self.fired.fetch_add(1, Ordering::SeqCst);
            let emfile = std::io::Error::from_raw_os_error(libc::EMFILE);
            return Err(strata::Error::io(strata::IoOp::OpenDir, d, emfile));
        }
        self.fs.sync_dir(d)
    }
    fn exists(&self, p: &Path) -> bool {
        self.fs.exists(p)
    }
    fn file_size(&self, p: &Path) -> strata::Result<u64> {
        self.fs.file_size(p)
    }
    fn lock(&self, p: &Path) -> strata::Result<Box<dyn strata::env::FileLock>> {
        self.fs.lock(p)
    }
}

/// After `CURRENT` is renamed to a roll-over's new MANIFEST, a failure is never taken
/// for a full disk or a retryable open: the MANIFEST `CURRENT` names stays, the
/// database is poisoned, and a restart opens with every synced write.
#[test]
fn a_failure_after_current_is_renamed_never_removes_the_manifest_it_names() {
    let fs = FaultFs::new();
    let wrapped = Arc::new(FailDirSyncAfterCurrent {
        fs: fs.clone(),
        armed: false.into(),
        pending: false.into(),
        fired: 0.into(),
    });
    let opts = tiny_options().with_max_manifest_file_size(1024);
    let db = Db::builder()
        .file_system(wrapped.clone())
        .open(DIR, opts.clone())
        .expect("open");
    let mut model = BTreeMap::new();
    for i in 0..5000u32 {
        if i == 20 {
            wrapped.armed.store(true, Ordering::SeqCst);
        }
        if db.put(&sync(), &key(i), &value(i, 0, 100)).is_err() {
            break;
        }
        model.insert(key(i), value(i, 0, 100));
        if wrapped.fired.load(Ordering::SeqCst) > 0 {
            break;
        }
    }
    assert_eq!(
        wrapped.fired.load(Ordering::SeqCst),
        1,
        "no roll-over met the failure"
    );
    // Whatever thread met it, the database refuses writes as poisoned from now on.
    let start = Instant::now();
    let e = loop {
        match db.put(&sync(), b"after", b"x") {
            Err(e) => break e,
            Ok(()) => {
                assert!(start.elapsed() < Duration::from_secs(10), "never poisoned");
                model.insert(b"after".to_vec(), b"x".to_vec());
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    };
    assert_eq!(e.kind(), ErrorKind::Poisoned, "{e}");
    let named = String::from_utf8(fs.file_bytes("/db/CURRENT").expect("CURRENT")).expect("utf-8");
    let named = format!("/db/{}", named.trim());
    assert!(
        fs.files().iter().any(|p| p.to_string_lossy() == named),
        "CURRENT names {named}, which is gone: {:?}",
        fs.files()
    );
    drop(db);
    fs.crash_with(strata::env::CrashMode::KeepAll);
    let db = on(&fs)
        .open(DIR, opts)
        .expect("reopen after a process crash");
    check(&db, &model, "after the restart");
}
