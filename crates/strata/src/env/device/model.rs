//! The device model: what one simulated device is ([`DeviceModel`]) and when each I/O
//! it serves completes ([`Schedule`]).
//!
//! # The model
//! An I/O of `b` bytes arriving at time `t` is served as:
//!
//! ```text
//! start = max(t, a free queue slot, the IOPS bucket, the bandwidth bucket)
//! done  = start + access + b / bandwidth          (access = 0 for a sequential I/O)
//! ```
//!
//! - **Latency**: `access` (the base latency: a flash read, a network round trip, a seek
//!   plus half a rotation) plus a per-KiB transfer time, which is the inverse of the
//!   bandwidth of the I/O's direction, so one figure sets both the streaming rate and the
//!   cost of a large single I/O. An I/O that starts where the previous one on the same
//!   file ended is *sequential* and pays no access latency: the device streams it (read
//!   ahead, or the disk head already in place). Intel's P4500 lists 10 µs for a
//!   sequential read against 85 µs random, which the model rounds to zero.
//! - **IOPS and bandwidth caps**: two token buckets in virtual time (GCRA), shared by
//!   every thread using the device. Each keeps a theoretical instant `tat`: an I/O may
//!   start once `now >= tat - BURST` and moves it to `max(tat, start) + cost` (cost
//!   `n / iops` for the IOPS bucket, the transfer time for the bandwidth one). The
//!   [`BURST`] tolerance is the bucket's depth: 1 ms of credit, so a thread the
//!   scheduler wakes late catches up instead of losing its turn for good, and the
//!   long-run rate stays the cap. An I/O larger than [`DeviceModel::max_io`] counts as
//!   `ceil(b / max_io)` I/Os against the IOPS cap, as AWS counts EBS I/Os; it still holds
//!   one queue slot.
//! - **Queue depth**: at most [`DeviceModel::queue_depth`] I/Os in service; the next one
//!   starts when the earliest of them completes.
//!
//! The schedule is computed when an I/O arrives (first come, first served under one
//! mutex), so a queued I/O needs no wake-up from another thread: the caller learns its
//! completion instant and sleeps until then.

use crate::error::{Error, Result};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::time::Duration;

const MIB: f64 = (1u64 << 20) as f64;

/// How far ahead of its rate a bucket lets an I/O start (the bucket's depth, as time at
/// the cap): see the module docs.
pub(super) const BURST: Duration = Duration::from_millis(1);
const NANOS_PER_SEC: f64 = 1e9;

/// Queue depth of a model built from figures alone: SATA's NCQ depth, and deeper than
/// the 16 threads of `strata device-bench`.
const DEFAULT_QUEUE_DEPTH: usize = 32;

/// Largest I/O counted as one against the IOPS cap, for a model built from figures alone:
/// the engine's direct-I/O write buffer (1 MiB).
const DEFAULT_MAX_IO: u64 = 1 << 20;

/// The published figures of one device: latency, bandwidth, IOPS and queue depth.
///
/// Build one from a preset ([`DeviceModel::nvme`], [`DeviceModel::sata_ssd`],
/// [`DeviceModel::gp3`], [`DeviceModel::hdd`], or by name with
/// [`DeviceModel::preset`]), from figures ([`DeviceModel::from_figures`]), or parse the
/// string forms `PRESET` and `latency_us,mib_per_s,iops` (`"gp3".parse()`). See the
/// module docs of `env::device` for what the model simulates.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceModel {
    pub(super) name: Option<&'static str>,
    pub(super) access_latency: Duration,
    pub(super) read_mib_per_s: f64,
    pub(super) write_mib_per_s: f64,
    pub(super) iops: f64,
    pub(super) queue_depth: usize,
    pub(super) max_io: u64,
}

impl DeviceModel {
    /// A device with a random-access latency of `latency_us` microseconds, `mib_per_s`
    /// MiB/s of bandwidth (reads and writes alike) and `iops` I/Os per second, a queue
    /// depth of 32 and I/Os counted per started MiB.
    ///
    /// # Errors
    /// `InvalidArgument` naming the figure if `latency_us` is negative or not finite, or
    /// `mib_per_s` or `iops` is not a finite positive number.
    pub fn from_figures(latency_us: f64, mib_per_s: f64, iops: f64) -> Result<Self> {
        if !(latency_us.is_finite() && latency_us >= 0.0) {
            return Err(bad_figure("latency_us", latency_us, "a number >= 0"));
        }
        for (name, v) in [("mib_per_s", mib_per_s), ("iops", iops)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(bad_figure(name, v, "a number > 0"));
            }
        }
        Ok(DeviceModel {
            name: None,
            access_latency: Duration::from_secs_f64(latency_us / 1e6),
            read_mib_per_s: mib_per_s,
            write_mib_per_s: mib_per_s,
            iops,
            queue_depth: DEFAULT_QUEUE_DEPTH,
            max_io: DEFAULT_MAX_IO,
        })
    }

    /// Sets the write bandwidth, MiB/s, where it differs from the read bandwidth
    /// (chainable). A value that is not finite and positive keeps the old one.
    #[must_use]
    pub fn with_write_mib_per_s(mut self, mib_per_s: f64) -> Self {
        if mib_per_s.is_finite() && mib_per_s > 0.0 {
            self.write_mib_per_s = mib_per_s;
        }
        self
    }

    /// Sets the queue depth: how many I/Os the device serves at once (chainable; 0 is
    /// taken as 1).
    #[must_use]
    pub fn with_queue_depth(mut self, queue_depth: usize) -> Self {
        self.queue_depth = queue_depth.max(1);
        self
    }

    /// Sets the largest I/O, bytes, that counts as one against the IOPS cap (chainable;
    /// 0 is taken as 1).
    #[must_use]
    pub fn with_max_io(mut self, max_io: u64) -> Self {
        self.max_io = max_io.max(1);
        self
    }

    /// The base latency of a random (non-sequential) I/O.
    pub fn access_latency(&self) -> Duration {
        self.access_latency
    }
    /// Read bandwidth, MiB/s.
    pub fn read_mib_per_s(&self) -> f64 {
        self.read_mib_per_s
    }
    /// Write bandwidth, MiB/s.
    pub fn write_mib_per_s(&self) -> f64 {
        self.write_mib_per_s
    }
    /// The IOPS cap.
    pub fn iops(&self) -> f64 {
        self.iops
    }
    /// I/Os in service at once.
    pub fn queue_depth(&self) -> usize {
        self.queue_depth
    }
    /// Largest I/O, bytes, counted as one against the IOPS cap.
    pub fn max_io(&self) -> u64 {
        self.max_io
    }

    /// Time to transfer `bytes` at the bandwidth of `dir`.
    pub(super) fn transfer(&self, dir: Direction, bytes: u64) -> Duration {
        let rate = match dir {
            Direction::Read => self.read_mib_per_s,
            Direction::Write => self.write_mib_per_s,
        };
        Duration::from_secs_f64(bytes as f64 / (rate * MIB))
    }

    /// How many I/Os `bytes` count as against the IOPS cap: `ceil(bytes / max_io)`, at
    /// least one (a sync moves no bytes but is one command).
    pub(super) fn io_count(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.max_io).max(1)
    }
}

/// `latency_us,mib_per_s,iops` for a model built from figures, else the preset's name.
impl fmt::Display for DeviceModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name {
            Some(name) => f.write_str(name),
            None => write!(
                f,
                "{},{},{}",
                self.access_latency.as_secs_f64() * 1e6,
                self.read_mib_per_s,
                self.iops
            ),
        }
    }
}

fn bad_figure(name: &str, v: f64, want: &str) -> Error {
    Error::InvalidArgument(format!("device model: {name}=`{v}` must be {want}"))
}

/// Which bandwidth an I/O uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    Read,
    Write,
}

/// One I/O as the device sees it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Io {
    pub(super) dir: Direction,
    pub(super) bytes: u64,
    /// Continues where the previous I/O on the same file ended: no access latency.
    pub(super) sequential: bool,
}

/// The device's state in virtual time: the queue slots in use and the two buckets.
///
/// Invariant: `in_service.len() <= model.queue_depth`; every entry is the completion
/// instant of an I/O already scheduled. Guarded by the device's mutex.
#[derive(Debug, Default)]
pub(super) struct Schedule {
    in_service: BinaryHeap<Reverse<Duration>>,
    /// Theoretical start of the next I/O under the IOPS cap (it may start up to
    /// [`BURST`] earlier).
    iops_ready: Duration,
    /// The same under the bandwidth cap.
    bandwidth_ready: Duration,
}

impl Schedule {
    /// Schedules `io` arriving at `now` on `model` and returns its completion instant.
    pub(super) fn admit(&mut self, model: &DeviceModel, now: Duration, io: Io) -> Duration {
        while self
            .in_service
            .peek()
            .is_some_and(|Reverse(done)| *done <= now)
        {
            self.in_service.pop();
        }
        let slot_free = if self.in_service.len() >= model.queue_depth {
            self.in_service.pop().map_or(now, |Reverse(done)| done)
        } else {
            now
        };
        let start = now
            .max(slot_free)
            .max(self.iops_ready.saturating_sub(BURST))
            .max(self.bandwidth_ready.saturating_sub(BURST));
        let transfer = model.transfer(io.dir, io.bytes);
        let access = if io.sequential {
            Duration::ZERO
        } else {
            model.access_latency
        };
        let done = start + access + transfer;
        let per_io = NANOS_PER_SEC / model.iops;
        let iops_cost = Duration::from_nanos((model.io_count(io.bytes) as f64 * per_io) as u64);
        self.iops_ready = self.iops_ready.max(start) + iops_cost;
        self.bandwidth_ready = self.bandwidth_ready.max(start) + transfer;
        self.in_service.push(Reverse(done));
        done
    }
}
