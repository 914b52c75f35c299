//! A version: one immutable snapshot of which SSTables are live, level by level.
//!
//! Role: the version set owns the *current* `Arc<Version>`; readers, iterators and
//! compactions clone that `Arc` and keep the files alive for as long as they hold it.
//! A flush or compaction produces a [`VersionEdit`]; once the edit is durable in the
//! MANIFEST, [`Version::apply`] builds the successor, which is then installed. A version
//! is never mutated after it is built.
//!
//! # Invariants
//! 1. L0 is ordered newest first: by `largest_seqno` descending, then file number
//!    descending. Reads probe L0 in this order, so a newer version of a key is found
//!    before an older one even though L0 files overlap.
//! 2. In L1 and below, files are sorted by smallest key and do not overlap:
//!    `largest(f[i]) < smallest(f[i+1])` in internal-key order, and no user key has
//!    *entries* in two files. So at most one file per level holds a user key's
//!    entries, and a compaction never has to widen its inputs to keep all versions of
//!    a user key together. (The compaction job must therefore cut output files only
//!    between user keys.) The one shared user key allowed: a file whose range
//!    tombstones end at `k` has the largest key `(k, MAX_SEQUENCE, RangeDelete)`, a
//!    bound below every entry of `k`, and the next file may start at `k`.
//! 3. Every file has `smallest <= largest` (internal-key order).
//! 4. A file number appears at most once in the whole version.
//!
//! [`Version::apply`] enforces 4 and the ordering of 1 and 2; [`Version::check_invariants`]
//! checks 2 and 3 (tests call it after every install; recovery calls it after replay).
//!
//! # File references
//! A version installed by the `VersionSet` also holds one counted
//! reference (`FileRef`) per file it names (`Version::attach_refs`), so the files stay
//! on disk for as long as anyone holds the version (see `version::file_ref`). Versions
//! built by MANIFEST replay or in tests hold none until the version set adopts them.
//! The references are laid out like the files (`refs[l][i]` is the reference of
//! `files(l)[i]`), so a read that picked a file by position reaches its pinned table
//! (`Version::file_ref`) without a search.
//!
//! Concurrency: immutable, `Send + Sync`; share as `Arc<Version>`.

use super::edit::VersionEdit;
use super::file_meta::FileMetaData;
use super::file_ref::FileRef;
use crate::key::compare_internal;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::sync::Arc;

/// The live files of the database at one point in time. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct Version {
    /// `levels[l]` = files of level `l`, ordered as the module invariants say.
    levels: Vec<Vec<Arc<FileMetaData>>>,
    /// One reference per file named by `levels`, in the same shape (`refs[l][i]` for
    /// `levels[l][i]`); empty for versions not (yet) installed by the version set.
    refs: Vec<Vec<Arc<FileRef>>>,
}

/// L0 order: newest first (largest sequence number, then file number, descending).
fn l0_order(a: &Arc<FileMetaData>, b: &Arc<FileMetaData>) -> Ordering {
    b.largest_seqno
        .cmp(&a.largest_seqno)
        .then(b.number.cmp(&a.number))
}

/// L1+ order: smallest internal key, then file number (a tie is an invariant
/// violation that [`Version::check_invariants`] reports).
fn sorted_order(a: &Arc<FileMetaData>, b: &Arc<FileMetaData>) -> Ordering {
    compare_internal(&a.smallest, &b.smallest).then(a.number.cmp(&b.number))
}

impl Version {
    /// An empty version with `num_levels` levels.
    pub fn new(num_levels: usize) -> Version {
        Version {
            levels: vec![Vec::new(); num_levels],
            refs: Vec::new(),
        }
    }

    /// Number of levels (L0 included).
    pub fn num_levels(&self) -> usize {
        self.levels.len()
    }

    /// The deepest level holding at least one file; `None` iff the version is empty.
    pub fn deepest_nonempty_level(&self) -> Option<usize> {
        self.levels.iter().rposition(|files| !files.is_empty())
    }

    /// This version with exactly `num_levels` levels: empty levels are appended, or
    /// dropped from the bottom.
    ///
    /// # Errors
    /// A description naming the level if a level that would be dropped holds files.
    pub fn with_num_levels(mut self, num_levels: usize) -> Result<Version, String> {
        if let Some(deepest) = self.deepest_nonempty_level().filter(|&d| d >= num_levels) {
            return Err(format!(
                "level {deepest} holds files but the version is cut to num_levels={num_levels}"
            ));
        }
        self.levels.resize(num_levels, Vec::new());
        if !self.refs.is_empty() {
            self.refs.resize(num_levels, Vec::new());
        }
        Ok(self)
    }

    /// Files of `level` in read order (see the module invariants); empty if `level` is
    /// out of range. The slice borrows `self`.
    pub fn files(&self, level: usize) -> &[Arc<FileMetaData>] {
        self.levels.get(level).map_or(&[], Vec::as_slice)
    }

    /// The counted reference of `files(level)[index]`, which carries its pinned table;
    /// `None` if out of range or if the version set has not installed this version.
    /// The borrow lasts as long as `self`.
    #[inline]
    pub(crate) fn file_ref(&self, level: usize, index: usize) -> Option<&FileRef> {
        self.refs.get(level)?.get(index).map(|r| &**r)
    }

    /// Total size in bytes of the files of `level` (0 if out of range).
    pub fn level_bytes(&self, level: usize) -> u64 {
        self.files(level)
            .iter()
            .fold(0u64, |acc, f| acc.saturating_add(f.size))
    }

    /// Number of files in all levels.
    pub fn num_files(&self) -> usize {
        self.levels.iter().map(Vec::len).sum()
    }

    /// Every live file, level by level, in read order within each level.
    pub fn live_files(&self) -> impl Iterator<Item = &Arc<FileMetaData>> {
        self.levels.iter().flatten()
    }

    /// Builds the version that results from applying `edit` to this one: first every
    /// deletion, then every addition (so a delete + add of the same number is a move).
    /// `edit`'s counters (`log_number`, ...) are not part of a version and are ignored.
    ///
    /// # Errors
    /// A description naming the level and file if a level is out of range, a deleted
    /// file is not present in its level (or is deleted twice), or an added file number
    /// is already live (or added twice). Overlap in L1+ is *not* checked here; call
    /// [`Version::check_invariants`].
    pub fn apply(&self, edit: &VersionEdit) -> Result<Version, String> {
        let n = self.levels.len();
        let mut deleted: Vec<HashSet<u64>> = vec![HashSet::new(); n];
        for &(level, number) in &edit.deleted_files {
            let set = deleted
                .get_mut(level)
                .ok_or_else(|| format!("deleted file {number} has level {level} >= {n}"))?;
            if !set.insert(number) {
                return Err(format!("file {number} deleted twice from L{level}"));
            }
        }
        let mut levels = Vec::with_capacity(n);
        let mut live: HashSet<u64> = HashSet::with_capacity(self.num_files());
        for (level, (files, del)) in self.levels.iter().zip(&deleted).enumerate() {
            let kept: Vec<Arc<FileMetaData>> = if del.is_empty() {
                files.clone()
            } else {
                files
                    .iter()
                    .filter(|f| !del.contains(&f.number))
                    .cloned()
                    .collect()
            };
            if files.len() - kept.len() != del.len() {
                let present: HashSet<u64> = files.iter().map(|f| f.number).collect();
                let missing = del.iter().find(|d| !present.contains(d)).copied();
                return Err(format!(
                    "deleted file {} is not in L{level}",
                    missing.unwrap_or_default()
                ));
            }
            live.extend(kept.iter().map(|f| f.number));
            levels.push(kept);
        }
        let mut touched = vec![false; n];
        for (level, f) in &edit.new_files {
            let files = levels
                .get_mut(*level)
                .ok_or_else(|| format!("new file {} has level {level} >= {n}", f.number))?;
            if !live.insert(f.number) {
                return Err(format!("new file {} in L{level} is already live", f.number));
            }
            files.push(Arc::new(f.clone()));
            if let Some(t) = touched.get_mut(*level) {
                *t = true;
            }
        }
        for (level, (files, t)) in levels.iter_mut().zip(touched).enumerate() {
            if !t {
                continue;
            }
            if level == 0 {
                files.sort_by(l0_order);
            } else {
                files.sort_by(sorted_order);
            }
        }
        Ok(Version {
            levels,
            refs: Vec::new(),
        })
    }

    /// Gives this version one reference per file it names: taken from `base` (the
    /// version it was derived from) or from `new` (the refs of files an edit added).
    /// Afterwards the version keeps every file it names alive.
    ///
    /// # Errors
    /// A description naming the file if a named file has no reference in either
    /// source: the edit named a file nobody holds, which is a bookkeeping bug.
    pub(crate) fn attach_refs(
        &mut self,
        base: &Version,
        new: &[Arc<FileRef>],
    ) -> Result<(), String> {
        let mut kept: Vec<&Arc<FileRef>> = base.refs.iter().flatten().collect();
        kept.sort_unstable_by_key(|r| r.number());
        let mut added: Vec<&Arc<FileRef>> = new.iter().collect();
        added.sort_unstable_by_key(|r| r.number());
        let find = |refs: &[&Arc<FileRef>], n: u64| {
            refs.binary_search_by_key(&n, |r| r.number())
                .ok()
                .and_then(|i| refs.get(i).map(|r| Arc::clone(r)))
        };
        self.refs = self
            .levels
            .iter()
            .map(|files| {
                files
                    .iter()
                    .map(|f| {
                        find(&kept, f.number)
                            .or_else(|| find(&added, f.number))
                            .ok_or_else(|| format!("file {} has no reference", f.number))
                    })
                    .collect()
            })
            .collect::<Result<_, _>>()?;
        Ok(())
    }

    #[cfg(test)]
    /// Number of file references this version holds (equals [`Version::num_files`]
    /// for an installed version).
    pub(crate) fn num_refs(&self) -> usize {
        self.refs.iter().map(Vec::len).sum()
    }

    /// Checks invariants 1–3 of the module docs.
    ///
    /// # Errors
    /// A description naming the level and files of the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        for (level, files) in self.levels.iter().enumerate() {
            for f in files {
                if compare_internal(&f.smallest, &f.largest) == Ordering::Greater {
                    return Err(format!("L{level} file {}: smallest > largest", f.number));
                }
            }
            for w in files.windows(2) {
                let [a, b] = w else { continue };
                if level == 0 {
                    if l0_order(a, b) != Ordering::Less {
                        return Err(format!(
                            "L0 files {} and {} not newest first",
                            a.number, b.number
                        ));
                    }
                } else if compare_internal(&a.largest, &b.smallest) != Ordering::Less {
                    // Internal keys, not user keys: a file whose range tombstones end
                    // at `k` has the largest key `(k, MAX_SEQUENCE, RangeDelete)`,
                    // below every entry of `k` that the next file may start with.
                    return Err(format!(
                        "L{level} files {} and {} overlap or are out of order",
                        a.number, b.number
                    ));
                }
            }
        }
        Ok(())
    }

    /// Files of `level` whose user-key range intersects `[begin, end]` (inclusive;
    /// `None` = unbounded), in read order. For L0 this is every intersecting file
    /// (no transitive widening; see `compaction::picker` for that); for L1+ a binary
    /// search finds the contiguous run.
    pub fn overlapping_files(
        &self,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Vec<Arc<FileMetaData>> {
        let files = self.files(level);
        if level == 0 {
            return files
                .iter()
                .filter(|f| f.overlaps_user_range(begin, end))
                .cloned()
                .collect();
        }
        let start = match begin {
            Some(b) => files.partition_point(|f| f.largest_user_key() < b),
            None => 0,
        };
        files
            .get(start..)
            .unwrap_or_default()
            .iter()
            .take_while(|f| end.is_none_or(|e| f.smallest_user_key() <= e))
            .cloned()
            .collect()
    }

    /// For L1+: the index of the first file of `level` whose largest key is
    /// `>= ikey` (by [`compare_internal`]); `files(level).len()` if there is none.
    /// Meaningless for L0 (whose files are not sorted by key).
    pub fn find_file(&self, level: usize, ikey: &[u8]) -> usize {
        self.files(level)
            .partition_point(|f| compare_internal(&f.largest, ikey) == Ordering::Less)
    }

    /// An edit that rebuilds this version from an empty one: every live file as a new
    /// file at its level, and no counters (the caller fills those in).
    pub fn to_snapshot_edit(&self) -> VersionEdit {
        let mut edit = VersionEdit::default();
        for (level, files) in self.levels.iter().enumerate() {
            edit.new_files
                .extend(files.iter().map(|f| (level, FileMetaData::clone(f))));
        }
        edit
    }
}

#[cfg(test)]
mod tests;
