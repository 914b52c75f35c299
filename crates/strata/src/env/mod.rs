//! The file-system seam: every file the engine touches goes through [`FileSystem`].
//!
//! Role: the engine holds one `Arc<dyn FileSystem>` (injected with
//! [`crate::DbBuilder::file_system`], a component rather than an option). The
//! production implementation is [`PosixFs`]; tests swap in a fault-injecting,
//! crash-simulating implementation, and tiered storage can wrap a slow device. Nothing
//! in the engine calls `std::fs` directly.
//!
//! Concurrency: implementations are `Send + Sync`. A [`RandomAccessFile`] is shared by
//! many readers at once (positional reads, no seek state). A [`WritableFile`] has one
//! owner.
//!
//! Durability contract: bytes appended to a [`WritableFile`] are durable only after
//! [`WritableFile::sync`] returns `Ok`; a new directory entry (create, rename, remove) is
//! durable only after [`FileSystem::sync_dir`] on its directory returns `Ok`.

#[cfg(any(test, feature = "test-util"))]
mod fault;
mod posix;
internal_modules!(whole_file);

#[cfg(any(test, feature = "test-util"))]
pub use fault::{CrashMode, FailedSyncMode, FaultFs, FaultKinds, FaultRule};
pub use posix::PosixFs;
pub(crate) use whole_file::{read_to_vec, write_file_atomic};

use crate::error::Result;
use std::path::Path;
use std::sync::Arc;

/// A file being written: append-only, single owner.
pub trait WritableFile: Send {
    /// Appends `data` (may be buffered in user space).
    fn append(&mut self, data: &[u8]) -> Result<()>;
    /// Hands buffered bytes to the operating system (not durable).
    fn flush(&mut self) -> Result<()>;
    /// Makes every appended byte durable (flush + fdatasync).
    fn sync(&mut self) -> Result<()>;
    /// Bytes appended so far.
    fn len(&self) -> u64;
    /// True iff nothing was appended.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A file read at arbitrary offsets, shared by many threads.
pub trait RandomAccessFile: Send + Sync {
    /// Fills `buf` from `offset`. Reading past the end is an I/O error.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// The file's size in bytes at open time.
    fn size(&self) -> u64;
    /// The file's path, for error messages.
    fn path(&self) -> &Path;
}

/// A file read front to back (WAL and MANIFEST replay).
pub trait SequentialFile: Send {
    /// Reads up to `buf.len()` bytes; `Ok(0)` at end of file.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize>;
}

/// A held advisory lock on the database directory; released on drop.
pub trait FileLock: Send + Sync {}

/// Every file-system operation the engine uses.
pub trait FileSystem: Send + Sync {
    /// Creates (or truncates) a file for appending.
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>>;
    /// Opens an existing file for positional reads.
    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>>;
    /// Opens an existing file for sequential reading.
    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>>;
    /// Atomically renames `from` to `to`, replacing `to`.
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    /// Removes a file.
    fn remove(&self, path: &Path) -> Result<()>;
    /// Names (not paths) of the entries of `dir`.
    fn list(&self, dir: &Path) -> Result<Vec<String>>;
    /// Creates `dir` and its parents if missing.
    fn create_dir_all(&self, dir: &Path) -> Result<()>;
    /// Makes the directory's entries durable.
    fn sync_dir(&self, dir: &Path) -> Result<()>;
    /// True iff `path` exists.
    fn exists(&self, path: &Path) -> bool;
    /// Size of the file at `path`.
    fn file_size(&self, path: &Path) -> Result<u64>;
    /// Takes an exclusive lock on `path` (created if missing).
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>>;
}
