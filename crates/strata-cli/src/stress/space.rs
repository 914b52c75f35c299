//! Riding out a full disk (`strata stress --on_no_space=wait`).
//!
//! A write refused with `NoSpace` wrote nothing (docs/ARCHITECTURE.md §7.8): the worker
//! settles its keys back on their current values, counts the refusal here and pauses
//! before its next operation. The database resumes by itself once space is freed; the
//! first write accepted after a run of refusals ends the *streak*, and its time is
//! printed, so a script that freed the space can tell how long the database took to
//! take writes again.
//!
//! Lines printed (stdout, one per event, whichever thread sees it first):
//! ```text
//! no_space: refused unix_ms=<first refusal of the streak>
//! no_space: resumed unix_ms=<first accepted write> refused_for_ms=<streak length> refused=<writes refused in it>
//! ```

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a refused worker sleeps before its next operation.
const PAUSE: Duration = Duration::from_millis(10);

/// Refusals shared by every worker of a run.
#[derive(Debug, Default)]
pub struct SpaceWatch {
    /// Unix milliseconds of the first refusal of the current streak; 0 outside one.
    refusing_since: AtomicU64,
    /// Refusals in the current streak.
    in_streak: AtomicU64,
    /// Streaks ended by an accepted write.
    streaks: AtomicU64,
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Prints one event line; a closed stdout only loses the line.
fn event(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

impl SpaceWatch {
    /// A write was refused for a full disk: counts it (starting a streak if none is
    /// running) and pauses the calling worker.
    pub fn refused(&self) {
        let now = unix_ms().max(1);
        if self
            .refusing_since
            .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            event(&format!("no_space: refused unix_ms={now}"));
        }
        self.in_streak.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(PAUSE);
    }

    /// A write was accepted: ends the streak, if one is running.
    pub fn accepted(&self) {
        if self.refusing_since.load(Ordering::Relaxed) == 0 {
            return;
        }
        let since = self.refusing_since.swap(0, Ordering::AcqRel);
        if since == 0 {
            return;
        }
        let now = unix_ms();
        let refused = self.in_streak.swap(0, Ordering::Relaxed);
        self.streaks.fetch_add(1, Ordering::Relaxed);
        event(&format!(
            "no_space: resumed unix_ms={now} refused_for_ms={} refused={refused}",
            now.saturating_sub(since)
        ));
    }

    /// Streaks of refusals that ended with an accepted write.
    pub fn streaks(&self) -> u64 {
        self.streaks.load(Ordering::Relaxed)
    }
}
