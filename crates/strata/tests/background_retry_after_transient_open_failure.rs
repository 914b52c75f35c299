//! Issue 9, item 6: a background job that fails before writing anything (a table file
//! could not be created, opened or read) is abandoned and retried after a backoff, counted in
//! `background_retries`, and does not poison the database. A caller waiting on it
//! (`flush`, `wait_for_compactions`, `compact_range`) gets the retryable error and may
//! call again. A memtable switch that cannot create the next WAL is refused the same
//! way, without poisoning.

/// Calls `f` until it succeeds, allowing only retryable errors, at most 50 times.
fn retry(mut f: impl FnMut() -> strata::Result<()>) {
    for _ in 0..50 {
        match f() {
            Ok(()) => return,
            Err(e) => assert!(e.is_retryable(), "{e}"),
        }
    }
    panic!("no success after 50 retries");
}

mod common;

use std::sync::Arc;
use strata::env::{FaultFs, FaultKinds, FaultRule};
use strata::{Db, ErrorKind, ReadOptions, WriteOptions};

/// Opens `/db` on `fs` with the test kit's small options.
fn open(fs: &FaultFs) -> Db {
    Db::builder()
        .file_system(Arc::new(fs.clone()))
        .open("/db", common::tiny_options())
        .expect("open")
}

/// Writes `n` keys; a put stalled behind a failed background job gets its retryable
/// error and is made again.
fn fill(db: &Db, round: u8, n: u32) {
    for i in 0..n {
        let key = format!("k{i:04}");
        retry(|| db.put(&WriteOptions::default(), key.as_bytes(), &[round; 32]));
    }
}

fn check(db: &Db, round: u8, n: u32) {
    for i in 0..n {
        let got = db
            .get(&ReadOptions::default(), format!("k{i:04}").as_bytes())
            .expect("get");
        assert_eq!(got, Some(vec![round; 32]), "k{i:04}");
    }
}

#[test]
fn failed_table_create_during_flush_is_retried() {
    let fs = FaultFs::new();
    let db = open(&fs);
    fill(&db, 1, 50);
    fs.inject(FaultRule::once(FaultKinds::CREATE, 0).on_path(".sst"));
    retry(|| db.flush());
    assert_eq!(fs.faults_injected(), 1);
    assert!(db.stats().counters.background_retries >= 1);
    fill(&db, 2, 50);
    db.flush().expect("still healthy");
    check(&db, 2, 50);
    db.close().expect("close");
    let db = open(&fs);
    check(&db, 2, 50);
}

#[test]
fn failed_table_open_during_compaction_is_retried() {
    let fs = FaultFs::new();
    let db = open(&fs);
    fs.inject(FaultRule::once(FaultKinds::OPEN, 0).on_path(".sst"));
    for round in 1..=6 {
        fill(&db, round, 200);
        retry(|| db.flush());
    }
    retry(|| db.wait_for_compactions());
    assert_eq!(fs.faults_injected(), 1);
    assert!(db.stats().counters.background_retries >= 1);
    assert!(db.stats().counters.compaction_bytes_written > 0);
    check(&db, 6, 200);
}

/// A read error in a compaction's input (EIO on a table block) changes nothing on
/// disk: the job is abandoned and retried, not a poisoned database (`IoOp::Read` is
/// retryable, decided from the operation, issue 34 item 9).
#[test]
fn failed_table_read_during_compaction_is_retried() {
    let fs = FaultFs::new();
    let db = open(&fs);
    for round in 1..=3 {
        fill(&db, round, 200);
        retry(|| db.flush());
    }
    fs.inject(FaultRule::once(FaultKinds::READ, 0).on_path(".sst"));
    for round in 4..=6 {
        fill(&db, round, 200);
        retry(|| db.flush());
    }
    retry(|| db.wait_for_compactions());
    assert_eq!(fs.faults_injected(), 1);
    assert!(db.stats().counters.background_retries >= 1);
    db.put(&WriteOptions::default(), b"after", b"x")
        .expect("not poisoned");
    check(&db, 6, 200);
}

#[test]
fn manual_compaction_returns_a_retryable_error_without_poisoning() {
    let fs = FaultFs::new();
    let db = open(&fs);
    fill(&db, 1, 200);
    db.flush().expect("flush");
    fill(&db, 2, 200);
    db.flush().expect("flush");
    db.wait_for_compactions().expect("settle");
    fill(&db, 3, 200);
    db.compact_range(None, None).expect("empty L0");
    db.wait_for_compactions().expect("settle");
    // One small L0 file (below the trigger, so no automatic compaction) overlapping
    // the levels below: the manual compaction must rewrite it, and its own flush has
    // nothing to do.
    fill(&db, 4, 20);
    db.flush().expect("flush");
    assert_eq!(db.stats().levels[0].files, 1);
    fs.inject(FaultRule::once(FaultKinds::CREATE, 0).on_path(".sst"));
    let err = db.compact_range(None, None).expect_err("injected");
    assert_eq!(err.kind(), ErrorKind::Io, "{err}");
    assert!(err.is_retryable(), "{err}");
    db.compact_range(None, None).expect("retry by the caller");
    db.put(&WriteOptions::default(), b"after", b"x")
        .expect("not poisoned");
    check(&db, 4, 20);
    assert_eq!(
        db.get(&ReadOptions::default(), b"k0100").expect("get"),
        Some(vec![3; 32])
    );
}

/// A full disk when the memtable switch creates the next WAL: the write that needed the
/// switch gets the retryable error, nothing changed (the old WAL and memtable stay
/// active), and once space is back writes go on and everything acknowledged survives a
/// crash.
#[test]
fn failed_wal_create_at_memtable_switch_is_retryable() {
    let fs = FaultFs::new();
    let db = open(&fs);
    fill(&db, 1, 50);
    fs.inject(FaultRule::once(FaultKinds::CREATE, 0).on_path(".log"));
    let err = db.flush().expect_err("the switch cannot create its WAL");
    assert!(err.is_retryable(), "{err}");
    assert_eq!(fs.faults_injected(), 1);
    db.put(&WriteOptions::default().with_sync(true), b"after", b"x")
        .expect("not poisoned");
    db.flush().expect("space is back");
    fill(&db, 2, 50);
    db.put(&WriteOptions::default().with_sync(true), b"last", b"y")
        .expect("put");
    drop(db);
    fs.crash();
    let db = open(&fs);
    check(&db, 2, 50);
    assert_eq!(
        db.get(&ReadOptions::default(), b"after").expect("get"),
        Some(b"x".to_vec())
    );
}
