//! [`CountingFs`]: the file-system wrapper that records each data path's table I/O.
//!
//! Role: open wraps the database's file system (the injected one, or [`super::PosixFs`])
//! in a `CountingFs` that knows the data paths' directories. A table file (`*.sst`)
//! opened or created directly in data path `i`'s directory gets a handle that records
//! its reads (with their latency) and appends in path `i`'s
//! [`PathStats`]; every other file and every other method passes through untouched.
//! Counting at this seam sees every table I/O, user reads, compaction reads and table
//! writes alike, without a counter in the table reader or the executor. Each byte is
//! also counted under the calling thread's [`IoPurpose`] (`stats::purpose`).

use super::{FileLock, FileOptions, FileSystem, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::Result;
use crate::filename::{self, FileType};
use crate::stats::path::PathStats;
use crate::stats::purpose::IoPurpose;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// See the module docs. `paths[i]` are the counters of data path `i`.
pub(crate) struct CountingFs {
    inner: Arc<dyn FileSystem>,
    paths: Vec<Arc<PathStats>>,
}

impl CountingFs {
    /// Wraps `inner`, counting the table I/O of each path's directory in its
    /// counters.
    pub fn new(inner: Arc<dyn FileSystem>, paths: Vec<Arc<PathStats>>) -> CountingFs {
        CountingFs { inner, paths }
    }

    /// The counters of the data path holding `path`, if it is a table file directly in
    /// a data path's directory (the first such path, should two share a directory).
    fn stats_for(&self, path: &Path) -> Option<&Arc<PathStats>> {
        let name = path.file_name()?.to_str()?;
        if !matches!(filename::parse(name), Some(FileType::Table(_))) {
            return None;
        }
        let dir = path.parent()?;
        self.paths.iter().find(|s| s.dir() == dir)
    }

    fn wrap_writer(&self, path: &Path, file: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
        match self.stats_for(path) {
            Some(stats) => Box::new(CountedWriter {
                inner: file,
                stats: Arc::clone(stats),
            }),
            None => file,
        }
    }

    fn wrap_reader(
        &self,
        path: &Path,
        file: Arc<dyn RandomAccessFile>,
    ) -> Arc<dyn RandomAccessFile> {
        match self.stats_for(path) {
            Some(stats) => Arc::new(CountedReader {
                inner: file,
                stats: Arc::clone(stats),
            }),
            None => file,
        }
    }
}

impl FileSystem for CountingFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let file = self.inner.create(path)?;
        Ok(self.wrap_writer(path, file))
    }
    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        let file = self.inner.open_random(path)?;
        Ok(self.wrap_reader(path, file))
    }
    fn create_with(&self, path: &Path, opts: FileOptions) -> Result<Box<dyn WritableFile>> {
        let file = self.inner.create_with(path, opts)?;
        Ok(self.wrap_writer(path, file))
    }
    fn open_random_with(
        &self,
        path: &Path,
        opts: FileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        let file = self.inner.open_random_with(path, opts)?;
        Ok(self.wrap_reader(path, file))
    }
    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        self.inner.open_sequential(path)
    }
    forward_directory_ops!(inner);
}

/// A table file being written in a counted data path.
struct CountedWriter {
    inner: Box<dyn WritableFile>,
    stats: Arc<PathStats>,
}

impl WritableFile for CountedWriter {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.inner.append(data)?;
        self.stats.record_write(data.len(), IoPurpose::current());
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        self.inner.flush()
    }
    fn sync(&mut self) -> Result<()> {
        self.inner.sync()
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn truncate(&mut self, len: u64) -> Result<()> {
        self.inner.truncate(len)
    }
}

/// A table file read in a counted data path.
struct CountedReader {
    inner: Arc<dyn RandomAccessFile>,
    stats: Arc<PathStats>,
}

impl RandomAccessFile for CountedReader {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let start = Instant::now();
        self.inner.read_exact_at(offset, buf)?;
        self.stats
            .record_read(buf.len(), start.elapsed(), IoPurpose::current());
        Ok(())
    }
    fn read_vec(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        let start = Instant::now();
        let out = self.inner.read_vec(offset, len)?;
        self.stats
            .record_read(len, start.elapsed(), IoPurpose::current());
        Ok(out)
    }
    fn is_direct(&self) -> bool {
        self.inner.is_direct()
    }
    fn size(&self) -> u64 {
        self.inner.size()
    }
    fn path(&self) -> &Path {
        self.inner.path()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::PosixFs;

    #[test]
    fn table_files_of_each_path_are_counted_and_other_files_are_not() {
        let root = tempfile::tempdir().expect("tempdir");
        let dirs = vec![root.path().join("a"), root.path().join("b")];
        let paths: Vec<_> = dirs
            .iter()
            .map(|d| Arc::new(PathStats::new("db", d.clone())))
            .collect();
        let fs = CountingFs::new(Arc::new(PosixFs), paths.clone());
        for d in &dirs {
            fs.create_dir_all(d).expect("mkdir");
        }
        let table = filename::table_file(&dirs[1], 7);
        let mut w = fs
            .create_with(&table, FileOptions::default())
            .expect("create");
        w.append(b"hello").expect("append");
        w.append(b" world").expect("append");
        w.sync().expect("sync");
        drop(w);
        let r = fs.open_random(&table).expect("open");
        assert_eq!(r.read_vec(6, 5).expect("read"), b"world");
        let mut buf = [0u8; 5];
        r.read_exact_at(0, &mut buf).expect("read");
        // Not a table, and a table outside every data path: not counted.
        let mut wal = fs.create(&filename::wal_file(&dirs[1], 8)).expect("wal");
        wal.append(b"log").expect("append");
        let mut stray = fs
            .create(&filename::table_file(root.path(), 9))
            .expect("stray");
        stray.append(b"x").expect("append");

        let snaps: Vec<_> = paths.iter().map(|p| p.snapshot()).collect();
        assert_eq!((snaps[0].reads, snaps[0].writes), (0, 0));
        let b = &snaps[1];
        assert_eq!(b.path, dirs[1]);
        assert_eq!((b.writes, b.bytes_written), (2, 11));
        assert_eq!((b.reads, b.bytes_read), (2, 10));
        assert_eq!(b.read_latency.count(), 2);
    }
}
