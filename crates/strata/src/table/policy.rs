//! CG-local compaction (the paper's §4.4): the compaction policy of a table whose
//! layout has column-group levels. A pure function of the version, whose layout record
//! (`catalog::LAYOUT`) it reads at every pick.
//!
//! - **Runs and capacity.** A level holds one run per group of its layout (a row level
//!   one run of every column). A run's capacity is the level's target
//!   (`picker::level_targets`) times the group's share of the columns; L0 is scored by
//!   file count, as everywhere.
//! - **Pick.** L0 when it holds `level0_file_num_compaction_trigger` files: all of it,
//!   into every run of L1. Otherwise the most overflowing run of L1 and deeper (ties:
//!   the upper level): one of its files, the one holding the oldest data
//!   (`OldestSmallestSeqFirst`, the time-based priority of the paper's Figure 2; the
//!   paper's prototype ran RocksDB's `kOldestLargestSeqFirst`), into the runs of the
//!   next level that share a column with it (its own group's sub-groups, by
//!   containment), one output stream per such group of the next level's layout.
//!   Files of the same run already taken by a running job are skipped, so compactions
//!   of disjoint groups of one level run at the same time.
//! - **Closure.** The next level's runs are cut at different keys. The plan takes
//!   every file of those runs meeting the source's range, widened until no run has a
//!   file straddling it, so each output stream writes only keys inside the range its
//!   run gave up; a delete, which reaches every stream, then lands where no file of
//!   that run remains (`splitter.rs`).
//! - **Trivial moves.** One file of a run whose group the next level holds too, over
//!   no file of it, moves by metadata (a manual step always rewrites).
//! - **Not yet:** layout changes while a level holds another layout's runs
//!   (`Table::set_layout` is planned), per-group grandparent alignment of outputs.

use super::layout::LayoutRecord;
use super::splitter::GroupSplitter;
use super::Schema;
use crate::compaction::picker::{self, Busy};
use crate::compaction::plan::{Input, OutputStream, Routing};
use crate::compaction::{
    Action, CompactionPolicy, Coverage, PlacementPolicy, Plan, Reason, Requests,
};
use crate::options::Options;
use crate::version::file_meta::ALL_COLUMNS;
use crate::version::{FileMetaData, Version};
use std::sync::Arc;

/// The compaction policy of a table with column-group levels. See the module docs.
#[derive(Debug)]
pub(crate) struct TablePolicy {
    schema: Arc<Schema>,
}

/// One run of a level: its group id and columns.
struct RunOf {
    group: u32,
    columns: Vec<u32>,
}

impl TablePolicy {
    /// The policy of a table of `schema`.
    pub fn new(schema: Arc<Schema>) -> TablePolicy {
        TablePolicy { schema }
    }

    fn all_columns(&self) -> Vec<u32> {
        (0..u32::try_from(self.schema.columns().len()).unwrap_or(u32::MAX)).collect()
    }

    /// The runs `level` holds under `layout`: its groups, or one run of rows.
    fn runs_of(&self, layout: &LayoutRecord, level: usize) -> Vec<RunOf> {
        let ids = layout
            .levels
            .get(level)
            .or(layout.levels.last())
            .cloned()
            .flatten();
        match ids {
            None => vec![RunOf {
                group: ALL_COLUMNS,
                columns: self.all_columns(),
            }],
            Some(ids) => ids
                .iter()
                .filter_map(|id| {
                    layout.groups.get(id).map(|c| RunOf {
                        group: *id,
                        columns: c.clone(),
                    })
                })
                .collect(),
        }
    }

    /// The columns of the run of group `group` (`ALL_COLUMNS`: rows), under `layout`.
    fn columns_of(&self, layout: &LayoutRecord, group: u32) -> Vec<u32> {
        match group {
            ALL_COLUMNS => self.all_columns(),
            id => layout.groups.get(&id).cloned().unwrap_or_default(),
        }
    }

    /// The plan moving `sources` (files of `level`, of runs holding `columns`; all of
    /// run `group`'s, if given) into the runs of `level + 1` that share a column with
    /// them, or `None` if a file it needs is busy or it conflicts with `busy`. One
    /// file of a run whose group the next level also holds, meeting no file there,
    /// moves by metadata (a trivial move, as the leveled picker's: within one data
    /// path, over at most `picker::max_grandparent_overlap_bytes` of the level below).
    #[expect(clippy::too_many_arguments, reason = "one plan's independent inputs")]
    fn plan(
        &self,
        version: &Version,
        opts: &Options,
        placement: &dyn PlacementPolicy,
        layout: &LayoutRecord,
        (level, group, sources, columns): (usize, Option<u32>, Vec<Arc<FileMetaData>>, &[u32]),
        busy: &Busy,
        reason: Reason,
    ) -> Option<Plan> {
        let out = level + 1;
        if out >= version.num_levels() || sources.iter().any(|f| busy.is_busy(f)) {
            return None;
        }
        let shares = |cols: &[u32]| cols.iter().any(|c| columns.contains(c));
        let (mut lo, mut hi) = span(&sources)?;
        // The closure over the next level's runs that share a column.
        let targets = loop {
            let files: Vec<Arc<FileMetaData>> = version
                .runs(out)
                .filter(|r| shares(&self.columns_of(layout, r.group())))
                .flat_map(|r| r.sorted_overlapping(Some(&lo), Some(&hi)).to_vec())
                .collect();
            match span(&files) {
                Some((a, b)) if a < lo || b > hi => (lo, hi) = (a.min(lo), b.max(hi)),
                _ => break files,
            }
        };
        if targets.iter().any(|f| busy.is_busy(f)) {
            return None;
        }
        let groups: Vec<RunOf> = self
            .runs_of(layout, out)
            .into_iter()
            .filter(|g| shares(&g.columns))
            .collect();
        let path = placement.path_for_level(version, opts, out);
        let outputs: Vec<OutputStream> = groups
            .iter()
            .map(|g| OutputStream {
                column_group: g.group,
                ..OutputStream::for_level(
                    opts,
                    out,
                    path,
                    crate::compaction::partitioner::for_compaction(opts, Vec::new()),
                )
            })
            .collect();
        let routing = match groups.as_slice() {
            [only] if only.group == ALL_COLUMNS => Routing::single(),
            _ => Routing::Records(Arc::new(GroupSplitter::new(
                Arc::clone(&self.schema),
                groups.into_iter().map(|g| g.columns).collect(),
            ))),
        };
        let bottommost = !version.overlaps_below(out, &lo, &hi);
        let grandparent_bytes: u64 = version
            .runs(out + 1)
            .filter(|r| shares(&self.columns_of(layout, r.group())))
            .flat_map(|r| r.sorted_overlapping(Some(&lo), Some(&hi)).to_vec())
            .map(|f| f.size)
            .sum();
        let trivial = match (sources.as_slice(), outputs.as_slice()) {
            ([source], [only]) => {
                targets.is_empty()
                    && group == Some(only.column_group)
                    && source.path_id == only.path_id
                    && grandparent_bytes <= picker::max_grandparent_overlap_bytes(opts)
            }
            _ => false,
        };
        let plan = Plan {
            action: if trivial {
                Action::TrivialMove
            } else {
                Action::Rewrite
            },
            inputs: vec![
                Input::Files {
                    level,
                    files: sources,
                },
                Input::Files {
                    level: out,
                    files: targets,
                },
            ],
            outputs,
            routing,
            bottommost,
            log_number: None,
            reason,
            range: None,
        };
        (!busy.conflicts(&plan)).then_some(plan)
    }

    /// Each run of L1 and deeper with its score (bytes / capacity), the last level
    /// left out: (level, group, score).
    fn run_scores(
        &self,
        version: &Version,
        opts: &Options,
        layout: &LayoutRecord,
    ) -> Vec<(usize, u32, f64)> {
        let targets = picker::level_targets(opts);
        let width = self.all_columns().len().max(1) as f64;
        let mut out = Vec::new();
        for level in 1..version.num_levels().saturating_sub(1) {
            let target = targets.get(level).copied().unwrap_or(u64::MAX) as f64;
            for run in version.runs(level) {
                let share = self.columns_of(layout, run.group()).len() as f64 / width;
                let capacity = (target * share).max(1.0);
                out.push((level, run.group(), run.bytes() as f64 / capacity));
            }
        }
        out
    }
}

/// The smallest and largest user key of `files`, owned.
fn span(files: &[Arc<FileMetaData>]) -> Option<(Vec<u8>, Vec<u8>)> {
    picker::user_range(files.iter()).map(|(lo, hi)| (lo.to_vec(), hi.to_vec()))
}

/// The layout record of `version`'s family; `None` if it does not decode (the open
/// checked it, so only a broken version gets here; nothing is compacted then).
fn layout(version: &Version) -> Option<LayoutRecord> {
    LayoutRecord::decode(version.record(super::catalog::LAYOUT)?).ok()
}

impl CompactionPolicy for TablePolicy {
    fn pick(
        &self,
        version: &Version,
        opts: &Options,
        placement: &dyn PlacementPolicy,
        busy: &Busy,
        _coverage: &Coverage<'_>,
        _requests: &Requests,
    ) -> Option<Plan> {
        let layout = layout(version)?;
        let l0 = version.files(0);
        if l0.len() >= opts.level0_file_num_compaction_trigger.max(1) {
            let all = self.all_columns();
            if let Some(plan) = self.plan(
                version,
                opts,
                placement,
                &layout,
                (0, Some(ALL_COLUMNS), l0.to_vec(), &all),
                busy,
                Reason::L0FileCount,
            ) {
                return Some(plan);
            }
        }
        let mut scores = self.run_scores(version, opts, &layout);
        scores.retain(|s| s.2 >= 1.0);
        scores.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
        scores.into_iter().find_map(|(level, group, _)| {
            let run = version.runs(level).find(|r| r.group() == group)?;
            let columns = self.columns_of(&layout, group);
            let mut files: Vec<&Arc<FileMetaData>> =
                run.files().iter().filter(|f| !busy.is_busy(f)).collect();
            files.sort_by_key(|f| (f.smallest_seqno, f.number));
            files.into_iter().find_map(|f| {
                self.plan(
                    version,
                    opts,
                    placement,
                    &layout,
                    (level, Some(group), vec![Arc::clone(f)], &columns),
                    busy,
                    Reason::LevelSize,
                )
            })
        })
    }

    /// Every file of every run of `level` meeting `[begin, end]`, widened until no
    /// file of any run of the level or of the next straddles the range, into every
    /// run of the next level: one step moves the whole range down. (Without the
    /// widening over both levels' runs, a job could take the deeper parts of a key
    /// whose newer part a run of this level keeps: found by reviews twice, once for
    /// the level's own runs and once for the next level's wider files. The fold
    /// would stamp the older cells with the newer sequence number, and reads would
    /// return them.)
    fn pick_manual(
        &self,
        version: &Version,
        opts: &Options,
        placement: &dyn PlacementPolicy,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
        busy: &Busy,
        _coverage: &Coverage<'_>,
    ) -> Option<Plan> {
        let layout = layout(version)?;
        let sources = if level == 0 {
            picker::l0_closure(version, begin, end)
        } else {
            picker::runs_closure(version, level, begin, end)
        };
        let all = self.all_columns();
        self.plan(
            version,
            opts,
            placement,
            &layout,
            (level, None, sources, &all),
            busy,
            Reason::Manual,
        )
    }

    fn pending_compaction_bytes(&self, version: &Version, opts: &Options) -> u64 {
        let Some(layout) = layout(version) else {
            return 0;
        };
        let targets = picker::level_targets(opts);
        let width = self.all_columns().len().max(1) as f64;
        (1..version.num_levels().saturating_sub(1))
            .flat_map(|level| version.runs(level).map(move |r| (level, r)))
            .map(|(level, run)| {
                let target = targets.get(level).copied().unwrap_or(u64::MAX) as f64;
                let share = self.columns_of(&layout, run.group()).len() as f64 / width;
                run.bytes().saturating_sub((target * share) as u64)
            })
            .sum()
    }

    fn scores(&self, version: &Version, opts: &Options) -> Vec<f64> {
        let mut out = vec![0.0; version.num_levels()];
        if let Some(s) = out.first_mut() {
            *s = version.files(0).len() as f64
                / opts.level0_file_num_compaction_trigger.max(1) as f64;
        }
        if let Some(layout) = layout(version) {
            for (level, _, score) in self.run_scores(version, opts, &layout) {
                if let Some(s) = out.get_mut(level) {
                    *s = s.max(score);
                }
            }
        }
        out
    }
}

/// Whether a table of this layout needs [`TablePolicy`]: some level holds column
/// groups.
pub(crate) fn needs_policy(layout: &LayoutRecord) -> bool {
    layout.levels.iter().any(|l| l.is_some())
}
