//! Event listeners: the [`EventListener`] trait and the infos its callbacks get
//! (`db::events` queues and dispatches them).

use crate::error::ErrorKind;
use std::path::PathBuf;
use std::time::Duration;

/// A database's event listener (RocksDB's `EventListener`): callbacks told about its
/// flushes, compactions, table files, memtable switches, write stalls, background
/// errors and column families.
///
/// A listener is a component given to [`crate::DbBuilder::listener`], never an
/// option: it is not persisted in `OPTIONS`. Every method has a no-op default, so a
/// listener implements only what it wants.
///
/// Listeners never run on the thread that caused the event. Each open database
/// queues its events, and one dispatcher thread of its own calls every listener,
/// in registration order, event after event (docs/ARCHITECTURE.md §10.1). So a slow
/// listener delays later events but never a write, a flush or a compaction; a
/// panicking listener is caught and counted (`listener_panics` in
/// [`crate::Db::stats`]), and the other listeners and later events still run. `close`
/// (or dropping the handle) delivers every event queued before it and joins the
/// thread. A read-only handle calls no listener: it runs no job and writes nothing.
///
/// Ordering: events reach the listeners in the order the engine queued them. For one
/// job: begin, then each table file it created, then completed (exactly once per
/// begin); the table-deleted events of its inputs come after its completed event.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use strata::{Db, EventListener, FlushJobInfo, Options, WriteOptions};
///
/// #[derive(Default)]
/// struct CountFlushes(AtomicU64);
///
/// impl EventListener for CountFlushes {
///     fn on_flush_completed(&self, _info: &FlushJobInfo) {
///         self.0.fetch_add(1, Ordering::Relaxed);
///     }
/// }
///
/// let dir = tempfile::tempdir().expect("tempdir");
/// let flushes = Arc::new(CountFlushes::default());
/// let db = Db::builder()
///     .listener(Arc::clone(&flushes) as Arc<dyn EventListener>)
///     .open(dir.path(), Options::default())?;
/// db.put(&WriteOptions::default(), b"key", b"value")?;
/// db.flush()?;
/// db.close()?; // delivers every event queued so far
/// assert_eq!(flushes.0.load(Ordering::Relaxed), 1);
/// # Ok::<(), strata::Error>(())
/// ```
pub trait EventListener: Send + Sync {
    /// A flush job began (`outputs` empty, `status` [`JobStatus::Running`]).
    fn on_flush_begin(&self, _info: &FlushJobInfo) {}
    /// A flush job ended: installed, abandoned or failed (`status`).
    fn on_flush_completed(&self, _info: &FlushJobInfo) {}
    /// A compaction job began (`outputs` empty, `status` [`JobStatus::Running`]).
    fn on_compaction_begin(&self, _info: &CompactionJobInfo) {}
    /// A compaction job ended: installed, abandoned or failed (`status`).
    fn on_compaction_completed(&self, _info: &CompactionJobInfo) {}
    /// A job wrote a table file (fsynced; installed only if the job's completed event
    /// says [`JobStatus::Installed`], otherwise deleted later).
    fn on_table_file_created(&self, _info: &TableFileCreationInfo) {}
    /// A table file no version needs any more was deleted (or its removal failed).
    fn on_table_file_deleted(&self, _info: &TableFileDeletionInfo) {}
    /// A family's active memtable was switched out, to be flushed.
    fn on_memtable_sealed(&self, _info: &MemTableInfo) {}
    /// The write controller's condition changed (normal, slowed, stopped).
    fn on_stall_conditions_changed(&self, _info: &WriteStallInfo) {}
    /// A write, flush, compaction or MANIFEST edit failed; `state` says what the
    /// database does about it.
    fn on_background_error(&self, _info: &BackgroundErrorInfo) {}
    /// The database left the no-space state and takes writes again.
    fn on_error_recovery_completed(&self, _info: &ErrorRecoveryInfo) {}
    /// A column family was created (durably).
    fn on_column_family_created(&self, _info: &ColumnFamilyInfo) {}
    /// A column family was dropped (durably).
    fn on_column_family_dropped(&self, _info: &ColumnFamilyInfo) {}
}

/// One table of a job's inputs or outputs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TableFileInfo {
    /// The file number (the file is `<number>.sst`, six digits at least).
    pub number: u64,
    /// The level the table is in (inputs) or was added to (outputs).
    pub level: usize,
    /// Where the file is.
    pub path: PathBuf,
    /// The file's size in bytes (a virtual table: the size its metadata records).
    pub size: u64,
    /// A virtual table: metadata over slices of other tables, with no file of its
    /// own at `path` (delayed compaction, docs/ARCHITECTURE.md §6.10).
    pub is_virtual: bool,
}

/// How a job ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JobStatus {
    /// In a begin event: the job is running.
    Running,
    /// Its edit is in the MANIFEST and its outputs are live.
    Installed,
    /// Given up without an error: its family was dropped, or a compaction filter's
    /// change would have been visible to a snapshot taken meanwhile. Its outputs are
    /// deleted; a compaction's inputs are picked again.
    Abandoned,
    /// Failed with this error, as the job's caller got it. If the error moved the
    /// database to another state (retrying, no space, poisoned), that
    /// [`BackgroundErrorInfo`] came just before.
    Failed {
        /// The error's kind.
        kind: ErrorKind,
        /// The error's message.
        message: String,
    },
}

/// Why a flush ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FlushReason {
    /// An immutable memtable (full, switched by `Db::flush`, by the memory budget, or
    /// to release an old WAL) is written to L0.
    Memtable,
    /// Copies of records that a family's tree hooks hold are written to L0 (tiering,
    /// docs/ARCHITECTURE.md §6.14).
    Copies,
}

/// Why a compaction ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompactionReason {
    /// L0 held `level0_file_num_compaction_trigger` files or more.
    Level0FileCount,
    /// A level held more bytes than its target.
    LevelSize,
    /// `Db::compact_range`.
    Manual,
    /// Whole files hidden by range tombstones, or tombstones with nothing to hide.
    RangeDeletion,
    /// Tables reads asked to have compacted.
    ReadRequested,
    /// Tables rewritten so that unreachable bytes of others can be deleted.
    Garbage,
    /// Entries a scan merged, written back as tables (query-driven compaction).
    ReadMerged,
    /// Tables older than `periodic_compaction_seconds`, rewritten in place.
    Periodic,
}

/// A flush job: its begin and completed events.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct FlushJobInfo {
    /// The column family's id.
    pub cf_id: u32,
    /// The column family's name.
    pub cf_name: String,
    /// The job's id, unique among the jobs of this open database.
    pub job_id: u64,
    /// Why it ran.
    pub reason: FlushReason,
    /// Entries in the memtable flushed.
    pub memtable_entries: u64,
    /// The memtable's approximate memory use, bytes.
    pub memtable_bytes: u64,
    /// The tables written (completed only; a memtable whose entries all cancel out
    /// writes none).
    pub outputs: Vec<TableFileInfo>,
    /// Bytes written (completed only).
    pub bytes_written: u64,
    /// From begin to completed (zero at begin).
    pub duration: Duration,
    /// [`JobStatus::Running`] at begin; how it ended at completed.
    pub status: JobStatus,
}

/// A compaction job: its begin and completed events.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CompactionJobInfo {
    /// The column family's id.
    pub cf_id: u32,
    /// The column family's name.
    pub cf_name: String,
    /// The job's id, unique among the jobs of this open database.
    pub job_id: u64,
    /// Why it ran.
    pub reason: CompactionReason,
    /// The input tables, each with its level: the level being compacted first.
    pub inputs: Vec<TableFileInfo>,
    /// The deepest level written; `None` for a job that only deletes files.
    pub output_level: Option<usize>,
    /// The tables the job's edit added (completed only): written, or for a trivial
    /// move the input files at their new level, or virtual tables.
    pub outputs: Vec<TableFileInfo>,
    /// Bytes read (completed only).
    pub bytes_read: u64,
    /// Bytes written (completed only).
    pub bytes_written: u64,
    /// From begin to completed (zero at begin).
    pub duration: Duration,
    /// [`JobStatus::Running`] at begin; how it ended at completed.
    pub status: JobStatus,
}

/// Why a table file was created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TableFileCreationReason {
    /// By a flush.
    Flush,
    /// By a compaction.
    Compaction,
}

/// A table file a job wrote.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TableFileCreationInfo {
    /// The column family's id.
    pub cf_id: u32,
    /// The column family's name.
    pub cf_name: String,
    /// The id of the job that wrote it.
    pub job_id: u64,
    /// The table.
    pub file: TableFileInfo,
    /// What kind of job wrote it.
    pub reason: TableFileCreationReason,
}

/// A table file deleted because no version needs it any more.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TableFileDeletionInfo {
    /// The file number.
    pub number: u64,
    /// Where the file was.
    pub path: PathBuf,
    /// The removal's error, if it failed (the next open deletes the file).
    pub error: Option<String>,
}

/// A memtable switched out of taking writes.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct MemTableInfo {
    /// The column family's id.
    pub cf_id: u32,
    /// The column family's name.
    pub cf_name: String,
    /// Entries in the memtable.
    pub entries: u64,
    /// Its approximate memory use, bytes.
    pub bytes: u64,
}

/// What made writes slow down or stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StallCause {
    /// A family's L0 reached `level0_slowdown_writes_trigger` (slowed) or
    /// `level0_stop_writes_trigger` (stopped) files.
    Level0Files,
    /// A family's estimated pending compaction bytes reached the soft (slowed) or
    /// hard (stopped) limit.
    PendingCompactionBytes,
    /// A family needs a memtable switch while `max_write_buffer_number` memtables
    /// wait for their flush (stopped).
    Memtables,
    /// The memtables passed 3/4 (slowed) or 7/8 (stopped) of the memory budget
    /// (docs/ARCHITECTURE.md §4.4).
    MemoryBudget,
}

/// The write controller's condition. It is shared by every family: the family under
/// the most pressure sets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteStallCondition {
    /// Writes run at full speed.
    Normal,
    /// Each write group waits 1 ms first.
    Slowed(StallCause),
    /// Writes wait until a flush or compaction relieves the cause.
    Stopped(StallCause),
}

/// The write controller's condition changed. Conditions are observed by the writers
/// themselves, so the return to normal is reported by the first write after the
/// relief.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteStallInfo {
    /// The condition before.
    pub previous: WriteStallCondition,
    /// The condition now.
    pub current: WriteStallCondition,
}

/// What the database does about a background error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BackgroundErrorState {
    /// The database stays healthy: the failed job is retried after a backoff (a
    /// failed write may be retried by its caller). No recovery event follows.
    Retrying,
    /// The disk is full: writes are refused until a resume attempt finds space
    /// (then [`EventListener::on_error_recovery_completed`]), docs/ARCHITECTURE.md §7.8.
    NoSpace,
    /// The database is poisoned: only a reopen repairs it.
    Poisoned,
}

/// A failed write, flush, compaction or MANIFEST edit.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct BackgroundErrorInfo {
    /// The error's kind (for a poisoned database, its cause's).
    pub kind: ErrorKind,
    /// The error's message.
    pub message: String,
    /// What the database does about it.
    pub state: BackgroundErrorState,
}

/// The database left the no-space state.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ErrorRecoveryInfo {
    /// The kind of the error that moved it to the state.
    pub kind: ErrorKind,
    /// That error's message.
    pub message: String,
    /// How long writes were refused.
    pub duration: Duration,
}

/// A column family created or dropped.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ColumnFamilyInfo {
    /// Its id.
    pub cf_id: u32,
    /// Its name.
    pub cf_name: String,
}
