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
    /// Blocks the calling thread until about `deadline`; returns at once if
    /// [`Clock::now`] already passed it. An implementation may wake up to its usual
    /// wake-up lateness early, so that wake-ups are on time on average rather than
    /// always late (the real clock of [`super::DeviceFs::new`] does, by at most
    /// 100 µs). Must not busy-wait: the model may put many threads to sleep at once on
    /// a machine with few cores.
    fn sleep_until(&self, deadline: Duration);
}

/// The real clock: `std::time::Instant` and `thread::sleep`.
///
/// A sleeping thread wakes late: the kernel's timer slack, then the scheduler. Two
/// measures keep a modelled 85 µs read near 85 µs:
/// - on Linux the first sleep of each thread lowers that thread's timer slack to 1 µs
///   (`prctl(PR_SET_TIMERSLACK)`; the default is 50 µs). The setting is per thread, only
///   changes how late the kernel may wake it, and is kept for the thread's life;
/// - each thread keeps a running estimate of how late its wake-ups are (an exponential
///   average, samples capped at [`MAX_LATENESS`]) and sleeps that much less. Wake-ups
///   are then on time on average; a single one may come that much early.
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
        LATENESS.with(|lateness| {
            let target = deadline.saturating_sub(lateness.get());
            loop {
                let now = self.now();
                if now >= target {
                    break;
                }
                // `sleep` may return early on a signal; loop until the target passed.
                std::thread::sleep(target - now);
            }
            let late = self.now().saturating_sub(target).min(MAX_LATENESS);
            // lateness += (late - lateness) / 8, in integer nanoseconds.
            let (old, new) = (lateness.get().as_nanos(), late.as_nanos());
            let avg = (old * 7 + new) / 8;
            lateness.set(Duration::from_nanos(u64::try_from(avg).unwrap_or(u64::MAX)));
        });
    }
}

/// Largest wake-up lateness sample [`MonotonicClock`] learns from: a thread preempted
/// for milliseconds says nothing about the next wake-up.
const MAX_LATENESS: Duration = Duration::from_micros(100);

thread_local! {
    /// This thread's estimated wake-up lateness (see [`MonotonicClock`]).
    static LATENESS: std::cell::Cell<Duration> = const { std::cell::Cell::new(Duration::ZERO) };
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
