//! Fault injection and crash loop: no acknowledged write is lost, no failed fsync is
//! retried as if it had succeeded, and recovery never accepts a state that no prefix of
//! the acknowledged writes explains.
//!
//! What it protects (DESIGN invariants on durability and poisoning):
//! - A failed WAL write or fsync reaches the writer, and every later write is refused
//!   with [`ErrorKind::Poisoned`]; the same holds for a failed SSTable write or fsync
//!   during a flush, a failed MANIFEST append or fsync, a failed directory fsync and a
//!   failed rename of `CURRENT`. After a power loss the database reopens with every
//!   write acknowledged with `sync` (or made durable by a successful `flush`/`close`).
//! - The crash loop: each scenario (sync writes + flushes; compactions; MANIFEST
//!   roll-over; recovery itself; delayed compaction's virtual tables; query-driven
//!   compaction; two tiers with HotRAP) is run once to count its file-system
//!   operations, then
//!   replayed with the disk dying at operation `k` (a sticky fault) or the power cut
//!   when the operation count reaches `k`, for a sample of `k`. After the crash
//!   (dropping unsynced bytes, keeping a random prefix of them, or garbling them) the
//!   database must reopen and hold exactly the state after some prefix of the attempted
//!   writes, no shorter than what was acknowledged durable. A third kill fills the
//!   disk instead (`ENOSPC` at every create, append and flush from the `k`-th on):
//!   the engine must refuse with `NoSpace`, never poison, hold exactly the acknowledged
//!   writes while refusing, and take writes again once the scenario frees the space
//!   (by itself or on `Db::resume`); the cycle then goes on and ends with the same
//!   power cut and check. A scenario that makes
//!   virtual tables also verifies every physical table (each parent) after recovery
//!   and reopens with delayed compaction off to read the same state.
//!
//! Runs are deterministic apart from background-thread interleaving; every failure
//! message names the scenario, `k`, the kill and the crash mode. Replay one case with
//! `STRATA_CRASH_SCENARIO=<name> STRATA_CRASH_K=<k>`. Budgets: `STRATA_CRASH_ITERS=<n>`
//! cycles per scenario (default 500; 250 for `virtual`, `query_compaction` and
//! `tiering`), `STRATA_LONG=1` for every operation index.

mod common;

use common::{db_scan, key, on, three_data_paths, tiny_options};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use strata::env::{CrashMode, FailedSyncMode, FaultFs, FaultKinds, FaultRule};
use strata::{
    Db, DelayedCompaction, Error, ErrorKind, Options, QueryCompaction, ReadOptions,
    WalRecoveryMode, WriteBatch, WriteOptions,
};

const DIR: &str = "/db";

/// True iff `e` or one of its sources is an injected fault.
fn is_injected(e: &Error) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if err.to_string().contains("injected fault") {
            return true;
        }
        cur = err.source();
    }
    false
}

fn sync() -> WriteOptions {
    WriteOptions::default().with_sync(true)
}

/// The whole database: the default family's keys as they are, and for every other
/// family a marker [`family_marker`] plus its keys under [`family_key`].
fn read_all(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut all: BTreeMap<Vec<u8>, Vec<u8>> = db_scan(db, None, true, &None, &None, usize::MAX)
        .expect("scan after recovery")
        .into_iter()
        .collect();
    for name in db.cf_names().into_iter().skip(1) {
        let cf = db.cf(&name).expect("listed family");
        all.insert(family_marker(&name), Vec::new());
        let mut it = db.iter_cf(&ReadOptions::default(), &cf).expect("iter_cf");
        it.seek_to_first();
        while it.valid() {
            all.insert(family_key(&name, it.key()), it.value().to_vec());
            it.next();
        }
        it.status().expect("scan of a family after recovery");
    }
    all
}

/// The model's key of `key` in family `name`.
fn family_key(name: &str, key: &[u8]) -> Vec<u8> {
    let mut k = format!("{name}/").into_bytes();
    k.extend_from_slice(key);
    k
}

/// The model's entry saying family `name` exists.
fn family_marker(name: &str) -> Vec<u8> {
    format!("#cf/{name}").into_bytes()
}

// ---------------------------------------------------------------------------------
// Single faults with a known place.
// ---------------------------------------------------------------------------------

/// A failed WAL append or fsync reaches the syncing writer; every later write and
/// `flush` is poisoned; after a crash every earlier synced write is there and the
/// failed one is not.
fn wal_fault(kind: FaultKinds, failed_sync_mode: FailedSyncMode) {
    let fs = FaultFs::new();
    fs.set_failed_sync_mode(failed_sync_mode);
    let opts = Options::default();
    let db = on(&fs).open(DIR, opts.clone()).expect("open");
    for i in 0..50u32 {
        db.put(&sync(), &key(i), format!("v{i}").as_bytes())
            .expect("put");
    }
    fs.inject(FaultRule::once(kind, 0).on_path(".log"));
    let err = db
        .put(&sync(), &key(50), b"lost")
        .expect_err("the WAL fault must reach the writer");
    assert!(
        is_injected(&err),
        "{kind:?}: error carries the cause: {err}"
    );
    assert_eq!(fs.faults_injected(), 1);
    for i in 51..54u32 {
        let e = db.put(&sync(), &key(i), b"after").expect_err("poisoned");
        assert_eq!(e.kind(), ErrorKind::Poisoned, "{kind:?}: later write: {e}");
        let e = db
            .put(&WriteOptions::default(), &key(i), b"after")
            .expect_err("poisoned");
        assert_eq!(e.kind(), ErrorKind::Poisoned, "{kind:?}: later write: {e}");
    }
    let e = db.flush().expect_err("flush of a poisoned db");
    assert_eq!(e.kind(), ErrorKind::Poisoned, "{kind:?}: flush: {e}");
    assert!(db.close().is_err(), "{kind:?}: close reports the poison");
    fs.crash();
    fs.clear_faults();
    let db = on(&fs).open(DIR, opts).expect("reopen after crash");
    for i in 0..50u32 {
        assert_eq!(
            db.get(&ReadOptions::default(), &key(i)).expect("get"),
            Some(format!("v{i}").into_bytes()),
            "{kind:?}: synced key {i}"
        );
    }
    for i in 51..54u32 {
        assert_eq!(
            db.get(&ReadOptions::default(), &key(i)).expect("get"),
            None,
            "{kind:?}: refused write {i} must not appear"
        );
    }
    // The failed write itself may be present only if its bytes reached the disk; with
    // a failed append nothing was written.
    if kind == FaultKinds::WRITE {
        assert_eq!(
            db.get(&ReadOptions::default(), &key(50)).expect("get"),
            None
        );
    }
    // The recovered database takes writes again.
    db.put(&sync(), &key(60), b"again")
        .expect("put after recovery");
    assert_eq!(
        db.get(&ReadOptions::default(), &key(60)).expect("get"),
        Some(b"again".to_vec())
    );
}

#[test]
fn failed_wal_write_poisons_and_loses_nothing_synced() {
    wal_fault(FaultKinds::WRITE, FailedSyncMode::KeepDirty);
}

#[test]
fn failed_wal_fsync_poisons_and_is_never_retried_as_success() {
    wal_fault(FaultKinds::SYNC, FailedSyncMode::KeepDirty);
    // The kernel dropped the dirty pages: a retry that "succeeds" would persist zeros.
    wal_fault(FaultKinds::SYNC, FailedSyncMode::ZeroDirty);
}

/// A fault `rule` armed just before a `flush` must make the flush fail, poison the
/// database, and lose nothing written with `sync` after a crash.
fn flush_fault(what: &str, rule: FaultRule, base: Options) {
    let fs = FaultFs::new();
    let opts = base;
    let db = on(&fs).open(DIR, opts.clone()).expect("open");
    for round in 0..3u32 {
        for i in 0..40u32 {
            db.put(&sync(), &key(i), format!("r{round}-{i}").as_bytes())
                .expect("put");
        }
        if round < 2 {
            db.flush().expect("healthy flush");
        }
    }
    fs.inject(rule);
    let err = db.flush().expect_err("the fault must reach flush()");
    assert!(
        is_injected(&err),
        "{what}: error carries the injected cause: {err}"
    );
    assert!(fs.faults_injected() >= 1, "{what}: the fault fired");
    let e = db.put(&sync(), &key(100), b"x").expect_err("poisoned");
    assert_eq!(e.kind(), ErrorKind::Poisoned, "{what}: later write: {e}");
    drop(db);
    fs.crash();
    fs.clear_faults();
    let db = on(&fs)
        .open(DIR, opts)
        .unwrap_or_else(|e| panic!("{what}: reopen: {e}"));
    for i in 0..40u32 {
        assert_eq!(
            db.get(&ReadOptions::default(), &key(i)).expect("get"),
            Some(format!("r2-{i}").into_bytes()),
            "{what}: key {i}"
        );
    }
    assert_eq!(
        db.get(&ReadOptions::default(), &key(100)).expect("get"),
        None
    );
    db.flush()
        .unwrap_or_else(|e| panic!("{what}: flush after recovery: {e}"));
    db.close().expect("close");
}

#[test]
fn failed_sstable_write_during_flush_poisons() {
    flush_fault(
        "sst write",
        FaultRule::once(FaultKinds::WRITE, 0).on_path(".sst"),
        Options::default(),
    );
}

#[test]
fn failed_sstable_fsync_during_flush_poisons() {
    flush_fault(
        "sst fsync",
        FaultRule::once(FaultKinds::SYNC, 0).on_path(".sst"),
        Options::default(),
    );
}

#[test]
fn failed_manifest_append_poisons() {
    flush_fault(
        "manifest append",
        FaultRule::once(FaultKinds::WRITE, 0).on_path("MANIFEST"),
        Options::default(),
    );
    flush_fault(
        "manifest fsync",
        FaultRule::once(FaultKinds::SYNC, 0).on_path("MANIFEST"),
        Options::default(),
    );
}

#[test]
fn failed_directory_sync_poisons() {
    flush_fault(
        "dir sync",
        FaultRule::once(FaultKinds::SYNC_DIR, 0),
        Options::default(),
    );
}

#[test]
fn failed_current_rename_poisons() {
    // Every version change rolls the MANIFEST over, which swings CURRENT by a rename.
    let rolling = Options::default().with_max_manifest_file_size(1);
    flush_fault(
        "CURRENT rename",
        FaultRule::once(FaultKinds::RENAME, 0),
        rolling.clone(),
    );
    flush_fault(
        "CURRENT temp fsync",
        FaultRule::once(FaultKinds::SYNC, 0).on_path("CURRENT"),
        rolling,
    );

    // A failed rename while opening (which always writes a new MANIFEST) fails the
    // open and leaves the old state in charge.
    let fs = FaultFs::new();
    let opts = Options::default();
    let db = on(&fs).open(DIR, opts.clone()).expect("open");
    for i in 0..30u32 {
        db.put(&sync(), &key(i), b"v").expect("put");
    }
    drop(db);
    fs.crash();
    fs.inject(FaultRule::once(FaultKinds::RENAME, 0));
    let err = on(&fs)
        .open(DIR, opts.clone())
        .expect_err("open with a failing rename");
    assert!(is_injected(&err), "{err}");
    fs.crash();
    fs.clear_faults();
    let db = on(&fs).open(DIR, opts).expect("reopen");
    assert_eq!(read_all(&db).len(), 30);
}

// ---------------------------------------------------------------------------------
// The crash loop.
// ---------------------------------------------------------------------------------

/// One attempted write: its updates (value `None` = delete) and whether it synced.
#[derive(Clone, Debug)]
struct Attempt {
    items: Vec<Item>,
}

/// One update of an attempted write.
#[derive(Clone, Debug)]
enum Item {
    /// `Some(v)`: put; `None`: delete.
    Set(Vec<u8>, Option<Vec<u8>>),
    /// A merge operand ([`common::append_operator`]).
    Merge(Vec<u8>, Vec<u8>),
    /// Delete `[start, end)`.
    DeleteRange(Vec<u8>, Vec<u8>),
    /// An update of column family `.0`.
    InCf(&'static str, Box<Item>),
    /// `Db::create_cf` (an attempt of its own, never in a batch).
    CreateCf(&'static str),
    /// `Db::drop_cf` (an attempt of its own, never in a batch).
    DropCf(&'static str),
}

impl Item {
    fn put(k: Vec<u8>, v: Vec<u8>) -> Item {
        Item::Set(k, Some(v))
    }

    fn delete(k: Vec<u8>) -> Item {
        Item::Set(k, None)
    }

    fn add_to(&self, b: &mut WriteBatch, db: &Db) {
        match self {
            Item::Set(k, Some(v)) => b.put(k, v),
            Item::Set(k, None) => b.delete(k),
            Item::Merge(k, v) => b.merge(k, v),
            Item::DeleteRange(a, e) => b.delete_range(a, e),
            Item::InCf(name, item) => {
                let cf = db.cf(name).expect("the scenario writes to live families");
                match &**item {
                    Item::Set(k, Some(v)) => b.put_cf(&cf, k, v),
                    Item::Set(k, None) => b.delete_cf(&cf, k),
                    Item::Merge(k, v) => b.merge_cf(&cf, k, v),
                    Item::DeleteRange(a, e) => b.delete_range_cf(&cf, a, e),
                    other => panic!("not a batch item: {other:?}"),
                }
            }
            Item::CreateCf(_) | Item::DropCf(_) => panic!("not a batch item: {self:?}"),
        }
    }

    /// This item with its keys as the model keeps family `name`'s.
    fn in_family(&self, name: &str) -> Item {
        match self {
            Item::Set(k, v) => Item::Set(family_key(name, k), v.clone()),
            Item::Merge(k, v) => Item::Merge(family_key(name, k), v.clone()),
            Item::DeleteRange(a, e) => Item::DeleteRange(family_key(name, a), family_key(name, e)),
            other => panic!("not a family update: {other:?}"),
        }
    }

    /// Applies the item to `model`; returns the keys whose value may have changed.
    fn apply(&self, model: &mut BTreeMap<Vec<u8>, Vec<u8>>) -> Vec<Vec<u8>> {
        match self {
            Item::Set(k, Some(v)) => {
                model.insert(k.clone(), v.clone());
                vec![k.clone()]
            }
            Item::Set(k, None) => {
                model.remove(k);
                vec![k.clone()]
            }
            Item::Merge(k, v) => {
                common::model_merge(model, k, v);
                vec![k.clone()]
            }
            Item::DeleteRange(a, e) => {
                let gone: Vec<Vec<u8>> = model
                    .range::<Vec<u8>, _>(a..e)
                    .map(|(k, _)| k.clone())
                    .collect();
                common::model_delete_range(model, a, e);
                gone
            }
            Item::InCf(name, item) => item.in_family(name).apply(model),
            Item::CreateCf(name) => {
                model.insert(family_marker(name), Vec::new());
                vec![family_marker(name)]
            }
            Item::DropCf(name) => {
                let prefix = family_key(name, b"");
                let mut gone: Vec<Vec<u8>> = model
                    .range::<Vec<u8>, _>(prefix.clone()..)
                    .take_while(|(k, _)| k.starts_with(&prefix))
                    .map(|(k, _)| k.clone())
                    .collect();
                gone.push(family_marker(name));
                for k in &gone {
                    model.remove(k);
                }
                gone
            }
        }
    }

    /// The key a point read should check, if the item names one.
    fn point_key(&self) -> Option<&Vec<u8>> {
        match self {
            Item::Set(k, _) | Item::Merge(k, _) => Some(k),
            Item::DeleteRange(..) | Item::InCf(..) | Item::CreateCf(_) | Item::DropCf(_) => None,
        }
    }
}

/// Writes in the order they were issued, and how far they are known durable.
#[derive(Default)]
struct Recorder {
    attempts: Vec<Attempt>,
    /// Writes `0..acked` were acknowledged.
    acked: usize,
    /// Writes `0..durable` must survive any crash (synced, or flushed/closed after).
    durable: usize,
    /// Power cut when the scenario's operation count reaches this (the `Crash` kill).
    cut_at: Option<(u64, CrashMode)>,
    /// The file system and its operation count at the start of the faulted phase.
    fs: FaultFs,
    base_ops: u64,
    stopped: bool,
    /// The crash garbled the unsynced tail of a MANIFEST (see [`garbles_manifest_tail`]).
    garbled_manifest: bool,
    /// A [`Kill::NoSpace`] cycle: the disk fills up at some point, and the scenario
    /// frees space and goes on ([`Recorder::free_space`]).
    full_disk: bool,
    /// Resume through `Db::resume` rather than wait for the database to resume itself.
    resume_by_hand: bool,
    /// The durable state before the faulted phase (what `attempts` apply to).
    base: BTreeMap<Vec<u8>, Vec<u8>>,
    /// Operations refused for the full disk, and the time from space freed to the
    /// database taking writes again, summed.
    space_refusals: u64,
    resume_micros: u64,
}

/// Why a scenario stopped early.
#[derive(Debug)]
struct Stop;

impl Recorder {
    /// Cuts the power if the operation count reached the cut point. The disk is made
    /// to fail every operation first, so the dying process changes nothing after.
    fn maybe_cut(&mut self) -> Result<(), Stop> {
        if self.stopped {
            return Err(Stop);
        }
        if let Some((k, mode)) = self.cut_at {
            if self.fs.op_count() - self.base_ops >= k {
                self.fs.inject(FaultRule::sticky(FaultKinds::ALL, 0));
                self.garbled_manifest |= garbles_manifest_tail(&self.fs, mode);
                self.fs.crash_with(mode);
                self.stopped = true;
                return Err(Stop);
            }
        }
        Ok(())
    }

    /// In a [`Kill::NoSpace`] cycle, an operation refused for the full disk: checks
    /// the refusal (the database holds exactly the acknowledged writes, refuses the
    /// next write alike, and is not poisoned), frees the space and waits until the
    /// database takes writes again: by itself for odd `k`, through `Db::resume` for
    /// even ones. True iff the caller should run its operation again; false for any
    /// other error.
    fn free_space(&mut self, db: &Db, e: &Error, what: &str) -> bool {
        if e.kind() != ErrorKind::NoSpace {
            return false;
        }
        assert!(self.full_disk, "{what}: NoSpace with no full disk: {e}");
        // Nothing half-applied: the live database is the acknowledged prefix.
        let mut model = self.base.clone();
        for a in self.attempts.iter().take(self.acked) {
            for item in &a.items {
                item.apply(&mut model);
            }
        }
        assert!(
            read_all(db) == model,
            "{what} refused for a full disk ({e}): the database is not the acknowledged prefix"
        );
        match db.put(&sync(), b"zz-never-durable", b"refused") {
            Err(e2) => assert_eq!(e2.kind(), ErrorKind::NoSpace, "{what}: next write: {e2}"),
            Ok(()) => panic!("{what}: a write after a full-disk refusal ({e}) was accepted"),
        }
        self.space_refusals += 1;
        self.fs.clear_faults();
        let freed = std::time::Instant::now();
        let resumes = db.stats().counters.no_space_resumes;
        loop {
            let resumed = if self.resume_by_hand {
                match db.resume() {
                    Ok(()) => true,
                    Err(e) if e.kind() == ErrorKind::NoSpace => false,
                    Err(e) => panic!("{what}: resume: {e}"),
                }
            } else {
                db.stats().counters.no_space_resumes > resumes
            };
            if resumed {
                break;
            }
            assert!(
                freed.elapsed() < std::time::Duration::from_secs(20),
                "{what}: no resume 20 s after space was freed"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        self.resume_micros += freed.elapsed().as_micros() as u64;
        true
    }

    /// An error from the engine during the faulted phase: the scenario stops, after
    /// checking that the database refuses the next write as poisoned.
    fn failed(&mut self, db: &Db, e: &Error, what: &str) -> Stop {
        assert!(
            !self.full_disk,
            "{what}: a full disk must never poison or fail otherwise: {e} ({e:?})"
        );
        // A poisoned database carries the failure that poisoned it as the error's
        // source, so even a refusal must trace back to an injected fault.
        assert!(
            is_injected(e),
            "{what} failed with an error not caused by the fault: {e} ({e:?})"
        );
        // The dead disk must refuse the next write: as poisoned (its WAL append or a
        // job's write failed), or, when the write stalls behind a flush or compaction
        // that cannot even create or open a file, with that retryable error (the
        // database is healthy but cannot make room; nothing was written).
        let again = db.put(&sync(), b"zz-never-durable", b"refused");
        match again {
            Err(e2) => assert!(
                e2.kind() == ErrorKind::Poisoned || (is_injected(&e2) && e2.is_retryable()),
                "a write after a failed {what} must be refused as poisoned or retryable: {e2}"
            ),
            Ok(()) => panic!("a write after a failed {what} ({e}) was accepted"),
        }
        self.stopped = true;
        Stop
    }

    fn write(&mut self, db: &Db, items: Vec<Item>, sync: bool) -> Result<(), Stop> {
        self.maybe_cut()?;
        let mut b = WriteBatch::new();
        for item in &items {
            item.add_to(&mut b, db);
        }
        self.attempts.push(Attempt { items });
        let wo = WriteOptions::default().with_sync(sync);
        let mut written = db.write(&wo, b.clone());
        while let Err(e) = &written {
            if !self.free_space(db, e, "write") {
                break;
            }
            written = db.write(&wo, b.clone());
        }
        match written {
            Ok(()) => {
                self.acked = self.attempts.len();
                if sync {
                    self.durable = self.acked;
                }
                Ok(())
            }
            Err(e) => Err(self.failed(db, &e, "write")),
        }
    }

    fn put(&mut self, db: &Db, k: Vec<u8>, v: Vec<u8>, sync: bool) -> Result<(), Stop> {
        self.write(db, vec![Item::put(k, v)], sync)
    }

    /// Creates (`drop == false`) or drops family `name`. Both sync the WAL before
    /// their MANIFEST record, so on success every earlier write is durable too.
    fn family_op(&mut self, db: &Db, name: &'static str, drop: bool) -> Result<(), Stop> {
        self.maybe_cut()?;
        let item = if drop {
            Item::DropCf(name)
        } else {
            Item::CreateCf(name)
        };
        self.attempts.push(Attempt { items: vec![item] });
        let op = |db: &Db| {
            if drop {
                let cf = db.cf(name).expect("the scenario drops live families");
                db.drop_cf(&cf)
            } else {
                db.create_cf(name, tiny_options().cf_options()).map(|_| ())
            }
        };
        let what = if drop { "drop_cf" } else { "create_cf" };
        let result = self.retry_for_space(db, what, op);
        match result {
            Ok(()) => {
                self.acked = self.attempts.len();
                self.durable = self.acked;
                Ok(())
            }
            Err(e) => Err(self.failed(db, &e, if drop { "drop_cf" } else { "create_cf" })),
        }
    }

    /// Runs `op`, again after each full-disk refusal ([`Recorder::free_space`]).
    fn retry_for_space(
        &mut self,
        db: &Db,
        what: &str,
        op: impl Fn(&Db) -> Result<(), Error>,
    ) -> Result<(), Error> {
        loop {
            match op(db) {
                Err(e) if self.free_space(db, &e, what) => {}
                other => return other,
            }
        }
    }

    fn flush_cf(&mut self, db: &Db, name: &str) -> Result<(), Stop> {
        self.maybe_cut()?;
        let cf = db.cf(name).expect("the scenario flushes live families");
        self.retry_for_space(db, "flush_cf", |db| db.flush_cf(&cf))
            .map_err(|e| self.failed(db, &e, "flush_cf"))
    }

    fn flush(&mut self, db: &Db) -> Result<(), Stop> {
        self.maybe_cut()?;
        match self.retry_for_space(db, "flush", Db::flush) {
            Ok(()) => {
                self.durable = self.acked;
                Ok(())
            }
            Err(e) => Err(self.failed(db, &e, "flush")),
        }
    }

    /// Waits until no flush or compaction runs (the faulted phase's jobs reach their
    /// end, so the counters below count them all).
    fn settle(&mut self, db: &Db) -> Result<(), Stop> {
        self.maybe_cut()?;
        self.retry_for_space(db, "wait_for_compactions", Db::wait_for_compactions)
            .map_err(|e| self.failed(db, &e, "wait_for_compactions"))
    }

    fn compact(&mut self, db: &Db) -> Result<(), Stop> {
        self.maybe_cut()?;
        match self.retry_for_space(db, "compact_range", |db| db.compact_range(None, None)) {
            Ok(()) => {
                self.durable = self.acked;
                Ok(())
            }
            Err(e) => Err(self.failed(db, &e, "compact_range")),
        }
    }
}

/// A crash-loop scenario.
struct Scenario {
    name: &'static str,
    opts: fn() -> Options,
    /// Builds the durable starting state on a fresh file system (not faulted).
    setup: Option<fn(&FaultFs, &mut Recorder)>,
    /// The faulted phase, after `Db::open`.
    run: fn(&Db, &mut Recorder) -> Result<(), Stop>,
    /// Cycles in the default run (`STRATA_CRASH_ITERS` overrides it).
    iters: u64,
    /// The scenario makes virtual tables (delayed compaction): the counting run must
    /// make some, and every cycle checks the recovered database with delayed
    /// compaction off too ([`check_without_delayed`]).
    virtual_tables: bool,
}

fn value(tag: &str, n: usize, i: u32, pad: usize) -> Vec<u8> {
    let mut v = format!("{tag}-w{n}-k{i}-").into_bytes();
    v.extend(std::iter::repeat_n(b'a' + (n % 26) as u8, pad));
    v
}

/// (a) Sync and non-sync writes, batches and deletes, with explicit flushes.
fn run_sync_flush(db: &Db, r: &mut Recorder) -> Result<(), Stop> {
    for n in 0..90usize {
        let i = (n * 7 % 37) as u32;
        if n % 11 == 5 {
            r.write(db, vec![Item::delete(key(i))], n % 2 == 0)?;
        } else if n % 9 == 4 {
            let items = (0..4u32)
                .map(|j| Item::put(key(i + j), value("b", n, i + j, 20)))
                .collect();
            r.write(db, items, true)?;
        } else {
            r.put(db, key(i), value("a", n, i, 40), n % 3 == 0)?;
        }
        if n % 30 == 29 {
            r.flush(db)?;
        }
    }
    Ok(())
}

/// (b) Enough data through tiny memtables for flushes and compactions to run.
fn run_compactions(db: &Db, r: &mut Recorder) -> Result<(), Stop> {
    for n in 0..420usize {
        let i = (n * 13 % 150) as u32;
        if n % 17 == 3 {
            r.write(db, vec![Item::delete(key(i))], false)?;
        } else {
            r.put(db, key(i), value("c", n, i, 90), n % 10 == 0)?;
        }
    }
    r.compact(db)
}

/// (c) Many version edits with a tiny MANIFEST limit: it rolls over constantly.
fn run_manifest_roll(db: &Db, r: &mut Recorder) -> Result<(), Stop> {
    for n in 0..40usize {
        for j in 0..3u32 {
            let i = (n as u32 * 3 + j) % 60;
            r.put(db, key(i), value("m", n, i, 10), j == 2)?;
        }
        r.flush(db)?;
    }
    Ok(())
}

/// (d) Setup: a WAL of ~120 KiB never flushed, replayed into several L0 tables by the
/// faulted `Db::open` (whose memtable is tiny).
fn setup_recovery(fs: &FaultFs, r: &mut Recorder) {
    let opts = tiny_options().with_write_buffer_size(4 << 20);
    let db = on(fs).open(DIR, opts).expect("setup open");
    for n in 0..1200usize {
        let i = (n * 31 % 500) as u32;
        r.put(&db, key(i), value("s", n, i, 80), false)
            .expect("setup write");
    }
    db.close().expect("setup close");
    r.durable = r.acked;
    fs.crash();
}

fn run_after_recovery(db: &Db, r: &mut Recorder) -> Result<(), Stop> {
    for n in 0..20usize {
        let i = (n * 3) as u32;
        r.put(db, key(i), value("p", n, i, 30), n % 4 == 0)?;
    }
    Ok(())
}

/// (f) Merges and range deletions (single and in batches) through tiny memtables:
/// operands folded by flushes and compactions, tombstones in the WAL, in L0 and cut at
/// compaction outputs, tables of tombstones only.
fn run_merges_and_ranges(db: &Db, r: &mut Recorder) -> Result<(), Stop> {
    for n in 0..300usize {
        let i = (n * 11 % 120) as u32;
        let item = match n % 10 {
            0..=3 => Item::Merge(key(i), format!("m{n}").into_bytes()),
            4 => Item::DeleteRange(key(i), key(i + (n % 7) as u32)),
            5 => {
                let items = vec![
                    Item::Merge(key(i), format!("b{n}").into_bytes()),
                    Item::DeleteRange(key(i + 1), key(i + 4)),
                    Item::put(key(i + 2), value("r", n, i, 10)),
                ];
                r.write(db, items, n % 4 == 1)?;
                continue;
            }
            _ => Item::put(key(i), value("p", n, i, 60)),
        };
        r.write(db, vec![item], n % 6 == 0)?;
        if n % 100 == 99 {
            r.flush(db)?;
        }
    }
    r.compact(db)
}

/// (g) Column families: created and dropped while written, batches spanning three
/// families, families flushed at different times (one by `flush_cf` only, others by
/// their tiny memtables), a dropped family's records left in the WAL.
fn run_families(db: &Db, r: &mut Recorder) -> Result<(), Stop> {
    r.family_op(db, "fa", false)?;
    for n in 0..240usize {
        let i = (n * 7 % 90) as u32;
        // The third family: `fb` while it lives, then `fc`.
        let other = match n {
            21..=119 => Some("fb"),
            131.. => Some("fc"),
            _ => None,
        };
        let in_cf = |name, item| Item::InCf(name, Box::new(item));
        let items = match n % 8 {
            0 | 1 => vec![Item::put(key(i), value("d", n, i, 30))],
            2 | 3 => vec![in_cf("fa", Item::put(key(i), value("a", n, i, 50)))],
            4 => {
                let mut items = vec![
                    Item::put(key(i), value("x", n, i, 10)),
                    in_cf("fa", Item::Merge(key(i + 1), format!("m{n}").into_bytes())),
                ];
                if let Some(o) = other {
                    items.push(in_cf(o, Item::put(key(i), value("o", n, i, 20))));
                    items.push(in_cf(o, Item::delete(key(i + 3))));
                }
                items
            }
            5 => vec![in_cf("fa", Item::DeleteRange(key(i), key(i + 3)))],
            6 => match other {
                Some(o) => vec![in_cf(o, Item::put(key(i), value("p", n, i, 60)))],
                None => vec![Item::delete(key(i))],
            },
            _ => vec![Item::put(key(i), value("s", n, i, 20))],
        };
        r.write(db, items, n % 8 == 7)?;
        match n {
            20 => r.family_op(db, "fb", false)?,
            120 => r.family_op(db, "fb", true)?,
            130 => r.family_op(db, "fc", false)?,
            _ => {}
        }
        if n % 40 == 39 {
            r.flush_cf(db, "fa")?;
        }
    }
    r.compact(db)
}

/// (h) Delayed compaction (VCT 8, VSMT 2) under tiny options and a 2 KiB MANIFEST limit:
/// automatic compactions that read fewer than eight tables become virtual tables over
/// their inputs, later ones read those virtual tables' parents (virtualizing again
/// or, at eight parents, rewriting them), the MANIFEST rolls over with parents in its
/// snapshot, and a manual compaction midway rewrites virtual tables for real.
/// Overwrites, then (from write 150 on, once L1 and L2 hold data, so few L0→L1 plans
/// are bottommost) deletes and a few range deletions keep the tables overlapping.
/// Every tenth write is followed by gets, which ask for merges of the virtual tables
/// of two slices or more they meet (VSMT 2); a garbage bound of 5% rewrites tables
/// for space. The gets' answers are not checked here (a fault may fail them); the
/// recovery checks are.
fn run_virtual(db: &Db, r: &mut Recorder) -> Result<(), Stop> {
    for n in 0..600usize {
        let i = (n * 13 % 140) as u32;
        if n % 10 == 9 {
            for j in [i, (i + 70) % 140] {
                let _ = db.get(&ReadOptions::default(), &key(j));
            }
        }
        let item = match n % 19 {
            3 | 11 if n >= 150 => Item::delete(key(i)),
            7 if n > 400 => Item::DeleteRange(key(i), key(i + 3)),
            _ => Item::put(key(i), value("v", n, i, 70)),
        };
        r.write(db, vec![item], n % 3 == 0)?;
        if n == 300 {
            r.compact(db)?;
        }
    }
    r.settle(db)
}

/// (i) Query-driven compaction: writes, deletes and range deletions with short and
/// long forward scans between them, each written back when dropped (boundary files
/// split), with a 2 KiB MANIFEST limit; crash points land in write-backs' table writes,
/// their directory fsyncs and their edits. Scans that fail on the dead disk are fine.
fn run_query_compaction(db: &Db, r: &mut Recorder) -> Result<(), Stop> {
    for n in 0..500usize {
        let i = (n * 17 % 150) as u32;
        if n % 8 == 7 {
            let ro = ReadOptions::default().with_upper_bound(Some(key(i + 60)));
            if let Ok(mut it) = db.iter(&ro) {
                it.seek(&key(i));
                for _ in 0..(n % 50) {
                    if !it.valid() {
                        break;
                    }
                    it.next();
                }
            }
        }
        let item = match n % 23 {
            5 if n >= 100 => Item::delete(key(i)),
            9 if n > 300 => Item::DeleteRange(key(i), key(i + 4)),
            _ => Item::put(key(i), value("q", n, i, 60)),
        };
        r.write(db, vec![item], n % 4 == 0)?;
    }
    r.settle(db)
}

/// (j) Two tiers with HotRAP (`tiering`): 480 keys of ~100 bytes over a 24 KiB fast
/// tier, so most of them sink to the slow one. Every eighth key is hot (`i % 8 == 0`,
/// from write 700 on `i % 8 == 4`, a shift into the slow tier): read after every third
/// write, and written in the first pass, then only now and then (an overwrite, a
/// merge, a delete, a range deletion over its neighbours). Reads answered by the slow
/// tier fill the promotion cache (2 KiB, one target file); the checker and the flush
/// thread promote sealed batches into L0, compactions out of L1 take the cache's
/// records and retain RALT's hot keys, and RALT flushes and evicts (its merge of
/// everything into one run). A stale promoted
/// copy shadowing a newer write, or a deleted key brought back, fails the recovery
/// check; the gets' own answers are not checked here (a fault may fail them).
fn run_tiering(db: &Db, r: &mut Recorder) -> Result<(), Stop> {
    for n in 0..1400usize {
        let i = (n * 13 % 480) as u32;
        if n % 3 == 2 {
            let group = if n < 700 { 0 } else { 4 };
            for j in 0..5 {
                let hot = ((n / 3 + j * 7) % 60 * 8 + group) as u32;
                let _ = db.get(&ReadOptions::default(), &key(hot));
            }
        }
        let item = if !i.is_multiple_of(4) || n < 480 {
            match n % 31 {
                7 if n >= 200 => Item::delete(key(i)),
                13 if n > 400 => Item::DeleteRange(key(i + 1), key(i + 3)),
                _ => Item::put(key(i), value("t", n, i, 90)),
            }
        } else {
            // The hot keys rest (a neighbour takes the write) but for a few
            // overwrites, merges and deletes while they sit in the slow tier, the
            // promotion cache or a promoted table.
            match n % 40 {
                0 => Item::put(key(i), value("h", n, i, 90)),
                10 => Item::Merge(key(i), format!("m{n}").into_bytes()),
                20 => Item::delete(key(i)),
                _ => Item::put(key(i + 1), value("t", n, i + 1, 90)),
            }
        };
        r.write(db, vec![item], n % 4 == 0)?;
    }
    r.settle(db)
}

fn tiering_options() -> Options {
    tiny_options()
        .with_db_paths(vec![
            strata::DbPath::new("/db-fast", 24 << 10),
            strata::DbPath::new("/db-slow", 0),
        ])
        .with_tiering(Some(strata::Tiering::hotrap()))
}

fn query_options() -> Options {
    tiny_options()
        .with_query_compaction(Some(
            QueryCompaction::new()
                .with_start_level(1)
                .with_profit(0.0)
                .with_min_obsolete(0.0),
        ))
        .with_max_manifest_file_size(2048)
}

fn virtual_options() -> Options {
    tiny_options()
        .with_delayed_compaction(Some(
            DelayedCompaction::new()
                .with_vct(8)
                .with_vsmt(2)
                .with_max_garbage_ratio(0.05),
        ))
        .with_max_manifest_file_size(2048)
}

/// The checks of a scenario making virtual tables, on the recovered `db`: every
/// physical table (each parent once) reads with good checksums, so recovery found
/// every parent the MANIFEST names and no orphan deletion took one; then the database
/// reopens with delayed compaction off and reads the same state, before and after a
/// manual compaction rewrites its virtual tables.
fn check_without_delayed(ctx: &str, fs: &FaultFs, db: Db, opts: &Options) {
    let verify = |db: &Db, when: &str| {
        db.verify_checksums()
            .unwrap_or_else(|e| panic!("{ctx}: verify_checksums {when}: {e}"));
    };
    verify(&db, "after recovery");
    let state = read_all(&db);
    db.close()
        .unwrap_or_else(|e| panic!("{ctx}: close after recovery: {e}"));
    let off = opts.clone().with_delayed_compaction(None);
    let db = on(fs)
        .open(DIR, off)
        .unwrap_or_else(|e| panic!("{ctx}: reopen with delayed compaction off: {e}"));
    verify(&db, "with delayed compaction off");
    assert!(
        read_all(&db) == state,
        "{ctx}: delayed compaction off reads another state"
    );
    db.compact_range(None, None)
        .unwrap_or_else(|e| panic!("{ctx}: compact_range with delayed compaction off: {e}"));
    verify(&db, "after compact_range with delayed compaction off");
    assert!(
        read_all(&db) == state,
        "{ctx}: compact_range with delayed compaction off changed the state"
    );
    db.close().unwrap_or_else(|e| panic!("{ctx}: close: {e}"));
}

fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "sync_flush",
            opts: || Options::default().with_write_buffer_size(64 << 10),
            setup: None,
            run: run_sync_flush,
            iters: 500,
            virtual_tables: false,
        },
        Scenario {
            name: "compactions",
            opts: tiny_options,
            setup: None,
            run: run_compactions,
            iters: 500,
            virtual_tables: false,
        },
        Scenario {
            name: "manifest_roll",
            opts: || tiny_options().with_max_manifest_file_size(1024),
            setup: None,
            run: run_manifest_roll,
            iters: 500,
            virtual_tables: false,
        },
        Scenario {
            name: "recovery",
            opts: tiny_options,
            setup: Some(setup_recovery),
            run: run_after_recovery,
            iters: 500,
            virtual_tables: false,
        },
        Scenario {
            name: "three_paths",
            opts: three_data_paths,
            setup: None,
            run: run_compactions,
            iters: 500,
            virtual_tables: false,
        },
        Scenario {
            name: "merges_and_ranges",
            opts: tiny_options,
            setup: None,
            run: run_merges_and_ranges,
            iters: 500,
            virtual_tables: false,
        },
        Scenario {
            name: "column_families",
            opts: tiny_options,
            setup: None,
            run: run_families,
            iters: 500,
            virtual_tables: false,
        },
        Scenario {
            name: "query_compaction",
            opts: query_options,
            setup: None,
            run: run_query_compaction,
            iters: 250,
            virtual_tables: false,
        },
        Scenario {
            name: "virtual",
            opts: virtual_options,
            setup: None,
            run: run_virtual,
            iters: 250,
            virtual_tables: true,
        },
        Scenario {
            name: "tiering",
            opts: tiering_options,
            setup: None,
            run: run_tiering,
            iters: 250,
            virtual_tables: false,
        },
    ]
}

/// How the process dies in a cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kill {
    /// The disk fails every operation from operation `k` on (`FaultRule::sticky`), the
    /// scenario continues until the engine reports it, then the power is cut.
    Fault,
    /// The power is cut at the first step of the scenario where `k` operations ran.
    Cut,
    /// The `k`-th fsync of a MANIFEST fails, and every later one (other files keep
    /// working): the MANIFEST append whose fsync never returned, which the crash then
    /// tears and garbles. Sampled indices of [`Kill::Fault`] hit that moment only by
    /// chance, so the MANIFEST roll-over scenario also walks every MANIFEST fsync.
    ManifestSync,
    /// The disk fills up: from the `k`-th operation that takes space (create, append,
    /// flush) on, each fails with `ENOSPC` (an append after keeping half its bytes),
    /// until the scenario, refused with `NoSpace`, frees the space and goes on
    /// ([`Recorder::free_space`]). Then the power is cut at the end as usual. The
    /// engine must never poison, nor lose or half-apply a write.
    NoSpace,
}

/// Figures printed at the end (they go into docs/reliability.md).
#[derive(Default)]
struct Tally {
    cycles: AtomicU64,
    faults_fired: AtomicU64,
    failed_ops: AtomicU64,
    cuts: AtomicU64,
    tolerant_refusals: AtomicU64,
    /// Cycles whose crash garbled a MANIFEST's unsynced tail and that recovered a
    /// checked state anyway.
    garbled_manifest_tails: AtomicU64,
    /// Virtual compactions the faulted phases made before their crash, and the
    /// cycles that made at least one.
    virtual_compactions: AtomicU64,
    /// Scans written back before the crashes.
    query_compactions: AtomicU64,
    /// Merges of virtual tables that gets asked for, run before the crashes.
    virtual_merges: AtomicU64,
    virtual_cycles: AtomicU64,
    /// Tiering's pathways run before the crashes: promotion flushes, records promoted
    /// by compaction, bytes retained in the fast tier.
    promotion_flushes: AtomicU64,
    promoted_by_compaction: AtomicU64,
    retained_bytes: AtomicU64,
    /// [`Kill::NoSpace`] cycles, the refusals they met, and the time from space freed
    /// to writes taken again, summed (microseconds).
    no_space_cycles: AtomicU64,
    space_refusals: AtomicU64,
    resume_micros: AtomicU64,
}

/// Outcome of one cycle's recovery, checked against the recorder.
fn check_recovered(ctx: &str, db: &Db, base: &BTreeMap<Vec<u8>, Vec<u8>>, r: &Recorder) {
    let got = read_all(db);
    // Point reads agree with the scan.
    let touched: BTreeSet<&Vec<u8>> = r
        .attempts
        .iter()
        .flat_map(|a| a.items.iter().filter_map(Item::point_key))
        .collect();
    for k in &touched {
        let v = db
            .get(&ReadOptions::default(), k)
            .unwrap_or_else(|e| panic!("{ctx}: get {:?}: {e}", String::from_utf8_lossy(k)));
        assert_eq!(v.as_ref(), got.get(*k), "{ctx}: get and scan disagree");
    }
    // Find a prefix P in durable..=attempts.len() with state(P) == got. Mismatches are
    // counted incrementally: `diff` holds the keys where the model differs.
    let mut model = base.clone();
    let mut diff: BTreeSet<Vec<u8>> = model
        .keys()
        .chain(got.keys())
        .filter(|k| model.get(*k) != got.get(*k))
        .cloned()
        .collect();
    let mut matches = Vec::new();
    let mut best = (usize::MAX, 0usize);
    for p in 0..=r.attempts.len() {
        if p >= r.durable {
            if diff.is_empty() {
                matches.push(p);
            }
            best = best.min((diff.len(), p));
        }
        if let Some(a) = r.attempts.get(p) {
            for item in &a.items {
                for k in item.apply(&mut model) {
                    if model.get(&k) == got.get(&k) {
                        diff.remove(&k);
                    } else {
                        diff.insert(k);
                    }
                }
            }
        }
    }
    if matches.is_empty() {
        // Describe the closest prefix for the report.
        let mut model = base.clone();
        for a in r.attempts.iter().take(best.1) {
            for item in &a.items {
                item.apply(&mut model);
            }
        }
        let show = |m: Option<&Vec<u8>>| m.map(|v| String::from_utf8_lossy(v).into_owned());
        let sample: Vec<String> = model
            .keys()
            .chain(got.keys())
            .filter(|k| model.get(*k) != got.get(*k))
            .take(5)
            .map(|k| {
                format!(
                    "{}: want {:?} got {:?}",
                    String::from_utf8_lossy(k),
                    show(model.get(k)),
                    show(got.get(k))
                )
            })
            .collect();
        panic!(
            "{ctx}: recovered state is no prefix of the attempted writes \
             (durable {} acked {} attempted {}); closest prefix {} differs in {} keys: {:?}",
            r.durable,
            r.acked,
            r.attempts.len(),
            best.1,
            best.0,
            sample
        );
    }
    // Never more than what was attempted (the refused probe write never appears).
    assert!(
        !got.contains_key(b"zz-never-durable".as_slice()),
        "{ctx}: a refused write is present"
    );
}

/// Runs one cycle: fresh file system, scenario with the kill at `k`, crash, reopen,
/// check. Returns what the faulted phase did.
fn cycle(sc: &Scenario, k: Option<u64>, kill: Kill, mode: CrashMode, tally: &Tally) -> Counted {
    let replay = if kill == Kill::ManifestSync {
        "STRATA_CRASH_SYNC"
    } else {
        "STRATA_CRASH_K"
    };
    let ctx = format!(
        "scenario {} k={k:?} kill={kill:?} mode={mode:?} \
         (replay: STRATA_CRASH_SCENARIO={} {replay}={})",
        sc.name,
        sc.name,
        k.unwrap_or(0)
    );
    let fs = FaultFs::new();
    let opts = (sc.opts)();
    let mut r = Recorder {
        fs: fs.clone(),
        full_disk: kill == Kill::NoSpace,
        resume_by_hand: k.is_some_and(|k| k % 2 == 0),
        ..Recorder::default()
    };
    if let Some(setup) = sc.setup {
        setup(&fs, &mut r);
    }
    let mut base = BTreeMap::new();
    for a in &r.attempts {
        for item in &a.items {
            item.apply(&mut base);
        }
    }
    // The base state is durable: the check only considers the faulted phase's writes.
    r.base = base.clone();
    r.attempts.clear();
    r.acked = 0;
    r.durable = 0;

    let faults_before = fs.faults_injected();
    r.base_ops = fs.op_count();
    // The disk operations of the faulted phase and the recovery, printed if the check
    // fails: which thread did what, in which order, and what the crash kept.
    fs.set_trace(TRACE_OPS);
    match (kill, k) {
        (Kill::Fault, Some(k)) => fs.inject(FaultRule::sticky(FaultKinds::ALL, k)),
        (Kill::Cut, Some(k)) => r.cut_at = Some((k, mode)),
        (Kill::ManifestSync, Some(k)) => {
            fs.inject(FaultRule::sticky(FaultKinds::SYNC, k).on_path("MANIFEST-"))
        }
        (Kill::NoSpace, Some(k)) => fs.inject(FaultRule::sticky(FaultKinds::FILLING, k).no_space()),
        (_, None) => {}
    }
    let mut virtual_compactions = 0;
    let mut query_compactions = 0;
    let mut hooks = Vec::new();
    match on(&fs).open(DIR, opts.clone()) {
        Ok(db) => {
            let finished = (sc.run)(&db, &mut r).is_ok() && r.maybe_cut().is_ok();
            // The counting run lets the merges reads asked for run before it counts
            // them: whether one ran by the end of the scenario is timing (it failed
            // the coverage assertion below about 1 run in 13).
            if finished && k.is_none() && sc.virtual_tables {
                db.wait_for_compactions()
                    .unwrap_or_else(|e| panic!("{ctx}: settle: {e}"));
            }
            let counters = db.stats().counters;
            virtual_compactions = counters.virtual_compactions;
            query_compactions = counters.query_compactions;
            tally
                .query_compactions
                .fetch_add(query_compactions, Ordering::Relaxed);
            tally
                .virtual_merges
                .fetch_add(counters.virtual_merges, Ordering::Relaxed);
            hooks = db.stats().tree_hooks;
            let hook = |name| hook_figure(&hooks, name);
            for (sum, name) in [
                (&tally.promotion_flushes, "promotion_flushes"),
                (&tally.promoted_by_compaction, "promoted_by_compaction"),
                (&tally.retained_bytes, "retained_bytes"),
            ] {
                sum.fetch_add(hook(name), Ordering::Relaxed);
            }
            if finished {
                match db.close() {
                    Ok(()) => r.durable = r.acked,
                    Err(e) => assert!(is_injected(&e), "{ctx}: close: {e}"),
                }
            } else {
                drop(db);
            }
        }
        Err(e) => assert!(is_injected(&e), "{ctx}: open failed without a fault: {e}"),
    }
    let ops = fs.op_count() - r.base_ops;
    let failed = fs.faults_injected() - faults_before;
    if r.cut_at.is_some() && r.stopped {
        tally.cuts.fetch_add(1, Ordering::Relaxed);
    } else {
        r.garbled_manifest |= garbles_manifest_tail(&fs, mode);
        fs.crash_with(mode);
    }
    if failed > 0 && kill != Kill::Cut {
        tally.faults_fired.fetch_add(1, Ordering::Relaxed);
        tally.failed_ops.fetch_add(failed, Ordering::Relaxed);
    }
    if kill == Kill::NoSpace {
        tally.no_space_cycles.fetch_add(1, Ordering::Relaxed);
        tally
            .space_refusals
            .fetch_add(r.space_refusals, Ordering::Relaxed);
        tally
            .resume_micros
            .fetch_add(r.resume_micros, Ordering::Relaxed);
    }
    fs.clear_faults();
    tally.cycles.fetch_add(1, Ordering::Relaxed);
    tally
        .virtual_compactions
        .fetch_add(virtual_compactions, Ordering::Relaxed);
    if virtual_compactions > 0 {
        tally.virtual_cycles.fetch_add(1, Ordering::Relaxed);
    }

    // Recovery. A garbled unsynced WAL tail followed by an intact record is refused by
    // the tolerant mode (it cannot tell it from mid-log damage); point-in-time recovery
    // must then succeed. A garbled unsynced MANIFEST tail gets no such allowance: it can
    // only be the final record, whose fsync never returned, and the MANIFEST recovery
    // rule tolerates exactly that, so any refusal here is a bug.
    let before_recovery = describe_files(&fs);
    let image: Vec<(std::path::PathBuf, Vec<u8>)> = fs
        .files()
        .into_iter()
        .filter_map(|p| fs.file_bytes(&p).map(|b| (p, b)))
        .collect();
    let db = match on(&fs).open(DIR, opts.clone()) {
        Ok(db) => db,
        Err(e)
            if e.kind() == ErrorKind::Corruption
                && matches!(mode, CrashMode::GarbleUnsynced { .. })
                && e.to_string().contains(".log") =>
        {
            tally.tolerant_refusals.fetch_add(1, Ordering::Relaxed);
            let pit = opts
                .clone()
                .with_wal_recovery_mode(WalRecoveryMode::PointInTime);
            on(&fs)
                .open(DIR, pit)
                .unwrap_or_else(|e| panic!("{ctx}: point-in-time reopen: {e}"))
        }
        Err(e) => panic!("{ctx}: reopen after crash: {e}"),
    };
    let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        check_recovered(&ctx, &db, &base, &r)
    }));
    if let Err(panic) = checked {
        let saved = save_image(sc.name, k, &image);
        eprintln!("{ctx}: the crashed file system is saved in {saved}");
        eprintln!(
            "{ctx}: failed check; files after the crash:\n{before_recovery}\n\
             last disk operations (faulted phase, crash, recovery):\n{}\n\
             levels after recovery:\n{}",
            fs.trace().join("\n"),
            db.stats().level_table()
        );
        std::panic::resume_unwind(panic);
    }
    if r.garbled_manifest {
        tally.garbled_manifest_tails.fetch_add(1, Ordering::Relaxed);
    }
    // The recovered database works: a synced write survives another crash.
    db.put(&sync(), b"zz-after-recovery", b"ok")
        .unwrap_or_else(|e| panic!("{ctx}: write after recovery: {e}"));
    drop(db);
    fs.crash();
    let db = on(&fs)
        .open(DIR, opts.clone())
        .unwrap_or_else(|e| panic!("{ctx}: second reopen: {e}"));
    assert_eq!(
        db.get(&ReadOptions::default(), b"zz-after-recovery")
            .unwrap_or_else(|e| panic!("{ctx}: get: {e}")),
        Some(b"ok".to_vec()),
        "{ctx}: write after recovery lost"
    );
    if sc.virtual_tables {
        check_without_delayed(&ctx, &fs, db, &opts);
    }
    Counted {
        ops,
        virtual_compactions,
        query_compactions,
        hooks,
    }
}

/// What one cycle's faulted phase did.
struct Counted {
    /// File-system operations.
    ops: u64,
    virtual_compactions: u64,
    /// Scans written back.
    query_compactions: u64,
    /// The tree hooks' figures (`DbStats::tree_hooks`; empty without tiering).
    hooks: Vec<(&'static str, u64)>,
}

/// The pathways of tiering a run of the `tiering` scenario did not reach.
fn tiering_gaps(hooks: &[(&'static str, u64)]) -> Vec<&'static str> {
    [
        "promotion_flushes",
        "promoted_by_compaction",
        "retained_bytes",
        "ralt_flushes",
        "ralt_evictions",
    ]
    .into_iter()
    .filter(|f| hook_figure(hooks, f) == 0)
    .collect()
}

/// The figure `name` among `hooks`, 0 if absent.
fn hook_figure(hooks: &[(&'static str, u64)], name: &str) -> u64 {
    hooks
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(0, |&(_, v)| v)
}

/// Operations kept in the disk trace of a cycle (reads are not recorded).
const TRACE_OPS: usize = 3000;

/// One line per file: path and length (after a crash, every byte is durable).
fn describe_files(fs: &FaultFs) -> String {
    fs.files()
        .iter()
        .map(|p| {
            let len = fs.file_bytes(p).map_or(0, |b| b.len());
            format!("  {} {len}", p.display())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Writes the files of a crashed file system to a real directory (for `strata ldb` and
/// `strata sst-dump`); returns its path.
fn save_image(scenario: &str, k: Option<u64>, image: &[(std::path::PathBuf, Vec<u8>)]) -> String {
    let root = std::env::temp_dir().join(format!(
        "strata-crash-{scenario}-{}-{}",
        k.map_or("none".to_string(), |k| k.to_string()),
        std::process::id()
    ));
    for (path, bytes) in image {
        let to = root.join(path.strip_prefix("/").unwrap_or(path));
        if let Some(parent) = to.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = std::fs::write(&to, bytes);
    }
    root.display().to_string()
}

/// True iff `mode` garbles unsynced bytes and some MANIFEST has unsynced bytes now, so
/// the coming crash may leave a torn, garbled final MANIFEST record. Call with the disk
/// already failing every operation, so nothing changes before the crash.
fn garbles_manifest_tail(fs: &FaultFs, mode: CrashMode) -> bool {
    matches!(mode, CrashMode::GarbleUnsynced { .. })
        && fs.files().iter().any(|p| {
            let is_manifest = p
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("MANIFEST-"));
            let now = fs.file_bytes(p).map_or(0, |b| b.len());
            let durable = fs.durable_file_bytes(p).map_or(0, |b| b.len());
            is_manifest && now > durable
        })
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|s| s.parse().ok())
}

/// The operation indices to kill at: all of them when few (or `STRATA_LONG=1`), else
/// `budget` spread over the range with a deterministic jitter.
fn sample(count: u64, budget: u64) -> Vec<u64> {
    if let Some(k) = env_u64("STRATA_CRASH_K") {
        return vec![k];
    }
    if std::env::var("STRATA_LONG").is_ok_and(|v| v == "1") || count <= budget {
        return (0..count).collect();
    }
    let stride = count / budget;
    (0..budget)
        .map(|i| {
            let jitter = (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % stride;
            i * stride + jitter
        })
        .collect()
}

/// Fails the `j`-th MANIFEST fsync (and every later one) for each `j` until a cycle's
/// rule no longer fires, garbling the unsynced tail at the crash. `STRATA_CRASH_SYNC=j`
/// replays one index; `STRATA_CRASH_K` alone skips this walk.
fn manifest_sync_kills(sc: &Scenario, tally: &Tally) {
    let only = env_u64("STRATA_CRASH_SYNC");
    if only.is_none() && env_u64("STRATA_CRASH_K").is_some() {
        return;
    }
    // The scenario makes about a hundred MANIFEST fsyncs; the cap only bounds a bug
    // that would make the walk endless.
    for j in only.map_or(0..1000, |j| j..j + 1) {
        let before = tally.faults_fired.load(Ordering::Relaxed);
        cycle(
            sc,
            Some(j),
            Kill::ManifestSync,
            CrashMode::GarbleUnsynced { seed: j },
            tally,
        );
        if tally.faults_fired.load(Ordering::Relaxed) == before {
            break;
        }
    }
}

fn crash_loop(name: &str) {
    let Some(sc) = scenarios().into_iter().find(|s| s.name == name) else {
        panic!("no scenario {name}");
    };
    if std::env::var("STRATA_CRASH_SCENARIO").is_ok_and(|s| s != name) {
        return;
    }
    let tally = Tally::default();
    let started = std::time::Instant::now();
    let mut counted = cycle(&sc, None, Kill::Fault, CrashMode::DropUnsynced, &tally);
    // Whether a tiering run reaches every pathway depends on background timing (a
    // promotion waits while L0 is backed up): up to three counting runs.
    for _ in 0..2 {
        if name != "tiering" || tiering_gaps(&counted.hooks).is_empty() {
            break;
        }
        counted = cycle(&sc, None, Kill::Fault, CrashMode::DropUnsynced, &tally);
    }
    let Counted {
        ops: count,
        virtual_compactions,
        query_compactions,
        hooks,
    } = counted;
    // A scenario of virtual tables that stopped making them would test nothing new.
    assert!(
        !sc.virtual_tables || virtual_compactions > 0,
        "crash loop {name}: the counting run made no virtual compaction"
    );
    assert!(
        !sc.virtual_tables || tally.virtual_merges.load(Ordering::Relaxed) > 0,
        "crash loop {name}: the counting run ran no merge that reads asked for"
    );
    assert!(
        name != "query_compaction" || query_compactions > 0,
        "crash loop {name}: the counting run wrote no scan back"
    );
    // A tiering scenario must run every pathway a crash can interrupt.
    assert!(
        name != "tiering" || tiering_gaps(&hooks).is_empty(),
        "crash loop {name}: the counting runs have no {:?}: {hooks:?}",
        tiering_gaps(&hooks)
    );
    let budget = env_u64("STRATA_CRASH_ITERS").unwrap_or(sc.iters);
    let ks = sample(count, budget);
    for &k in &ks {
        // Kill and crash mode are functions of `k` alone, so one `k` replays exactly.
        let mode = match k % 4 {
            0 | 1 => CrashMode::DropUnsynced,
            2 => CrashMode::KeepRandomPrefix { seed: k },
            _ => CrashMode::GarbleUnsynced { seed: k },
        };
        let kill = if (k / 4) % 2 == 0 {
            Kill::Fault
        } else {
            Kill::Cut
        };
        cycle(&sc, Some(k), kill, mode, &tally);
        // A disk that fills up at this index (counting only operations that take
        // space), on another third of the sample.
        if k % 3 == 1 {
            cycle(&sc, Some(k), Kill::NoSpace, mode, &tally);
        }
        // Each index is also tried with the other kill, on a smaller sample.
        if k % 3 == 0 {
            let other = if kill == Kill::Fault {
                Kill::Cut
            } else {
                Kill::Fault
            };
            cycle(&sc, Some(k), other, CrashMode::DropUnsynced, &tally);
        }
    }
    if name == "manifest_roll" {
        manifest_sync_kills(&sc, &tally);
    }
    let query_figures = if name == "query_compaction" {
        format!(
            ", scans written back {} before the crashes (counting run {query_compactions})",
            tally.query_compactions.load(Ordering::Relaxed)
        )
    } else {
        String::new()
    };
    let virtual_figures = if sc.virtual_tables {
        format!(
            ", virtual compactions {} before the crashes (counting run {}, \
             {} cycles made some), merges asked for by reads {}",
            tally.virtual_compactions.load(Ordering::Relaxed),
            virtual_compactions,
            tally.virtual_cycles.load(Ordering::Relaxed),
            tally.virtual_merges.load(Ordering::Relaxed),
        )
    } else {
        String::new()
    };
    let tiering_figures = if name == "tiering" {
        format!(
            ", before the crashes: promotion flushes {}, records promoted by compaction \
             {}, bytes retained {} (counting run: {})",
            tally.promotion_flushes.load(Ordering::Relaxed),
            tally.promoted_by_compaction.load(Ordering::Relaxed),
            tally.retained_bytes.load(Ordering::Relaxed),
            [
                "promotion_flushes",
                "promoted_by_compaction",
                "retained_bytes",
                "ralt_flushes",
                "ralt_compactions",
                "ralt_evictions"
            ]
            .map(|f| format!("{f} {}", hook_figure(&hooks, f)))
            .join(", ")
        )
    } else {
        String::new()
    };
    let refusals = tally.space_refusals.load(Ordering::Relaxed);
    let no_space_figures = format!(
        ", full-disk cycles {} ({refusals} refusals, mean {:.1} ms from space freed to \
         writes taken)",
        tally.no_space_cycles.load(Ordering::Relaxed),
        tally.resume_micros.load(Ordering::Relaxed) as f64 / 1000.0 / refusals.max(1) as f64
    );
    println!(
        "crash loop {name}: ops {count}, cycles {}, faults fired {} ({} failed ops), \
         power cuts {}, tolerant-mode refusals of garbled WAL tails {}, \
         garbled MANIFEST tails recovered {}{no_space_figures}{virtual_figures}{query_figures}\
         {tiering_figures}, \
         {:.1}s",
        tally.cycles.load(Ordering::Relaxed),
        tally.faults_fired.load(Ordering::Relaxed),
        tally.failed_ops.load(Ordering::Relaxed),
        tally.cuts.load(Ordering::Relaxed),
        tally.tolerant_refusals.load(Ordering::Relaxed),
        tally.garbled_manifest_tails.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64()
    );
    // The MANIFEST roll-over scenario must exercise the torn-and-garbled MANIFEST tail
    // (an append whose fsync failed, garbled by the power cut) that recovery tolerates;
    // every such cycle reopened and passed `check_recovered`. The sampled indices meet
    // that moment only when a sample lands on a MANIFEST fsync, which background timing
    // moves; `manifest_sync_kills` fails every MANIFEST fsync in turn.
    let replaying = env_u64("STRATA_CRASH_K").is_some() || env_u64("STRATA_CRASH_SYNC").is_some();
    // A full disk that never met the scenario would test nothing.
    assert!(
        replaying || tally.no_space_cycles.load(Ordering::Relaxed) == 0 || refusals > 0,
        "crash loop {name}: no full-disk cycle was refused for space"
    );
    if name == "manifest_roll" && !replaying {
        assert!(
            tally.garbled_manifest_tails.load(Ordering::Relaxed) > 0,
            "crash loop {name}: no cycle garbled a MANIFEST tail; the recovery rule for \
             a garbled final MANIFEST record went untested"
        );
    }
}

#[test]
fn crash_loop_sync_writes_and_flushes() {
    crash_loop("sync_flush");
}

#[test]
fn crash_loop_compactions() {
    crash_loop("compactions");
}

#[test]
fn crash_loop_manifest_rollover() {
    crash_loop("manifest_roll");
}

#[test]
fn crash_loop_during_recovery() {
    crash_loop("recovery");
}

/// The compaction scenario with L0, L1 and L2+ in three directories: each new table,
/// and its directory entry, must be durable in its own path before a MANIFEST names it.
#[test]
fn crash_loop_three_data_paths() {
    crash_loop("three_paths");
}

/// Merge operands and range tombstones in every place a crash can leave them.
#[test]
fn crash_loop_merges_and_range_deletions() {
    crash_loop("merges_and_ranges");
}

/// A crash at every file operation of `create_cf`, `drop_cf`, batches spanning
/// families and flushes of one family.
#[test]
fn crash_loop_column_families() {
    crash_loop("column_families");
}

/// Query-driven compaction: a crash at file operations of scans' write-backs (the
/// range's tables, the boundary remainders, their edits) and of everything else.
#[test]
fn crash_loop_query_compaction() {
    crash_loop("query_compaction");
}

/// Delayed compaction: a crash at file operations of virtual compactions, of real
/// compactions reading virtual tables' parents and of MANIFEST roll-overs writing
/// parents into the new MANIFEST's snapshot; each recovery also verifies every
/// physical table and reopens with delayed compaction off.
#[test]
fn crash_loop_virtual_tables() {
    crash_loop("virtual");
}

/// Two tiers with HotRAP: a crash at file operations of retention, promotion by
/// compaction, promotion flushes and RALT's flushes, compactions and evictions (RALT's
/// files are on the same faulted file system, under `/db-fast/ralt-0/`). Nothing
/// acknowledged is lost, no promoted copy shadows a newer write, and the database
/// reopens with RALT as its files left it.
#[test]
fn crash_loop_tiering() {
    crash_loop("tiering");
}
