//! The write path: group commit, WAL append, memtable insert, ordered publication,
//! memtable switch.
//!
//! # Group commit
//! Problem: every write must reach the WAL (and, with `sync`, the disk) before it is
//! acknowledged, and a reader must never see a batch without every batch sequenced
//! before it, yet an fsync per writer would cap throughput at the disk's sync rate.
//!
//! Naive design and why it fails: a mutex around "append + insert" serializes writers
//! and performs one fsync per sync writer. Instead writers queue; the front writer
//! becomes leader, takes the batches queued behind it (up to ~1 MiB), writes them as
//! one WAL record with at most one fsync, inserts them, then hands each follower its
//! result. Followers wait on a condition variable and never touch the WAL.
//!
//! # Pipelined writes ([`crate::Options::enable_pipelined_write`])
//! Problem: with two writers, groups rarely have more than one member (a writer that
//! arrives while a leader works waits, then leads a group of its own), so a leader that
//! holds the queue through its memtable insert serializes the inserts too. With
//! pipelining the leader gives up leadership as soon as its WAL record is appended: the
//! next leader appends while this group inserts, and the groups' inserts run in parallel
//! (the skiplist takes concurrent inserts). What keeps reads exact is *ordered
//! publication*: a group, once inserted, waits until `last_sequence` reaches the
//! sequence just before its own, then raises it past its own. Entries above
//! `last_sequence` are in the memtable but no read looks at them, so a reader sees a
//! prefix of the commit order, as before.
//!
//! Invariants:
//! 1. At most one *leader* at a time: only the leader assigns sequence numbers, appends
//!    to the WAL and switches memtables. `allocated` (the last assigned sequence) is the
//!    leader's alone.
//! 2. Sequence numbers are assigned in queue order; `last_sequence` is published in
//!    sequence order and only after every entry up to it is in the memtable, so a
//!    reader never sees half a batch or a batch without its predecessors.
//! 3. A memtable is switched out (and so may be flushed) only when no group is still
//!    inserting into it: before a switch the leader *drains*, waiting until
//!    `last_sequence == allocated`. Nothing can start a new group meanwhile: it is the
//!    leader.
//! 4. A writer asking for `sync` is never acknowledged by a group whose WAL bytes were
//!    not fsynced: a non-sync leader does not take sync followers.
//! 5. A failed WAL write or fsync poisons the database; the group's writers all get
//!    the error and no later write is accepted (the WAL may hold a partial record).
//!    The exception is a full disk during the append: the record is cut back off
//!    (the WAL ends where it ended before the group), the group's sequence numbers
//!    are not consumed, and the database moves to the no-space state, refusing
//!    writes until space is free (`db::no_space`). A failed fsync stays fatal.
//! 6. A writer is acknowledged only after its group is published, so it reads its own
//!    write.
//! 7. A *validated* write ([`write_validated`], an optimistic transaction's commit)
//!    forms a group of its own. Its leader drains (every group staged before it is
//!    published, so visible) and then runs the validation, before it assigns sequence
//!    numbers; it holds leadership from the validation through its WAL append. So the
//!    validation sees every write sequenced before the batch, and no write is sequenced
//!    between the validation and the batch. A failed validation writes nothing and
//!    consumes no sequence number (docs/ARCHITECTURE.md §16).
//!
//! Outline: [`write`] enqueues → waits until done or front → leader: [`make_room`]
//! (stall, slowdown, drain and memtable switch) → (validated: drain, validate) →
//! assign sequences, append/sync →
//! (pipelined: hand leadership on) → insert → publish in order → wake the group.

use super::events::Pressure;
use super::state::{DbState, MemWithLog};
use super::{fail, poison, DbInner};
use crate::batch::WriteBatchInternal;
use crate::error::{Error, Result};
use crate::filename;
use crate::listener::StallCause;
use crate::memory_budget::MemoryBudget;
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::stats::Statistics;
use crate::wal::LogWriter;
use crate::WriteBatch;
use parking_lot::{Condvar, Mutex, MutexGuard};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Largest group a leader forms, bytes.
const MAX_GROUP_BYTES: usize = 1 << 20;
// A merged group is never longer than the largest batch `Db::write` accepts, so
// `WriteBatch::append` never refuses a follower (`crate::limits` invariant 3).
const _: () = assert!(MAX_GROUP_BYTES <= crate::limits::MAX_BATCH_LEN);

struct Slot {
    id: u64,
    batch: Option<WriteBatch>,
    sync: bool,
    force_switch: Option<Force>,
    /// A validated write (a transaction's commit): it leads a group of its own, so no
    /// leader takes it as a follower and it takes none (invariant 7).
    solo: bool,
}

#[derive(Default)]
struct QueueState {
    next_id: u64,
    waiting: VecDeque<Slot>,
    /// Results for followers that have not picked theirs up yet: a handful at most
    /// (one per waiting writer), so a vector scan beats hashing every write's id.
    completed: Vec<(u64, Result<()>)>,
    leader_active: bool,
}

/// The group-commit queue and the WAL writer (owned by the current leader).
pub(crate) struct WriteQueue {
    queue: Mutex<QueueState>,
    cv: Condvar,
    /// The active WAL. Locked only by the current leader and by `close` (which runs
    /// when no leader can exist). Lock order: `log` before `state` (the error path
    /// poisons while holding it); nothing takes `log` while holding `state`.
    log: Mutex<LogWriter>,
    /// WALs closed by a switch and not yet fsynced, with their numbers, oldest first
    /// (see [`sync_closed_wals`]; dropped unsynced by [`forget_closed_wals`] once no
    /// family needs them). Lock order: `log`, then `sync_turn`, then `closed`.
    closed: Mutex<Vec<(u64, LogWriter)>>,
    /// Held by whoever syncs the closed WALs, for the whole sync: a sync write that
    /// finds `closed` empty must not overtake a flush thread still syncing what it
    /// took from there.
    sync_turn: Mutex<()>,
    /// Bumped (after the queue changed) whenever `cv` is notified, so a spinning
    /// waiter notices without the lock.
    epoch: AtomicU64,
    /// The last sequence number assigned to a group (invariant 1). Leader only.
    allocated: AtomicU64,
    /// Guards nothing but the wait for publication (`publish`, `drain`).
    publish: Mutex<()>,
    /// Signalled whenever `last_sequence` rises.
    published: Condvar,
}

impl WriteQueue {
    /// A queue writing to `log`, the next group sequenced after `last_sequence`.
    pub fn new(log: LogWriter, last_sequence: u64) -> Self {
        WriteQueue {
            queue: Mutex::new(QueueState::default()),
            closed: Mutex::new(Vec::new()),
            sync_turn: Mutex::new(()),
            cv: Condvar::new(),
            log: Mutex::new(log),
            epoch: AtomicU64::new(0),
            allocated: AtomicU64::new(last_sequence),
            publish: Mutex::new(()),
            published: Condvar::new(),
        }
    }

    /// Tells waiters that the queue changed (a leader left, results were posted).
    fn wake(&self) {
        self.epoch.fetch_add(1, Ordering::Release);
        self.cv.notify_all();
    }
}

/// Spin phases a writer may spend, in all, before it sleeps on the queue. Each ends at
/// the next queue change or after [`SPIN_LIMIT`]; then the writer checks again under
/// the lock. A writer that keeps losing the race for leadership ends up asleep.
const SPIN_PHASES: u32 = 3;
/// How long one spin phase lasts at most.
const SPIN_LIMIT: Duration = Duration::from_micros(20);

/// Spins until `epoch` differs from `seen` or [`SPIN_LIMIT`] passes.
fn spin_until_changed(epoch: &AtomicU64, seen: u64) {
    let start = Instant::now();
    while start.elapsed() < SPIN_LIMIT {
        for _ in 0..64 {
            if epoch.load(Ordering::Acquire) != seen {
                return;
            }
            std::hint::spin_loop();
        }
    }
}

/// The check a validated write runs in its leader, after the drain and before
/// sequence numbers are assigned (invariant 7). Called at most once.
pub(crate) type Validation<'a> = &'a mut dyn FnMut(&DbInner) -> Result<()>;

/// Which memtables a forced switch (`Db::flush`) switches: the non-empty ones of
/// every family, or of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Force {
    /// Every family.
    All,
    /// The family of this id.
    Family(u32),
}

impl Force {
    fn covers(self, family: u32) -> bool {
        match self {
            Force::All => true,
            Force::Family(id) => id == family,
        }
    }
}

/// Commits `batch` (or, with `force_switch`, switches memtables so they can be
/// flushed) through the group-commit queue.
pub(crate) fn write(
    inner: &DbInner,
    wo: &WriteOptions,
    batch: Option<WriteBatch>,
    force_switch: Option<Force>,
) -> Result<()> {
    // Timed only with a batch: a forced switch (`batch` is `None`) is no write call.
    #[cfg(feature = "metrics")]
    if batch.is_some() {
        let started = std::time::Instant::now();
        let written = enqueue(inner, wo, batch, force_switch, None);
        inner.metrics.wrote(started);
        return written;
    }
    enqueue(inner, wo, batch, force_switch, None)
}

/// Commits `batch` iff `validate` returns `Ok` when run at the batch's place in the
/// commit order: after every write sequenced before it is visible, and before any
/// write sequenced after it (invariant 7). `batch` must not be empty.
///
/// # Errors
/// `validate`'s error, with nothing written; otherwise as [`write`].
pub(crate) fn write_validated(
    inner: &DbInner,
    wo: &WriteOptions,
    batch: WriteBatch,
    validate: Validation<'_>,
) -> Result<()> {
    debug_assert!(!batch.is_empty(), "a validated write needs a batch");
    #[cfg(feature = "metrics")]
    let started = std::time::Instant::now();
    let written = enqueue(inner, wo, Some(batch), None, Some(validate));
    #[cfg(feature = "metrics")]
    inner.metrics.wrote(started);
    written
}

fn enqueue(
    inner: &DbInner,
    wo: &WriteOptions,
    batch: Option<WriteBatch>,
    force_switch: Option<Force>,
    validate: Option<Validation<'_>>,
) -> Result<()> {
    inner.check_writable()?;
    if let Some(b) = &batch {
        if b.is_empty() {
            return Ok(());
        }
    }
    let q = &inner.writes;
    let mut qs = q.queue.lock();
    let id = qs.next_id;
    qs.next_id += 1;
    qs.waiting.push_back(Slot {
        id,
        batch,
        sync: wo.sync,
        force_switch,
        solo: validate.is_some(),
    });
    // Wait until a leader completed this write, or no leader is active and this
    // writer's slot is at the front: then it takes the slot and leads. Spin a little
    // before sleeping: with pipelined writes a leader holds the queue only for its WAL
    // append, far shorter than a sleep and wake-up.
    let mut spins_left = SPIN_PHASES;
    let first = loop {
        if let Some(i) = qs.completed.iter().position(|(cid, _)| *cid == id) {
            return qs.completed.swap_remove(i).1;
        }
        if !qs.leader_active {
            match qs.waiting.pop_front() {
                Some(slot) if slot.id == id => break slot,
                Some(other) => qs.waiting.push_front(other),
                None => {}
            }
        }
        if spins_left > 0 {
            // Whatever the spin saw, the conditions are checked again under the lock
            // before any sleep: a change between the last spin and the sleep would
            // otherwise be a lost wake-up.
            spins_left -= 1;
            let seen = q.epoch.load(Ordering::Acquire);
            MutexGuard::unlocked(&mut qs, || spin_until_changed(&q.epoch, seen));
            continue;
        }
        q.cv.wait(&mut qs);
    };
    // This thread is the leader: form a group from the front of the queue.
    qs.leader_active = true;
    let mut follower_ids = Vec::new();
    let mut group = first.batch.unwrap_or_default();
    let sync = first.sync;
    if first.force_switch.is_none() && !first.solo {
        let first_size = group.approximate_size();
        let limit = if first_size <= (128 << 10) {
            first_size + (128 << 10)
        } else {
            MAX_GROUP_BYTES
        };
        while let Some(next) = qs.waiting.front() {
            let Some(b) = next.batch.as_ref() else { break };
            if next.force_switch.is_some()
                || next.solo
                || (next.sync && !sync)
                || group.approximate_size() + b.approximate_size() > limit
            {
                break;
            }
            if let Some(s) = qs.waiting.pop_front() {
                if let Some(b) = s.batch {
                    group.append(&b);
                }
                follower_ids.push(s.id);
            }
        }
    }
    drop(qs);
    debug_assert!(group.check_limits().is_ok(), "group over a limit");

    let pipelined = inner.opts.enable_pipelined_write;
    let staged = stage_group(inner, group, sync, first.force_switch, validate);
    if pipelined {
        // The WAL record is appended (or the group failed): the next leader may start.
        q.queue.lock().leader_active = false;
        q.wake();
    }
    let result = staged.and_then(|staged| match staged {
        Some(staged) => insert_and_publish(inner, staged),
        None => Ok(()),
    });

    if first.force_switch.is_none() && matches!(result, Err(Error::NoSpace(_))) {
        Statistics::add(
            &inner.stats.local().no_space_writes_refused,
            1 + follower_ids.len() as u64,
        );
    }
    let mut qs = q.queue.lock();
    for fid in follower_ids {
        let r = match &result {
            Ok(()) => Ok(()),
            Err(e) => Err(e.duplicate()),
        };
        qs.completed.push((fid, r));
    }
    if !pipelined {
        qs.leader_active = false;
    }
    drop(qs);
    q.wake();
    result
}

/// The memtable taking writes of each live family, by family id (the default family
/// first), as the leader found them after making room (`DbState::mems`).
type Mems = Arc<Vec<(u32, Arc<MemTable>)>>;

/// A group whose WAL record is written: what remains is to insert and publish it.
struct Staged {
    mems: Mems,
    group: WriteBatch,
    first_seq: u64,
}

/// Leader only: makes room, runs a validated write's check (after a drain, invariant
/// 7), assigns the group's sequence numbers and appends it to the WAL. `None` if there
/// is nothing to insert (a forced switch or an empty group).
fn stage_group(
    inner: &DbInner,
    mut group: WriteBatch,
    sync: bool,
    force: Option<Force>,
    validate: Option<Validation<'_>>,
) -> Result<Option<Staged>> {
    let mems = make_room(inner, force)?;
    if force.is_some() || group.is_empty() {
        return Ok(None);
    }
    if let Some(validate) = validate {
        drain(inner);
        validate(inner)?;
    }
    let q = &inner.writes;
    let first_seq = q.allocated.load(Ordering::Relaxed) + 1;
    let count = group.len() as u64;
    if first_seq + count > crate::key::MAX_SEQUENCE {
        // Checked before the WAL append: recovery would refuse such a record.
        return Err(Error::InvalidArgument(
            "sequence numbers exhausted (2^56 writes)".into(),
        ));
    }
    group.set_sequence(first_seq);
    {
        let mut log = q.log.lock();
        let before = log.size();
        if let Err(e) = log.add_record(group.data()) {
            // A full disk: the record was cut back off and `allocated` is unchanged,
            // so the next group reuses these sequence numbers (invariant 5).
            return Err(fail(inner, e));
        }
        if sync {
            sync_closed_wals(inner)?;
            if let Err(e) = log.sync() {
                return Err(poison(inner, e));
            }
            Statistics::add(&inner.stats.local().wal_syncs, 1);
        }
        Statistics::add(&inner.stats.local().wal_bytes_written, log.size() - before);
    }
    q.allocated.store(first_seq + count - 1, Ordering::Relaxed);
    Ok(Some(Staged {
        mems,
        group,
        first_seq,
    }))
}

/// Inserts a staged group into its memtable and publishes it once every earlier group
/// is published (invariant 2). Runs concurrently with other groups' inserts when
/// writes are pipelined.
///
/// # Errors
/// `Poisoned` if the group's batch cannot be decoded. Its sequence numbers are
/// published anyway, so later groups are not stuck behind it.
fn insert_and_publish(inner: &DbInner, staged: Staged) -> Result<()> {
    let Staged {
        mems,
        group,
        first_seq,
    } = staged;
    let count = group.len() as u64;
    let mut user_bytes = 0u64;
    #[cfg(feature = "metrics")]
    let mut tally = super::export::WriteTally::default();
    let inserted = group
        .iterate_cf(|family, seq, kind, key, value| {
            user_bytes += (key.len() + value.len()) as u64;
            #[cfg(feature = "metrics")]
            tally.add(family, (key.len() + value.len()) as u64);
            // A family missing here was dropped after `Db::write` checked the batch:
            // the write counts as made before the drop (recovery skips it likewise).
            if let Some((_, mem)) = mems.iter().find(|(id, _)| *id == family) {
                mem.add(seq, kind, key, value);
            }
        })
        .map_err(|e| {
            // The WAL holds a record the memtable does not: nothing later can be trusted.
            poison(
                inner,
                Error::InvalidArgument(format!("malformed write batch: {}", e.0)),
            )
        });
    publish(inner, first_seq, first_seq + count - 1);
    inserted?;
    Statistics::add(&inner.stats.local().user_bytes_written, user_bytes);
    Statistics::add(&inner.stats.local().write_groups, 1);
    Statistics::add(&inner.stats.local().writes, count);
    #[cfg(feature = "metrics")]
    tally.publish(&inner.family_view.load());
    Ok(())
}

/// Spins before sleeping while waiting for the previous group to publish: its insert
/// usually ends within a microsecond or two, far less than a sleep and wake-up.
const PUBLISH_SPINS: u32 = 256;

/// Waits until `ready()`, which only a rise of `last_sequence` can make true: spins
/// [`PUBLISH_SPINS`] times, then sleeps on `published` (every rise notifies it).
fn wait_published(q: &WriteQueue, ready: impl Fn() -> bool) {
    if ready() {
        return;
    }
    let mut spins = 0;
    while !ready() && spins < PUBLISH_SPINS {
        std::hint::spin_loop();
        spins += 1;
    }
    if !ready() {
        let mut waiting = q.publish.lock();
        while !ready() {
            q.published.wait(&mut waiting);
        }
    }
}

/// Waits until `last_sequence == first - 1`, then publishes `last`.
fn publish(inner: &DbInner, first: u64, last: u64) {
    let q = &inner.writes;
    wait_published(q, || inner.versions.last_sequence() + 1 == first);
    inner.versions.set_last_sequence(last);
    // Taking the lock orders this wake-up after any waiter's check (no lost wake-up).
    let _guard = q.publish.lock();
    q.published.notify_all();
}

/// Leader only: waits until every group with an assigned sequence is published, so no
/// insert into the current memtable is in flight (invariant 3).
fn drain(inner: &DbInner) {
    let allocated = inner.writes.allocated.load(Ordering::Relaxed);
    wait_published(&inner.writes, || {
        inner.versions.last_sequence() >= allocated
    });
}

/// Leader only: applies write slowdown and stops, switches full memtables (or, with
/// `force`, the non-empty ones it covers), and returns the memtable of each family to
/// insert into.
///
/// The write controller is shared: the family under the most pressure (L0 files,
/// pending compaction bytes, each against its own options) slows or stops every
/// write, as in RocksDB. One WAL switch serves every family switched at once; the
/// families not switched keep their memtables, which then span two WALs (each
/// memtable records the oldest WAL it needs).
///
/// The switch does its I/O (create the next WAL, fsync the directory; the old WAL is
/// queued for a later fsync, [`switch_wal`]) *before* taking the `state` lock for the
/// memtable switch, so readers of `state` (background threads, `stats`, snapshots of
/// scheduling state) never wait on a disk. That is safe because
/// only the leader switches memtables and writes the WAL: between the decision and
/// the install nobody else can insert, switch, or append.
///
/// # Errors
/// `Poisoned` if the database is, or if creating the WAL or syncing failed (which
/// poisons it); `NoSpace` while the disk is full; while stalled, the retryable error
/// of a flush or compaction that failed during the stall.
fn make_room(inner: &DbInner, mut force: Option<Force>) -> Result<Mems> {
    let mut delayed = false;
    let mut stalled_since: Option<(u64, u64, u64)> = None;
    loop {
        let mut st = inner.state.lock();
        st.check_writes()?;
        let (mut pressure, mut switch, mut imm_full) = (Pressure::default(), Vec::new(), false);
        let pinning = families_pinning_wals(&st);
        for (&id, f) in &st.families {
            let opts = &f.family.opts;
            let l0 = f.family.super_version.load().version.files(0).len();
            let pending = f.pending_compaction_bytes;
            let soft = opts.soft_pending_compaction_bytes_limit;
            let hard = opts.hard_pending_compaction_bytes_limit;
            pressure.slow_if(
                l0 >= opts.level0_slowdown_writes_trigger,
                StallCause::Level0Files,
            );
            pressure.slow_if(
                soft > 0 && pending >= soft,
                StallCause::PendingCompactionBytes,
            );
            pressure.stop_if(
                l0 >= opts.level0_stop_writes_trigger,
                StallCause::Level0Files,
            );
            pressure.stop_if(
                hard > 0 && pending >= hard,
                StallCause::PendingCompactionBytes,
            );
            let full = f.mem.mem.approximate_memory_usage() >= opts.write_buffer_size;
            let forced = force.is_some_and(|force| force.covers(id)) && !f.mem.mem.is_empty();
            if full || forced || pinning.contains(&id) {
                switch.push(id);
                imm_full |= f.imm.len() + 1 >= opts.max_write_buffer_number;
            }
        }
        if let Some(memory_budget) = &inner.memory_budget {
            let budget = budget_pressure(memory_budget, &st);
            if let Some(id) = budget.switch.filter(|id| !switch.contains(id)) {
                if let Some(f) = st.families.get(&id) {
                    switch.push(id);
                    imm_full |= f.imm.len() + 1 >= f.family.opts.max_write_buffer_number;
                    Statistics::add(&inner.stats.local().memory_budget_flushes, 1);
                }
            }
            if force.is_none() {
                if budget.stop {
                    Statistics::add(&inner.stats.local().memory_budget_stops, 1);
                } else if budget.slow && !delayed {
                    Statistics::add(&inner.stats.local().memory_budget_slowdowns, 1);
                }
            }
            pressure.slow_if(budget.slow, StallCause::MemoryBudget);
            pressure.stop_if(budget.stop, StallCause::MemoryBudget);
        }
        let (slow, stop) = (pressure.slowed(), pressure.stopped());
        if force.is_none() {
            inner.events.write_stall(pressure.condition(imm_full));
        }
        if force.is_none() && !delayed && slow {
            // Slow each write a little rather than stop all writes later for seconds.
            drop(st);
            let t = Instant::now();
            std::thread::sleep(Duration::from_millis(1));
            Statistics::add(
                &inner.stats.local().write_slowdown_micros,
                t.elapsed().as_micros() as u64,
            );
            delayed = true;
            continue;
        }
        let stopped = force.is_none() && stop;
        if !stopped && switch.is_empty() {
            return Ok(Arc::clone(&st.mems));
        }
        if stopped || imm_full {
            // A stalled write waits for flushes and compactions; if one of them fails
            // (retryably) meanwhile, the write is refused with that error instead of
            // waiting for a disk that may never recover. Nothing was written.
            let (f, c, d) = *stalled_since.get_or_insert((
                st.retryable_failures.flushes,
                st.retryable_failures.compactions,
                st.retryable_failures.deferred,
            ));
            st.retryable_since(f, c)?;
            // Compaction debt is paid only by compactions: one deferred for want of
            // room (free space) refuses a write it stopped; a flush is never deferred.
            if stopped {
                st.deferred_since(d)?;
            }
            let stats = inner.stats.local();
            Statistics::add(&stats.write_stops, 1);
            if !stopped {
                Statistics::add(&stats.write_stops_on_memtables, 1);
            }
            inner.bg_cv.notify_all();
            let t = Instant::now();
            inner.done_cv.wait_for(&mut st, Duration::from_millis(100));
            Statistics::add(&stats.write_stop_micros, t.elapsed().as_micros() as u64);
            continue;
        }
        drop(st);
        drain(inner);
        let log_number = switch_wal(inner)?;
        let mut st = inner.state.lock();
        for id in switch {
            // A family dropped since the decision has nothing left to switch.
            let Some(f) = st.families.get_mut(&id) else {
                continue;
            };
            let old = std::mem::replace(
                &mut f.mem,
                MemWithLog {
                    mem: inner.new_memtable(),
                    log_number,
                },
            );
            inner.events.memtable_sealed(&f.family, &old.mem);
            f.imm.push(old);
            f.install_super_version(&f.family.versions.current());
        }
        st.refresh_mems();
        inner.bg_cv.notify_all();
        force = None;
    }
}

/// What the memory budget asks of a write group (docs/ARCHITECTURE.md §4.4).
struct BudgetPressure {
    /// The family whose active memtable to switch (and so flush).
    switch: Option<u32>,
    /// Slow the group by 1 ms.
    slow: bool,
    /// Stop until a flush frees memory.
    stop: bool,
}

/// Reads the budget against this database's memtables (`st`) and moves the block
/// cache's capacity to follow them. Past half the budget, with this database's active
/// memtables holding at least half of that (RocksDB's `ShouldFlush`), the largest
/// active one is switched: switching when the memory is in immutable memtables
/// already would only make more, smaller flushes. Writes slow past 3/4 and stop past
/// 7/8, the stop only while this database has a flush to wait for (another
/// database's memtables it cannot flush).
fn budget_pressure(budget: &MemoryBudget, st: &DbState) -> BudgetPressure {
    budget.rebalance();
    let used = budget.memtable_usage();
    let mut switch = None;
    if used >= budget.memtable_share() {
        let active: usize = st
            .families
            .values()
            .map(|f| f.mem.mem.approximate_memory_usage())
            .sum();
        if active >= budget.memtable_share() / 2 {
            switch = st
                .families
                .iter()
                .filter(|(_, f)| !f.mem.mem.is_empty())
                .max_by_key(|(_, f)| f.mem.mem.approximate_memory_usage())
                .map(|(&id, _)| id);
        }
    }
    BudgetPressure {
        switch,
        slow: used >= budget.slowdown_at(),
        // A switch this group makes comes first: the next pass finds its flush.
        stop: used >= budget.stop_at() && (st.flush_running || st.has_imm()),
    }
}

/// Leader only, `state` lock not held: creates the next WAL (durably named), makes it
/// the active one (in `log` and in `state.wals`, together), queues the old one for a
/// later fsync ([`sync_closed_wals`]), and returns the new WAL's number.
/// The new WAL exists before the memtable that uses it, so a memtable never holds
/// writes of a WAL that could be deleted with an older memtable's.
///
/// Why the old WAL is not synced here: the fsync of a WAL that the page cache holds
/// megabytes of took ~20 ms, with every writer waiting behind the leader (1 KiB
/// fillrandom with two writers ran 1.43x faster without it, docs/performance.md).
/// What the sync bought is kept by three rules instead (docs/ARCHITECTURE.md §7.4): a
/// sync write fsyncs the closed WALs before its own; with several families, a flush
/// fsyncs them before its table takes any of their writes; and replay stops at the
/// first gap in sequence numbers, so a crash that kept the new WAL's bytes but not the
/// old one's tail recovers a prefix.
///
/// # Errors
/// A retryable error as is if the new WAL could not be created (too many open files):
/// nothing changed, the old WAL and memtable stay active and the next write tries
/// again; `NoSpace` likewise for a full disk, which also moves the database to the
/// no-space state. `Poisoned` with the cause if a later step failed.
fn switch_wal(inner: &DbInner) -> Result<u64> {
    let log_number = inner.versions.new_file_number();
    let dir = inner.versions.db_dir();
    let file = match inner.fs.create(&filename::wal_file(dir, log_number)) {
        Ok(file) => file,
        // The number is skipped. A file left behind is empty: replay passes over empty
        // logs, and an open after the MANIFEST's log number has passed it removes it.
        Err(e) => return Err(fail(inner, e)),
    };
    inner.fs.sync_dir(dir).map_err(|e| poison(inner, e))?;
    let mut log = inner.writes.log.lock();
    let old = std::mem::replace(&mut *log, LogWriter::new(file));
    // `state.wals` changes together with `log` (lock order: `log`, then `state`), so
    // whoever holds `log` reads the number of the WAL it holds there
    // (`with_wal_cut`). Only the leader switches, so the number cannot change under it.
    let old_number = {
        let mut st = inner.state.lock();
        let old_number = st.current_wal();
        if let Some(last) = st.wals.last_mut() {
            last.1 = old.size();
        }
        st.wals.push((log_number, 0));
        old_number
    };
    inner.writes.closed.lock().push((old_number, old));
    Ok(log_number)
}

/// Fsyncs every WAL closed by a switch and not synced yet, oldest first. Called before
/// a sync write's own fsync (so an acknowledged sync write is never durable while an
/// earlier write is not), by `sync_wal`, and by the flush thread before a flush when
/// there are several families (so no table holds a write its WAL may still lose:
/// replay would otherwise keep one family's flushed writes beyond a gap it stops at
/// for another).
/// Lock order: may be called with `log` held, never with `state` held.
///
/// # Errors
/// `Poisoned` with the cause if an fsync failed (the WAL's bytes may be gone).
pub(crate) fn sync_closed_wals(inner: &DbInner) -> Result<()> {
    let _turn = inner.writes.sync_turn.lock();
    let closed = std::mem::take(&mut *inner.writes.closed.lock());
    for (_, mut wal) in closed {
        wal.sync().map_err(|e| poison(inner, e))?;
    }
    Ok(())
}

/// The families to switch (and so flush) because they keep the oldest WAL alive while
/// the closed WALs hold more than four times what all memtables may (RocksDB's
/// default `max_total_wal_size`): a family written rarely would otherwise keep every
/// WAL since its last flush. Only families with no flush pending are named: each is
/// switched once, and the WAL goes when its flush is installed.
fn families_pinning_wals(st: &super::state::DbState) -> Vec<u32> {
    if st.families.len() < 2 {
        return Vec::new();
    }
    let closed: u64 = st.wals.iter().map(|&(_, bytes)| bytes).sum();
    let limit: u64 = st
        .families
        .values()
        .map(|f| {
            let o = &f.family.opts;
            (o.write_buffer_size as u64).saturating_mul(o.max_write_buffer_number as u64)
        })
        .fold(0u64, u64::saturating_add)
        .saturating_mul(4);
    let Some(&(oldest, _)) = st.wals.first() else {
        return Vec::new();
    };
    if closed <= limit {
        return Vec::new();
    }
    st.families
        .iter()
        .filter(|(_, f)| f.imm.is_empty() && !f.mem.mem.is_empty() && f.mem.log_number <= oldest)
        .map(|(&id, _)| id)
        .collect()
}

/// Closes, unsynced, the WALs numbered below `needed` (every family's log number): all
/// their writes are in tables, and the files are about to be deleted, whose space an
/// open handle would keep.
pub(crate) fn forget_closed_wals(inner: &DbInner, needed: u64) {
    inner.writes.closed.lock().retain(|&(n, _)| n >= needed);
}

/// Runs `f` at a cut of the WAL: with the WAL lock held (no write can append), after
/// every WAL is synced, passing the number of the WAL taking writes and its size (the
/// end of the last record appended). For checkpoints. Lock order: `log`, then `state`
/// briefly, then whatever `f` takes (never `log`).
///
/// # Errors
/// A failed fsync (which poisons the database); `f`'s error.
pub(crate) fn with_wal_cut<T>(inner: &DbInner, f: impl FnOnce(u64, u64) -> Result<T>) -> Result<T> {
    let mut log = inner.writes.log.lock();
    sync_closed_wals(inner)?;
    log.sync().map_err(|e| poison(inner, e))?;
    let current = inner.state.lock().current_wal();
    f(current, log.size())
}

/// Makes every acknowledged write durable, in every WAL (used by `close`, `create_cf`
/// and `drop_cf`).
pub(crate) fn sync_wal(inner: &DbInner) -> Result<()> {
    let mut log = inner.writes.log.lock();
    sync_closed_wals(inner)?;
    log.sync().map_err(|e| poison(inner, e))
}
