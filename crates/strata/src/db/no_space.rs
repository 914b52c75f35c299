//! The no-space state: a full disk refuses writes instead of poisoning the database,
//! and the database resumes by itself once space is free (docs/ARCHITECTURE.md §7.8).
//!
//! # Why not poison
//! A full disk (`ENOSPC`, or `EDQUOT` for a quota) is the one I/O failure whose cause
//! an operator fixes while the process runs, and whose effect the engine can undo
//! exactly: the logs cut a record that failed mid-append back off
//! (`wal::LogWriter::add_records`), a flush's or compaction's partial outputs are named
//! by no version and are collected, and a roll-over's MANIFEST that `CURRENT` never
//! named is removed. So what is durable after the failure is what was durable before
//! it, and nothing needs a reopen. A failed *fsync* is different (Linux may have
//! dropped the dirty pages): it stays fatal whatever its cause.
//!
//! # The state
//! [`enter`] records the first such error in `DbState::no_space`. From then on:
//! - writes (and `flush`, `compact_range`, family changes) are refused with
//!   [`Error::NoSpace`] carrying the cause, before anything is appended: the write
//!   leader checks the state in `write::make_room`, with the `state` lock it takes
//!   anyway for every group;
//! - reads, iterators, snapshots and checkpoints work as before;
//! - no flush or compaction is picked (each would only meet the full disk again and
//!   leave partial outputs that take the space back);
//! - the flush thread makes a resume attempt ([`resume`]) when one is due: 10 ms
//!   after the failure, then with a doubling backoff up to 200 ms
//!   ([`FIRST_RETRY`], [`MAX_RETRY`]). [`crate::Db::resume`] makes one at once.
//!
//! # A resume attempt
//! A probe file of [`PROBE_BYTES`] (the largest WAL record a write group makes) is
//! created, written and fsynced in every directory the database writes (its own and
//! each data path's), then removed. If that succeeds the state is cleared: writers
//! are woken and the background threads flush the memtables that waited and run the
//! compactions that failed. A flush or write that then meets a disk still too full
//! enters the state again; nothing is lost either way, the state only flaps. Writes
//! are never accepted while the state is set, so the memtables cannot grow without
//! bound behind a full disk.
//!
//! Lock order: the `resuming` turn, then `state` briefly (never held across the probe).

use super::DbInner;
use crate::error::{Error, Result};
use crate::filename;
use crate::listener::BackgroundErrorState;
use crate::stats::Statistics;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The first wait before a resume attempt.
pub(crate) const FIRST_RETRY: Duration = Duration::from_millis(10);
/// The longest wait between resume attempts. RocksDB waits 1 s
/// (`bgerror_resume_retry_interval`); an attempt on a disk still full costs one
/// failed create or short write per directory, so Strata can afford to look five
/// times as often and take writes again within about 0.2 s of space being freed.
pub(crate) const MAX_RETRY: Duration = Duration::from_millis(200);
/// Bytes a resume probe writes in each directory: room for the largest WAL record a
/// write group makes (`write::MAX_GROUP_BYTES`).
pub(crate) const PROBE_BYTES: usize = 1 << 20;

/// Set while the disk is full (see the module docs). Lives in `DbState::no_space`.
#[derive(Debug)]
pub(crate) struct NoSpace {
    /// The error that found the disk full.
    pub cause: Arc<Error>,
    /// When the state began.
    since: Instant,
    /// When the next automatic resume attempt is due.
    pub next_attempt: Instant,
    /// Failed resume attempts so far (the backoff's exponent).
    attempts: u32,
}

impl NoSpace {
    /// The refusal every write gets meanwhile.
    pub fn refusal(&self) -> Error {
        Error::NoSpace(Arc::clone(&self.cause))
    }
}

/// Moves the database to the no-space state because of `e` (a retryable full-disk
/// error, [`Error::is_no_space`]), unless it is in it already or poisoned, and returns
/// what the caller reports: `NoSpace` carrying the first cause, or `Poisoned`.
/// Requires: the `state` lock not held.
pub(crate) fn enter(inner: &DbInner, e: Error) -> Error {
    let mut st = inner.state.lock();
    if let Err(poisoned) = st.check_bg_error() {
        return poisoned;
    }
    let refusal = match &st.no_space {
        Some(ns) => ns.refusal(),
        None => {
            let cause = match e {
                Error::NoSpace(cause) => cause,
                other => Arc::new(other),
            };
            let now = Instant::now();
            let ns = NoSpace {
                cause,
                since: now,
                next_attempt: now + FIRST_RETRY,
                attempts: 0,
            };
            let refusal = ns.refusal();
            st.no_space = Some(ns);
            Statistics::add(&inner.stats.local().no_space_errors, 1);
            inner
                .events
                .background_error(&refusal, BackgroundErrorState::NoSpace);
            refusal
        }
    };
    drop(st);
    // Stalled writers and waiters see the state; the flush thread schedules the
    // resume attempt.
    inner.done_cv.notify_all();
    inner.bg_cv.notify_all();
    refusal
}

/// One resume attempt (see the module docs): `Ok` if the database takes writes
/// (it was not in the state, or the probe succeeded and the state is cleared).
///
/// # Errors
/// `NoSpace` if the disk is still full (the next attempt is scheduled with backoff);
/// `Poisoned` for a poisoned database.
pub(crate) fn resume(inner: &DbInner) -> Result<()> {
    let _turn = inner.resuming.lock();
    {
        let st = inner.state.lock();
        st.check_bg_error()?;
        if st.no_space.is_none() {
            return Ok(());
        }
    }
    Statistics::add(&inner.stats.local().no_space_resume_attempts, 1);
    let probed = probe(inner);
    let mut st = inner.state.lock();
    st.check_bg_error()?;
    let Some(ns) = st.no_space.as_mut() else {
        return Ok(());
    };
    if let Err(e) = probed {
        ns.attempts = ns.attempts.saturating_add(1);
        let delay = FIRST_RETRY
            .saturating_mul(1 << ns.attempts.min(16))
            .min(MAX_RETRY);
        ns.next_attempt = Instant::now() + delay;
        // The probe's own error names the directory that is still full.
        return Err(Error::NoSpace(Arc::new(e)));
    }
    let took = ns.since.elapsed();
    let cause = Arc::clone(&ns.cause);
    st.no_space = None;
    drop(st);
    let stats = inner.stats.local();
    Statistics::add(&stats.no_space_resumes, 1);
    Statistics::add(
        &stats.no_space_micros,
        u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
    );
    inner.events.recovered(&cause, took);
    inner.done_cv.notify_all();
    inner.bg_cv.notify_all();
    Ok(())
}

/// Writes, fsyncs and removes a [`PROBE_BYTES`] file in every directory the database
/// writes. Requires: the `state` lock not held.
///
/// # Errors
/// The first I/O error (the probe file is removed, best effort, either way).
fn probe(inner: &DbInner) -> Result<()> {
    let bytes = vec![0u8; PROBE_BYTES];
    for dir in inner.versions.dirs().distinct() {
        let path = dir.join(filename::NO_SPACE_PROBE);
        let written = inner.fs.create(&path).and_then(|mut f| {
            f.append(&bytes)?;
            f.sync()
        });
        // A leftover (a crash, a failed removal) is a `.dbtmp` file: an open removes it.
        let removed = inner.fs.remove(&path);
        written?;
        removed?;
    }
    Ok(())
}
