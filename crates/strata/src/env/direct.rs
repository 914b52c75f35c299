//! Direct-I/O files of [`super::PosixFs`]: `O_DIRECT` readers and writers with aligned
//! buffers (Linux only).
//!
//! # Role
//! `PosixFs::open_random_with` / `create_with` build these when
//! [`super::FileOptions::direct`] is set, i.e. for table files when the database runs
//! with `use_direct_reads` / `use_direct_io_for_flush_and_compaction`. WAL, MANIFEST
//! and the small whole files never come here.
//!
//! # Alignment
//! `O_DIRECT` requires the file offset, the length and the buffer address of every read
//! and write to be multiples of the file's direct-I/O alignment. [`dio_alignment`] asks
//! the kernel with `statx(STATX_DIOALIGN)` (Linux 6.1+) and uses the larger of the
//! offset and memory alignments it reports. When the kernel or the file system does not
//! report them (older kernels; file systems that leave the fields 0), it uses 4096: the
//! page size, a multiple of every logical block size in common use (512 and 4096), and
//! RocksDB's own fallback (`kDefaultPageSize`). A reported value that is not a power of
//! two in 512..=65536 is not trusted either; 4096 is used.
//!
//! # Reads
//! A read of `len` bytes at `offset` reads the aligned range that covers it
//! (`[align_down(offset), align_up(offset + len))`) into a per-thread aligned scratch
//! buffer and copies the asked bytes out: one copy per read, which a direct read cannot
//! avoid without an aligned `Vec` (a `Vec<u8>` must be freed with alignment 1). A file
//! whose length is not a multiple of the alignment ends in a partial block: the kernel
//! returns the bytes up to end of file, which is all a valid read needs. A direct read
//! that comes back short anywhere else than the end of file would leave an unaligned
//! file offset, so a short read that is not aligned is treated as end of file.
//!
//! # Writes
//! Appends fill an aligned buffer of [`DIRECT_WRITE_BUFFER`] bytes; a full buffer is
//! written at once. `flush` writes the whole aligned blocks buffered and keeps the
//! partial last block in memory. `sync` also writes that block padded with zeros to the
//! alignment, `ftruncate`s the file back to its real length, then `fdatasync`s; the
//! block stays buffered, so later appends rewrite it in place (what RocksDB's
//! `PosixWritableFile` does with its `Truncate` at close). Durability is the
//! [`super::WritableFile`] contract unchanged: nothing is promised before `sync`.
//!
//! # Concurrency
//! [`DirectRandom`] is shared by many readers (positional reads; the scratch buffer is
//! per thread). [`DirectWritable`] has one owner.

use super::{RandomAccessFile, WritableFile};
use crate::error::{Error, IoOp, Result};
use std::cell::RefCell;
use std::fs::{File, OpenOptions};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Alignment used when the kernel does not report one (see the module docs).
pub(super) const FALLBACK_ALIGN: usize = 4096;

/// Bytes of the aligned write buffer: each full buffer is one `pwrite` (RocksDB's
/// `writable_file_max_buffer_size` default is the same 1 MiB).
const DIRECT_WRITE_BUFFER: usize = 1 << 20;

/// Memory alignment of every direct-I/O buffer, at least: the page. A buffer aligned
/// only to the device's 512 bytes spans one page more than its length, and on this
/// machine's virtio disk 1 MiB direct writes from such buffers ran at about a third of
/// the rate of page-aligned ones (`strata device-bench`, docs/devices.md).
const PAGE: usize = 4096;

/// A per-thread read buffer larger than this is not kept after the read.
const KEEP_SCRATCH_MAX: usize = 4 << 20;

/// Opens `path` with `O_DIRECT`, for reading or (`create`) for writing a new, truncated
/// file.
///
/// # Errors
/// `InvalidArgument` naming `path` if the file system refuses `O_DIRECT` (`EINVAL` at
/// open, as tmpfs before Linux 6.6 does); otherwise `Error::io` with `op`.
pub(super) fn open(path: &Path, create: bool, op: IoOp) -> Result<File> {
    let mut o = OpenOptions::new();
    if create {
        o.write(true).create(true).truncate(true);
    } else {
        o.read(true);
    }
    o.custom_flags(libc::O_DIRECT)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EINVAL) => super::direct_io_refused(path, e),
            _ => Error::io(op, path, e),
        })
}

/// The direct-I/O alignment of `file`, bytes: a power of two (see the module docs for
/// the query and the fallback).
pub(super) fn dio_alignment(file: &File) -> usize {
    let mut st = MaybeUninit::<libc::statx>::zeroed();
    // SAFETY: `st` is a zeroed `statx` (all integer fields, so zero is a valid value)
    // that the kernel may write; the path is an empty NUL-terminated string, which with
    // `AT_EMPTY_PATH` means "the file `fd` refers to"; `fd` is open for the call.
    let rc = unsafe {
        libc::statx(
            file.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            st.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return FALLBACK_ALIGN;
    }
    // SAFETY: zero-initialised above, so initialised whether or not the kernel wrote it.
    let st = unsafe { st.assume_init() };
    if st.stx_mask & libc::STATX_DIOALIGN == 0 {
        return FALLBACK_ALIGN;
    }
    let align = st.stx_dio_offset_align.max(st.stx_dio_mem_align) as usize;
    if align.is_power_of_two() && (512..=65536).contains(&align) {
        align
    } else {
        FALLBACK_ALIGN
    }
}

/// A byte buffer with a window at an aligned address: a `Vec` over-allocated so that
/// some offset into it is aligned (no unsafe allocation needed). Zeroed once, at
/// allocation.
struct AlignedBuf {
    storage: Vec<u8>,
}

impl AlignedBuf {
    /// A buffer that can hold a window of `len` bytes aligned to `align` (a power of
    /// two).
    fn new(len: usize, align: usize) -> AlignedBuf {
        AlignedBuf {
            storage: vec![0u8; len.saturating_add(align.max(PAGE))],
        }
    }

    /// The `len`-byte window starting at the first `align`-aligned address, or `None`
    /// if it does not fit. The storage never reallocates, so the window is the same
    /// bytes on every call with the same arguments.
    fn window(&mut self, align: usize, len: usize) -> Option<&mut [u8]> {
        let addr = self.storage.as_ptr().addr();
        let start = addr.checked_next_multiple_of(align.max(PAGE))? - addr;
        self.storage.get_mut(start..start.checked_add(len)?)
    }
}

thread_local! {
    /// Scratch buffer of direct reads on this thread (grown on demand).
    static SCRATCH: RefCell<Option<AlignedBuf>> = const { RefCell::new(None) };
}

/// Runs `f` on an `align`-aligned scratch window of `len` bytes (per thread, reused).
fn with_scratch<R>(align: usize, len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    let fresh = || AlignedBuf::new(len, align);
    SCRATCH.with(|cell| {
        let Ok(mut slot) = cell.try_borrow_mut() else {
            // Re-entered (cannot happen today): use a one-off buffer.
            let mut b = fresh();
            return f(b.window(align, len).unwrap_or_default());
        };
        if len > KEEP_SCRATCH_MAX {
            let mut b = fresh();
            return f(b.window(align, len).unwrap_or_default());
        }
        let fits = slot
            .as_mut()
            .is_some_and(|b| b.window(align, len).is_some());
        let buf = if fits {
            slot.as_mut()
        } else {
            Some(slot.insert(fresh()))
        };
        // `fresh()` always fits: it is over-allocated by `align`.
        f(buf.and_then(|b| b.window(align, len)).unwrap_or_default())
    })
}

fn eof(path: &Path) -> Error {
    Error::io(
        IoOp::Read,
        path,
        io::Error::new(io::ErrorKind::UnexpectedEof, "read past end of file"),
    )
}

/// A table file opened for `O_DIRECT` positional reads.
pub(super) struct DirectRandom {
    pub(super) file: File,
    pub(super) path: PathBuf,
    pub(super) size: u64,
    /// Direct-I/O alignment of `file` ([`dio_alignment`]).
    pub(super) align: usize,
}

impl DirectRandom {
    /// Reads the aligned range covering `[offset, offset + len)` and hands `f` exactly
    /// those `len` bytes (borrowed from the scratch buffer for the call only).
    fn read_aligned<R>(&self, offset: u64, len: usize, f: impl FnOnce(&[u8]) -> R) -> Result<R> {
        let a = self.align as u64;
        let end = offset
            .checked_add(len as u64)
            .ok_or_else(|| eof(&self.path))?;
        let start = offset - offset % a;
        let stop = end
            .checked_next_multiple_of(a)
            .ok_or_else(|| eof(&self.path))?;
        let span = usize::try_from(stop - start).map_err(|_| eof(&self.path))?;
        // `offset - start < align`, so it fits in usize.
        let head = (offset - start) as usize;
        let need = head + len;
        with_scratch(self.align, span, |buf| {
            let mut done = 0usize;
            while done < need {
                let Some(dst) = buf.get_mut(done..) else {
                    return Err(eof(&self.path));
                };
                match self.file.read_at(dst, start + done as u64) {
                    Ok(0) => return Err(eof(&self.path)),
                    Ok(n) => {
                        done += n;
                        // Only the end of file returns a partial block (module docs).
                        if !done.is_multiple_of(self.align) && done < need {
                            return Err(eof(&self.path));
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(Error::io(IoOp::Read, &self.path, e)),
                }
            }
            let wanted = buf.get(head..need).ok_or_else(|| eof(&self.path))?;
            Ok(f(wanted))
        })
    }
}

impl RandomAccessFile for DirectRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.read_aligned(offset, buf.len(), |src| buf.copy_from_slice(src))
    }
    /// One copy: from the aligned scratch buffer into the returned `Vec`.
    fn read_vec(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        self.read_aligned(offset, len, <[u8]>::to_vec)
    }
    fn is_direct(&self) -> bool {
        true
    }
    fn size(&self) -> u64 {
        self.size
    }
    fn path(&self) -> &Path {
        &self.path
    }
}

/// A table file being written with `O_DIRECT` (see the module docs for the protocol).
pub(super) struct DirectWritable {
    file: File,
    path: PathBuf,
    align: usize,
    buf: AlignedBuf,
    /// Bytes of the buffer window in use.
    filled: usize,
    /// File offset of the window's first byte; a multiple of `align`.
    buf_offset: u64,
    /// Bytes appended so far (the file's real length once synced).
    len: u64,
}

impl DirectWritable {
    /// A writer for `file`, just created empty.
    pub(super) fn new(file: File, path: PathBuf) -> DirectWritable {
        let align = dio_alignment(&file);
        DirectWritable {
            file,
            path,
            align,
            buf: AlignedBuf::new(DIRECT_WRITE_BUFFER, align),
            filled: 0,
            buf_offset: 0,
            len: 0,
        }
    }

    /// Writes the first `n` bytes of the window (a multiple of `align`) at `buf_offset`.
    fn write_window(&mut self, n: usize) -> Result<()> {
        let (align, off) = (self.align, self.buf_offset);
        let data = self
            .buf
            .window(align, DIRECT_WRITE_BUFFER)
            .and_then(|w| w.get(..n))
            .ok_or_else(|| Error::Internal("direct write buffer misaligned".into()))?;
        self.file
            .write_all_at(data, off)
            .map_err(|e| Error::io(IoOp::Write, &self.path, e))
    }

    /// Writes the whole aligned blocks buffered and moves the partial one to the front.
    fn write_full_blocks(&mut self) -> Result<()> {
        let full = self.filled - self.filled % self.align;
        if full == 0 {
            return Ok(());
        }
        self.write_window(full)?;
        self.buf_offset += full as u64;
        let filled = self.filled;
        if let Some(w) = self.buf.window(self.align, DIRECT_WRITE_BUFFER) {
            w.copy_within(full..filled, 0);
        }
        self.filled -= full;
        Ok(())
    }

    /// Writes the partial last block padded with zeros, then cuts the file back to
    /// `len`. The block stays buffered (the next append continues it).
    fn write_tail(&mut self) -> Result<()> {
        if self.filled == 0 {
            return Ok(());
        }
        let padded = self.filled.next_multiple_of(self.align);
        let filled = self.filled;
        if let Some(pad) = self
            .buf
            .window(self.align, DIRECT_WRITE_BUFFER)
            .and_then(|w| w.get_mut(filled..padded))
        {
            pad.fill(0);
        }
        self.write_window(padded)?;
        self.file
            .set_len(self.len)
            .map_err(|e| Error::io(IoOp::Truncate, &self.path, e))
    }
}

impl WritableFile for DirectWritable {
    fn append(&mut self, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            let filled = self.filled;
            let w = self
                .buf
                .window(self.align, DIRECT_WRITE_BUFFER)
                .and_then(|w| w.get_mut(filled..))
                .ok_or_else(|| Error::Internal("direct write buffer misaligned".into()))?;
            let n = w.len().min(data.len());
            let (now, rest) = data.split_at(n);
            if let Some(dst) = w.get_mut(..n) {
                dst.copy_from_slice(now);
            }
            self.filled += n;
            self.len += n as u64;
            data = rest;
            if self.filled == DIRECT_WRITE_BUFFER {
                self.write_window(DIRECT_WRITE_BUFFER)?;
                self.buf_offset += DIRECT_WRITE_BUFFER as u64;
                self.filled = 0;
            }
        }
        Ok(())
    }
    /// Writes the whole aligned blocks; the partial last block waits for `sync` (or
    /// drop), since a direct write cannot end mid-block.
    fn flush(&mut self) -> Result<()> {
        self.write_full_blocks()
    }
    fn sync(&mut self) -> Result<()> {
        self.write_full_blocks()?;
        self.write_tail()?;
        self.file
            .sync_data()
            .map_err(|e| Error::io(IoOp::Fsync, &self.path, e))
    }
    fn len(&self) -> u64 {
        self.len
    }
}

impl Drop for DirectWritable {
    fn drop(&mut self) {
        // Best effort, as the buffered writer: hand every byte to the OS; durability was
        // never promised without `sync`.
        let _ = self.write_full_blocks().and_then(|()| self.write_tail());
    }
}
