//! Pins the crash and fault model of [`super::FaultFs`].

use super::*;
use crate::env::{read_to_vec, write_file_atomic};
use crate::error::ErrorKind;

fn p(s: &str) -> PathBuf {
    PathBuf::from(s)
}

/// A fresh file system with the directory `/db`, durably.
fn fs_with_db() -> FaultFs {
    let fs = FaultFs::new();
    fs.create_dir_all(&p("/db")).expect("mkdir");
    fs
}

/// Creates `/db/<name>` holding `data`, synced, with the directory synced.
fn durable_file(fs: &FaultFs, name: &str, data: &[u8]) {
    let path = p("/db").join(name);
    let mut f = fs.create(&path).expect("create");
    f.append(data).expect("append");
    f.sync().expect("sync");
    fs.sync_dir(&p("/db")).expect("sync dir");
}

fn assert_injected(err: &Error) {
    assert_eq!(err.kind(), ErrorKind::Io, "{err:?}");
    match err {
        Error::Io { source, .. } => assert_eq!(source.to_string(), "injected fault"),
        other => panic!("expected an injected io error, got {other:?}"),
    }
}

#[test]
fn unsynced_appends_vanish_after_crash() {
    let fs = fs_with_db();
    let mut f = fs.create(&p("/db/1.log")).expect("create");
    f.append(b"synced").expect("append");
    f.sync().expect("sync");
    fs.sync_dir(&p("/db")).expect("sync dir");
    f.append(b"-unsynced").expect("append");
    f.flush().expect("flush");
    assert_eq!(
        fs.file_bytes("/db/1.log"),
        Some(b"synced-unsynced".to_vec())
    );
    assert_eq!(fs.durable_file_bytes("/db/1.log"), Some(b"synced".to_vec()));
    fs.crash();
    assert_eq!(fs.file_bytes("/db/1.log"), Some(b"synced".to_vec()));
}

#[test]
fn synced_appends_survive_crash() {
    let fs = fs_with_db();
    durable_file(&fs, "2.sst", b"all of it");
    fs.crash();
    assert_eq!(fs.file_bytes("/db/2.sst"), Some(b"all of it".to_vec()));
    let got = read_to_vec(&fs, &p("/db/2.sst")).expect("read");
    assert_eq!(got, b"all of it");
}

#[test]
fn create_without_dir_sync_vanishes_after_crash() {
    let fs = fs_with_db();
    let mut f = fs.create(&p("/db/3.sst")).expect("create");
    f.append(b"data").expect("append");
    f.sync().expect("file sync does not make the entry durable");
    assert!(fs.exists(&p("/db/3.sst")));
    fs.crash();
    assert!(!fs.exists(&p("/db/3.sst")));
    assert_eq!(fs.list(&p("/db")).expect("list"), Vec::<String>::new());
}

#[test]
fn create_with_dir_sync_stays_after_crash() {
    let fs = fs_with_db();
    let mut f = fs.create(&p("/db/3.sst")).expect("create");
    fs.sync_dir(&p("/db")).expect("sync dir");
    f.append(b"data").expect("append");
    fs.crash();
    // The entry is durable; its unsynced bytes are not.
    assert_eq!(fs.file_bytes("/db/3.sst"), Some(Vec::new()));
    assert_eq!(fs.list(&p("/db")).expect("list"), vec!["3.sst".to_string()]);
}

#[test]
fn rename_not_dir_synced_is_undone() {
    let fs = fs_with_db();
    durable_file(&fs, "CURRENT", b"MANIFEST-1\n");
    durable_file(&fs, "CURRENT.dbtmp", b"MANIFEST-2\n");
    fs.rename(&p("/db/CURRENT.dbtmp"), &p("/db/CURRENT"))
        .expect("rename");
    assert_eq!(fs.file_bytes("/db/CURRENT"), Some(b"MANIFEST-2\n".to_vec()));
    assert!(!fs.exists(&p("/db/CURRENT.dbtmp")));
    fs.crash();
    assert_eq!(fs.file_bytes("/db/CURRENT"), Some(b"MANIFEST-1\n".to_vec()));
    assert_eq!(
        fs.file_bytes("/db/CURRENT.dbtmp"),
        Some(b"MANIFEST-2\n".to_vec())
    );
}

#[test]
fn atomic_write_survives_crash() {
    let fs = fs_with_db();
    durable_file(&fs, "CURRENT", b"MANIFEST-1\n");
    write_file_atomic(&fs, &p("/db"), "CURRENT", b"MANIFEST-2\n").expect("atomic write");
    fs.crash();
    assert_eq!(fs.file_bytes("/db/CURRENT"), Some(b"MANIFEST-2\n".to_vec()));
    assert_eq!(
        fs.list(&p("/db")).expect("list"),
        vec!["CURRENT".to_string()]
    );
}

#[test]
fn remove_not_dir_synced_reappears() {
    let fs = fs_with_db();
    durable_file(&fs, "4.sst", b"table");
    fs.remove(&p("/db/4.sst")).expect("remove");
    assert!(!fs.exists(&p("/db/4.sst")));
    fs.crash();
    assert_eq!(fs.file_bytes("/db/4.sst"), Some(b"table".to_vec()));
    fs.remove(&p("/db/4.sst")).expect("remove");
    fs.sync_dir(&p("/db")).expect("sync dir");
    fs.crash();
    assert!(!fs.exists(&p("/db/4.sst")));
}

#[test]
fn recreate_without_dir_sync_brings_old_file_back() {
    let fs = fs_with_db();
    durable_file(&fs, "OPTIONS", b"old");
    let mut f = fs.create(&p("/db/OPTIONS")).expect("create");
    f.append(b"new").expect("append");
    f.sync().expect("sync");
    assert_eq!(fs.file_bytes("/db/OPTIONS"), Some(b"new".to_vec()));
    fs.crash();
    assert_eq!(fs.file_bytes("/db/OPTIONS"), Some(b"old".to_vec()));
}

/// Writes 4 synced bytes then 1000 unsynced bytes to `/db/t.log`.
fn torn_candidate() -> (FaultFs, Vec<u8>) {
    let fs = fs_with_db();
    let mut f = fs.create(&p("/db/t.log")).expect("create");
    f.append(b"SYNC").expect("append");
    f.sync().expect("sync");
    fs.sync_dir(&p("/db")).expect("sync dir");
    let tail: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
    f.append(&tail).expect("append");
    let full = fs.file_bytes("/db/t.log").expect("exists");
    (fs, full)
}

#[test]
fn torn_prefix_mode_keeps_a_prefix_only() {
    let mut partial = 0;
    for seed in 0..32 {
        let (fs, full) = torn_candidate();
        fs.crash_with(CrashMode::KeepRandomPrefix { seed });
        let got = fs.file_bytes("/db/t.log").expect("exists");
        assert!(got.len() >= 4 && got.len() <= full.len(), "seed={seed}");
        assert_eq!(got.as_slice(), full.get(..got.len()).expect("in range"));
        if got.len() > 4 && got.len() < full.len() {
            partial += 1;
        }
        // Deterministic: the same seed and history give the same bytes.
        let (again, _) = torn_candidate();
        again.crash_with(CrashMode::KeepRandomPrefix { seed });
        assert_eq!(again.file_bytes("/db/t.log"), Some(got), "seed={seed}");
    }
    assert!(partial > 16, "most seeds keep a strict part: {partial}");
}

#[test]
fn garble_mode_changes_only_unsynced_bytes() {
    let mut garbled = 0;
    for seed in 0..32 {
        let (fs, full) = torn_candidate();
        fs.crash_with(CrashMode::GarbleUnsynced { seed });
        let got = fs.file_bytes("/db/t.log").expect("exists");
        assert!(got.len() <= full.len());
        assert_eq!(got.get(..4), Some(&b"SYNC"[..]), "seed={seed}");
        if got.len() > 4 {
            assert_ne!(got.as_slice(), full.get(..got.len()).expect("in range"));
            garbled += 1;
        }
    }
    assert!(garbled > 16);
}

#[test]
fn keep_all_mode_keeps_everything_but_handles() {
    let (fs, full) = torn_candidate();
    let mut extra = fs.create(&p("/db/new")).expect("create");
    fs.crash_with(CrashMode::KeepAll);
    assert_eq!(fs.file_bytes("/db/t.log"), Some(full));
    assert!(fs.exists(&p("/db/new")));
    assert!(extra.append(b"x").is_err());
}

#[test]
fn fault_rule_fires_at_nth_op_of_kind_once() {
    let fs = fs_with_db();
    let mut f = fs.create(&p("/db/5.log")).expect("create");
    fs.fail_after(2, FaultKinds::WRITE);
    f.append(b"a").expect("1st append");
    f.sync().expect("syncs are not counted by a WRITE rule");
    f.append(b"b").expect("2nd append");
    let err = f.append(b"c").expect_err("3rd append fails");
    assert_injected(&err);
    assert!(matches!(&err, Error::Io { op: IoOp::Write, path, .. } if path == &p("/db/5.log")));
    f.append(b"d").expect("once: 4th append succeeds");
    assert_eq!(fs.file_bytes("/db/5.log"), Some(b"abd".to_vec()));
    assert_eq!(f.len(), 3);
    assert_eq!(fs.faults_injected(), 1);
}

#[test]
fn sticky_rule_fails_from_then_on_until_cleared() {
    let fs = fs_with_db();
    fs.inject(FaultRule::sticky(
        FaultKinds::CREATE | FaultKinds::RENAME,
        1,
    ));
    durable_file(&fs, "a", b"");
    for name in ["b", "c"] {
        let err = fs.create(&p("/db").join(name)).err().expect("fails");
        assert_injected(&err);
    }
    assert_injected(&fs.rename(&p("/db/a"), &p("/db/z")).expect_err("fails"));
    assert!(fs.exists(&p("/db/a")), "a failed rename renames nothing");
    assert_eq!(fs.faults_injected(), 3);
    fs.clear_faults();
    fs.rename(&p("/db/a"), &p("/db/z")).expect("healthy again");
}

#[test]
fn path_filtered_rule_counts_only_its_paths() {
    let fs = fs_with_db();
    fs.inject(FaultRule::once(FaultKinds::SYNC, 0).on_path("MANIFEST"));
    let mut log = fs.create(&p("/db/000003.log")).expect("create");
    log.sync().expect("other paths are not affected");
    let mut m = fs.create(&p("/db/MANIFEST-000002")).expect("create");
    assert_injected(&m.sync().expect_err("manifest sync fails"));
    m.sync().expect("once");
}

#[test]
fn failed_sync_makes_nothing_durable() {
    let fs = fs_with_db();
    let mut f = fs.create(&p("/db/6.log")).expect("create");
    fs.sync_dir(&p("/db")).expect("sync dir");
    f.append(b"lost").expect("append");
    fs.fail_after(0, FaultKinds::SYNC);
    assert_injected(&f.sync().expect_err("sync fails"));
    assert_eq!(fs.file_bytes("/db/6.log"), Some(b"lost".to_vec()));
    assert_eq!(fs.durable_file_bytes("/db/6.log"), Some(Vec::new()));
    fs.crash();
    assert_eq!(fs.file_bytes("/db/6.log"), Some(Vec::new()));
}

#[test]
fn failed_sync_can_drop_dirty_pages() {
    let fs = fs_with_db();
    fs.set_failed_sync_mode(FailedSyncMode::ZeroDirty);
    let mut f = fs.create(&p("/db/7.log")).expect("create");
    f.append(b"ok").expect("append");
    f.sync().expect("sync");
    f.append(b"gone").expect("append");
    fs.fail_after(0, FaultKinds::SYNC);
    assert!(f.sync().is_err());
    assert_eq!(fs.file_bytes("/db/7.log"), Some(b"ok\0\0\0\0".to_vec()));
    // The retry "succeeds" on zeros: exactly why a failed fsync must poison the DB.
    f.sync().expect("retry");
    assert_eq!(fs.durable_file_bytes("/db/7.log"), None);
    fs.sync_dir(&p("/db")).expect("sync dir");
    assert_eq!(
        fs.durable_file_bytes("/db/7.log"),
        Some(b"ok\0\0\0\0".to_vec())
    );
}

#[test]
fn failed_sync_dir_makes_nothing_durable() {
    let fs = fs_with_db();
    durable_file(&fs, "8", b"x");
    fs.fail_after(0, FaultKinds::SYNC_DIR);
    fs.create(&p("/db/9")).expect("create");
    assert_injected(&fs.sync_dir(&p("/db")).expect_err("fails"));
    fs.crash();
    assert_eq!(fs.list(&p("/db")).expect("list"), vec!["8".to_string()]);
}

#[test]
fn stale_handles_error_after_crash() {
    let fs = fs_with_db();
    durable_file(&fs, "10.sst", b"0123456789");
    let mut w = fs.create(&p("/db/11.log")).expect("create");
    let r = fs.open_random(&p("/db/10.sst")).expect("open");
    let mut s = fs.open_sequential(&p("/db/10.sst")).expect("open");
    let mut buf = [0u8; 4];
    r.read_exact_at(2, &mut buf).expect("read before crash");
    assert_eq!(&buf, b"2345");
    fs.crash();
    for err in [
        w.append(b"x").expect_err("append"),
        w.flush().expect_err("flush"),
        w.sync().expect_err("sync"),
        r.read_exact_at(0, &mut buf).expect_err("read"),
        s.read(&mut buf).expect_err("read"),
    ] {
        assert_eq!(err.kind(), ErrorKind::Io, "{err:?}");
    }
    // Stale handles are not counted as operations and inject nothing.
    assert_eq!(fs.faults_injected(), 0);
    let fresh = fs.open_random(&p("/db/10.sst")).expect("reopen");
    fresh
        .read_exact_at(0, &mut buf)
        .expect("fresh handle works");
    drop((w, r, s));
    fresh
        .read_exact_at(6, &mut buf)
        .expect("stale drops do not close it");
}

#[test]
fn lock_is_exclusive_until_dropped_or_crash() {
    let fs = fs_with_db();
    let lock = fs.lock(&p("/db/LOCK")).expect("first lock");
    let err = fs.lock(&p("/db/LOCK")).err().expect("second lock fails");
    assert!(matches!(&err, Error::Locked(path) if path == &p("/db/LOCK")));
    assert!(fs.exists(&p("/db/LOCK")));
    drop(lock);
    let again = fs.lock(&p("/db/LOCK")).expect("free after drop");
    fs.crash();
    let after_crash = fs.lock(&p("/db/LOCK"));
    assert!(after_crash.is_ok(), "a crash releases locks");
    drop(again);
    assert!(
        matches!(fs.lock(&p("/db/LOCK")).err(), Some(Error::Locked(_))),
        "dropping a pre-crash lock must not release the new holder's lock"
    );
}

#[test]
fn open_handle_keeps_removed_file_readable() {
    let fs = fs_with_db();
    durable_file(&fs, "12.sst", b"abc");
    let r = fs.open_random(&p("/db/12.sst")).expect("open");
    fs.remove(&p("/db/12.sst")).expect("remove");
    fs.sync_dir(&p("/db")).expect("sync dir");
    let mut buf = [0u8; 3];
    r.read_exact_at(0, &mut buf).expect("still readable");
    assert_eq!(&buf, b"abc");
    assert_eq!(r.size(), 3);
    let mut past = [0u8; 2];
    assert_eq!(
        r.read_exact_at(2, &mut past).expect_err("past end").kind(),
        ErrorKind::Io
    );
    drop(r);
    assert!(
        fs.state.lock().inodes.is_empty(),
        "unlinked inode freed on close"
    );
}

#[test]
fn namespace_errors_and_listing() {
    let fs = FaultFs::new();
    assert!(fs.create(&p("/nodir/1.log")).is_err());
    assert!(fs.list(&p("/nodir")).is_err());
    assert!(fs.open_random(&p("/x")).is_err());
    assert!(fs.remove(&p("/x")).is_err());
    assert!(fs.rename(&p("/x"), &p("/y")).is_err());
    fs.create_dir_all(&p("/a/b")).expect("mkdir");
    fs.create(&p("/a/f2")).expect("create");
    fs.create(&p("/a/./f1")).expect("create");
    assert!(fs.create(&p("/a/b")).is_err(), "a directory is not a file");
    assert_eq!(fs.list(&p("/a/")).expect("list"), vec!["b", "f1", "f2"]);
    assert_eq!(fs.file_size(&p("/a/f1")).expect("size"), 0);
    assert!(fs.exists(&p("/a/b")) && fs.exists(&p("/a")) && !fs.exists(&p("/a/c")));
    assert_eq!(fs.files(), vec![p("/a/f1"), p("/a/f2")]);
}

#[test]
fn corruption_helpers_change_durable_bytes() {
    let fs = fs_with_db();
    durable_file(&fs, "13.sst", b"hello");
    fs.corrupt_byte("/db/13.sst", 1, 0x20).expect("corrupt");
    assert_eq!(fs.file_bytes("/db/13.sst"), Some(b"hEllo".to_vec()));
    assert!(fs.corrupt_byte("/db/13.sst", 5, 1).is_err());
    assert!(fs.corrupt_byte("/db/none", 0, 1).is_err());
    fs.truncate("/db/13.sst", 2).expect("truncate");
    fs.crash();
    assert_eq!(fs.file_bytes("/db/13.sst"), Some(b"hE".to_vec()));
    fs.set_file_bytes("/other/dir/f", b"planted");
    fs.crash();
    assert_eq!(fs.file_bytes("/other/dir/f"), Some(b"planted".to_vec()));
    assert_eq!(fs.list(&p("/other/dir")).expect("list"), vec!["f"]);
}

/// The crash-loop recipe: count a scenario's operations, then kill the disk at each one.
#[test]
fn op_count_drives_fail_at_every_op() {
    fn scenario(fs: &FaultFs) -> Result<()> {
        fs.create_dir_all(&p("/db"))?;
        let mut f = fs.create(&p("/db/1.log"))?;
        f.append(b"rec1")?;
        f.sync()?;
        fs.sync_dir(&p("/db"))?;
        write_file_atomic(fs, &p("/db"), "CURRENT", b"MANIFEST-1\n")?;
        Ok(())
    }
    let fs = FaultFs::new();
    scenario(&fs).expect("clean run");
    let n = fs.op_count();
    assert_eq!(n, 10);
    for k in 0..n {
        let fs = FaultFs::new();
        fs.inject(FaultRule::sticky(FaultKinds::ALL, k));
        assert_injected(&scenario(&fs).expect_err("fails at op k"));
        // The scenario stops at op k; a failure inside `write_file_atomic` adds the
        // removal of its temp file (which fails too: the disk is dead).
        assert!(
            (k + 1..=k + 2).contains(&fs.op_count()),
            "k={k}: {}",
            fs.op_count()
        );
        fs.crash();
        fs.clear_faults();
        // Whatever survived, synced log bytes are all or nothing here.
        if let Some(log) = fs.file_bytes("/db/1.log") {
            assert!(log.is_empty() || log == b"rec1", "k={k}");
        }
    }
}

#[test]
fn clones_share_state_across_threads() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<FaultFs>();
    let fs = fs_with_db();
    let dyn_fs: Arc<dyn FileSystem> = Arc::new(fs.clone());
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let dyn_fs = Arc::clone(&dyn_fs);
            std::thread::spawn(move || -> Result<()> {
                let mut f = dyn_fs.create(&p("/db").join(format!("t{i}")))?;
                f.append(&[i; 100])?;
                f.sync()
            })
        })
        .collect();
    for h in handles {
        h.join().expect("thread").expect("io");
    }
    assert_eq!(fs.files().len(), 4);
    assert_eq!(fs.op_count(), 1 + 4 * 3);
}

#[test]
fn read_and_open_faults_reach_the_caller() {
    let fs = fs_with_db();
    durable_file(&fs, "CURRENT", b"MANIFEST-1\n");
    fs.fail_after(1, FaultKinds::READ);
    // read_to_vec reads once for the data and once more to see end of file.
    assert_injected(&read_to_vec(&fs, &p("/db/CURRENT")).expect_err("2nd read fails"));
    fs.fail_after(0, FaultKinds::OPEN);
    assert_injected(&fs.open_random(&p("/db/CURRENT")).err().expect("open fails"));
    assert_eq!(
        read_to_vec(&fs, &p("/db/CURRENT")).expect("healthy"),
        b"MANIFEST-1\n"
    );
    let dbg = format!("{fs:?}");
    assert!(dbg.contains("faults_injected: 2"), "{dbg}");
}
