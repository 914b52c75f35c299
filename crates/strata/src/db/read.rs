//! The read path: point lookups and iterator construction. Takes no lock.
//!
//! Sources, newest first: the active memtable, immutable memtables (newest first), L0
//! tables (newest first; their sequence ranges are disjoint because L0 only receives
//! flushes), then one table per deeper level, found by binary search on the fence
//! pointers (file key ranges). Per table the filter chain is: key range → snapshot
//! filter → the table pinned by the file's reference (the table cache only on its
//! first open, ARCHITECTURE §5.5) → bloom filter → index → data block. The first
//! source holding a version of the key visible at the read's sequence number answers.
//!
//! Consistency: the sequence number is loaded *before* the super-version. Every write
//! at or below that number was in a memtable of a super-version installed before the
//! number was published, and anything later is at least as new, so the loaded view
//! holds every visible write (in a memtable or in a table flushed from it).

use super::{DbInner, DbIterator, SuperVersion};
use crate::error::Result;
use crate::iter::{InternalIterator, LevelIterator, MergingIterator};
use crate::key::{self, LookupKey, SequenceNumber, ValueKind};
use crate::memtable::MemGet;
use crate::options::ReadOptions;
use crate::snapshot_filter::SnapshotFilter;
use crate::stats::Statistics;
use crate::version::file_ref::FileRef;
use crate::version::{FileMetaData, Version};
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

/// Point lookup. See the module docs for the order of sources.
pub(crate) fn get(inner: &DbInner, ro: &ReadOptions, user_key: &[u8]) -> Result<Option<Vec<u8>>> {
    let seq = read_sequence(inner, ro);
    let sv = inner.super_version.load();
    Statistics::add(&inner.stats.local().gets, 1);
    LOOKUP.with(|cell| {
        let mut lookup = cell.borrow_mut();
        lookup.set(user_key, seq);
        let filter = SnapshotFilter {
            enabled: inner.opts.snapshot_filter,
            seq,
        };
        for mem in std::iter::once(&sv.mem).chain(sv.imm.iter()) {
            if filter.skips_memtable(mem, &inner.stats) {
                continue;
            }
            match mem.get(&lookup) {
                MemGet::Found(v) => return Ok(Some(v.to_vec())),
                MemGet::Deleted => return Ok(None),
                MemGet::NotFound => {}
            }
        }
        get_from_version(inner, &sv.version, &lookup, filter)
    })
}

/// What a table said about a key.
enum Probe {
    Absent,
    Found(Option<Vec<u8>>),
}

fn probe(
    inner: &DbInner,
    f: &FileMetaData,
    file: Option<&FileRef>,
    lookup: &LookupKey,
    filter: SnapshotFilter,
) -> Result<Probe> {
    if filter.skips(f, &inner.stats) {
        return Ok(Probe::Absent);
    }
    let table = inner.table_cache.get_pinned(f, file)?;
    let hit = table.get(
        lookup.internal_key(),
        |ikey, value| match key::parse_internal_key(ikey).map(|p| p.kind) {
            Some(ValueKind::Put) | Some(ValueKind::Merge) => Some(value.to_vec()),
            _ => None,
        },
    )?;
    Ok(match hit {
        Some(v) => Probe::Found(v),
        None => Probe::Absent,
    })
}

// Called once per get, inside the thread-local's closure: inlined, the probe loop
// shares `get`'s frame (callgrind: about 100 instructions per get fewer than a call).
#[inline]
fn get_from_version(
    inner: &DbInner,
    version: &Version,
    lookup: &LookupKey,
    filter: SnapshotFilter,
) -> Result<Option<Vec<u8>>> {
    let found = probe_tables(version, lookup, |level, i, f| {
        Ok(match probe(inner, f, version.file_ref(level, i), lookup, filter)? {
            Probe::Found(v) => Some(v),
            Probe::Absent => None,
        })
    })?;
    Ok(found.flatten())
}

/// Calls `probe(level, index, file)` on every table that may hold `lookup`'s user key,
/// newest first, until one returns `Some` (the answer): each L0 file whose key range
/// holds the key (L0 is ordered newest first), then on each deeper level the one file
/// whose fence pointers can hold it. The read path's one definition of where a key
/// can be; the conflict check of transactions ([`newer_sequence`]) walks it too.
#[inline]
fn probe_tables<R>(
    version: &Version,
    lookup: &LookupKey,
    mut probe: impl FnMut(usize, usize, &FileMetaData) -> Result<Option<R>>,
) -> Result<Option<R>> {
    let ukey = lookup.user_key();
    for (i, f) in version.files(0).iter().enumerate() {
        if ukey < f.smallest_user_key() || ukey > f.largest_user_key() {
            continue;
        }
        if let Some(r) = probe(0, i, f)? {
            return Ok(Some(r));
        }
    }
    for level in 1..version.num_levels() {
        let files = version.files(level);
        let i = version.find_file(level, lookup.internal_key());
        let Some(f) = files.get(i) else { continue };
        if ukey < f.smallest_user_key() {
            continue;
        }
        if let Some(r) = probe(level, i, f)? {
            return Ok(Some(r));
        }
    }
    Ok(None)
}

/// The sequence number of the newest version (put, delete or merge) of
/// `lookup.user_key()` at or below `lookup`'s sequence, if that version is newer than
/// `floor`; `None` if the key has no version in `(floor, lookup's sequence]`.
///
/// The sources are [`get`]'s, in its order, except that a table whose entries are all
/// at or below `floor` (`largest_seqno <= floor`) is not opened: it cannot hold a newer
/// version, and if it holds the key, every source after it holds only older versions
/// (the first source holding a key holds its newest version). So the answer is exact,
/// and a key written long before `floor` costs memtable probes and in-memory checks
/// of file metadata, not table reads.
///
/// # Errors
/// `Corruption` or `Io` from a table read, as [`get`].
pub(crate) fn newer_sequence(
    inner: &DbInner,
    sv: &SuperVersion,
    lookup: &LookupKey,
    floor: SequenceNumber,
) -> Result<Option<SequenceNumber>> {
    let in_memtables = std::iter::once(&sv.mem)
        .chain(sv.imm.iter())
        .find_map(|mem| mem.newest_sequence(lookup));
    let newest = match in_memtables {
        Some(seq) => Some(seq),
        None => probe_tables(&sv.version, lookup, |level, i, f| {
            if f.largest_seqno <= floor {
                return Ok(None);
            }
            let table = inner
                .table_cache
                .get_pinned(f, sv.version.file_ref(level, i))?;
            table.get(lookup.internal_key(), |ikey, _| key::sequence(ikey))
        })?,
    };
    Ok(newest.filter(|&seq| seq > floor))
}

/// Builds the user iterator: a merge of every source, pinned until dropped.
pub(crate) fn iter(inner: &DbInner, ro: &ReadOptions) -> Result<DbIterator> {
    let seq = read_sequence(inner, ro);
    let sv = inner.super_version.load_full();
    let filter = SnapshotFilter {
        enabled: inner.opts.snapshot_filter,
        seq,
    };
    let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
    for m in std::iter::once(&sv.mem).chain(sv.imm.iter()) {
        if !filter.skips_memtable(m, &inner.stats) {
            children.push(Box::new(m.iter()));
        }
    }
    let lower = ro.lower_bound.as_deref();
    let upper = ro.upper_bound.as_deref();
    for (i, f) in sv.version.files(0).iter().enumerate() {
        let out_of_bounds = lower.is_some_and(|l| f.largest_user_key() < l)
            || upper.is_some_and(|u| f.smallest_user_key() >= u);
        if out_of_bounds || filter.skips(f, &inner.stats) {
            continue;
        }
        let table = inner.table_cache.get_pinned(f, sv.version.file_ref(0, i))?;
        children.push(Box::new(table.iter()));
    }
    for level in 1..sv.version.num_levels() {
        if sv.version.files(level).is_empty() {
            continue;
        }
        children.push(Box::new(LevelIterator::new(
            Arc::clone(&sv.version),
            level,
            Arc::clone(&inner.table_cache),
            filter,
            Arc::clone(&inner.stats),
        )));
    }
    Ok(DbIterator::new(
        MergingIterator::new(children),
        seq,
        ro.lower_bound.clone(),
        ro.upper_bound.clone(),
        sv,
        ro.snapshot.clone(),
    ))
}
