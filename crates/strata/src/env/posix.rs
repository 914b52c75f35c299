//! The production [`FileSystem`]: plain files via `std::fs`, positional reads with
//! `pread`, a user-space write buffer, `fdatasync` for sync.

use super::{FileLock, FileSystem, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
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
}

impl PosixWritable {
    fn flush_buf(&mut self) -> Result<()> {
        if !self.buf.is_empty() {
            self.file
                .write_all(&self.buf)
                .map_err(|e| Error::io("write", &self.path, e))?;
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
                return self
                    .file
                    .write_all(data)
                    .map_err(|e| Error::io("write", &self.path, e));
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
            .map_err(|e| Error::io("fsync", &self.path, e))
    }
    fn len(&self) -> u64 {
        self.len
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
            .map_err(|e| Error::io("read", &self.path, e))
    }
    fn size(&self) -> u64 {
        self.size
    }
    fn path(&self) -> &Path {
        &self.path
    }
}

struct PosixSequential {
    file: File,
    path: PathBuf,
}

impl SequentialFile for PosixSequential {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.file
            .read(buf)
            .map_err(|e| Error::io("read", &self.path, e))
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
            .map_err(|e| Error::io("create", path, e))?;
        Ok(Box::new(PosixWritable {
            file,
            path: path.to_path_buf(),
            buf: Vec::with_capacity(WRITE_BUFFER),
            len: 0,
        }))
    }
    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        let file = File::open(path).map_err(|e| Error::io("open", path, e))?;
        let size = file
            .metadata()
            .map_err(|e| Error::io("stat", path, e))?
            .len();
        Ok(Arc::new(PosixRandom {
            file,
            path: path.to_path_buf(),
            size,
        }))
    }
    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        let file = File::open(path).map_err(|e| Error::io("open", path, e))?;
        Ok(Box::new(PosixSequential {
            file,
            path: path.to_path_buf(),
        }))
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        std::fs::rename(from, to).map_err(|e| Error::io("rename", from, e))
    }
    fn remove(&self, path: &Path) -> Result<()> {
        std::fs::remove_file(path).map_err(|e| Error::io("remove", path, e))
    }
    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| Error::io("readdir", dir, e))? {
            let entry = entry.map_err(|e| Error::io("readdir", dir, e))?;
            if let Some(name) = entry.file_name().to_str() {
                out.push(name.to_string());
            }
        }
        Ok(out)
    }
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io("mkdir", dir, e))
    }
    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let d = File::open(dir).map_err(|e| Error::io("open-dir", dir, e))?;
        d.sync_all().map_err(|e| Error::io("fsync-dir", dir, e))
    }
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        Ok(std::fs::metadata(path)
            .map_err(|e| Error::io("stat", path, e))?
            .len())
    }
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| Error::io("create", path, e))?;
        match file.try_lock() {
            Ok(()) => Ok(Box::new(PosixLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Err(Error::Locked(path.to_path_buf())),
            Err(std::fs::TryLockError::Error(e)) => Err(Error::io("lock", path, e)),
        }
    }
}
