//! Protects: incremental backups (`strata::backup`, docs/ARCHITECTURE.md §7.7.1). A
//! restored backup opens to exactly the state at its creation (every family, merges,
//! range deletes, unflushed writes); a second backup of a slightly changed database
//! copies only what changed; `verify` and `restore` catch a flipped byte or a missing
//! file by name; backups beside a writer are prefixes of its writes; a crash at any
//! file operation of a create or a restore leaves the earlier backups (or the new one
//! whole) and no leftovers; bad input is refused by name and changes nothing; purge
//! keeps the newest backups and exactly the tables they name.

mod common;

use common::{
    append_operator, family_contents, model_delete_range, model_merge, on, tiny_options, ModelMap,
};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use strata::backup::BackupEngine;
use strata::env::{FaultFs, FaultKinds, FaultRule};
use strata::{CfHandle, CfOptions, Db, ErrorKind, Options, ReadOptions, WriteOptions};

fn wo() -> WriteOptions {
    WriteOptions::default()
}

fn contents(m: &ModelMap) -> Vec<(Vec<u8>, Vec<u8>)> {
    m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn family() -> CfOptions {
    CfOptions::default().with_merge_operator(Some(append_operator()))
}

/// Writes `n` rounds into the default family (puts, a range delete) and `logs`
/// (merges), flushing and compacting along the way; the last writes stay in the WAL.
fn fill(db: &Db, logs: &CfHandle, models: &mut [ModelMap; 2], round: u32, n: u32) {
    for i in 0..n {
        let k = format!("k{:03}", i % 250).into_bytes();
        let v = format!("r{round}-v{i}").into_bytes();
        if i % 3 == 0 {
            db.merge_cf(&wo(), logs, &k, &v).unwrap();
            model_merge(&mut models[1], &k, &v);
        } else {
            db.put(&wo(), &k, &v).unwrap();
            models[0].insert(k, v);
        }
        if i == n / 2 {
            db.compact_range(None, None).unwrap();
            let (from, to) = (
                format!("k{:03}", 20 * round),
                format!("k{:03}", 20 * round + 15),
            );
            db.delete_range(&wo(), from.as_bytes(), to.as_bytes())
                .unwrap();
            model_delete_range(&mut models[0], from.as_bytes(), to.as_bytes());
        }
    }
}

/// Opens the database restored into `dir` and checks both families against `models`.
fn check_restored(dir: &Path, models: &[ModelMap; 2], ctx: &str) {
    let db = Db::open_cf(dir, tiny_options(), &[("logs", family())])
        .unwrap_or_else(|e| panic!("{ctx}: open the restored database: {e}"));
    let logs = db.cf("logs").expect("the family was backed up");
    assert_eq!(
        family_contents(&db, &db.default_cf()),
        contents(&models[0]),
        "{ctx}: default family"
    );
    assert_eq!(
        family_contents(&db, &logs),
        contents(&models[1]),
        "{ctx}: logs family"
    );
    db.close().unwrap();
}

#[test]
fn restored_backups_open_to_the_state_at_each_backup() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path().join("db"), tiny_options()).unwrap();
    let logs = db.create_cf("logs", family()).unwrap();
    let mut engine = BackupEngine::open_posix(tmp.path().join("backups")).unwrap();
    let mut models = [ModelMap::new(), ModelMap::new()];
    let mut at = Vec::new();
    for round in 0..3 {
        fill(&db, &logs, &mut models, round, 400);
        let info = engine.create(&db).unwrap();
        assert_eq!(info.id, u64::from(round) + 1);
        assert!(info.sequence > 0 && info.files > 3, "{info:?}");
        at.push(models.clone());
    }
    // The database goes on after the last backup; no backup sees it.
    fill(&db, &logs, &mut models, 9, 100);
    db.close().unwrap();
    let list = engine.list().unwrap();
    assert_eq!(list.iter().map(|b| b.id).collect::<Vec<_>>(), [1, 2, 3]);
    for (b, models) in list.iter().zip(&at) {
        engine.verify(b.id).unwrap();
        let to = tmp.path().join(format!("restored-{}", b.id));
        engine.restore(b.id, &to).unwrap();
        check_restored(&to, models, &format!("backup {}", b.id));
        // The restored copy is the database's own: writing to it leaves the backup whole.
        let r = Db::open_cf(&to, tiny_options(), &[("logs", family())]).unwrap();
        r.put(&wo(), b"zz-after-restore", b"1").unwrap();
        r.compact_range(None, None).unwrap();
        r.close().unwrap();
        engine.verify(b.id).unwrap();
    }
    // A reopened engine lists the same backups.
    drop(engine);
    let engine = BackupEngine::open_posix(tmp.path().join("backups")).unwrap();
    assert_eq!(engine.list().unwrap(), list);
}

/// Options with tables of about 64 KiB, so a database of a few MiB has enough of them
/// for a 1% change to touch few.
fn roomy_options() -> Options {
    Options::default()
        .with_write_buffer_size(256 << 10)
        .with_target_file_size_base(64 << 10)
        .with_max_bytes_for_level_base(1 << 20)
}

#[test]
fn a_second_backup_after_a_one_percent_change_copies_a_small_fraction() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path().join("db"), roomy_options()).unwrap();
    const KEYS: u32 = 40_000;
    let value = |i: u32, round: u32| format!("{round}-{i:08}-{}", "v".repeat(80)).into_bytes();
    for i in 0..KEYS {
        db.put(&wo(), format!("key{i:08}").as_bytes(), &value(i, 0))
            .unwrap();
    }
    // A database at rest: everything in the last level.
    db.compact_range(None, None).unwrap();
    db.wait_for_compactions().unwrap();
    let mut engine = BackupEngine::open_posix(tmp.path().join("backups")).unwrap();
    let first = engine.create(&db).unwrap();
    assert_eq!(
        first.copied, first.size,
        "the first backup copies everything"
    );
    // 1% of the keys, one contiguous range, rewritten.
    for i in 20_000..20_000 + KEYS / 100 {
        db.put(&wo(), format!("key{i:08}").as_bytes(), &value(i, 1))
            .unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let second = engine.create(&db).unwrap();
    eprintln!(
        "first backup: {} bytes in {} files, copied {}; second: {} bytes in {} files, copied {}",
        first.size, first.files, first.copied, second.size, second.files, second.copied
    );
    assert!(
        second.copied * 10 < first.size,
        "the second backup copied {} of {} bytes",
        second.copied,
        first.size
    );
    let shared: u64 = std::fs::read_dir(tmp.path().join("backups/shared"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(
        shared < first.size + second.copied,
        "tables are stored once: {shared} bytes shared"
    );
    db.close().unwrap();
    let to = tmp.path().join("restored");
    engine.restore(2, &to).unwrap();
    let r = Db::open(&to, roomy_options()).unwrap();
    for i in (0..KEYS).step_by(97).chain(20_000..20_400) {
        let round = u32::from((20_000..20_400).contains(&i));
        assert_eq!(
            r.get(&ReadOptions::default(), format!("key{i:08}").as_bytes())
                .unwrap(),
            Some(value(i, round)),
            "key {i}"
        );
    }
    r.close().unwrap();
}

/// The first file of the backup directory under `sub` (`shared` or `private`) whose
/// name holds `part`.
fn stored(backups: &Path, sub: &str, part: &str) -> PathBuf {
    std::fs::read_dir(backups.join(sub))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains(part))
        .min()
        .unwrap_or_else(|| panic!("no {sub} file named like {part}"))
}

#[test]
fn verify_and_restore_name_a_flipped_byte_or_a_missing_file() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path().join("db"), tiny_options()).unwrap();
    let logs = db.create_cf("logs", family()).unwrap();
    fill(&db, &logs, &mut [ModelMap::new(), ModelMap::new()], 0, 400);
    let backups = tmp.path().join("backups");
    let mut engine = BackupEngine::open_posix(&backups).unwrap();
    engine.create(&db).unwrap();
    db.close().unwrap();
    engine.verify(1).unwrap();
    let table = stored(&backups, "shared", ".sst");
    let manifest = stored(&backups, "private", "MANIFEST-");
    for path in [table.clone(), manifest] {
        let good = std::fs::read(&path).unwrap();
        let mut bad = good.clone();
        bad[good.len() / 2] ^= 0x10;
        std::fs::write(&path, &bad).unwrap();
        let e = engine.verify(1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains(&*path.to_string_lossy()) && msg.contains("crc32c"),
            "{msg}"
        );
        // A restore checks as it copies, and leaves no database behind.
        let to = tmp.path().join("restored");
        let e = engine.restore(1, &to).unwrap_err();
        assert!(e.to_string().contains(&*path.to_string_lossy()), "{e}");
        assert!(!to.join("CURRENT").exists());
        std::fs::remove_dir_all(&to).unwrap();
        std::fs::write(&path, &good).unwrap();
        engine.verify(1).unwrap();
    }
    // A shortened file: its size is named.
    let good = std::fs::read(&table).unwrap();
    std::fs::write(&table, &good[..good.len() - 1]).unwrap();
    let e = engine.verify(1).unwrap_err();
    assert!(e.to_string().contains("size"), "{e}");
    // A missing file.
    std::fs::remove_file(&table).unwrap();
    let e = engine.verify(1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains(&*table.to_string_lossy()) && msg.contains("missing"),
        "{msg}"
    );
}

/// A shared table found shortened (damaged since it was stored) is copied again by
/// the next backup that names it, which repairs the earlier backup too.
#[test]
fn a_shared_table_of_the_wrong_size_is_copied_again() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path().join("db"), tiny_options()).unwrap();
    let logs = db.create_cf("logs", family()).unwrap();
    fill(&db, &logs, &mut [ModelMap::new(), ModelMap::new()], 0, 400);
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let backups = tmp.path().join("backups");
    let mut engine = BackupEngine::open_posix(&backups).unwrap();
    engine.create(&db).unwrap();
    let table = stored(&backups, "shared", ".sst");
    let good = std::fs::read(&table).unwrap();
    std::fs::write(&table, &good[..good.len() - 1]).unwrap();
    assert!(engine.verify(1).is_err());
    let second = engine.create(&db).unwrap();
    assert!(
        second.copied >= good.len() as u64,
        "the shortened table was not copied again: {second:?}"
    );
    assert_eq!(std::fs::read(&table).unwrap(), good);
    engine.verify(1).unwrap();
    engine.verify(2).unwrap();
    db.close().unwrap();
}

/// A rate limit holds create and restore to their bytes per second (they take at
/// least their bytes over the limit), and the progress callback sees every file's
/// bytes, ending at the total.
#[test]
fn a_rate_limit_paces_copies_and_progress_reaches_the_total() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path().join("db"), roomy_options()).unwrap();
    for i in 0..20_000u32 {
        db.put(&wo(), format!("key{i:08}").as_bytes(), &[b'v'; 100])
            .unwrap();
    }
    db.flush().unwrap();
    let mut engine = BackupEngine::open_posix(tmp.path().join("backups")).unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&seen);
    engine.set_progress(Some(std::sync::Arc::new(move |done, total| {
        log.lock().unwrap().push((done, total));
    })));
    const LIMIT: u64 = 2 << 20;
    engine.set_rate_limit(Some(LIMIT));
    let started = std::time::Instant::now();
    let info = engine.create(&db).unwrap();
    let took = started.elapsed();
    db.close().unwrap();
    let floor = std::time::Duration::from_secs_f64(info.copied as f64 / LIMIT as f64);
    assert!(info.copied > LIMIT, "too little to pace: {info:?}");
    assert!(
        took >= floor,
        "{} bytes in {took:?} under {LIMIT} B/s",
        info.copied
    );
    let progress = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(progress.len() as u64, info.files);
    assert!(progress.windows(2).all(|w| w[0].0 <= w[1].0));
    assert_eq!(progress.last().copied(), Some((info.size, info.size)));
    engine.verify(1).unwrap();
    let verified = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(verified.last().copied(), Some((info.size, info.size)));
    let started = std::time::Instant::now();
    engine.restore(1, tmp.path().join("restored")).unwrap();
    assert!(
        started.elapsed()
            >= std::time::Duration::from_secs_f64(info.size as f64 / LIMIT as f64) / 2
    );
    let restored = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(restored.last().copied(), Some((info.size, info.size)));
}

/// Backups taken while a writer puts keys in order with sync writes: each restores to
/// a prefix of the writes (no hole) holding every write acknowledged before it began.
#[test]
fn backups_beside_a_writer_restore_to_prefixes_of_its_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(tmp.path().join("db"), tiny_options()).unwrap());
    let acked = Arc::new(AtomicUsize::new(0));
    const WRITES: usize = 6_000;
    let w = {
        let (db, acked) = (Arc::clone(&db), Arc::clone(&acked));
        std::thread::spawn(move || {
            let sync = WriteOptions::default().with_sync(true);
            for i in 0..WRITES {
                db.put(&sync, format!("p{i:06}").as_bytes(), &[b'x'; 30])
                    .unwrap();
                acked.store(i + 1, Ordering::Release);
            }
        })
    };
    let mut engine = BackupEngine::open_posix(tmp.path().join("backups")).unwrap();
    let (mut before, mut racing) = (Vec::new(), 0);
    while !w.is_finished() || before.len() < 5 {
        racing += usize::from(!w.is_finished());
        before.push(acked.load(Ordering::Acquire));
        engine.create(&db).unwrap();
    }
    w.join().unwrap();
    assert!(racing >= 3, "only {racing} backups raced the writer");
    for (i, before) in before.iter().enumerate() {
        let id = i as u64 + 1;
        let to = tmp.path().join(format!("r{id}"));
        engine.restore(id, &to).unwrap();
        let r = Db::open(&to, tiny_options()).unwrap();
        let seen = family_contents(&r, &r.default_cf());
        for (n, (k, _)) in seen.iter().enumerate() {
            assert_eq!(
                k,
                format!("p{n:06}").as_bytes(),
                "backup {id}: a hole at {n}"
            );
        }
        assert!(
            seen.len() >= *before,
            "backup {id}: {} keys, {before} acknowledged",
            seen.len()
        );
        r.close().unwrap();
    }
    Arc::try_unwrap(db).ok().unwrap().close().unwrap();
}

/// Every file under `dir` on `fs`, sorted.
fn files_under(fs: &FaultFs, dir: &str) -> BTreeSet<PathBuf> {
    fs.files()
        .into_iter()
        .filter(|p| p.starts_with(dir))
        .collect()
}

fn put_keys(db: &Db, model: &mut ModelMap, round: u32, keys: std::ops::Range<u32>) {
    for i in keys {
        let (k, v) = (
            format!("k{i:04}").into_bytes(),
            format!("v{round}-{i}").into_bytes(),
        );
        db.put(&wo(), &k, &v).unwrap();
        model.insert(k, v);
    }
}

/// Restores backup `id` of `engine` into `to` on `fs` and checks it holds `model`.
fn check_fault_restore(fs: &FaultFs, engine: &BackupEngine, id: u64, to: &str, model: &ModelMap) {
    engine
        .restore(id, to)
        .unwrap_or_else(|e| panic!("restore {id}: {e}"));
    let db = on(fs).open(to, crash_options()).unwrap();
    assert_eq!(
        family_contents(&db, &db.default_cf()),
        contents(model),
        "backup {id}"
    );
    db.close().unwrap();
}

/// [`tiny_options`] with flushes only when asked: the same writes then make the same
/// files, so the k-th operation of a create is the same step in every run.
fn crash_options() -> Options {
    tiny_options().with_write_buffer_size(1 << 20)
}

/// A power cut at every step of a create: every file operation from the k-th on
/// fails (the disk died), then the machine crashes (unsynced bytes and directory
/// entries revert). Reopened, the engine lists the first backup alone, with exactly
/// the files it had (the second's leftovers purged), or both backups whole, and both
/// whenever `create` returned `Ok`; each verifies and restores to its state.
#[test]
fn a_crash_at_any_step_of_a_create_leaves_the_earlier_backups_or_the_new_one_whole() {
    let (mut k, mut whole, mut absent) = (0u64, 0, 0);
    loop {
        let fs = FaultFs::new();
        let db = on(&fs).open("/db", crash_options()).unwrap();
        let engine_fs = Arc::new(fs.clone());
        let mut engine = BackupEngine::open(engine_fs.clone(), "/bk").unwrap();
        let (mut first, mut second) = (ModelMap::new(), ModelMap::new());
        put_keys(&db, &mut first, 0, 0..150);
        db.flush().unwrap();
        put_keys(&db, &mut first, 1, 140..160);
        engine.create(&db).unwrap();
        let after_first = files_under(&fs, "/bk");
        second.clone_from(&first);
        put_keys(&db, &mut second, 2, 100..250);
        db.flush().unwrap();
        put_keys(&db, &mut second, 3, 240..260);
        db.wait_for_compactions().unwrap();
        fs.inject(FaultRule::sticky(FaultKinds::ALL, k));
        let made = engine.create(&db);
        let injected = fs.faults_injected() > 0;
        drop(engine);
        drop(db);
        fs.crash();
        fs.clear_faults();
        let ctx = format!("fault from op {k} ({made:?})");
        let mut engine = BackupEngine::open(engine_fs.clone(), "/bk")
            .unwrap_or_else(|e| panic!("{ctx}: reopen: {e}"));
        let ids: Vec<u64> = engine.list().unwrap().iter().map(|b| b.id).collect();
        if made.is_ok() {
            assert_eq!(ids, [1, 2], "{ctx}");
        }
        engine
            .verify(1)
            .unwrap_or_else(|e| panic!("{ctx}: verify 1: {e}"));
        check_fault_restore(&fs, &engine, 1, "/r1", &first);
        match ids.as_slice() {
            [1] => absent += 1,
            [1, 2] => {
                engine
                    .verify(2)
                    .unwrap_or_else(|e| panic!("{ctx}: verify 2: {e}"));
                check_fault_restore(&fs, &engine, 2, "/r2", &second);
                engine.delete(2).unwrap();
                whole += 1;
            }
            other => panic!("{ctx}: backups {other:?}"),
        }
        // Without the second backup the directory is exactly as the first left it.
        assert_eq!(files_under(&fs, "/bk"), after_first, "{ctx}: leftovers");
        if !injected {
            assert!(made.is_ok(), "{ctx}: a create with no fault failed");
            break;
        }
        k += 1;
    }
    eprintln!("create crash loop: {k} fault points, {whole} whole, {absent} absent");
    assert!(
        k > 30 && whole > 0 && absent > 20,
        "k={k} whole={whole} absent={absent}"
    );
}

/// A power cut at every step of a restore: afterwards the target is either no
/// database (an open without `create_if_missing` refuses it) or the whole backup,
/// the whole backup whenever `restore` returned `Ok`; the backup itself still
/// verifies.
#[test]
fn a_crash_at_any_step_of_a_restore_leaves_no_database_or_the_whole_backup() {
    let (mut k, mut whole, mut absent) = (0u64, 0, 0);
    loop {
        let fs = FaultFs::new();
        let db = on(&fs).open("/db", crash_options()).unwrap();
        let engine_fs = Arc::new(fs.clone());
        let mut engine = BackupEngine::open(engine_fs.clone(), "/bk").unwrap();
        let mut model = ModelMap::new();
        put_keys(&db, &mut model, 0, 0..200);
        db.flush().unwrap();
        put_keys(&db, &mut model, 1, 150..220);
        engine.create(&db).unwrap();
        db.close().unwrap();
        fs.inject(FaultRule::sticky(FaultKinds::ALL, k));
        let made = engine.restore(1, "/r");
        let injected = fs.faults_injected() > 0;
        drop(engine);
        fs.crash();
        fs.clear_faults();
        let ctx = format!("fault from op {k} ({made:?})");
        let opened = on(&fs).open("/r", crash_options().with_create_if_missing(false));
        match opened {
            Ok(r) => {
                assert_eq!(
                    family_contents(&r, &r.default_cf()),
                    contents(&model),
                    "{ctx}"
                );
                r.close().unwrap();
                whole += 1;
            }
            Err(e) => {
                assert!(made.is_err(), "{ctx}: restored, but the open failed: {e}");
                assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{ctx}: {e}");
                absent += 1;
            }
        }
        let engine = BackupEngine::open(engine_fs.clone(), "/bk").unwrap();
        engine
            .verify(1)
            .unwrap_or_else(|e| panic!("{ctx}: verify: {e}"));
        if !injected {
            assert!(made.is_ok(), "{ctx}: a restore with no fault failed");
            break;
        }
        k += 1;
    }
    eprintln!("restore crash loop: {k} fault points, {whole} whole, {absent} absent");
    assert!(
        k > 10 && whole > 0 && absent > 10,
        "k={k} whole={whole} absent={absent}"
    );
}

#[test]
fn bad_restore_targets_and_unknown_ids_are_refused_by_name_and_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db_dir = tmp.path().join("db");
    let db = Db::open(&db_dir, tiny_options()).unwrap();
    db.put(&wo(), b"a", b"1").unwrap();
    let backups = tmp.path().join("backups");
    let mut engine = BackupEngine::open_posix(&backups).unwrap();
    engine.create(&db).unwrap();
    db.put(&wo(), b"a", b"2").unwrap();

    // Over the live database.
    let listing = |dir: &Path| -> BTreeSet<_> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect()
    };
    let before = listing(&db_dir);
    let e = engine.restore(1, &db_dir).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("holds a database") && msg.contains(&*db_dir.to_string_lossy()),
        "{msg}"
    );
    assert_eq!(listing(&db_dir), before);
    assert_eq!(
        db.get(&ReadOptions::default(), b"a").unwrap(),
        Some(b"2".to_vec())
    );

    // Into a directory holding something else.
    let full = tmp.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("notes.txt"), b"x").unwrap();
    let e = engine.restore(1, &full).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("notes.txt") && msg.contains(&*full.to_string_lossy()),
        "{msg}"
    );
    assert_eq!(listing(&full).len(), 1);

    // Unknown ids.
    for e in [
        engine.verify(7).unwrap_err(),
        engine.restore(7, tmp.path().join("r")).unwrap_err(),
        engine.delete(7).unwrap_err(),
    ] {
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(e.to_string().contains("backup_id=7"), "{e}");
    }
    assert!(!tmp.path().join("r").exists());

    // A second engine on the same directory.
    let e = BackupEngine::open_posix(&backups).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Locked, "{e}");
    assert_eq!(engine.list().unwrap().len(), 1);
    db.close().unwrap();
}

/// Numbers of the tables under `dir` (a database's `<n>.sst`, or the backup
/// directory's `shared/<n>-<size>-<crc>.sst`).
fn table_numbers(dir: &Path) -> BTreeSet<u64> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            let stem = name.strip_suffix(".sst")?;
            stem.split('-').next()?.parse().ok()
        })
        .collect()
}

#[test]
fn purge_keeps_the_newest_backups_and_exactly_the_tables_they_name() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path().join("db"), tiny_options()).unwrap();
    let logs = db.create_cf("logs", family()).unwrap();
    let backups = tmp.path().join("backups");
    let mut engine = BackupEngine::open_posix(&backups).unwrap();
    let mut models = [ModelMap::new(), ModelMap::new()];
    for round in 0..4 {
        fill(&db, &logs, &mut models, round, 300);
        db.wait_for_compactions().unwrap();
        engine.create(&db).unwrap();
    }
    db.close().unwrap();
    let tables_before = table_numbers(&backups.join("shared"));
    assert_eq!(engine.purge(2).unwrap(), [1, 2]);
    assert_eq!(
        engine
            .list()
            .unwrap()
            .iter()
            .map(|b| b.id)
            .collect::<Vec<_>>(),
        [3, 4]
    );
    // What remains is what backups 3 and 4 name: the tables of their restores.
    let mut named = BTreeSet::new();
    for id in [3, 4] {
        let to = tmp.path().join(format!("r{id}"));
        engine.restore(id, &to).unwrap();
        named.extend(table_numbers(&to));
    }
    let tables_after = table_numbers(&backups.join("shared"));
    assert_eq!(tables_after, named);
    assert!(
        tables_after.len() < tables_before.len(),
        "{tables_before:?}"
    );
    check_restored(&tmp.path().join("r4"), &models, "backup 4 after purge");
    let private = |id: &str| {
        std::fs::read_dir(backups.join("private"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with(id)
            })
            .count()
    };
    assert_eq!(private("1-") + private("2-"), 0);
    // Purging everything leaves nothing stored.
    assert_eq!(engine.purge(0).unwrap(), [3, 4]);
    for sub in ["shared", "private", "meta"] {
        assert_eq!(
            std::fs::read_dir(backups.join(sub)).unwrap().count(),
            0,
            "{sub}"
        );
    }
}

/// A metadata file that does not decode: the engine still opens, `list` names the
/// file, garbage collection keeps every shared table (it cannot know which the damaged
/// backup names), the other backups verify, and deleting the damaged one recovers.
#[test]
fn a_damaged_metadata_file_is_named_and_keeps_the_tables_it_may_name() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path().join("db"), tiny_options()).unwrap();
    let logs = db.create_cf("logs", family()).unwrap();
    let backups = tmp.path().join("backups");
    let mut engine = BackupEngine::open_posix(&backups).unwrap();
    let mut models = [ModelMap::new(), ModelMap::new()];
    for round in 0..2 {
        fill(&db, &logs, &mut models, round, 300);
        db.wait_for_compactions().unwrap();
        engine.create(&db).unwrap();
    }
    db.close().unwrap();
    drop(engine);
    let tables = table_numbers(&backups.join("shared"));
    let meta = backups.join("meta/1");
    let mut bytes = std::fs::read(&meta).unwrap();
    bytes[10] ^= 1;
    std::fs::write(&meta, &bytes).unwrap();

    let mut engine = BackupEngine::open_posix(&backups).unwrap();
    let e = engine.list().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains(&*meta.to_string_lossy()), "{e}");
    assert_eq!(table_numbers(&backups.join("shared")), tables);
    engine.verify(2).unwrap();
    let e = engine.verify(1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    engine.delete(1).unwrap();
    assert_eq!(engine.list().unwrap().len(), 1);
    let to = tmp.path().join("r2");
    engine.restore(2, &to).unwrap();
    // Before the open, which flushes the restored WALs into tables of its own.
    assert_eq!(table_numbers(&backups.join("shared")), table_numbers(&to));
    check_restored(&to, &models, "backup 2 beside a damaged backup 1");
}
