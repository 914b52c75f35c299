//! The figures of one run of `experiment dcompaction` ([`Row`], one JSON line each) and
//! of its phases ([`Phase`]); `measure.rs` fills them.

use crate::compare::median;
use crate::engine::{EngineStats, VirtualSpace};
use crate::runner::OpStats;
use serde::Serialize;

/// The median of `f` over `xs` (`None` iff empty).
fn med<T>(xs: &[T], f: impl Fn(&T) -> f64) -> Option<f64> {
    median(&mut xs.iter().map(f).collect::<Vec<_>>())
}

/// The median of `f` over the `xs` where it is `Some` (`None` iff it is in none).
fn med_opt<T>(xs: &[T], f: impl Fn(&T) -> Option<f64>) -> Option<f64> {
    median(&mut xs.iter().filter_map(f).collect::<Vec<_>>())
}

/// The median of a count, rounded to a count.
fn med_u64<T>(xs: &[T], f: impl Fn(&T) -> u64) -> u64 {
    med(xs, |x| f(x) as f64).map_or(0, |m| m.round() as u64)
}

/// Count and latency of one kind of operation in a phase.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Latency {
    /// Operations.
    pub ops: u64,
    /// Mean latency, microseconds (`None` without operations).
    pub mean_us: Option<f64>,
    /// 99th-percentile latency, microseconds.
    pub p99_us: Option<f64>,
}

impl Latency {
    /// The count, mean and P99 of `s`.
    pub fn of(s: &OpStats) -> Latency {
        let some = s.ops > 0;
        Latency {
            ops: s.ops,
            mean_us: some.then(|| s.hist.mean() / 1000.0),
            p99_us: some.then(|| s.micros_at(0.99)),
        }
    }

    /// Per-field medians of `xs` (repeats of one phase).
    fn median(xs: &[&Latency]) -> Latency {
        Latency {
            ops: med_u64(xs, |l| l.ops),
            mean_us: med_opt(xs, |l| l.mean_us),
            p99_us: med_opt(xs, |l| l.p99_us),
        }
    }
}

/// Bytes of each kind of disk I/O over a phase and its settling (the paper's Fig. 3),
/// from exact counters.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct IoBytes {
    /// Appended to write-ahead logs.
    pub wal: u64,
    /// Table bytes flushes wrote.
    pub flush: u64,
    /// Table bytes compactions read and wrote.
    pub compaction: u64,
    /// Block bytes read by everything but compactions (gets' data, index and filter
    /// blocks, table opens): `block_bytes_read - compaction_block_bytes_read`. `None`
    /// where the engine has no such counters.
    pub get: Option<u64>,
}

impl IoBytes {
    /// Per-field medians of `xs`.
    fn median(xs: &[&IoBytes]) -> IoBytes {
        IoBytes {
            wal: med_u64(xs, |i| i.wal),
            flush: med_u64(xs, |i| i.flush),
            compaction: med_u64(xs, |i| i.compaction),
            get: med_opt(xs, |i| i.get.map(|g| g as f64)).map(|g| g.round() as u64),
        }
    }
}

/// The figures of one phase.
#[derive(Clone, Debug, Serialize)]
pub struct Phase {
    /// Wall time of the operations (settling excluded).
    pub seconds: f64,
    /// Operations per second over `seconds`.
    pub ops_per_sec: f64,
    /// The phase's writes.
    pub writes: Latency,
    /// The phase's gets.
    pub gets: Latency,
    /// Gets that found their key.
    pub found: u64,
    /// Share of the writers' time spent slowed or stopped (Strata's
    /// `write_slowdown_micros + write_stop_micros`, RocksDB's `rocksdb.stall.micros`)
    /// over the phase's wall time times its threads; `None` for a phase without writes.
    pub stall_fraction: Option<f64>,
    /// Time `wait_for_compactions` took after the operations.
    pub settle_seconds: f64,
    /// Tables whose contents a get examined (`tables_probed / gets`), Strata only.
    pub tables_probed_per_get: Option<f64>,
    /// Of those, parents probed through virtual tables.
    pub parents_probed_per_get: Option<f64>,
    /// Merges of virtual tables reads asked for, done in the phase or its settling.
    pub virtual_merges: Option<u64>,
    /// Compaction bytes read in the phase and its settling.
    pub compaction_bytes_read: u64,
    /// Compaction bytes written in the phase and its settling.
    pub compaction_bytes_written: u64,
    /// I/O by kind in the phase and its settling.
    pub io: IoBytes,
}

impl Phase {
    /// Per-field medians of `xs` (repeats of one phase); `None` iff `xs` is empty.
    fn median(xs: &[&Phase]) -> Option<Phase> {
        let first = xs.first()?;
        let lat = |f: fn(&Phase) -> &Latency| {
            Latency::median(&xs.iter().map(|p| f(p)).collect::<Vec<_>>())
        };
        Some(Phase {
            seconds: med(xs, |p| p.seconds)?,
            ops_per_sec: med(xs, |p| p.ops_per_sec)?,
            writes: lat(|p| &p.writes),
            gets: lat(|p| &p.gets),
            found: med_u64(xs, |p| p.found),
            stall_fraction: med_opt(xs, |p| p.stall_fraction),
            settle_seconds: med(xs, |p| p.settle_seconds)?,
            tables_probed_per_get: med_opt(xs, |p| p.tables_probed_per_get),
            parents_probed_per_get: med_opt(xs, |p| p.parents_probed_per_get),
            virtual_merges: first
                .virtual_merges
                .map(|_| med_u64(xs, |p| p.virtual_merges.unwrap_or(0))),
            compaction_bytes_read: med_u64(xs, |p| p.compaction_bytes_read),
            compaction_bytes_written: med_u64(xs, |p| p.compaction_bytes_written),
            io: IoBytes::median(&xs.iter().map(|p| &p.io).collect::<Vec<_>>()),
        })
    }
}

/// One run's figures: the spec, the main phase, the read phase and the end state.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// `dcompaction`.
    pub experiment: &'static str,
    /// The part that asked for it (`overall`, `volume`, `record`, `vct`, `vsmt`,
    /// `devices`, `motivation`).
    pub part: String,
    /// The stream's name (`D1`..`D4`, a volume or record size).
    pub dataset: String,
    /// The configuration's label ([`super::spec::Config::label`]).
    pub config: String,
    /// `strata` or `rocksdb`.
    pub engine: &'static str,
    /// `level` or `universal`.
    pub compaction_style: &'static str,
    /// Strata's delayed compaction on.
    pub delayed_compaction: bool,
    /// VCT, when on.
    pub vct: Option<usize>,
    /// VSMT, when on.
    pub vsmt: Option<usize>,
    /// The garbage bound (`--virtual_garbage_ratio`), when on.
    pub max_garbage_ratio: Option<f64>,
    /// `fixed` or `aligned`.
    pub partitioning: &'static str,
    /// The device preset under the database, if any.
    pub device: Option<&'static str>,
    /// `--scale` (or `--device_scale` for the devices part).
    pub scale: f64,
    /// Operations of the main phase.
    pub operations: u64,
    /// Keys the zipfian spreads over.
    pub key_space: u64,
    /// Write share of the main phase.
    pub write_ratio: f64,
    /// Value bytes.
    pub value_size: usize,
    /// The paper-equivalent data volume, GB.
    pub volume_gb_equivalent: f64,
    /// Client threads.
    pub threads: usize,
    /// Block cache bytes.
    pub cache_bytes: usize,
    /// The main phase.
    pub main: Phase,
    /// Compaction bytes read once the main phase settled.
    pub compaction_bytes_read: u64,
    /// Compaction bytes written once the main phase settled.
    pub compaction_bytes_written: u64,
    /// Flush bytes once the main phase settled.
    pub flush_bytes_written: u64,
    /// (flush + compaction bytes written) / flush bytes, once the main phase settled.
    pub write_amplification: f64,
    /// Wall time of compaction jobs to the end of the main phase, seconds (Strata).
    pub compaction_seconds: Option<f64>,
    /// The read phase (D4 for the D1 stream), if the stream has one.
    pub read: Option<Phase>,
    /// Compaction bytes read once the read phase settled (its merges included).
    pub compaction_bytes_read_after_reads: u64,
    /// Compaction bytes written once the read phase settled.
    pub compaction_bytes_written_after_reads: u64,
    /// Compactions that made virtual tables (Strata).
    pub virtual_compactions: Option<u64>,
    /// Virtual tables, parents and garbage once the main phase settled (Strata).
    pub virtual_space_after_main: Option<VirtualSpace>,
    /// Virtual tables, parents and garbage at the end, after the read phase (Strata).
    pub virtual_space: Option<VirtualSpace>,
    /// Live table bytes once the main phase settled (the denominator of the garbage
    /// bound at that point).
    pub live_table_bytes_after_main: u64,
    /// Live table bytes at the end, after a flush.
    pub live_table_bytes: u64,
    /// Live table bytes after compacting the whole key range.
    pub live_table_bytes_compacted: Option<u64>,
    /// `live_table_bytes / live_table_bytes_compacted`.
    pub space_amplification: Option<f64>,
    /// False iff Strata with the option off, on the same stream and partitioning,
    /// spent less than 20% of its main phase stalled: the run is then not
    /// compaction-bound, and write throughput says little about compaction.
    pub compaction_bound: Option<bool>,
    /// True iff this row repeats an earlier part's run of the same spec.
    pub reused: bool,
    /// Runs of this spec (`--repeats`); a row with more than one is their median.
    pub repeats: usize,
    /// Which of those runs this row is (0-based); `None` for the median of several.
    pub repeat: Option<usize>,
    /// The engine's statistics at the end of the read phase (before the compaction).
    pub stats: EngineStats,
}

impl Row {
    /// The median of `runs` (repeats of one spec, at least one): every throughput,
    /// latency, stall share, byte count and ratio is the median of its field over the
    /// runs (so the figures of one row may come from different runs); the virtual
    /// tables, garbage and engine statistics are those of the run with the median main
    /// throughput. One run is returned as it is.
    pub fn median(runs: &[Row]) -> Option<Row> {
        if let [one] = runs {
            return Some(one.clone());
        }
        let mut order: Vec<&Row> = runs.iter().collect();
        order.sort_by(|a, b| a.main.ops_per_sec.total_cmp(&b.main.ops_per_sec));
        let typical = order.get(order.len() / 2)?;
        let mains: Vec<&Phase> = runs.iter().map(|r| &r.main).collect();
        let reads: Vec<&Phase> = runs.iter().filter_map(|r| r.read.as_ref()).collect();
        Some(Row {
            main: Phase::median(&mains)?,
            read: Phase::median(&reads),
            compaction_bytes_read: med_u64(runs, |r| r.compaction_bytes_read),
            compaction_bytes_written: med_u64(runs, |r| r.compaction_bytes_written),
            flush_bytes_written: med_u64(runs, |r| r.flush_bytes_written),
            write_amplification: med(runs, |r| r.write_amplification)?,
            compaction_seconds: med_opt(runs, |r| r.compaction_seconds),
            compaction_bytes_read_after_reads: med_u64(runs, |r| {
                r.compaction_bytes_read_after_reads
            }),
            compaction_bytes_written_after_reads: med_u64(runs, |r| {
                r.compaction_bytes_written_after_reads
            }),
            live_table_bytes_after_main: med_u64(runs, |r| r.live_table_bytes_after_main),
            live_table_bytes: med_u64(runs, |r| r.live_table_bytes),
            live_table_bytes_compacted: med_opt(runs, |r| {
                r.live_table_bytes_compacted.map(|b| b as f64)
            })
            .map(|b| b.round() as u64),
            space_amplification: med_opt(runs, |r| r.space_amplification),
            repeats: runs.len(),
            repeat: None,
            ..(*typical).clone()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(ops_per_sec: f64, p99: f64) -> Phase {
        Phase {
            seconds: 1.0,
            ops_per_sec,
            writes: Latency {
                ops: 10,
                mean_us: Some(p99 / 2.0),
                p99_us: Some(p99),
            },
            gets: Latency::default(),
            found: 0,
            stall_fraction: Some(ops_per_sec / 1000.0),
            settle_seconds: 0.5,
            tables_probed_per_get: None,
            parents_probed_per_get: None,
            virtual_merges: Some(ops_per_sec as u64),
            compaction_bytes_read: ops_per_sec as u64 * 2,
            compaction_bytes_written: ops_per_sec as u64,
            io: IoBytes::default(),
        }
    }

    #[test]
    fn phase_medians_are_per_field() {
        let (a, b, c) = (phase(100.0, 9.0), phase(300.0, 1.0), phase(200.0, 5.0));
        let m = Phase::median(&[&a, &b, &c]).expect("three phases");
        assert_eq!(m.ops_per_sec, 200.0);
        assert_eq!(m.writes.p99_us, Some(5.0));
        assert_eq!(m.writes.mean_us, Some(2.5));
        assert_eq!(m.stall_fraction, Some(0.2));
        assert_eq!(m.virtual_merges, Some(200));
        assert_eq!(m.compaction_bytes_read, 400);
        // Even counts take the mean of the middle two.
        let m = Phase::median(&[&a, &b]).expect("two phases");
        assert_eq!(m.ops_per_sec, 200.0);
        assert_eq!(m.writes.p99_us, Some(5.0));
        assert!(Phase::median(&[]).is_none());
    }
}
