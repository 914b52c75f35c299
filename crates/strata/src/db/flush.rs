//! Flush: writes the oldest immutable memtable to one L0 table, as a plan.
//!
//! Ordering that keeps acknowledged writes: table written and fsynced → directory
//! fsynced (the executor) → MANIFEST edit (new file + new `log_number`) fsynced (the
//! version set) → memtable removed from the read view in the same step that publishes
//! the new version → WAL queued as obsolete and deleted afterwards. A crash between any
//! two steps leaves either the WAL (replayed) or the table (named by the MANIFEST).

use super::{jobs, DbInner};
use crate::compaction::{Plan, Reason};
use crate::error::Result;
use crate::version::file_ref::Obsolete;
use std::sync::Arc;

/// Flushes the oldest immutable memtable, if any. Returns false if there was none.
/// Requires: called only by the flush thread (one flush at a time keeps L0 in
/// sequence order).
///
/// # Errors
/// `Poisoned` with the cause if writing the table or the MANIFEST failed.
pub(crate) fn flush_oldest(inner: &DbInner) -> Result<bool> {
    let (mem, flushed_log, next_log) = {
        let mut st = inner.state.lock();
        let Some(oldest) = st.imm.first() else {
            return Ok(false);
        };
        let mem = Arc::clone(&oldest.mem);
        let flushed_log = oldest.log_number;
        let next_log = st
            .imm
            .get(1)
            .map(|m| m.log_number)
            .unwrap_or(st.mem.log_number);
        st.flush_running = true;
        (mem, flushed_log, next_log)
    };
    let l0_path = inner
        .placement
        .path_for_level(&inner.versions.current(), &inner.opts, 0);
    let plan = Plan::flush(&inner.opts, mem, l0_path, Some(next_log), Reason::Flush);
    let result = jobs::run(inner, &plan, |st| {
        if !st.imm.is_empty() {
            st.imm.remove(0);
        }
        st.flush_running = false;
    });
    match result {
        Ok(()) => {
            inner.versions.obsolete().push(Obsolete::Wal(flushed_log));
            Ok(true)
        }
        Err(e) => {
            inner.state.lock().flush_running = false;
            inner.done_cv.notify_all();
            Err(e)
        }
    }
}
