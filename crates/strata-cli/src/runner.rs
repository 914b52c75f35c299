//! The parallel runner: worker threads, per-thread latency histograms, and the live
//! progress bar.
//!
//! Role: `bench` and `ycsb` call [`run_parallel`] with a worker closure. Each worker gets
//! its thread index and a [`Progress`] to bump every few operations, and returns its own
//! [`OpStats`] (or map of them); nothing is shared on the hot path but one relaxed
//! atomic add per [`PROGRESS_CHUNK`] operations.
//!
//! Concurrency: workers run on scoped threads, so they borrow the engine (`&dyn
//! KvEngine`) instead of needing an `Arc`; the engine can be closed by value afterwards.

use crate::error::{CliError, Result};
use hdrhistogram::Histogram;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Operations between two progress-counter updates.
pub const PROGRESS_CHUNK: u64 = 256;

/// Longest latency the histograms resolve (one hour); longer samples are clamped.
const MAX_LATENCY_NANOS: u64 = 3_600 * 1_000_000_000;

/// The progress bar appears only for runs longer than this.
const SHOW_AFTER: Duration = Duration::from_secs(2);

/// Counts, bytes and latencies of one kind of operation.
#[derive(Clone, Debug)]
pub struct OpStats {
    /// Operations done.
    pub ops: u64,
    /// Reads that found their key (reads only).
    pub found: u64,
    /// Key + value bytes moved.
    pub bytes: u64,
    /// Latency in nanoseconds.
    pub hist: Histogram<u64>,
}

impl Default for OpStats {
    fn default() -> Self {
        OpStats {
            ops: 0,
            found: 0,
            bytes: 0,
            // 1 ns .. 1 hour, 3 significant digits (~260 KiB); longer samples clamp.
            hist: Histogram::new_with_bounds(1, MAX_LATENCY_NANOS, 3)
                .unwrap_or_else(|_| unreachable!("constant bounds are valid")),
        }
    }
}

impl OpStats {
    /// Records one operation that took from `start` until now.
    #[inline]
    pub fn record(&mut self, start: Instant, bytes: usize) {
        self.record_nanos(start.elapsed().as_nanos() as u64, bytes);
    }

    /// Records `n` operations done together (one batch) from `start` until now: one
    /// latency sample, `n` operations.
    #[inline]
    pub fn record_n(&mut self, start: Instant, n: u64, bytes: usize) {
        self.ops += n;
        self.bytes += bytes as u64;
        self.hist
            .saturating_record((start.elapsed().as_nanos() as u64).max(1));
    }

    /// Records `n` operations that took `elapsed` together, each as their mean (a
    /// walk timed per chunk of entries); `bytes` is their total.
    #[inline]
    pub fn record_spread(&mut self, elapsed: Duration, n: u64, bytes: usize) {
        if n == 0 {
            return;
        }
        self.ops += n;
        self.bytes += bytes as u64;
        let mean = (elapsed.as_nanos() / u128::from(n)) as u64;
        self.hist.saturating_record_n(mean.max(1), n);
    }

    /// Records one operation of `nanos` nanoseconds.
    #[inline]
    pub fn record_nanos(&mut self, nanos: u64, bytes: usize) {
        self.ops += 1;
        self.bytes += bytes as u64;
        self.hist.saturating_record(nanos.max(1));
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &OpStats) {
        self.ops += other.ops;
        self.found += other.found;
        self.bytes += other.bytes;
        // Same bounds on both sides, so adding cannot fail on range.
        let _ = self.hist.add(&other.hist);
    }

    /// Latency at `quantile` (0..=1) in microseconds.
    pub fn micros_at(&self, quantile: f64) -> f64 {
        self.hist.value_at_quantile(quantile) as f64 / 1000.0
    }
}

/// What a worker reports progress through.
#[derive(Debug, Default)]
pub struct Progress {
    done: AtomicU64,
}

impl Progress {
    /// Adds `n` finished operations.
    #[inline]
    pub fn add(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }
}

/// Ends a loop of operations: by count or by deadline.
#[derive(Clone, Copy, Debug)]
pub enum Budget {
    /// Exactly this many operations.
    Count(u64),
    /// Until this instant.
    Until(Instant),
}

impl Budget {
    /// A per-thread budget: `total` split over `threads` (thread `tid` gets the remainder
    /// spread over the first threads), or a deadline `duration_secs` from now if nonzero.
    pub fn split(total: u64, threads: usize, tid: usize, duration_secs: u64) -> Budget {
        if duration_secs > 0 {
            return Budget::Until(Instant::now() + Duration::from_secs(duration_secs));
        }
        let t = threads.max(1) as u64;
        let base = total / t;
        let extra = u64::from((tid as u64) < total % t);
        Budget::Count(base + extra)
    }

    /// True iff operation number `i` (0-based) should run.
    #[inline]
    pub fn allows(&self, i: u64) -> bool {
        match *self {
            Budget::Count(n) => i < n,
            Budget::Until(t) => !i.is_multiple_of(64) || Instant::now() < t,
        }
    }
}

/// Runs `worker(tid, progress)` on `threads` scoped threads and returns their results
/// with the wall time from start until the last worker returned. Shows a progress bar with live
/// ops/sec on stderr when the run passes two seconds and stderr is a terminal.
///
/// # Errors
/// The first worker error, or [`CliError::WorkerPanic`].
pub fn run_parallel<T: Send>(
    label: &str,
    threads: usize,
    expected_ops: Option<u64>,
    worker: impl Fn(usize, &Progress) -> Result<T> + Sync,
) -> Result<(Vec<T>, Duration)> {
    let progress = Progress::default();
    let start = Instant::now();
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|tid| {
                let (worker, progress) = (&worker, &progress);
                s.spawn(move || {
                    let r = worker(tid, progress);
                    (r, Instant::now())
                })
            })
            .collect();
        let bar = ProgressBar::with_draw_target(expected_ops, ProgressDrawTarget::hidden());
        let template = if expected_ops.is_some() {
            "{prefix:>12} [{elapsed_precise}] {wide_bar} {pos}/{len} {msg}"
        } else {
            "{prefix:>12} [{elapsed_precise}] {pos} ops {msg}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        bar.set_prefix(label.to_string());
        let mut shown = false;
        let (mut last_t, mut last_n) = (start, 0u64);
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(100));
            let now = Instant::now();
            if !shown && now.duration_since(start) >= SHOW_AFTER {
                bar.set_draw_target(ProgressDrawTarget::stderr());
                shown = true;
            }
            let n = progress.done.load(Ordering::Relaxed);
            bar.set_position(n);
            let dt = now.duration_since(last_t).as_secs_f64();
            if dt >= 0.5 {
                bar.set_message(format!("{:.0} ops/sec", (n - last_n) as f64 / dt));
                (last_t, last_n) = (now, n);
            }
        }
        bar.finish_and_clear();
        // Wall time ends when the last worker finished, not when this loop noticed.
        let mut end = start;
        let results = handles
            .into_iter()
            .map(|h| match h.join() {
                Ok((r, finished)) => {
                    end = end.max(finished);
                    r
                }
                Err(p) => Err(CliError::WorkerPanic(panic_message(p.as_ref()))),
            })
            .collect::<Result<Vec<T>>>()?;
        Ok::<_, CliError>((results, end.duration_since(start)))
    })?;
    Ok(results)
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_splits_exactly() {
        let total: u64 = (0..3)
            .map(|t| match Budget::split(10, 3, t, 0) {
                Budget::Count(n) => n,
                Budget::Until(_) => 0,
            })
            .sum();
        assert_eq!(total, 10);
        assert!(matches!(Budget::split(10, 3, 0, 0), Budget::Count(4)));
        assert!(matches!(Budget::split(10, 3, 2, 0), Budget::Count(3)));
        assert!(matches!(Budget::split(10, 3, 2, 5), Budget::Until(_)));
    }

    #[test]
    fn workers_run_and_merge() {
        let (res, _) = run_parallel("t", 3, Some(30), |tid, p| {
            let mut s = OpStats::default();
            for i in 0..10u64 {
                s.record_nanos(1000 * (i + 1), tid);
            }
            p.add(10);
            Ok(s)
        })
        .expect("runs");
        let mut all = OpStats::default();
        for r in &res {
            all.merge(r);
        }
        assert_eq!(all.ops, 30);
        assert_eq!(all.bytes, 10 * 3);
        assert!((all.micros_at(0.5) - 5.0).abs() < 0.1);
    }

    #[test]
    fn wall_time_is_not_rounded_to_the_poll_interval() {
        let (_, el) = run_parallel("t", 2, None, |_, _| Ok(())).expect("runs");
        assert!(el < Duration::from_millis(50), "{el:?}");
    }

    #[test]
    fn worker_errors_and_panics_surface() {
        let r: Result<(Vec<()>, _)> = run_parallel("t", 2, None, |tid, _| {
            if tid == 1 {
                Err(CliError::Usage("boom".into()))
            } else {
                Ok(())
            }
        });
        assert!(matches!(r, Err(CliError::Usage(_))));
        let r: Result<(Vec<()>, _)> = run_parallel("t", 1, None, |_, _| panic!("bad"));
        assert!(matches!(r, Err(CliError::WorkerPanic(m)) if m == "bad"));
    }
}
