//! The database's mutable state: memtables and scheduling, one struct behind one mutex.
//!
//! What changes while the database is open lives in two owners: the version set
//! (`version::VersionSet`: MANIFEST, each family's current version, file numbers, file
//! references) and [`DbState`] here (each family's memtables and running compactions,
//! the live WALs, what background work is running, the poison error), guarded by
//! `DbInner::state`. Field comments say who writes each field.
//!
//! The lock is never held across I/O: a memtable switch creates the next WAL and syncs
//! the old one before taking it (`db::write::make_room`), and a version install takes
//! it only after the MANIFEST write (`db::jobs`).

use super::family::FamilyState;
use super::family_view::{FamilyEntry, FamilyView};
use super::no_space::NoSpace;
use crate::error::Error;
use crate::memtable::MemTable;
use std::collections::BTreeMap;
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
    /// Compactions not started for want of room (`db::room`), and the latest one's
    /// error: kept apart, because only a write stopped by compaction debt waits on
    /// them (a flush is never deferred).
    pub deferred: u64,
    /// See `deferred`.
    pub last_deferred: Option<Error>,
}

/// All mutable engine state. See the module docs.
pub struct DbState {
    /// Each live column family's memtables, running compactions and figures, by id.
    /// Families are added by `create_cf` and removed by `drop_cf`; after any change
    /// of a family or of an active memtable, call [`DbState::refresh_mems`].
    pub families: BTreeMap<u32, FamilyState>,
    /// The active memtable of each family, by id (the write leader's insert targets):
    /// one shared list, so a write group takes it with one reference count instead of
    /// collecting it.
    pub mems: Arc<Vec<(u32, Arc<MemTable>)>>,
    /// The WALs not yet deleted, oldest first, as `(number, bytes)`; the last one
    /// takes writes (its bytes are 0 until it is switched out). Pushed by the leader
    /// at a switch, with the WAL lock held (`write::switch_wal`); the oldest are deleted once every family has flushed past them
    /// (`flush::release_wals`).
    pub wals: Vec<(u64, u64)>,
    /// True while the flush thread writes an immutable memtable.
    pub flush_running: bool,
    /// Number of compactions running.
    pub compactions_running: usize,
    /// Set by the first failed background write, WAL write or fsync; never cleared
    /// while open. Every later write fails with it.
    pub bg_error: Option<Arc<Error>>,
    /// Set while the disk is full (`db::no_space`): writes are refused, no job is
    /// picked, the flush thread makes resume attempts. Set by `no_space::enter`,
    /// cleared by `no_space::resume`.
    pub no_space: Option<NoSpace>,
    /// Flushes that failed with a retryable error (see `Error::is_retryable`), and
    /// compactions likewise. Written by the background threads; waiters compare them
    /// with their value at the start of the wait to report a failure that happened
    /// while they waited.
    pub retryable_failures: RetryableFailures,
    /// Set by `close` / drop: background threads exit.
    pub shutting_down: bool,
    /// Manual compactions waiting (blocks automatic picks so they are not starved).
    pub manual_waiting: usize,
}

impl DbState {
    /// Each live family's id, name, merge operator and value layout (for
    /// `DbInner::family_view`).
    pub fn family_view(&self) -> FamilyView {
        FamilyView(
            self.families
                .iter()
                .map(|(&id, f)| FamilyEntry {
                    id,
                    name: f.family.versions.name().to_owned(),
                    merge_operator: f.family.opts.merge_operator.clone(),
                    expiring: f.family.opts.expiring_values,
                    #[cfg(feature = "metrics")]
                    metrics: Arc::clone(&f.family.metrics),
                })
                .collect(),
        )
    }

    /// Rebuilds [`DbState::mems`] from the families' active memtables.
    pub fn refresh_mems(&mut self) {
        self.mems = Arc::new(
            self.families
                .iter()
                .map(|(&id, f)| (id, Arc::clone(&f.mem.mem)))
                .collect(),
        );
    }

    /// The WAL taking writes.
    pub fn current_wal(&self) -> u64 {
        self.wals.last().map_or(0, |&(n, _)| n)
    }

    /// True iff some family has an immutable memtable waiting for its flush.
    pub fn has_imm(&self) -> bool {
        self.families.values().any(|f| !f.imm.is_empty())
    }

    /// The poison error, if any, as an error to return to a caller.
    pub fn check_bg_error(&self) -> Result<(), Error> {
        match &self.bg_error {
            Some(e) => Err(Error::Poisoned(Arc::clone(e))),
            None => Ok(()),
        }
    }

    /// `Ok` iff writes may proceed: the poison error, or the no-space refusal.
    pub fn check_writes(&self) -> Result<(), Error> {
        self.check_bg_error()?;
        match &self.no_space {
            Some(ns) => Err(ns.refusal()),
            None => Ok(()),
        }
    }

    /// True iff background jobs may be picked: neither poisoned nor out of space.
    pub fn jobs_allowed(&self) -> bool {
        self.bg_error.is_none() && self.no_space.is_none()
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

    /// The latest deferral of a compaction for want of room, if one happened since
    /// the count was `deferred`.
    pub fn deferred_since(&self, deferred: u64) -> Result<(), Error> {
        let f = &self.retryable_failures;
        match &f.last_deferred {
            Some(e) if f.deferred > deferred => Err(e.duplicate()),
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
