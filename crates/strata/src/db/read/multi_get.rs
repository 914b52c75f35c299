//! Batched point lookups ([`crate::Db::multi_get`]): one read sequence and one
//! super-version for the whole batch, the keys sorted once, and the tables walked
//! level by level for every key of the batch before the next level.
//!
//! Each key meets exactly the sources a [`super::get`] would, in the same order
//! (memtables, then L0 newest first, then one table per deeper level), with its own
//! merge operands and range-tombstone floor, so every answer is the one `get` gives at
//! the batch's sequence number. What the batch changes is the order of work: all keys
//! finish the memtables, then all unresolved keys probe L0, then L1, and so on, in key
//! order. Consecutive probes then go to the same level's fence pointers and, for keys
//! close together, to the same table, index block and data block while they are hot
//! in the CPU's caches; and the super-version, the snapshot and the purpose guard are
//! paid once per batch.
//!
//! **Reads issued together** ([`read_ahead`]). Where tables are read with direct I/O,
//! each block a probe reads waits for the device, one after another. So before the
//! keys probe a level, the batch finds, for every key still open, the data block its
//! probe will most likely read from the file: it walks the tables [`probe_level`]
//! gives the probe, through the same walk, up to the first one whose filter passes
//! (where the probe most likely stops; every table of a merged source), with
//! `Table::block_to_fetch` for the filter, the index and the cache; and it has the
//! database's [`super::read_pool::ReadPool`] read those blocks at once into the block
//! cache, at most a quarter of the cache's capacity of them. The probes then find
//! them there. The read-ahead only warms the cache: it decides nothing, and a block it
//! failed to read (or that was evicted meanwhile) is read again by its probe, which
//! reports any error. A block read ahead counts as a cache miss and a block read, and
//! its probe's lookup as a hit; `multi_get_blocks_read_ahead` counts those read.

use super::{
    ask_compaction, get_from_memtables, probe, probe_level, read_view, resolve, MergedTable,
    Pending, Probe, Source, Step,
};
use crate::db::family::Family;
use crate::db::DbInner;
use crate::error::Result;
use crate::expiry::ReadClock;
use crate::key::LookupKey;
use crate::options::ReadOptions;
use crate::snapshot_filter::SnapshotFilter;
use crate::sst::footer::BlockHandle;
use crate::sst::{Fetch, Table};
use crate::stats::purpose::IoPurpose;
use crate::stats::Statistics;
use crate::version::Version;
use std::cell::RefCell;
use std::sync::Arc;

thread_local! {
    /// Lookup keys reused from batch to batch: a batch allocates no key once warm
    /// (one allocation per key cost ~10% of a cached batch in `perf`).
    static KEYS: RefCell<Vec<LookupKey>> = const { RefCell::new(Vec::new()) };
}

/// One key of the batch on its way through the sources.
struct Lookup {
    /// Its position in the caller's batch.
    index: usize,
    key: LookupKey,
    p: Pending<'static>,
    /// Whether it met a virtual table, and whether it asked for a compaction (each at
    /// most once per key, as `get` does).
    met_virtual: bool,
    asked: bool,
    /// `Some(base)` once a source decided it (the chain's base; `None` base for a
    /// delete).
    base: Option<Option<Vec<u8>>>,
    /// The error of a source that could not be read: the key's answer.
    failed: Option<crate::error::Error>,
}

/// The values of `keys` (each as [`super::get`] would give it) at one sequence number,
/// in the caller's order.
pub(crate) fn multi_get(
    inner: &DbInner,
    family: &Family,
    ro: &ReadOptions,
    keys: &[&[u8]],
) -> Vec<Result<Option<Vec<u8>>>> {
    let _purpose = IoPurpose::Get.enter();
    Statistics::add(&inner.stats.local().gets, keys.len() as u64);
    // One view for the batch, taken as `get` takes its view (a secondary's gate).
    let (seq, sv) = match read_view(inner, ro, || family.super_version.load()) {
        Ok(view) => view,
        Err(e) => return keys.iter().map(|_| Err(e.duplicate())).collect(),
    };
    let filter = SnapshotFilter {
        enabled: family.opts.snapshot_filter,
        seq,
    };
    let mut answers: Vec<Option<Result<Option<Vec<u8>>>>> = keys.iter().map(|_| None).collect();
    let mut order: Vec<(usize, &[u8])> = keys.iter().copied().enumerate().collect();
    order.sort_by(|a, b| a.1.cmp(b.1));
    let mut pending: Vec<Lookup> = Vec::with_capacity(keys.len());
    let mut spare = KEYS.with(|k| std::mem::take(&mut *k.borrow_mut()));
    for (index, user_key) in order {
        let mut key = spare.pop().unwrap_or_default();
        key.set(user_key, seq);
        let mut p = Pending::default();
        let answer = match get_from_memtables(inner, family, &sv, &key, filter, &mut p) {
            Ok(Some(answer)) => Ok(answer),
            Ok(None) => {
                pending.push(Lookup {
                    index,
                    key,
                    p,
                    met_virtual: false,
                    asked: false,
                    base: None,
                    failed: None,
                });
                continue;
            }
            Err(e) => Err(e),
        };
        spare.push(key);
        if let Some(slot) = answers.get_mut(index) {
            *slot = Some(answer);
        }
    }
    let version = &sv.version;
    for level in 0..version.num_levels() {
        if family.opts.use_direct_reads {
            read_ahead(inner, version, level, &pending, filter);
        }
        for l in pending.iter_mut() {
            if l.base.is_some() || l.failed.is_some() {
                continue;
            }
            let Lookup {
                key,
                p,
                met_virtual,
                asked,
                ..
            } = l;
            let mut meet = |lv: usize, i: usize| {
                if !*met_virtual {
                    *met_virtual = true;
                    Statistics::add(&inner.stats.local().gets_through_virtual, 1);
                }
                if !*asked {
                    *asked = ask_compaction(inner, family, version, lv, i);
                }
            };
            let mut probe_one = |source: Source<'_>| {
                Ok(match probe(inner, source, key, filter, p)? {
                    Probe::Found(v) => Some(v),
                    Probe::Absent => None,
                })
            };
            match probe_level(version, level, key, usize::MAX, &mut meet, &mut probe_one) {
                Ok(Step::Answer(base)) => l.base = Some(base),
                // The walk read every level: the chain ends without a base.
                Ok(Step::Ended) => l.base = Some(None),
                Ok(Step::Next) => {}
                Err(e) => l.failed = Some(e),
            }
        }
    }
    for l in pending {
        let answer = match l.failed {
            Some(e) => Err(e),
            None => resolve(family, l.key.user_key(), l.base.flatten().as_deref(), &l.p),
        };
        spare.push(l.key);
        if let Some(slot) = answers.get_mut(l.index) {
            *slot = Some(answer);
        }
    }
    KEYS.with(|k| *k.borrow_mut() = spare);
    let answers = answers.into_iter().map(|a| a.unwrap_or(Ok(None)));
    let answers: Vec<_> = match ReadClock::for_family(&family.opts) {
        Some(clock) => answers
            .zip(keys)
            .map(|(a, key)| clock.answer(key, a?))
            .collect(),
        None => answers.collect(),
    };
    #[cfg(feature = "metrics")]
    family.metrics.got_many(&answers);
    answers
}

/// Reads into the block cache, together, the data blocks that the probes of `level`
/// by the open keys of `pending` will read from files opened with direct I/O (see
/// the module docs). Errors are left to the probes.
fn read_ahead(
    inner: &DbInner,
    version: &Version,
    level: usize,
    pending: &[Lookup],
    filter: SnapshotFilter,
) {
    let mut wanted: Vec<(Arc<Table>, BlockHandle)> = Vec::new();
    for l in pending
        .iter()
        .filter(|l| l.base.is_none() && l.failed.is_none())
    {
        let mut gather = |source: Source<'_>| -> Result<Option<()>> {
            let (one, merged): ([MergedTable<'_>; 1], bool);
            let tables: &[MergedTable<'_>] = match source {
                Source::Table(f, file, _) => {
                    (one, merged) = ([(level, f, file)], false);
                    &one
                }
                Source::Merged(tables) => {
                    merged = true;
                    tables
                }
            };
            for &(_, f, file) in tables {
                if filter.would_skip(f) {
                    continue;
                }
                let Ok(table) = inner.table_cache.get_pinned(f, file) else {
                    // The probe opens it and reports the error; it may stop there.
                    return Ok(Some(()));
                };
                let fetch = table.block_to_fetch(l.key.internal_key());
                if let Fetch::Read(handle) = fetch {
                    if table.is_direct() {
                        wanted.push((Arc::clone(&table), handle));
                    }
                }
                // A table whose filter passes most likely holds the key: the probe
                // stops there (a merged source reads every table it names).
                if fetch != Fetch::Excluded && !merged {
                    return Ok(Some(()));
                }
            }
            Ok(None)
        };
        let _ = probe_level(
            version,
            level,
            &l.key,
            usize::MAX,
            &mut |_, _| {},
            &mut gather,
        );
    }
    wanted.sort_by_key(|(t, h)| (t.file_number(), h.offset));
    wanted.dedup_by_key(|(t, h)| (t.file_number(), h.offset));
    // At most a quarter of the cache, so the blocks read ahead are still there when
    // their probes come (the rest are read by the probes).
    let room = inner.block_cache.as_ref().map_or(0, |c| c.capacity() / 4) as u64;
    let mut bytes = 0u64;
    wanted.retain(|(_, h)| {
        bytes += h.size;
        bytes <= room
    });
    // One block is read by its probe as well as here.
    if wanted.len() < 2 {
        return;
    }
    let read = inner.read_pool.read_all(wanted);
    Statistics::add(&inner.stats.local().multi_get_blocks_read_ahead, read);
}
