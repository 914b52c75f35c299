//! Tiering's tree hooks (`db::tree_hooks`): a family in [`TieringMode::HotRap`] gets
//! its own RALT, fed by the family's table reads, hot-aware picking at its last fast
//! level, and retention in every compaction from there into the first slow one.

use super::ralt::{Ralt, RaltOptions};
use super::router::{RetentionRouter, FAST, SLOW};
use super::{TierLayout, Tiered, Tiering, TieringMode};
use crate::compaction::executor::key_after;
use crate::compaction::picker;
use crate::compaction::picker::Busy;
use crate::compaction::plan::{Action, Input, KeyRange, OutputStream, Partitioning, Plan, Reason};
use crate::db::tree_hooks::{TreeHooks, TreeHooksFactory};
use crate::env::FileSystem;
use crate::error::{Error, Result};
use crate::filename::Dirs;
use crate::key::{self, ValueKind, MAX_SEQUENCE};
use crate::options::Options;
use crate::version::Version;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

/// The tiering component of the tree-hooks seam: hooks for every family whose
/// `Options::tiering` is in [`TieringMode::HotRap`], none for any other. The
/// database's default.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct TieringHooks;

impl TreeHooksFactory for TieringHooks {
    fn hooks_for(
        &self,
        opts: &Options,
        fs: &Arc<dyn FileSystem>,
        dirs: &Dirs,
        family_id: u32,
    ) -> Result<Option<Arc<dyn TreeHooks>>> {
        let Some(tiering) = opts.tiering.filter(|t| t.mode == TieringMode::HotRap) else {
            return Ok(None);
        };
        let layout = TierLayout::of(opts).ok_or_else(|| {
            Error::InvalidArgument("tiering: the fast budget holds no level".into())
        })?;
        let fast_dir = usize::try_from(tiering.fast_path)
            .ok()
            .and_then(|i| dirs.tables.get(i))
            .ok_or_else(|| Error::InvalidArgument("tiering.fast_path names no data path".into()))?;
        // A subdirectory: `remove_orphans` never lists it, and no name in it parses
        // as a table, WAL or MANIFEST.
        let dir = fast_dir.join(format!("ralt-{family_id}"));
        let ralt = Ralt::open(Arc::clone(fs), &dir, RaltOptions::new(tiering.budget(opts)))?;
        Ok(Some(Arc::new(HotRap {
            ralt: Arc::new(ralt),
            tiering,
            last_fast_level: layout.last_fast_level,
            opts: opts.clone(),
        })))
    }
}

/// One HotRAP family's hooks.
#[derive(Debug)]
struct HotRap {
    ralt: Arc<Ralt>,
    tiering: Tiering,
    last_fast_level: usize,
    opts: Options,
}

impl HotRap {
    /// HotRAP's file choice at the last fast level (§3.5): the file with the largest
    /// `(size − hot) / (size + overlapping bytes of the next level)`, `hot` being the
    /// share of its size RALT says is hot (hot records over entries: the same units as
    /// the file's size whatever its overheads). Departure: where the paper falls back
    /// to the oldest file when no benefit is positive, this keeps ranking by the
    /// (negative) benefit, unclamped: RALT's estimate counts whole edge blocks and may
    /// exceed a small file's entries, and the oldest file of the last fast level is
    /// the one retention keeps writing back (its records keep their old sequence
    /// numbers), so the fallback picked hot files again and again. `None` to keep
    /// `plan`: it is not one file out of the last fast level, or the choice is the
    /// same file, or its plan would conflict.
    fn hot_aware_pick(&self, plan: &Plan, version: &Version, busy: &Busy) -> Option<Plan> {
        let level = self.last_fast_level;
        let picked = match plan.inputs.first() {
            Some(Input::Files { level: l, files }) if *l == level && files.len() == 1 => {
                files.first()?.number
            }
            _ => return None,
        };
        let scored: Vec<(f64, &Arc<crate::version::FileMetaData>)> = version
            .files(level)
            .iter()
            .filter(|f| !busy.is_busy(f))
            .map(|f| {
                let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
                let (_, hot_records) = self.ralt.range_hot(lo, hi);
                let share = hot_records as f64 / f.num_entries.max(1) as f64;
                let overlap: u64 = version
                    .overlapping_files(level + 1, Some(lo), Some(hi))
                    .iter()
                    .map(|o| o.size)
                    .sum();
                let benefit = f.size as f64 * (1.0 - share) / (f.size + overlap).max(1) as f64;
                (benefit, f)
            })
            .collect();
        let best = scored
            .iter()
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, f)| *f)?;
        if best.number == picked {
            return None;
        }
        picker::build(
            version,
            &self.opts,
            &Tiered,
            level,
            vec![Arc::clone(best)],
            busy,
            Reason::LevelSize,
        )
    }
}

impl TreeHooks for HotRap {
    fn table_read(&self, user_key: &[u8], value_len: usize, _path_id: u32) {
        self.ralt.access(user_key, value_len);
    }

    /// A size-triggered compaction out of the last fast level is first re-picked by
    /// [`HotRap::hot_aware_pick`]. Then a rewrite from the last fast level into the
    /// next (one stream, the picker's, on the slow path) gains a second stream into
    /// the last fast level on the fast path, bounded to the range of the fast inputs,
    /// and the retention router. Plans of any other shape, and a plan whose fast stream
    /// would conflict with a running job, are left as they are.
    fn adjust_plan(&self, plan: &mut Plan, version: &Version, busy: &Busy) {
        let level = self.last_fast_level;
        if plan.reason == Reason::LevelSize {
            if let Some(better) = self.hot_aware_pick(plan, version, busy) {
                *plan = better;
            }
        }
        let fast_inputs = match plan.inputs.first() {
            Some(Input::Files { level: l, files }) if *l == level => files,
            _ => return,
        };
        let [slow] = plan.outputs.as_slice() else {
            return;
        };
        if plan.action != Action::Rewrite
            || plan.range.is_some()
            || slow.level != level + 1
            || slow.bounds.is_some()
        {
            return;
        }
        let (Some(lo), Some(hi)) = (
            fast_inputs.iter().map(|f| f.smallest_user_key()).min(),
            fast_inputs.iter().map(|f| f.largest_user_key()).max(),
        ) else {
            return;
        };
        // No table has a hot record in the range: nothing to keep.
        if self.ralt.range_hot(lo, hi).0 == 0 {
            return;
        }
        // What retention may write back: the level's target less what stays in it,
        // and at least half the fast inputs, so that each compaction shrinks a level
        // over its target by half its inputs or more (router.rs, Room).
        let input_bytes: u64 = fast_inputs.iter().map(|f| f.size).sum();
        let staying = version.level_bytes(level).saturating_sub(input_bytes);
        let target = picker::level_targets(&self.opts)
            .get(level)
            .copied()
            .unwrap_or(0);
        let room = target.saturating_sub(staying).max(input_bytes / 2);
        // The range ends after `hi`, unless a file's largest key is a range-tombstone
        // end sentinel: that end is exclusive, and the next file of the level may
        // start at that very key (retaining it would overlap that file).
        let end = fast_inputs
            .iter()
            .map(|f| match key::parse_internal_key(&f.largest) {
                Some(k) if k.kind == ValueKind::RangeDelete && k.seq == MAX_SEQUENCE => {
                    k.user_key.to_vec()
                }
                _ => key_after(f.largest_user_key()),
            })
            .max()
            .unwrap_or_else(|| key_after(hi));
        let range = KeyRange {
            start: Some(lo.to_vec()),
            end: Some(end),
        };
        let fast = OutputStream {
            bounds: Some(range.clone()),
            ..OutputStream::for_level(
                &self.opts,
                level,
                self.tiering.fast_path,
                Partitioning::Fixed {
                    target: self.opts.target_file_size_base,
                },
            )
        };
        let mut adjusted = plan.clone();
        adjusted.outputs.push(fast);
        debug_assert_eq!((SLOW, FAST), (0, adjusted.outputs.len() - 1));
        adjusted.router = Arc::new(RetentionRouter {
            ralt: Arc::clone(&self.ralt),
            range,
            seen_range: AtomicBool::new(false),
            room: AtomicU64::new(room),
        });
        if !busy.conflicts(&adjusted) {
            *plan = adjusted;
        }
    }

    fn figures(&self) -> Vec<(&'static str, u64)> {
        let s = self.ralt.stats();
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
        ]
    }

    fn close(&self) -> Result<()> {
        self.ralt.settle()
    }
}
