//! [`Readahead`]: one table iterator's window of file bytes read ahead of its
//! sequential block reads, for files opened with direct I/O.
//!
//! Why: with `O_DIRECT` nothing reads ahead for us (the kernel's readahead lives in the
//! page cache), so an iterator walking a table would pay one device round trip per
//! 4 KiB block; a scan was 0.28x RocksDB's (docs/performance.md, "Direct I/O"). As in
//! RocksDB's auto-readahead, once an iterator has read [`TRIGGER`] blocks that each
//! start where the previous one ended, it reads a window of [`INITIAL_WINDOW`] bytes
//! at once, doubling with each window up to [`MAX_WINDOW`]; blocks inside the window
//! are served from it. Any non-sequential read (a seek, `prev`) drops the window and
//! starts over, so point-lookup-like access never reads more than it asks for.
//!
//! Contract: owned by one iterator (no sharing, no lock). Served bytes are exactly the
//! file's bytes at the asked offsets; the caller checks each block's checksum as for a
//! block read alone.

use crate::env::RandomAccessFile;
use crate::error::Result;

/// Sequential block reads before the first window is read.
pub(crate) const TRIGGER: u32 = 2;
/// The first window, bytes (RocksDB's `initial_auto_readahead_size`).
pub(crate) const INITIAL_WINDOW: usize = 8 << 10;
/// The largest window, bytes (RocksDB's `max_auto_readahead_size`).
pub(crate) const MAX_WINDOW: usize = 256 << 10;

/// See the module docs.
#[derive(Debug)]
pub(crate) struct Readahead {
    /// File bytes from `start`.
    buf: Vec<u8>,
    start: u64,
    /// Size of the next window.
    window: usize,
    /// End of the last block asked for, to recognise the next one as sequential.
    last_end: Option<u64>,
    /// Sequential reads in a row.
    run: u32,
}

impl Default for Readahead {
    fn default() -> Readahead {
        Readahead {
            buf: Vec::new(),
            start: 0,
            window: INITIAL_WINDOW,
            last_end: None,
            run: 0,
        }
    }
}

impl Readahead {
    /// The `len` bytes of `file` at `offset`, from the window (reading a new one if
    /// needed), or `None` if readahead does not apply to this read (not sequential yet:
    /// the caller reads the block alone). A window never extends past `limit` (the end
    /// of the table's blocks).
    ///
    /// # Errors
    /// The file's read error (the window is then empty).
    pub fn read(
        &mut self,
        file: &dyn RandomAccessFile,
        offset: u64,
        len: usize,
        limit: u64,
    ) -> Result<Option<Vec<u8>>> {
        let end = offset.saturating_add(len as u64);
        let sequential = self.last_end == Some(offset);
        self.last_end = Some(end);
        if !sequential {
            self.run = 0;
            self.window = INITIAL_WINDOW;
            self.buf.clear();
            return Ok(None);
        }
        self.run = self.run.saturating_add(1);
        if self.run < TRIGGER {
            return Ok(None);
        }
        if let Some(bytes) = self.in_window(offset, len) {
            return Ok(Some(bytes));
        }
        let want = self.window.max(len) as u64;
        let n = want.min(limit.saturating_sub(offset)).max(len as u64);
        self.buf = file.read_vec(offset, usize::try_from(n).unwrap_or(len))?;
        self.start = offset;
        self.window = (self.window * 2).min(MAX_WINDOW);
        Ok(self.in_window(offset, len))
    }

    /// The bytes `[offset, offset + len)` if the window holds all of them.
    fn in_window(&self, offset: u64, len: usize) -> Option<Vec<u8>> {
        let from = usize::try_from(offset.checked_sub(self.start)?).ok()?;
        self.buf
            .get(from..from.checked_add(len)?)
            .map(<[u8]>::to_vec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{FileSystem, PosixFs};

    /// A file of `n` bytes where byte `i` is `i % 251`.
    fn file(n: usize) -> (tempfile::TempDir, std::sync::Arc<dyn RandomAccessFile>) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        let mut w = PosixFs.create(&path).expect("create");
        let bytes: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        w.append(&bytes).expect("append");
        w.sync().expect("sync");
        let r = PosixFs.open_random(&path).expect("open");
        (dir, r)
    }

    fn expect(offset: u64, len: usize) -> Vec<u8> {
        (offset..offset + len as u64)
            .map(|i| (i % 251) as u8)
            .collect()
    }

    #[test]
    fn sequential_blocks_come_from_growing_windows_with_exact_bytes() {
        let (_d, f) = file(1 << 20);
        let mut ra = Readahead::default();
        let limit = 1 << 20;
        let mut offset = 0u64;
        let mut served = 0;
        let mut windows = Vec::new();
        for _ in 0..200 {
            let len = 4000 + (offset as usize % 7);
            let before = (ra.start, ra.buf.len());
            if let Some(bytes) = ra.read(&*f, offset, len, limit).expect("read") {
                assert_eq!(bytes, expect(offset, len), "at {offset}");
                served += 1;
                if (ra.start, ra.buf.len()) != before {
                    windows.push(ra.buf.len());
                }
            }
            offset += len as u64;
        }
        // The first block starts the run; the first sequential one counts it to 1.
        assert_eq!(served, 199 - 1);
        assert_eq!(windows[0], INITIAL_WINDOW);
        assert_eq!(windows[1], 2 * INITIAL_WINDOW);
        assert!(windows.iter().all(|&w| w <= MAX_WINDOW));
        assert!(windows.contains(&MAX_WINDOW), "{windows:?}");
    }

    #[test]
    fn a_jump_or_the_limit_resets_or_bounds_the_window() {
        let (_d, f) = file(100_000);
        let mut ra = Readahead::default();
        let limit = 50_000;
        for i in 0..3u64 {
            let _ = ra.read(&*f, i * 1000, 1000, limit).expect("read");
        }
        assert!(!ra.buf.is_empty());
        // A seek elsewhere: not served, window dropped.
        assert!(ra.read(&*f, 40_000, 1000, limit).expect("read").is_none());
        assert!(ra.buf.is_empty());
        // Near the limit the window stops there.
        let mut o = 40_000;
        while o + 1000 <= limit {
            if let Some(b) = ra.read(&*f, o, 1000, limit).expect("read") {
                assert_eq!(b, expect(o, 1000));
            }
            assert!(ra.start + ra.buf.len() as u64 <= limit);
            o += 1000;
        }
    }
}
