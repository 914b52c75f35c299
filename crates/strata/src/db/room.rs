//! Room for compactions (RocksDB's `SstFileManager::EnoughRoomForCompaction`): a
//! compaction starts only where its output fits beside what running compactions have
//! reserved and the room flushes need, so a nearly full disk defers compactions
//! instead of letting one fill it (which would refuse every write until space is freed,
//! docs/ARCHITECTURE.md §7.8).
//!
//! The estimate of a job's output is the bytes of its input tables: a rewrite writes
//! at most what it reads, except where a level's compression differs (then the
//! estimate may be short, and a job can still meet a full disk, which the no-space
//! state handles). The room kept for flushes is what every family's memtables hold
//! now, so the data waiting to be flushed still fits once the compaction has taken its
//! share (a fixed figure such as the memtables' limits would, with 64 MiB memtables
//! on a small disk, defer every compaction for good). A file system that cannot tell
//! its free space (`FileSystem::available_space` is `None`) reserves nothing.
//!
//! A deferred compaction is `Error::NoSpace` caused by an `Io` error of op `stat` on
//! the output directory, with a `StorageFull` cause naming the bytes: the scheduler
//! backs off and picks again (the database is not put in the no-space state, so it
//! keeps taking writes), and a writer stalled behind compactions is refused with that
//! error: free space, and the database resumes by itself.

use super::DbInner;
use crate::compaction::plan::Input;
use crate::compaction::{Action, Plan};
use crate::error::{Error, IoOp, Result};
use crate::stats::Statistics;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Bytes reserved by the compactions running now, by data path (each job reserves
/// its expected output on each path it writes to).
#[derive(Default)]
pub(crate) struct Reservations(Mutex<BTreeMap<u32, u64>>);

/// One job's reservation, returned when dropped.
pub(crate) struct Reserved<'a> {
    pool: &'a Reservations,
    path_ids: Vec<u32>,
    bytes: u64,
}

impl Drop for Reserved<'_> {
    fn drop(&mut self) {
        let mut reserved = self.pool.0.lock();
        for id in &self.path_ids {
            if let Some(r) = reserved.get_mut(id) {
                *r = r.saturating_sub(self.bytes);
            }
        }
    }
}

/// The bytes `plan` is expected to write: its input tables' bytes for a rewrite of
/// tables, 0 for anything that writes no table data (moves, drops, virtual tables,
/// flushes: a flush is what the room is kept for).
fn expected_output(plan: &Plan) -> u64 {
    if plan.action != Action::Rewrite || plan.reason.is_flush() {
        return 0;
    }
    plan.inputs
        .iter()
        .map(|input| match input {
            Input::Files { files, .. } => files.iter().map(|f| f.size).sum(),
            Input::Memtable(_) => 0,
        })
        .sum()
}

/// Reserves room for `plan` (a compaction) on each directory its output
/// streams write to, or refuses it. Requires: no database lock held (this asks the
/// file system; this takes the `state` lock briefly).
///
/// # Errors
/// `NoSpace` (an `Io` cause of op `stat`, `StorageFull`, naming the bytes) if a
/// directory lacks the room, counted in `compactions_deferred_for_space`; the file
/// system's error asking for its free space.
pub(crate) fn reserve<'a>(inner: &'a DbInner, plan: &Plan) -> Result<Option<Reserved<'a>>> {
    let needed = expected_output(plan);
    if needed == 0 {
        return Ok(None);
    }
    let kept: u64 = {
        let st = inner.state.lock();
        st.families
            .values()
            .flat_map(|f| std::iter::once(&f.mem).chain(f.imm.iter()))
            .map(|m| m.mem.approximate_memory_usage() as u64)
            .sum()
    };
    let mut path_ids: Vec<u32> = plan.outputs.iter().map(|o| o.path_id).collect();
    path_ids.sort_unstable();
    path_ids.dedup();
    let pool = &inner.reservations;
    // Held across the check and the reservation, so two jobs cannot both take the
    // last room. (Paths on one file system are checked apart: each sees the others'
    // jobs only through the space their writes have taken so far.)
    let mut reserved = pool.0.lock();
    for &id in &path_ids {
        let dir = inner.versions.dir(id)?;
        let Some(available) = inner.fs.available_space(dir)? else {
            continue;
        };
        let held = reserved.get(&id).copied().unwrap_or(0);
        let wanted = needed.saturating_add(held).saturating_add(kept);
        if available < wanted {
            Statistics::add(&inner.stats.local().compactions_deferred_for_space, 1);
            return Err(Error::NoSpace(Arc::new(Error::io(
                IoOp::Stat,
                dir,
                std::io::Error::new(
                    std::io::ErrorKind::StorageFull,
                    format!(
                        "not enough free space to start a compaction: it may write \
                         {needed} bytes, running compactions hold {held} and the \
                         memtables to flush {kept}, {available} are free"
                    ),
                ),
            ))));
        }
    }
    for &id in &path_ids {
        let r = reserved.entry(id).or_insert(0);
        *r = r.saturating_add(needed);
    }
    Ok(Some(Reserved {
        pool,
        path_ids,
        bytes: needed,
    }))
}
