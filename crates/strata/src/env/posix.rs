//! The production [`FileSystem`]: plain files via `std::fs`, positional reads with
//! `pread`, a user-space write buffer, `fdatasync` for sync. With
//! [`FileOptions::direct`], table files are opened with `O_DIRECT` (Linux only; see
//! `env/direct.rs`); elsewhere direct I/O is refused with `InvalidArgument`.

use super::{FileLock, FileOptions, FileSystem, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::{Error, IoOp, Result};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek};
use std::mem::MaybeUninit;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Size of the user-space write buffer of a [`WritableFile`].
const WRITE_BUFFER: usize = 64 * 1024;

/// The real operating-system file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct PosixFs;

struct PosixWritable {
    file: File,
    path: PathBuf,
    buf: Vec<u8>,
    len: u64,
    /// Bytes handed to the OS: where the next write goes. Writes name their offset
    /// (`pwrite`) rather than move the file's: a `write(2)` on a file of a
    /// multi-threaded process takes the file-position lock, a mutex per WAL append.
    written: u64,
}

impl PosixWritable {
    fn flush_buf(&mut self) -> Result<()> {
        if !self.buf.is_empty() {
            self.file
                .write_all_at(&self.buf, self.written)
                .map_err(|e| Error::io(IoOp::Write, &self.path, e))?;
            self.written += self.buf.len() as u64;
            self.buf.clear();
        }
        Ok(())
    }
}

impl WritableFile for PosixWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.len += data.len() as u64;
        if self.buf.len() + data.len() > WRITE_BUFFER {
            self.flush_buf()?;
            if data.len() > WRITE_BUFFER {
                self.file
                    .write_all_at(data, self.written)
                    .map_err(|e| Error::io(IoOp::Write, &self.path, e))?;
                self.written += data.len() as u64;
                return Ok(());
            }
        }
        self.buf.extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        self.flush_buf()
    }
    fn sync(&mut self) -> Result<()> {
        self.flush_buf()?;
        self.file
            .sync_data()
            .map_err(|e| Error::io(IoOp::Fsync, &self.path, e))
    }
    fn len(&self) -> u64 {
        self.len
    }
    fn truncate(&mut self, len: u64) -> Result<()> {
        // The content is the file's first `written` bytes, then the buffer; a short
        // write may have left more bytes past `written` in the file, which are cut.
        let cut = |e| Error::io(IoOp::Truncate, &self.path, e);
        match usize::try_from(len.saturating_sub(self.written)) {
            // Inside the buffer: keep its head.
            Ok(keep) if len >= self.written => {
                self.buf.truncate(keep);
                self.file.set_len(self.written).map_err(cut)?;
            }
            _ => {
                self.buf.clear();
                self.file.set_len(len).map_err(cut)?;
                self.written = len;
            }
        }
        self.len = len;
        Ok(())
    }
}

impl Drop for PosixWritable {
    fn drop(&mut self) {
        // Best effort: a writer dropped without flush (e.g. on an error path) still hands
        // its bytes to the OS; durability was never promised without `sync`.
        let _ = self.flush_buf();
    }
}

struct PosixRandom {
    file: File,
    path: PathBuf,
    size: u64,
}

impl RandomAccessFile for PosixRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.file
            .read_exact_at(buf, offset)
            .map_err(|e| Error::io(IoOp::Read, &self.path, e))
    }
    /// `pread` straight into the new `Vec`'s uninitialised capacity: no zero-fill.
    fn read_vec(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        pread_vec(&self.file, &self.path, offset, len)
    }
    fn size(&self) -> u64 {
        self.size
    }
    fn path(&self) -> &Path {
        &self.path
    }
}

/// Reads exactly `len` bytes of `file` at `offset` into a new `Vec`, with `pread` into
/// its uninitialised capacity; retries short reads and `EINTR`.
///
/// # Errors
/// `Error::io(IoOp::Read)`: the OS error, or `UnexpectedEof` if the file ends first.
fn pread_vec(file: &File, path: &Path, offset: u64, len: usize) -> Result<Vec<u8>> {
    let mut out: Vec<u8> = Vec::with_capacity(len);
    while out.len() < len {
        let pos = offset
            .checked_add(out.len() as u64)
            .and_then(|p| libc::off_t::try_from(p).ok())
            .ok_or_else(|| {
                Error::io(
                    IoOp::Read,
                    path,
                    io::Error::from(io::ErrorKind::InvalidInput),
                )
            })?;
        let filled = out.len();
        let spare: &mut [MaybeUninit<u8>] = out.spare_capacity_mut();
        let want = spare.len().min(len - filled);
        let dst = spare.as_mut_ptr().cast::<libc::c_void>();
        // SAFETY: `pread` writes at most `want` bytes to `dst`, the start of `out`'s
        // unused capacity of at least `want` bytes; the fd stays open (borrowed
        // `file`). On success it returns `n <= want` and has initialised exactly the
        // first `n` bytes at `dst`, which is what `set_len` then exposes (the length
        // grows only over bytes already written).
        let n = unsafe {
            let n = libc::pread(file.as_raw_fd(), dst, want, pos);
            if let Ok(k @ 1..) = usize::try_from(n) {
                out.set_len(filled + k.min(want));
            }
            n
        };
        match n {
            0 => {
                let e = io::Error::new(io::ErrorKind::UnexpectedEof, "read past end of file");
                return Err(Error::io(IoOp::Read, path, e));
            }
            n if n < 0 => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(Error::io(IoOp::Read, path, e));
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

struct PosixSequential {
    file: File,
    path: PathBuf,
}

impl SequentialFile for PosixSequential {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.file
            .read(buf)
            .map_err(|e| Error::io(IoOp::Read, &self.path, e))
    }

    fn skip(&mut self, n: u64) -> Result<()> {
        let n = i64::try_from(n).map_err(|_| {
            Error::InvalidArgument(format!("skip of {n} bytes: path=`{}`", self.path.display()))
        })?;
        self.file
            .seek_relative(n)
            .map_err(|e| Error::io(IoOp::Read, &self.path, e))
    }
}

struct PosixLock {
    _file: File,
}
impl FileLock for PosixLock {}

impl FileSystem for PosixFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| Error::io(IoOp::Create, path, e))?;
        Ok(Box::new(PosixWritable {
            file,
            path: path.to_path_buf(),
            buf: Vec::with_capacity(WRITE_BUFFER),
            len: 0,
            written: 0,
        }))
    }
    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        let file = File::open(path).map_err(|e| Error::io(IoOp::Open, path, e))?;
        let size = file
            .metadata()
            .map_err(|e| Error::io(IoOp::Stat, path, e))?
            .len();
        Ok(Arc::new(PosixRandom {
            file,
            path: path.to_path_buf(),
            size,
        }))
    }
    fn create_with(&self, path: &Path, opts: FileOptions) -> Result<Box<dyn WritableFile>> {
        if !opts.direct {
            return self.create(path);
        }
        #[cfg(target_os = "linux")]
        {
            let file = super::direct::open(path, true, IoOp::Create)?;
            Ok(Box::new(super::direct::DirectWritable::new(
                file,
                path.to_path_buf(),
            )))
        }
        #[cfg(not(target_os = "linux"))]
        Err(super::direct_io_refused(
            path,
            "O_DIRECT is Linux-only in this build",
        ))
    }
    fn open_random_with(
        &self,
        path: &Path,
        opts: FileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        if !opts.direct {
            return self.open_random(path);
        }
        #[cfg(target_os = "linux")]
        {
            let file = super::direct::open(path, false, IoOp::Open)?;
            let size = file
                .metadata()
                .map_err(|e| Error::io(IoOp::Stat, path, e))?
                .len();
            let align = super::direct::dio_alignment(&file);
            Ok(Arc::new(super::direct::DirectRandom {
                file,
                path: path.to_path_buf(),
                size,
                align,
            }))
        }
        #[cfg(not(target_os = "linux"))]
        Err(super::direct_io_refused(
            path,
            "O_DIRECT is Linux-only in this build",
        ))
    }
    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        let file = File::open(path).map_err(|e| Error::io(IoOp::Open, path, e))?;
        Ok(Box::new(PosixSequential {
            file,
            path: path.to_path_buf(),
        }))
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        std::fs::rename(from, to).map_err(|e| Error::io(IoOp::Rename, from, e))
    }
    fn remove(&self, path: &Path) -> Result<()> {
        std::fs::remove_file(path).map_err(|e| Error::io(IoOp::Remove, path, e))
    }
    fn link(&self, from: &Path, to: &Path) -> Result<()> {
        std::fs::hard_link(from, to).map_err(|e| Error::io(IoOp::Link, to, e))
    }
    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| Error::io(IoOp::ReadDir, dir, e))? {
            let entry = entry.map_err(|e| Error::io(IoOp::ReadDir, dir, e))?;
            if let Some(name) = entry.file_name().to_str() {
                out.push(name.to_string());
            }
        }
        Ok(out)
    }
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(IoOp::Mkdir, dir, e))
    }
    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let d = File::open(dir).map_err(|e| Error::io(IoOp::OpenDir, dir, e))?;
        d.sync_all().map_err(|e| Error::io(IoOp::FsyncDir, dir, e))
    }
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        Ok(std::fs::metadata(path)
            .map_err(|e| Error::io(IoOp::Stat, path, e))?
            .len())
    }
    fn available_space(&self, dir: &Path) -> Result<Option<u64>> {
        use std::os::unix::ffi::OsStrExt;
        let stat_err = |e| Error::io(IoOp::Stat, dir, e);
        let c_path = std::ffi::CString::new(dir.as_os_str().as_bytes()).map_err(|_| {
            stat_err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "path holds a NUL byte",
            ))
        })?;
        let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
        // SAFETY: `c_path` is a NUL-terminated string that outlives the call, and `st`
        // points to writable memory of `statvfs`'s size, which the call fills on
        // success (and only then is it read).
        let rc = unsafe { libc::statvfs(c_path.as_ptr(), st.as_mut_ptr()) };
        if rc != 0 {
            return Err(stat_err(std::io::Error::last_os_error()));
        }
        // SAFETY: `statvfs` returned 0, so it initialized `st`.
        let st = unsafe { st.assume_init() };
        #[allow(
            clippy::useless_conversion,
            reason = "the fields are u64 on 64-bit Linux, narrower elsewhere"
        )]
        let (blocks, block) = (u64::from(st.f_bavail), u64::from(st.f_frsize));
        Ok(Some(blocks.saturating_mul(block)))
    }
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| Error::io(IoOp::Create, path, e))?;
        match file.try_lock() {
            Ok(()) => Ok(Box::new(PosixLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Err(Error::Locked(path.to_path_buf())),
            Err(std::fs::TryLockError::Error(e)) => Err(Error::io(IoOp::Lock, path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Appends (small, buffered; larger than the buffer, written through), flushes and
    /// truncations (into the buffer and into the written file) land where a model of
    /// the file says, with every write at its named offset.
    #[test]
    fn appends_and_truncations_match_a_model() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        let mut model: Vec<u8> = Vec::new();
        {
            let mut f = PosixFs.create(&path).expect("create");
            let append = |f: &mut Box<dyn WritableFile>, model: &mut Vec<u8>, b: u8, n| {
                let data = vec![b; n];
                f.append(&data).expect("append");
                model.extend_from_slice(&data);
            };
            append(&mut f, &mut model, 1, 100);
            append(&mut f, &mut model, 2, WRITE_BUFFER + 7);
            append(&mut f, &mut model, 3, 50);
            f.flush().expect("flush");
            append(&mut f, &mut model, 4, 30);
            // Into the buffer (what was written stays, the buffer's head is kept), then
            // into bytes already written.
            let len = model.len() as u64 - 10;
            f.truncate(len).expect("truncate");
            model.truncate(len as usize);
            assert_eq!(f.len(), len);
            f.flush().expect("flush");
            assert_eq!(std::fs::read(&path).expect("read"), model);
            f.truncate(120).expect("truncate");
            model.truncate(120);
            assert_eq!(f.len(), 120);
            append(&mut f, &mut model, 5, 64);
            f.sync().expect("sync");
            append(&mut f, &mut model, 6, 9);
        }
        assert_eq!(std::fs::read(&path).expect("read"), model);
    }
}
