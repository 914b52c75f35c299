//! Background work: one flush thread and `max_background_jobs - 1` compaction threads,
//! plus the waits that callers (`flush`, `compact_range`, stalled writers) block on.
//!
//! Policies are pure: `compaction::picker` looks at the current version and the set of
//! busy files and returns a plan; [`run_compaction`] is the one executor of plans. The
//! flush thread is separate so a long compaction never delays a flush (which would
//! stall writers on a full memtable).

use super::files::{delete_obsolete, log_and_apply, new_output_file};
use super::flush::flush_oldest;
use super::{poison, DbInner};
use crate::compaction::aligned::{CountingIter, OverlapCounter};
use crate::compaction::gc::VersionGc;
use crate::compaction::job::write_tables;
use crate::compaction::partitioner;
use crate::compaction::picker::{self, CompactionPlan};
use crate::error::{Error, Result};
use crate::iter::{InternalIterator, MergingIterator};
use crate::sst::TableOptions;
use crate::stats::Statistics;
use crate::version::edit::VersionEdit;
use crate::version::FileMetaData;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Starts the background threads.
pub(crate) fn start(inner: &Arc<DbInner>) -> Result<Vec<JoinHandle<()>>> {
    let mut threads = Vec::new();
    let spawn = |name: String, f: fn(&DbInner)| {
        let inner = Arc::clone(inner);
        std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || f(&inner))
            .map_err(|e| Error::io("spawn", name, e))
    };
    threads.push(spawn("strata-flush".into(), flush_loop)?);
    for i in 1..inner.opts.max_background_jobs {
        threads.push(spawn(format!("strata-compact-{i}"), compaction_loop)?);
    }
    Ok(threads)
}

fn flush_loop(inner: &DbInner) {
    loop {
        {
            let mut st = inner.state.lock();
            while !st.shutting_down && (st.imm.is_empty() || st.bg_error.is_some()) {
                inner.bg_cv.wait(&mut st);
            }
            if st.shutting_down {
                return;
            }
        }
        if flush_oldest(inner).is_ok() {
            delete_obsolete(inner);
        }
    }
}

fn compaction_loop(inner: &DbInner) {
    loop {
        let plan = {
            let mut st = inner.state.lock();
            loop {
                if st.shutting_down {
                    return;
                }
                if st.bg_error.is_none() && st.manual_waiting == 0 {
                    if let Some(plan) = picker::pick(&st.version, &inner.opts, &st.busy) {
                        mark_busy(&mut st, &plan);
                        break plan;
                    }
                }
                inner.bg_cv.wait(&mut st);
            }
        };
        let _ = run_compaction(inner, &plan);
        finish_plan(inner, &plan);
        delete_obsolete(inner);
    }
}

fn mark_busy(st: &mut super::state::DbState, plan: &CompactionPlan) {
    st.busy.add_plan(plan);
    st.compactions_running += 1;
}

fn finish_plan(inner: &DbInner, plan: &CompactionPlan) {
    let mut st = inner.state.lock();
    st.busy.remove_plan(plan);
    st.compactions_running -= 1;
    drop(st);
    inner.done_cv.notify_all();
    inner.bg_cv.notify_all();
}

/// Executes one compaction plan: merge inputs, drop what no reader can see, write the
/// outputs, install the edit. Requires: the plan's files are marked busy.
fn run_compaction(inner: &DbInner, plan: &CompactionPlan) -> Result<()> {
    let result = compact(inner, plan);
    if let Err(e) = &result {
        if !matches!(e, Error::Poisoned(_)) {
            return Err(poison(inner, e.duplicate()));
        }
    }
    result
}

fn compact(inner: &DbInner, plan: &CompactionPlan) -> Result<()> {
    if plan.output_level_inputs.is_empty() && disjoint(&plan.inputs) {
        // Trivial move: input files that overlap nothing below and no other input (one
        // file, or L0 files from a sequential load) move down by metadata only. Their
        // entries stay as they are: GC would only drop versions no snapshot needs, at
        // the cost of rewriting every byte.
        let mut edit = VersionEdit::default();
        for f in &plan.inputs {
            edit.deleted_files.push((plan.level, f.number));
            edit.new_files
                .push((plan.output_level, FileMetaData::clone(f)));
        }
        log_and_apply(inner, edit)?;
        Statistics::add(&inner.stats.trivial_moves, plan.inputs.len() as u64);
        return Ok(());
    }
    let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
    let mut bytes_read = 0;
    let mut upper_bytes = 0;
    let counter = Arc::new(OverlapCounter::default());
    let upper_range = plan
        .inputs
        .iter()
        .map(|f| f.smallest_user_key())
        .min()
        .zip(plan.inputs.iter().map(|f| f.largest_user_key()).max())
        .map(|(lo, hi)| (lo.to_vec(), hi.to_vec()));
    for f in &plan.inputs {
        let it = inner.table_cache.get(f)?.iter_no_fill();
        children.push(Box::new(CountingIter::new(it, Arc::clone(&counter), None)));
        upper_bytes += f.size;
    }
    for f in &plan.output_level_inputs {
        let it = inner.table_cache.get(f)?.iter_no_fill();
        children.push(Box::new(CountingIter::new(
            it,
            Arc::clone(&counter),
            upper_range.clone(),
        )));
        bytes_read += f.size;
    }
    bytes_read += upper_bytes;
    let mut input = MergingIterator::new(children);
    let mut gc = VersionGc::new(inner.snapshots.sequences(), plan.bottommost);
    let mut part = partitioner::for_plan(&inner.opts, plan);
    let mut numbers = Vec::new();
    let mut new_file = || new_output_file(inner, &mut numbers);
    let outputs = write_tables(
        &mut input,
        &mut gc,
        part.as_mut(),
        &mut new_file,
        &TableOptions::for_level(&inner.opts, plan.output_level),
    );
    let outputs = match outputs {
        Ok(o) => o,
        Err(e) => {
            release_pending(inner, &numbers);
            return Err(e);
        }
    };
    let result = inner.fs.sync_dir(&inner.dir).and_then(|()| {
        let mut edit = VersionEdit::default();
        for f in plan.inputs.iter() {
            edit.deleted_files.push((plan.level, f.number));
        }
        for f in plan.output_level_inputs.iter() {
            edit.deleted_files.push((plan.output_level, f.number));
        }
        let written: u64 = outputs.iter().map(|f| f.size).sum();
        edit.new_files = outputs
            .into_iter()
            .map(|f| (plan.output_level, f))
            .collect();
        log_and_apply(inner, edit).map(|()| written)
    });
    release_pending(inner, &numbers);
    let written = result?;
    Statistics::add(&inner.stats.compaction_bytes_read, bytes_read);
    Statistics::add(
        &inner.stats.compaction_input_entry_bytes,
        counter.input_bytes.load(Ordering::Relaxed),
    );
    Statistics::add(
        &inner.stats.compaction_false_overlap_bytes,
        counter.false_overlap_bytes.load(Ordering::Relaxed),
    );
    Statistics::add(&inner.stats.compaction_bytes_written, written);
    let mut st = inner.state.lock();
    if let Some(l) = st.level_stats.get_mut(plan.output_level) {
        l.read_bytes += bytes_read;
        l.read_bytes_from_upper += upper_bytes;
        l.write_bytes += written;
        l.count += 1;
    }
    Ok(())
}

/// True iff the files' user-key ranges are pairwise disjoint.
fn disjoint(files: &[Arc<FileMetaData>]) -> bool {
    let mut sorted: Vec<&Arc<FileMetaData>> = files.iter().collect();
    sorted.sort_by(|a, b| a.smallest_user_key().cmp(b.smallest_user_key()));
    sorted
        .windows(2)
        .all(|w| w[0].largest_user_key() < w[1].smallest_user_key())
}

fn release_pending(inner: &DbInner, numbers: &[u64]) {
    let mut st = inner.state.lock();
    for n in numbers {
        st.pending_outputs.remove(n);
    }
}

/// Waits until every immutable memtable is flushed.
pub(crate) fn wait_for_flushes(inner: &DbInner) -> Result<()> {
    let mut st = inner.state.lock();
    loop {
        st.check_bg_error()?;
        if st.imm.is_empty() && !st.flush_running {
            return Ok(());
        }
        inner.bg_cv.notify_all();
        inner.done_cv.wait_for(&mut st, Duration::from_millis(50));
    }
}

/// Waits until nothing is flushing, compacting, or waiting to compact.
pub(crate) fn wait_idle(inner: &DbInner) -> Result<()> {
    let mut st = inner.state.lock();
    loop {
        st.check_bg_error()?;
        let idle = st.imm.is_empty()
            && !st.flush_running
            && st.compactions_running == 0
            && picker::pick(&st.version, &inner.opts, &st.busy).is_none();
        if idle {
            return Ok(());
        }
        inner.bg_cv.notify_all();
        inner.done_cv.wait_for(&mut st, Duration::from_millis(50));
    }
}

/// Manual compaction of `[begin, end]` down to the deepest level holding data, one
/// level at a time, in the caller's thread.
pub(crate) fn compact_range(
    inner: &DbInner,
    begin: Option<&[u8]>,
    end: Option<&[u8]>,
) -> Result<()> {
    let deepest = {
        let st = inner.state.lock();
        (0..st.version.num_levels())
            .rev()
            .find(|&l| !st.version.files(l).is_empty())
            .unwrap_or(0)
            .max(1)
    };
    inner.state.lock().manual_waiting += 1;
    let result = (|| {
        for level in 0..deepest {
            loop {
                let plan = {
                    let mut st = inner.state.lock();
                    st.check_bg_error()?;
                    match picker::pick_manual(&st.version, &inner.opts, level, begin, end, &st.busy)
                    {
                        Some(p) => {
                            mark_busy(&mut st, &p);
                            Some(p)
                        }
                        None if st.version.overlapping_files(level, begin, end).is_empty() => None,
                        None => {
                            // Files in range are being compacted: wait and retry.
                            inner.done_cv.wait_for(&mut st, Duration::from_millis(50));
                            continue;
                        }
                    }
                };
                let Some(plan) = plan else { break };
                let r = run_compaction(inner, &plan);
                finish_plan(inner, &plan);
                r?;
                break;
            }
        }
        Ok(())
    })();
    inner.state.lock().manual_waiting -= 1;
    inner.bg_cv.notify_all();
    delete_obsolete(inner);
    result
}
