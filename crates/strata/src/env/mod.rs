//! The file-system seam: every file the engine touches goes through [`FileSystem`].
//!
//! Role: the engine holds one `Arc<dyn FileSystem>` (injected with
//! [`crate::DbBuilder::file_system`], a component rather than an option). The
//! production implementation is [`PosixFs`]; tests swap in a fault-injecting,
//! crash-simulating implementation, and [`DeviceFs`] wraps either to simulate a device
//! (latency, bandwidth, IOPS, queue depth) per directory. Nothing in the engine calls
//! `std::fs` directly.
//!
//! Concurrency: implementations are `Send + Sync`. A [`RandomAccessFile`] is shared by
//! many readers at once (positional reads, no seek state). A [`WritableFile`] has one
//! owner.
//!
//! Durability contract: bytes appended to a [`WritableFile`] are durable only after
//! [`WritableFile::sync`] returns `Ok`; a new directory entry (create, rename, remove) is
//! durable only after [`FileSystem::sync_dir`] on its directory returns `Ok`. The same
//! holds for a file opened with direct I/O ([`FileOptions::direct`]).
//!
//! Direct I/O: the engine opens table files through [`FileSystem::open_random_with`] and
//! [`FileSystem::create_with`], passing a [`FileOptions`] built from
//! `Options::use_direct_reads` and `Options::use_direct_io_for_flush_and_compaction`.
//! WAL, MANIFEST, `CURRENT` and `OPTIONS` always go through the buffered
//! [`FileSystem::create`] / [`FileSystem::open_sequential`], as in RocksDB. A file system
//! that cannot bypass its cache refuses `direct` with `InvalidArgument`; it never falls
//! back silently (the provided methods do exactly that, so an implementation that knows
//! nothing of direct I/O is correct as it is).

/// The [`FileSystem`] methods that touch directory entries, not file contents
/// (`rename`, `remove`, `list`, `create_dir_all`, `sync_dir`, `exists`, `file_size`,
/// `lock`, `link`, `available_space`), forwarded unchanged to `self.$inner`: for wrappers that act on file I/O
/// only (`CountingFs`, `DeviceFs`). Expands inside an `impl FileSystem`.
macro_rules! forward_directory_ops {
    ($inner:ident) => {
        fn rename(&self, from: &Path, to: &Path) -> Result<()> {
            self.$inner.rename(from, to)
        }
        fn remove(&self, path: &Path) -> Result<()> {
            self.$inner.remove(path)
        }
        fn list(&self, dir: &Path) -> Result<Vec<String>> {
            self.$inner.list(dir)
        }
        fn create_dir_all(&self, dir: &Path) -> Result<()> {
            self.$inner.create_dir_all(dir)
        }
        fn sync_dir(&self, dir: &Path) -> Result<()> {
            self.$inner.sync_dir(dir)
        }
        fn exists(&self, path: &Path) -> bool {
            self.$inner.exists(path)
        }
        fn file_size(&self, path: &Path) -> Result<u64> {
            self.$inner.file_size(path)
        }
        fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
            self.$inner.lock(path)
        }
        fn link(&self, from: &Path, to: &Path) -> Result<()> {
            self.$inner.link(from, to)
        }
        fn available_space(&self, dir: &Path) -> Result<Option<u64>> {
            self.$inner.available_space(dir)
        }
    };
}

mod counting;
mod device;
#[cfg(target_os = "linux")]
mod direct;
#[cfg(all(test, target_os = "linux"))]
mod direct_tests;
#[cfg(any(test, feature = "test-util"))]
mod fault;
mod posix;
internal_modules!(whole_file);

pub(crate) use counting::CountingFs;
pub use device::{Clock, DeviceFs, DeviceModel, DeviceStats};
#[cfg(any(test, feature = "test-util"))]
pub use fault::{CrashMode, FailedSyncMode, FaultFs, FaultKinds, FaultRule};
pub use posix::PosixFs;
pub(crate) use whole_file::{read_to_vec, write_file_atomic};

use crate::error::{Error, Result};
use std::path::Path;
use std::sync::Arc;

/// How one file is opened: the per-file I/O choices the engine derives from its
/// options. Build it with `FileOptions::default().with_direct(true)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileOptions {
    /// Bypass the operating system's page cache (`O_DIRECT` on Linux): reads and
    /// writes go between the device and the process's own buffers, rounded out to the
    /// device's alignment by the implementation. Callers still see byte-exact reads at
    /// any offset and length, and appends of any length.
    ///
    /// Default: false.
    pub direct: bool,
}

impl FileOptions {
    /// Sets [`FileOptions::direct`] (chainable).
    #[must_use]
    pub fn with_direct(mut self, direct: bool) -> Self {
        self.direct = direct;
        self
    }
}

/// The error a file system returns when it cannot open `path` with direct I/O.
///
/// `reason` says why (the OS error, or that the implementation has no direct I/O). The
/// message names the path and `O_DIRECT`; the engine's open adds the option's name.
pub(crate) fn direct_io_refused(path: &Path, reason: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!(
        "direct I/O (O_DIRECT) refused: path=`{}`: {reason}",
        path.display()
    ))
}

/// A temporary directory on a file system that accepts `O_DIRECT` (under `$TMPDIR`,
/// else `/tmp`), or `None` after printing why the caller's direct-I/O test is skipped.
/// With `STRATA_REQUIRE_DIRECT_IO=1` a refusal fails the test instead (CI on a disk
/// known to support it).
#[cfg(test)]
pub(crate) fn direct_io_tempdir() -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().expect("tempdir");
    let probe = dir.path().join("probe");
    let direct = FileOptions::default().with_direct(true);
    let result = PosixFs.create_with(&probe, direct).and_then(|mut f| {
        f.append(b"x")?;
        f.sync()
    });
    match result {
        Ok(()) => Some(dir),
        Err(e) if std::env::var("STRATA_REQUIRE_DIRECT_IO").is_ok_and(|v| v == "1") => {
            panic!("O_DIRECT refused in {}: {e}", dir.path().display())
        }
        Err(e) => {
            eprintln!(
                "SKIPPED: O_DIRECT refused in {} ({e}); set TMPDIR to a disk that supports it",
                dir.path().display()
            );
            None
        }
    }
}

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
    /// Cuts the file back to its first `len` bytes, dropping what was appended after
    /// them (buffered or handed to the OS), so the next append lands at `len`. The logs
    /// call it to undo a record that failed mid-append on a full disk. The cut is as
    /// durable as any append: only after the next [`WritableFile::sync`].
    ///
    /// The default refuses (the caller then treats the failed append as fatal).
    ///
    /// # Errors
    /// `InvalidArgument` from the default; the file system's error otherwise.
    /// Requires: `len <= self.len()`.
    fn truncate(&mut self, len: u64) -> Result<()> {
        let _ = len;
        Err(Error::InvalidArgument(
            "this file cannot be cut back (no truncate)".into(),
        ))
    }
    /// True iff nothing was appended.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A file read at arbitrary offsets, shared by many threads.
pub trait RandomAccessFile: Send + Sync {
    /// Fills `buf` from `offset`. Reading past the end is an I/O error.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// Reads exactly `len` bytes from `offset` into a new buffer. Reading past the end
    /// is an I/O error.
    ///
    /// The default zero-fills a buffer and calls [`RandomAccessFile::read_exact_at`];
    /// implementations override it to read straight into uninitialised memory (the
    /// table reader's block reads go through here, and zeroing was ~11% of the
    /// instructions of a random-read benchmark).
    fn read_vec(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        self.read_exact_at(offset, &mut buf)?;
        Ok(buf)
    }
    /// True iff reads bypass the operating system's cache (opened with
    /// [`FileOptions::direct`]), so nothing below reads ahead: table iterators then
    /// read ahead themselves on sequential access. Wrappers forward it.
    fn is_direct(&self) -> bool {
        false
    }
    /// The file's size in bytes at open time.
    fn size(&self) -> u64;
    /// The file's path, for error messages.
    fn path(&self) -> &Path;
}

/// A file read front to back (WAL and MANIFEST replay).
pub trait SequentialFile: Send {
    /// Reads up to `buf.len()` bytes; `Ok(0)` at end of file.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize>;

    /// Skips `n` bytes (fewer at end of file). A follower of a growing log resumes
    /// with it (`wal::LogReader::resume`). The default reads and drops them;
    /// implementations that can seek override it.
    ///
    /// # Errors
    /// I/O errors.
    fn skip(&mut self, n: u64) -> Result<()> {
        let mut buf = vec![0u8; 64 * 1024];
        let mut left = n;
        while left > 0 {
            let want = usize::try_from(left).unwrap_or(usize::MAX).min(buf.len());
            let got = self.read(buf.get_mut(..want).unwrap_or_default())?;
            if got == 0 {
                break;
            }
            left -= got as u64;
        }
        Ok(())
    }
}

/// A held advisory lock on the database directory; released on drop.
pub trait FileLock: Send + Sync {}

/// Every file-system operation the engine uses.
pub trait FileSystem: Send + Sync {
    /// Creates (or truncates) a file for appending.
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>>;
    /// Opens an existing file for positional reads.
    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>>;
    /// Creates (or truncates) a file for appending, opened as `opts` asks. The engine
    /// creates table files (flush and compaction outputs) through this.
    ///
    /// The default calls [`FileSystem::create`] for buffered I/O and refuses direct I/O.
    /// A file system wrapping another must forward this method, not only `create`.
    ///
    /// # Errors
    /// `InvalidArgument` naming `path` if `opts.direct` and the file system cannot
    /// bypass its cache there (never a silent fallback); otherwise as `create`.
    fn create_with(&self, path: &Path, opts: FileOptions) -> Result<Box<dyn WritableFile>> {
        if opts.direct {
            return Err(direct_io_refused(
                path,
                "this file system has no direct I/O",
            ));
        }
        self.create(path)
    }
    /// Opens an existing file for positional reads, as `opts` asks. The engine opens
    /// table files through this.
    ///
    /// The default calls [`FileSystem::open_random`] for buffered I/O and refuses direct
    /// I/O. A file system wrapping another must forward this method.
    ///
    /// # Errors
    /// `InvalidArgument` naming `path` if `opts.direct` and the file system cannot
    /// bypass its cache there; otherwise as `open_random`.
    fn open_random_with(
        &self,
        path: &Path,
        opts: FileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        if opts.direct {
            return Err(direct_io_refused(
                path,
                "this file system has no direct I/O",
            ));
        }
        self.open_random(path)
    }
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
    /// Gives the existing file `from` the second name `to` (a hard link: no bytes
    /// copied), as checkpoints do with table files. Not durable until the directory of
    /// `to` is synced.
    ///
    /// The default refuses; callers then copy the file instead.
    ///
    /// # Errors
    /// `InvalidArgument` from the default; otherwise the file system's error (for
    /// example `EXDEV` across file systems), after which the caller copies.
    fn link(&self, from: &Path, to: &Path) -> Result<()> {
        Err(Error::InvalidArgument(format!(
            "this file system makes no hard links: from=`{}` to=`{}`",
            from.display(),
            to.display()
        )))
    }
    /// The bytes the engine may still write on the file system holding directory
    /// `dir` (for an unprivileged process: `statvfs`'s `f_bavail × f_frsize`), or
    /// `None` if the file system cannot tell. The engine starts a compaction only
    /// where its output fits (docs/ARCHITECTURE.md §7.8).
    ///
    /// The default cannot tell.
    ///
    /// # Errors
    /// The file system's error asking (`Io`, op `stat`).
    fn available_space(&self, dir: &Path) -> Result<Option<u64>> {
        let _ = dir;
        Ok(None)
    }
}
