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
//!    before an older one even though L0 files overlap. (A table of copies written up
//!    by the flush thread has old sequence numbers; the order still holds for every
//!    key it shares with another L0 file: ARCHITECTURE §6.14, "Copies in L0".)
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
//! 5. Each level is made of *runs* (`version::run`): its row run and any number of
//!    column-group runs, one per group id, each holding the files of its group
//!    (`FileMetaData::column_group`). Invariant 2 holds per run; runs of one level
//!    overlap each other. L0 holds only its row run, and virtual tables live only in
//!    row runs. Reads merge a level's runs into one source (`version::run`).
//!
//! [`Version::apply`] enforces 4, 5 and the ordering of 1 and 2;
//! [`Version::check_invariants`] checks 2, 3 and 5 (tests call it after every install;
//! recovery calls it after replay).
//!
//! The methods that name a level without a run ([`Version::files`],
//! [`Version::find_file`], [`Version::overlapping_files`], `file_ref`, `slices`) read
//! the level's row run; [`Version::runs`] gives every run, and the level-wide queries
//! ([`Version::level_bytes`], [`Version::overlaps`], [`Version::live_files`],
//! [`Version::num_files`]) count every run.
//!
//! # Virtual tables and their parents
//! A level file may be virtual (`version::virtual_table`): its entries are slices of
//! *parents*, ordinary tables that are in no level. The version keeps each parent's
//! metadata once ([`Version::parents`]), learns of it from an edit's `new_parents`, and
//! forgets it in the `apply` that leaves no slice naming it. The files a version needs
//! on disk are its real level files and its parents ([`Version::physical_tables`]);
//! [`Version::check_invariants`] also checks the invariants of `version::virtual_table`.
//!
//! # File references
//! A version installed by the `VersionSet` also holds one counted
//! reference per file it names (`Version::attach_refs`): the `FileRef` of a real file,
//! or for a virtual table the shared `VirtualRef` holding its parents' `FileRef`s. So
//! the files stay on disk for as long as anyone holds the version (see
//! `version::file_ref`). Versions built by MANIFEST replay or in tests hold none until
//! the version set adopts them. Each run lays its references out like its files, so a
//! read that picked a file by position reaches its pinned table (`Run::file_ref`)
//! without a search.
//!
//! Concurrency: immutable, `Send + Sync`; share as `Arc<Version>`.

use super::edit::VersionEdit;
use super::file_meta::{FileKind, FileMetaData, ALL_COLUMNS};
use super::file_ref::FileRef;
use super::run::Run;
use super::virtual_table::{SliceRef, SliceView, VirtualRef};
use crate::key::compare_internal;
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// The live files of the database at one point in time. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct Version {
    /// `levels[l]` = the runs of level `l`.
    levels: Vec<Level>,
    /// The parents of the virtual tables of `levels`, by file number: ordinary tables
    /// in no level, each named by at least one slice.
    parents: BTreeMap<u64, Arc<FileMetaData>>,
    /// The family's records (`version::edit`, format version 4), by key: opaque state
    /// of the component that owns the family, moved by edits with its files.
    records: BTreeMap<u32, Arc<[u8]>>,
}

/// The runs of one level (invariant 5).
#[derive(Clone, Debug, Default)]
struct Level {
    /// The row run (`ALL_COLUMNS`), possibly empty.
    row: Run,
    /// The column-group runs, by ascending group id, none empty.
    groups: Vec<Run>,
}

impl Level {
    /// The row run, then the column-group runs by group id.
    fn runs(&self) -> impl Iterator<Item = &Run> {
        std::iter::once(&self.row).chain(&self.groups)
    }

    /// Every file of the level, run by run.
    fn files(&self) -> impl Iterator<Item = &Arc<FileMetaData>> {
        self.runs().flat_map(|r| r.files.iter())
    }
}

/// The counted reference a version holds for one of its level files.
#[derive(Clone, Debug)]
pub(crate) enum TableRef {
    /// A real file's one reference.
    Real(Arc<FileRef>),
    /// A virtual table's shared reference to its parents.
    Virtual(Arc<VirtualRef>),
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
            levels: vec![Level::default(); num_levels],
            parents: BTreeMap::new(),
            records: BTreeMap::new(),
        }
    }

    /// Number of levels (L0 included).
    pub fn num_levels(&self) -> usize {
        self.levels.len()
    }

    /// The deepest level holding at least one file; `None` iff the version is empty.
    pub fn deepest_nonempty_level(&self) -> Option<usize> {
        self.levels
            .iter()
            .rposition(|l| l.runs().any(|r| !r.is_empty()))
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
        self.levels.resize(num_levels, Level::default());
        Ok(self)
    }

    /// Files of `level`'s row run in read order (see the module invariants); empty if
    /// `level` is out of range. The slice borrows `self`.
    #[inline]
    pub fn files(&self, level: usize) -> &[Arc<FileMetaData>] {
        self.levels.get(level).map_or(&[], |l| l.row.files())
    }

    /// The runs of `level`: its row run (possibly empty), then its column-group runs
    /// by ascending group id; nothing if `level` is out of range. Run `k` of this
    /// sequence is [`Version::run`]`(level, k)`.
    pub fn runs(&self, level: usize) -> impl Iterator<Item = &Run> {
        self.levels.get(level).into_iter().flat_map(Level::runs)
    }

    /// Run `k` of [`Version::runs`]`(level)`: 0 is the row run.
    #[inline]
    pub fn run(&self, level: usize, k: usize) -> Option<&Run> {
        let l = self.levels.get(level)?;
        match k.checked_sub(1) {
            None => Some(&l.row),
            Some(g) => l.groups.get(g),
        }
    }

    /// True iff `level` holds a column-group run. A reader or policy asks this once
    /// per level: false, the level is its row run alone.
    #[inline]
    pub fn has_group_runs(&self, level: usize) -> bool {
        self.levels.get(level).is_some_and(|l| !l.groups.is_empty())
    }

    /// The counted reference of `files(level)[index]`, which carries its pinned table;
    /// `None` if out of range or if the version set has not installed this version.
    /// The borrow lasts as long as `self`.
    #[inline]
    pub(crate) fn file_ref(&self, level: usize, index: usize) -> Option<&FileRef> {
        self.levels.get(level)?.row.file_ref(index)
    }

    /// The slices of the virtual table `files(level)[index]`, in read order, each with
    /// its parent; nothing for a real file or an index out of range. The views borrow
    /// `self`.
    ///
    /// # Errors
    /// `Internal` for a slice whose parent the version does not know, which
    /// `Version::apply` never lets happen.
    pub(crate) fn slices(
        &self,
        level: usize,
        index: usize,
    ) -> impl Iterator<Item = crate::Result<SliceView<'_>>> {
        let row = self.levels.get(level).map(|l| &l.row);
        let f = row.and_then(|r| r.files.get(index));
        let slices = match f.map(|f| &f.kind) {
            Some(FileKind::Virtual { slices }) => slices.as_slice(),
            _ => &[],
        };
        let refs = match row.and_then(|r| r.table_ref(index)) {
            Some(TableRef::Virtual(v)) => v.slices(),
            _ => &[],
        };
        slices.iter().enumerate().map(move |(i, slice)| {
            let (parent, file) = match refs.get(i) {
                Some(r) => (Some(&*r.parent), Some(&*r.file)),
                None => (self.parents.get(&slice.parent).map(|p| &**p), None),
            };
            let parent = parent.ok_or_else(|| {
                crate::Error::Internal(format!(
                    "virtual table {} names parent {}, which the version does not know",
                    f.map_or(0, |f| f.number),
                    slice.parent
                ))
            })?;
            Ok(SliceView {
                slice,
                parent,
                file,
            })
        })
    }

    /// Asks, on behalf of a read, for the compaction of `files(level)[index]`, a
    /// virtual table (the read path's seam to the compaction policy,
    /// `compaction::requests`). True iff this call made the request: false if it was
    /// made before, for a real file, or in a version the version set has not
    /// installed (the flag lives in the table's shared reference, so every version
    /// holding the table sees it).
    pub(crate) fn request_compaction(&self, level: usize, index: usize) -> bool {
        match self.levels.get(level).and_then(|l| l.row.table_ref(index)) {
            Some(TableRef::Virtual(v)) => v.request(),
            _ => false,
        }
    }

    /// The tables reads have asked to have compacted, as `(level, file)`, level by
    /// level in read order. Costs a scan of the levels holding virtual tables only.
    pub(crate) fn requested_tables(&self) -> impl Iterator<Item = (usize, &Arc<FileMetaData>)> {
        let any = !self.parents.is_empty();
        self.levels
            .iter()
            .enumerate()
            .filter(move |_| any)
            .flat_map(|(level, l)| {
                l.row
                    .files
                    .iter()
                    .zip(&l.row.refs)
                    .filter_map(move |(f, r)| match r {
                        TableRef::Virtual(v) if v.is_requested() => Some((level, f)),
                        _ => None,
                    })
            })
    }

    /// Total size in bytes of the files of `level`, every run (0 if out of range).
    pub fn level_bytes(&self, level: usize) -> u64 {
        self.runs(level)
            .fold(0u64, |acc, r| acc.saturating_add(r.bytes()))
    }

    /// Number of files (real and virtual) in `level`, every run (0 if out of range).
    pub fn level_files(&self, level: usize) -> usize {
        self.runs(level).map(|r| r.files().len()).sum()
    }

    /// Number of files in all levels and runs.
    pub fn num_files(&self) -> usize {
        self.levels
            .iter()
            .flat_map(Level::runs)
            .map(|r| r.files.len())
            .sum()
    }

    /// Every live file, level by level and run by run, in read order within each run
    /// (virtual tables included, parents not).
    pub fn live_files(&self) -> impl Iterator<Item = &Arc<FileMetaData>> {
        self.levels.iter().flat_map(Level::files)
    }

    /// True iff `level` holds a virtual table. O(1) when the version has none (every
    /// virtual table names a parent), so a reader may ask on every iterator it builds.
    pub fn has_virtual_tables(&self, level: usize) -> bool {
        !self.parents.is_empty() && self.files(level).iter().any(|f| f.kind != FileKind::Real)
    }

    /// The family's record under `key` (the value the last edit setting it gave), if
    /// any. The slice borrows `self`.
    pub fn record(&self, key: u32) -> Option<&[u8]> {
        self.records.get(&key).map(|v| &**v)
    }

    /// The parent numbered `number`, if the version has it.
    pub fn parent(&self, number: u64) -> Option<&Arc<FileMetaData>> {
        self.parents.get(&number)
    }

    /// The parents of the virtual tables, by file number (in no level).
    pub fn parents(&self) -> impl Iterator<Item = &Arc<FileMetaData>> {
        self.parents.values()
    }

    /// Every table file this version needs on disk, each once: the real level files,
    /// then the parents of the virtual tables.
    pub fn physical_tables(&self) -> impl Iterator<Item = &Arc<FileMetaData>> {
        self.live_files()
            .filter(|f| f.kind == FileKind::Real)
            .chain(self.parents.values())
    }

    /// Builds the version that results from applying `edit` to this one: first every
    /// deletion, then every addition (so a delete + add of the same number is a move),
    /// then the edit's new parents; parents no virtual table names any more are
    /// dropped. An added file joins the run of its column group in its level (a new
    /// run if the level has none for the group); a run left empty is dropped, except
    /// the row run. `edit`'s counters (`log_number`, ...) are not part of a version
    /// and are ignored.
    ///
    /// # Errors
    /// A description naming the level and file if a level is out of range, a deleted
    /// file is not present in its level (or is deleted twice), an added file number
    /// is already live (or added twice), a column-group file is added to L0 or is
    /// virtual, a new parent is a level file or already known, a virtual table names a
    /// parent the version does not know, or a family record is set twice. Overlap in L1+ is *not* checked here;
    /// call [`Version::check_invariants`].
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
        for (level, (l, del)) in self.levels.iter().zip(&deleted).enumerate() {
            // The successor's references are attached later (`attach_refs`).
            let keep = |r: &Run| {
                let mut kept = Run::new(r.group());
                kept.files = match del.is_empty() {
                    true => r.files.clone(),
                    false => r
                        .files
                        .iter()
                        .filter(|f| !del.contains(&f.number))
                        .cloned()
                        .collect(),
                };
                kept
            };
            let kept = Level {
                row: keep(&l.row),
                groups: l.groups.iter().map(keep).collect(),
            };
            let before = l.files().count();
            let after = kept.files().count();
            if before - after != del.len() {
                let present: HashSet<u64> = l.files().map(|f| f.number).collect();
                let missing = del.iter().find(|d| !present.contains(d)).copied();
                return Err(format!(
                    "deleted file {} is not in L{level}",
                    missing.unwrap_or_default()
                ));
            }
            live.extend(kept.files().map(|f| f.number));
            levels.push(kept);
        }
        // (level, group) of each run that gained a file, to re-sort.
        let mut touched: HashSet<(usize, u32)> = HashSet::new();
        for (level, f) in &edit.new_files {
            let l = levels
                .get_mut(*level)
                .ok_or_else(|| format!("new file {} has level {level} >= {n}", f.number))?;
            if !live.insert(f.number) {
                return Err(format!("new file {} in L{level} is already live", f.number));
            }
            let group = f.column_group;
            let run = if group == ALL_COLUMNS {
                &mut l.row
            } else if *level == 0 || f.kind != FileKind::Real {
                return Err(format!(
                    "new file {} of column group {group} in L{level}: L0 and virtual tables \
                     are rows only",
                    f.number
                ));
            } else {
                let at = match l.groups.binary_search_by_key(&group, Run::group) {
                    Ok(at) => at,
                    Err(at) => {
                        l.groups.insert(at, Run::new(group));
                        at
                    }
                };
                l.groups
                    .get_mut(at)
                    .ok_or_else(|| format!("no run for column group {group} in L{level}"))?
            };
            run.files.push(Arc::new(f.clone()));
            touched.insert((*level, group));
        }
        for (level, l) in levels.iter_mut().enumerate() {
            l.groups.retain(|r| !r.is_empty());
            let order = if level == 0 { l0_order } else { sorted_order };
            for r in std::iter::once(&mut l.row).chain(l.groups.iter_mut()) {
                if touched.contains(&(level, r.group())) {
                    r.files.sort_by(order);
                }
            }
        }
        let parents = self.apply_parents(edit, &levels, &live)?;
        let mut records = self.records.clone();
        let mut set = HashSet::new();
        for (key, value) in &edit.records {
            if !set.insert(*key) {
                return Err(format!("family record {key} set twice in one edit"));
            }
            records.insert(*key, Arc::from(value.as_slice()));
        }
        Ok(Version {
            levels,
            parents,
            records,
        })
    }

    /// The parents after `edit`: this version's and the edit's new ones, less those
    /// that no virtual table of `levels` names. `live` is every level file's number.
    fn apply_parents(
        &self,
        edit: &VersionEdit,
        levels: &[Level],
        live: &HashSet<u64>,
    ) -> Result<BTreeMap<u64, Arc<FileMetaData>>, String> {
        let mut parents = self.parents.clone();
        for p in &edit.new_parents {
            if live.contains(&p.number) {
                return Err(format!("new parent {} is a level file", p.number));
            }
            if parents.insert(p.number, Arc::new(p.clone())).is_some() {
                return Err(format!("new parent {} is already known", p.number));
            }
        }
        let mut named = HashSet::new();
        for f in levels.iter().flat_map(Level::files) {
            if let FileKind::Virtual { slices } = &f.kind {
                for s in slices {
                    if !parents.contains_key(&s.parent) {
                        return Err(format!(
                            "virtual table {} names unknown parent {}",
                            f.number, s.parent
                        ));
                    }
                    named.insert(s.parent);
                }
            }
        }
        parents.retain(|n, _| named.contains(n));
        Ok(parents)
    }

    /// Gives this version one reference per file it names: a real file's is taken from
    /// `base` (the version it was derived from) or from `new` (the refs of files an
    /// edit added); a virtual table's is `base`'s if `base` has the table, else a new
    /// one over its parents' refs, found among `base`'s real files, `base`'s virtual
    /// tables' parents and `new`. Afterwards the version keeps every file it names, and
    /// every parent of those, alive.
    ///
    /// # Errors
    /// A description naming the file if a named file or parent has no reference in any
    /// source: the edit named a file nobody holds, which is a bookkeeping bug.
    pub(crate) fn attach_refs(
        &mut self,
        base: &Version,
        new: &[Arc<FileRef>],
    ) -> Result<(), String> {
        let mut real: HashMap<u64, &Arc<FileRef>> = HashMap::new();
        let mut virtual_refs: HashMap<u64, &Arc<VirtualRef>> = HashMap::new();
        for run in base.levels.iter().flat_map(Level::runs) {
            for (f, r) in run.files.iter().zip(&run.refs) {
                match r {
                    TableRef::Real(r) => {
                        real.insert(r.number(), r);
                    }
                    TableRef::Virtual(v) => {
                        virtual_refs.insert(f.number, v);
                        for s in v.slices() {
                            real.insert(s.file.number(), &s.file);
                        }
                    }
                }
            }
        }
        real.extend(new.iter().map(|r| (r.number(), r)));
        let parents = &self.parents;
        let table_ref = |f: &Arc<FileMetaData>| -> Result<TableRef, String> {
            let FileKind::Virtual { slices } = &f.kind else {
                return real
                    .get(&f.number)
                    .map(|r| TableRef::Real(Arc::clone(r)))
                    .ok_or_else(|| format!("file {} has no reference", f.number));
            };
            if let Some(v) = virtual_refs.get(&f.number) {
                return Ok(TableRef::Virtual(Arc::clone(v)));
            }
            let slices = slices
                .iter()
                .map(|s| match (parents.get(&s.parent), real.get(&s.parent)) {
                    (Some(parent), Some(file)) => Ok(SliceRef {
                        parent: Arc::clone(parent),
                        file: Arc::clone(file),
                    }),
                    _ => Err(format!(
                        "parent {} of virtual table {} has no reference",
                        s.parent, f.number
                    )),
                })
                .collect::<Result<_, String>>()?;
            Ok(TableRef::Virtual(VirtualRef::new(slices)))
        };
        for l in &mut self.levels {
            for r in std::iter::once(&mut l.row).chain(l.groups.iter_mut()) {
                r.refs = r.files.iter().map(&table_ref).collect::<Result<_, _>>()?;
            }
        }
        Ok(())
    }

    #[cfg(test)]
    /// Number of file references this version holds (equals [`Version::num_files`]
    /// for an installed version).
    pub(crate) fn num_refs(&self) -> usize {
        self.levels
            .iter()
            .flat_map(Level::runs)
            .map(|r| r.refs.len())
            .sum()
    }

    #[cfg(test)]
    /// The parents' references held through the virtual table `files(level)[index]`,
    /// by file number.
    pub(crate) fn parent_refs(&self, level: usize, index: usize) -> Vec<u64> {
        match self.levels.get(level).and_then(|l| l.row.table_ref(index)) {
            Some(TableRef::Virtual(v)) => v.slices().iter().map(|s| s.file.number()).collect(),
            _ => Vec::new(),
        }
    }

    /// Checks invariants 1–3 and 5 of the module docs, and those of
    /// `version::virtual_table`.
    ///
    /// # Errors
    /// A description naming the level and files of the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.check_levels()?;
        self.check_virtual_tables()
    }

    /// Invariants 1–3 and 5 of the module docs.
    fn check_levels(&self) -> Result<(), String> {
        for (level, l) in self.levels.iter().enumerate() {
            for f in l.files() {
                if compare_internal(&f.smallest, &f.largest) == Ordering::Greater {
                    return Err(format!(
                        "L{level} file {}: smallest > largest ({:x?} > {:x?}, {} slices)",
                        f.number,
                        f.smallest,
                        f.largest,
                        f.slices().len()
                    ));
                }
            }
            for r in l.runs() {
                if let Some(f) = r.files.iter().find(|f| {
                    f.column_group != r.group() || (!r.is_row_run() && f.kind != FileKind::Real)
                }) {
                    return Err(format!(
                        "L{level} file {} of column group {} is in the run of group {}",
                        f.number,
                        f.column_group,
                        r.group()
                    ));
                }
            }
            if level > 0 {
                for r in l.runs() {
                    r.check_sorted(level)?;
                }
                continue;
            }
            if !l.groups.is_empty() {
                return Err("L0 holds a column-group run".to_string());
            }
            for w in l.row.files.windows(2) {
                let [a, b] = w else { continue };
                if l0_order(a, b) != Ordering::Less {
                    return Err(format!(
                        "L0 files {} and {} not newest first",
                        a.number, b.number
                    ));
                }
            }
        }
        Ok(())
    }

    /// The invariants of `version::virtual_table`: no virtual table in L0; each
    /// table's slices lie in its range and their parents', add up to its size, and
    /// name known parents; the slices of one parent are disjoint; every parent is
    /// named, and none is a level file.
    fn check_virtual_tables(&self) -> Result<(), String> {
        // Per parent: each slice's user-key range and the table holding it.
        type Ranges<'a> = Vec<(&'a [u8], &'a [u8], u64)>;
        let mut by_parent: BTreeMap<u64, Ranges<'_>> = BTreeMap::new();
        for (level, f) in self
            .levels
            .iter()
            .enumerate()
            .flat_map(|(l, level)| level.files().map(move |f| (l, f)))
        {
            let FileKind::Virtual { slices } = &f.kind else {
                continue;
            };
            let name = format!("L{level} virtual table {}", f.number);
            if level == 0 || slices.is_empty() {
                return Err(format!("{name} is in L0 or has no slices"));
            }
            let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
            for s in slices {
                let parent = self
                    .parents
                    .get(&s.parent)
                    .ok_or_else(|| format!("{name} names unknown parent {}", s.parent))?;
                let (a, b) = (s.smallest.as_slice(), s.largest.as_slice());
                let inside = |lo: &[u8], hi: &[u8]| lo <= a && a <= b && b <= hi;
                if !inside(lo, hi) || !inside(parent.smallest_user_key(), parent.largest_user_key())
                {
                    return Err(format!(
                        "{name}: slice of parent {} lies outside the table or the parent",
                        s.parent
                    ));
                }
                by_parent
                    .entry(s.parent)
                    .or_default()
                    .push((a, b, f.number));
            }
            let bytes = slices
                .iter()
                .fold(0u64, |acc, s| acc.saturating_add(s.bytes));
            if bytes != f.size {
                return Err(format!(
                    "{name}: slices hold {bytes} bytes, size is {}",
                    f.size
                ));
            }
        }
        for (parent, slices) in &mut by_parent {
            slices.sort_unstable();
            for w in slices.windows(2) {
                if let [(_, end, t1), (start, _, t2)] = w {
                    if start <= end {
                        return Err(format!(
                            "slices of parent {parent} in virtual tables {t1} and {t2} overlap"
                        ));
                    }
                }
            }
        }
        let level_files: HashSet<u64> = self.live_files().map(|f| f.number).collect();
        for &n in self.parents.keys() {
            if level_files.contains(&n) || !by_parent.contains_key(&n) {
                return Err(format!("parent {n} is a level file or named by no slice"));
            }
        }
        Ok(())
    }

    /// Files of every run of `level` whose user-key range intersects `[begin, end]`
    /// (inclusive; `None` = unbounded): [`Self::overlapping_files`] on L0 (rows only),
    /// each run's sorted slice after the other on L1+.
    pub fn overlapping_in_runs(
        &self,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Vec<Arc<FileMetaData>> {
        if level == 0 {
            return self.overlapping_files(0, begin, end);
        }
        self.runs(level)
            .flat_map(|r| r.sorted_overlapping(begin, end).to_vec())
            .collect()
    }

    /// Files of `level`'s row run whose user-key range intersects `[begin, end]`
    /// (inclusive; `None` = unbounded), in read order. For L0 this is every
    /// intersecting file (no transitive widening; see `compaction::picker` for that);
    /// for L1+ a binary search finds the contiguous run.
    pub fn overlapping_files(
        &self,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Vec<Arc<FileMetaData>> {
        let Some(l) = self.levels.get(level) else {
            return Vec::new();
        };
        if level == 0 {
            return l
                .row
                .files
                .iter()
                .filter(|f| f.overlaps_user_range(begin, end))
                .cloned()
                .collect();
        }
        l.row.sorted_overlapping(begin, end).to_vec()
    }

    /// True iff some level below `level` holds data in `[lo, hi]`: a job writing
    /// `level` over that range is bottommost iff this is false.
    pub fn overlaps_below(&self, level: usize, lo: &[u8], hi: &[u8]) -> bool {
        (level + 1..self.num_levels()).any(|l| self.overlaps(l, Some(lo), Some(hi)))
    }

    /// True iff a file of any run of `level` has a user-key range intersecting
    /// `[begin, end]` (inclusive; `None` = unbounded): whether data for the range lies
    /// in the level, which a plan's `bottommost` must know of every run.
    pub fn overlaps(&self, level: usize, begin: Option<&[u8]>, end: Option<&[u8]>) -> bool {
        let Some(l) = self.levels.get(level) else {
            return false;
        };
        if level == 0 {
            return l
                .row
                .files
                .iter()
                .any(|f| f.overlaps_user_range(begin, end));
        }
        l.runs()
            .any(|r| !r.sorted_overlapping(begin, end).is_empty())
    }

    /// For L1+: the index of the first file of `level`'s row run whose largest key is
    /// `>= ikey` (by [`compare_internal`]); `files(level).len()` if there is none.
    /// Meaningless for L0 (whose files are not sorted by key).
    #[inline]
    pub fn find_file(&self, level: usize, ikey: &[u8]) -> usize {
        self.levels.get(level).map_or(0, |l| l.row.find_file(ikey))
    }

    /// An edit that rebuilds this version from an empty one: every live file as a new
    /// file at its level, every parent once, every record, and no counters (the
    /// caller fills those in).
    pub fn to_snapshot_edit(&self) -> VersionEdit {
        let mut edit = VersionEdit {
            new_parents: self
                .parents
                .values()
                .map(|p| FileMetaData::clone(p))
                .collect(),
            records: self.records.iter().map(|(k, v)| (*k, v.to_vec())).collect(),
            ..VersionEdit::default()
        };
        for (level, l) in self.levels.iter().enumerate() {
            edit.new_files
                .extend(l.files().map(|f| (level, FileMetaData::clone(f))));
        }
        edit
    }
}

#[cfg(test)]
mod tests;
