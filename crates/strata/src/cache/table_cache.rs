//! [`TableCache`]: open [`Table`]s by file number, bounded by an entry count.
//!
//! A miss opens the file and reads its footer, index, filter and properties. Concurrent
//! misses on the *same* file wait for one opener (quick_cache's per-key placeholder);
//! misses on different files open in parallel, and no lock is held across the open's
//! I/O. Evicted tables stay usable by whoever still holds their `Arc`.

use crate::cache::BlockCache;
use crate::env::{FileOptions, FileSystem};
use crate::error::{Error, Result};
use crate::filename;
use crate::sst::Table;
use crate::stats::Statistics;
use crate::version::{FileKind, FileMetaData};
use quick_cache::sync::Cache;
use std::path::PathBuf;
use std::sync::Arc;

/// A thread-safe cache of open tables.
pub struct TableCache {
    fs: Arc<dyn FileSystem>,
    dirs: Vec<PathBuf>,
    tables: Cache<u64, Arc<Table>>,
    block_cache: Option<Arc<BlockCache>>,
    stats: Arc<Statistics>,
    paranoid: bool,
    /// How table files are opened (direct I/O or not); set once, before sharing.
    file_options: FileOptions,
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
    /// A cache keeping up to `capacity` tables open. `dirs[path_id]` is the directory of
    /// storage tier `path_id`; tables are named by [`filename::table_file`]. With
    /// `paranoid`, every table's blocks are verified when it is opened.
    pub fn new(
        fs: Arc<dyn FileSystem>,
        dirs: Vec<PathBuf>,
        capacity: usize,
        block_cache: Option<Arc<BlockCache>>,
        stats: Arc<Statistics>,
        paranoid: bool,
    ) -> TableCache {
        TableCache {
            fs,
            dirs,
            tables: Cache::new(capacity.max(1)),
            block_cache,
            stats,
            paranoid,
            file_options: FileOptions::default(),
        }
    }

    /// Opens table files with `opts` from now on (chainable; call before sharing).
    #[must_use]
    pub fn with_file_options(mut self, opts: FileOptions) -> TableCache {
        self.file_options = opts;
        self
    }

    /// The open table of `meta`, opening it on a miss.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a virtual file (it has no bytes of its own) or a
    /// `path_id` with no directory; I/O errors and [`Error::Corruption`] from opening.
    /// A failed open is not cached: the next call retries.
    pub fn get(&self, meta: &FileMetaData) -> Result<Arc<Table>> {
        if let FileKind::Virtual { .. } = meta.kind {
            return Err(Error::InvalidArgument(format!(
                "table cache: file={} is virtual and has no file",
                meta.number
            )));
        }
        self.tables.get_or_insert_with(&meta.number, || {
            let dir = self.dirs.get(meta.path_id as usize).ok_or_else(|| {
                Error::InvalidArgument(format!(
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
                self.paranoid,
            )?;
            Ok(Arc::new(table))
        })
    }

    /// Forgets the open table of `file_number` (after the file is deleted or moved to
    /// another tier); holders of its `Arc` keep reading the old handle.
    pub fn evict(&self, file_number: u64) {
        self.tables.remove(&file_number);
    }
}
