//! Background work: one flush thread and `max_background_jobs - 1` compaction threads,
//! plus the waits that callers (`flush`, `compact_range`, stalled writers) block on.
//!
//! Policies are pure: `compaction::picker` looks at the current version and the set of
//! busy files and returns a plan; `db::jobs::run` executes and installs it. The flush
//! thread is separate so a long compaction never delays a flush (which would stall
//! writers on a full memtable).
//!
//! # Picking against a moving version
//! The picker runs under the `state` lock (which guards [`Busy`]) on the version set's
//! current version, which a concurrent job may replace at any moment without that
//! lock. That is safe because a job's files stay in `Busy` until after its version is
//! installed ([`finish_plan`] runs after `jobs::run` returns): a pick that sees the old
//! version finds the finishing job's inputs and output range still busy and cannot
//! conflict with it, and a pick after `finish_plan` loads the new version (stored
//! before the job's `state` lock was released). A flush only adds L0 files; a plan
//! missing the newest one leaves newer data above older, which is the L0 order. So
//! does a table of copies written up by the flush thread (`flush::flush_copies`),
//! whose sequence numbers are old: none of its keys has a version in L0 or the levels
//! it was checked against when it is installed, and every later version reaches L0
//! in a later flush with larger sequence numbers (ARCHITECTURE §6.14).
//!
//! Every pick also gets a `Coverage` (`compaction::covered`): the range tombstones of
//! the families' files, read through the table cache *before* the `state` lock is
//! taken (opening a table is I/O; tombstones of a file never change, so a set read
//! from an older version only misses files), and the live snapshots, sampled under
//! the lock *after* the version is loaded (a snapshot taken later reads above every
//! tombstone of that version).
//!
//! [`Busy`]: crate::compaction::picker::Busy

use super::family::Family;
use super::flush::{flush_copies, flush_oldest};
use super::obsolete::delete_obsolete;
use super::state::DbState;
use super::tree_hooks::TreeHooks;
use super::{jobs, room, DbInner};
use crate::compaction::picker::Busy;
use crate::compaction::{requests, Action, Coverage, Plan, Requests, Tombstones};
use crate::error::{Error, IoOp, Result};
use crate::stats::purpose::IoPurpose;
use crate::version::file_meta::unix_now;
use crate::version::Version;
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
            .map_err(|e| Error::io(IoOp::Spawn, name, e))
    };
    threads.push(spawn("strata-flush".into(), flush_loop)?);
    for i in 1..inner.opts.max_background_jobs {
        threads.push(spawn(format!("strata-compact-{i}"), compaction_loop)?);
    }
    #[cfg(feature = "metrics")]
    threads.push(spawn("strata-metrics".into(), super::export::publish_loop)?);
    Ok(threads)
}

/// What the flush thread does next.
enum FlushWork {
    /// Flush the oldest immutable memtable.
    Flush,
    /// Try to leave the no-space state (`no_space::resume`).
    Resume,
    /// Write up the copies a family's tree hooks hold (`flush::flush_copies`).
    Copies,
}

fn flush_loop(inner: &DbInner) {
    let mut backoff = Backoff::default();
    loop {
        let work = {
            let mut st = inner.state.lock();
            loop {
                if st.shutting_down {
                    return;
                }
                if st.bg_error.is_none() {
                    if let Some(due) = st.no_space.as_ref().map(|ns| ns.next_attempt) {
                        if std::time::Instant::now() >= due {
                            break FlushWork::Resume;
                        }
                        inner.bg_cv.wait_until(&mut st, due);
                        continue;
                    }
                    if st.has_imm() {
                        break FlushWork::Flush;
                    }
                    if st.families.values().any(|f| {
                        f.family
                            .hooks
                            .as_ref()
                            .is_some_and(|h| h.has_copies(&f.family.super_version.load().version))
                    }) {
                        break FlushWork::Copies;
                    }
                }
                inner.bg_cv.wait(&mut st);
            }
        };
        if let FlushWork::Resume = work {
            // Failure schedules the next attempt; success wakes everyone.
            let _ = super::no_space::resume(inner);
            continue;
        }
        let result = match work {
            FlushWork::Copies => flush_copies(inner).map(|_| ()),
            _ => flush_oldest(inner).map(|_| ()),
        };
        delete_obsolete(inner);
        release_freed_heap(inner);
        backoff.after(inner, &result, |f| f.flushes += 1);
    }
}

/// Exponential backoff after retryable job failures (see `Error::is_retryable`): the
/// thread waits 50 ms, 100 ms, ... up to 5 s before its next job, and starts over after
/// a success. A fatal failure poisons the database instead, which stops new work.
#[derive(Default)]
struct Backoff {
    failures: u32,
}

impl Backoff {
    const FIRST: Duration = Duration::from_millis(50);
    const MAX: Duration = Duration::from_secs(5);
    /// The longest wait of a compaction deferred for want of room: asking the file
    /// system for its free space and picking again is cheap, and nothing tells the
    /// engine when another process frees space, so a deferral polls instead of
    /// backing off to [`Backoff::MAX`] (which made it start up to 5 s late).
    const DEFERRAL_POLL: Duration = Duration::from_millis(250);

    /// If `result` is a retryable failure: records it (`count` bumps the right
    /// counter of [`RetryableFailures`], so waiters learn of it) and waits, waking
    /// early only for shutdown. Requires: the `state` lock not held.
    ///
    /// [`RetryableFailures`]: super::state::RetryableFailures
    fn after(
        &mut self,
        inner: &DbInner,
        result: &Result<()>,
        count: impl FnOnce(&mut super::state::RetryableFailures),
    ) {
        match result {
            // The no-space state schedules the retry (no job is picked until a resume
            // attempt finds space) and tells waiters itself (`db::no_space`): counted
            // here too, a waiter that began after the resume would be refused for a
            // state that is over.
            Err(e) if e.is_no_space() => {}
            Err(e) if e.is_retryable() => self.wait(inner, |f| {
                count(f);
                f.last = Some(e.duplicate());
            }),
            Err(_) => {}
            Ok(()) => self.failures = 0,
        }
    }

    /// Records a failure (`record` counts it and keeps its error, so waiters learn of
    /// it) and waits its turn of the backoff, waking early only for shutdown.
    /// Requires: the `state` lock not held.
    fn wait(&mut self, inner: &DbInner, record: impl FnOnce(&mut super::state::RetryableFailures)) {
        self.wait_at_most(inner, Self::MAX, record);
    }

    /// [`Backoff::wait`] with the wait capped at `max`.
    fn wait_at_most(
        &mut self,
        inner: &DbInner,
        max: Duration,
        record: impl FnOnce(&mut super::state::RetryableFailures),
    ) {
        let delay = Self::FIRST
            .saturating_mul(1 << self.failures.min(16))
            .min(max);
        self.failures = self.failures.saturating_add(1);
        let deadline = std::time::Instant::now() + delay;
        let mut st = inner.state.lock();
        record(&mut st.retryable_failures);
        inner.done_cv.notify_all();
        while !st.shutting_down && !inner.bg_cv.wait_until(&mut st, deadline).timed_out() {}
    }
}

fn compaction_loop(inner: &DbInner) {
    let mut backoff = Backoff::default();
    // Families take turns: the search for work starts after the family of the last
    // job, so a family that always has work cannot starve the others.
    let mut after = 0u32;
    loop {
        let (family, plan) = loop {
            let tombstones = gather_tombstones(inner);
            let mut st = inner.state.lock();
            if st.shutting_down {
                return;
            }
            if st.jobs_allowed() && st.manual_waiting == 0 {
                if let Some(picked) = pick_any(inner, &mut st, after, &tombstones) {
                    break picked;
                }
            }
            // Nothing else wakes the loop when a table comes of age in a quiet tree.
            match next_due(&st) {
                Some(at) => {
                    let wait = Duration::from_secs(at.saturating_sub(unix_now()).max(1));
                    inner.bg_cv.wait_for(&mut st, wait);
                }
                None => inner.bg_cv.wait(&mut st),
            }
        };
        after = family.id();
        let result = room::reserve(inner, &plan).map(|room| {
            let result = jobs::run(inner, &family, &plan, |_| {});
            drop(room);
            result
        });
        finish_plan(inner, &family, &plan);
        delete_obsolete(inner);
        if result.is_ok() {
            // A job ran (a deferred one allocated nothing).
            release_freed_heap(inner);
        }
        match result {
            Ok(result) => backoff.after(inner, &result, |f| f.compactions += 1),
            // Not started for want of room: picked again after the backoff (the
            // database is not in the no-space state, which would schedule it).
            Err(deferred) => backoff.wait_at_most(inner, Backoff::DEFERRAL_POLL, |f| {
                f.deferred += 1;
                f.last_deferred = Some(deferred);
            }),
        }
    }
}

/// With a memory budget, after a job: the heap the job freed goes back to the system
/// (`memory_budget::release_freed_heap`). Requires: no lock held.
fn release_freed_heap(inner: &DbInner) {
    if inner.memory_budget.is_some() {
        crate::memory_budget::release_freed_heap(&inner.stats);
    }
}

/// When (seconds since the Unix epoch) the first table of any family becomes due for
/// periodic compaction (`compaction::requests::next_due`), or `None`.
fn next_due(st: &DbState) -> Option<u64> {
    st.families
        .values()
        .filter_map(|f| requests::next_due(&f.family.versions.current(), &f.family.opts))
        .min()
}

/// The range tombstones of every family's files, for the drop rules of
/// `compaction::covered`. Requires: the `state` lock not held (this may open tables).
fn gather_tombstones(inner: &DbInner) -> Tombstones {
    // Opening a table to read its tombstones is compaction work, on whatever thread.
    let _purpose = IoPurpose::Compaction.enter();
    let versions: Vec<_> = inner
        .versions
        .families()
        .iter()
        .map(|f| f.current())
        .collect();
    Tombstones::gather(versions.iter().map(|v| v.as_ref()), &inner.table_cache)
}

/// The next automatic compaction of any family, searched from the family after
/// `after` round the ids, registered as running. Requires: `st` is the `state` lock.
fn pick_any(
    inner: &DbInner,
    st: &mut DbState,
    after: u32,
    tombstones: &Tombstones,
) -> Option<(Arc<Family>, Plan)> {
    let ids: Vec<u32> = st.families.keys().copied().collect();
    let start = ids.iter().position(|&id| id > after).unwrap_or(0);
    let (before, from) = ids.split_at(start);
    for &id in from.iter().chain(before) {
        let Some(f) = st.families.get(&id) else {
            continue;
        };
        let family = Arc::clone(&f.family);
        let version = family.versions.current();
        // Sampled after the version: see `compaction::covered`.
        let snapshots = inner.snapshots.sequences();
        let coverage = Coverage::new(&snapshots, tombstones);
        let requests = Requests::sample(&version, &family.opts, unix_now());
        let placement = inner.placement.as_ref();
        if let Some(mut plan) = family.policy.pick(
            &version,
            &family.opts,
            placement,
            &f.busy,
            &coverage,
            &requests,
        ) {
            if let Some(h) = &family.hooks {
                plan = adjusted(h.as_ref(), plan, &version, &f.busy);
            }
            mark_busy(st, id, &mut plan);
            return Some((family, plan));
        }
    }
    None
}

/// `plan` as the family's tree hooks adjust it (`db::tree_hooks`), or `plan` itself if
/// the adjusted plan would conflict with a running job.
fn adjusted(hooks: &dyn TreeHooks, plan: Plan, version: &Version, busy: &Busy) -> Plan {
    let mut adjusted = plan.clone();
    hooks.adjust_plan(&mut adjusted, version, busy);
    if busy.conflicts(&adjusted) {
        plan
    } else {
        adjusted
    }
}

/// Registers `plan` as running in `family`, after showing it
/// to the family's tree hooks (`TreeHooks::registering`). Requires: `st` is the
/// `state` lock.
pub(crate) fn mark_busy(st: &mut DbState, family: u32, plan: &mut Plan) {
    if let Some(f) = st.families.get_mut(&family) {
        if let Some(h) = &f.family.hooks {
            h.registering(plan);
        }
        f.busy.add_plan(plan);
    }
    st.compactions_running += 1;
}

pub(crate) fn finish_plan(inner: &DbInner, family: &Family, plan: &Plan) {
    let mut st = inner.state.lock();
    if let Some(f) = st.families.get_mut(&family.id()) {
        f.busy.remove_plan(plan);
    }
    st.compactions_running -= 1;
    drop(st);
    inner.done_cv.notify_all();
    inner.bg_cv.notify_all();
}

/// Waits until every immutable memtable is flushed.
///
/// # Errors
/// The poison error; or a retryable error if a flush attempt failed while waiting
/// (the database stays healthy and keeps retrying in the background; the caller may
/// wait again). An error is returned only once no flush is running, so the failed
/// job has ended: its completion event is queued before anything the caller does
/// next, such as a `resume` and its event.
pub(crate) fn wait_for_flushes(inner: &DbInner) -> Result<()> {
    let mut st = inner.state.lock();
    let failures = st.retryable_failures.flushes;
    loop {
        let failed = st
            .check_writes()
            .and_then(|()| st.retryable_since(failures, u64::MAX));
        if !st.flush_running {
            failed?;
            if !st.has_imm() {
                return Ok(());
            }
        }
        inner.bg_cv.notify_all();
        inner.done_cv.wait_for(&mut st, Duration::from_millis(50));
    }
}

/// Waits until nothing is flushing, compacting, or waiting to compact.
///
/// # Errors
/// The poison error; or a retryable error if a flush or compaction attempt failed
/// while waiting (as [`wait_for_flushes`]).
pub(crate) fn wait_idle(inner: &DbInner) -> Result<()> {
    let (flushes, compactions, deferred) = {
        let st = inner.state.lock();
        (
            st.retryable_failures.flushes,
            st.retryable_failures.compactions,
            st.retryable_failures.deferred,
        )
    };
    loop {
        let tombstones = gather_tombstones(inner);
        let mut st = inner.state.lock();
        // As in `wait_for_flushes`: an error only once no job runs, so the failed
        // job's completion event is queued before the caller's next step.
        let failed = st
            .check_writes()
            .and_then(|()| st.retryable_since(flushes, compactions))
            .and_then(|()| st.deferred_since(deferred));
        if failed.is_err() && !st.flush_running && st.compactions_running == 0 {
            return failed;
        }
        let idle = !st.has_imm()
            && !st.flush_running
            && st.compactions_running == 0
            && inner.scan_tees.pending() == 0
            && st.families.values().all(|f| {
                let version = f.family.versions.current();
                let snapshots = inner.snapshots.sequences();
                f.family
                    .policy
                    .pick(
                        &version,
                        &f.family.opts,
                        inner.placement.as_ref(),
                        &f.busy,
                        &Coverage::new(&snapshots, &tombstones),
                        &Requests::sample(&version, &f.family.opts, unix_now()),
                    )
                    .is_none()
            });
        if idle {
            return Ok(());
        }
        inner.bg_cv.notify_all();
        inner.done_cv.wait_for(&mut st, Duration::from_millis(50));
    }
}

/// Manual compaction of `[begin, end]` of `family` down to the deepest level holding
/// data, one level at a time, in the caller's thread; then, in that deepest level, the
/// rewrites in place the policy asks for (`CompactionPolicy::pick_manual_in_place`).
/// Each level takes as many plans as the policy needs (one per file below L0), at most
/// one more than the files in range when the level began, so writers adding files
/// meanwhile cannot keep it going. Plans that only drop files (`Action::Drop`) have a
/// budget of their own of the same size: they take no file of the level's step, so
/// they must not use up its budget.
pub(crate) fn compact_range(
    inner: &DbInner,
    family: &Arc<Family>,
    begin: Option<&[u8]>,
    end: Option<&[u8]>,
) -> Result<()> {
    let deepest = {
        let version = family.versions.current();
        version.deepest_nonempty_level().unwrap_or(0).max(1)
    };
    // Tables numbered from here on are this call's own outputs (or newer): the last
    // step rewrites only older ones, so what the levels above brought down, which
    // went through a rewrite already, is not rewritten twice.
    let created_before = inner.versions.next_file_number();
    inner.state.lock().manual_waiting += 1;
    let result = (|| {
        for level in 0..deepest {
            manual_level(inner, family, level, (begin, end), false, |pick| {
                family.policy.pick_manual(
                    pick.version,
                    &family.opts,
                    inner.placement.as_ref(),
                    level,
                    begin,
                    end,
                    pick.busy,
                    pick.coverage,
                )
            })?;
        }
        manual_level(inner, family, deepest, (begin, end), true, |pick| {
            family.policy.pick_manual_in_place(
                pick.version,
                &family.opts,
                inner.placement.as_ref(),
                deepest,
                (begin, end),
                pick.busy,
                created_before,
            )
        })
    })();
    inner.state.lock().manual_waiting -= 1;
    inner.bg_cv.notify_all();
    delete_obsolete(inner);
    result
}

/// What a manual step's policy call sees, under the `state` lock.
struct ManualPick<'a> {
    version: &'a Version,
    busy: &'a Busy,
    coverage: &'a Coverage<'a>,
}

/// Runs the plans `pick` returns for `level` of a manual compaction, within the
/// budgets of [`compact_range`], until no file of `level` is in range (moving down a
/// level) or, `in_place`, until `pick` wants none of the files in range that no job
/// holds; waits and asks again while it returns none and a job of the family runs
/// (with none running, the answer cannot change: the step ends).
fn manual_level(
    inner: &DbInner,
    family: &Arc<Family>,
    level: usize,
    (begin, end): (Option<&[u8]>, Option<&[u8]>),
    in_place: bool,
    pick: impl Fn(&ManualPick<'_>) -> Option<Plan>,
) -> Result<()> {
    let mut budget = family
        .versions
        .current()
        .overlapping_in_runs(level, begin, end)
        .len()
        + 1;
    let mut drop_budget = budget;
    while budget > 0 && drop_budget > 0 {
        // Outside the state lock: it may open tables.
        let tombstones = Tombstones::gather(
            std::iter::once(family.versions.current().as_ref()),
            &inner.table_cache,
        );
        let plan = {
            let mut st = inner.state.lock();
            st.check_writes()?;
            let version = family.versions.current();
            let snapshots = inner.snapshots.sequences();
            let Some(busy) = st.families.get(&family.id()).map(|f| &f.busy) else {
                // Dropped: nothing left to compact.
                return Ok(());
            };
            let coverage = Coverage::new(&snapshots, &tombstones);
            let picked = pick(&ManualPick {
                version: &version,
                busy,
                coverage: &coverage,
            });
            match picked {
                Some(mut p) => {
                    if let Some(h) = &family.hooks {
                        p = adjusted(h.as_ref(), p, &version, busy);
                    }
                    mark_busy(&mut st, family.id(), &mut p);
                    Some(p)
                }
                None if !version.overlaps(level, begin, end) => None,
                // In place, the policy wants none of the files in range that no job
                // holds and no job writes into the range at this level: done (the
                // others are retried below until they are free).
                None if in_place
                    && !version
                        .overlapping_in_runs(level, begin, end)
                        .iter()
                        .any(|f| {
                            busy.is_busy(f)
                                || busy.output_conflict(
                                    level,
                                    f.smallest_user_key(),
                                    f.largest_user_key(),
                                )
                        }) =>
                {
                    None
                }
                // No job of the family runs, so no wait can change the policy's
                // answer: it wants nothing done here (a level that another policy
                // owns, `version::run`), and the step ends instead of waiting forever.
                None if busy.files.is_empty() && busy.output_ranges.is_empty() => None,
                None => {
                    // Files in range are being compacted: wait and retry.
                    inner.done_cv.wait_for(&mut st, Duration::from_millis(50));
                    continue;
                }
            }
        };
        let Some(plan) = plan else { break };
        // Without room the manual compaction ends with `room::reserve`'s `NoSpace`.
        let r =
            room::reserve(inner, &plan).and_then(|_room| jobs::run(inner, family, &plan, |_| {}));
        finish_plan(inner, family, &plan);
        r?;
        if plan.action == Action::Drop {
            drop_budget -= 1;
        } else {
            budget -= 1;
        }
    }
    Ok(())
}
