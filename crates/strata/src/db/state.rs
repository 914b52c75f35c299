//! The database's mutable state: one struct behind one mutex.
//!
//! Everything that changes while the database is open and is not a lock-free counter
//! lives in [`DbState`], guarded by `DbInner::state`. Field comments say who writes
//! each field. The lock is never held across table or MANIFEST I/O. One documented
//! exception: a memtable switch creates the new WAL, fsyncs the directory and fsyncs
//! the old WAL under it (as LevelDB does), so no writer can observe a half-switched
//! state; that is a small, bounded amount of I/O once per memtable.

use crate::compaction::picker::Busy;
use crate::error::Error;
use crate::memtable::MemTable;
use crate::stats::LevelStats;
use crate::version::Version;
use std::collections::HashSet;
use std::sync::{Arc, Weak};

/// A memtable together with the WAL that holds its writes.
pub struct MemWithLog {
    /// The memtable.
    pub mem: Arc<MemTable>,
    /// Number of the WAL file whose records this memtable holds.
    pub log_number: u64,
}

/// All mutable engine state. See the module docs.
pub struct DbState {
    /// The memtable taking writes. Written by the group-commit leader (switch).
    pub mem: MemWithLog,
    /// Immutable memtables, oldest first. Pushed by the leader, popped by the flush.
    pub imm: Vec<MemWithLog>,
    /// The current version. Written only by `install_version` (manifest lock held).
    pub version: Arc<Version>,
    /// Every version that may still be referenced (readers, iterators): their files
    /// must not be deleted. Pruned when files are collected.
    pub live_versions: Vec<Weak<Version>>,
    /// The WAL number the MANIFEST records as the oldest still needed. Written under
    /// the `manifest` lock by `log_and_apply`.
    pub logged_log_number: u64,
    /// Next file number to hand out (tables, logs, manifests).
    pub next_file_number: u64,
    /// Files being written by flushes and compactions: not yet in any version, never
    /// to be deleted as obsolete.
    pub pending_outputs: HashSet<u64>,
    /// Files and output ranges of running compactions.
    pub busy: Busy,
    /// True while the flush thread writes the oldest immutable memtable.
    pub flush_running: bool,
    /// Number of compactions running.
    pub compactions_running: usize,
    /// Set by the first failed background write, WAL write or fsync; never cleared
    /// while open. Every later write fails with it.
    pub bg_error: Option<Arc<Error>>,
    /// Set by `close` / drop: background threads exit.
    pub shutting_down: bool,
    /// Compaction figures per level (read/write bytes, count); files and size are
    /// filled when reported.
    pub level_stats: Vec<LevelStats>,
    /// Estimated compaction debt of `version` (bytes), refreshed at each install.
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

    /// Smallest WAL number whose records are not yet in a table: the WAL of the oldest
    /// unflushed memtable.
    pub fn min_log_to_keep(&self) -> u64 {
        self.imm
            .first()
            .map(|m| m.log_number)
            .unwrap_or(self.mem.log_number)
    }

    /// Allocates a file number.
    pub fn new_file_number(&mut self) -> u64 {
        let n = self.next_file_number;
        self.next_file_number += 1;
        n
    }
}
