//! What a device model should measure on each line of `strata device-bench`, in closed
//! form from its figures: the figure the line checks, so a preset is compared with the
//! published numbers it was built from (target: within 15%).
//!
//! - queue depth 1, random: median latency = access latency + block / read bandwidth.
//!   The median, as the data sheets' "typical" latency: on a shared machine the mean
//!   carries the real disk's rare stalls of tens of milliseconds, which no model hides
//!   (the table prints the mean beside it);
//! - queue depth 16, random: IOPS = the least of the IOPS cap (an I/O counting as
//!   `ceil(block / max_io)`), the bandwidth over the block size, and
//!   `min(16, queue depth)` I/Os in flight over the queue-depth-1 latency;
//! - sequential: MiB/s = the bandwidth of the direction, or the IOPS cap times the I/O
//!   size if that is lower (no access latency: every I/O continues the last).

use super::measure::{Pattern, Test};
use serde::Serialize;
use strata::env::DeviceModel;

const MIB: f64 = (1u64 << 20) as f64;

/// Which figure a line is checked on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Median latency per I/O, microseconds.
    P50Us,
    /// I/Os per second.
    Iops,
    /// MiB per second.
    MibPerSec,
}

impl Metric {
    /// The column name in the table.
    pub fn label(self) -> &'static str {
        match self {
            Metric::P50Us => "p50 µs",
            Metric::Iops => "IOPS",
            Metric::MibPerSec => "MiB/s",
        }
    }
}

/// The figure `model` should give on `test`.
pub fn of(model: &DeviceModel, test: &Test) -> (Metric, f64) {
    let block = test.block_size as f64;
    let io_count = test.block_size.div_ceil(model.max_io()).max(1) as f64;
    let iops_cap = model.iops() / io_count;
    match test.pattern {
        Pattern::SeqRead => (
            Metric::MibPerSec,
            model.read_mib_per_s().min(iops_cap * block / MIB),
        ),
        Pattern::SeqWrite => (
            Metric::MibPerSec,
            model.write_mib_per_s().min(iops_cap * block / MIB),
        ),
        Pattern::RandRead => {
            let latency_s =
                model.access_latency().as_secs_f64() + block / (model.read_mib_per_s() * MIB);
            if test.queue_depth == 1 {
                (Metric::P50Us, latency_s * 1e6)
            } else {
                let in_flight = test.queue_depth.min(model.queue_depth()) as f64;
                let bandwidth_cap = model.read_mib_per_s() * MIB / block;
                (
                    Metric::Iops,
                    iops_cap.min(bandwidth_cap).min(in_flight / latency_s),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::measure::TESTS;
    use super::*;

    #[test]
    fn gp3_targets_are_the_papers_figures() {
        let gp3 = DeviceModel::gp3();
        let t: Vec<(Metric, f64)> = TESTS.iter().map(|t| of(&gp3, t)).collect();
        let near = |a: f64, b: f64| (a - b).abs() < 1e-6 * b.max(1.0);
        // seqwrite, 4k qd1 (1 ms + 4 µs), 4k qd16, 16k qd1, 16k qd16, seqread.
        assert!(t[0].0 == Metric::MibPerSec && near(t[0].1, 1000.0), "{t:?}");
        assert!(t[1].0 == Metric::P50Us && near(t[1].1, 1003.90625), "{t:?}");
        assert!(t[2].0 == Metric::Iops && near(t[2].1, 10_000.0), "{t:?}");
        assert!(near(t[3].1, 1015.625), "{t:?}");
        assert!(near(t[4].1, 10_000.0), "{t:?}");
        assert!(near(t[5].1, 1000.0), "{t:?}");
    }

    #[test]
    fn hdd_is_capped_by_iops_at_depth_and_seeks_alone() {
        let hdd = DeviceModel::hdd();
        let (_, qd1) = of(&hdd, &TESTS[1]);
        assert!((qd1 - 12_375.0).abs() < 1.0, "{qd1}");
        assert_eq!(of(&hdd, &TESTS[4]), (Metric::Iops, 400.0));
    }
}
