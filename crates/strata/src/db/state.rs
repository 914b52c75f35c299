//! The database's mutable state: memtables and scheduling, one struct behind one mutex.
//!
//! What changes while the database is open lives in two owners: the version set
//! (`version::VersionSet`: MANIFEST, current version, file numbers, file references)
//! and [`DbState`] here (memtables, what background work is running, the poison
//! error), guarded by `DbInner::state`. Field comments say who writes each field.
//!
//! The lock is never held across I/O: a memtable switch creates the next WAL and syncs
//! the old one before taking it (`db::write::make_room`), and a version install takes
//! it only after the MANIFEST write (`db::jobs`).

use crate::compaction::picker::Busy;
use crate::error::Error;
use crate::memtable::MemTable;
use crate::stats::LevelStats;
use std::sync::Arc;

/// A memtable together with the WAL that holds its writes.
pub struct MemWithLog {
    /// The memtable.
    pub mem: Arc<MemTable>,
    /// Number of the WAL file whose records this memtable holds.
    pub log_number: u64,
}

/// Retryable background failures (the database stays healthy; the job is retried).
#[derive(Debug, Default)]
pub struct RetryableFailures {
    /// Failed flush attempts.
    pub flushes: u64,
    /// Failed compaction attempts.
    pub compactions: u64,
    /// The latest failure's error.
    pub last: Option<Error>,
}

/// All mutable engine state. See the module docs.
pub struct DbState {
    /// The memtable taking writes. Written by the group-commit leader (switch).
    pub mem: MemWithLog,
    /// Immutable memtables, oldest first. Pushed by the leader, popped by the flush
    /// when its version is installed.
    pub imm: Vec<MemWithLog>,
    /// Files and output ranges of running compactions.
    pub busy: Busy,
    /// True while the flush thread writes the oldest immutable memtable.
    pub flush_running: bool,
    /// Number of compactions running.
    pub compactions_running: usize,
    /// Set by the first failed background write, WAL write or fsync; never cleared
    /// while open. Every later write fails with it.
    pub bg_error: Option<Arc<Error>>,
    /// Flushes that failed with a retryable error (see `Error::is_retryable`), and
    /// compactions likewise. Written by the background threads; waiters compare them
    /// with their value at the start of the wait to report a failure that happened
    /// while they waited.
    pub retryable_failures: RetryableFailures,
    /// Set by `close` / drop: background threads exit.
    pub shutting_down: bool,
    /// Compaction figures per level (read/write bytes, count); files and size are
    /// filled when reported.
    pub level_stats: Vec<LevelStats>,
    /// Estimated compaction debt of the current version (bytes), refreshed at each
    /// install.
    pub pending_compaction_bytes: u64,
    /// Manual compactions waiting (blocks automatic picks so they are not starved).
    pub manual_waiting: usize,
}

impl DbState {
    /// The poison error, if any, as an error to return to a caller.
    pub fn check_bg_error(&self) -> Result<(), Error> {
        match &self.bg_error {
            Some(e) => Err(Error::Poisoned(Arc::clone(e))),
            None => Ok(()),
        }
    }

    /// The latest retryable background failure, if a flush failed since the flush
    /// count was `flushes` or a compaction since it was `compactions` (pass `u64::MAX`
    /// to ignore a kind). Waiters sample the counts when they start waiting.
    pub fn retryable_since(&self, flushes: u64, compactions: u64) -> Result<(), Error> {
        let f = &self.retryable_failures;
        match &f.last {
            Some(e) if f.flushes > flushes || f.compactions > compactions => Err(e.duplicate()),
            _ => Ok(()),
        }
    }

    /// Records the first background error (later ones are dropped: the first is the
    /// cause).
    pub fn set_bg_error(&mut self, e: Error) -> Error {
        let cause = match e {
            Error::Poisoned(c) => c,
            other => Arc::new(other),
        };
        if self.bg_error.is_none() {
            self.bg_error = Some(Arc::clone(&cause));
        }
        Error::Poisoned(cause)
    }
}
