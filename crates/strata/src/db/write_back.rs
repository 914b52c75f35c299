//! Query-driven compaction on the read path: a forward scan's merged entries of the
//! deeper levels, buffered as the scan goes, written back when it ends
//! (ARCHITECTURE §6.12; the plans are `compaction::query_driven`'s).
//!
//! [`WriteBacks`] is the database's default [`ScanTees`] component: for a family with
//! `Options::query_compaction`, every `1 / selectivity`-th user iterator tees its
//! levels from `start_level` down into a [`ScanBuffer`]. The buffer records the covered
//! range and every internal entry the tee shows in it, up to `max_buffer_bytes`; when
//! the iterator drops, [`write_back`] runs on the reader's thread:
//! 1. plan (the trigger may decline: counted, nothing written);
//! 2. write: the boundary remainders through the executor, the range's entries from
//!    the buffer through the same `Rewrite` (`executor::rewrite_fed`);
//! 3. claim under the `state` lock: if the tree moved under the range
//!    (`WriteBack::stale`) the outputs are dropped (collected as obsolete; no data is
//!    lost, only work), else every plan is registered in `Busy`;
//! 4. install the one edit (`jobs::install`), release the claim, collect obsolete
//!    files.
//!
//! # The covered range
//! From the seek target (the seek's own key too only if the seek reads every version
//! of it, which a read at a snapshot does not) up to the user key of the last entry
//! shown, exclusive: the tee has shown every entry of the teed levels below it. If the
//! teed merge was exhausted the range is unbounded above; if the buffer filled it ends
//! at the first key not buffered. A backward move, a second seek or a failed move
//! abandons the write-back (ARCHITECTURE §6.12 says why a second seek is not merged).
//!
//! # Lifetimes
//! The buffer holds the database weakly and the scan's version strongly (its files
//! stay readable for the remainders). An iterator dropped after `close` writes
//! nothing; a poisoned database, one out of space, a dropped family or a closing
//! database abandons the write-back without an error.

use super::background::{finish_plan, mark_busy};
use super::events::{self, JobEvents};
use super::family::Family;
use super::jobs;
use super::obsolete::delete_obsolete;
use super::scan_tee::{ScanStart, ScanTees};
use super::{fail, poison, DbInner};
use crate::compaction::executor::{self, JobContext, Outcome};
use crate::compaction::plan::KeyRange;
use crate::compaction::query_driven::{self, Merged, WriteBack};
use crate::error::Result;
use crate::iter::{InternalIterator, Tee};
use crate::key::{self, MAX_SEQUENCE};
use crate::options::QueryCompaction;
use crate::stats::purpose::IoPurpose;
use crate::stats::Statistics;
use crate::version::Version;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Instant;

/// The default [`ScanTees`]: tees the scans of families with query-driven
/// compaction on. See the module docs.
#[derive(Debug, Default)]
pub(crate) struct WriteBacks {
    /// Qualifying scans so far (the selectivity sampler).
    scans: AtomicU64,
    /// Write-backs for the background worker.
    queue: Arc<Queue>,
}

impl Drop for WriteBacks {
    /// The database is gone (`close` has closed the queue already; a database dropped
    /// in a failed open has not): the worker exits.
    fn drop(&mut self) {
        self.queue.close();
    }
}

/// True for the `n`-th scan (from 0) iff the count of chosen scans steps up there:
/// exactly `floor(n * selectivity)` of the first `n` are chosen, evenly spread.
fn chosen(n: u64, selectivity: f64) -> bool {
    let at = |n: u64| (n as f64 * selectivity).floor();
    at(n + 1) > at(n)
}

impl ScanTees for WriteBacks {
    fn tee(&self, scan: &ScanStart<'_>) -> Option<(usize, Box<dyn Tee>)> {
        let q = scan.family.opts.query_compaction?;
        if q.start_level >= scan.version.num_levels() {
            return None;
        }
        if !chosen(self.scans.fetch_add(1, Ordering::Relaxed), q.selectivity) {
            return None;
        }
        let buffer = ScanBuffer {
            db: Arc::downgrade(scan.db),
            family: Arc::clone(scan.family),
            version: Arc::clone(scan.version),
            q,
            queue: Arc::clone(&self.queue),
            run: Run::Idle,
        };
        Some((q.start_level, Box::new(buffer)))
    }

    fn pending(&self) -> usize {
        self.queue.pending()
    }

    fn close(&self) {
        self.queue.close();
    }
}

/// Where a scan's run stands.
enum Run {
    /// No seek yet.
    Idle,
    /// Recording since one forward seek.
    Recording(Recorded),
    /// Broken, or sought again: writes nothing.
    Abandoned,
}

/// What a run has seen.
struct Recorded {
    /// The least user key covered (`None`: unbounded).
    start: Option<Vec<u8>>,
    /// The seek's own user key when the seek skipped its newer versions: its entries
    /// are not covered.
    skip: Option<Vec<u8>>,
    /// Entries shown in the range, concatenated; `index` locates them.
    data: Vec<u8>,
    /// `(offset, key length, value length)` of each buffered entry.
    index: Vec<(usize, usize, usize)>,
    /// The user key of the last entry shown (not yet known to be complete).
    head: Option<Vec<u8>>,
    /// How the run ended, if it did.
    end: End,
}

enum End {
    /// Still moving: covered up to `head`, exclusive.
    Open,
    /// The buffer filled at this user key: covered up to it, exclusive.
    Full(Vec<u8>),
    /// The teed levels have no entry after the last one shown.
    Exhausted,
}

/// A scan's tee. See the module docs.
struct ScanBuffer {
    db: Weak<DbInner>,
    family: Arc<Family>,
    version: Arc<Version>,
    q: QueryCompaction,
    queue: Arc<Queue>,
    run: Run,
}

impl ScanBuffer {
    /// True iff no file of the teed levels holding `user_key` in its range has an
    /// entry newer than `seq`: a seek to `(user_key, seq)` then skips none of them.
    fn none_newer(&self, user_key: &[u8], seq: u64) -> bool {
        (self.q.start_level..self.version.num_levels()).all(|level| {
            self.version
                .overlapping_files(level, Some(user_key), Some(user_key))
                .iter()
                .all(|f| f.largest_seqno <= seq)
        })
    }

    fn abandon(&mut self) {
        if matches!(self.run, Run::Recording(_)) {
            if let Some(db) = self.db.upgrade() {
                Statistics::add(&db.stats.local().query_compactions_discarded_abandoned, 1);
            }
        }
        self.run = Run::Abandoned;
    }
}

impl Tee for ScanBuffer {
    fn start(&mut self, target: Option<&[u8]>) {
        if !matches!(self.run, Run::Idle) {
            return self.abandon();
        }
        let (start, skip) = match target.and_then(key::parse_internal_key) {
            None => (None, None),
            Some(t) if t.seq == MAX_SEQUENCE || self.none_newer(t.user_key, t.seq) => {
                (Some(t.user_key.to_vec()), None)
            }
            // The seek skipped the key's versions newer than the read, which a table
            // of the teed levels may hold: start after it.
            Some(t) => {
                let mut after = t.user_key.to_vec();
                after.push(0);
                (Some(after), Some(t.user_key.to_vec()))
            }
        };
        self.run = Run::Recording(Recorded {
            start,
            skip,
            data: Vec::new(),
            index: Vec::new(),
            head: None,
            end: End::Open,
        });
    }

    fn entry(&mut self, ikey: &[u8], value: &[u8]) {
        let Run::Recording(r) = &mut self.run else {
            return;
        };
        if !matches!(r.end, End::Open) {
            return;
        }
        let user = key::user_key(ikey);
        if r.skip.as_deref() == Some(user) {
            return;
        }
        let new_key = r.head.as_deref() != Some(user);
        if new_key {
            if r.data.len() as u64 >= self.q.max_buffer_bytes {
                r.end = End::Full(user.to_vec());
                return;
            }
            // Reuses the allocation: one per scan, not one per key.
            let head = r.head.get_or_insert_with(Vec::new);
            head.clear();
            head.extend_from_slice(user);
        }
        r.index.push((r.data.len(), ikey.len(), value.len()));
        r.data.extend_from_slice(ikey);
        r.data.extend_from_slice(value);
    }

    fn exhausted(&mut self) {
        if let Run::Recording(r) = &mut self.run {
            if matches!(r.end, End::Open) {
                r.end = End::Exhausted;
            }
        }
    }

    fn broken(&mut self) {
        self.abandon();
    }
}

impl Drop for ScanBuffer {
    fn drop(&mut self) {
        let Run::Recording(r) = std::mem::replace(&mut self.run, Run::Abandoned) else {
            return;
        };
        let Some(db) = self.db.upgrade() else {
            return;
        };
        // The range covered, and how many buffered entries lie in it.
        let (end, kept) = match r.end {
            End::Exhausted => (None, r.index.len()),
            End::Full(k) => (Some(k), r.index.len()),
            End::Open => {
                let Some(head) = r.head else { return };
                // The head key's entries may continue: not covered.
                let kept = r
                    .index
                    .iter()
                    .position(|&(at, len, _)| {
                        r.data.get(at..at + len).map(key::user_key) == Some(head.as_slice())
                    })
                    .unwrap_or(r.index.len());
                (Some(head), kept)
            }
        };
        if let (Some(s), Some(e)) = (&r.start, &end) {
            if s >= e {
                return;
            }
        }
        let mut index = r.index;
        index.truncate(kept);
        let merged = merged(&r.data, &index);
        let job = Finished {
            db: Arc::downgrade(&db),
            family: Arc::clone(&self.family),
            version: Arc::clone(&self.version),
            q: self.q,
            range: KeyRange {
                start: r.start,
                end,
            },
            data: r.data,
            index,
            merged,
        };
        if !self.q.background {
            return job.run();
        }
        let dropped = match self.queue.push(job) {
            Pushed::Queued => return,
            Pushed::Full => &db.stats.local().query_compactions_discarded_queue_full,
            Pushed::Closed => &db.stats.local().query_compactions_discarded_abandoned,
        };
        Statistics::add(dropped, 1);
    }
}

/// A finished scan's write-back, ready to run on any thread.
struct Finished {
    db: Weak<DbInner>,
    family: Arc<Family>,
    version: Arc<Version>,
    q: QueryCompaction,
    range: KeyRange,
    data: Vec<u8>,
    index: Vec<(usize, usize, usize)>,
    merged: Merged,
}

/// The figures of the buffered entries `index` locates in `data`.
fn merged(data: &[u8], index: &[(usize, usize, usize)]) -> Merged {
    let user = |&(at, len, _): &(usize, usize, usize)| data.get(at..at + len).map(key::user_key);
    Merged {
        bytes: index.iter().map(|&(_, k, v)| (k + v) as u64).sum(),
        entries: index.len() as u64,
        older: index
            .windows(2)
            .filter(|w| matches!(w, [a, b] if user(a) == user(b)))
            .count() as u64,
    }
}

impl Finished {
    /// Steps 1–4 on the calling thread; nothing if the database is gone.
    fn run(self) {
        let Some(db) = self.db.upgrade() else {
            return;
        };
        let entries = Buffered {
            data: &self.data,
            index: &self.index,
            at: 0,
        };
        let started = Instant::now();
        let result = {
            let _purpose = IoPurpose::WriteBack.enter();
            write_back(
                &db,
                &self.family,
                &self.version,
                &self.q,
                &self.range,
                &self.merged,
                entries,
            )
        };
        let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        Statistics::add(&db.stats.local().query_compaction_micros, micros);
        // An error has poisoned the database (it is reported to every later write);
        // the reader has nothing to do with it.
        drop(result);
    }
}

/// What became of a job handed to the [`Queue`].
enum Pushed {
    Queued,
    /// Dropped: the queue was full (or no worker thread could be started).
    Full,
    /// Dropped: the database is closing.
    Closed,
}

/// Write-backs waiting for the background worker (`QueryCompaction::background`),
/// at most [`Queue::CAPACITY`]; shared by the component, the buffers and the worker.
#[derive(Default)]
struct Queue {
    state: Mutex<QueueState>,
    ready: Condvar,
}

#[derive(Default)]
struct QueueState {
    jobs: VecDeque<Finished>,
    /// Jobs queued or running.
    pending: usize,
    /// The worker thread was started.
    started: bool,
    /// The component dropped: the worker exits once the queue is empty.
    closed: bool,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pending = self.state.lock().map_or(0, |s| s.pending);
        write!(f, "Queue({pending} pending)")
    }
}

impl Queue {
    /// Bounds the memory queued write-backs hold (each up to `max_buffer_bytes`).
    const CAPACITY: usize = 4;

    /// Queues `job` unless [`Queue::CAPACITY`] jobs are waiting or the database is
    /// closing; starts the worker at the first.
    fn push(self: &Arc<Queue>, job: Finished) -> Pushed {
        let Ok(mut st) = self.state.lock() else {
            return Pushed::Closed;
        };
        if st.closed {
            return Pushed::Closed;
        }
        if st.jobs.len() >= Queue::CAPACITY {
            return Pushed::Full;
        }
        if !st.started {
            let queue = Arc::clone(self);
            let spawned = std::thread::Builder::new()
                .name("strata-write-back".into())
                .spawn(move || queue.work());
            if spawned.is_err() {
                return Pushed::Full;
            }
            st.started = true;
        }
        st.jobs.push_back(job);
        st.pending += 1;
        self.ready.notify_one();
        Pushed::Queued
    }

    /// The worker: runs queued jobs in order until the queue is closed and empty.
    fn work(&self) {
        loop {
            let job = {
                let Ok(mut st) = self.state.lock() else {
                    return;
                };
                loop {
                    if let Some(job) = st.jobs.pop_front() {
                        break job;
                    }
                    if st.closed {
                        return;
                    }
                    st = match self.ready.wait(st) {
                        Ok(st) => st,
                        Err(_) => return,
                    };
                }
            };
            // Everything the job held, the database included, is dropped when `run`
            // returns: once `pending` falls, `close` may drop the database (and its
            // lock), so nothing here may hold it after. Waiters poll `pending`.
            job.run();
            if let Ok(mut st) = self.state.lock() {
                st.pending -= 1;
            }
        }
    }

    fn pending(&self) -> usize {
        self.state.lock().map_or(0, |s| s.pending)
    }

    /// Drops every queued job and stops the worker after the job it runs.
    fn close(&self) {
        if let Ok(mut st) = self.state.lock() {
            st.closed = true;
            st.pending -= st.jobs.len();
            st.jobs.clear();
        }
        self.ready.notify_all();
    }
}

/// The buffered entries of the covered range, as an iterator for the rewrite. Only
/// forward iteration from the first entry is supported (all a rewrite does).
struct Buffered<'a> {
    data: &'a [u8],
    index: &'a [(usize, usize, usize)],
    at: usize,
}

impl Buffered<'_> {
    fn part(&self, from: usize, len: usize) -> &[u8] {
        self.data.get(from..from + len).unwrap_or_default()
    }
}

impl InternalIterator for Buffered<'_> {
    fn valid(&self) -> bool {
        self.at < self.index.len()
    }
    fn seek_to_first(&mut self) {
        self.at = 0;
    }
    fn seek_to_last(&mut self) {
        self.at = self.index.len();
    }
    fn seek(&mut self, _target: &[u8]) {
        self.at = self.index.len();
    }
    fn seek_for_prev(&mut self, _target: &[u8]) {
        self.at = self.index.len();
    }
    fn next(&mut self) {
        self.at += 1;
    }
    fn prev(&mut self) {
        self.at = self.index.len();
    }
    fn key(&self) -> &[u8] {
        let (from, len, _) = self.index.get(self.at).copied().unwrap_or_default();
        self.part(from, len)
    }
    fn value(&self) -> &[u8] {
        let (from, klen, vlen) = self.index.get(self.at).copied().unwrap_or_default();
        self.part(from + klen, vlen)
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
}

/// Steps 1–4 of the module docs for the covered `range` of a scan of `version`.
///
/// # Errors
/// A non-retryable failure writing or installing poisons the database, as a
/// compaction's would; the error is returned (and only dropped by the caller).
fn write_back(
    db: &Arc<DbInner>,
    family: &Family,
    version: &Arc<Version>,
    q: &QueryCompaction,
    range: &KeyRange,
    merged: &Merged,
    mut entries: Buffered<'_>,
) -> Result<()> {
    let stats = &db.stats;
    let gone = |db: &DbInner| {
        let st = db.state.lock();
        st.shutting_down || !st.jobs_allowed() || !st.families.contains_key(&family.id())
    };
    if gone(db) {
        Statistics::add(&stats.local().query_compactions_discarded_abandoned, 1);
        return Ok(());
    }
    let mut wb = match query_driven::plan(
        version,
        &family.opts,
        db.placement.as_ref(),
        q,
        range,
        merged,
    ) {
        Ok(wb) => wb,
        Err(_) => {
            Statistics::add(
                &stats.local().query_compactions_discarded_below_threshold,
                1,
            );
            return Ok(());
        }
    };
    if let Err(e) = wb.check_complete() {
        return Err(poison(db, crate::error::Error::Internal(e)));
    }
    let ctx = JobContext {
        fs: db.fs.as_ref(),
        versions: &db.versions,
        table_cache: &db.table_cache,
        snapshots: db.snapshots.sequences(),
        merge_operator: family.opts.merge_operator.as_deref(),
        compaction_filter: family.opts.compaction_filter_factory.as_deref(),
        version: Some(version),
    };
    let fed = entries.index.len() as u64;
    let _span = events::job_span(family, &wb.main);
    let mut job = db.events.job_begin(&db.versions, family, &wb.main);
    let written = (|| -> Result<Vec<Outcome>> {
        let mut outcomes = vec![executor::rewrite_fed(&wb.main, &ctx, &mut entries)?];
        for p in &wb.remainders {
            outcomes.push(executor::execute(p, &ctx)?);
        }
        Ok(outcomes)
    })();
    drop(ctx);
    let outcomes = match written {
        Ok(o) => o,
        Err(e) if e.is_retryable() && !e.is_no_space() => {
            Statistics::add(&stats.local().query_compactions_discarded_abandoned, 1);
            job.failed(&e);
            return Err(e);
        }
        Err(e) => {
            Statistics::add(&stats.local().query_compactions_discarded_abandoned, 1);
            let e = fail(db, e);
            job.failed(&e);
            return Err(e);
        }
    };
    let figures = outcomes.iter().fold((0, 0), |(r, w), o| {
        (r + o.bytes_read, w + o.bytes_written())
    });
    let new_files = outcomes.iter().flat_map(|o| &o.edit.new_files);
    job.executed(&db.versions, &wb.main, new_files, figures);
    if !claim(db, family, version, &mut wb) {
        job.abandoned();
        return Ok(());
    }
    let result = install(db, family, &wb, (outcomes, figures, fed), &mut job);
    for p in wb.plans() {
        finish_plan(db, family, p);
    }
    delete_obsolete(db);
    result
}

/// Step 3: registers every plan of `wb` in the family's `Busy` unless the write-back
/// is stale (counted) or the database is closing; true iff registered.
fn claim(db: &DbInner, family: &Family, scanned: &Version, wb: &mut WriteBack) -> bool {
    let mut st = db.state.lock();
    let current = family.versions.current();
    let why = match st.families.get(&family.id()) {
        _ if st.shutting_down || !st.jobs_allowed() => Some(None),
        None => Some(None),
        Some(f) => wb.stale(scanned, &current, &f.busy).map(Some),
    };
    match why {
        None => {
            for p in wb.plans_mut() {
                mark_busy(&mut st, family.id(), p);
            }
            true
        }
        Some(stale) => {
            let counter = match stale {
                Some(_) => &db.stats.local().query_compactions_discarded_stale,
                None => &db.stats.local().query_compactions_discarded_abandoned,
            };
            Statistics::add(counter, 1);
            false
        }
    }
}

/// Step 4: one edit adding every output and deleting every input once. `outcomes`
/// come with the bytes they read and wrote, and the entries the scan fed them.
fn install(
    db: &DbInner,
    family: &Family,
    wb: &WriteBack,
    (outcomes, (read, written), fed): (Vec<Outcome>, (u64, u64), u64),
    job: &mut JobEvents<'_>,
) -> Result<()> {
    let mut edit = crate::version::VersionEdit::default();
    let mut refs = Vec::new();
    let mut kept = 0u64;
    for (i, o) in outcomes.iter().enumerate() {
        edit.new_files.extend(o.edit.new_files.iter().cloned());
        refs.extend(o.refs.iter().cloned());
        if i == 0 {
            kept = o.edit.new_files.iter().map(|(_, f)| f.num_entries).sum();
        }
    }
    // The main plan deletes every input; the remainders' inputs are among them.
    edit.deleted_files = wb.main.input_files().map(|(l, f)| (l, f.number)).collect();
    let removed = edit.deleted_files.len() as u64;
    let installed = jobs::install(db, family, edit, &refs, |f| {
        for (p, o) in wb.plans().zip(&outcomes) {
            jobs::account_levels(f, p, o);
        }
        job.installed();
    });
    if job.settled(&installed) {
        let s = db.stats.local();
        Statistics::add(&s.query_compactions, 1);
        Statistics::add(&s.query_compaction_bytes_read, read);
        Statistics::add(&s.query_compaction_bytes_written, written);
        Statistics::add(&s.query_compaction_files_removed, removed);
        let split: std::collections::BTreeSet<u64> = wb
            .remainders
            .iter()
            .flat_map(|p| p.input_files().map(|(_, f)| f.number))
            .collect();
        Statistics::add(&s.query_compaction_files_split, split.len() as u64);
        Statistics::add(
            &s.query_compaction_entries_dropped,
            fed.saturating_sub(kept),
        );
        for o in &outcomes {
            jobs::account_filter(&db.stats, o);
        }
    }
    installed.map(|_| ())
}

#[cfg(test)]
mod tests;
