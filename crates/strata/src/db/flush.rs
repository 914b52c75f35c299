//! Flush: writes the oldest immutable memtable of a family to one L0 table, as a plan;
//! then releases the WALs no family needs any more.
//!
//! Ordering that keeps acknowledged writes: with several families, the WALs closed so
//! far fsynced (`write::sync_closed_wals`) → table written and fsynced → directory
//! fsynced (the executor) → MANIFEST edit (new file + the family's new `log_number`)
//! fsynced (the version set) → memtable removed from the read view in the same step
//! that publishes the new version → WALs below every family's log number queued as
//! obsolete and deleted afterwards. A crash between any two steps leaves either the
//! WAL (replayed) or the table (named by the MANIFEST).
//!
//! # WALs and column families
//! The WAL is shared, so one WAL may hold writes of several families, and a family
//! that is written rarely would keep every WAL since its last flush. Each family's
//! MANIFEST log number says which WALs it still needs; a WAL is deleted once it is
//! below all of them ([`release_wals`]). A family with nothing unflushed needs no old
//! WAL: after each flush, such families get the current WAL as their log number, by a
//! MANIFEST edit of their own (RocksDB advances them in memory only; recording it
//! keeps the rule "WALs below the recorded numbers are not needed" true at every
//! crash). That is safe without stopping writers: a write to the family after the
//! check is in the current WAL or a later one, because a switch drains every write in
//! flight before it moves to a new WAL (`write::make_room`).

use super::family::Family;
use super::super_version::SuperVersion;
use super::tree_hooks::TreeHooks;
use super::{fail, jobs, read, write, DbInner};
use crate::compaction::{Plan, Reason};
use crate::error::Result;
use crate::key::{LookupKey, ValueKind, MAX_SEQUENCE};
use crate::memtable::MemTable;
use crate::version::file_ref::Obsolete;
use crate::version::VersionEdit;
use std::sync::Arc;

/// Flushes the oldest immutable memtable (of the family whose oldest one needs the
/// oldest WAL), if any. Returns false if there was none.
/// Requires: called only by the flush thread (one flush at a time keeps each family's
/// L0 in sequence order).
///
/// # Errors
/// `Poisoned` with the cause if writing the table or the MANIFEST failed.
pub(crate) fn flush_oldest(inner: &DbInner) -> Result<bool> {
    let (family, mem, next_log, several) = {
        let mut st = inner.state.lock();
        let Some((f, oldest)) = st
            .families
            .values()
            .filter_map(|f| f.imm.first().map(|m| (f, m)))
            .min_by_key(|(_, m)| m.log_number)
        else {
            return Ok(false);
        };
        let mem = Arc::clone(&oldest.mem);
        let next_log = f.imm.get(1).map_or(f.mem.log_number, |m| m.log_number);
        let family = Arc::clone(&f.family);
        st.flush_running = true;
        (family, mem, next_log, st.families.len() > 1)
    };
    let running = FlushRunning(inner);
    let l0_path = inner
        .placement
        .path_for_level(&family.versions.current(), &family.opts, 0);
    let plan = Plan::flush(&family.opts, mem, l0_path, Some(next_log), Reason::Flush);
    // With several families, fsync the WALs closed so far (this memtable's writes are
    // in them) before the table takes their writes: another family replays those WALs
    // after a crash, and a torn tail there would stop it short of batches whose other
    // half this table kept. With one family nothing replays them once the table is
    // installed, so the fsync (~20 ms for a WAL the page cache holds megabytes of)
    // stays off the flush; a family created meanwhile fsynced every WAL before it
    // existed (`create_cf`).
    let synced = if several {
        write::sync_closed_wals(inner)
    } else {
        Ok(())
    };
    let result = synced.and_then(|()| {
        jobs::run(inner, &family, &plan, |f| {
            if !f.imm.is_empty() {
                f.imm.remove(0);
            }
        })
    });
    drop(running);
    result?;
    advance_empty_families(inner, &family)?;
    release_wals(inner);
    Ok(true)
}

/// Writes up the copies some family's tree hooks hold (`TreeHooks::take_copies`), if
/// any: drops each whose key has a version, or a covering range tombstone, in the
/// family's memtables or levels `0..=check_through`, lets the hooks drop the rest
/// they know to be stale, and writes what they return as one L0 table at the copies'
/// own sequence numbers. Returns false if no family had copies.
///
/// Requires: called only by the flush thread. That thread is L0's only writer, so no
/// flush lands between the check and the install: every version newer than a copy is
/// either seen by the check, or written after it and flushed after this table, into
/// one whose sequence numbers are all larger (ARCHITECTURE §6.14, "Copies in L0").
///
/// # Errors
/// `Poisoned` if writing the table or the MANIFEST failed. An error of the check's
/// table reads drops the copies instead.
pub(crate) fn flush_copies(inner: &DbInner) -> Result<bool> {
    let found = {
        let mut st = inner.state.lock();
        // The super-version `has_copies` is asked about is the one the check reads
        // and `take_copies` is shown (an install may land before the check).
        let found = st.families.values().find_map(|f| {
            let sv = f.family.super_version.load_full();
            let hooks = f
                .family
                .hooks
                .as_ref()
                .filter(|h| h.has_copies(&sv.version))?;
            Some((Arc::clone(&f.family), Arc::clone(hooks), sv))
        });
        // From the take to the install, as for a memtable's flush: `Db::flush` waits.
        st.flush_running = found.is_some();
        found
    };
    let Some((family, hooks, sv)) = found else {
        return Ok(false);
    };
    let running = FlushRunning(inner);
    let result = write_copies(inner, &family, hooks.as_ref(), sv);
    drop(running);
    result.map(|()| true)
}

/// [`flush_copies`] for one family's hooks, over its super-version `sv`.
fn write_copies(
    inner: &DbInner,
    family: &Family,
    hooks: &dyn TreeHooks,
    sv: Arc<SuperVersion>,
) -> Result<()> {
    let Some(copies) = hooks.take_copies(&sv.version) else {
        return Ok(());
    };
    let mut lookup = LookupKey::default();
    let mut survivors = Vec::with_capacity(copies.records.len());
    let mut dropped = 0;
    for c in copies.records {
        lookup.set(&c.key, MAX_SEQUENCE);
        match read::newer_sequence_through(inner, &sv, &lookup, 0, copies.check_through) {
            Ok(None) => survivors.push(c),
            Ok(Some(_)) => dropped += 1,
            // The copies are only copies: drop them all rather than fail the flush
            // thread (its failures stall writers and `Db::flush`); a damaged table
            // reports itself to the reads that meet it (found by review).
            Err(_) => return Ok(()),
        }
    }
    drop(sv);
    let kept = hooks.copies_checked(copies.batch, survivors, dropped);
    if kept.is_empty() {
        return Ok(());
    }
    let mem = MemTable::new();
    for c in &kept {
        mem.add(c.seq, ValueKind::Put, &c.key, &c.value);
    }
    let plan = Plan::flush(
        &family.opts,
        Arc::new(mem),
        copies.path_id,
        None,
        Reason::CopiesUp,
    );
    jobs::run(inner, family, &plan, |_| {})
}

/// Records the current WAL as the log number of every live family other than
/// `flushed` that holds no unflushed write (see the module docs).
///
/// # Errors
/// `Poisoned` if a MANIFEST write failed.
fn advance_empty_families(inner: &DbInner, flushed: &Family) -> Result<()> {
    let (current, empty): (u64, Vec<_>) = {
        let st = inner.state.lock();
        let current = st.current_wal();
        let empty = st
            .families
            .values()
            .filter(|f| {
                f.family.id() != flushed.id()
                    && f.is_empty()
                    && f.family.versions.log_number() < current
            })
            .map(|f| Arc::clone(&f.family))
            .collect();
        (current, empty)
    };
    for family in empty {
        let edit = VersionEdit {
            log_number: Some(current),
            ..Default::default()
        };
        match inner
            .versions
            .log_and_apply(&family.versions, edit, &[], |_| {})
        {
            Ok(_) => {}
            // Dropped meanwhile: it needs no WAL at all.
            Err(_) if family.versions.is_dropped() => {}
            Err(e) => return Err(fail(inner, e)),
        }
    }
    Ok(())
}

/// Queues as obsolete every WAL below the log number of every live family (none of
/// them needs it), never the WAL taking writes.
pub(crate) fn release_wals(inner: &DbInner) {
    let needed = inner.versions.log_number();
    // Their writes are all in tables: nothing needs them synced any more.
    write::forget_closed_wals(inner, needed);
    let mut st = inner.state.lock();
    let active = st.current_wal();
    let keep = st
        .wals
        .iter()
        .position(|&(n, _)| n >= needed || n == active)
        .unwrap_or(st.wals.len());
    for (n, _) in st.wals.drain(..keep) {
        inner.versions.obsolete().push(Obsolete::Wal(n));
    }
}

/// Clears `flush_running` and wakes the waiters when dropped: at the end of a flush,
/// and on the way out of a panic in code the flush calls (an operator, a filter), so
/// that `Db::flush` never waits for a flush that will not end (`wait_for_flushes`
/// returns an error only once no flush runs).
struct FlushRunning<'a>(&'a DbInner);

impl Drop for FlushRunning<'_> {
    fn drop(&mut self) {
        self.0.state.lock().flush_running = false;
        self.0.done_cv.notify_all();
    }
}
