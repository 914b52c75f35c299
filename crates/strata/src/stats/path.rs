//! I/O statistics of one data path (`Options::db_paths`): table bytes and I/Os read and
//! written, and a histogram of read latencies.
//!
//! Recorded by the file-system wrapper `env::counting` for every table file of the
//! path (user reads, compaction reads, table opens, flush and compaction writes); WAL,
//! MANIFEST and `OPTIONS` I/O is not counted here. Sharded per thread like
//! [`super::Statistics`] (same shard index), so readers on different cores do not
//! bounce a cache line per block read.

use super::purpose::{IoBytes, IoPurpose, PURPOSES};
use super::{shard_index, SHARDS};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Buckets of [`LatencyHistogram`]: bucket `i` counts latencies in `[2^i, 2^(i+1))`
/// nanoseconds (bucket 0 also holds 0 ns); the last bucket holds everything from
/// 2^39 ns (about 9 minutes) up.
pub const LATENCY_BUCKETS: usize = 40;

/// One thread shard of a path's counters.
#[derive(Debug)]
#[repr(align(128))]
struct Shard {
    reads: AtomicU64,
    bytes_read: AtomicU64,
    read_nanos: AtomicU64,
    writes: AtomicU64,
    bytes_written: AtomicU64,
    latency: [AtomicU64; LATENCY_BUCKETS],
    /// `bytes_read` by purpose (index: `IoPurpose as usize`).
    read_by: [AtomicU64; PURPOSES],
    /// `bytes_written` by purpose.
    written_by: [AtomicU64; PURPOSES],
}

impl Default for Shard {
    fn default() -> Shard {
        Shard {
            reads: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
            read_nanos: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            bytes_written: AtomicU64::new(0),
            latency: std::array::from_fn(|_| AtomicU64::new(0)),
            read_by: std::array::from_fn(|_| AtomicU64::new(0)),
            written_by: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

/// The live counters of one data path. Shared (`Arc`) by the counting file handles.
#[derive(Debug)]
pub(crate) struct PathStats {
    path: PathBuf,
    shards: Box<[Shard; SHARDS]>,
    /// `strata_path_read_seconds{db, path}` (`db::export`): each read's latency, recorded
    /// where it is measured.
    #[cfg(feature = "metrics")]
    read_seconds: metrics::Histogram,
}

impl PathStats {
    /// Zeroed counters of the data path in directory `path` of the database whose
    /// metrics are labelled `db`.
    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    pub fn new(db: &str, path: PathBuf) -> PathStats {
        PathStats {
            #[cfg(feature = "metrics")]
            read_seconds: metrics::histogram!(
                "strata_path_read_seconds",
                "db" => db.to_owned(),
                "path" => path.display().to_string()
            ),
            path,
            shards: Box::new(std::array::from_fn(|_| Shard::default())),
        }
    }

    #[inline]
    #[expect(
        clippy::indexing_slicing,
        reason = "the index is reduced modulo the length"
    )]
    fn local(&self) -> &Shard {
        &self.shards[shard_index() % SHARDS]
    }

    /// The path's directory.
    pub fn dir(&self) -> &std::path::Path {
        &self.path
    }

    /// Records one read of `bytes` bytes for `purpose` that took `elapsed`.
    pub fn record_read(&self, bytes: usize, elapsed: Duration, purpose: IoPurpose) {
        let s = self.local();
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        s.reads.fetch_add(1, Ordering::Relaxed);
        s.bytes_read.fetch_add(bytes as u64, Ordering::Relaxed);
        if let Some(c) = s.read_by.get(purpose as usize) {
            c.fetch_add(bytes as u64, Ordering::Relaxed);
        }
        s.read_nanos.fetch_add(nanos, Ordering::Relaxed);
        // floor(log2(nanos)), 0 for 0 and 1.
        let bucket = (63 - (nanos | 1).leading_zeros()) as usize;
        if let Some(b) = s.latency.get(bucket.min(LATENCY_BUCKETS - 1)) {
            b.fetch_add(1, Ordering::Relaxed);
        }
        #[cfg(feature = "metrics")]
        self.read_seconds.record(elapsed);
    }

    /// Records one write (an append handed to the file) of `bytes` bytes for
    /// `purpose`.
    pub fn record_write(&self, bytes: usize, purpose: IoPurpose) {
        let s = self.local();
        s.writes.fetch_add(1, Ordering::Relaxed);
        s.bytes_written.fetch_add(bytes as u64, Ordering::Relaxed);
        if let Some(c) = s.written_by.get(purpose as usize) {
            c.fetch_add(bytes as u64, Ordering::Relaxed);
        }
    }

    /// Sums the shards.
    pub fn snapshot(&self) -> PathStatsSnapshot {
        let mut out = PathStatsSnapshot {
            path: self.path.clone(),
            ..PathStatsSnapshot::default()
        };
        let mut buckets = [0u64; LATENCY_BUCKETS];
        let (mut read_by, mut written_by) = ([0u64; PURPOSES], [0u64; PURPOSES]);
        for s in self.shards.iter() {
            for (total, c) in read_by.iter_mut().zip(&s.read_by) {
                *total += c.load(Ordering::Relaxed);
            }
            for (total, c) in written_by.iter_mut().zip(&s.written_by) {
                *total += c.load(Ordering::Relaxed);
            }
            out.reads += s.reads.load(Ordering::Relaxed);
            out.bytes_read += s.bytes_read.load(Ordering::Relaxed);
            out.read_latency.sum_nanos += s.read_nanos.load(Ordering::Relaxed);
            out.writes += s.writes.load(Ordering::Relaxed);
            out.bytes_written += s.bytes_written.load(Ordering::Relaxed);
            for (total, b) in buckets.iter_mut().zip(&s.latency) {
                *total += b.load(Ordering::Relaxed);
            }
        }
        out.read_latency.buckets = buckets.to_vec();
        out.read_by = IoBytes::from_counts(&read_by);
        out.written_by = IoBytes::from_counts(&written_by);
        out
    }
}

/// A point-in-time copy of one data path's I/O figures ([`crate::DbStats::paths`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PathStatsSnapshot {
    /// The path's directory.
    pub path: PathBuf,
    /// Reads of table files (each block, footer, index or filter read is one).
    pub reads: u64,
    /// Bytes those reads returned.
    pub bytes_read: u64,
    /// Appends to table files being written (each hands the file one buffer).
    pub writes: u64,
    /// Bytes appended to table files.
    pub bytes_written: u64,
    /// How long the reads took, wall clock, measured around the file-system call.
    pub read_latency: LatencyHistogram,
    /// `bytes_read` by what the reads were for: the parts add up to it exactly.
    pub read_by: IoBytes,
    /// `bytes_written` by what the appends were for: the parts add up to it exactly.
    pub written_by: IoBytes,
}

/// A histogram of latencies in power-of-two nanosecond buckets: 40 of them, the last
/// holding everything from 2^39 ns (about 9 minutes) up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LatencyHistogram {
    /// `buckets[i]` counts latencies in `[2^i, 2^(i+1))` ns.
    pub buckets: Vec<u64>,
    /// Sum of every latency, nanoseconds.
    pub sum_nanos: u64,
}

impl LatencyHistogram {
    /// Latencies recorded.
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// Mean latency; zero if none was recorded.
    pub fn mean(&self) -> Duration {
        match self.count() {
            0 => Duration::ZERO,
            n => Duration::from_nanos(self.sum_nanos / n),
        }
    }

    /// The upper bound of the bucket holding the `q`-quantile (`q` in `[0, 1]`, e.g.
    /// 0.99): at least that share of latencies were below it, and it is at most twice
    /// the true quantile. Zero if none was recorded.
    pub fn quantile(&self, q: f64) -> Duration {
        let n = self.count();
        if n == 0 {
            return Duration::ZERO;
        }
        // The rank of the quantile, 1-based; `as` saturates.
        let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Duration::from_nanos(1u64 << (i + 1).min(63));
            }
        }
        Duration::from_nanos(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_sum_over_threads_into_exact_counts_and_buckets() {
        let stats = std::sync::Arc::new(PathStats::new("db", PathBuf::from("/p")));
        std::thread::scope(|s| {
            for _ in 0..4 {
                let stats = &stats;
                s.spawn(move || {
                    for i in 0..100u64 {
                        stats.record_read(10, Duration::from_nanos(1000 + i), IoPurpose::Get);
                        stats.record_write(3, IoPurpose::Compaction);
                    }
                });
            }
        });
        let snap = stats.snapshot();
        assert_eq!((snap.reads, snap.bytes_read), (400, 4000));
        assert_eq!((snap.writes, snap.bytes_written), (400, 1200));
        assert_eq!((snap.read_by.get, snap.read_by.total()), (4000, 4000));
        assert_eq!(
            (snap.written_by.compaction, snap.written_by.total()),
            (1200, 1200)
        );
        // 1000..1099 ns all lie in [2^9, 2^10) or [2^10, 2^11): 1000..1023 and the rest.
        assert_eq!(snap.read_latency.buckets[9], 4 * 24);
        assert_eq!(snap.read_latency.buckets[10], 4 * 76);
        assert_eq!(snap.read_latency.count(), 400);
        assert_eq!(snap.read_latency.mean(), Duration::from_nanos(1049));
        assert_eq!(snap.read_latency.quantile(0.1), Duration::from_nanos(1024));
        assert_eq!(snap.read_latency.quantile(0.99), Duration::from_nanos(2048));
    }

    #[test]
    fn extreme_latencies_land_in_the_end_buckets() {
        let stats = PathStats::new("db", PathBuf::from("/p"));
        stats.record_read(1, Duration::ZERO, IoPurpose::Other);
        stats.record_read(1, Duration::from_secs(100_000), IoPurpose::Scan);
        let h = stats.snapshot().read_latency;
        assert_eq!(h.buckets[0], 1);
        assert_eq!(h.buckets[LATENCY_BUCKETS - 1], 1);
        assert_eq!(LatencyHistogram::default().quantile(0.5), Duration::ZERO);
    }
}
