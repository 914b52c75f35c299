//! Event listeners (docs/ARCHITECTURE.md §10.1).
//!
//! What it protects: each job's events come in order (begin, its created tables,
//! completed) and agree with the files on disk and the versions before and after;
//! the inputs a compaction replaced are reported deleted after its completed event;
//! write stalls, memtable switches, background errors with their recovery and column
//! family changes are reported; a panicking listener neither stops the database nor
//! the other listeners, and is counted; `close` delivers every event queued before it;
//! a read-only open with a listener works and calls it never.

mod common;

use common::{key, on, tiny_options};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use strata::env::{FaultFs, FaultKinds, FaultRule};
use strata::{
    BackgroundErrorInfo, BackgroundErrorState, CfOptions, ColumnFamilyInfo, CompactionJobInfo,
    CompactionReason, DbBuilder, ErrorKind, ErrorRecoveryInfo, EventListener, FlushJobInfo,
    FlushReason, JobStatus, MemTableInfo, Options, ReadOptions, StallCause, TableFileCreationInfo,
    TableFileCreationReason, TableFileDeletionInfo, WriteOptions, WriteStallCondition,
    WriteStallInfo,
};

const DIR: &str = "/db";

/// One recorded event.
#[derive(Clone, Debug)]
enum Ev {
    FlushBegin(FlushJobInfo),
    FlushCompleted(FlushJobInfo),
    CompactionBegin(CompactionJobInfo),
    CompactionCompleted(CompactionJobInfo),
    Created(TableFileCreationInfo),
    Deleted(TableFileDeletionInfo),
    Sealed(MemTableInfo),
    Stall(WriteStallInfo),
    BgError(BackgroundErrorInfo),
    Recovered(ErrorRecoveryInfo),
    CfCreated(ColumnFamilyInfo),
    CfDropped(ColumnFamilyInfo),
}

/// Records every event, in the order delivered.
#[derive(Default)]
struct Recorder(Mutex<Vec<Ev>>);

impl Recorder {
    fn push(&self, e: Ev) {
        self.0.lock().unwrap().push(e);
    }

    fn events(&self) -> Vec<Ev> {
        self.0.lock().unwrap().clone()
    }

    /// Waits (up to 10 s) until `done` holds of the events so far; returns them.
    fn wait_for(&self, what: &str, done: impl Fn(&[Ev]) -> bool) -> Vec<Ev> {
        let start = Instant::now();
        loop {
            let events = self.events();
            if done(&events) {
                return events;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "no {what} within 10 s: {events:#?}"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

impl EventListener for Recorder {
    fn on_flush_begin(&self, i: &FlushJobInfo) {
        self.push(Ev::FlushBegin(i.clone()));
    }
    fn on_flush_completed(&self, i: &FlushJobInfo) {
        self.push(Ev::FlushCompleted(i.clone()));
    }
    fn on_compaction_begin(&self, i: &CompactionJobInfo) {
        self.push(Ev::CompactionBegin(i.clone()));
    }
    fn on_compaction_completed(&self, i: &CompactionJobInfo) {
        self.push(Ev::CompactionCompleted(i.clone()));
    }
    fn on_table_file_created(&self, i: &TableFileCreationInfo) {
        self.push(Ev::Created(i.clone()));
    }
    fn on_table_file_deleted(&self, i: &TableFileDeletionInfo) {
        self.push(Ev::Deleted(i.clone()));
    }
    fn on_memtable_sealed(&self, i: &MemTableInfo) {
        self.push(Ev::Sealed(i.clone()));
    }
    fn on_stall_conditions_changed(&self, i: &WriteStallInfo) {
        self.push(Ev::Stall(*i));
    }
    fn on_background_error(&self, i: &BackgroundErrorInfo) {
        self.push(Ev::BgError(i.clone()));
    }
    fn on_error_recovery_completed(&self, i: &ErrorRecoveryInfo) {
        self.push(Ev::Recovered(i.clone()));
    }
    fn on_column_family_created(&self, i: &ColumnFamilyInfo) {
        self.push(Ev::CfCreated(i.clone()));
    }
    fn on_column_family_dropped(&self, i: &ColumnFamilyInfo) {
        self.push(Ev::CfDropped(i.clone()));
    }
}

/// Panics on every event, after counting it.
#[derive(Default)]
struct Panicker(AtomicU64);

impl Panicker {
    fn boom(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("a listener that always panics");
    }
}

impl EventListener for Panicker {
    fn on_flush_begin(&self, _: &FlushJobInfo) {
        self.boom();
    }
    fn on_flush_completed(&self, _: &FlushJobInfo) {
        self.boom();
    }
    fn on_compaction_begin(&self, _: &CompactionJobInfo) {
        self.boom();
    }
    fn on_compaction_completed(&self, _: &CompactionJobInfo) {
        self.boom();
    }
    fn on_table_file_created(&self, _: &TableFileCreationInfo) {
        self.boom();
    }
    fn on_table_file_deleted(&self, _: &TableFileDeletionInfo) {
        self.boom();
    }
    fn on_memtable_sealed(&self, _: &MemTableInfo) {
        self.boom();
    }
    fn on_stall_conditions_changed(&self, _: &WriteStallInfo) {
        self.boom();
    }
    fn on_background_error(&self, _: &BackgroundErrorInfo) {
        self.boom();
    }
    fn on_error_recovery_completed(&self, _: &ErrorRecoveryInfo) {
        self.boom();
    }
    fn on_column_family_created(&self, _: &ColumnFamilyInfo) {
        self.boom();
    }
    fn on_column_family_dropped(&self, _: &ColumnFamilyInfo) {
        self.boom();
    }
}

fn recording(fs: &FaultFs) -> (DbBuilder, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let builder = on(fs).listener(Arc::clone(&recorder) as Arc<dyn EventListener>);
    (builder, recorder)
}

fn put_range(db: &strata::Db, keys: std::ops::Range<u32>, round: u32) {
    for i in keys {
        let v = format!("value-{i}-{round}-{}", "x".repeat(40));
        db.put(&WriteOptions::default(), &key(i), v.as_bytes())
            .unwrap();
    }
}

fn position(events: &[Ev], what: impl Fn(&Ev) -> bool) -> Option<usize> {
    events.iter().position(what)
}

/// Options under which nothing compacts by itself.
fn no_auto_compaction() -> Options {
    tiny_options()
        .with_write_buffer_size(1 << 20)
        .with_level0_file_num_compaction_trigger(100)
        .with_level0_slowdown_writes_trigger(100)
        .with_level0_stop_writes_trigger(100)
}

#[test]
fn a_flush_reports_its_memtable_begin_table_and_completion() {
    let fs = FaultFs::new();
    let (builder, rec) = recording(&fs);
    let db = builder.open(DIR, no_auto_compaction()).unwrap();
    put_range(&db, 0..50, 0);
    db.flush().unwrap();
    let live = db.stats().levels[0].files;
    db.close().unwrap();
    assert_eq!(live, 1);

    let events = rec.events();
    let sealed = position(&events, |e| matches!(e, Ev::Sealed(_))).expect("sealed");
    let Ev::Sealed(mem) = &events[sealed] else {
        unreachable!()
    };
    assert_eq!((mem.cf_id, mem.cf_name.as_str()), (0, "default"));
    assert_eq!(mem.entries, 50);
    assert!(mem.bytes > 0);

    let begin = position(&events, |e| matches!(e, Ev::FlushBegin(_))).expect("begin");
    let created = position(&events, |e| matches!(e, Ev::Created(_))).expect("created");
    let completed = position(&events, |e| matches!(e, Ev::FlushCompleted(_))).expect("done");
    assert!(
        sealed < begin && begin < created && created < completed,
        "{events:#?}"
    );
    let (Ev::FlushBegin(b), Ev::Created(c), Ev::FlushCompleted(d)) =
        (&events[begin], &events[created], &events[completed])
    else {
        unreachable!()
    };
    assert_eq!(b.status, JobStatus::Running);
    assert_eq!(b.reason, FlushReason::Memtable);
    assert_eq!(b.memtable_entries, 50);
    assert!(b.outputs.is_empty());
    assert_eq!(d.status, JobStatus::Installed);
    assert_eq!((b.job_id, c.job_id), (d.job_id, d.job_id));
    assert_eq!(c.reason, TableFileCreationReason::Flush);
    assert_eq!(d.outputs, vec![c.file.clone()]);
    assert_eq!(c.file.level, 0);
    let on_disk = fs.file_bytes(&c.file.path).expect("the table is on disk");
    assert_eq!(on_disk.len() as u64, c.file.size);
    assert_eq!(d.bytes_written, c.file.size);
    assert!(!c.file.is_virtual);
    // Nothing was deleted: the flushed table is live.
    assert!(!events.iter().any(|e| matches!(e, Ev::Deleted(_))));
}

#[test]
fn a_compaction_reports_the_versions_before_and_after() {
    let fs = FaultFs::new();
    let (builder, rec) = recording(&fs);
    let db = builder.open(DIR, no_auto_compaction()).unwrap();
    // Three L0 tables over the same keys: the compaction must rewrite them.
    for round in 0..3 {
        put_range(&db, 0..40, round);
        db.flush().unwrap();
    }
    db.compact_range(None, None).unwrap();
    let levels: Vec<usize> = db.stats().levels.iter().map(|l| l.files).collect();
    // Events are delivered by their own thread: read them once `close` has delivered
    // every one (read before, the flushes' could still be queued).
    db.close().unwrap();

    let events = rec.events();
    let flushed: BTreeSet<u64> = events
        .iter()
        .filter_map(|e| match e {
            Ev::FlushCompleted(f) => Some(f.outputs.iter().map(|t| t.number)),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(flushed.len(), 3);
    let begin = position(&events, |e| matches!(e, Ev::CompactionBegin(_))).expect("begin");
    let Ev::CompactionBegin(b) = &events[begin] else {
        unreachable!()
    };
    assert_eq!(b.reason, CompactionReason::Manual);
    assert_eq!(b.output_level, Some(1));
    assert_eq!(b.status, JobStatus::Running);
    let inputs: BTreeSet<u64> = b.inputs.iter().map(|t| t.number).collect();
    assert_eq!(inputs, flushed, "the inputs are the L0 tables before");
    assert!(b.inputs.iter().all(|t| t.level == 0));
    let completed = position(
        &events,
        |e| matches!(e, Ev::CompactionCompleted(c) if c.job_id == b.job_id),
    )
    .expect("completed");
    let Ev::CompactionCompleted(d) = &events[completed] else {
        unreachable!()
    };
    assert_eq!(d.status, JobStatus::Installed);
    assert_eq!(d.inputs, b.inputs);
    assert!(!d.outputs.is_empty());
    assert!(d.bytes_read > 0 && d.bytes_written > 0);
    assert_eq!(
        d.bytes_written,
        d.outputs.iter().map(|t| t.size).sum::<u64>()
    );
    // Each output was reported created before the completed event, is in L1 and on
    // disk with its size.
    for out in &d.outputs {
        assert_eq!(out.level, 1);
        let created = position(
            &events,
            |e| matches!(e, Ev::Created(c) if c.file.number == out.number && c.job_id == d.job_id),
        )
        .expect("created");
        assert!(begin < created && created < completed);
        let bytes = fs.file_bytes(&out.path).expect("output on disk");
        assert_eq!(bytes.len() as u64, out.size);
    }
    assert_eq!(levels[0], 0);
    assert_eq!(levels[1], d.outputs.len(), "{levels:?}");
    // Each input was deleted after the completed event, and is gone from disk.
    for input in &b.inputs {
        let deleted = position(
            &events,
            |e| matches!(e, Ev::Deleted(x) if x.number == input.number),
        )
        .unwrap_or_else(|| panic!("input {} never deleted: {events:#?}", input.number));
        assert!(deleted > completed);
        let Ev::Deleted(x) = &events[deleted] else {
            unreachable!()
        };
        assert_eq!(x.path, input.path);
        assert!(x.error.is_none());
        assert!(fs.file_bytes(&input.path).is_none());
    }
}

/// Writes stop while every memtable waits for a flush that cannot create its table;
/// the stall is reported, and so is its end once the flush succeeds.
#[test]
fn a_write_stall_on_memtables_is_reported_with_its_end() {
    let fs = FaultFs::new();
    let (builder, rec) = recording(&fs);
    let opts = no_auto_compaction()
        .with_write_buffer_size(4096)
        .with_max_write_buffer_number(2);
    let db = builder.open(DIR, opts).unwrap();
    fs.inject(FaultRule::sticky(FaultKinds::CREATE, 0).on_path(".sst"));
    let mut refused = None;
    for i in 0..2000u32 {
        if let Err(e) = db.put(&WriteOptions::default(), &key(i), &[b'v'; 100]) {
            refused = Some(e);
            break;
        }
    }
    let e = refused.expect("a stalled write is refused once the flush fails");
    assert!(e.is_retryable(), "{e}");
    rec.wait_for("stall", |ev| {
        ev.iter().any(|e| {
            matches!(e, Ev::Stall(s) if s.current == WriteStallCondition::Stopped(StallCause::Memtables))
        })
    });
    fs.clear_faults();
    // The flush is retried after its backoff; writes go through again.
    let start = Instant::now();
    while db.put(&WriteOptions::default(), b"after", b"1").is_err() {
        assert!(start.elapsed() < Duration::from_secs(20));
        std::thread::sleep(Duration::from_millis(10));
    }
    db.flush().unwrap();
    db.put(&WriteOptions::default(), b"after2", b"1").unwrap();
    db.close().unwrap();

    let events = rec.events();
    let stalls: Vec<WriteStallInfo> = events
        .iter()
        .filter_map(|e| match e {
            Ev::Stall(s) => Some(*s),
            _ => None,
        })
        .collect();
    let stopped = WriteStallCondition::Stopped(StallCause::Memtables);
    let at = stalls
        .iter()
        .position(|s| s.current == stopped)
        .expect("stopped");
    assert_eq!(stalls[at].previous, WriteStallCondition::Normal);
    assert!(
        stalls[at + 1..]
            .iter()
            .any(|s| s.previous == stopped && s.current == WriteStallCondition::Normal),
        "{stalls:?}"
    );
    // Consecutive reports chain: each one's previous is the last one's current.
    for w in stalls.windows(2) {
        assert_eq!(w[0].current, w[1].previous);
    }
    // The failed flush attempts were reported as retrying background errors, and as
    // failed jobs.
    assert!(events.iter().any(|e| matches!(e,
        Ev::BgError(b) if b.state == BackgroundErrorState::Retrying && b.kind == ErrorKind::Io)));
    assert!(events.iter().any(|e| matches!(e,
        Ev::FlushCompleted(f) if matches!(f.status, JobStatus::Failed { .. }))));
}

/// Writes slow down while L0 holds `level0_slowdown_writes_trigger` files and no
/// compaction can open its inputs.
#[test]
fn a_write_slowdown_on_level0_files_is_reported() {
    let fs = FaultFs::new();
    let (builder, rec) = recording(&fs);
    let opts = tiny_options()
        .with_write_buffer_size(1 << 20)
        .with_level0_file_num_compaction_trigger(2)
        .with_level0_slowdown_writes_trigger(2)
        .with_level0_stop_writes_trigger(100);
    let db = builder.open(DIR, opts).unwrap();
    fs.inject(FaultRule::sticky(FaultKinds::OPEN, 0).on_path(".sst"));
    for round in 0..2 {
        put_range(&db, 0..20, round);
        db.flush().unwrap();
    }
    db.put(&WriteOptions::default(), b"slowed", b"1").unwrap();
    rec.wait_for("slowdown", |ev| {
        ev.iter().any(|e| {
            matches!(e, Ev::Stall(s) if s.current == WriteStallCondition::Slowed(StallCause::Level0Files))
        })
    });
    fs.clear_faults();
    // A compaction that opened its inputs before the faults were cleared can still
    // fail, retryably, during the wait (which reports it); the next attempt runs
    // without them.
    let mut failed_waits = 0;
    while let Err(e) = db.wait_for_compactions() {
        failed_waits += 1;
        assert!(e.is_retryable() && failed_waits < 10, "{e:?}");
    }
    db.put(&WriteOptions::default(), b"normal", b"1").unwrap();
    rec.wait_for("the end of the slowdown", |ev| {
        ev.iter()
            .any(|e| matches!(e, Ev::Stall(s) if s.current == WriteStallCondition::Normal))
    });
    db.close().unwrap();
}

#[test]
fn column_family_creation_and_drop_are_reported() {
    let fs = FaultFs::new();
    let (builder, rec) = recording(&fs);
    let db = builder.open(DIR, no_auto_compaction()).unwrap();
    let cf = db.create_cf("logs", CfOptions::default()).unwrap();
    let id = cf.id();
    db.put_cf(&WriteOptions::default(), &cf, b"k", b"v")
        .unwrap();
    db.flush_cf(&cf).unwrap();
    db.drop_cf(&cf).unwrap();
    drop(cf);
    db.close().unwrap();

    let events = rec.events();
    let created = position(&events, |e| matches!(e, Ev::CfCreated(_))).expect("created");
    let flushed = position(
        &events,
        |e| matches!(e, Ev::FlushCompleted(f) if f.cf_id == id),
    )
    .expect("flushed");
    let dropped = position(&events, |e| matches!(e, Ev::CfDropped(_))).expect("dropped");
    assert!(created < flushed && flushed < dropped, "{events:#?}");
    for at in [created, dropped] {
        let (Ev::CfCreated(i) | Ev::CfDropped(i)) = &events[at] else {
            unreachable!()
        };
        assert_eq!((i.cf_id, i.cf_name.as_str()), (id, "logs"));
    }
    let Ev::FlushCompleted(f) = &events[flushed] else {
        unreachable!()
    };
    assert_eq!(f.cf_name, "logs");
    // The dropped family's table is deleted after the drop.
    let table = f.outputs[0].number;
    let deleted = position(
        &events,
        |e| matches!(e, Ev::Deleted(d) if d.number == table),
    )
    .expect("the dropped family's table is deleted");
    assert!(deleted > dropped);
}

#[test]
fn a_panicking_listener_is_counted_and_stops_nothing() {
    let fs = FaultFs::new();
    let panicker = Arc::new(Panicker::default());
    let rec = Arc::new(Recorder::default());
    let db = on(&fs)
        .listener(Arc::clone(&panicker) as Arc<dyn EventListener>)
        .listener(Arc::clone(&rec) as Arc<dyn EventListener>)
        .open(DIR, no_auto_compaction())
        .unwrap();
    for round in 0..3 {
        put_range(&db, 0..30, round);
        db.flush().unwrap();
    }
    let cf = db.create_cf("other", CfOptions::default()).unwrap();
    db.compact_range(None, None).unwrap();
    // The database works on.
    put_range(&db, 30..40, 9);
    assert!(db.get(&ReadOptions::default(), &key(35)).unwrap().is_some());
    // Every event so far reached both listeners, the panicking one first: once the
    // recorder has the family's event, each earlier panic is counted.
    rec.wait_for("the family's event", |ev| {
        ev.iter().any(|e| matches!(e, Ev::CfCreated(_)))
    });
    let start = Instant::now();
    loop {
        let calls = panicker.0.load(Ordering::SeqCst);
        let panics = db.stats().counters.listener_panics;
        if calls == panics && rec.events().len() as u64 == calls {
            assert!(calls >= 10, "{calls}");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{calls} {panics}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    db.drop_cf(&cf).unwrap();
    db.close().unwrap();
    let events = rec.events();
    assert_eq!(events.len() as u64, panicker.0.load(Ordering::SeqCst));
    assert!(events.iter().any(|e| matches!(e, Ev::CfDropped(_))));
    assert!(events
        .iter()
        .any(|e| matches!(e, Ev::CompactionCompleted(c) if c.status == JobStatus::Installed)));
}

/// A listener that takes its time on each event.
struct Slow(Arc<Recorder>);

impl EventListener for Slow {
    fn on_flush_begin(&self, i: &FlushJobInfo) {
        std::thread::sleep(Duration::from_millis(50));
        self.0.on_flush_begin(i);
    }
    fn on_flush_completed(&self, i: &FlushJobInfo) {
        std::thread::sleep(Duration::from_millis(50));
        self.0.on_flush_completed(i);
    }
    fn on_column_family_created(&self, i: &ColumnFamilyInfo) {
        std::thread::sleep(Duration::from_millis(50));
        self.0.on_column_family_created(i);
    }
}

#[test]
fn close_delivers_every_event_queued_before_it() {
    let fs = FaultFs::new();
    let rec = Arc::new(Recorder::default());
    let db = on(&fs)
        .listener(Arc::new(Slow(Arc::clone(&rec))) as Arc<dyn EventListener>)
        .open(DIR, no_auto_compaction())
        .unwrap();
    const FLUSHES: usize = 10;
    for round in 0..FLUSHES {
        put_range(&db, 0..10, round as u32);
        db.flush().unwrap();
    }
    db.create_cf("last", CfOptions::default()).unwrap();
    // 21 events at 50 ms each are still queued, most of them.
    assert!(rec.events().len() < 2 * FLUSHES + 1);
    db.close().unwrap();
    let events = rec.events();
    let count = |f: fn(&Ev) -> bool| events.iter().filter(|e| f(e)).count();
    assert_eq!(count(|e| matches!(e, Ev::FlushBegin(_))), FLUSHES);
    assert_eq!(count(|e| matches!(e, Ev::FlushCompleted(_))), FLUSHES);
    assert!(
        matches!(events.last(), Some(Ev::CfCreated(_))),
        "{events:#?}"
    );
}

/// A flush's MANIFEST edit meets a full disk: the error and the no-space state are
/// reported, the flush fails, its table is deleted, and the resume is reported.
#[test]
fn a_full_disk_is_reported_as_a_background_error_and_its_recovery() {
    let fs = FaultFs::new();
    let (builder, rec) = recording(&fs);
    let db = builder.open(DIR, Options::default()).unwrap();
    put_range(&db, 0..100, 0);
    fs.inject(
        FaultRule::once(FaultKinds::WRITE, 0)
            .on_path("MANIFEST-")
            .no_space(),
    );
    let e = db.flush().expect_err("the MANIFEST edit meets a full disk");
    assert_eq!(e.kind(), ErrorKind::NoSpace, "{e}");
    db.resume().unwrap();
    db.flush().unwrap();
    db.close().unwrap();

    let events = rec.events();
    let error = position(&events, |e| matches!(e, Ev::BgError(_))).expect("error");
    let Ev::BgError(b) = &events[error] else {
        unreachable!()
    };
    assert_eq!(b.state, BackgroundErrorState::NoSpace);
    assert_eq!(b.kind, ErrorKind::NoSpace);
    assert!(b.message.contains("MANIFEST-"), "{}", b.message);
    let failed = position(&events, |e| matches!(e, Ev::FlushCompleted(_))).expect("failed");
    let Ev::FlushCompleted(f) = &events[failed] else {
        unreachable!()
    };
    assert!(
        matches!(
            &f.status,
            JobStatus::Failed {
                kind: ErrorKind::NoSpace,
                ..
            }
        ),
        "{:?}",
        f.status
    );
    assert!(error < failed);
    // The table the failed flush wrote was created, then deleted.
    let lost = position(
        &events,
        |e| matches!(e, Ev::Created(c) if c.job_id == f.job_id),
    )
    .expect("the failed flush's table");
    let Ev::Created(lost) = &events[lost] else {
        unreachable!()
    };
    let deleted = position(
        &events,
        |e| matches!(e, Ev::Deleted(d) if d.number == lost.file.number),
    )
    .expect("the failed flush's table is deleted");
    assert!(deleted > failed);
    let recovered = position(&events, |e| matches!(e, Ev::Recovered(_))).expect("recovered");
    let Ev::Recovered(r) = &events[recovered] else {
        unreachable!()
    };
    assert_eq!(r.kind, ErrorKind::NoSpace);
    assert!(recovered > failed);
    let installed = position(
        &events,
        |e| matches!(e, Ev::FlushCompleted(f) if f.status == JobStatus::Installed),
    )
    .expect("the flush ran again");
    assert!(installed > recovered);
}

#[test]
fn a_read_only_open_with_a_listener_works_and_calls_it_never() {
    let fs = FaultFs::new();
    let db = on(&fs).open(DIR, no_auto_compaction()).unwrap();
    put_range(&db, 0..20, 0);
    db.flush().unwrap();
    put_range(&db, 20..30, 0);
    db.close().unwrap();
    let (builder, rec) = recording(&fs);
    let ro = builder.open_read_only(DIR, no_auto_compaction()).unwrap();
    assert!(ro.get(&ReadOptions::default(), &key(25)).unwrap().is_some());
    ro.wait_for_compactions().unwrap();
    ro.close().unwrap();
    assert!(rec.events().is_empty());
}
