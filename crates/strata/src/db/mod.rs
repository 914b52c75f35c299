//! The database handle: open/recovery, the write path, the read path and background
//! work.
//!
//! Where a call goes:
//! - `put` / `delete` / `write` → [`write`] (group commit: WAL append, memtable insert).
//! - `get` → [`read`] (memtables, then L0 newest first, then one file per level).
//! - `iter` → [`read`] builds a merging iterator wrapped in a [`DbIterator`].
//! - flushes and compactions → [`background`] threads, which run [`flush`] and
//!   `compaction::job`, then install versions through [`files`].
//! - `open` → [`DbBuilder::open`] (components) → [`open`] (MANIFEST replay, options
//!   check, WAL replay, cleanup).
//!
//! Concurrency: [`Db`] is `Send + Sync`. Reads take no lock: they load the current
//! [`SuperVersion`] from an `ArcSwap` and the visible sequence number from an atomic.
//! Writers queue in the group-commit queue; the mutable state is one [`DbState`] behind
//! one mutex (see [`state`]).

mod background;
mod builder;
mod files;
mod flush;
mod iter;
mod open;
mod read;
mod state;
mod super_version;
mod write;

pub use builder::DbBuilder;
pub use iter::DbIterator;
pub use super_version::SuperVersion;

use crate::cache::{BlockCache, TableCache};
use crate::env::{FileLock, FileSystem};
use crate::error::{Error, Result};
use crate::key::SequenceNumber;
use crate::options::{Options, ReadOptions, WriteOptions};
use crate::snapshot::{Snapshot, SnapshotList};
use crate::stats::{DbStats, Statistics};
use crate::version::manifest::Manifest;
use crate::WriteBatch;
use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex};
use state::DbState;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use write::WriteQueue;

/// Shared engine internals; [`Db`] is a handle to them.
pub(crate) struct DbInner {
    /// The database directory.
    pub dir: PathBuf,
    /// Validated options (immutable while open).
    pub opts: Options,
    /// The file system everything goes through.
    pub fs: Arc<dyn FileSystem>,
    /// Mutable state. Never held across table I/O.
    pub state: Mutex<DbState>,
    /// Wakes background threads: work may be available or shutdown began.
    pub bg_cv: Condvar,
    /// Wakes waiters on background progress (stalled writers, `flush`, manual
    /// compaction, `wait_for_compactions`).
    pub done_cv: Condvar,
    /// The MANIFEST writer. Lock order: `manifest` before `state`. Every version change
    /// holds it from reading the current version to installing the new one, so edits
    /// are applied one at a time and none is lost.
    pub manifest: Mutex<Manifest>,
    /// The current read view; swapped whenever memtables or the version change.
    pub super_version: ArcSwap<SuperVersion>,
    /// Highest sequence number visible to readers (published after memtable insert).
    pub last_sequence: AtomicU64,
    /// Live snapshots.
    pub snapshots: Arc<SnapshotList>,
    /// Open tables.
    pub table_cache: Arc<TableCache>,
    /// Decoded blocks (also referenced by `table_cache`), kept for usage figures.
    pub block_cache: Option<Arc<BlockCache>>,
    /// Exact counters.
    pub stats: Arc<Statistics>,
    /// Group-commit queue and the WAL writer.
    pub writes: WriteQueue,
    /// Held while open.
    _lock: Box<dyn FileLock>,
}

/// An open database. `Send + Sync`: share it across threads by reference or `Arc`.
///
/// Dropping the handle without [`Db::close`] stops background work too; writes not
/// acknowledged with `sync` may be lost only on a machine crash, not a process exit
/// (every write reaches the OS before it is acknowledged).
pub struct Db {
    inner: Arc<DbInner>,
    threads: Vec<JoinHandle<()>>,
}

impl Db {
    /// Opens (or creates, with `create_if_missing`) the database in `path` with the
    /// default components ([`DbBuilder`] injects others), replaying the MANIFEST and
    /// any write-ahead logs, and checking `options` against the database and its
    /// `OPTIONS` file ([`crate::options_file::check_compatible`]).
    ///
    /// # Errors
    /// `InvalidArgument` for bad options, options the existing database cannot be
    /// opened with (naming the option, e.g. too few `num_levels`), or a
    /// missing/existing database against `create_if_missing`/`error_if_exists`;
    /// `Locked` if another handle has it open; `Corruption` naming file and offset (or
    /// line, for `OPTIONS`) for damaged metadata or logs; `Io`.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        DbBuilder::new().open(path, options)
    }

    /// A builder that injects components (file system, shared block cache) before
    /// opening.
    pub fn builder() -> DbBuilder {
        DbBuilder::new()
    }

    /// Sets `key` to `value`.
    ///
    /// # Errors
    /// `Poisoned` after a background failure, or if this write's WAL append or fsync
    /// failed (the database is poisoned from then on and the error carries the cause).
    pub fn put(&self, wo: &WriteOptions, key: &[u8], value: &[u8]) -> Result<()> {
        let mut b = WriteBatch::with_capacity(key.len() + value.len() + 11);
        b.put(key, value);
        self.write(wo, b)
    }

    /// Deletes `key` (a no-op if absent).
    ///
    /// # Errors
    /// As [`Db::put`].
    pub fn delete(&self, wo: &WriteOptions, key: &[u8]) -> Result<()> {
        let mut b = WriteBatch::with_capacity(key.len() + 6);
        b.delete(key);
        self.write(wo, b)
    }

    /// Applies every update of `batch` atomically: readers see all or none of it.
    ///
    /// # Errors
    /// As [`Db::put`].
    pub fn write(&self, wo: &WriteOptions, batch: WriteBatch) -> Result<()> {
        write::write(&self.inner, wo, Some(batch), false)
    }

    /// The value of `key`, as of `ro.snapshot` (or now).
    ///
    /// # Errors
    /// `Corruption` if a block on the read path fails its checksum; `Io`.
    pub fn get(&self, ro: &ReadOptions, key: &[u8]) -> Result<Option<Vec<u8>>> {
        read::get(&self.inner, ro, key)
    }

    /// An iterator over the keys within `ro`'s bounds as of `ro.snapshot` (or now).
    /// It pins the memtables and files it reads until dropped.
    ///
    /// # Errors
    /// `Io` or `Corruption` opening a table.
    pub fn iter(&self, ro: &ReadOptions) -> Result<DbIterator> {
        read::iter(&self.inner, ro)
    }

    /// Pins the current state: reads with this snapshot see exactly the writes
    /// acknowledged before this call.
    pub fn snapshot(&self) -> Snapshot {
        self.inner
            .snapshots
            .acquire(self.inner.last_sequence.load(Ordering::Acquire))
    }

    /// The sequence number of the latest acknowledged write.
    pub fn latest_sequence(&self) -> SequenceNumber {
        self.inner.last_sequence.load(Ordering::Acquire)
    }

    /// Switches the active memtable and waits until every memtable holding data is
    /// flushed to L0.
    ///
    /// # Errors
    /// `Poisoned` if a flush fails; `Io`.
    pub fn flush(&self) -> Result<()> {
        write::write(&self.inner, &WriteOptions::default(), None, true)?;
        background::wait_for_flushes(&self.inner)
    }

    /// Compacts every file overlapping the user-key range `[begin, end]` (unbounded
    /// where `None`) down to the last level that holds data, after flushing.
    ///
    /// # Errors
    /// `Poisoned`, `Io` or `Corruption` from the compactions run.
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        self.flush()?;
        background::compact_range(&self.inner, begin, end)
    }

    /// Waits until no flush or compaction is pending or running.
    ///
    /// # Errors
    /// The background error, if one occurred.
    pub fn wait_for_compactions(&self) -> Result<()> {
        background::wait_idle(&self.inner)
    }

    /// Exact statistics and the per-level table.
    pub fn stats(&self) -> DbStats {
        files::stats(&self.inner)
    }

    /// Checks every block checksum of every live table; returns the blocks checked.
    ///
    /// # Errors
    /// `Corruption` naming the first bad file and offset.
    pub fn verify_checksums(&self) -> Result<u64> {
        let version = Arc::clone(&self.inner.super_version.load().version);
        let mut blocks = 0;
        for f in version.live_files() {
            blocks += self.inner.table_cache.get(f)?.verify_checksums()?;
        }
        Ok(blocks)
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.inner.dir
    }

    /// Stops background work, syncs the WAL and releases the directory lock.
    ///
    /// # Errors
    /// The background error, if one occurred, or the final WAL sync's error.
    pub fn close(mut self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<()> {
        {
            let mut st = self.inner.state.lock();
            st.shutting_down = true;
        }
        self.inner.bg_cv.notify_all();
        self.inner.done_cv.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        write::sync_wal(&self.inner)?;
        let st = self.inner.state.lock();
        st.check_bg_error()
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            let _ = self.shutdown();
        }
    }
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Db({})", self.inner.dir.display())
    }
}

/// Converts a background error into the poisoned form every caller sees.
pub(crate) fn poison(inner: &DbInner, e: Error) -> Error {
    let err = inner.state.lock().set_bg_error(e);
    inner.done_cv.notify_all();
    err
}
