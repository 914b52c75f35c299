//! An iterator over one sorted run of a level (L1 and below; `version::run`): the
//! files in key order, each opened only when the iterator reaches it (its pinned
//! table, or through the table cache on the file's first open; ARCHITECTURE §5.5). A
//! level of several runs is read through one level iterator per run, merged.
//!
//! Adds to the [`InternalIterator`] contract: files the [`SnapshotFilter`] rejects are
//! skipped when seeking and when stepping onto the next or previous file, so a read at
//! an old snapshot never opens tables made entirely of newer data.
//!
//! A virtual table (ARCHITECTURE §7.1.1) is read as a merge of its slices, each its
//! parent's iterator clipped to the slice's range (parents the snapshot filter
//! rejects are left out). The iterator is generic over how it reads one file
//! ([`LevelFile`]): a level of real files only is read through `TableIterator`s, with
//! no dispatch on the file's kind on the hot path (readseq costs what it cost before
//! virtual tables existed); a level holding a virtual table through [`AnyTable`],
//! which may also tell the read path about each virtual table it opens
//! ([`LevelIterator::on_open_virtual`], the iterator's side of
//! `compaction::requests`).

use super::{ClippedIterator, InternalIterator, MergingIterator};
use crate::cache::TableCache;
use crate::error::Result;
use crate::key;
use crate::snapshot_filter::SnapshotFilter;
use crate::sst::TableIterator;
use crate::stats::Statistics;
use crate::version::{FileKind, FileMetaData, Run, Version};
use std::cmp::Ordering;
use std::sync::Arc;

/// How a [`LevelIterator`] reads one file of its level.
pub trait LevelFile: InternalIterator + Sized {
    /// An iterator over file `index` of run `at.1` of level `at.0` in `version`,
    /// unpositioned. `filter` leaves out what cannot be visible (used for a virtual
    /// table's parents).
    ///
    /// # Errors
    /// The table could not be opened (`Io`, `Corruption`), or the file is of a kind
    /// this reader does not read.
    fn open(
        version: &Version,
        at: (usize, usize),
        index: usize,
        tables: &TableCache,
        filter: SnapshotFilter,
        stats: &Statistics,
    ) -> Result<Self>;
}

/// A real file's table. A virtual table is refused (the table cache has no file for
/// it): a level holding one is read through [`AnyTable`].
impl LevelFile for TableIterator {
    #[inline]
    fn open(
        version: &Version,
        (level, run): (usize, usize),
        index: usize,
        tables: &TableCache,
        _filter: SnapshotFilter,
        _stats: &Statistics,
    ) -> Result<Self> {
        let r = version.run(level, run);
        let meta = r.and_then(|r| r.files().get(index)).ok_or_else(|| {
            crate::Error::Internal(format!("L{level} run {run} has no file {index}"))
        })?;
        let file = r.and_then(|r| r.file_ref(index));
        Ok(tables.get_pinned(meta, file)?.iter())
    }
}

/// Concatenating iterator over the files of one sorted run of a level, each read as a
/// `C`.
pub struct LevelIterator<C: LevelFile = TableIterator> {
    version: Arc<Version>,
    level: usize,
    /// The run of `level` read (`Version::run`).
    run: usize,
    tables: Arc<TableCache>,
    filter: SnapshotFilter,
    stats: Arc<Statistics>,
    /// Index of the file `current` reads; meaningful only while `current` is some.
    index: usize,
    current: Option<C>,
    err: Option<crate::Error>,
    /// Called with `(version, level, index)` after a virtual table is opened.
    on_open_virtual: Option<OpenHook>,
}

/// What a level iterator calls when it opens a virtual table: `(version, level,
/// index)`. Runs on the reading thread, holding no lock of the iterator's.
pub type OpenHook = Box<dyn Fn(&Version, usize, usize) + Send + Sync>;

/// A file of a level that holds virtual tables: a real file's table, or a virtual
/// table's slices merged.
pub enum AnyTable {
    /// A real file's table.
    Table(TableIterator),
    /// A virtual table: its slices, merged.
    Slices(MergingIterator),
}

/// Forwards a call to whichever iterator the child holds.
macro_rules! child {
    ($c:expr, $it:ident => $e:expr) => {
        match $c {
            AnyTable::Table($it) => $e,
            AnyTable::Slices($it) => $e,
        }
    };
}

impl InternalIterator for AnyTable {
    fn valid(&self) -> bool {
        child!(self, c => c.valid())
    }
    fn seek_to_first(&mut self) {
        child!(self, c => c.seek_to_first())
    }
    fn seek_to_last(&mut self) {
        child!(self, c => c.seek_to_last())
    }
    fn seek(&mut self, target: &[u8]) {
        child!(self, c => c.seek(target))
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        child!(self, c => c.seek_for_prev(target))
    }
    fn next(&mut self) {
        child!(self, c => c.next())
    }
    fn prev(&mut self) {
        child!(self, c => c.prev())
    }
    fn key(&self) -> &[u8] {
        child!(self, c => c.key())
    }
    fn value(&self) -> &[u8] {
        child!(self, c => c.value())
    }
    fn status(&self) -> Result<()> {
        child!(self, c => c.status())
    }
}

impl LevelFile for AnyTable {
    fn open(
        version: &Version,
        (level, run): (usize, usize),
        index: usize,
        tables: &TableCache,
        filter: SnapshotFilter,
        stats: &Statistics,
    ) -> Result<Self> {
        // Virtual tables live only in row runs (run 0), where `slices` looks.
        let real = run != 0
            || version
                .files(level)
                .get(index)
                .is_some_and(|f| f.kind == FileKind::Real);
        if real {
            return TableIterator::open(version, (level, run), index, tables, filter, stats)
                .map(AnyTable::Table);
        }
        // The merge of the slices, each its parent clipped to it.
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
        for s in version.slices(level, index) {
            let s = s?;
            if filter.skips(s.parent, stats) {
                continue;
            }
            let table = tables.get_pinned(s.parent, s.file)?;
            let (lo, hi) = (&s.slice.smallest, &s.slice.largest);
            children.push(Box::new(ClippedIterator::new(table.iter(), lo, hi)));
        }
        Ok(AnyTable::Slices(MergingIterator::new(children)))
    }
}

impl<C: LevelFile> LevelIterator<C> {
    /// Iterates run `run` of `level` of `version` (which it pins; run 0 is the row
    /// run, `Version::run`).
    pub fn new(
        version: Arc<Version>,
        (level, run): (usize, usize),
        tables: Arc<TableCache>,
        filter: SnapshotFilter,
        stats: Arc<Statistics>,
    ) -> Self {
        LevelIterator {
            version,
            level,
            run,
            tables,
            filter,
            stats,
            index: 0,
            current: None,
            err: None,
            on_open_virtual: None,
        }
    }

    /// This iterator, calling `hook` after each virtual table it opens (each time it
    /// opens it: the hook decides what is new).
    pub fn on_open_virtual(mut self, hook: OpenHook) -> Self {
        self.on_open_virtual = Some(hook);
        self
    }

    /// The files of the run read; empty if the version has no such run.
    fn files(&self) -> &[Arc<FileMetaData>] {
        self.version
            .run(self.level, self.run)
            .map_or(&[], Run::files)
    }

    fn num_files(&self) -> usize {
        self.files().len()
    }

    /// Opens file `index`, or clears `current` if it is out of range or fails.
    fn open(&mut self, index: usize) -> bool {
        self.current = None;
        self.index = index;
        if index >= self.num_files() {
            return false;
        }
        let (version, level) = (&self.version, self.level);
        match C::open(
            version,
            (level, self.run),
            index,
            &self.tables,
            self.filter,
            &self.stats,
        ) {
            Ok(c) => {
                self.current = Some(c);
                if let Some(hook) = &self.on_open_virtual {
                    let f = version.files(level).get(index);
                    if self.run == 0 && f.is_some_and(|f| f.kind != FileKind::Real) {
                        hook(version, level, index);
                    }
                }
                true
            }
            Err(e) => {
                self.err.get_or_insert(e);
                false
            }
        }
    }

    fn skipped(&self, index: usize) -> bool {
        self.files()
            .get(index)
            .is_some_and(|f| self.filter.skips(f, &self.stats))
    }

    /// True iff there is no entry under `current` and no error: the caller should move
    /// on to the next file. An error from `current` is recorded (sticky) and clears it,
    /// answering false so the caller stops.
    fn exhausted(&mut self) -> bool {
        match &self.current {
            Some(c) if c.valid() => false,
            Some(c) => match c.status() {
                Ok(()) => true,
                Err(e) => {
                    self.err.get_or_insert(e);
                    self.current = None;
                    false
                }
            },
            None => true,
        }
    }

    /// Steps file by file in `dir`, starting at `index` (inclusive), to the first file
    /// the snapshot filter keeps that yields an entry, positioned at its first (forward)
    /// or last (backward) entry. Leaves `current` empty if there is none.
    fn step_to_file(&mut self, mut index: Option<usize>, dir: Dir) {
        while let Some(i) = index.filter(|&i| i < self.num_files()) {
            if !self.skipped(i) {
                if !self.open(i) {
                    return;
                }
                if let Some(c) = self.current.as_mut() {
                    match dir {
                        Dir::Forward => c.seek_to_first(),
                        Dir::Backward => c.seek_to_last(),
                    }
                }
                if !self.exhausted() {
                    return;
                }
            }
            index = dir.step(i);
        }
        self.current = None;
    }

    /// After a move within the current file: if it ran out, continue in the next file
    /// in `dir`.
    fn settle(&mut self, dir: Dir) {
        if self.exhausted() {
            self.step_to_file(dir.step(self.index), dir);
        }
    }
}

#[derive(Clone, Copy)]
enum Dir {
    Forward,
    Backward,
}

impl Dir {
    /// The file index after `i` in this direction (`None` past the front).
    fn step(self, i: usize) -> Option<usize> {
        match self {
            Dir::Forward => i.checked_add(1),
            Dir::Backward => i.checked_sub(1),
        }
    }
}

impl<C: LevelFile> InternalIterator for LevelIterator<C> {
    fn valid(&self) -> bool {
        self.err.is_none() && self.current.as_ref().is_some_and(|c| c.valid())
    }
    fn seek_to_first(&mut self) {
        self.step_to_file(Some(0), Dir::Forward);
    }
    fn seek_to_last(&mut self) {
        self.step_to_file(self.num_files().checked_sub(1), Dir::Backward);
    }
    fn seek(&mut self, target: &[u8]) {
        let i = self
            .version
            .run(self.level, self.run)
            .map_or(0, |r| r.find_file(target));
        if i >= self.num_files() {
            self.current = None;
            return;
        }
        if self.skipped(i) {
            self.step_to_file(Some(i + 1), Dir::Forward);
            return;
        }
        if self.open(i) {
            if let Some(c) = self.current.as_mut() {
                c.seek(target);
            }
            self.settle(Dir::Forward);
        }
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        // The last file whose smallest key is <= target holds the answer, if any file
        // does.
        let i = self
            .files()
            .partition_point(|f| key::compare_internal(&f.smallest, target) != Ordering::Greater);
        let Some(i) = i.checked_sub(1) else {
            self.current = None;
            return;
        };
        if self.skipped(i) {
            self.step_to_file(i.checked_sub(1), Dir::Backward);
            return;
        }
        if self.open(i) {
            if let Some(c) = self.current.as_mut() {
                c.seek_for_prev(target);
            }
            self.settle(Dir::Backward);
        }
    }
    fn next(&mut self) {
        if let Some(c) = self.current.as_mut() {
            c.next();
        }
        self.settle(Dir::Forward);
    }
    fn prev(&mut self) {
        if let Some(c) = self.current.as_mut() {
            c.prev();
        }
        self.settle(Dir::Backward);
    }
    fn key(&self) -> &[u8] {
        self.current.as_ref().map(|c| c.key()).unwrap_or_default()
    }
    fn value(&self) -> &[u8] {
        self.current.as_ref().map(|c| c.value()).unwrap_or_default()
    }
    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.duplicate()),
            None => self.current.as_ref().map_or(Ok(()), |c| c.status()),
        }
    }
}
