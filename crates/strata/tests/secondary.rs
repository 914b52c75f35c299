//! Protects: `Db::open_secondary` and `Db::try_catch_up` (docs/ARCHITECTURE.md §7.6.1).
//! A secondary beside a writer that flushes, compacts and rolls its MANIFEST over
//! answers, after every catch-up, exactly as the writer did at the sequence the
//! secondary reports (every key by `get`, and full scans both ways); an iterator keeps
//! reading tables the writer's compactions deleted; secondaries need directories of
//! their own; writes are refused by name; families created and dropped by the writer
//! appear and go; a writer that closed and reopened is followed; a record being
//! appended is left for the next catch-up, and a damaged whole record is corruption.

mod common;

use common::{append_operator, family_contents, model_merge, tiny_options, ModelMap};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use strata::env::{FileLock, FileSystem, PosixFs, RandomAccessFile, SequentialFile, WritableFile};
use strata::{CfOptions, Db, ErrorKind, ReadOptions, WriteBatch, WriteOptions};

fn wo() -> WriteOptions {
    WriteOptions::default()
}

/// One acknowledged write of the writer: the sequence it ended at, and what it did.
#[derive(Clone, Debug)]
enum Done {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    Merge(Vec<u8>, Vec<u8>),
}

/// The writer's acknowledged writes, in order, each with the sequence it ended at.
type History = Arc<Mutex<Vec<(u64, Done)>>>;

/// The model of the writer's state at `sequence`.
fn model_at(history: &[(u64, Done)], sequence: u64) -> ModelMap {
    let mut m = ModelMap::new();
    for (_, op) in history.iter().take_while(|(s, _)| *s <= sequence) {
        match op {
            Done::Put(k, v) => {
                m.insert(k.clone(), v.clone());
            }
            Done::Delete(k) => {
                m.remove(k);
            }
            Done::Merge(k, v) => model_merge(&mut m, k, v),
        }
    }
    m
}

fn key(i: u32) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

/// One random write of the writer (puts, deletes and merges over 300 keys), recorded
/// in `history` with the sequence it ended at.
fn write_one(db: &Db, rng: &mut StdRng, n: usize, history: &History) {
    let k = key(rng.random_range(0..300));
    let v = format!("v{n}-{}", "x".repeat(rng.random_range(0..40))).into_bytes();
    let op = match rng.random_range(0..10u32) {
        0..=5 => {
            db.put(&wo(), &k, &v).unwrap();
            Done::Put(k, v)
        }
        6..=7 => {
            db.delete(&wo(), &k).unwrap();
            Done::Delete(k)
        }
        _ => {
            db.merge(&wo(), &k, &v).unwrap();
            Done::Merge(k, v)
        }
    };
    // One writing thread: the latest sequence is this write's.
    history.lock().unwrap().push((db.latest_sequence(), op));
}

/// Every key by `get`, and scans both ways, equal `model`.
fn check(secondary: &Db, model: &ModelMap, what: &str) {
    let ro = ReadOptions::default();
    for i in 0..300 {
        let k = key(i);
        assert_eq!(
            secondary.get(&ro, &k).unwrap().as_deref(),
            model.get(&k).map(Vec::as_slice),
            "{what}: get of {}",
            String::from_utf8_lossy(&k)
        );
    }
    let scanned = family_contents(secondary, &secondary.default_cf());
    let expected: Vec<(Vec<u8>, Vec<u8>)> =
        model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(scanned, expected, "{what}: full scan");
}

/// The writer's state at `sequence`, waiting for the writer to record the write that
/// ended there (it records right after the write returns).
fn model_when_recorded(history: &History, sequence: u64) -> ModelMap {
    loop {
        {
            let h = history.lock().unwrap();
            if h.last().is_some_and(|(s, _)| *s >= sequence) || sequence == 0 {
                return model_at(&h, sequence);
            }
        }
        std::thread::yield_now();
    }
}

/// A writer thread writes 6,000 times with 4 KiB memtables and 2 KiB tables (flushes,
/// compactions and MANIFEST roll-overs all the time) while a secondary catches up in a
/// loop; after every catch-up its answers equal the model at the sequence it reports.
#[test]
fn a_secondary_answers_as_the_writer_did_at_its_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, sec_dir) = (dir.path().join("db"), dir.path().join("secondary"));
    let writer = Arc::new(Db::open(&db_dir, tiny_options().with_create_if_missing(true)).unwrap());
    let history: History = Arc::default();
    let done = Arc::new(AtomicBool::new(false));
    let thread = {
        let (writer, history, done) = (Arc::clone(&writer), Arc::clone(&history), done.clone());
        std::thread::spawn(move || {
            let mut rng = StdRng::seed_from_u64(11);
            for n in 0..6000 {
                write_one(&writer, &mut rng, n, &history);
            }
            done.store(true, Ordering::Release);
        })
    };
    let secondary = Db::open_secondary(&db_dir, &sec_dir, tiny_options()).unwrap();
    let (mut catch_ups, mut changed, mut last) = (0, 0, 0);
    loop {
        let finished = done.load(Ordering::Acquire);
        let c = secondary.try_catch_up().unwrap();
        assert_eq!(c.sequence, secondary.latest_sequence());
        assert!(c.sequence >= last, "the sequence went back");
        last = c.sequence;
        let model = model_when_recorded(&history, c.sequence);
        check(
            &secondary,
            &model,
            &format!("after catch-up {catch_ups} at {}", c.sequence),
        );
        catch_ups += 1;
        changed += u32::from(c.version_changed);
        if finished {
            break;
        }
    }
    thread.join().unwrap();
    assert_eq!(
        last,
        writer.latest_sequence(),
        "the last catch-up saw every write"
    );
    assert!(
        changed >= 3,
        "the writer's versions were followed: {changed} of {catch_ups}"
    );
    eprintln!("{catch_ups} catch-ups, {changed} with a new version");
}

/// Tables in `dir` (numbers).
fn tables(dir: &Path) -> Vec<u64> {
    let mut out: Vec<u64> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".sst")?.parse().ok()
        })
        .collect();
    out.sort_unstable();
    out
}

/// An iterator of the secondary opened before the writer compacts every table it
/// reads away keeps reading them (through the secondary's links) to the end, with the
/// answers of its own state; once it is gone, a catch-up removes the links.
#[test]
fn an_iterator_reads_tables_the_writer_deleted_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, sec_dir) = (dir.path().join("db"), dir.path().join("secondary"));
    let writer = Db::open(&db_dir, tiny_options().with_create_if_missing(true)).unwrap();
    let history: History = Arc::default();
    let mut rng = StdRng::seed_from_u64(3);
    for n in 0..1500 {
        write_one(&writer, &mut rng, n, &history);
    }
    writer.flush().unwrap();
    let secondary = Db::open_secondary(&db_dir, &sec_dir, tiny_options()).unwrap();
    assert_eq!(
        secondary.property("strata.secondary-pinning").unwrap(),
        "links"
    );
    let seq = secondary.latest_sequence();
    let model = model_at(&history.lock().unwrap(), seq);
    let linked = tables(&sec_dir);
    assert!(linked.len() > 3, "tables linked: {linked:?}");
    let mut it = secondary.iter(&ReadOptions::default()).unwrap();
    it.seek_to_first();
    let mut seen = Vec::new();
    for _ in 0..5 {
        seen.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    for n in 1500..3000 {
        write_one(&writer, &mut rng, n, &history);
    }
    writer.flush().unwrap();
    writer.compact_range(None, None).unwrap();
    let gone: Vec<u64> = (linked.iter())
        .filter(|n| !tables(&db_dir).contains(n))
        .copied()
        .collect();
    assert!(!gone.is_empty(), "the writer deleted none of {linked:?}");
    secondary.try_catch_up().unwrap();
    // The iterator's version still names them: their links stay.
    for n in &gone {
        assert!(
            tables(&sec_dir).contains(n),
            "link of {n} removed under an iterator"
        );
    }
    while it.valid() {
        seen.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    let expected: Vec<(Vec<u8>, Vec<u8>)> =
        model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(seen, expected, "the iterator read its state to the end");
    drop(it);
    let c = secondary.try_catch_up().unwrap();
    check(
        &secondary,
        &model_at(&history.lock().unwrap(), c.sequence),
        "after",
    );
    let still: Vec<u64> = (gone.iter())
        .filter(|n| tables(&sec_dir).contains(n))
        .copied()
        .collect();
    assert!(still.is_empty(), "links nothing reads stayed: {still:?}");
}

/// Two secondaries follow one writer from two directories; a second secondary given
/// a directory in use, the database's own directory, or a database that does not
/// exist is refused by name.
#[test]
fn secondaries_need_directories_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let db_dir = dir.path().join("db");
    let (a_dir, b_dir) = (dir.path().join("a"), dir.path().join("b"));
    let writer = Db::open(&db_dir, tiny_options().with_create_if_missing(true)).unwrap();
    writer.put(&wo(), b"k", b"1").unwrap();
    let a = Db::open_secondary(&db_dir, &a_dir, tiny_options()).unwrap();
    let b = Db::open_secondary(&db_dir, &b_dir, tiny_options()).unwrap();
    let e = Db::open_secondary(&db_dir, &a_dir, tiny_options()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("in use by another secondary"), "{e}");
    let e = Db::open_secondary(&db_dir, &db_dir, tiny_options()).unwrap_err();
    assert!(e.to_string().contains("not a database"), "{e}");
    let e = Db::open_secondary(
        dir.path().join("none"),
        dir.path().join("c"),
        tiny_options(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("does not exist"), "{e}");
    writer.put(&wo(), b"k", b"2").unwrap();
    a.try_catch_up().unwrap();
    let ro = ReadOptions::default();
    assert_eq!(a.get(&ro, b"k").unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(b.get(&ro, b"k").unwrap().as_deref(), Some(&b"1"[..]));
    b.try_catch_up().unwrap();
    assert_eq!(b.get(&ro, b"k").unwrap().as_deref(), Some(&b"2"[..]));
    // Closed, its directory may be taken again.
    a.close().unwrap();
    let again = Db::open_secondary(&db_dir, &a_dir, tiny_options()).unwrap();
    assert_eq!(again.get(&ro, b"k").unwrap().as_deref(), Some(&b"2"[..]));
    // A read-write or read-only handle is no secondary.
    let e = writer.try_catch_up().unwrap_err();
    assert!(e.to_string().contains("secondary"), "{e}");
}

/// Every write path of a secondary is refused, naming the secondary open; nothing is
/// written.
#[test]
fn writes_to_a_secondary_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, sec_dir) = (dir.path().join("db"), dir.path().join("secondary"));
    let writer = Db::open(&db_dir, tiny_options().with_create_if_missing(true)).unwrap();
    writer.put(&wo(), b"k", b"1").unwrap();
    let s = Db::open_secondary(&db_dir, &sec_dir, tiny_options()).unwrap();
    let mut batch = WriteBatch::new();
    batch.put(b"a", b"b");
    let refusals = [
        s.put(&wo(), b"k", b"2").unwrap_err(),
        s.delete(&wo(), b"k").unwrap_err(),
        s.merge(&wo(), b"k", b"2").unwrap_err(),
        s.write(&wo(), batch).unwrap_err(),
        s.flush().unwrap_err(),
        s.compact_range(None, None).unwrap_err(),
        s.create_cf("new", CfOptions::default()).unwrap_err(),
        s.checkpoint(dir.path().join("cp")).unwrap_err(),
    ];
    for e in refusals {
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(e.to_string().contains("secondary instance"), "{e}");
    }
    s.wait_for_compactions().unwrap();
    assert_eq!(
        s.get(&ReadOptions::default(), b"k").unwrap().as_deref(),
        Some(&b"1"[..])
    );
}

/// Families the writer creates (with writes in them) and drops appear and go at the
/// next catch-up; a handle of a dropped family still reads what it held.
#[test]
fn families_created_and_dropped_by_the_writer_follow() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, sec_dir) = (dir.path().join("db"), dir.path().join("secondary"));
    let family = CfOptions::default().with_merge_operator(Some(append_operator()));
    let writer = Db::open(&db_dir, tiny_options().with_create_if_missing(true)).unwrap();
    let s = Db::open_secondary(&db_dir, &sec_dir, tiny_options()).unwrap();
    assert_eq!(s.cf_names(), vec!["default"]);
    let logs = writer.create_cf("logs", family.clone()).unwrap();
    for i in 0..400 {
        writer.put_cf(&wo(), &logs, &key(i), b"in logs").unwrap();
    }
    writer.merge_cf(&wo(), &logs, &key(1), b"more").unwrap();
    s.try_catch_up().unwrap();
    assert_eq!(s.cf_names(), vec!["default", "logs"]);
    let slogs = s.cf("logs").unwrap();
    let ro = ReadOptions::default();
    assert_eq!(
        s.get_cf(&ro, &slogs, &key(1)).unwrap().as_deref(),
        Some(&b"in logs,more"[..])
    );
    assert_eq!(family_contents(&s, &slogs).len(), 400);
    writer.flush_cf(&logs).unwrap();
    writer.drop_cf(&logs).unwrap();
    let other = writer.create_cf("other", family).unwrap();
    writer.put_cf(&wo(), &other, b"o", b"1").unwrap();
    s.try_catch_up().unwrap();
    assert_eq!(s.cf_names(), vec!["default", "other"]);
    assert!(s.cf("logs").is_none());
    assert!(slogs.is_dropped());
    assert_eq!(
        family_contents(&s, &slogs).len(),
        400,
        "a dropped family's handle reads on"
    );
    let sother = s.cf("other").unwrap();
    assert_eq!(
        s.get_cf(&ro, &sother, b"o").unwrap().as_deref(),
        Some(&b"1"[..])
    );
}

/// MANIFEST number of `CURRENT` in `db`.
fn manifest_number(db: &Path) -> String {
    std::fs::read_to_string(db.join("CURRENT")).unwrap()
}

/// The writer rolls its MANIFEST over (16 KiB limit) and later closes and reopens
/// (a new MANIFEST and WAL, the old WALs flushed and deleted); the secondary follows
/// both.
#[test]
fn a_secondary_follows_manifest_roll_overs_and_a_reopened_writer() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, sec_dir) = (dir.path().join("db"), dir.path().join("secondary"));
    let opts = tiny_options();
    let mut writer = Db::open(&db_dir, opts.clone().with_create_if_missing(true)).unwrap();
    let history: History = Arc::default();
    let mut rng = StdRng::seed_from_u64(5);
    let s = Db::open_secondary(&db_dir, &sec_dir, opts.clone()).unwrap();
    let first = manifest_number(&db_dir);
    let mut n = 0;
    while manifest_number(&db_dir) == first {
        for _ in 0..200 {
            write_one(&writer, &mut rng, n, &history);
            n += 1;
        }
        assert!(n < 200_000, "no roll-over");
    }
    let c = s.try_catch_up().unwrap();
    assert!(c.version_changed);
    check(
        &s,
        &model_at(&history.lock().unwrap(), c.sequence),
        "after a roll-over",
    );
    assert_eq!(c.sequence, writer.latest_sequence());
    for round in 0..3 {
        for _ in 0..300 {
            write_one(&writer, &mut rng, n, &history);
            n += 1;
        }
        writer.close().unwrap();
        let c = s.try_catch_up().unwrap();
        let what = format!("writer closed, round {round}");
        check(&s, &model_at(&history.lock().unwrap(), c.sequence), &what);
        writer = Db::open(&db_dir, opts.clone()).unwrap();
        for _ in 0..100 {
            write_one(&writer, &mut rng, n, &history);
            n += 1;
        }
        let c = s.try_catch_up().unwrap();
        assert_eq!(c.sequence, writer.latest_sequence(), "round {round}");
        let what = format!("writer reopened, round {round}");
        check(&s, &model_at(&history.lock().unwrap(), c.sequence), &what);
    }
}

/// The newest WAL of `db`.
fn newest_wal(db: &Path) -> std::path::PathBuf {
    let mut wals: Vec<_> = std::fs::read_dir(db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    wals.sort();
    wals.pop().unwrap()
}

/// A WAL record cut short (the writer mid-append) is not read until it is whole, and
/// is no error; a whole record that fails its checksum is `Corruption` naming the WAL.
#[test]
fn a_torn_wal_tail_waits_and_a_damaged_record_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, sec_dir) = (dir.path().join("db"), dir.path().join("secondary"));
    let opts = tiny_options().with_write_buffer_size(1 << 20);
    let writer = Db::open(&db_dir, opts.clone().with_create_if_missing(true)).unwrap();
    writer.put(&wo(), b"a", b"1").unwrap();
    let s = Db::open_secondary(&db_dir, &sec_dir, opts).unwrap();
    let wal = newest_wal(&db_dir);
    let before = std::fs::read(&wal).unwrap();
    writer.put(&wo(), b"b", &[7u8; 3000]).unwrap();
    let whole = std::fs::read(&wal).unwrap();
    assert!(whole.len() > before.len() + 3000);
    // Half of the record, as a reader sees a write in progress.
    let half = before.len() + (whole.len() - before.len()) / 2;
    std::fs::write(&wal, &whole[..half]).unwrap();
    let ro = ReadOptions::default();
    let c = s.try_catch_up().unwrap();
    assert_eq!(c.records, 0);
    assert_eq!(s.get(&ro, b"b").unwrap(), None);
    assert_eq!(s.get(&ro, b"a").unwrap().as_deref(), Some(&b"1"[..]));
    std::fs::write(&wal, &whole).unwrap();
    let c = s.try_catch_up().unwrap();
    assert_eq!(c.records, 1);
    assert_eq!(s.get(&ro, b"b").unwrap().as_deref(), Some(&[7u8; 3000][..]));
    // A whole record with a flipped payload byte, followed by another.
    let start = whole.len();
    writer.put(&wo(), b"c", b"3").unwrap();
    writer.put(&wo(), b"d", b"4").unwrap();
    let mut damaged = std::fs::read(&wal).unwrap();
    damaged[start + 10] ^= 0xff;
    std::fs::write(&wal, &damaged).unwrap();
    let e = s.try_catch_up().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains(".log"), "{e}");
    // The failed catch-up installed nothing.
    assert_eq!(s.get(&ro, b"b").unwrap().as_deref(), Some(&[7u8; 3000][..]));
    assert_eq!(s.get(&ro, b"c").unwrap(), None);
}

/// A snapshot of a secondary reads until a catch-up installs tables with newer
/// entries; then it is refused (the writer's compactions may have dropped what it
/// would read), never answered wrongly.
#[test]
fn an_old_snapshot_of_a_secondary_is_refused_not_misread() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, sec_dir) = (dir.path().join("db"), dir.path().join("secondary"));
    let writer = Db::open(&db_dir, tiny_options().with_create_if_missing(true)).unwrap();
    writer.put(&wo(), b"k", b"1").unwrap();
    let s = Db::open_secondary(&db_dir, &sec_dir, tiny_options()).unwrap();
    let snapshot = s.snapshot();
    let at = ReadOptions::default().with_snapshot(snapshot);
    writer.put(&wo(), b"k", b"2").unwrap();
    s.try_catch_up().unwrap();
    assert_eq!(s.get(&at, b"k").unwrap().as_deref(), Some(&b"1"[..]));
    let batch = s.multi_get(&at, &[b"k"]);
    assert_eq!(batch[0].as_ref().unwrap().as_deref(), Some(&b"1"[..]));
    writer.flush().unwrap();
    writer.compact_range(None, None).unwrap();
    s.try_catch_up().unwrap();
    let e = s.get(&at, b"k").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(s.iter(&at).is_err());
    // The batch read is refused the same way, never answered from the newer view.
    let batch = s.multi_get(&at, &[&b"k"[..], &b"absent"[..]]);
    for answer in &batch {
        let e = answer.as_ref().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    }
    assert_eq!(
        s.get(&ReadOptions::default(), b"k").unwrap().as_deref(),
        Some(&b"2"[..])
    );
}

/// The file system of a secondary that shows one WAL cut at `limit` bytes the next
/// time it is opened: a reader that read the WAL's end just before the writer's last
/// appends to it (and before the writer moved on to the next WAL).
struct HideTailOnce {
    wal: Mutex<Option<(std::path::PathBuf, usize)>>,
}

struct Cut {
    inner: Box<dyn SequentialFile>,
    left: usize,
}

impl SequentialFile for Cut {
    fn read(&mut self, buf: &mut [u8]) -> strata::Result<usize> {
        let n = buf.len().min(self.left);
        let got = self.inner.read(&mut buf[..n])?;
        self.left -= got;
        Ok(got)
    }
}

impl FileSystem for HideTailOnce {
    fn create(&self, path: &Path) -> strata::Result<Box<dyn WritableFile>> {
        PosixFs.create(path)
    }
    fn open_random(&self, path: &Path) -> strata::Result<Arc<dyn RandomAccessFile>> {
        PosixFs.open_random(path)
    }
    fn open_sequential(&self, path: &Path) -> strata::Result<Box<dyn SequentialFile>> {
        let inner = PosixFs.open_sequential(path)?;
        let mut hide = self.wal.lock().unwrap();
        match hide.take() {
            Some((wal, limit)) if wal == path => Ok(Box::new(Cut { inner, left: limit })),
            other => {
                *hide = other;
                Ok(inner)
            }
        }
    }
    fn rename(&self, from: &Path, to: &Path) -> strata::Result<()> {
        PosixFs.rename(from, to)
    }
    fn remove(&self, path: &Path) -> strata::Result<()> {
        PosixFs.remove(path)
    }
    fn list(&self, dir: &Path) -> strata::Result<Vec<String>> {
        PosixFs.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> strata::Result<()> {
        PosixFs.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> strata::Result<()> {
        PosixFs.sync_dir(dir)
    }
    fn exists(&self, path: &Path) -> bool {
        PosixFs.exists(path)
    }
    fn file_size(&self, path: &Path) -> strata::Result<u64> {
        PosixFs.file_size(path)
    }
    fn lock(&self, path: &Path) -> strata::Result<Box<dyn FileLock>> {
        PosixFs.lock(path)
    }
    fn link(&self, from: &Path, to: &Path) -> strata::Result<()> {
        PosixFs.link(from, to)
    }
}

/// A catch-up that read an older WAL's end before the writer's last appends to it, and
/// then finds records in the newer WAL, reads the older one again before applying
/// them: it never shows a write without every write before it.
#[test]
fn a_newer_wals_records_wait_for_the_older_wals_end() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, sec_dir) = (dir.path().join("db"), dir.path().join("secondary"));
    let opts = tiny_options().with_write_buffer_size(1 << 20);
    let writer = Db::open(&db_dir, opts.clone().with_create_if_missing(true)).unwrap();
    let b = writer.create_cf("b", CfOptions::default()).unwrap();
    writer.put_cf(&wo(), &b, b"k1", b"1").unwrap();
    let fs = Arc::new(HideTailOnce {
        wal: Mutex::new(None),
    });
    let s = Db::builder()
        .file_system(fs.clone())
        .open_secondary(&db_dir, &sec_dir, opts)
        .unwrap();
    let older = newest_wal(&db_dir);
    let seen = std::fs::metadata(&older).unwrap().len() as usize;
    writer.put_cf(&wo(), &b, b"k2", b"2").unwrap();
    writer.put(&wo(), b"x", b"x").unwrap();
    // Switches the WAL; `b` still needs the older one.
    writer.flush_cf(&writer.default_cf()).unwrap();
    writer.put_cf(&wo(), &b, b"k3", b"3").unwrap();
    assert_ne!(newest_wal(&db_dir), older);
    assert!(older.exists());
    *fs.wal.lock().unwrap() = Some((older, seen));
    let c = s.try_catch_up().unwrap();
    assert_eq!(c.sequence, writer.latest_sequence());
    let sb = s.cf("b").unwrap();
    let ro = ReadOptions::default();
    assert_eq!(
        s.get_cf(&ro, &sb, b"k3").unwrap().as_deref(),
        Some(&b"3"[..])
    );
    assert_eq!(
        s.get_cf(&ro, &sb, b"k2").unwrap().as_deref(),
        Some(&b"2"[..]),
        "k3 shown without k2 before it"
    );
    assert_eq!(s.get(&ro, b"x").unwrap().as_deref(), Some(&b"x"[..]));
}

/// What a catch-up costs (run by hand, ideally with `--release`): after 50,000 writes
/// in the WAL alone, and after 200 flushes (each a MANIFEST edit adding a table, which
/// the catch-up links).
#[test]
#[ignore = "a measurement, run by hand"]
fn catch_up_cost() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, sec_dir) = (dir.path().join("db"), dir.path().join("secondary"));
    let opts = tiny_options()
        .with_write_buffer_size(64 << 20)
        .with_max_manifest_file_size(64 << 20)
        .with_level0_file_num_compaction_trigger(1000)
        .with_level0_slowdown_writes_trigger(1000)
        .with_level0_stop_writes_trigger(1000);
    let writer = Db::open(&db_dir, opts.clone().with_create_if_missing(true)).unwrap();
    writer.put(&wo(), b"start", b"1").unwrap();
    let s = Db::open_secondary(&db_dir, &sec_dir, opts).unwrap();
    for i in 0..50_000u32 {
        writer.put(&wo(), &key(i), &[b'v'; 100]).unwrap();
    }
    let t = std::time::Instant::now();
    let c = s.try_catch_up().unwrap();
    eprintln!(
        "50,000 WAL records: {:?} ({} records)",
        t.elapsed(),
        c.records
    );
    let t = std::time::Instant::now();
    let c = s.try_catch_up().unwrap();
    eprintln!("nothing new: {:?} ({} records)", t.elapsed(), c.records);
    for i in 0..200u32 {
        writer.put(&wo(), &key(i), b"flushed").unwrap();
        writer.flush().unwrap();
    }
    let t = std::time::Instant::now();
    let c = s.try_catch_up().unwrap();
    eprintln!(
        "200 MANIFEST edits: {:?} ({} tables linked, {} records)",
        t.elapsed(),
        c.tables_added,
        c.records
    );
}
