//! The time source of the device model: [`Clock`], the real [`MonotonicClock`], and (in
//! tests) a manual clock that never sleeps.
//!
//! The model computes when an I/O completes and then waits for that instant through the
//! clock, so unit tests can check every delay with a clock they advance by hand.

use std::fmt;
use std::time::{Duration, Instant};

/// A monotonic time source that can block the calling thread until an instant.
///
/// Implementations are shared by every thread doing I/O on a [`super::DeviceFs`].
pub trait Clock: Send + Sync + fmt::Debug {
    /// Time elapsed since this clock's origin. Never decreases.
    fn now(&self) -> Duration;
    /// Blocks the calling thread until [`Clock::now`] is at least `deadline`; returns at
    /// once if it already is. Must not busy-wait: the model may put many threads to
    /// sleep at once on a machine with few cores.
    fn sleep_until(&self, deadline: Duration);
}

/// The real clock: `std::time::Instant` and `thread::sleep`.
///
/// On Linux the first sleep of each thread lowers that thread's timer slack to 1 µs
/// (`prctl(PR_SET_TIMERSLACK)`): the default 50 µs slack would add up to 50 µs to every
/// modelled NVMe read of 85 µs. The setting is per thread and only changes how early the
/// kernel may wake it; it is kept for the thread's life.
#[derive(Debug)]
pub(crate) struct MonotonicClock {
    origin: Instant,
}

impl MonotonicClock {
    pub(crate) fn new() -> Self {
        MonotonicClock {
            origin: Instant::now(),
        }
    }
}

impl Clock for MonotonicClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
    fn sleep_until(&self, deadline: Duration) {
        precise_timer_slack();
        loop {
            let now = self.now();
            if now >= deadline {
                return;
            }
            // `sleep` may return early on a signal; loop until the deadline passed.
            std::thread::sleep(deadline - now);
        }
    }
}

/// Lowers this thread's timer slack to 1 µs, once per thread (see [`MonotonicClock`]).
#[cfg(target_os = "linux")]
fn precise_timer_slack() {
    thread_local! {
        static DONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    DONE.with(|done| {
        if !done.replace(true) {
            // SAFETY: PR_SET_TIMERSLACK takes one integer argument (nanoseconds) and
            // touches only the calling thread's scheduling state; no pointers are passed.
            // A failure only leaves the default slack, so the result is ignored.
            let _ = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong) };
        }
    });
}

#[cfg(not(target_os = "linux"))]
fn precise_timer_slack() {}

/// A clock that moves only when told: `sleep_until` jumps it forward to the deadline
/// (the sleeper "wakes" at once), so a test sees exactly the delays the model asked for.
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct ManualClock {
    now: parking_lot::Mutex<Duration>,
}

#[cfg(test)]
impl Clock for ManualClock {
    fn now(&self) -> Duration {
        *self.now.lock()
    }
    fn sleep_until(&self, deadline: Duration) {
        let mut now = self.now.lock();
        *now = (*now).max(deadline);
    }
}
