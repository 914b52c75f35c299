//! The preset devices, each from published figures, and the string forms of a model.

use super::model::DeviceModel;
use crate::error::{Error, Result};
use std::str::FromStr;
use std::time::Duration;

impl DeviceModel {
    /// The preset names [`DeviceModel::preset`] accepts, fastest first.
    pub const PRESETS: [&'static str; 4] = ["nvme", "sata-ssd", "gp3", "hdd"];

    /// A local datacenter NVMe SSD: Intel SSD DC P4500, 2.0 TB (PCIe 3.0 x4), as listed
    /// in Lenovo Press, *Intel P4500 Entry NVMe PCIe 3.0 SSDs*, Table 2 "Technical
    /// specifications": random read access latency 85 µs, 490,000 random 4 KB read IOPS,
    /// sequential read 3.2 GB/s (3,052 MiB/s), sequential write 1.05 GB/s (1,001 MiB/s).
    /// Queue depth 128 (an NVMe queue is far deeper; 128 is past any thread count the
    /// engine runs).
    pub fn nvme() -> Self {
        DeviceModel {
            name: Some("nvme"),
            access_latency: Duration::from_micros(85),
            read_mib_per_s: 3_052.0,
            write_mib_per_s: 1_001.0,
            iops: 490_000.0,
            queue_depth: 128,
            max_io: 1 << 20,
        }
    }

    /// A SATA SSD: Samsung 860 EVO data sheet (Rev. 1.0, 2018): sequential read
    /// 550 MB/s (525 MiB/s), sequential write 520 MB/s (496 MiB/s), random 4 KB read
    /// 98,000 IOPS at QD32 and 10,000 IOPS at QD1. The data sheet gives no latency; the
    /// QD1 figure means 100 µs per 4 KiB read, of which 7.4 µs is the transfer at
    /// 550 MB/s, so the access latency is 92 µs. Queue depth 32 (SATA NCQ).
    pub fn sata_ssd() -> Self {
        DeviceModel {
            name: Some("sata-ssd"),
            access_latency: Duration::from_micros(92),
            read_mib_per_s: 525.0,
            write_mib_per_s: 496.0,
            iops: 98_000.0,
            queue_depth: 32,
            max_io: 1 << 20,
        }
    }

    /// AWS EBS gp3 as the HotRAP paper's slow disk (Qiu et al., *HotRAP*, §4.1 and
    /// Table 1): provisioned to 10,000 IOPS and 1,000 MiB/s, read and write. Latency:
    /// AWS documents gp3 as "single-digit millisecond" (Amazon EBS User Guide, *Amazon
    /// EBS volume types*); the model takes 1 ms, the low end, which is also what the
    /// paper's 16-thread 16 KiB figure needs (10,000 IOPS from 16 I/Os in flight means
    /// at most 1.6 ms each). I/Os count per 256 KiB, the I/O size at which EBS counts an
    /// SSD volume's IOPS. Queue depth 32.
    pub fn gp3() -> Self {
        DeviceModel {
            name: Some("gp3"),
            access_latency: Duration::from_millis(1),
            read_mib_per_s: 1_000.0,
            write_mib_per_s: 1_000.0,
            iops: 10_000.0,
            queue_depth: 32,
            max_io: 256 << 10,
        }
    }

    /// A 7,200 rpm hard disk as the HotRAP paper's HDD test (§4.8, Table 6): about
    /// 400 IOPS for 16 threads of random 16 KiB reads, 260 MiB/s sequential read,
    /// 250 MiB/s sequential write. Access latency: 8.2 ms average read seek (HGST
    /// Ultrastar 7K4000 specification, §4.4.1.1, typical) plus 4.16 ms, half a turn at
    /// 7,200 rpm: 12.36 ms. The 400 IOPS of 16 threads is command queueing reordering
    /// seeks, which the model renders as a queue depth of 32 under a 400 IOPS cap (one
    /// thread alone gets 1 / 12.4 ms = 80 IOPS).
    pub fn hdd() -> Self {
        DeviceModel {
            name: Some("hdd"),
            access_latency: Duration::from_micros(12_360),
            read_mib_per_s: 260.0,
            write_mib_per_s: 250.0,
            iops: 400.0,
            queue_depth: 32,
            max_io: 1 << 20,
        }
    }

    /// The preset named `name`, one of [`DeviceModel::PRESETS`].
    ///
    /// # Errors
    /// `InvalidArgument` naming `name` and listing the presets.
    pub fn preset(name: &str) -> Result<Self> {
        match name {
            "nvme" => Ok(Self::nvme()),
            "sata-ssd" => Ok(Self::sata_ssd()),
            "gp3" => Ok(Self::gp3()),
            "hdd" => Ok(Self::hdd()),
            _ => Err(Error::InvalidArgument(format!(
                "device model: unknown preset `{name}` (presets: {}; or latency_us,mib_per_s,iops)",
                Self::PRESETS.join(", ")
            ))),
        }
    }
}

/// Parses `PRESET` (see [`DeviceModel::PRESETS`]) or `latency_us,mib_per_s,iops`
/// ([`DeviceModel::from_figures`]), e.g. `"gp3"` or `"1000,1000,10000"`.
///
/// # Errors
/// `InvalidArgument` naming the input: an unknown preset, not three comma-separated
/// figures, a figure that is not a number, or one out of range.
impl FromStr for DeviceModel {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim();
        if !s.contains(',') {
            return DeviceModel::preset(s);
        }
        let figures = s
            .split(',')
            .map(|f| {
                f.trim().parse::<f64>().map_err(|_| {
                    Error::InvalidArgument(format!(
                        "device model `{s}`: `{}` is not a number (want latency_us,mib_per_s,iops)",
                        f.trim()
                    ))
                })
            })
            .collect::<Result<Vec<f64>>>()?;
        match figures.as_slice() {
            [latency_us, mib_per_s, iops] => {
                DeviceModel::from_figures(*latency_us, *mib_per_s, *iops)
            }
            _ => Err(Error::InvalidArgument(format!(
                "device model `{s}`: want three figures latency_us,mib_per_s,iops, got {}",
                figures.len()
            ))),
        }
    }
}
