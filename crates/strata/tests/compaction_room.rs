//! Room for compactions (`db::room`, docs/ARCHITECTURE.md §7.8).
//!
//! What it protects: on a nearly full disk a compaction whose output would not fit
//! beside the room kept for flushes is not started (counted in
//! `compactions_deferred_for_space`), so the database keeps taking writes instead of
//! filling the disk and refusing them; once space is free the deferred compaction runs
//! by itself, and nothing is lost. And the real file system tells its free space.

mod common;

use common::{key, on, tiny_options};
use std::path::Path;
use std::time::{Duration, Instant};
use strata::env::{FaultFs, FileSystem, PosixFs};
use strata::{Db, ErrorKind, Options, ReadOptions, WriteOptions};

const DIR: &str = "/db";

fn options() -> Options {
    tiny_options()
        .with_merge_operator(None)
        .with_level0_file_num_compaction_trigger(4)
        .with_level0_slowdown_writes_trigger(40)
        .with_level0_stop_writes_trigger(50)
}

fn l0_files(db: &Db) -> usize {
    db.stats().levels[0].files
}

/// Polls `done` every 10 ms for up to `limit`.
fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    done()
}

#[test]
fn a_compaction_that_does_not_fit_waits_for_room_and_writes_go_on() {
    let fs = FaultFs::new();
    let db = on(&fs).open(DIR, options()).unwrap();
    let w = WriteOptions::default();
    // Every round writes the same keys: overlapping tables, which only a rewrite
    // (never a move) compacts.
    let mut round = 0u8;
    let mut write_and_flush = |db: &Db| {
        round += 1;
        for i in 0..20 {
            db.put(&w, &key(i), &[round; 100]).unwrap();
        }
        db.flush().unwrap();
        round
    };
    for _ in 0..3 {
        write_and_flush(&db);
    }
    assert_eq!(l0_files(&db), 3);
    // Room for the next flush and a few KiB more, not for a compaction of four
    // ~2.5 KiB tables.
    fs.set_quota(Some(fs.used_bytes() + 8000));
    let last = write_and_flush(&db);
    assert!(
        eventually(Duration::from_secs(10), || db
            .stats()
            .counters
            .compactions_deferred_for_space
            > 0),
        "the compaction was not deferred"
    );
    assert_eq!(l0_files(&db), 4, "nothing compacted while deferred");
    // Writes go on: the database is not in the no-space state.
    for i in 0..10 {
        db.put(&w, format!("more{i}").as_bytes(), b"x").unwrap();
    }
    assert_eq!(db.stats().counters.no_space_errors, 0);
    fs.set_quota(None);
    assert!(
        eventually(Duration::from_secs(20), || l0_files(&db) < 4),
        "the deferred compaction did not run once space was free"
    );
    for i in 0..20 {
        assert_eq!(
            db.get(&ReadOptions::default(), &key(i)).unwrap(),
            Some(vec![last; 100]),
            "key {i}"
        );
    }
    db.wait_for_compactions().unwrap();
    assert!(db.stats().counters.compaction_bytes_written > 0);
}

/// A compaction deferred for a long time starts soon after space is freed: the
/// scheduler polls for room every 250 ms instead of backing off to 5 s
/// (`Backoff::DEFERRAL_POLL`).
#[test]
fn a_long_deferred_compaction_starts_soon_after_space_is_freed() {
    let fs = FaultFs::new();
    let db = on(&fs).open(DIR, options()).unwrap();
    let w = WriteOptions::default();
    for round in 0..4u8 {
        if round == 3 {
            fs.set_quota(Some(fs.used_bytes() + 8000));
        }
        for i in 0..20 {
            db.put(&w, &key(i), &[round; 100]).unwrap();
        }
        db.flush().unwrap();
    }
    // Long enough for a backoff doubling from 50 ms to reach seconds.
    std::thread::sleep(Duration::from_secs(7));
    let deferred = db.stats().counters.compactions_deferred_for_space;
    assert!(deferred >= 10, "deferred only {deferred} times in 7 s");
    assert_eq!(l0_files(&db), 4);
    fs.set_quota(None);
    let freed = Instant::now();
    assert!(
        eventually(Duration::from_secs(3), || l0_files(&db) < 4),
        "the deferred compaction had not run {:?} after space was freed",
        freed.elapsed()
    );
    db.wait_for_compactions().unwrap();
}

#[test]
fn manual_compaction_without_room_is_no_space_naming_the_bytes() {
    let fs = FaultFs::new();
    let db = on(&fs)
        .open(DIR, options().with_level0_file_num_compaction_trigger(40))
        .unwrap();
    let w = WriteOptions::default();
    // Two passes over the same keys: overlapping tables, which only a rewrite (never
    // a move) compacts.
    for pass in 0..2u8 {
        for i in 0..100 {
            db.put(&w, &key(i), &[b'a' + pass; 100]).unwrap();
        }
    }
    db.flush().unwrap();
    fs.set_quota(Some(fs.used_bytes() + 1000));
    let e = db.compact_range(None, None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoSpace);
    assert!(e.is_retryable(), "{e}");
    let cause = std::error::Error::source(&e).unwrap();
    let text = format!(
        "{e}: {cause}: {}",
        std::error::Error::source(cause).unwrap()
    );
    assert!(
        text.contains("not enough free space to start a compaction"),
        "{text}"
    );
    fs.set_quota(None);
    db.compact_range(None, None).unwrap();
    assert_eq!(l0_files(&db), 0);
}

#[test]
fn the_real_file_system_tells_its_free_space() {
    let dir = tempfile::tempdir().unwrap();
    let free = PosixFs.available_space(dir.path()).unwrap();
    assert!(free.is_some_and(|b| b > 0), "{free:?}");
    let e = PosixFs
        .available_space(Path::new("/no/such/directory/here"))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
}
