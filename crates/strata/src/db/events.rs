//! The seam between the engine and its event listeners (`crate::listener`), and the
//! `tracing` span of each flush and compaction job.
//!
//! The engine calls one named method of [`Events`] where something happens (a job's
//! begin, a table deleted, a stall condition seen, ...). Each method is a no-op when
//! no listener is registered (a read-only open never registers any) and builds no
//! info then; otherwise it queues the event for the database's dispatcher thread,
//! which calls the listeners (docs/ARCHITECTURE.md §10.1). Queueing takes one short
//! lock and never waits for a listener, so the write path and the background threads
//! are never held up by one.
//!
//! Order: one channel carries every event, so listeners see them in the order they
//! were queued. A job queues its begin, then its created tables, then its completed
//! event; an installed job queues the completed event under the `state` lock in the
//! install step, and `obsolete::delete_obsolete` takes that lock between taking the
//! files to delete and deleting them, so the deletion of a job's inputs is queued after
//! the job's completed event.

use super::family::Family;
use crate::compaction::plan::Input;
use crate::compaction::{Action, Plan, Reason};
use crate::error::{Error, IoOp, Result};
use crate::filename;
use crate::listener::{
    BackgroundErrorInfo, BackgroundErrorState, ColumnFamilyInfo, CompactionJobInfo,
    CompactionReason, ErrorRecoveryInfo, EventListener, FlushJobInfo, FlushReason, JobStatus,
    MemTableInfo, StallCause, TableFileCreationInfo, TableFileCreationReason,
    TableFileDeletionInfo, TableFileInfo, WriteStallCondition, WriteStallInfo,
};
use crate::memtable::MemTable;
use crate::stats::Statistics;
use crate::version::{FileKind, FileMetaData, VersionSet};
use parking_lot::Mutex;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One queued event.
enum Event {
    FlushBegin(FlushJobInfo),
    FlushCompleted(FlushJobInfo),
    CompactionBegin(CompactionJobInfo),
    CompactionCompleted(CompactionJobInfo),
    TableCreated(TableFileCreationInfo),
    TableDeleted(TableFileDeletionInfo),
    MemtableSealed(MemTableInfo),
    Stall(WriteStallInfo),
    BackgroundError(BackgroundErrorInfo),
    Recovered(ErrorRecoveryInfo),
    FamilyCreated(ColumnFamilyInfo),
    FamilyDropped(ColumnFamilyInfo),
}

impl Event {
    fn deliver(&self, l: &dyn EventListener) {
        match self {
            Event::FlushBegin(i) => l.on_flush_begin(i),
            Event::FlushCompleted(i) => l.on_flush_completed(i),
            Event::CompactionBegin(i) => l.on_compaction_begin(i),
            Event::CompactionCompleted(i) => l.on_compaction_completed(i),
            Event::TableCreated(i) => l.on_table_file_created(i),
            Event::TableDeleted(i) => l.on_table_file_deleted(i),
            Event::MemtableSealed(i) => l.on_memtable_sealed(i),
            Event::Stall(i) => l.on_stall_conditions_changed(i),
            Event::BackgroundError(i) => l.on_background_error(i),
            Event::Recovered(i) => l.on_error_recovery_completed(i),
            Event::FamilyCreated(i) => l.on_column_family_created(i),
            Event::FamilyDropped(i) => l.on_column_family_dropped(i),
        }
    }
}

/// The queue to the dispatcher thread, while listeners are registered.
struct Dispatch {
    /// `None` once closed: later events are dropped.
    queue: Mutex<Option<Sender<Event>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// The last stall condition reported. Only the write leader updates it.
    stall: Mutex<WriteStallCondition>,
}

/// A database's event seam (see the module docs). In `DbInner::events`.
pub(crate) struct Events {
    /// `None`: no listener, every method is a no-op.
    dispatch: Option<Dispatch>,
    /// The last job id handed out.
    last_job: AtomicU64,
}

impl Events {
    /// No listener: every event is dropped unbuilt.
    pub fn none() -> Events {
        Events {
            dispatch: None,
            last_job: AtomicU64::new(0),
        }
    }

    /// Starts the dispatcher thread calling `listeners` in order, counting their
    /// panics in `stats`; [`Events::none`] if there are none.
    ///
    /// # Errors
    /// `Io` if the thread cannot be spawned.
    pub fn start(listeners: Vec<Arc<dyn EventListener>>, stats: Arc<Statistics>) -> Result<Events> {
        if listeners.is_empty() {
            return Ok(Events::none());
        }
        let (tx, rx) = mpsc::channel();
        let name = "strata-events".to_owned();
        let thread = std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || dispatch(&rx, &listeners, &stats))
            .map_err(|e| Error::io(IoOp::Spawn, name, e))?;
        Ok(Events {
            dispatch: Some(Dispatch {
                queue: Mutex::new(Some(tx)),
                thread: Mutex::new(Some(thread)),
                stall: Mutex::new(WriteStallCondition::Normal),
            }),
            last_job: AtomicU64::new(0),
        })
    }

    /// Stops taking events, lets the dispatcher deliver every event queued so far,
    /// and joins it. Idempotent. A listener that closes the database from its own
    /// callback is not waited for (the thread cannot join itself).
    pub fn close(&self) {
        let Some(d) = &self.dispatch else {
            return;
        };
        drop(d.queue.lock().take());
        let thread = d.thread.lock().take();
        if let Some(t) = thread {
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
    }

    /// Queues the event `build` makes, if anyone listens.
    fn send(&self, build: impl FnOnce() -> Event) {
        let Some(d) = &self.dispatch else {
            return;
        };
        let event = build();
        if let Some(tx) = d.queue.lock().as_ref() {
            // The receiver lives until the queue is closed: a send cannot fail before.
            let _ = tx.send(event);
        }
    }

    /// A flush or compaction of `family` running `plan` begins: queues its begin
    /// event and returns the job's handle for the rest of its events.
    pub fn job_begin<'a>(
        &'a self,
        versions: &VersionSet,
        family: &Family,
        plan: &Plan,
    ) -> JobEvents<'a> {
        if self.dispatch.is_none() {
            return JobEvents {
                events: self,
                job: None,
            };
        }
        let job_id = self.last_job.fetch_add(1, Ordering::Relaxed) + 1;
        let (cf_id, cf_name) = (family.id(), family.versions.name().to_owned());
        let info = match job_kind(plan.reason) {
            JobKind::Flush(reason) => {
                let mem = plan.inputs.iter().find_map(|i| match i {
                    Input::Memtable(m) => Some(m),
                    Input::Files { .. } => None,
                });
                JobInfo::Flush(FlushJobInfo {
                    cf_id,
                    cf_name,
                    job_id,
                    reason,
                    memtable_entries: mem.map_or(0, |m| m.len() as u64),
                    memtable_bytes: mem.map_or(0, |m| m.approximate_memory_usage() as u64),
                    outputs: Vec::new(),
                    bytes_written: 0,
                    duration: Duration::ZERO,
                    status: JobStatus::Running,
                })
            }
            JobKind::Compaction(reason) => JobInfo::Compaction(CompactionJobInfo {
                cf_id,
                cf_name,
                job_id,
                reason,
                inputs: plan
                    .input_files()
                    .map(|(level, f)| table_info(versions, level, f))
                    .collect(),
                output_level: plan.deepest_output_level(),
                outputs: Vec::new(),
                bytes_read: 0,
                bytes_written: 0,
                duration: Duration::ZERO,
                status: JobStatus::Running,
            }),
        };
        self.send(|| match &info {
            JobInfo::Flush(i) => Event::FlushBegin(i.clone()),
            JobInfo::Compaction(i) => Event::CompactionBegin(i.clone()),
        });
        JobEvents {
            events: self,
            job: Some((info, Instant::now())),
        }
    }

    /// An obsolete table file `number` at `path` was removed (`removed` says how).
    pub fn table_deleted(&self, number: u64, path: &Path, removed: &Result<()>) {
        self.send(|| {
            Event::TableDeleted(TableFileDeletionInfo {
                number,
                path: path.to_path_buf(),
                error: removed.as_ref().err().map(ToString::to_string),
            })
        });
    }

    /// `mem`, the active memtable of `family`, was switched out to be flushed.
    pub fn memtable_sealed(&self, family: &Family, mem: &MemTable) {
        self.send(|| {
            Event::MemtableSealed(MemTableInfo {
                cf_id: family.id(),
                cf_name: family.versions.name().to_owned(),
                entries: mem.len() as u64,
                bytes: mem.approximate_memory_usage() as u64,
            })
        });
    }

    /// The write leader found the write controller in `current`: queues a change.
    /// Requires: called by the write leader only (one caller at a time).
    pub fn write_stall(&self, current: WriteStallCondition) {
        let Some(d) = &self.dispatch else {
            return;
        };
        let previous = std::mem::replace(&mut *d.stall.lock(), current);
        if previous != current {
            self.send(|| Event::Stall(WriteStallInfo { previous, current }));
        }
    }

    /// `e` failed a write, job or MANIFEST edit, and the database is now in `state`.
    pub fn background_error(&self, e: &Error, state: BackgroundErrorState) {
        self.send(|| {
            let cause = cause(e);
            Event::BackgroundError(BackgroundErrorInfo {
                kind: cause.kind(),
                message: cause.to_string(),
                state,
            })
        });
    }

    /// The no-space state that `e` began, `duration` ago, is over.
    pub fn recovered(&self, e: &Error, duration: Duration) {
        self.send(|| {
            let cause = cause(e);
            Event::Recovered(ErrorRecoveryInfo {
                kind: cause.kind(),
                message: cause.to_string(),
                duration,
            })
        });
    }

    /// `family` was created, durably.
    pub fn family_created(&self, family: &Family) {
        self.send(|| Event::FamilyCreated(family_info(family)));
    }

    /// `family` was dropped, durably.
    pub fn family_dropped(&self, family: &Family) {
        self.send(|| Event::FamilyDropped(family_info(family)));
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        self.close();
    }
}

/// The dispatcher thread: calls every listener with every event until the queue is
/// closed and empty. A panic of a listener is caught and counted, so the others and
/// later events still run.
fn dispatch(rx: &Receiver<Event>, listeners: &[Arc<dyn EventListener>], stats: &Statistics) {
    for event in rx {
        for l in listeners {
            if catch_unwind(AssertUnwindSafe(|| event.deliver(l.as_ref()))).is_err() {
                Statistics::add(&stats.local().listener_panics, 1);
            }
        }
    }
}

/// The error a listener is told about: a poisoned database's or a no-space refusal's
/// cause, or `e` itself.
fn cause(e: &Error) -> &Error {
    match e {
        Error::Poisoned(cause) | Error::NoSpace(cause) => cause,
        other => other,
    }
}

fn family_info(family: &Family) -> ColumnFamilyInfo {
    ColumnFamilyInfo {
        cf_id: family.id(),
        cf_name: family.versions.name().to_owned(),
    }
}

fn table_info(versions: &VersionSet, level: usize, f: &FileMetaData) -> TableFileInfo {
    TableFileInfo {
        number: f.number,
        level,
        // Every path id of a version names a data path; an empty path never shows.
        path: versions
            .dir(f.path_id)
            .map(|dir| filename::table_file(dir, f.number))
            .unwrap_or_default(),
        size: f.size,
        is_virtual: matches!(f.kind, FileKind::Virtual { .. }),
    }
}

/// A flush or a compaction, with the public reason.
enum JobKind {
    Flush(FlushReason),
    Compaction(CompactionReason),
}

fn job_kind(reason: Reason) -> JobKind {
    match reason {
        // A recovery flush runs at open, before any listener is called; it is a
        // memtable's flush all the same.
        Reason::Flush | Reason::RecoveryFlush => JobKind::Flush(FlushReason::Memtable),
        Reason::CopiesUp => JobKind::Flush(FlushReason::Copies),
        Reason::L0FileCount => JobKind::Compaction(CompactionReason::Level0FileCount),
        Reason::LevelSize => JobKind::Compaction(CompactionReason::LevelSize),
        Reason::Manual => JobKind::Compaction(CompactionReason::Manual),
        Reason::RangeDeletion => JobKind::Compaction(CompactionReason::RangeDeletion),
        Reason::ReadRequested => JobKind::Compaction(CompactionReason::ReadRequested),
        Reason::Garbage => JobKind::Compaction(CompactionReason::Garbage),
        Reason::ReadMerged => JobKind::Compaction(CompactionReason::ReadMerged),
        Reason::Periodic => JobKind::Compaction(CompactionReason::Periodic),
    }
}

enum JobInfo {
    Flush(FlushJobInfo),
    Compaction(CompactionJobInfo),
}

/// The events of one running job, from [`Events::job_begin`]. Exactly one of
/// [`JobEvents::installed`], [`JobEvents::abandoned`] or [`JobEvents::failed`]
/// queues its completed event; later calls are no-ops.
pub(crate) struct JobEvents<'a> {
    events: &'a Events,
    /// `None` without listeners, or once completed.
    job: Option<(JobInfo, Instant)>,
}

impl JobEvents<'_> {
    /// The job executed `plan` and its edit adds `new_files` (level, table), having
    /// read and written `bytes` (read, written): queues a created event for each
    /// table it wrote and keeps the figures for the completed event.
    pub fn executed<'f>(
        &mut self,
        versions: &VersionSet,
        plan: &Plan,
        new_files: impl Iterator<Item = &'f (usize, FileMetaData)>,
        (read, written): (u64, u64),
    ) {
        let Some((info, _)) = &mut self.job else {
            return;
        };
        let outputs: Vec<TableFileInfo> = new_files
            .map(|(level, f)| table_info(versions, *level, f))
            .collect();
        let (cf_id, cf_name, job_id, reason) = match info {
            JobInfo::Flush(i) => (
                i.cf_id,
                &i.cf_name,
                i.job_id,
                TableFileCreationReason::Flush,
            ),
            JobInfo::Compaction(i) => (
                i.cf_id,
                &i.cf_name,
                i.job_id,
                TableFileCreationReason::Compaction,
            ),
        };
        // Only a rewrite writes files; a move or a virtualization adds tables by
        // metadata alone.
        if plan.action == Action::Rewrite {
            for file in outputs.iter().filter(|f| !f.is_virtual) {
                self.events.send(|| {
                    Event::TableCreated(TableFileCreationInfo {
                        cf_id,
                        cf_name: cf_name.clone(),
                        job_id,
                        file: file.clone(),
                        reason,
                    })
                });
            }
        }
        match info {
            JobInfo::Flush(i) => {
                i.outputs = outputs;
                i.bytes_written = written;
            }
            JobInfo::Compaction(i) => {
                i.outputs = outputs;
                i.bytes_read = read;
                i.bytes_written = written;
            }
        }
    }

    /// The job's edit is installed. Call it in the install step, under the `state`
    /// lock (see the module docs).
    pub fn installed(&mut self) {
        self.complete(JobStatus::Installed);
    }

    /// After the install step (`jobs::install`'s result): queues the completed event
    /// of a job whose install failed or found its family dropped, and returns true
    /// iff the edit was installed (its event was queued by [`JobEvents::installed`]).
    pub fn settled(&mut self, installed: &Result<bool>) -> bool {
        match installed {
            Ok(true) => true,
            Ok(false) => {
                self.abandoned();
                false
            }
            Err(e) => {
                self.failed(e);
                false
            }
        }
    }

    /// The job was given up without an error.
    pub fn abandoned(&mut self) {
        self.complete(JobStatus::Abandoned);
    }

    /// The job failed with `e` (as its caller gets it).
    pub fn failed(&mut self, e: &Error) {
        if self.job.is_some() {
            self.complete(JobStatus::Failed {
                kind: e.kind(),
                message: e.to_string(),
            });
        }
    }

    fn complete(&mut self, status: JobStatus) {
        let Some((info, started)) = self.job.take() else {
            return;
        };
        let duration = started.elapsed();
        self.events.send(|| match info {
            JobInfo::Flush(mut i) => {
                i.duration = duration;
                i.status = status;
                Event::FlushCompleted(i)
            }
            JobInfo::Compaction(mut i) => {
                i.duration = duration;
                i.status = status;
                Event::CompactionCompleted(i)
            }
        });
    }
}

/// The `tracing` span of a flush or compaction job of `family` running `plan`,
/// entered until the returned guard drops.
pub(crate) fn job_span(family: &Family, plan: &Plan) -> tracing::span::EnteredSpan {
    let inputs: usize = plan
        .inputs
        .iter()
        .map(|i| match i {
            Input::Files { files, .. } => files.len(),
            Input::Memtable(_) => 0,
        })
        .sum();
    let output_level = plan.deepest_output_level();
    if plan.reason.is_flush() {
        tracing::info_span!("flush", cf_id = family.id(), reason = ?plan.reason, output_level = ?output_level, inputs)
            .entered()
    } else {
        tracing::info_span!("compaction", cf_id = family.id(), reason = ?plan.reason, output_level = ?output_level, inputs)
            .entered()
    }
}

/// What the write controller found in one pass of `write::make_room`: the first cause
/// of a slowdown and of a stop, if any.
#[derive(Default)]
pub(crate) struct Pressure {
    slow: Option<StallCause>,
    stop: Option<StallCause>,
}

impl Pressure {
    /// Writes slow down for `cause` if `when`.
    pub fn slow_if(&mut self, when: bool, cause: StallCause) {
        if when {
            self.slow.get_or_insert(cause);
        }
    }

    /// Writes stop for `cause` if `when`.
    pub fn stop_if(&mut self, when: bool, cause: StallCause) {
        if when {
            self.stop.get_or_insert(cause);
        }
    }

    pub fn slowed(&self) -> bool {
        self.slow.is_some()
    }

    pub fn stopped(&self) -> bool {
        self.stop.is_some()
    }

    /// The condition, where `memtables_full`: a family needs a switch while its
    /// memtables all wait for flushes (the write waits too).
    pub fn condition(&self, memtables_full: bool) -> WriteStallCondition {
        match (self.stop, self.slow) {
            (Some(cause), _) => WriteStallCondition::Stopped(cause),
            (None, _) if memtables_full => WriteStallCondition::Stopped(StallCause::Memtables),
            (None, Some(cause)) => WriteStallCondition::Slowed(cause),
            (None, None) => WriteStallCondition::Normal,
        }
    }
}
