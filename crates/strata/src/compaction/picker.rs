//! The leveled compaction picker: pure policy functions that map an immutable
//! [`Version`] (plus options and what is already running) to a [`Plan`].
//!
//! Role: the background scheduler calls [`pick`] (or [`pick_manual`] for
//! `compact_range`) with the current version and a [`Busy`] set describing running
//! compactions; it registers the returned plan in `Busy` and hands it to the compaction
//! executor, which runs it and emits a `VersionEdit`. The write path calls [`scores`]
//! and [`pending_compaction_bytes`] to decide on write slowdowns. Nothing here does
//! I/O or takes a lock, so policies can be tested with hand-built versions and
//! simulated without files.
//!
//! # Policy (RocksDB's leveled compaction, static level targets)
//! - Level targets: L1 = `max_bytes_for_level_base`, L*i* = L*i−1* ×
//!   `max_bytes_for_level_multiplier` × the level's additional factor, a tiered
//!   tree's last fast level stretched to fill its fast budget ([`level_targets`]).
//! - Scores: L0 = file count / `level0_file_num_compaction_trigger`; L*i* = bytes /
//!   target; the last level scores 0 because it never compacts further ([`scores`]).
//! - [`pick`] tries levels by score, highest first, among those scoring >= 1. L0→L1
//!   takes every L0 file plus the overlapping L1 files. L*i*→L*i+1* takes one file,
//!   chosen by [`CompactionPriority`], plus the overlapping files of L*i+1*.
//! - A plan whose inputs are pairwise disjoint, overlap nothing in the output level and
//!   at most ten target files' bytes in the level below it (LevelDB's
//!   `IsTrivialMove`) is a trivial move ([`Action::TrivialMove`]): the files move down
//!   by metadata only.
//!   Their entries stay as they are: GC would only drop versions no snapshot needs, at
//!   the cost of rewriting every byte.
//! - Each plan has one output stream: the output level's row stream, cut by the
//!   partitioning `Options::output_partitioning` selects ([`partitioner::for_compaction`]).
//!
//! # Invariants every plan satisfies
//! 1. No input file (in either level) is in [`Busy::files`]: a file is compacted by one
//!    job at a time. Inputs are two runs: the input level's files, then the output
//!    level's files overlapping them (possibly none).
//! 2. The plan's user-key range (inputs ∪ output-level inputs) does not intersect any
//!    [`Busy::output_ranges`] entry of the same output level: two jobs never write
//!    overlapping files into one level, which would break `Version`'s L1+ invariant.
//! 3. The output-level run holds *all* files of the output level overlapping the
//!    inputs' range, so the output can replace them without overlapping anything left
//!    behind.
//! 4. An L0 plan never leaves behind an L0 file that overlaps its range: automatic L0
//!    plans take all of L0; manual ones widen the range until closed (see
//!    [`pick_manual`]). Otherwise an older L0 file left in place would shadow newer data
//!    moved down.
//! 5. `bottommost` is true iff no file below the output level intersects the plan's
//!    range, so a tombstone written there shadows nothing and may be dropped (once no
//!    snapshot needs it; that check belongs to the job).
//!
//! Concurrency: pure functions over shared immutable data; call from any thread.
//!
//! See also: the golden tests in `picker/tests.rs`.

use super::partitioner;
use super::placement::PlacementPolicy;
use super::plan::{Action, Input, OutputRange, OutputStream, Plan, Reason, Routing};
use crate::options::{CompactionPriority, Options};
use crate::tiering::TierLayout;
use crate::version::{FileMetaData, Version};
use std::collections::HashSet;
use std::sync::Arc;

/// What running compactions hold, so the picker can avoid conflicts.
///
/// Owned by the scheduler (under the database's state lock): add a plan with
/// [`Busy::add_plan`] when it starts and remove it with [`Busy::remove_plan`] when its
/// edit is installed or it fails.
#[derive(Clone, Debug, Default)]
pub struct Busy {
    /// Numbers of every input file of every running compaction.
    pub files: HashSet<u64>,
    /// Where each running compaction's output streams write (level, column group,
    /// user keys).
    pub output_ranges: Vec<OutputRange>,
}

impl Busy {
    /// Records `plan` as running: its input files, and each output stream's key range
    /// in its level ([`Plan::stream_ranges`]).
    pub fn add_plan(&mut self, plan: &Plan) {
        self.files.extend(plan.input_files().map(|(_, f)| f.number));
        self.output_ranges.extend(plan.stream_ranges());
    }

    /// Forgets `plan` (previously added with [`Busy::add_plan`]).
    pub fn remove_plan(&mut self, plan: &Plan) {
        for (_, f) in plan.input_files() {
            self.files.remove(&f.number);
        }
        for range in plan.stream_ranges() {
            if let Some(i) = self.output_ranges.iter().position(|r| *r == range) {
                self.output_ranges.swap_remove(i);
            }
        }
    }

    /// True iff `plan` would conflict with a running job: an input file of it is
    /// busy, or a stream's range meets a running job's output range in the same run
    /// (level and column group; invariants 1–2, for every stream). Jobs writing
    /// different runs of a level do not conflict: each run is sorted on its own. A
    /// policy that adds a stream to a plan the picker built checks the result with
    /// this.
    pub fn conflicts(&self, plan: &Plan) -> bool {
        self.any_busy(plan.input_files().map(|(_, f)| f))
            || plan.stream_ranges().iter().any(|s| {
                self.output_ranges
                    .iter()
                    .any(|r| r.level == s.level && r.group == s.group && r.meets(&s.lo, &s.hi))
            })
    }

    fn any_busy<'a>(&self, mut files: impl Iterator<Item = &'a Arc<FileMetaData>>) -> bool {
        files.any(|f| self.files.contains(&f.number))
    }

    /// True iff a job holds `f` as an input.
    pub fn is_busy(&self, f: &FileMetaData) -> bool {
        self.files.contains(&f.number)
    }

    /// True iff a job writes an output range of `output_level`, in any of its runs,
    /// that meets `[lo, hi]`.
    pub fn output_conflict(&self, output_level: usize, lo: &[u8], hi: &[u8]) -> bool {
        self.output_ranges
            .iter()
            .any(|r| r.level == output_level && r.meets(lo, hi))
    }
}

/// Target size in bytes of each level, indexed by level (`opts.num_levels` entries):
/// the `series_targets`, stretched from a tiered tree's last fast level down so the
/// fast levels fill the fast budget (`tiering::TierLayout`).
pub fn level_targets(opts: &Options) -> Vec<u64> {
    let mut targets = series_targets(opts);
    if let Some(layout) = TierLayout::of(opts) {
        layout.stretch_targets(&mut targets);
    }
    targets
}

/// The level targets as RocksDB's static series gives them: L0 is 0 (unused; L0 is
/// scored by file count), L1 = `max_bytes_for_level_base`, L*i* = L*i−1* ×
/// `max_bytes_for_level_multiplier` × `max_bytes_for_level_multiplier_additional[i −
/// 1]` (1 past its end), saturating at `u64::MAX`.
pub(crate) fn series_targets(opts: &Options) -> Vec<u64> {
    let mut out = Vec::with_capacity(opts.num_levels);
    let mut target = opts.max_bytes_for_level_base;
    for level in 0..opts.num_levels {
        match level {
            0 => out.push(0),
            1 => out.push(target),
            _ => {
                let additional = opts
                    .max_bytes_for_level_multiplier_additional
                    .get(level - 1)
                    .copied()
                    .unwrap_or(1.0);
                // `as` saturates for floats out of range.
                target = (target as f64 * opts.max_bytes_for_level_multiplier * additional) as u64;
                out.push(target);
            }
        }
    }
    out
}

/// Compaction score of each level of `version` (>= 1 means the level wants
/// compaction): L0 = files / `level0_file_num_compaction_trigger`; L1+ = bytes of all
/// its files (busy ones included) / target; the last level always 0.
pub fn scores(version: &Version, opts: &Options) -> Vec<f64> {
    let targets = level_targets(opts);
    let n = version.num_levels();
    (0..n)
        .map(|level| {
            if level + 1 >= n {
                0.0
            } else if level == 0 {
                version.files(0).len() as f64
                    / opts.level0_file_num_compaction_trigger.max(1) as f64
            } else {
                let target = targets.get(level).copied().unwrap_or(u64::MAX).max(1);
                version.level_bytes(level) as f64 / target as f64
            }
        })
        .collect()
}

/// Picks the most urgent compaction that conflicts with nothing in `busy`, or `None`.
///
/// Levels scoring >= 1 are tried highest score first (ties: lower level first); the
/// first level that yields a conflict-free plan wins. See the module docs for how each
/// level's plan is formed and the invariants every plan satisfies.
///
/// `placement` names each plan's output path.
pub fn pick(
    version: &Version,
    opts: &Options,
    placement: &dyn PlacementPolicy,
    busy: &Busy,
) -> Option<Plan> {
    pick_sized(version, opts, placement, busy, &|f| f.size)
}

/// [`pick`], with `size(f)` as the size by which a file of L1+ is chosen within its
/// level (the denominator of `MinOverlappingRatio`): a policy that charges a file
/// more than its own bytes (a virtual table, its share of the garbage it keeps alive)
/// picks it sooner without a picker of its own. Level scores still count bytes.
pub fn pick_sized(
    version: &Version,
    opts: &Options,
    placement: &dyn PlacementPolicy,
    busy: &Busy,
    size: &dyn Fn(&FileMetaData) -> u64,
) -> Option<Plan> {
    let level_scores = scores(version, opts);
    let mut order: Vec<(usize, f64)> = level_scores
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, s)| s >= 1.0)
        .collect();
    order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    order.into_iter().find_map(|(level, _)| {
        if level == 0 {
            let inputs = version.files(0).to_vec();
            build(
                version,
                opts,
                placement,
                0,
                inputs,
                busy,
                Reason::L0FileCount,
            )
        } else {
            pick_file(version, opts, placement, level, busy, size)
        }
    })
}

/// Plans the next step of a manual compaction of the user-key range `[begin, end]`
/// (inclusive; `None` = unbounded) from `level` into `level + 1`; the caller repeats
/// until no file of `level` overlaps the range.
///
/// For L0, the first file in range that no job holds, with its range widened until no
/// L0 file outside the plan overlaps it (LevelDB's `GetOverlappingInputs` rule;
/// invariant 4): one group of mutually overlapping L0 files per plan. For L1 and
/// deeper, one file: the first in range that no job holds. So a file (or L0 group)
/// that overlaps nothing below moves by metadata, and a rewrite takes only the files
/// below that it overlaps (RocksDB splits manual compactions too, by
/// `max_compaction_bytes`), instead of rewriting the whole next level at once.
///
/// Returns `None` if `level` is the last level (it never compacts further), if no file
/// overlaps, or if the plan would conflict with `busy` (the caller retries later).
pub fn pick_manual(
    version: &Version,
    opts: &Options,
    placement: &dyn PlacementPolicy,
    level: usize,
    begin: Option<&[u8]>,
    end: Option<&[u8]>,
    busy: &Busy,
) -> Option<Plan> {
    if level + 1 >= version.num_levels() {
        return None;
    }
    let free = version
        .overlapping_files(level, begin, end)
        .into_iter()
        .find(|f| !busy.any_busy(std::iter::once(f)))?;
    let inputs = if level == 0 {
        l0_closure(
            version,
            Some(free.smallest_user_key()),
            Some(free.largest_user_key()),
        )
    } else {
        vec![free]
    };
    if inputs.is_empty() {
        return None;
    }
    build(
        version,
        opts,
        placement,
        level,
        inputs,
        busy,
        Reason::Manual,
    )
}

/// Estimated bytes that compaction must rewrite before every level is within its target
/// (RocksDB's `EstimateCompactionBytesNeeded`, with L1 as the base level):
///
/// - L0 counts if it has reached its file-count trigger or holds at least
///   `max_bytes_for_level_base` bytes: then all L0 bytes plus all L1 bytes are needed
///   (L0→L1 rewrites both), and L0's bytes are carried into L1's size.
/// - For each level L*i* from L1 to the second-to-last, with size = its bytes plus what
///   is carried in from above: if size exceeds the target, the excess `x` is carried to
///   L*i+1* and `x × (bytes(L*i+1*) / size + 1)` is added: moving `x` down rewrites `x`
///   plus the overlapping share of the next level (the fan-out ratio).
///
/// Used for the soft/hard pending-compaction-bytes write limits; it is an estimate,
/// not a count.
pub fn pending_compaction_bytes(version: &Version, opts: &Options) -> u64 {
    let targets = level_targets(opts);
    let n = version.num_levels();
    let l0_bytes = version.level_bytes(0);
    let l0_triggered = version.files(0).len() >= opts.level0_file_num_compaction_trigger
        || l0_bytes >= opts.max_bytes_for_level_base;
    let mut total: u64 = 0;
    let mut carried: u64 = 0;
    if l0_triggered {
        total = l0_bytes;
        carried = l0_bytes;
    }
    for level in 1..n.saturating_sub(1) {
        let own = version.level_bytes(level);
        if level == 1 && l0_triggered {
            total = total.saturating_add(own);
        }
        let size = own.saturating_add(carried);
        carried = 0;
        let target = targets.get(level).copied().unwrap_or(u64::MAX);
        if size > target {
            carried = size - target;
            let next = version.level_bytes(level + 1);
            if next > 0 {
                let ratio = next as f64 / size as f64 + 1.0;
                total = total.saturating_add((carried as f64 * ratio) as u64);
            }
        }
    }
    total
}

/// The smallest and largest user key of `files`; `None` if empty.
pub(crate) fn user_range<'a>(
    files: impl Iterator<Item = &'a Arc<FileMetaData>>,
) -> Option<(&'a [u8], &'a [u8])> {
    files.fold(None, |acc, f| {
        let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
        Some(match acc {
            None => (lo, hi),
            Some((a, b)) => (a.min(lo), b.max(hi)),
        })
    })
}

/// Every L0 file overlapping `[begin, end]`, widening the range to each picked file's
/// range until no further L0 file overlaps (invariant 4).
pub(crate) fn l0_closure(
    version: &Version,
    begin: Option<&[u8]>,
    end: Option<&[u8]>,
) -> Vec<Arc<FileMetaData>> {
    closure(begin, end, |lo, hi| version.overlapping_files(0, lo, hi)).0
}

/// Every file of every run of `level` overlapping `[begin, end]` widened until no
/// file of any run of `level` or of `level + 1` straddles it. A job moving these
/// files into every run of the next level then meets, in each run of both levels,
/// either all of a key's entries or none: it can leave no run of `level` holding a
/// newer part of a key whose older parts it folds below (`version::run`,
/// ARCHITECTURE §7.1.2).
pub(crate) fn runs_closure(
    version: &Version,
    level: usize,
    begin: Option<&[u8]>,
    end: Option<&[u8]>,
) -> Vec<Arc<FileMetaData>> {
    let (_, lo, hi) = closure(begin, end, |lo, hi| {
        let mut files = version.overlapping_in_runs(level, lo, hi);
        files.extend(version.overlapping_in_runs(level + 1, lo, hi));
        files
    });
    version.overlapping_in_runs(level, lo.as_deref(), hi.as_deref())
}

/// The files `files_in` gives for `[begin, end]`, the range widened to their user
/// keys until it no longer grows; with the final range (`None`: unbounded).
#[allow(clippy::type_complexity)]
fn closure(
    begin: Option<&[u8]>,
    end: Option<&[u8]>,
    files_in: impl Fn(Option<&[u8]>, Option<&[u8]>) -> Vec<Arc<FileMetaData>>,
) -> (Vec<Arc<FileMetaData>>, Option<Vec<u8>>, Option<Vec<u8>>) {
    let mut lo = begin.map(<[u8]>::to_vec);
    let mut hi = end.map(<[u8]>::to_vec);
    loop {
        let files = files_in(lo.as_deref(), hi.as_deref());
        let Some((flo, fhi)) = user_range(files.iter()) else {
            return (files, lo, hi);
        };
        let mut widened = false;
        if lo.as_deref().is_some_and(|l| flo < l) {
            lo = Some(flo.to_vec());
            widened = true;
        }
        if hi.as_deref().is_some_and(|h| fhi > h) {
            hi = Some(fhi.to_vec());
            widened = true;
        }
        if !widened {
            return (files, lo, hi);
        }
    }
}

/// Picks one file of `level` (L1+) by `opts.compaction_priority` (each file weighing
/// `size(f)`), skipping candidates whose plan would conflict with `busy`.
fn pick_file(
    version: &Version,
    opts: &Options,
    placement: &dyn PlacementPolicy,
    level: usize,
    busy: &Busy,
    size: &dyn Fn(&FileMetaData) -> u64,
) -> Option<Plan> {
    let output_level = level + 1;
    if output_level >= version.num_levels() {
        return None;
    }
    let files = version.files(level);
    // (priority key, index in level): smaller key = picked first; ties keep key order.
    let mut candidates: Vec<(u64, usize)> = files
        .iter()
        .enumerate()
        .filter(|(_, f)| !busy.files.contains(&f.number))
        .map(|(i, f)| {
            let key = match opts.compaction_priority {
                CompactionPriority::MinOverlappingRatio => {
                    let overlap = version
                        .overlapping_files(
                            output_level,
                            Some(f.smallest_user_key()),
                            Some(f.largest_user_key()),
                        )
                        .iter()
                        .fold(0u64, |acc, o| acc.saturating_add(o.size));
                    overlap.saturating_mul(1024) / size(f).max(1)
                }
                CompactionPriority::OldestSmallestSeqFirst => f.smallest_seqno,
            };
            (key, i)
        })
        .collect();
    candidates.sort_unstable();
    candidates.into_iter().find_map(|(_, i)| {
        let f = files.get(i)?;
        build(
            version,
            opts,
            placement,
            level,
            vec![Arc::clone(f)],
            busy,
            Reason::LevelSize,
        )
    })
}

/// Completes a plan for `inputs` of `level` into `level + 1`, or `None` if it would
/// conflict with `busy` (invariants 1–2) or `inputs` is empty.
pub(crate) fn build(
    version: &Version,
    opts: &Options,
    placement: &dyn PlacementPolicy,
    level: usize,
    inputs: Vec<Arc<FileMetaData>>,
    busy: &Busy,
    reason: Reason,
) -> Option<Plan> {
    let output_level = level + 1;
    // Row runs only: a level holding column-group runs belongs to the policy that
    // wrote them (`version::run`).
    if output_level >= version.num_levels()
        || busy.any_busy(inputs.iter())
        || version.has_group_runs(level)
        || version.has_group_runs(output_level)
    {
        return None;
    }
    let (lo, hi) = user_range(inputs.iter())?;
    let output_level_inputs = version.overlapping_files(output_level, Some(lo), Some(hi));
    if busy.any_busy(output_level_inputs.iter()) {
        return None;
    }
    let (lo, hi) = user_range(inputs.iter().chain(&output_level_inputs))?;
    let grandparents = version.overlapping_files(output_level + 1, Some(lo), Some(hi));
    let grandparent_bytes: u64 = grandparents.iter().map(|f| f.size).sum();
    let bottommost = !version.overlaps_below(output_level, lo, hi);
    let stream = OutputStream::for_level(
        opts,
        output_level,
        placement.path_for_level(version, opts, output_level),
        partitioner::for_compaction(opts, grandparents),
    );
    // A manual compaction with a compaction filter rewrites what it moves down, so
    // the filter sees it (RocksDB's rule for `CompactRange` with a filter).
    let filter_wants_rewrite = reason == Reason::Manual && opts.compaction_filter_factory.is_some();
    let action = if output_level_inputs.is_empty()
        && disjoint(&inputs)
        && inputs.iter().all(|f| f.path_id == stream.path_id)
        && grandparent_bytes <= max_grandparent_overlap_bytes(opts)
        && !filter_wants_rewrite
    {
        Action::TrivialMove
    } else {
        Action::Rewrite
    };
    let plan = Plan {
        action,
        inputs: vec![
            Input::Files {
                level,
                files: inputs,
            },
            Input::Files {
                level: output_level,
                files: output_level_inputs,
            },
        ],
        outputs: vec![stream],
        routing: Routing::single(),
        bottommost,
        log_number: None,
        reason,
        range: None,
    };
    (!busy.conflicts(&plan)).then_some(plan)
}

/// The most grandparent bytes a trivially moved file may overlap (LevelDB's
/// `MaxGrandParentOverlapBytes`: ten target files). A file moved down over more would
/// make the next compaction out of its new level rewrite all of them at once; a
/// rewrite instead cuts it into files aligned with the grandparents.
pub(crate) fn max_grandparent_overlap_bytes(opts: &Options) -> u64 {
    opts.target_file_size_base.saturating_mul(10)
}

/// True iff the files' user-key ranges are pairwise disjoint.
fn disjoint(files: &[Arc<FileMetaData>]) -> bool {
    let mut sorted: Vec<&Arc<FileMetaData>> = files.iter().collect();
    sorted.sort_by(|a, b| a.smallest_user_key().cmp(b.smallest_user_key()));
    sorted
        .windows(2)
        .all(|w| matches!(w, [a, b] if a.largest_user_key() < b.smallest_user_key()))
}

/// A rewrite of `files` (contiguous files of `level`, in key order) into real tables
/// of `level` itself, or `None` if `files` is empty or the plan would conflict with
/// `busy` (a file held by a job, or a job writing into `level` across their range).
/// The output replaces exactly the range `files` held, so nothing in the level
/// overlaps it afterwards.
pub(crate) fn rewrite_in_place(
    version: &Version,
    opts: &Options,
    placement: &dyn PlacementPolicy,
    level: usize,
    files: Vec<Arc<FileMetaData>>,
    busy: &Busy,
    reason: Reason,
) -> Option<Plan> {
    let (first, last) = (files.first()?, files.last()?);
    let (lo, hi) = (first.smallest_user_key(), last.largest_user_key());
    // Row runs only, as the picker (`version::run`): a level of column-group runs
    // belongs to the policy that wrote them.
    if files.iter().any(|f| busy.is_busy(f))
        || busy.output_conflict(level, lo, hi)
        || version.has_group_runs(level)
    {
        return None;
    }
    let below = version.overlapping_files(level + 1, Some(lo), Some(hi));
    let bottommost = !version.overlaps_below(level, lo, hi);
    let stream = OutputStream::for_level(
        opts,
        level,
        placement.path_for_level(version, opts, level),
        partitioner::for_compaction(opts, below),
    );
    Some(Plan {
        action: Action::Rewrite,
        inputs: vec![Input::Files { level, files }],
        outputs: vec![stream],
        routing: Routing::single(),
        bottommost,
        log_number: None,
        reason,
        range: None,
    })
}

/// [`rewrite_in_place`] of the first table of `level` in `[begin, end]` numbered below
/// `created_before` that no job holds and whose range no job writes into at `level`,
/// or `None` if there is none. One table per plan: a plan over several would have to
/// be refused whole when a job writes into a gap between them.
pub(crate) fn rewrite_older_in_place(
    version: &Version,
    opts: &Options,
    placement: &dyn PlacementPolicy,
    level: usize,
    (begin, end): (Option<&[u8]>, Option<&[u8]>),
    busy: &Busy,
    created_before: u64,
) -> Option<Plan> {
    version
        .overlapping_files(level, begin, end)
        .into_iter()
        .filter(|f| f.number < created_before && !busy.is_busy(f))
        .find_map(|f| {
            rewrite_in_place(
                version,
                opts,
                placement,
                level,
                vec![f],
                busy,
                Reason::Manual,
            )
        })
}

/// A rewrite in place of the first table due by age (`requests`, sampled with
/// `periodic_compaction_seconds`) that is still in its level and that no job holds,
/// or `None`. Its output is new, so it is not due again for a whole period.
pub(crate) fn pick_aged(
    version: &Version,
    opts: &Options,
    placement: &dyn PlacementPolicy,
    busy: &Busy,
    requests: &super::requests::Requests,
) -> Option<Plan> {
    requests.aged().find_map(|(level, number)| {
        let f = version.files(level).iter().find(|f| f.number == number)?;
        if busy.is_busy(f) {
            return None;
        }
        let files = vec![Arc::clone(f)];
        rewrite_in_place(
            version,
            opts,
            placement,
            level,
            files,
            busy,
            Reason::Periodic,
        )
    })
}

#[cfg(test)]
mod tests;
