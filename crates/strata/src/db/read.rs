//! The read path: point lookups and iterator construction. Takes no lock.
//!
//! Sources, newest first: the active memtable, immutable memtables (newest first), L0
//! tables (newest first: for any key in two L0 tables, the one with the larger
//! `largest_seqno` holds its newer version, because L0 receives only flushes and
//! tables of copies checked against every newer version, ARCHITECTURE §6.14), then
//! one table per deeper level, found by binary search on the fence
//! pointers (file key ranges). Per table the filter chain is: key range → snapshot
//! filter → the table pinned by the file's reference (the table cache only on its
//! first open, ARCHITECTURE §5.5) → bloom filter → index → data block. The first
//! source holding a version of the key visible at the read's sequence number answers,
//! unless that version is a merge operand: then the lookup gathers the key's operands
//! through older entries and older sources down to a base (a `Put`, a `Delete`, or
//! none) and the merge operator combines them (`merge::chain`). Gets without merges
//! pay one empty-vector check for this.
//!
//! Consistency: the sequence number is loaded *before* the super-version. Every write
//! at or below that number was in a memtable of a super-version installed before the
//! number was published, and anything later is at least as new, so the loaded view
//! holds every visible write (in a memtable or in a table flushed from it).

use super::family::Family;
use super::iter::Resolver;
use super::scan_tee::ScanStart;
use super::tree_hooks::TableRead;
use super::{DbInner, DbIterator, SuperVersion};
use crate::error::Result;
use crate::expiry::ReadClock;
use crate::iter::{
    AnyTable, InternalIterator, LevelIterator, MergingIterator, OpenHook, TeeIterator,
};
use crate::key::{self, LookupKey, SequenceNumber, ValueKind};
use crate::memtable::MemGet;
use crate::merge::chain::{self, Chain};
use crate::options::ReadOptions;
use crate::range_del::{Fragments, RangeTombstone};
use crate::snapshot_filter::SnapshotFilter;
use crate::sst::TableIterator;
use crate::stats::purpose::IoPurpose;
use crate::stats::Statistics;
use crate::version::file_meta::ALL_COLUMNS;
use crate::version::file_ref::FileRef;
use crate::version::{FileKind, FileMetaData, Version};
use std::cell::RefCell;
use std::sync::Arc;

thread_local! {
    /// Reused lookup-key buffer: the get path allocates nothing once warm.
    static LOOKUP: RefCell<LookupKey> = RefCell::new(LookupKey::default());
}

fn read_sequence(inner: &DbInner, ro: &ReadOptions) -> SequenceNumber {
    match &ro.snapshot {
        Some(s) => s.sequence(),
        None => inner.versions.last_sequence(),
    }
}

/// The read sequence, then the view `load` loads (§5.1). On a secondary both are
/// taken so that no catch-up installs between them (`db::secondary`, invariant 4).
///
/// # Errors
/// On a secondary, a snapshot older than its tables (see `Secondary::read_view`).
fn read_view<V>(
    inner: &DbInner,
    ro: &ReadOptions,
    load: impl FnOnce() -> V,
) -> Result<(SequenceNumber, V)> {
    let view = || (read_sequence(inner, ro), load());
    match &inner.secondary {
        None => Ok(view()),
        Some(s) => s.read_view(ro.snapshot.as_ref().map(|s| s.sequence()), view),
    }
}

/// A read of part of each value (ARCHITECTURE §7.1.3): which column-group runs
/// (`version::run`) can hold what it wants, and when the entries a point read met in
/// runs decide that. The row run (`ALL_COLUMNS`), the memtables and L0 are always
/// read. Implemented by a value layout that stores parts of a value in group runs.
///
/// The contract the implementer keeps: every entry that can change a wanted part's
/// answer is in the row run or in a run of a group [`reads_group`](Self::reads_group)
/// accepts: each group run holds every delete and range tombstone of its keys (the
/// executor gives every stream the job's tombstones, `compaction::rewrite`).
pub(crate) trait PartialRead {
    /// Whether the runs of column group `group` may hold what the read wants.
    fn reads_group(&self, group: u32) -> bool;

    /// Called by a point read on each merge operand it meets in the runs of a level
    /// (in no particular order within the level), level after level from the top:
    /// true once the operands met so far decide every wanted part, so that no deeper
    /// level can change it, and the read reads no deeper (its answer: the entries met,
    /// resolved in sequence order over no base).
    fn settles(&mut self, operand: &[u8]) -> bool;

    /// Called once when a point read ends, with the deepest level whose entry its
    /// answer used (0 for the memtables, L0, or no entry at all): where the read was
    /// served, as a cost model prices it.
    fn served_at(&mut self, level: usize);
}

/// What a point lookup carries from newer sources to older ones.
#[derive(Default)]
struct Pending<'r> {
    /// Merge operands met so far, newest first (empty, unallocated, without merges).
    operands: Vec<Vec<u8>>,
    /// The newest visible range tombstone covering the key in the sources seen so far
    /// (0: none). An entry older than it is deleted; so is every entry in older
    /// sources, which are older still.
    floor: SequenceNumber,
    /// The sequence number of the `Put` a table answered with (0: none yet).
    base_seq: SequenceNumber,
    /// What a read of part of the value wants (`None`: all of it).
    partial: Option<&'r mut dyn PartialRead>,
    /// The deepest level whose entry the answer used so far (for `served_at`).
    level: usize,
}

impl Pending<'_> {
    /// Whether the read skips the runs of `group` (`PartialRead::reads_group`).
    fn skips_group(&self, group: u32) -> bool {
        group != ALL_COLUMNS && self.partial.as_ref().is_some_and(|r| !r.reads_group(group))
    }
}

/// Point lookup. See the module docs for the order of sources.
pub(crate) fn get(
    inner: &DbInner,
    family: &Family,
    ro: &ReadOptions,
    user_key: &[u8],
) -> Result<Option<Vec<u8>>> {
    get_partial(inner, family, ro, user_key, None)
}

/// [`get`] of what `partial` wants of the value (`None`: all of it): the runs of the
/// groups it does not read are skipped, and the walk ends where it settles.
pub(crate) fn get_partial(
    inner: &DbInner,
    family: &Family,
    ro: &ReadOptions,
    user_key: &[u8],
    partial: Option<&mut dyn PartialRead>,
) -> Result<Option<Vec<u8>>> {
    let _purpose = IoPurpose::Get.enter();
    // Sampled before the sequence number (`db::tree_hooks`).
    let token = family.hooks.as_ref().map_or(0, |h| h.read_token());
    #[cfg(feature = "metrics")]
    let started = std::time::Instant::now();
    // Counted before the view is taken, so a refused read counts as a get too.
    Statistics::add(&inner.stats.local().gets, 1);
    let (seq, sv) = read_view(inner, ro, || family.super_version.load())?;
    let answer = LOOKUP.with(|cell| {
        let mut lookup = cell.borrow_mut();
        lookup.set(user_key, seq);
        let filter = SnapshotFilter {
            enabled: family.opts.snapshot_filter,
            seq,
        };
        let mut p = Pending {
            partial,
            ..Pending::default()
        };
        let value = get_with(inner, family, ro, &sv, &lookup, filter, token, &mut p);
        if let Some(r) = p.partial.as_deref_mut() {
            r.served_at(p.level);
        }
        match ReadClock::for_family(&family.opts) {
            Some(clock) => clock.answer(user_key, value?),
            None => value,
        }
    });
    #[cfg(feature = "metrics")]
    family.metrics.got(&answer, started);
    answer
}

/// The body of [`get_partial`] once the read's view is loaded.
#[allow(clippy::too_many_arguments)]
#[inline]
fn get_with(
    inner: &DbInner,
    family: &Family,
    ro: &ReadOptions,
    sv: &SuperVersion,
    lookup: &LookupKey,
    filter: SnapshotFilter,
    token: u64,
    p: &mut Pending<'_>,
) -> Result<Option<Vec<u8>>> {
    let user_key = lookup.user_key();
    if let Some(answer) = get_from_memtables(inner, family, sv, lookup, filter, p)? {
        return Ok(answer);
    }
    let mut answered = None;
    let base = get_from_version(inner, family, &sv.version, lookup, filter, p, &mut answered)?;
    let value = resolve(family, user_key, base.as_deref(), p)?;
    // The tree hooks see reads of the latest state answered by a table.
    if let (Some(h), Some((level, put_seq)), Some(v), None) =
        (&family.hooks, answered, &value, &ro.snapshot)
    {
        let wake = h.table_read(&TableRead {
            user_key,
            value: v,
            seq: put_seq,
            level,
            plain: p.operands.is_empty() && p.floor == 0,
            token,
        });
        if wake {
            // As `ask_compaction`: the flush thread goes to sleep under this lock.
            drop(inner.state.lock());
            inner.bg_cv.notify_all();
        }
    }
    Ok(value)
}

/// The value of `user_key` given its chain's `base` and the operands in `p`.
#[inline]
fn resolve(
    family: &Family,
    user_key: &[u8],
    base: Option<&[u8]>,
    p: &Pending<'_>,
) -> Result<Option<Vec<u8>>> {
    chain::resolve(
        family.opts.merge_operator.as_ref(),
        user_key,
        base,
        &p.operands,
    )
}

/// The memtables' part of a point lookup, newest first: `Some(answer)` once a
/// memtable decides it, `None` to go on to the tables (with `p` carrying operands and
/// the range-tombstone floor).
#[inline]
fn get_from_memtables(
    inner: &DbInner,
    family: &Family,
    sv: &SuperVersion,
    lookup: &LookupKey,
    filter: SnapshotFilter,
    p: &mut Pending<'_>,
) -> Result<Option<Option<Vec<u8>>>> {
    let (user_key, seq) = (lookup.user_key(), lookup.sequence());
    for mem in std::iter::once(&sv.mem).chain(sv.imm.iter()) {
        if filter.skips_memtable(mem, &inner.stats) {
            continue;
        }
        if let Some(rd) = mem.range_dels() {
            p.floor = p.floor.max(rd.max_covering(user_key, seq));
        }
        match mem.get(lookup) {
            MemGet::Found(s, v) if s > p.floor && p.operands.is_empty() => {
                return Ok(Some(Some(v.to_vec())))
            }
            MemGet::Found(s, v) if s > p.floor => {
                return resolve(family, user_key, Some(v), p).map(Some)
            }
            MemGet::Merge(s) if s > p.floor => {
                let mut it = mem.iter();
                it.seek(lookup.internal_key());
                let walked = chain::collect(&mut it, user_key, p.floor, &mut p.operands)?;
                if let Chain::Base(base) = walked {
                    return resolve(family, user_key, base.as_deref(), p).map(Some);
                }
            }
            MemGet::NotFound if p.floor == 0 => {}
            // A delete, or an entry under a range tombstone: so is all that is older.
            _ => return resolve(family, user_key, None, p).map(Some),
        }
    }
    Ok(None)
}

/// What a table said about a key.
enum Probe {
    /// No visible entry of the key, or merge operands only (pushed onto the
    /// caller's list): older sources continue.
    Absent,
    /// The chain's base: the value of a `Put`, `None` for a `Delete` or a range
    /// tombstone.
    Found(Option<Vec<u8>>),
}

/// The newest visible entry of the key in one table, as the table's `get` callback
/// sees it.
enum Hit {
    Put(SequenceNumber, Vec<u8>),
    Delete,
    Merge(SequenceNumber),
}

/// What a point lookup reads at one step of [`probe_tables`].
#[derive(Clone, Copy)]
pub(super) enum Source<'a> {
    /// One table: a level file, or (the flag) a virtual table's parent.
    Table(&'a FileMetaData, Option<&'a FileRef>, bool),
    /// The tables of the runs of a level and the levels below it that may hold the key
    /// (`version::run`), each with its level, in level order, read as one source:
    /// their entries merged by internal key.
    Merged(&'a [MergedTable<'a>]),
}

/// An entry of a key a [`Source::Merged`] holds: (sequence number, kind, value, level).
type Entry = (SequenceNumber, ValueKind, Vec<u8>, usize);

/// A table of a [`Source::Merged`]: its level, metadata and reference.
pub(super) type MergedTable<'a> = (usize, &'a FileMetaData, Option<&'a FileRef>);

/// What `source` says about `lookup`'s key, updating `p`.
#[inline]
fn probe(
    inner: &DbInner,
    source: Source<'_>,
    lookup: &LookupKey,
    filter: SnapshotFilter,
    p: &mut Pending<'_>,
) -> Result<Probe> {
    match source {
        Source::Table(f, file, parent) => probe_table(inner, (f, file, parent), lookup, filter, p),
        Source::Merged(tables) => probe_merged(inner, tables, lookup, filter, p),
    }
}

/// [`probe`] of the tables of levels of runs: every table's covering tombstones
/// and entries of the key first, then the newest visible entry among them decides,
/// as one table's would: the generic path over levels of several runs
/// (`version::run`). Each table costs a bloom probe and, if the filter passes it, the
/// data block holding the key (`sst::Table::get_each`; the next block too, now and then,
/// when the key's entries may run on past the block's end).
///
/// A partial read (`p.partial`) skips the tables of groups it does not read, and
/// reads no level below the one where it settles (`PartialRead::settles`).
fn probe_merged(
    inner: &DbInner,
    tables: &[MergedTable<'_>],
    lookup: &LookupKey,
    filter: SnapshotFilter,
    p: &mut Pending<'_>,
) -> Result<Probe> {
    let (ukey, seq) = (lookup.user_key(), lookup.sequence());
    // The visible entries of the key, (sequence number, kind, value); a table's walk
    // ends at its first entry that is not an operand (all older are hidden by it).
    let mut entries: Vec<Entry> = Vec::new();
    let mut level_start = 0;
    for (i, &(level, f, file)) in tables.iter().enumerate() {
        if tables.get(i.wrapping_sub(1)).is_some_and(|t| t.0 != level) {
            if settled(p, entries.get(level_start..).unwrap_or_default()) {
                break;
            }
            level_start = entries.len();
        }
        if p.skips_group(f.column_group) || filter.skips(f, &inner.stats) {
            continue;
        }
        let table = inner.table_cache.get_pinned(f, file)?;
        if let Some(rd) = table.range_dels() {
            p.floor = p.floor.max(rd.max_covering(ukey, seq));
        }
        // `get_each` has parsed every key it passes on. An entry older than the
        // tombstone floor, and all older ones, are deleted: the walk ends there.
        let floor = p.floor;
        table.get_each(lookup.internal_key(), |ikey, value| {
            let Some(k) = key::parse_internal_key(ikey).filter(|k| k.seq >= floor) else {
                return false;
            };
            entries.push((k.seq, k.kind, value.to_vec(), level));
            k.kind == ValueKind::Merge
        })?;
    }
    // Newest first; the parts of one write split across groups share its sequence
    // number and hold disjoint columns, so their order among themselves is free.
    entries.sort_by_key(|e| std::cmp::Reverse(e.0));
    for (s, kind, value, level) in entries {
        if s < p.floor {
            return Ok(Probe::Found(None));
        }
        p.level = p.level.max(level);
        match kind {
            ValueKind::Merge => p.operands.push(value),
            ValueKind::Put => {
                p.base_seq = s;
                return Ok(Probe::Found(Some(value)));
            }
            ValueKind::Delete | ValueKind::RangeDelete => return Ok(Probe::Found(None)),
        }
    }
    // As `chain::collect`: a tombstone floor is the base; else older sources would
    // continue the chain (there are none: these tables reach the last level, or the
    // partial read settled above the rest).
    Ok(if p.floor > 0 {
        Probe::Found(None)
    } else {
        Probe::Absent
    })
}

/// Whether a partial read settles on the operands among `entries`, those of one level
/// (`PartialRead::settles`). Always false for a whole read.
fn settled(p: &mut Pending<'_>, entries: &[Entry]) -> bool {
    let Some(partial) = p.partial.as_deref_mut() else {
        return false;
    };
    let mut done = false;
    for (_, kind, value, _) in entries {
        if *kind == ValueKind::Merge {
            done |= partial.settles(value);
        }
    }
    done
}

/// `parent`: `f` is probed as a virtual table's parent (counted apart).
#[inline]
fn probe_table(
    inner: &DbInner,
    (f, file, parent): (&FileMetaData, Option<&FileRef>, bool),
    lookup: &LookupKey,
    filter: SnapshotFilter,
    p: &mut Pending<'_>,
) -> Result<Probe> {
    if filter.skips(f, &inner.stats) {
        return Ok(Probe::Absent);
    }
    if parent {
        Statistics::add(&inner.stats.local().virtual_parents_probed, 1);
    }
    let table = inner.table_cache.get_pinned(f, file)?;
    if let Some(rd) = table.range_dels() {
        p.floor = p
            .floor
            .max(rd.max_covering(lookup.user_key(), lookup.sequence()));
    }
    let hit = table.get(
        lookup.internal_key(),
        |ikey, value| match key::parse_internal_key(ikey).map(|k| (k.kind, k.seq)) {
            Some((ValueKind::Put, s)) => Hit::Put(s, value.to_vec()),
            Some((ValueKind::Merge, s)) => Hit::Merge(s),
            _ => Hit::Delete,
        },
    )?;
    Ok(match hit {
        None if p.floor == 0 => Probe::Absent,
        Some(Hit::Put(s, v)) if s > p.floor => {
            p.base_seq = s;
            Probe::Found(Some(v))
        }
        // Tables never split a user key, so the chain's rest in this table follows
        // the first operand; walk it with an iterator (rare: compaction folds chains).
        Some(Hit::Merge(s)) if s > p.floor => {
            let mut it = table.iter();
            it.seek(lookup.internal_key());
            match chain::collect(&mut it, lookup.user_key(), p.floor, &mut p.operands)? {
                Chain::Base(base) => Probe::Found(base),
                Chain::Open => Probe::Absent,
            }
        }
        // A delete, or an entry (or none) under a range tombstone: so is all older.
        _ => Probe::Found(None),
    })
}

// Called once per get, inside the thread-local's closure: inlined, the probe loop
// shares `get`'s frame (callgrind: about 100 instructions per get fewer than a call).
// `answered`: set to the level and the sequence number of the table `Put` that
// is the answer's base. The tree hooks' source (`TreeHooks::get_after`) is asked
// between its level and the next; its answer sets no `answered`.
#[inline]
fn get_from_version(
    inner: &DbInner,
    family: &Family,
    version: &Version,
    lookup: &LookupKey,
    filter: SnapshotFilter,
    p: &mut Pending<'_>,
    answered: &mut Option<(usize, SequenceNumber)>,
) -> Result<Option<Vec<u8>>> {
    // A get asks for the compaction of the first virtual table holding its key that
    // the policy wants compacted, and of no other (`compaction::requests`).
    let mut met_virtual = false;
    let mut asked = false;
    let mut meet = |level: usize, index: usize| {
        if !met_virtual {
            met_virtual = true;
            Statistics::add(&inner.stats.local().gets_through_virtual, 1);
        }
        if !asked {
            asked = ask_compaction(inner, family, version, level, index);
        }
    };
    let source_after = family.hooks.as_ref().and_then(|h| h.source_after());
    for level in 0..version.num_levels() {
        let mut probe_one = |source: Source<'_>| {
            let operands = p.operands.len();
            let found = probe(inner, source, lookup, filter, p)?;
            if matches!(found, Probe::Found(_)) || p.operands.len() > operands {
                p.level = p.level.max(level);
            }
            Ok(match found {
                Probe::Found(v) => {
                    if v.is_some() {
                        *answered = Some((level, p.base_seq));
                    }
                    Some(v)
                }
                Probe::Absent => None,
            })
        };
        match probe_level(
            version,
            level,
            lookup,
            usize::MAX,
            &mut meet,
            &mut probe_one,
        )? {
            Step::Answer(found) => return Ok(found),
            Step::Ended => return Ok(None),
            Step::Next => {}
        }
        if source_after == Some(level) {
            let copy = family
                .hooks
                .as_ref()
                .and_then(|h| h.get_after(lookup.user_key(), lookup.sequence()));
            // Under a range tombstone the copy is deleted, and so is everything older:
            // the levels below say so themselves.
            if let Some((_, v)) = copy.filter(|(s, _)| *s > p.floor) {
                return Ok(Some(v));
            }
        }
    }
    Ok(None)
}

/// Asks the policy whether a read meeting the virtual table `files(level)[index]` of
/// `version` should request its compaction and, if so, records the request and wakes
/// the scheduler (`compaction::requests`, steps 2–3). True iff the policy wants the
/// table compacted, whether or not this read made the request.
///
/// Requires: no database lock held (the read that makes the request takes the
/// `state` lock for an instant).
pub(crate) fn ask_compaction(
    inner: &DbInner,
    family: &Family,
    version: &Version,
    level: usize,
    index: usize,
) -> bool {
    let Some(f) = version.files(level).get(index) else {
        return false;
    };
    if !family.policy.compact_on_read(&family.opts, f) {
        return false;
    }
    if version.request_compaction(level, index) {
        Statistics::add(&inner.stats.local().virtual_merge_requests, 1);
        // The scheduler samples requests and goes to sleep under this lock: notified
        // without it, the wake-up could fall between the two and be lost.
        drop(inner.state.lock());
        inner.bg_cv.notify_all();
    }
    true
}

/// Calls `probe` on every source of levels `0..=deepest` that may hold `lookup`'s
/// user key, newest first, until one returns `Some` (the answer): each L0 file whose
/// key range holds the key (L0 is ordered newest first), then on each deeper level
/// the one file whose fence pointers can hold it. A virtual table there (§7.1.1)
/// stands for its parents: each whose slice holds the key is probed in the slices'
/// order (read order), as L0 files are: `meet(level, index)` is called first, and
/// the [`Source::Table`] flag is true for a parent. A level of several runs
/// (`version::run`) is one [`Source::Merged`] of the file each run may hold the key
/// in (a virtual table's parents among them). The read path's one definition of where
/// a key can be; the conflict check of transactions ([`newer_sequence`]) walks it too.
#[inline]
fn probe_tables<R>(
    version: &Version,
    lookup: &LookupKey,
    deepest: usize,
    mut meet: impl FnMut(usize, usize),
    mut probe: impl FnMut(Source<'_>) -> Result<Option<R>>,
) -> Result<Option<R>> {
    for level in 0..version.num_levels().min(deepest.saturating_add(1)) {
        match probe_level(version, level, lookup, deepest, &mut meet, &mut probe)? {
            Step::Answer(r) => return Ok(Some(r)),
            Step::Ended => return Ok(None),
            Step::Next => {}
        }
    }
    Ok(None)
}

/// What [`probe_level`] found.
pub(super) enum Step<R> {
    /// The answer.
    Answer(R),
    /// Nothing here: go on to the next level.
    Next,
    /// Nothing here, and the probe read every level through the caller's deepest
    /// (a level of column-group runs, with the levels below it): stop.
    Ended,
}

/// [`probe_tables`] on one level: on L0 every file whose key range holds the key,
/// newest first; deeper, the one file whose fence pointers can hold it (a virtual
/// table's parents in slice order). A level holding column-group runs is probed with
/// every level below it through `through`, as one source ([`probe_runs`]), and
/// ends the walk. `multi_get` walks the levels one at a time for a
/// whole batch of keys, so each key meets the tables in the same order as here.
#[inline]
fn probe_level<R>(
    version: &Version,
    level: usize,
    lookup: &LookupKey,
    through: usize,
    meet: &mut impl FnMut(usize, usize),
    probe: &mut impl FnMut(Source<'_>) -> Result<Option<R>>,
) -> Result<Step<R>> {
    let found = |r: Option<R>| r.map_or(Step::Next, Step::Answer);
    let ukey = lookup.user_key();
    if level == 0 {
        for (i, f) in version.files(0).iter().enumerate() {
            if ukey < f.smallest_user_key() || ukey > f.largest_user_key() {
                continue;
            }
            if let Some(r) = probe(Source::Table(f, version.file_ref(0, i), false))? {
                return Ok(Step::Answer(r));
            }
        }
        return Ok(Step::Next);
    }
    if version.has_group_runs(level) {
        let r = probe_runs(version, level..=through, lookup, meet, probe)?;
        return Ok(r.map_or(Step::Ended, Step::Answer));
    }
    let files = version.files(level);
    let i = version.find_file(level, lookup.internal_key());
    let Some(f) = files.get(i) else {
        return Ok(Step::Next);
    };
    if ukey < f.smallest_user_key() {
        return Ok(Step::Next);
    }
    if let FileKind::Real = f.kind {
        return probe(Source::Table(f, version.file_ref(level, i), false)).map(found);
    }
    meet(level, i);
    for parent in parents_holding(version, level, i, ukey) {
        let (parent, file) = parent?;
        if let Some(r) = probe(Source::Table(parent, file, true))? {
            return Ok(Step::Answer(r));
        }
    }
    Ok(Step::Next)
}

/// The parents (with their references) of the virtual table `files(level)[index]`
/// whose slices hold `ukey`, in slice order.
fn parents_holding<'v>(
    version: &'v Version,
    level: usize,
    index: usize,
    ukey: &'v [u8],
) -> impl Iterator<Item = Result<(&'v FileMetaData, Option<&'v FileRef>)>> {
    version.slices(level, index).filter_map(move |s| match s {
        Ok(s) => s.slice.contains(ukey).then_some(Ok((s.parent, s.file))),
        Err(e) => Some(Err(e)),
    })
}

/// [`probe_level`] from a level of several runs down: one [`Source::Merged`] of the
/// file of each run of each of `levels` whose fence pointers can hold the key (for a
/// virtual table of a row run, its parents whose slices hold it, after `meet`). Not
/// probed if no run can.
///
/// Why the levels below too: a policy may compact the runs of a level one at a
/// time, so below the first level holding several runs a deeper level may hold a
/// newer entry of a key than a shallower one holds in another run, and a delete or a
/// `Put` met in one run must not end the walk before another run's newer entries are
/// read. Merged by internal key, the entries meet in sequence order, as a user
/// iterator, which merges every level, always read them (ARCHITECTURE §7.1.2).
#[cold]
fn probe_runs<R>(
    version: &Version,
    levels: std::ops::RangeInclusive<usize>,
    lookup: &LookupKey,
    meet: &mut impl FnMut(usize, usize),
    probe: &mut impl FnMut(Source<'_>) -> Result<Option<R>>,
) -> Result<Option<R>> {
    let ukey = lookup.user_key();
    let mut tables = Vec::new();
    let last = version.num_levels().saturating_sub(1);
    let levels = *levels.start()..=(*levels.end()).min(last);
    for (level, run) in levels.flat_map(|l| version.runs(l).map(move |r| (l, r))) {
        let i = run.find_file(lookup.internal_key());
        let Some(f) = run.files().get(i).filter(|f| ukey >= f.smallest_user_key()) else {
            continue;
        };
        if let FileKind::Real = f.kind {
            tables.push((level, &**f, run.file_ref(i)));
            continue;
        }
        // Virtual tables live only in the row run, whose index `slices` takes.
        meet(level, i);
        for parent in parents_holding(version, level, i, ukey) {
            let (parent, file) = parent?;
            tables.push((level, parent, file));
        }
    }
    if tables.is_empty() {
        return Ok(None);
    }
    probe(Source::Merged(&tables))
}

/// The sequence number of the newest version (put, delete, merge, or a range tombstone
/// covering it) of `lookup.user_key()` at or below `lookup`'s sequence, if that version
/// is newer than `floor`; `None` if the key has no version in `(floor, lookup's
/// sequence]`.
///
/// The sources are [`get`]'s, in its order, except that a table whose entries and
/// tombstones are all at or below `floor` (`largest_seqno <= floor`) is not opened: it
/// cannot hold a newer version, and if it holds the key, every source after it holds
/// only older versions (the first source holding a key, or a tombstone covering it,
/// holds its newest version). So the answer is exact, and a key written long before
/// `floor` costs memtable probes and in-memory checks of file metadata, not table
/// reads.
///
/// # Errors
/// `Corruption` or `Io` from a table read, as [`get`].
pub(crate) fn newer_sequence(
    inner: &DbInner,
    sv: &SuperVersion,
    lookup: &LookupKey,
    floor: SequenceNumber,
) -> Result<Option<SequenceNumber>> {
    newer_sequence_through(inner, sv, lookup, floor, usize::MAX)
}

/// [`newer_sequence`] over the memtables and levels `0..=deepest` only.
///
/// # Errors
/// As [`newer_sequence`].
pub(crate) fn newer_sequence_through(
    inner: &DbInner,
    sv: &SuperVersion,
    lookup: &LookupKey,
    floor: SequenceNumber,
    deepest: usize,
) -> Result<Option<SequenceNumber>> {
    let _purpose = IoPurpose::Get.enter();
    let (ukey, read_seq) = (lookup.user_key(), lookup.sequence());
    // A source's newest version of the key: its point entry or a covering tombstone.
    let newest_of = |point: Option<SequenceNumber>, rd: Option<&Fragments>| {
        let covering = rd.map_or(0, |rd| rd.max_covering(ukey, read_seq));
        point.max((covering > 0).then_some(covering))
    };
    let in_memtables = std::iter::once(&sv.mem)
        .chain(sv.imm.iter())
        .find_map(|mem| newest_of(mem.newest_sequence(lookup), mem.range_dels().as_deref()));
    let newest = match in_memtables {
        Some(seq) => Some(seq),
        None => probe_tables(
            &sv.version,
            lookup,
            deepest,
            |_, _| {},
            |source| {
                let newest_in = |f: &FileMetaData, file: Option<&FileRef>| {
                    if f.largest_seqno <= floor {
                        return Ok(None);
                    }
                    let table = inner.table_cache.get_pinned(f, file)?;
                    let point = table.get(lookup.internal_key(), |ikey, _| key::sequence(ikey))?;
                    Ok(newest_of(point, table.range_dels()))
                };
                match source {
                    Source::Table(f, file, parent) => {
                        if parent && f.largest_seqno > floor {
                            Statistics::add(&inner.stats.local().virtual_parents_probed, 1);
                        }
                        newest_in(f, file)
                    }
                    // Of one level's runs, the newest version is the newest of any run.
                    Source::Merged(tables) => tables
                        .iter()
                        .try_fold(None, |acc, &(_, f, file)| Ok(acc.max(newest_in(f, file)?))),
                }
            },
        )?,
    };
    Ok(newest.filter(|&seq| seq > floor))
}

/// The hook an iterator's level iterators call on each virtual table they open: ask
/// for its compaction ([`ask_compaction`]). It holds the database weakly: an iterator
/// that outlives its database asks nothing.
fn ask_on_open(inner: &Arc<DbInner>, family: &Arc<Family>) -> OpenHook {
    let (inner, family) = (Arc::downgrade(inner), Arc::clone(family));
    Box::new(move |version, level, index| {
        if let Some(inner) = inner.upgrade() {
            ask_compaction(&inner, &family, version, level, index);
        }
    })
}

/// Builds the user iterator: a merge of every source, pinned until dropped.
pub(crate) fn iter(
    inner: &Arc<DbInner>,
    family: &Arc<Family>,
    ro: &ReadOptions,
) -> Result<DbIterator> {
    iter_partial(inner, family, ro, None)
}

/// [`iter`] over what `partial` wants of the values (`None`: all of them): the runs
/// of the groups it does not read are not opened.
pub(crate) fn iter_partial(
    inner: &Arc<DbInner>,
    family: &Arc<Family>,
    ro: &ReadOptions,
    partial: Option<&dyn PartialRead>,
) -> Result<DbIterator> {
    let reads = |group: u32| group == ALL_COLUMNS || partial.is_none_or(|r| r.reads_group(group));
    let _purpose = IoPurpose::Scan.enter();
    let (seq, sv) = read_view(inner, ro, || family.super_version.load_full())?;
    let filter = SnapshotFilter {
        enabled: family.opts.snapshot_filter,
        seq,
    };
    let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
    // Range tombstones of every source, visible at `seq` (the iterator hides what they
    // cover); tables are opened for this only if their metadata counts tombstones.
    let mut tombstones: Vec<RangeTombstone> = Vec::new();
    let mut gather = |frags: &Fragments| {
        tombstones.extend(frags.tombstones().filter(|t| t.seq <= seq));
    };
    for m in std::iter::once(&sv.mem).chain(sv.imm.iter()) {
        if !filter.skips_memtable(m, &inner.stats) {
            children.push(Box::new(m.iter()));
            if let Some(rd) = m.range_dels() {
                gather(&rd);
            }
        }
    }
    let lower = ro.lower_bound.as_deref();
    let upper = ro.upper_bound.as_deref();
    let out_of_bounds = |f: &FileMetaData| {
        lower.is_some_and(|l| f.largest_user_key() < l)
            || upper.is_some_and(|u| f.smallest_user_key() >= u)
    };
    for (i, f) in sv.version.files(0).iter().enumerate() {
        if out_of_bounds(f) || filter.skips(f, &inner.stats) {
            continue;
        }
        let table = inner.table_cache.get_pinned(f, sv.version.file_ref(0, i))?;
        if let Some(rd) = table.range_dels() {
            gather(rd);
        }
        children.push(Box::new(table.iter()));
    }
    for level in 1..sv.version.num_levels() {
        let runs = sv.version.runs(level).filter(|r| reads(r.group()));
        for (run, (i, f)) in runs.flat_map(|r| r.files().iter().enumerate().map(move |f| (r, f))) {
            if f.num_range_deletions == 0 || out_of_bounds(f) || filter.skips(f, &inner.stats) {
                continue;
            }
            if let FileKind::Real = f.kind {
                let table = inner.table_cache.get_pinned(f, run.file_ref(i))?;
                if let Some(rd) = table.range_dels() {
                    gather(rd);
                }
                continue;
            }
            // A virtual table's tombstones are its parents', clipped to its slices.
            for s in sv.version.slices(level, i) {
                let s = s?;
                if s.parent.num_range_deletions == 0 || filter.skips(s.parent, &inner.stats) {
                    continue;
                }
                let table = inner.table_cache.get_pinned(s.parent, s.file)?;
                if let Some(rd) = table.range_dels() {
                    gather(&rd.clip(Some(&s.slice.smallest), Some(&s.slice.end_bound())));
                }
            }
        }
    }
    let range_dels = (!tombstones.is_empty()).then(|| Fragments::new(&tombstones));
    let num_levels = sv.version.num_levels();
    // The levels from `teed` down, if a tee asks for them (`db::scan_tee`): merged
    // apart, read without the snapshot filter, shown to the tee.
    let tee = inner
        .scan_tees
        .tee(&ScanStart {
            db: inner,
            family,
            version: &sv.version,
        })
        .filter(|(level, _)| (1..num_levels).contains(level));
    let teed_from = tee.as_ref().map_or(num_levels, |(level, _)| *level);
    // One iterator per run of the level that holds files (`version::run`).
    let level_iter = |level: usize, filter: SnapshotFilter| {
        let (version, tables) = (&sv.version, &inner.table_cache);
        let stats = &inner.stats;
        let runs = version
            .runs(level)
            .enumerate()
            .filter(move |(_, r)| !r.is_empty() && reads(r.group()));
        runs.map(move |(run, _)| -> Box<dyn InternalIterator> {
            let (version, tables) = (Arc::clone(version), Arc::clone(tables));
            let (at, stats) = ((level, run), Arc::clone(stats));
            // A run of real files only reads them with no dispatch on the file's kind.
            match run == 0 && version.has_virtual_tables(level) {
                false => Box::new(LevelIterator::<TableIterator>::new(
                    version, at, tables, filter, stats,
                )),
                true => Box::new(
                    LevelIterator::<AnyTable>::new(version, at, tables, filter, stats)
                        .on_open_virtual(ask_on_open(inner, family)),
                ),
            }
        })
    };
    for level in 1..teed_from {
        children.extend(level_iter(level, filter));
    }
    if let Some((_, tee)) = tee {
        let unfiltered = SnapshotFilter {
            enabled: false,
            seq,
        };
        let deeper: Vec<Box<dyn InternalIterator>> = (teed_from..num_levels)
            .flat_map(|l| level_iter(l, unfiltered))
            .collect();
        children.push(Box::new(TeeIterator::new(
            MergingIterator::new(deeper),
            tee,
        )));
    }
    Ok(DbIterator::new(
        MergingIterator::new(children),
        seq,
        ro.lower_bound.clone(),
        ro.upper_bound.clone(),
        sv,
        ro.snapshot.clone(),
        Resolver {
            merge_operator: family.opts.merge_operator.clone(),
            range_dels,
            expiry: ReadClock::for_family(&family.opts),
        },
    ))
}

mod multi_get;
pub(crate) mod read_pool;
pub(crate) use multi_get::multi_get;

#[cfg(test)]
mod compacted_runs_tests;
#[cfg(test)]
mod runs_tests;
#[cfg(test)]
pub(crate) mod tests;
