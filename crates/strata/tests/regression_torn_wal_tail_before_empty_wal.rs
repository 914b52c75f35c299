//! Regression: a torn WAL tail followed by an *empty* newer WAL made the database
//! unopenable ("log record truncated", `ErrorKind::Corruption`), losing every write.
//!
//! Found by the crash loop in `fault_injection.rs` (`STRATA_LONG=1`, scenario
//! `sync_flush`, k=182, `CrashMode::KeepRandomPrefix`). Two crash points leave that
//! state, both with every acknowledged write intact on disk:
//! - a memtable switch creates the new WAL and syncs the directory before it syncs the
//!   old WAL; the power fails (or the old WAL's fsync fails) in between, and the old
//!   WAL keeps a torn prefix of its unsynced tail;
//! - recovery after such a crash creates its new WAL (and syncs the directory) before
//!   `CURRENT` names the new MANIFEST; a crash there leaves the torn WAL followed by the
//!   new, empty one.
//!
//! Recovery tolerated a torn tail only in the newest WAL file; it must tolerate it in
//! the newest WAL that holds records.
//!
//! Since switches no longer fsync the WAL they close (docs/ARCHITECTURE.md §7.4), a
//! torn tail can be in any WAL, and replay goes past it only while sequence numbers
//! run on. The state is now made by a failing table fsync: the first flush poisons
//! the database while the closed WALs hold unsynced tails, and the crash keeps a
//! random prefix of each.

mod common;

use common::{key, on};
use strata::env::{CrashMode, FaultFs, FaultKinds, FaultRule};
use strata::{Db, ErrorKind, Options, ReadOptions, WriteOptions};

const DIR: &str = "/db";

fn opts() -> Options {
    Options::default().with_write_buffer_size(8 << 10)
}

/// Writes 20 synced keys, then non-synced ones until the first flush fails on its
/// table's fsync (which poisons the database). Returns the file system, crashed with
/// `mode`.
fn torn_switch(seed: u64) -> FaultFs {
    let fs = FaultFs::new();
    let db = on(&fs).open(DIR, opts()).expect("open");
    for i in 0..20u32 {
        db.put(&WriteOptions::default().with_sync(true), &key(i), b"synced")
            .expect("put");
    }
    fs.inject(FaultRule::sticky(FaultKinds::SYNC, 0).on_path(".sst"));
    let mut failed = false;
    for i in 20..400u32 {
        if db
            .put(&WriteOptions::default(), &key(i), &[b'x'; 100])
            .is_err()
        {
            failed = true;
            break;
        }
    }
    assert!(failed, "a flush must hit the failing fsync");
    // Crash before the handle goes: closing would fsync the WALs.
    fs.crash_with(CrashMode::KeepRandomPrefix { seed });
    drop(db);
    fs.clear_faults();
    fs
}

fn check_synced(db: &Db, ctx: &str) {
    for i in 0..20u32 {
        assert_eq!(
            db.get(&ReadOptions::default(), &key(i)).expect("get"),
            Some(b"synced".to_vec()),
            "{ctx}: key {i}"
        );
    }
}

#[test]
fn torn_wal_tail_before_empty_newer_wal_reopens() {
    for seed in 0..16u64 {
        let fs = torn_switch(seed);
        let db = on(&fs)
            .open(DIR, opts())
            .unwrap_or_else(|e| panic!("seed {seed}: reopen after a torn switch: {e}"));
        check_synced(&db, &format!("seed {seed}"));
    }
}

#[test]
fn crash_during_recovery_of_a_torn_wal_tail_reopens() {
    for seed in 0..16u64 {
        let fs = torn_switch(seed);
        // The recovery dies at the rename of CURRENT: its new WAL already exists.
        fs.inject(FaultRule::sticky(FaultKinds::RENAME, 0));
        let err = on(&fs).open(DIR, opts()).expect_err("the rename fails");
        assert_eq!(err.kind(), ErrorKind::Io, "seed {seed}: {err}");
        fs.crash();
        fs.clear_faults();
        let db = on(&fs)
            .open(DIR, opts())
            .unwrap_or_else(|e| panic!("seed {seed}: reopen after a crashed recovery: {e}"));
        check_synced(&db, &format!("seed {seed}"));
    }
}
