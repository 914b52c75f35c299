//! Time-aware tiering ([`TieringMode::TimeAware`](super::TieringMode)), the higher
//! anchor of the HotRAP paper's comparison: RocksDB's `preclude_last_level_data_seconds`
//! rule at the tier boundary. A compaction from the last fast level into the first
//! slow one keeps in the last fast level the keys whose newest record was written
//! within the window; nothing is ever promoted.
//!
//! Time of a record. Records carry sequence numbers, not times, so the hooks keep a
//! [`SeqClock`]: samples of (when, the largest sequence number any table held then),
//! taken whenever a compaction is picked. A sample (t, s) proves every record with a
//! sequence number at most s was written before t; so a key whose newest record is
//! above the sample at or before `now − window` may be recent, and one at or below it
//! is not. The rule errs only towards keeping: a record written before that sample
//! but still in a memtable then counts as recent. As RocksDB does with its
//! sequence-to-time mapping, but not persisted: the mapping starts at open with the
//! sample (the open, the last sequence number then), so everything the database held
//! at open counts as written at open (recent for one window after a reopen; an
//! earlier version called it old, which a review showed sends records written just
//! before a restart to the slow tier).
//!
//! What retention writes back is bounded as HotRAP's is (`router.rs`: the first key of
//! the range always goes down, and the room is half the fast inputs), where RocksDB
//! lets its penultimate level grow without bound; a departure, so that a window
//! longer than the fast tier can hold still leaves compactions that end.

use super::retention::Retention;
use super::router::Keep;
use super::Tiering;
use crate::compaction::picker::Busy;
use crate::compaction::plan::Plan;
use crate::db::tree_hooks::{TableRead, TreeHooks};
use crate::error::Result;
use crate::key::SequenceNumber;
use crate::options::Options;
use crate::version::Version;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Samples kept per window (their spacing is `window / SAMPLES_PER_WINDOW`).
const SAMPLES_PER_WINDOW: u32 = 64;

/// Sequence numbers against time. See the module docs.
#[derive(Debug)]
pub(super) struct SeqClock {
    window: Duration,
    /// (when, the largest sequence number in the tree then), increasing in both.
    samples: Mutex<VecDeque<(Instant, SequenceNumber)>>,
}

impl SeqClock {
    /// A clock whose first sample is `opened`: (the open, the database's last
    /// sequence number then).
    pub fn new(window: Duration, opened: (Instant, SequenceNumber)) -> SeqClock {
        SeqClock {
            window,
            samples: Mutex::new(VecDeque::from([opened])),
        }
    }

    /// Records that at `now` no table held a sequence number above `seq`; returns the
    /// largest sequence number written before `now − window`, as far as the samples
    /// show (every record at or below it is old).
    pub fn sample(&self, now: Instant, seq: SequenceNumber) -> SequenceNumber {
        let spacing = self.window / SAMPLES_PER_WINDOW;
        let mut samples = self.samples.lock();
        match samples.back() {
            Some(&(_, last)) if seq <= last => {}
            _ => {
                // Close to the sample before the last one: the last one adds no
                // resolution, so it is replaced.
                let n = samples.len();
                let dense = n >= 2
                    && samples
                        .get(n - 2)
                        .is_some_and(|&(t, _)| now.saturating_duration_since(t) < spacing);
                if dense {
                    samples.pop_back();
                }
                samples.push_back((now, seq));
            }
        }
        let Some(cutoff) = now.checked_sub(self.window) else {
            return 0;
        };
        // A sample with a later one also at or before the cutoff will never be the
        // answer again (the cutoff only grows).
        while samples.len() >= 2 && samples.get(1).is_some_and(|&(t, _)| t <= cutoff) {
            samples.pop_front();
        }
        samples
            .iter()
            .rev()
            .find(|&&(t, _)| t <= cutoff)
            .map_or(0, |&(_, s)| s)
    }

    fn len(&self) -> usize {
        self.samples.lock().len()
    }
}

/// One time-aware family's hooks.
#[derive(Debug)]
pub(super) struct TimeAware {
    clock: SeqClock,
    tiering: Tiering,
    last_fast_level: usize,
    opts: Options,
    /// Gets answered by a table of the fast tier, and of the slow tier.
    gets_fast: AtomicU64,
    gets_slow: AtomicU64,
    /// Plans made retaining.
    retaining_plans: AtomicU64,
    /// Bytes (newest record's key and value) those plans kept in the fast tier.
    retained_bytes: Arc<AtomicU64>,
}

impl TimeAware {
    pub fn new(
        window: Duration,
        opened: SequenceNumber,
        tiering: Tiering,
        last_fast_level: usize,
        opts: &Options,
    ) -> TimeAware {
        TimeAware {
            clock: SeqClock::new(window, (Instant::now(), opened)),
            tiering,
            last_fast_level,
            opts: opts.clone(),
            gets_fast: AtomicU64::new(0),
            gets_slow: AtomicU64::new(0),
            retaining_plans: AtomicU64::new(0),
            retained_bytes: Arc::new(AtomicU64::new(0)),
        }
    }
}

impl TreeHooks for TimeAware {
    fn table_read(&self, read: &TableRead<'_>) -> bool {
        let counter = if read.level <= self.last_fast_level {
            &self.gets_fast
        } else {
            &self.gets_slow
        };
        counter.fetch_add(1, Ordering::Relaxed);
        false
    }

    /// A rewrite from the last fast level into the next whose fast inputs hold a
    /// record written within the window gains the bounded fast stream and a router
    /// keeping those keys (`retention.rs`, `router.rs`).
    fn adjust_plan(&self, plan: &mut Plan, version: &Version, busy: &Busy) {
        let newest_in_tree = (0..version.num_levels())
            .flat_map(|level| version.files(level))
            .map(|f| f.largest_seqno)
            .max()
            .unwrap_or(0);
        let old = self.clock.sample(Instant::now(), newest_in_tree);
        let Some(retention) = Retention::of(plan, self.last_fast_level) else {
            return;
        };
        if retention.newest <= old {
            return;
        }
        let router = retention.router(Keep::WrittenAfter(old), Arc::clone(&self.retained_bytes));
        let at = (&self.opts, self.last_fast_level, self.tiering.fast_path);
        if retention.add_to(plan, at, router, busy) {
            self.retaining_plans.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn figures(&self) -> Vec<(&'static str, u64)> {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        vec![
            ("gets_fast", load(&self.gets_fast)),
            ("gets_slow", load(&self.gets_slow)),
            ("retaining_plans", load(&self.retaining_plans)),
            ("retained_bytes", load(&self.retained_bytes)),
            ("clock_samples", self.clock.len() as u64),
        ]
    }

    fn close(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
