//! Flush: writes the oldest immutable memtable to one L0 table.
//!
//! Ordering that keeps acknowledged writes: table written and fsynced → directory
//! fsynced → MANIFEST edit (new file + new `log_number`) fsynced → memtable removed from
//! the read view → WAL deleted later by obsolete-file collection. A crash between any
//! two steps leaves either the WAL (replayed) or the table (named by the MANIFEST).

use super::files::{log_and_apply, new_output_file};
use super::write::install_super_version;
use super::{poison, DbInner};
use crate::compaction::gc::VersionGc;
use crate::compaction::job::write_tables;
use crate::compaction::partitioner::FixedSize;
use crate::error::Result;
use crate::sst::TableOptions;
use crate::stats::Statistics;
use crate::version::edit::VersionEdit;
use std::sync::Arc;

/// Flushes the oldest immutable memtable, if any. Returns false if there was none.
/// Requires: called only by the flush thread (one flush at a time keeps L0 in
/// sequence order).
pub(crate) fn flush_oldest(inner: &DbInner) -> Result<bool> {
    let (mem, next_log) = {
        let mut st = inner.state.lock();
        let Some(oldest) = st.imm.first() else {
            return Ok(false);
        };
        let mem = Arc::clone(&oldest.mem);
        let next_log = st
            .imm
            .get(1)
            .map(|m| m.log_number)
            .unwrap_or(st.mem.log_number);
        st.flush_running = true;
        (mem, next_log)
    };
    let result = write_l0(inner, &mem, next_log);
    let mut st = inner.state.lock();
    st.flush_running = false;
    match result {
        Ok((numbers, bytes)) => {
            for n in numbers {
                st.pending_outputs.remove(&n);
            }
            st.imm.remove(0);
            if let Some(l0) = st.level_stats.get_mut(0) {
                l0.write_bytes += bytes;
                l0.count += 1;
            }
            install_super_version(inner, &st);
            drop(st);
            Statistics::add(&inner.stats.flush_bytes_written, bytes);
            inner.done_cv.notify_all();
            inner.bg_cv.notify_all();
            Ok(true)
        }
        Err(e) => {
            drop(st);
            Err(poison(inner, e))
        }
    }
}

fn write_l0(
    inner: &DbInner,
    mem: &Arc<crate::memtable::MemTable>,
    next_log: u64,
) -> Result<(Vec<u64>, u64)> {
    let mut numbers = Vec::new();
    let mut iter = mem.iter();
    let mut gc = VersionGc::new(inner.snapshots.sequences(), false);
    let mut one_file = FixedSize { target: u64::MAX };
    let mut new_file = || new_output_file(inner, &mut numbers);
    let outputs = write_tables(
        &mut iter,
        &mut gc,
        &mut one_file,
        &mut new_file,
        &TableOptions::for_level(&inner.opts, 0),
    )?;
    inner.fs.sync_dir(&inner.dir)?;
    let bytes = outputs.iter().map(|f| f.size).sum();
    let mut edit = VersionEdit {
        log_number: Some(next_log),
        ..Default::default()
    };
    edit.new_files = outputs.into_iter().map(|f| (0, f)).collect();
    log_and_apply(inner, edit)?;
    Ok((numbers, bytes))
}
