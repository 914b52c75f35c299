//! Tiering's tree hooks (`db::tree_hooks`): a family in [`TieringMode::HotRap`] gets
//! its own RALT, fed by the family's table reads, hot-aware picking at its last fast
//! level, and retention in every compaction from there into the first slow one.

use super::promotion_cache::{Inserted, PromotionCache, Refused, ENTRY_OVERHEAD, MAX_VALUE};
use super::ralt::{Ralt, RaltOptions};
use super::retention::Retention;
use super::router::Keep;
use super::time_aware::TimeAware;
use super::{HotSetLimit, TierLayout, Tiered, Tiering, TieringMode};
use crate::compaction::picker;
use crate::compaction::picker::Busy;
use crate::compaction::plan::Routing;
use crate::compaction::plan::{Action, Input, Plan, Reason};
use crate::db::tree_hooks::{Copies, Copy, TableRead, TreeHooks, TreeHooksFactory};
use crate::env::FileSystem;
use crate::error::{Error, Result};
use crate::filename::Dirs;
use crate::key::{SequenceNumber, ValueKind};
use crate::memtable::MemTable;
use crate::options::Options;
use crate::version::Version;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The tiering component of the tree-hooks seam: HotRAP's hooks for every family
/// whose `Options::tiering` is in [`TieringMode::HotRap`], time-aware tiering's
/// (`time_aware.rs`) in [`TieringMode::TimeAware`], none for any other. The
/// database's default.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct TieringHooks;

impl TreeHooksFactory for TieringHooks {
    fn hooks_for(
        &self,
        opts: &Options,
        fs: &Arc<dyn FileSystem>,
        dirs: &Dirs,
        (family_id, last_sequence): (u32, SequenceNumber),
    ) -> Result<Option<Arc<dyn TreeHooks>>> {
        let Some(tiering) = opts.tiering else {
            return Ok(None);
        };
        let layout = TierLayout::of(opts).ok_or_else(|| {
            Error::InvalidArgument("tiering: the fast budget holds no level".into())
        })?;
        match tiering.mode {
            TieringMode::HotRap => {}
            TieringMode::TimeAware { window } => {
                return Ok(Some(Arc::new(TimeAware::new(
                    window,
                    last_sequence,
                    tiering,
                    layout.last_fast_level,
                    opts,
                ))))
            }
            _ => return Ok(None),
        }
        let fast_dir = usize::try_from(tiering.fast_path)
            .ok()
            .and_then(|i| dirs.tables.get(i))
            .ok_or_else(|| Error::InvalidArgument("tiering.fast_path names no data path".into()))?;
        // A subdirectory: `remove_orphans` never lists it, and no name in it parses
        // as a table, WAL or MANIFEST.
        let dir = fast_dir.join(format!("ralt-{family_id}"));
        let mut ralt_opts = RaltOptions::new(tiering.budget(opts));
        if let HotSetLimit::Fixed(limit) = tiering.hot_set_limit {
            ralt_opts.auto_tune = false;
            ralt_opts.hot_limit = limit;
        }
        let ralt = Ralt::open(Arc::clone(fs), &dir, ralt_opts)?;
        Ok(Some(Arc::new(HotRap {
            ralt: Arc::new(ralt),
            cache: PromotionCache::new(opts.target_file_size_base),
            // Values with deadlines get the built-in expiry filter (`Family::new`).
            filtered: opts.compaction_filter_factory.is_some() || opts.expiring_values,
            counters: Counters::default(),
            tiering,
            last_fast_level: layout.last_fast_level,
            opts: opts.clone(),
        })))
    }
}

/// What one family's hooks counted (exact; `DbStats::tree_hooks`).
#[derive(Debug, Default)]
struct Counters {
    /// Gets answered by a table of the fast tier.
    gets_fast: AtomicU64,
    /// Gets answered by the promotion cache.
    gets_cache: AtomicU64,
    /// Gets answered by a table of the slow tier.
    gets_slow: AtomicU64,
    /// Copies inserted into the promotion cache.
    cache_inserts: AtomicU64,
    /// Inserts refused by the epoch check (P2).
    cache_refused_epoch: AtomicU64,
    /// Inserts refused because the cache was full.
    cache_refused_full: AtomicU64,
    /// Cold copies a full cache shed.
    cache_shed: AtomicU64,
    /// Plans registered with the cache (each bumps its epoch).
    cache_registrations: AtomicU64,
    /// Bytes (keys and values) registrations took out of the cache.
    cache_taken_bytes: AtomicU64,
    /// Records and bytes of those that joined a retaining compaction.
    promoted_by_compaction: AtomicU64,
    promoted_by_compaction_bytes: AtomicU64,
    /// Caches sealed when full.
    cache_seals: AtomicU64,
    /// Hot copies of sealed caches handed to the flush thread.
    flush_candidates: AtomicU64,
    /// Of those, dropped for a version in the memtables or fast levels.
    flush_dropped_newer: AtomicU64,
    /// Of those, dropped for a registration since the seal.
    flush_dropped_registered: AtomicU64,
    /// L0 tables written by promotion, and their records and bytes.
    promotion_flushes: AtomicU64,
    promoted_by_flush: AtomicU64,
    promoted_by_flush_bytes: AtomicU64,
    /// Copies put back into the cache (too few to fill half a table).
    cache_put_back: AtomicU64,
    /// Copies of sealed caches dropped unchecked (promotion by flush off).
    cache_discarded: AtomicU64,
    /// Size-triggered compactions out of the last fast level re-picked by hotness.
    hot_aware_repicks: AtomicU64,
    /// Bytes (newest record's key and value) retaining plans kept in the fast tier
    /// that were not promoted copies.
    retained_bytes: Arc<AtomicU64>,
}

fn bump(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

/// One HotRAP family's hooks.
#[derive(Debug)]
struct HotRap {
    ralt: Arc<Ralt>,
    cache: PromotionCache,
    /// The family has a compaction filter: the cache takes no copies.
    filtered: bool,
    counters: Counters,
    tiering: Tiering,
    last_fast_level: usize,
    opts: Options,
}

impl HotRap {
    /// HotRAP's file choice at the last fast level (§3.5): files ranked by
    /// [`benefit`], ties (all-hot files, whose benefit is 0) by the bytes each would
    /// rewrite per byte of its own, the first whose plan does not conflict chosen.
    /// `None` to keep `plan`: it is not one file out of the last fast level, or the
    /// choice is the same file, or no file's plan could run.
    ///
    /// Departure: where the paper falls back to the oldest file when no benefit is
    /// positive, this ranks by overlap: the oldest file of the last fast level is the
    /// one retention keeps writing back (its records keep their old sequence numbers),
    /// so the fallback picked hot files again and again.
    fn hot_aware_pick(&self, plan: &Plan, version: &Version, busy: &Busy) -> Option<Plan> {
        let level = self.last_fast_level;
        let picked = match plan.inputs.first() {
            Some(Input::Files { level: l, files }) if *l == level && files.len() == 1 => {
                files.first()?.number
            }
            _ => return None,
        };
        let mut ranked: Vec<(f64, f64, &Arc<crate::version::FileMetaData>)> = version
            .files(level)
            .iter()
            .filter(|f| !busy.is_busy(f))
            .map(|f| {
                let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
                let (_, hot_records) = self.ralt.range_hot(lo, hi);
                let overlap: u64 = version
                    .overlapping_files(level + 1, Some(lo), Some(hi))
                    .iter()
                    .map(|o| o.size)
                    .sum();
                let ratio = overlap as f64 / f.size.max(1) as f64;
                (
                    benefit(f.size, f.num_entries, hot_records, overlap),
                    ratio,
                    f,
                )
            })
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.total_cmp(&b.1)));
        let best = ranked.into_iter().find_map(|(_, _, f)| {
            let one = vec![Arc::clone(f)];
            let plan = picker::build(version, &self.opts, &Tiered, level, one, busy, plan.reason);
            plan.map(|p| (f.number, p))
        })?;
        (best.0 != picked).then_some(best.1)
    }
}

/// True iff a table of copies added to `l0_files` tables would bring L0 to the count
/// that slows writers (`level0_slowdown_writes_trigger`) while L0 already waits for a
/// compaction (`level0_file_num_compaction_trigger`): promotion by flush then waits
/// (the sealed batches stay queued until an install shows L0 drained), so that it
/// never starts slowing the family's writers by L0 count (not in the paper, whose
/// machine compacts faster than its writers fill L0). The second half keeps it from
/// waiting for good: with the two triggers equal, L0 may rest one table short of
/// both, and nothing would ever compact it (found by review).
fn l0_backed_up(l0_files: usize, opts: &Options) -> bool {
    l0_files + 1 >= opts.level0_slowdown_writes_trigger
        && l0_files >= opts.level0_file_num_compaction_trigger
}

/// HotRAP's benefit of compacting a file of `size` bytes and `entries` records out of
/// the last fast level over `overlap` bytes of the next (§3.5): its cold bytes per
/// byte the compaction rewrites, `size · (1 − hot share) / (size + overlap)`. The hot
/// share is RALT's hot records in the file's range over its entries, capped at 1 (the
/// paper's benefit is zero at worst): RALT counts whole blocks at the range's edges,
/// so a small file's estimate may exceed its entries, and an uncapped share made
/// every such benefit negative and the ranking prefer the files with the most
/// overlap: in the RW diagnostic of docs/experiments/hotrap.md the run's compactions
/// wrote 14–23% more bytes and inserts stalled (p99.9 2.8–2.9 s against 1.2–1.3 s
/// capped).
fn benefit(size: u64, entries: u64, hot_records: u64, overlap: u64) -> f64 {
    let share = (hot_records as f64 / entries.max(1) as f64).min(1.0);
    size as f64 * (1.0 - share) / size.saturating_add(overlap).max(1) as f64
}

impl HotRap {
    /// True iff promotion by flush is on and must wait for L0 in `version` to drain.
    fn waits_for_l0(&self, version: &Version) -> bool {
        self.tiering.promote_by_flush && l0_backed_up(version.files(0).len(), &self.opts)
    }

    /// The retention router of a plan, `promoted` wanted as well as RALT's hot keys
    /// (those only with retention on).
    fn router(
        &self,
        retention: &Retention,
        promoted: BTreeSet<Vec<u8>>,
    ) -> Arc<super::router::RetentionRouter> {
        let ralt = self.tiering.retain.then(|| Arc::clone(&self.ralt));
        retention.router(
            Keep::Hot { ralt, promoted },
            Arc::clone(&self.counters.retained_bytes),
        )
    }

    /// True iff a copy taken from the cache is promoted: hit since its insert, or hot
    /// in RALT, or any copy with the hotness check off.
    fn promotes(&self, key: &[u8], hits: u32) -> bool {
        !self.tiering.hotness_check || hits > 0 || self.ralt.is_hot(key)
    }

    /// True iff `plan` is one [`HotRap::adjust_plan`] made retaining: the picker's slow
    /// stream and a bounded fast stream into the last fast level.
    fn is_retaining(&self, plan: &Plan) -> bool {
        matches!(plan.outputs.as_slice(), [slow, fast]
            if slow.level == self.last_fast_level + 1
                && fast.level == self.last_fast_level
                && fast.path_id == self.tiering.fast_path
                && fast.bounds.is_some())
    }

    /// True iff `plan` must be registered with the promotion cache (P2): it writes
    /// below the last fast level and reads from the fast tier (so a newer version may
    /// reach the slow tier), or it drops files below the last fast level (a drop
    /// deletes what a newer range tombstone above hides; once the originals are gone,
    /// the tombstone itself may be dropped as bottommost in the fast tier, and the
    /// copy would answer again: found by review).
    fn must_register(&self, plan: &Plan) -> bool {
        let fast = self.last_fast_level;
        let writes_slow = plan.outputs.iter().any(|o| o.level > fast);
        let reads_fast = plan.inputs.iter().any(|i| match i {
            Input::Files { level, .. } => *level <= fast,
            Input::Memtable(_) => true,
        });
        let drops_slow =
            plan.action == Action::Drop && plan.input_files().any(|(level, _)| level > fast);
        (writes_slow && reads_fast) || drops_slow
    }
}

impl TreeHooks for HotRap {
    fn read_token(&self) -> u64 {
        self.cache.epoch()
    }

    /// Every table answer is an access in RALT; one from the slow tier is offered to
    /// the promotion cache (when plain and under 16 KiB, as the authors' code). True
    /// when the insert sealed the cache: the flush thread has copies to check.
    fn table_read(&self, read: &TableRead<'_>) -> bool {
        self.ralt.access(read.user_key, read.value.len());
        let c = &self.counters;
        if read.level <= self.last_fast_level {
            bump(&c.gets_fast, 1);
            return false;
        }
        bump(&c.gets_slow, 1);
        // With a compaction filter, no copies: a filter changes an original only when
        // its plan installs, after the plan registered, which the epoch check cannot
        // see (a get sampling after the registration could still read and copy the
        // old value); and a filter run on a promoted copy would write a tombstone at
        // the original's own sequence number (found by review).
        if !read.plain || read.value.len() >= MAX_VALUE || self.filtered {
            return false;
        }
        let insert = || {
            self.cache
                .insert(read.user_key, read.seq, read.value, read.token)
        };
        let mut result = insert();
        if result == Err(Refused::Full) {
            // Full with the queue of sealed batches full: shed the copies promotion
            // would not take (neither hit since their insert nor hot in RALT), then try
            // once more.
            let shed = self.cache.shed(|key, hits| self.promotes(key, hits));
            bump(&c.cache_shed, shed);
            if shed > 0 {
                result = insert();
            }
        }
        match result {
            Ok(Inserted::Added) => bump(&c.cache_inserts, 1),
            Ok(Inserted::Sealed) => {
                bump(&c.cache_inserts, 1);
                bump(&c.cache_seals, 1);
                return true;
            }
            Err(Refused::Epoch) => bump(&c.cache_refused_epoch, 1),
            Err(Refused::Full) => bump(&c.cache_refused_full, 1),
        }
        false
    }

    /// A sealed batch, unless promotion by flush waits for L0 in `version` to drain.
    fn has_copies(&self, version: &Version) -> bool {
        self.cache.has_sealed() && !self.waits_for_l0(version)
    }

    /// Promotion by flush (§3.4), the checker's part: the oldest sealed cache's hot
    /// copies (hit by a get, or hot in RALT; all with the hotness check off), to be
    /// checked against the memtables and fast levels. With promotion by flush off, the
    /// batch is dropped (the copies are only copies: a hot key comes back with its next
    /// read); while L0 in `version` is [`l0_backed_up`], it stays queued.
    fn take_copies(&self, version: &Version) -> Option<Copies> {
        if self.waits_for_l0(version) {
            return None;
        }
        let (epoch, batch) = self.cache.take_sealed()?;
        if !self.tiering.promote_by_flush {
            bump(&self.counters.cache_discarded, batch.len() as u64);
            return None;
        }
        let records: Vec<Copy> = batch
            .into_iter()
            .filter(|t| self.promotes(&t.key, t.hits))
            .map(|t| Copy {
                key: t.key,
                seq: t.seq,
                value: t.value,
            })
            .collect();
        bump(&self.counters.flush_candidates, records.len() as u64);
        (!records.is_empty()).then_some(Copies {
            records,
            check_through: self.last_fast_level,
            path_id: self.tiering.fast_path,
            batch: epoch,
        })
    }

    /// Drops the survivors a registration since the seal overlaps (P2's log); writes
    /// the rest if they fill half a table, else puts them back into the cache.
    fn copies_checked(&self, batch: u64, survivors: Vec<Copy>, dropped: usize) -> Vec<Copy> {
        let c = &self.counters;
        bump(&c.flush_dropped_newer, dropped as u64);
        let offered = survivors.len();
        let kept = self.cache.checked(batch, survivors, |c| c.key.as_slice());
        bump(&c.flush_dropped_registered, (offered - kept.len()) as u64);
        let bytes: u64 = kept
            .iter()
            .map(|c| (c.key.len() + c.value.len()) as u64)
            .sum();
        // Half the cache, measured as the cache measures (with its per-entry charge:
        // else small records could never fill half a table; found by review).
        let charged = bytes + kept.len() as u64 * ENTRY_OVERHEAD;
        if charged.saturating_mul(2) >= self.opts.target_file_size_base {
            bump(&c.promotion_flushes, 1);
            bump(&c.promoted_by_flush, kept.len() as u64);
            bump(&c.promoted_by_flush_bytes, bytes);
            return kept;
        }
        let back = self
            .cache
            .put_back(batch, kept.into_iter().map(|c| (c.key, c.seq, c.value)));
        bump(&c.cache_put_back, back);
        Vec::new()
    }

    fn source_after(&self) -> Option<usize> {
        Some(self.last_fast_level)
    }

    /// The promotion cache, right after the last fast level; a hit is an access.
    fn get_after(&self, user_key: &[u8], seq: SequenceNumber) -> Option<(SequenceNumber, Vec<u8>)> {
        let hit = self.cache.get(user_key, seq)?;
        bump(&self.counters.gets_cache, 1);
        self.ralt.access(user_key, hit.1.len());
        Some(hit)
    }

    /// A size-triggered compaction out of the last fast level is first re-picked by
    /// [`HotRap::hot_aware_pick`]. Then a rewrite from the last fast level into the
    /// next (one stream, the picker's, on the slow path) gains a second stream into
    /// the last fast level on the fast path, bounded to the range of the fast inputs,
    /// and the retention router, if RALT has hot records (retention on) or the
    /// promotion cache has copies (promotion by compaction on) in that range. Plans of
    /// any other shape, and a plan whose fast stream would conflict with a running
    /// job, are left as they are.
    fn adjust_plan(&self, plan: &mut Plan, version: &Version, busy: &Busy) {
        if plan.reason == Reason::LevelSize && self.tiering.hot_aware_pick {
            if let Some(better) = self.hot_aware_pick(plan, version, busy) {
                bump(&self.counters.hot_aware_repicks, 1);
                *plan = better;
            }
        }
        let Some(retention) = Retention::of(plan, self.last_fast_level) else {
            return;
        };
        // Nothing hot and nothing cached in the range: nothing to keep.
        let (lo, hi) = (&retention.lo, &retention.hi);
        let hot = self.tiering.retain && self.ralt.range_hot(lo, hi).0 > 0;
        let cached = self.tiering.promote_by_compaction && self.cache.holds_any(lo, hi);
        if !hot && !cached {
            return;
        }
        let at = (&self.opts, self.last_fast_level, self.tiering.fast_path);
        let router = self.router(&retention, BTreeSet::new());
        retention.add_to(plan, at, router, busy);
    }

    /// Registers every plan that may move records out of the fast tier with the
    /// promotion cache (P2), taking the copies in its range. A retaining plan gets the
    /// hot ones inside its fast inputs' range (RALT says hot, or the cache answered a
    /// get with it; any, with the hotness check off) as an input run after the fast
    /// inputs, at their own sequence numbers, and a router that sends them fast like
    /// hot keys (promotion by compaction, §3.3 steps 6–9); the rest are dropped (they
    /// are copies), as all are with promotion by compaction off. Each taken copy is an
    /// access in RALT.
    fn registering(&self, plan: &mut Plan) {
        if !self.must_register(plan) {
            return;
        }
        let Some((lo, hi)) = plan.user_key_range().map(|(a, b)| (a.to_vec(), b.to_vec())) else {
            return;
        };
        let taken = self.cache.register(&lo, &hi);
        let c = &self.counters;
        bump(&c.cache_registrations, 1);
        for t in &taken {
            bump(&c.cache_taken_bytes, (t.key.len() + t.value.len()) as u64);
            self.ralt.access(&t.key, t.value.len());
        }
        if !self.tiering.promote_by_compaction || !self.is_retaining(plan) {
            return;
        }
        let Some(retention) = Retention::of(plan, self.last_fast_level) else {
            return;
        };
        let promoted = MemTable::new();
        let mut keys = BTreeSet::new();
        for t in taken {
            if retention.range.contains(&t.key) && self.promotes(&t.key, t.hits) {
                bump(&c.promoted_by_compaction, 1);
                bump(
                    &c.promoted_by_compaction_bytes,
                    (t.key.len() + t.value.len()) as u64,
                );
                promoted.add(t.seq, ValueKind::Put, &t.key, &t.value);
                keys.insert(t.key);
            }
        }
        if keys.is_empty() {
            return;
        }
        plan.inputs.insert(1, Input::Memtable(Arc::new(promoted)));
        plan.routing = Routing::Keys(self.router(&retention, keys));
    }

    fn figures(&self) -> Vec<(&'static str, u64)> {
        let s = self.ralt.stats();
        let c = &self.counters;
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let (cache_entries, cache_bytes) = self.cache.size();
        vec![
            ("ralt_hot_bytes", s.hot_bytes),
            ("ralt_hot_limit", s.hot_limit),
            ("ralt_phys_bytes", s.phys_bytes),
            ("ralt_phys_limit", s.phys_limit),
            ("ralt_accesses", s.accesses),
            ("ralt_accesses_dropped", s.accesses_dropped),
            ("ralt_flushes", s.flushes),
            ("ralt_compactions", s.compactions),
            ("ralt_evictions", s.evictions),
            ("ralt_resets", s.resets),
            ("ralt_bytes_read", s.bytes_read),
            ("ralt_bytes_written", s.bytes_written),
            ("ralt_tick", s.tick),
            ("gets_fast", load(&c.gets_fast)),
            ("gets_cache", load(&c.gets_cache)),
            ("gets_slow", load(&c.gets_slow)),
            ("cache_entries", cache_entries),
            ("cache_bytes", cache_bytes),
            ("cache_inserts", load(&c.cache_inserts)),
            ("cache_refused_epoch", load(&c.cache_refused_epoch)),
            ("cache_refused_full", load(&c.cache_refused_full)),
            ("cache_shed", load(&c.cache_shed)),
            ("cache_registrations", load(&c.cache_registrations)),
            ("cache_taken_bytes", load(&c.cache_taken_bytes)),
            ("promoted_by_compaction", load(&c.promoted_by_compaction)),
            (
                "promoted_by_compaction_bytes",
                load(&c.promoted_by_compaction_bytes),
            ),
            ("cache_seals", load(&c.cache_seals)),
            ("flush_candidates", load(&c.flush_candidates)),
            ("flush_dropped_newer", load(&c.flush_dropped_newer)),
            (
                "flush_dropped_registered",
                load(&c.flush_dropped_registered),
            ),
            ("promotion_flushes", load(&c.promotion_flushes)),
            ("promoted_by_flush", load(&c.promoted_by_flush)),
            ("promoted_by_flush_bytes", load(&c.promoted_by_flush_bytes)),
            ("cache_put_back", load(&c.cache_put_back)),
            ("cache_discarded", load(&c.cache_discarded)),
            ("hot_aware_repicks", load(&c.hot_aware_repicks)),
            ("retained_bytes", load(&c.retained_bytes)),
        ]
    }

    fn close(&self) -> Result<()> {
        self.ralt.settle()
    }
}

#[cfg(test)]
mod tests;
