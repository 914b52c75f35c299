//! A simulated storage device: [`DeviceFs`], a [`FileSystem`] wrapper that delays each
//! I/O under a directory by that directory's [`DeviceModel`].
//!
//! # Role
//! Experiments need a fast and a slow device (tiered storage), or a device other than
//! the one the machine has. `DeviceFs` wraps any file system (normally [`super::PosixFs`]),
//! assigns a model to each registered directory (longest path prefix wins; files under
//! no registered directory are passed through untouched) and wraps the files it opens
//! there, so every read, write-back and sync that reaches the inner file system waits
//! as long as the model says. It is injected like any file system, with
//! [`crate::DbBuilder::file_system`].
//!
//! # What is simulated and what is real
//! - **Real**: the bytes. Every call is forwarded to the inner file system, which does
//!   the actual I/O (direct or buffered, as opened); reads return its bytes unchanged.
//! - **Simulated**: the time. Each I/O is scheduled on the model when it starts (see
//!   `model.rs`: access latency + transfer time, IOPS and bandwidth token buckets, a
//!   queue depth) and the calling thread then sleeps until the modelled completion. The
//!   real I/O runs inside that window, so the model is a floor: an I/O the real disk
//!   serves faster than the model takes the model's time, one it serves slower takes
//!   the real time. A model cannot make this machine's disk faster. (The real clock
//!   wakes a thread up to its usual wake-up lateness early, at most 100 µs, so that
//!   delays are right on average: see `clock.rs`.)
//! - **Reads**: every read that reaches the file system pays the model, including one
//!   the kernel's page cache serves with buffered I/O. Run the engine with
//!   `use_direct_reads` so that reads are device reads anyway and the page cache does
//!   not hide the real disk under the model; the block cache is then the only cache, as
//!   on a real device.
//! - **Writes**: the engine's writers buffer appends in user space; the device is
//!   charged when bytes leave that buffer. The wrapper counts appended bytes and charges
//!   them in whole [`DeviceModel::max_io`] chunks as they accumulate, then the remainder
//!   at `flush` or `sync`; appends are sequential (no access latency). `sync` costs one
//!   more I/O with the access latency (the device's cache flush).
//! - **Not modelled**: metadata operations (create, rename, remove, list, directory
//!   sync) cost nothing; there is no device cache, no read/write interference beyond the
//!   shared buckets, no garbage collection or tail-latency spikes.
//!
//! # Concurrency
//! A device's schedule is one mutex held only to compute an I/O's completion instant
//! (no I/O or sleep under it); threads sleep on their own. Its counters are atomics.
//!
//! # See also
//! `model.rs` (the schedule), `presets.rs` (the published figures), `tests.rs`, and
//! `strata device-bench`, which measures a model against its figures and the real disk
//! against fio (docs/devices.md).

mod clock;
mod files;
mod model;
mod presets;
#[cfg(test)]
mod tests;

pub use clock::Clock;
pub use model::DeviceModel;

use super::{FileLock, FileOptions, FileSystem, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::Result;
use clock::MonotonicClock;
use files::{DeviceRandom, DeviceSequential, DeviceWritable};
use model::{Io, Schedule};
use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Counters of one simulated device since its [`DeviceFs`] was built.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeviceStats {
    /// Read calls that reached the device.
    pub reads: u64,
    /// Bytes those reads returned.
    pub bytes_read: u64,
    /// Write-backs charged (chunks of appended bytes; see the module docs).
    pub writes: u64,
    /// Bytes those write-backs carried.
    pub bytes_written: u64,
    /// `sync` calls.
    pub syncs: u64,
    /// Total time threads slept for the model beyond the real I/O.
    pub delay: Duration,
}

/// A [`FileSystem`] that delays the I/O of files under registered directories by a
/// [`DeviceModel`] (see the module docs for what is simulated).
///
/// ```no_run
/// use std::sync::Arc;
/// use strata::env::{DeviceFs, DeviceModel, PosixFs};
/// let fs = DeviceFs::new(Arc::new(PosixFs))
///     .with_device("/data/fast", DeviceModel::nvme())
///     .with_device("/data/slow", DeviceModel::gp3());
/// let options = strata::Options::default().with_use_direct_reads(true);
/// let db = strata::Db::builder().file_system(Arc::new(fs)).open("/data/fast/db", options)?;
/// # Ok::<(), strata::Error>(())
/// ```
pub struct DeviceFs {
    inner: Arc<dyn FileSystem>,
    clock: Arc<dyn Clock>,
    /// Registered directories, longest first, so the first prefix match is the longest.
    devices: Vec<(PathBuf, Arc<Device>)>,
}

/// The devices and their models (the inner file system has no `Debug`).
impl std::fmt::Debug for DeviceFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.devices.iter().map(|(d, dev)| (d, &dev.model)))
            .finish()
    }
}

impl DeviceFs {
    /// Wraps `inner` with no device registered (everything passes through), timed by
    /// the real monotonic clock.
    pub fn new(inner: Arc<dyn FileSystem>) -> Self {
        Self::with_clock(inner, Arc::new(MonotonicClock::new()))
    }

    /// Wraps `inner`, timing the model with `clock` (tests inject a clock that does not
    /// really sleep).
    pub fn with_clock(inner: Arc<dyn FileSystem>, clock: Arc<dyn Clock>) -> Self {
        DeviceFs {
            inner,
            clock,
            devices: Vec::new(),
        }
    }

    /// Registers `model` for the files under `dir` (chainable). Paths match by
    /// components as the engine spells them, without resolving symlinks or `..`:
    /// register the directory as the database path is given. Registering the same
    /// directory again replaces its model and counters.
    #[must_use]
    pub fn with_device(mut self, dir: impl Into<PathBuf>, model: DeviceModel) -> Self {
        let dir = dir.into();
        self.devices.retain(|(d, _)| *d != dir);
        let device = Arc::new(Device::new(model, Arc::clone(&self.clock)));
        self.devices.push((dir, device));
        self.devices
            .sort_by_key(|(d, _)| std::cmp::Reverse(d.components().count()));
        self
    }

    /// The counters of the device registered at exactly `dir`, or `None` if none is.
    pub fn stats(&self, dir: &Path) -> Option<DeviceStats> {
        self.devices
            .iter()
            .find(|(d, _)| d == dir)
            .map(|(_, dev)| dev.stats())
    }

    /// The device whose directory is the longest prefix of `path`.
    fn device_for(&self, path: &Path) -> Option<&Arc<Device>> {
        self.devices
            .iter()
            .find(|(d, _)| path.starts_with(d))
            .map(|(_, dev)| dev)
    }

    fn wrap_writable(&self, path: &Path, f: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
        match self.device_for(path) {
            Some(dev) => Box::new(DeviceWritable::new(f, Arc::clone(dev))),
            None => f,
        }
    }

    fn wrap_random(&self, path: &Path, f: Arc<dyn RandomAccessFile>) -> Arc<dyn RandomAccessFile> {
        match self.device_for(path) {
            Some(dev) => Arc::new(DeviceRandom::new(f, Arc::clone(dev))),
            None => f,
        }
    }
}

impl FileSystem for DeviceFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        Ok(self.wrap_writable(path, self.inner.create(path)?))
    }
    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        Ok(self.wrap_random(path, self.inner.open_random(path)?))
    }
    fn create_with(&self, path: &Path, opts: FileOptions) -> Result<Box<dyn WritableFile>> {
        Ok(self.wrap_writable(path, self.inner.create_with(path, opts)?))
    }
    fn open_random_with(
        &self,
        path: &Path,
        opts: FileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        Ok(self.wrap_random(path, self.inner.open_random_with(path, opts)?))
    }
    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        let f = self.inner.open_sequential(path)?;
        Ok(match self.device_for(path) {
            Some(dev) => Box::new(DeviceSequential::new(f, Arc::clone(dev))),
            None => f,
        })
    }
    forward_directory_ops!(inner);
}

/// One simulated device: its model, its schedule and its counters, shared by every file
/// open on it.
#[derive(Debug)]
struct Device {
    model: DeviceModel,
    clock: Arc<dyn Clock>,
    schedule: Mutex<Schedule>,
    reads: AtomicU64,
    bytes_read: AtomicU64,
    writes: AtomicU64,
    bytes_written: AtomicU64,
    syncs: AtomicU64,
    delay_nanos: AtomicU64,
}

/// What an I/O was, for the counters.
#[derive(Debug, Clone, Copy)]
enum Op {
    Read,
    Write,
    Sync,
}

impl Device {
    fn new(model: DeviceModel, clock: Arc<dyn Clock>) -> Self {
        Device {
            model,
            clock,
            schedule: Mutex::new(Schedule::default()),
            reads: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            bytes_written: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
            delay_nanos: AtomicU64::new(0),
        }
    }

    /// Runs `real` (the inner file's I/O) as `io` on this device: schedules it, runs it,
    /// then sleeps until the modelled completion if the real I/O finished earlier. The
    /// I/O is counted even if `real` fails (the device did the work).
    fn serve<T>(&self, op: Op, io: Io, real: impl FnOnce() -> Result<T>) -> Result<T> {
        let done = self
            .schedule
            .lock()
            .admit(&self.model, self.clock.now(), io);
        let result = real();
        let after = self.clock.now();
        if done > after {
            self.clock.sleep_until(done);
            let slept = u64::try_from((done - after).as_nanos()).unwrap_or(u64::MAX);
            self.delay_nanos.fetch_add(slept, Ordering::Relaxed);
        }
        let (count, bytes) = match op {
            Op::Read => (&self.reads, Some(&self.bytes_read)),
            Op::Write => (&self.writes, Some(&self.bytes_written)),
            Op::Sync => (&self.syncs, None),
        };
        count.fetch_add(1, Ordering::Relaxed);
        if let Some(b) = bytes {
            b.fetch_add(io.bytes, Ordering::Relaxed);
        }
        result
    }

    fn stats(&self) -> DeviceStats {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        DeviceStats {
            reads: get(&self.reads),
            bytes_read: get(&self.bytes_read),
            writes: get(&self.writes),
            bytes_written: get(&self.bytes_written),
            syncs: get(&self.syncs),
            delay: Duration::from_nanos(get(&self.delay_nanos)),
        }
    }
}
