//! A sorted run: the files of one column group in one level of a version.
//!
//! Every level holds its *row run* (files of [`ALL_COLUMNS`]: whole records) and any
//! number of *column-group runs*, at most one per group id, each holding the files
//! written for that group (`FileMetaData::column_group`). In L1 and below each run is
//! sorted and non-overlapping on its own (`version::version`, invariant 2); runs of
//! one level overlap each other freely. L0 holds only its row run, ordered newest
//! first. A version whose levels hold only row runs, which is every version unless a
//! compaction policy writes column-group files, keeps one run per level, and its
//! readers pay one emptiness check per level for the others.
//!
//! What the runs of one level mean together, for every reader: they are *one source*,
//! their entries merged by internal key, as if the level were a single run. The
//! levels' order is unchanged: any entry of a level is newer than every entry of the
//! same user key in a deeper level, whichever runs hold them. A policy that writes
//! column-group runs keeps that order; the row-run policies (the leveled picker and
//! the techniques built on it) plan only over levels that hold no column-group run,
//! and look at every run when they decide whether a plan is bottommost.
//!
//! Concurrency: immutable once its version is built, like the version.

use super::file_meta::{FileMetaData, ALL_COLUMNS};
use super::file_ref::FileRef;
use super::version::TableRef;
use crate::key::compare_internal;
use std::cmp::Ordering;
use std::sync::Arc;

/// The files of one column group in one level. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct Run {
    group: u32,
    /// Ordered as the version's invariants say for the run's level.
    pub(super) files: Vec<Arc<FileMetaData>>,
    /// One reference per file, in the same order (`refs[i]` for `files[i]`); empty
    /// for a version the version set has not installed.
    pub(super) refs: Vec<TableRef>,
}

impl Run {
    /// An empty run of `group`.
    pub(super) fn new(group: u32) -> Run {
        Run {
            group,
            files: Vec::new(),
            refs: Vec::new(),
        }
    }

    /// The column group whose files this run holds ([`ALL_COLUMNS`] for the row run).
    pub fn group(&self) -> u32 {
        self.group
    }

    /// True iff this is a level's row run.
    pub fn is_row_run(&self) -> bool {
        self.group == ALL_COLUMNS
    }

    /// The run's files in read order. The slice borrows `self`.
    pub fn files(&self) -> &[Arc<FileMetaData>] {
        &self.files
    }

    /// True iff the run holds no file.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Total size in bytes of the run's files.
    pub fn bytes(&self) -> u64 {
        self.files
            .iter()
            .fold(0u64, |acc, f| acc.saturating_add(f.size))
    }

    /// The counted reference of `files()[index]`, which carries its pinned table;
    /// `None` if out of range, for a virtual table, or if the version set has not
    /// installed the run's version.
    #[inline]
    pub(crate) fn file_ref(&self, index: usize) -> Option<&FileRef> {
        match self.refs.get(index)? {
            TableRef::Real(r) => Some(r),
            TableRef::Virtual(_) => None,
        }
    }

    /// The shared reference of `files()[index]`, if installed.
    pub(super) fn table_ref(&self, index: usize) -> Option<&TableRef> {
        self.refs.get(index)
    }

    /// For a run of L1+: the index of the first file whose largest key is `>= ikey`
    /// (by [`compare_internal`]); `files().len()` if there is none. Meaningless in L0,
    /// whose files are not sorted by key.
    #[inline]
    pub fn find_file(&self, ikey: &[u8]) -> usize {
        self.files
            .partition_point(|f| compare_internal(&f.largest, ikey) == Ordering::Less)
    }

    /// For a run of L1+: the contiguous files whose user-key range intersects
    /// `[begin, end]` (inclusive; `None` = unbounded), found by binary search.
    pub fn sorted_overlapping(
        &self,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> &[Arc<FileMetaData>] {
        let start = match begin {
            Some(b) => self.files.partition_point(|f| f.largest_user_key() < b),
            None => 0,
        };
        let rest = self.files.get(start..).unwrap_or_default();
        let len = match end {
            Some(e) => rest.partition_point(|f| f.smallest_user_key() <= e),
            None => rest.len(),
        };
        rest.get(..len).unwrap_or_default()
    }

    /// Invariant 2 of `version::version` for this run of `level` (L1+): sorted by
    /// smallest key, no two files overlapping.
    ///
    /// # Errors
    /// A description naming the level, the group and the two files.
    pub(super) fn check_sorted(&self, level: usize) -> Result<(), String> {
        for w in self.files.windows(2) {
            let [a, b] = w else { continue };
            // Internal keys, not user keys: a file whose range tombstones end at `k`
            // has the largest key `(k, MAX_SEQUENCE, RangeDelete)`, below every entry
            // of `k` that the next file may start with.
            if compare_internal(&a.largest, &b.smallest) != Ordering::Less {
                return Err(format!(
                    "L{level} files {} and {} overlap or are out of order (column group {})",
                    a.number, b.number, self.group
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
