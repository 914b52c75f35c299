//! Query-driven compaction (Algorithm 1 of "Query-driven compaction in LSM-trees",
//! boundary files split): the plans that write a scan's merged entries back into the
//! tree, the trigger that declines unprofitable ones, and the staleness check a
//! write-back must pass before it is installed (ARCHITECTURE §6.12).
//!
//! Pure functions over immutable versions; `db::write_back` tees the scan, runs the
//! plans and installs them.
//!
//! # The plans of one write-back
//! A scan covered the user-key range `R = [a, b)`: the merged stream of the levels from
//! `start_level` down showed it every entry of those levels in `R`. The write-back is
//! one [`Plan`] per piece, installed as one edit:
//! - **main**: the files of levels `start_level..=deepest` overlapping `R` (`deepest`:
//!   the deepest level holding any), read from the scan's stream (not from disk),
//!   written into `deepest`, ranged to `R`. Nothing below `deepest` overlaps `R`, so it
//!   is bottommost.
//! - **remainders**: for each of those files that straddles an end of `R`, a ranged
//!   rewrite of its own entries outside `R` (one plan per side), into its own level.
//!   Remainders of different files are never merged: a key moved across a level whose
//!   file is not an input would land on the wrong side of another version of itself.
//!
//! Every input is deleted whole (plan invariant 5); [`WriteBack::check_complete`]
//! shows that the ranges reading each file cover it.

use super::partitioner;
use super::picker::Busy;
use super::placement::PlacementPolicy;
use super::plan::{Action, Input, KeyRange, OutputStream, Plan, Reason, Routing};
use crate::options::{Options, QueryCompaction};
use crate::version::{FileMetaData, Version};
use std::sync::Arc;

/// The plans of one write-back. See the module docs.
#[derive(Clone, Debug)]
pub(crate) struct WriteBack {
    /// The range's entries into the deepest level holding the range.
    pub main: Plan,
    /// The boundary files' parts outside the range, each at its own level.
    pub remainders: Vec<Plan>,
}

/// Why a covered range is not written back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decline {
    /// No file of the teed levels overlaps it.
    Empty,
    /// Fewer than `min_levels` levels above the deepest one hold data in it.
    Levels,
    /// Fewer than `min_bytes` merged bytes.
    Bytes,
    /// The files above the deepest level hold less than `profit` of its bytes.
    Profit,
    /// Fewer than `min_obsolete` of the merged entries are older versions.
    Obsolete,
    /// A teed level holds column-group runs, which only the policy that wrote them
    /// plans over (`version::run`).
    Runs,
}

/// The files of `level` whose user-key range meets the half-open `range`.
fn overlapping(version: &Version, level: usize, range: &KeyRange) -> Vec<Arc<FileMetaData>> {
    let mut files = version.overlapping_files(level, range.start.as_deref(), range.end.as_deref());
    // `overlapping_files` is inclusive of `end`; a file starting there is past `R`.
    if let Some(end) = &range.end {
        files.retain(|f| f.smallest_user_key() < end.as_slice());
    }
    files
}

/// What a scan merged from the teed levels in a covered range.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Merged {
    /// Key and value bytes of its entries.
    pub bytes: u64,
    /// Its entries.
    pub entries: u64,
    /// Of `entries`, those after the first of their user key: older versions (and
    /// merge operands) a write-back may drop.
    pub older: u64,
}

/// The write-back of `range`, covered by a scan of `version` that merged `merged`
/// from `q.start_level` down; or why not.
///
/// Requires: `range` is non-empty and `q.start_level >= 1` (the options validate it).
pub(crate) fn plan(
    version: &Version,
    opts: &Options,
    placement: &dyn PlacementPolicy,
    q: &QueryCompaction,
    range: &KeyRange,
    merged: &Merged,
) -> Result<WriteBack, Decline> {
    let teed = q.start_level.max(1)..version.num_levels();
    if teed.clone().any(|l| version.has_group_runs(l)) {
        return Err(Decline::Runs);
    }
    let levels: Vec<(usize, Vec<Arc<FileMetaData>>)> = teed
        .map(|l| (l, overlapping(version, l, range)))
        .filter(|(_, files)| !files.is_empty())
        .collect();
    let Some((deepest, _)) = levels.last() else {
        return Err(Decline::Empty);
    };
    let deepest = *deepest;
    if levels.len() - 1 < q.min_levels {
        return Err(Decline::Levels);
    }
    if merged.bytes < q.min_bytes {
        return Err(Decline::Bytes);
    }
    if (merged.older as f64) < q.min_obsolete * merged.entries as f64 {
        return Err(Decline::Obsolete);
    }
    let bytes = |files: &[Arc<FileMetaData>]| files.iter().map(|f| f.size).sum::<u64>();
    let total: u64 = levels.iter().map(|(_, f)| bytes(f)).sum();
    let above = total - levels.last().map_or(0, |(_, f)| bytes(f));
    if (above as f64) < q.profit * total as f64 {
        return Err(Decline::Profit);
    }
    let stream = |level: usize, lo: &[u8], hi: &[u8]| {
        OutputStream::for_level(
            opts,
            level,
            placement.path_for_level(version, opts, level),
            partitioner::for_compaction(
                opts,
                version.overlapping_files(level + 1, Some(lo), Some(hi)),
            ),
        )
    };
    let mut remainders = Vec::new();
    for (level, files) in &levels {
        for f in files {
            let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
            let below = range.start.as_ref().filter(|a| lo < a.as_slice());
            let above = range.end.as_ref().filter(|b| hi >= b.as_slice());
            let sides = [
                below.map(|a| KeyRange {
                    start: None,
                    end: Some(a.clone()),
                }),
                above.map(|b| KeyRange {
                    start: Some(b.clone()),
                    end: None,
                }),
            ];
            for side in sides.into_iter().flatten() {
                remainders.push(Plan {
                    action: Action::Rewrite,
                    inputs: vec![Input::Files {
                        level: *level,
                        files: vec![Arc::clone(f)],
                    }],
                    outputs: vec![stream(*level, lo, hi)],
                    routing: Routing::single(),
                    // Data of the remainder's keys may lie below its level.
                    bottommost: false,
                    log_number: None,
                    reason: Reason::ReadMerged,
                    range: Some(side),
                });
            }
        }
    }
    let (lo, hi) = span(levels.iter().flat_map(|(_, f)| f.iter()));
    let main = Plan {
        action: Action::Rewrite,
        inputs: levels
            .into_iter()
            .map(|(level, files)| Input::Files { level, files })
            .collect(),
        outputs: vec![stream(deepest, &lo, &hi)],
        routing: Routing::single(),
        bottommost: true,
        log_number: None,
        reason: Reason::ReadMerged,
        range: Some(range.clone()),
    };
    Ok(WriteBack { main, remainders })
}

/// The least smallest and greatest largest user key of `files` (empty for none).
fn span<'a>(files: impl Iterator<Item = &'a Arc<FileMetaData>>) -> (Vec<u8>, Vec<u8>) {
    let mut out: Option<(&[u8], &[u8])> = None;
    for f in files {
        let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
        out = Some(match out {
            None => (lo, hi),
            Some((a, b)) => (a.min(lo), b.max(hi)),
        });
    }
    out.map_or_else(Default::default, |(a, b)| (a.to_vec(), b.to_vec()))
}

impl WriteBack {
    /// Every plan: the main one first.
    pub(crate) fn plans(&self) -> impl Iterator<Item = &Plan> {
        std::iter::once(&self.main).chain(&self.remainders)
    }

    /// Every plan, mutably (for `TreeHooks::registering`): the main one first.
    pub(crate) fn plans_mut(&mut self) -> impl Iterator<Item = &mut Plan> {
        std::iter::once(&mut self.main).chain(&mut self.remainders)
    }

    /// The levels written: from the main plan's first input level to its output.
    fn levels(&self) -> std::ops::RangeInclusive<usize> {
        let first = self.main.input_files().map(|(l, _)| l).min().unwrap_or(0);
        let deepest = self.main.outputs.first().map_or(first, |s| s.level);
        first..=deepest
    }

    /// `Err` naming a file unless the ranges of the plans reading each input file
    /// cover all of it, and every remainder's input is one of the main plan's: the
    /// condition under which deleting every input whole loses nothing (plan
    /// invariant 5).
    pub(crate) fn check_complete(&self) -> Result<(), String> {
        let main_range = self.main.range.clone().unwrap_or_default();
        for (level, f) in self.main.input_files() {
            let mut ranges: Vec<&KeyRange> = vec![&main_range];
            for r in &self.remainders {
                if r.input_files()
                    .any(|(l, g)| l == level && g.number == f.number)
                {
                    ranges.extend(r.range.as_ref());
                }
            }
            if !covers(&ranges, f.smallest_user_key(), f.largest_user_key()) {
                return Err(format!(
                    "L{level} file {} [{:x?}, {:x?}] is deleted but its ranges {ranges:?} \
                     do not cover it",
                    f.number,
                    f.smallest_user_key(),
                    f.largest_user_key()
                ));
            }
        }
        for r in &self.remainders {
            for (level, f) in r.input_files() {
                if !self
                    .main
                    .input_files()
                    .any(|(l, g)| l == level && g.number == f.number)
                {
                    return Err(format!(
                        "remainder input L{level} file {} is not read by the main plan",
                        f.number
                    ));
                }
            }
        }
        Ok(())
    }

    /// `Some(reason)` if the write-back, planned over `scanned`, may not be installed
    /// over `current` with the jobs in `busy` running; `None` if it may. Requires the
    /// `state` lock (which guards `busy`), so that no job starts or finishes between
    /// the check and [`Busy::add_plan`].
    ///
    /// Stale when: a file it read left its level; one of them is busy; a busy job
    /// writes its span at any level it writes; or the output level or a level below
    /// it gained a file in its range (newer data a shallower level gains stays above
    /// the output, which is the level order).
    pub(crate) fn stale(
        &self,
        scanned: &Version,
        current: &Version,
        busy: &Busy,
    ) -> Option<&'static str> {
        for (level, f) in self.main.input_files() {
            if !current.files(level).iter().any(|g| g.number == f.number) {
                return Some("a file it read left its level");
            }
            if busy.is_busy(f) {
                return Some("a file it read is busy");
            }
        }
        let (lo, hi) = span(self.main.input_files().map(|(_, f)| f));
        if self.levels().any(|l| busy.output_conflict(l, &lo, &hi)) {
            return Some("a running job writes its range");
        }
        if (*self.levels().start()..current.num_levels()).any(|l| current.has_group_runs(l)) {
            return Some("a level it reads or lies above holds column-group runs");
        }
        let range = self.main.range.clone().unwrap_or_default();
        let deepest = *self.levels().end();
        for level in deepest..current.num_levels() {
            let numbers = |v: &Version| -> Vec<u64> {
                overlapping(v, level, &range)
                    .iter()
                    .map(|f| f.number)
                    .collect()
            };
            if numbers(current) != numbers(scanned) {
                return Some("a level at or below its output gained a file in its range");
            }
        }
        None
    }
}

/// True iff the union of the half-open `ranges` contains every user key in
/// `[lo, hi]`.
fn covers(ranges: &[&KeyRange], lo: &[u8], hi: &[u8]) -> bool {
    let mut sorted: Vec<&KeyRange> = ranges.to_vec();
    sorted.sort_by(|x, y| x.start.cmp(&y.start));
    // `at`: the least key not yet known covered (`None` once everything is).
    let mut at: Option<Vec<u8>> = Some(lo.to_vec());
    for r in sorted {
        let Some(k) = at.as_deref() else { break };
        if r.start.as_deref().is_some_and(|s| s > k) {
            break;
        }
        match &r.end {
            None => at = None,
            Some(e) if e.as_slice() > k => at = Some(e.clone()),
            Some(_) => {}
        }
    }
    at.is_none_or(|k| k.as_slice() > hi)
}

#[cfg(test)]
mod tests;
