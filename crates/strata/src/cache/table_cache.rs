//! [`TableCache`]: open [`Table`]s by file number, bounded by an entry count.
//!
//! A miss opens the file and reads its footer, index, filter and properties. Concurrent
//! misses on the *same* file wait for one opener (quick_cache's per-key placeholder);
//! misses on different files open in parallel, and no lock is held across the open's
//! I/O. Evicted tables stay usable by whoever still holds their `Arc`.
//!
//! # Pinned tables (ARCHITECTURE §5.5)
//! A lookup hashes the file number and takes a shard lock, and the caller clones the
//! `Arc<Table>`: two shared writes per table probed. [`TableCache::get_pinned`] avoids
//! them after a file's first open by keeping the table in the file's [`FileRef`] (a
//! [`PinnedTable`]), which every version naming the file shares; probes then read it
//! with one atomic load and no clone.
//!
//! 1. *Who fills*: the first `get_pinned` of a file, after opening it through
//!    [`TableCache::get`] (so paranoid checks, direct I/O and statistics stay in one
//!    place). Racing first probes both open through the cache's single-flight, and one
//!    pin wins; the loser's is dropped.
//! 2. *Who drops*: the `FileRef`, when its last holder drops it, before it queues the
//!    file for deletion; `db::obsolete::delete_obsolete` then evicts the cache's entry,
//!    and the table closes when the last iterator still reading it drops its `Arc`.
//! 3. *The bound*: at most `capacity / 2` tables are pinned at once (the rest of the
//!    capacity keeps today's LRU for files beyond that), and a pinned table stays a
//!    cache entry that is never evicted (see [`KeepHeldOpen`]), so open tables stay
//!    within `max_open_files` as before.
//! 4. *Locks*: none. The pin is a `OnceLock`; the budget is one atomic counter.

use crate::cache::BlockCache;
use crate::env::{FileOptions, FileSystem};
use crate::error::{Error, Result};
use crate::filename;
use crate::sst::Table;
use crate::stats::Statistics;
use crate::version::file_ref::FileRef;
use crate::version::{FileKind, FileMetaData};
use quick_cache::sync::Cache;
use quick_cache::{DefaultHashBuilder, Lifecycle, UnitWeighter};
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The cache's eviction hook: a table that anyone besides the cache holds is not
/// evicted. That covers pinned tables (their `FileRef` holds them for the file's life)
/// and tables a reader or iterator is using. Evicting either would close nothing (the
/// holder keeps the file open) and would only uncount it, so the next miss would open
/// a second handle on the same file; keeping it counted is what makes the entry bound
/// a bound on open files.
#[derive(Clone, Copy, Debug, Default)]
struct KeepHeldOpen;

impl Lifecycle<u64, Arc<Table>> for KeepHeldOpen {
    type RequestState = ();

    fn is_pinned(&self, _file_number: &u64, table: &Arc<Table>) -> bool {
        Arc::strong_count(table) > 1
    }
}

/// A table kept open by its file's [`FileRef`], counted against the cache's pin budget
/// until it is dropped (with the `FileRef`). See the module docs.
#[derive(Debug)]
pub(crate) struct PinnedTable {
    table: Arc<Table>,
    /// The cache's count of live pins, released on drop.
    pins: Arc<AtomicUsize>,
}

impl PinnedTable {
    /// The pinned table.
    pub(crate) fn table(&self) -> &Arc<Table> {
        &self.table
    }
}

impl Drop for PinnedTable {
    fn drop(&mut self) {
        self.pins.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A thread-safe cache of open tables.
pub struct TableCache {
    fs: Arc<dyn FileSystem>,
    dirs: Vec<PathBuf>,
    tables: Cache<u64, Arc<Table>, UnitWeighter, DefaultHashBuilder, KeepHeldOpen>,
    /// Tables pinned by `FileRef`s now alive (each [`PinnedTable`] adds one while it
    /// lives); at most `pin_limit`.
    pins: Arc<AtomicUsize>,
    /// Half the capacity: the other half keeps an LRU for files beyond the pins.
    pin_limit: usize,
    /// Lookups in `tables` (tests check that a pinned probe makes none).
    #[cfg(test)]
    lookups: AtomicUsize,
    block_cache: Option<Arc<BlockCache>>,
    stats: Arc<Statistics>,
    paranoid: bool,
    /// How table files are opened (direct I/O or not); set once, before sharing.
    file_options: FileOptions,
    /// Index blocks and filters go to the block cache instead of staying with their
    /// tables (`Options::cache_index_and_filter_blocks`); set once, before sharing.
    cache_index_and_filter_blocks: bool,
}

impl std::fmt::Debug for TableCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableCache")
            .field("dirs", &self.dirs)
            .field("open_tables", &self.tables.len())
            .finish_non_exhaustive()
    }
}

impl TableCache {
    /// A cache keeping up to `capacity` tables open, half of them at most pinned by their
    /// files (see the module docs). `dirs[path_id]` is the directory of storage tier
    /// `path_id`; tables are named by [`filename::table_file`]. With `paranoid`, every
    /// table's blocks are verified when it is opened.
    pub fn new(
        fs: Arc<dyn FileSystem>,
        dirs: Vec<PathBuf>,
        capacity: usize,
        block_cache: Option<Arc<BlockCache>>,
        stats: Arc<Statistics>,
        paranoid: bool,
    ) -> TableCache {
        let capacity = capacity.max(1);
        TableCache {
            fs,
            dirs,
            tables: Cache::with(
                capacity,
                capacity as u64,
                UnitWeighter,
                DefaultHashBuilder::default(),
                KeepHeldOpen,
            ),
            pins: Arc::default(),
            pin_limit: capacity / 2,
            #[cfg(test)]
            lookups: AtomicUsize::new(0),
            block_cache,
            stats,
            paranoid,
            file_options: FileOptions::default(),
            cache_index_and_filter_blocks: false,
        }
    }

    /// Opens table files with `opts` from now on (chainable; call before sharing).
    #[must_use]
    pub fn with_file_options(mut self, opts: FileOptions) -> TableCache {
        self.file_options = opts;
        self
    }

    /// Tables opened from now on keep their index block and filter in the block cache
    /// (if there is one) rather than with themselves (chainable; call before sharing).
    #[must_use]
    pub fn with_cache_index_and_filter_blocks(mut self, on: bool) -> TableCache {
        self.cache_index_and_filter_blocks = on;
        self
    }

    /// The open table of `meta`, opening it on a miss.
    ///
    /// # Errors
    /// [`Error::Internal`] for a virtual file (it has no bytes of its own) or a
    /// `path_id` with no directory (the engine asked for a table it cannot have: open
    /// checks every table's data path against the options); I/O errors and
    /// [`Error::Corruption`] from opening.
    /// A failed open is not cached: the next call retries.
    pub fn get(&self, meta: &FileMetaData) -> Result<Arc<Table>> {
        #[cfg(test)]
        self.lookups.fetch_add(1, Ordering::Relaxed);
        if let FileKind::Virtual { .. } = meta.kind {
            return Err(Error::Internal(format!(
                "table cache: file={} is virtual and has no file",
                meta.number
            )));
        }
        self.tables.get_or_insert_with(&meta.number, || {
            let dir = self.dirs.get(meta.path_id as usize).ok_or_else(|| {
                Error::Internal(format!(
                    "table cache: path_id={} has no directory (file={})",
                    meta.path_id, meta.number
                ))
            })?;
            let path = filename::table_file(dir, meta.number);
            let file = self.fs.open_random_with(&path, self.file_options)?;
            let table = Table::open(
                file,
                meta.number,
                self.block_cache.clone(),
                Arc::clone(&self.stats),
                self.cache_index_and_filter_blocks,
                self.paranoid,
            )?;
            Ok(Arc::new(table))
        })
    }

    /// The open table of `meta`, read from `file`'s pin when it has one, else opened
    /// through [`TableCache::get`] and pinned there if the pin budget allows. Borrowed
    /// when pinned (valid while `file` is), owned otherwise; `file` is `None` for a
    /// version the version set has not installed (then this is [`TableCache::get`]).
    ///
    /// Requires: `file` is the reference of `meta`'s file (same number and path).
    ///
    /// # Errors
    /// As [`TableCache::get`], on the first open only.
    #[inline]
    pub(crate) fn get_pinned<'a>(
        &self,
        meta: &FileMetaData,
        file: Option<&'a FileRef>,
    ) -> Result<Cow<'a, Arc<Table>>> {
        // The per-probe path: one atomic load, no call (the first open is out of line).
        match file.and_then(FileRef::pinned_table) {
            Some(table) => Ok(Cow::Borrowed(table)),
            None => self.open_and_pin(meta, file),
        }
    }

    /// The first open of a file by [`TableCache::get_pinned`] (or any open of a file
    /// with no reference or beyond the pin budget).
    #[cold]
    fn open_and_pin<'a>(
        &self,
        meta: &FileMetaData,
        file: Option<&'a FileRef>,
    ) -> Result<Cow<'a, Arc<Table>>> {
        let table = self.get(meta)?;
        let Some(file) = file else {
            return Ok(Cow::Owned(table));
        };
        debug_assert_eq!(file.number(), meta.number, "get_pinned: wrong FileRef");
        let reserved = self
            .pins
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < self.pin_limit).then_some(n + 1)
            })
            .is_ok();
        if !reserved {
            return Ok(Cow::Owned(table));
        }
        let pin = PinnedTable {
            table,
            pins: Arc::clone(&self.pins),
        };
        Ok(Cow::Borrowed(file.pin(pin)))
    }

    /// Tables pinned by live `FileRef`s.
    #[cfg(test)]
    pub(crate) fn pinned_count(&self) -> usize {
        self.pins.load(Ordering::Relaxed)
    }

    /// Lookups so far through [`TableCache::get`] (pinned probes make none).
    #[cfg(test)]
    pub(crate) fn lookups(&self) -> usize {
        self.lookups.load(Ordering::Relaxed)
    }

    /// Forgets the open table of `file_number` (after the file is deleted or moved to
    /// another tier); holders of its `Arc` keep reading the old handle.
    pub fn evict(&self, file_number: u64) {
        self.tables.remove(&file_number);
    }
}
