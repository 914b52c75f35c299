//! Human-readable results in db_bench's shape.
//!
//! ```text
//! fillrandom   :       2.345 micros/op 426439 ops/sec 2.345 seconds 1000000 operations;   48.8 MB/s
//! Percentiles: P50: 1.95 P99: 7.10 P99.9: 21.30
//! ```
//! Latencies are microseconds; `micros/op` is wall time divided by operations of all
//! threads together (so it is `1e6 / ops_per_sec`).

use crate::runner::OpStats;
use std::fmt::Write as _;

/// The main line of one result.
pub fn summary_line(
    name: &str,
    stats: &OpStats,
    seconds: f64,
    found: Option<(u64, u64)>,
    note: Option<&str>,
) -> String {
    let ops = stats.ops;
    let micros_per_op = if ops > 0 {
        seconds * 1e6 / ops as f64
    } else {
        0.0
    };
    let ops_per_sec = if seconds > 0.0 {
        (ops as f64 / seconds).round() as u64
    } else {
        0
    };
    let mut s = format!(
        "{name:<12} : {micros_per_op:>11.3} micros/op {ops_per_sec} ops/sec {seconds:.3} seconds {ops} operations;"
    );
    if stats.bytes > 0 && seconds > 0.0 {
        let mbs = stats.bytes as f64 / (1u64 << 20) as f64 / seconds;
        let _ = write!(s, " {mbs:>6.1} MB/s");
    }
    if let Some((f, of)) = found {
        let _ = write!(s, " (found {f} of {of})");
    }
    if let Some(n) = note {
        let _ = write!(s, " {n}");
    }
    s
}

/// `Percentiles: P50: a P99: b P99.9: c` in microseconds.
pub fn percentiles_line(stats: &OpStats) -> String {
    format!(
        "Percentiles: P50: {:.2} P99: {:.2} P99.9: {:.2}",
        stats.micros_at(0.5),
        stats.micros_at(0.99),
        stats.micros_at(0.999)
    )
}

/// The full histogram (`--histogram`): count, mean, spread, percentiles, and buckets of
/// doubling width with their share and cumulative share (like db_bench's).
pub fn histogram(stats: &OpStats) -> String {
    let h = &stats.hist;
    let mut s = String::new();
    if h.is_empty() {
        return "Microseconds per op: (no samples)\n".to_string();
    }
    let us = |n: u64| n as f64 / 1000.0;
    let _ = writeln!(s, "Microseconds per op:");
    let _ = writeln!(
        s,
        "Count: {} Average: {:.4}  StdDev: {:.2}",
        h.len(),
        h.mean() / 1000.0,
        h.stdev() / 1000.0
    );
    let _ = writeln!(
        s,
        "Min: {:.3}  Median: {:.4}  Max: {:.3}",
        us(h.min()),
        stats.micros_at(0.5),
        us(h.max())
    );
    let _ = writeln!(
        s,
        "Percentiles: P50: {:.2} P75: {:.2} P99: {:.2} P99.9: {:.2} P99.99: {:.2}",
        stats.micros_at(0.5),
        stats.micros_at(0.75),
        stats.micros_at(0.99),
        stats.micros_at(0.999),
        stats.micros_at(0.9999)
    );
    let _ = writeln!(s, "{}", "-".repeat(50));
    let total = h.len() as f64;
    let mut cumulative = 0u64;
    let mut lo = 0u64;
    let mut hi = 1000u64; // 1 us
    while lo <= h.max() {
        let n = h.count_between(lo, hi.saturating_sub(1));
        if n > 0 {
            cumulative += n;
            let pct = n as f64 * 100.0 / total;
            let _ = writeln!(
                s,
                "[ {:>10.3}, {:>10.3} ) {:>9} {:>7.3}% {:>8.3}% {}",
                us(lo),
                us(hi),
                n,
                pct,
                cumulative as f64 * 100.0 / total,
                "#".repeat((pct / 5.0).round() as usize)
            );
        }
        lo = hi;
        hi = hi.saturating_mul(2);
        if lo == u64::MAX {
            break;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> OpStats {
        let mut s = OpStats::default();
        for i in 1..=1000u64 {
            s.record_nanos(i * 1000, 116);
        }
        s
    }

    #[test]
    fn summary_line_has_db_bench_shape() {
        let s = sample();
        let line = summary_line("fillrandom", &s, 2.0, None, None);
        assert_eq!(
            line,
            "fillrandom   :    2000.000 micros/op 500 ops/sec 2.000 seconds 1000 operations;    0.1 MB/s"
        );
        let line = summary_line("readrandom", &s, 1.0, Some((632, 1000)), None);
        assert!(line.ends_with("(found 632 of 1000)"), "{line}");
        assert!(line.starts_with("readrandom   :    1000.000 micros/op 1000 ops/sec"));
    }

    #[test]
    fn percentiles_are_micros() {
        let line = percentiles_line(&sample());
        assert!(line.starts_with("Percentiles: P50: 50"), "{line}");
        assert!(line.contains(" P99: 99"), "{line}");
        assert!(line.contains(" P99.9: 99"), "{line}");
    }

    #[test]
    fn histogram_buckets_add_up() {
        let h = histogram(&sample());
        assert!(h.contains("Count: 1000"), "{h}");
        let last = h.lines().last().unwrap_or_default();
        assert!(last.contains("100.000%"), "{h}");
        assert_eq!(
            histogram(&OpStats::default()),
            "Microseconds per op: (no samples)\n"
        );
    }
}
