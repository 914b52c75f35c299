//! The file wrappers of [`super::DeviceFs`]: each forwards to the inner file and charges
//! its device for the I/O (see the module docs of `env::device` for when).

use super::model::{Direction, Io};
use super::{Device, Op};
use crate::env::{RandomAccessFile, SequentialFile, WritableFile};
use crate::error::Result;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// No I/O ended here yet: the first I/O of a file is never sequential.
const NO_OFFSET: u64 = u64::MAX;

/// A file being written on a simulated device.
pub(super) struct DeviceWritable {
    inner: Box<dyn WritableFile>,
    device: Arc<Device>,
    /// Bytes appended and not yet charged to the device.
    pending: u64,
}

impl DeviceWritable {
    pub(super) fn new(inner: Box<dyn WritableFile>, device: Arc<Device>) -> Self {
        DeviceWritable {
            inner,
            device,
            pending: 0,
        }
    }

    /// Charges `bytes` of write-back, sequential, around `real`.
    fn write_back<T>(
        &mut self,
        bytes: u64,
        real: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        if bytes == 0 {
            return real(self);
        }
        self.pending -= bytes;
        let io = Io {
            dir: Direction::Write,
            bytes,
            sequential: true,
        };
        let device = Arc::clone(&self.device);
        device.serve(Op::Write, io, || real(self))
    }
}

impl WritableFile for DeviceWritable {
    /// Charges the whole `max_io` chunks accumulated so far, as one write-back: the
    /// inner writer hands its buffer to the OS about as often.
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.pending += data.len() as u64;
        let max_io = self.device.model.max_io();
        let whole = self.pending - self.pending % max_io;
        self.write_back(whole, |f| f.inner.append(data))
    }
    fn flush(&mut self) -> Result<()> {
        self.write_back(self.pending, |f| f.inner.flush())
    }
    fn sync(&mut self) -> Result<()> {
        self.write_back(self.pending, |_| Ok(()))?;
        let io = Io {
            dir: Direction::Write,
            bytes: 0,
            sequential: false,
        };
        let inner = &mut self.inner;
        self.device.serve(Op::Sync, io, || inner.sync())
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
    /// Not charged: cutting a file back moves no data.
    fn truncate(&mut self, len: u64) -> Result<()> {
        let cut = self.inner.len().saturating_sub(len);
        self.inner.truncate(len)?;
        self.pending = self.pending.saturating_sub(cut);
        Ok(())
    }
}

/// A file read at offsets on a simulated device.
pub(super) struct DeviceRandom {
    inner: Arc<dyn RandomAccessFile>,
    device: Arc<Device>,
    /// Where the last read ended ([`NO_OFFSET`] before the first), to tell a sequential
    /// read. Relaxed: a race between readers only misjudges one read's access latency.
    next: AtomicU64,
}

impl DeviceRandom {
    pub(super) fn new(inner: Arc<dyn RandomAccessFile>, device: Arc<Device>) -> Self {
        DeviceRandom {
            inner,
            device,
            next: AtomicU64::new(NO_OFFSET),
        }
    }

    fn read_io(&self, offset: u64, len: usize) -> Io {
        let end = offset.saturating_add(len as u64);
        let prev = self.next.swap(end, Ordering::Relaxed);
        Io {
            dir: Direction::Read,
            bytes: len as u64,
            sequential: prev == offset,
        }
    }
}

impl RandomAccessFile for DeviceRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let io = self.read_io(offset, buf.len());
        self.device
            .serve(Op::Read, io, || self.inner.read_exact_at(offset, buf))
    }
    /// Forwards to the inner `read_vec`, keeping its no-zero-fill read.
    fn read_vec(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        let io = self.read_io(offset, len);
        self.device
            .serve(Op::Read, io, || self.inner.read_vec(offset, len))
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

/// A file read front to back on a simulated device: every read after the first is
/// sequential.
pub(super) struct DeviceSequential {
    inner: Box<dyn SequentialFile>,
    device: Arc<Device>,
    started: bool,
}

impl DeviceSequential {
    pub(super) fn new(inner: Box<dyn SequentialFile>, device: Arc<Device>) -> Self {
        DeviceSequential {
            inner,
            device,
            started: false,
        }
    }
}

impl SequentialFile for DeviceSequential {
    /// Charges the bytes asked for (the read's size as issued; a short read at the end
    /// of the file is charged in full, as the device would read the whole request).
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let io = Io {
            dir: Direction::Read,
            bytes: buf.len() as u64,
            sequential: std::mem::replace(&mut self.started, true),
        };
        let inner = &mut self.inner;
        self.device.serve(Op::Read, io, || inner.read(buf))
    }
}
