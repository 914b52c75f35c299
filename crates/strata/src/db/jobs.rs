//! Running a plan against the open database: execute it, install its edit, account
//! for it.
//!
//! Every flush and compaction goes through [`run`]: the executor
//! (`compaction::executor`) writes the outputs, then the version set logs the edit in
//! the MANIFEST and makes the new version current, and, still in MANIFEST order, the
//! install hook here publishes the new read view together with the caller's own state
//! change (a flush drops the memtable it wrote in the same step, so no reader sees the
//! data twice or not at all).
//!
//! Failure: a retryable executor error (a file that could not be opened or created,
//! see `Error::is_retryable`) abandons the job and is returned as is, for the
//! scheduler to retry after a backoff; a full disk, in the executor or the MANIFEST,
//! also moves the database to the no-space state (`db::no_space`); any other error
//! of the executor or the MANIFEST poisons the database (a failed write or fsync
//! cannot be retried as if it had succeeded). Either way the outputs of a failed job
//! are unreferenced and collected as obsolete, and nothing is installed.

use super::family::{Family, FamilyState};
use super::{events, fail, DbInner};
use crate::compaction::executor::{self, JobContext, Outcome};
use crate::compaction::{Action, Plan, Reason};
use crate::error::Result;
use crate::stats::purpose::IoPurpose;
use crate::stats::Statistics;
use std::time::Instant;

/// Executes `plan` (a plan of `family`) and installs its edit; `on_install` runs on
/// the family's state under the `state` lock in the same step that publishes the new
/// read view.
///
/// A job of a family dropped before its edit is installed is abandoned: `Ok`, nothing
/// installed, its outputs collected as obsolete.
///
/// Requires: neither the `state` lock nor the MANIFEST writer held; for a compaction,
/// the plan is registered in the family's `Busy` (so no other job takes its files).
///
/// # Errors
/// A retryable error as is (the database stays healthy), or `NoSpace` for a full disk
/// (`db::no_space`); otherwise `Poisoned`
/// carrying the cause, if the job or the install failed, or if the database was
/// already poisoned (nothing is installed then).
pub(crate) fn run(
    inner: &DbInner,
    family: &Family,
    plan: &Plan,
    on_install: impl FnOnce(&mut FamilyState),
) -> Result<()> {
    let _span = events::job_span(family, plan);
    let mut job = inner.events.job_begin(&inner.versions, family, plan);
    // The plan's inputs are busy, so they are in the current version until the edit
    // is installed; the executor finds virtual inputs' parents there. The version is
    // released when the executor returns, before the edit is installed.
    let version = family.versions.current();
    let ctx = JobContext {
        fs: inner.fs.as_ref(),
        versions: &inner.versions,
        table_cache: &inner.table_cache,
        snapshots: inner.snapshots.sequences(),
        merge_operator: family.opts.merge_operator.as_deref(),
        compaction_filter: family.opts.compaction_filter_factory.as_deref(),
        version: Some(&version),
    };
    let started = Instant::now();
    let purpose = if plan.reason.is_flush() {
        IoPurpose::Flush
    } else {
        IoPurpose::Compaction
    };
    let executed = {
        let _purpose = purpose.enter();
        executor::execute(plan, &ctx)
    };
    let took = started.elapsed();
    let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
    drop(ctx);
    drop(version);
    let mut outcome = match executed {
        Ok(o) => o,
        Err(e) => {
            // Retryable: nothing was written that an edit could name. Abandon the job
            // (its outputs' references drop, so partial files are collected) and let
            // the scheduler retry after a backoff, or after the disk has space again.
            if e.is_retryable() {
                Statistics::add(&inner.stats.local().background_retries, 1);
            }
            let e = fail(inner, e);
            job.failed(&e);
            return Err(e);
        }
    };
    let edit = std::mem::take(&mut outcome.edit);
    let figures = (outcome.bytes_read, outcome.bytes_written());
    job.executed(&inner.versions, plan, edit.new_files.iter(), figures);
    let added = Added {
        tables: edit.new_files.len() as u64,
        slices: edit
            .new_files
            .iter()
            .map(|(_, f)| f.slices().len() as u64)
            .sum(),
    };
    // A filter changed entries no snapshot could see when the job began; a snapshot
    // taken since may see them, and must not see them change: then the job is
    // abandoned (its outputs are collected) and the policy picks its inputs again.
    let _fence = match outcome.filter_lowest_seq {
        Some(lowest) => match inner.snapshots.fence(lowest) {
            Some(fence) => Some(fence),
            None => {
                Statistics::add(&inner.stats.local().compaction_filter_jobs_abandoned, 1);
                job.abandoned();
                return Ok(());
            }
        },
        None => None,
    };
    let installed = install(inner, family, edit, &outcome.refs, |f| {
        on_install(f);
        account_levels(f, plan, &outcome);
        job.installed();
    });
    if !job.settled(&installed) {
        return installed.map(|_| ());
    }
    account(inner, plan, &outcome, added);
    #[cfg(feature = "metrics")]
    family
        .metrics
        .job_installed(plan.reason.is_flush(), figures, took);
    if !plan.reason.is_flush() {
        Statistics::add(&inner.stats.local().compaction_micros, micros);
    }
    Ok(())
}

/// Installs `edit`, whose new tables `refs` keep alive, in `family`: logs it in the
/// MANIFEST, makes its version current and, under the `state` lock in the same step,
/// runs `on_install` on the family's state and publishes the new read view. Returns
/// false if the family was dropped meanwhile (nothing to install into; the outputs
/// are collected). The install entry of every job, whether the executor made its
/// edit as one job (`run`) or not (several plans' outcomes combined into one edit).
///
/// Requires: neither the `state` lock nor the MANIFEST writer held; the edit's
/// deleted files are claimed in the family's `Busy`, so it still applies.
///
/// # Errors
/// `Poisoned` if the database already was (nothing installed) or if logging the edit
/// failed (it poisons the database); `NoSpace` if the MANIFEST met a full disk (the
/// record was cut back off; see `db::no_space`).
pub(crate) fn install(
    inner: &DbInner,
    family: &Family,
    edit: crate::version::VersionEdit,
    refs: &[std::sync::Arc<crate::version::file_ref::FileRef>],
    on_install: impl FnOnce(&mut FamilyState),
) -> Result<bool> {
    inner.state.lock().check_bg_error()?;
    let installed = inner
        .versions
        .log_and_apply(&family.versions, edit, refs, |version| {
            let mut st = inner.state.lock();
            // Absent only if the family was dropped after the version set took the
            // edit; then no reader of the family's state is left to serve.
            if let Some(f) = st.families.get_mut(&family.id()) {
                on_install(f);
                f.pending_compaction_bytes = family
                    .policy
                    .pending_compaction_bytes(version, &family.opts);
                f.install_super_version(version);
            }
        });
    match installed {
        Ok(_) => {}
        Err(_) if family.versions.is_dropped() => return Ok(false),
        Err(e) => return Err(fail(inner, e)),
    }
    inner.done_cv.notify_all();
    inner.bg_cv.notify_all();
    Ok(true)
}

/// Per-level figures (RocksDB's level table): what each output level wrote; the job's
/// reads count at its deepest output level (a job writing a level it reads from too
/// still reads on behalf of the move down).
pub(crate) fn account_levels(st: &mut FamilyState, plan: &Plan, outcome: &Outcome) {
    if matches!(
        plan.action,
        Action::TrivialMove | Action::Drop | Action::Virtualize
    ) {
        return;
    }
    for (stream, written) in plan.outputs.iter().zip(&outcome.stream_bytes) {
        if let Some(l) = st.level_stats.get_mut(stream.level) {
            l.write_bytes += written;
            l.count += 1;
        }
    }
    if let Some(l) = plan
        .deepest_output_level()
        .and_then(|level| st.level_stats.get_mut(level))
    {
        l.read_bytes += outcome.bytes_read;
        l.read_bytes_from_upper += outcome.bytes_read_upper;
    }
}

/// What a plan's edit added to the version.
struct Added {
    /// Tables (real or virtual).
    tables: u64,
    /// Slices of the virtual ones.
    slices: u64,
}

/// The compaction filter's counters of an installed job.
pub(crate) fn account_filter(stats: &Statistics, outcome: &Outcome) {
    Statistics::add(
        &stats.local().compaction_filter_removed,
        outcome.filter_removed,
    );
    Statistics::add(
        &stats.local().compaction_filter_changed,
        outcome.filter_changed,
    );
    Statistics::add(
        &stats.local().compaction_filter_changes_refused,
        outcome.filter_refused,
    );
}

/// Database-wide counters.
fn account(inner: &DbInner, plan: &Plan, outcome: &Outcome, added: Added) {
    let s = &inner.stats;
    if plan.reason.is_flush() {
        Statistics::add(&s.local().flush_bytes_written, outcome.bytes_written());
        return;
    }
    account_filter(s, outcome);
    if plan.action == Action::Virtualize {
        let deferred = plan
            .input_files()
            .fold(0u64, |acc, (_, f)| acc.saturating_add(f.size));
        Statistics::add(&s.local().virtual_compactions, 1);
        Statistics::add(&s.local().virtual_tables_created, added.tables);
        Statistics::add(&s.local().virtual_slices_created, added.slices);
        Statistics::add(&s.local().virtual_bytes_deferred, deferred);
    }
    let (read, written) = (outcome.bytes_read, outcome.bytes_written());
    match plan.reason {
        Reason::ReadRequested => {
            Statistics::add(&s.local().virtual_merges, 1);
            Statistics::add(&s.local().virtual_merge_bytes_read, read);
            Statistics::add(&s.local().virtual_merge_bytes_written, written);
        }
        Reason::Garbage => {
            Statistics::add(&s.local().virtual_rewrites_for_space, 1);
            Statistics::add(&s.local().virtual_rewrite_bytes_read, read);
            Statistics::add(&s.local().virtual_rewrite_bytes_written, written);
        }
        _ => {}
    }
    Statistics::add(
        &s.local().virtual_slice_bytes_read,
        outcome.slice_bytes_read,
    );
    Statistics::add(&s.local().trivial_moves, outcome.moved_files);
    Statistics::add(
        &s.local().files_dropped_by_range_delete,
        outcome.dropped_files,
    );
    Statistics::add(
        &s.local().bytes_dropped_by_range_delete,
        outcome.dropped_bytes,
    );
    Statistics::add(&s.local().compaction_bytes_read, outcome.bytes_read);
    Statistics::add(&s.local().compaction_bytes_written, outcome.bytes_written());
    Statistics::add(
        &s.local().compaction_input_entry_bytes,
        outcome.input_entry_bytes,
    );
    Statistics::add(
        &s.local().compaction_false_overlap_bytes,
        outcome.false_overlap_bytes,
    );
}
