//! The YCSB core workloads A–F and the extra mixes RO, RW, WH, UH, as data.

use clap::ValueEnum;
use serde::Serialize;

/// `--workload`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
#[value(rename_all = "lowercase")]
pub enum WorkloadName {
    /// 50% read, 50% update (zipfian).
    A,
    /// 95% read, 5% update (zipfian).
    B,
    /// 100% read (zipfian).
    C,
    /// 95% read, 5% insert (latest).
    D,
    /// 95% scan (1..=100 entries), 5% insert (zipfian).
    E,
    /// 50% read, 50% read-modify-write (zipfian).
    F,
    /// Read only (zipfian).
    Ro,
    /// 75% read, 25% insert (zipfian).
    Rw,
    /// Write heavy: 50% read, 50% insert (zipfian).
    Wh,
    /// Update heavy: 50% read, 50% update (zipfian).
    Uh,
}

/// `--distribution`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    /// Every existing key equally likely.
    Uniform,
    /// Scrambled zipfian (`--zipf_const`).
    Zipfian,
    /// `--hotspot_op_fraction` of requests to `--hotspot_fraction` of the keys, the
    /// first ones or from `--hotspot_offset`.
    Hotspot,
    /// Recently inserted keys most likely.
    Latest,
}

/// One kind of YCSB operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum OpKind {
    /// Point read.
    Read,
    /// Overwrite of an existing key.
    Update,
    /// Write of a new key.
    Insert,
    /// Range scan.
    Scan,
    /// Read, then write the key back.
    ReadModifyWrite,
}

impl OpKind {
    /// Every kind, in report order.
    pub const ALL: [OpKind; 5] = [
        OpKind::Read,
        OpKind::Update,
        OpKind::Insert,
        OpKind::Scan,
        OpKind::ReadModifyWrite,
    ];

    /// Lowercase name for output and JSON.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Update => "update",
            OpKind::Insert => "insert",
            OpKind::Scan => "scan",
            OpKind::ReadModifyWrite => "read_modify_write",
        }
    }

    /// Position in [`OpKind::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Operation proportions and the default request distribution of a workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Mix {
    /// `(kind, proportion)`; proportions sum to 1.
    pub ops: Vec<(OpKind, f64)>,
    /// The distribution used unless `--distribution` says otherwise.
    pub distribution: Distribution,
}

impl WorkloadName {
    /// The workload's operation mix.
    pub fn mix(self) -> Mix {
        use OpKind::*;
        let (ops, distribution) = match self {
            WorkloadName::A => (vec![(Read, 0.5), (Update, 0.5)], Distribution::Zipfian),
            WorkloadName::B => (vec![(Read, 0.95), (Update, 0.05)], Distribution::Zipfian),
            WorkloadName::C | WorkloadName::Ro => (vec![(Read, 1.0)], Distribution::Zipfian),
            WorkloadName::D => (vec![(Read, 0.95), (Insert, 0.05)], Distribution::Latest),
            WorkloadName::E => (vec![(Scan, 0.95), (Insert, 0.05)], Distribution::Zipfian),
            WorkloadName::F => (
                vec![(Read, 0.5), (ReadModifyWrite, 0.5)],
                Distribution::Zipfian,
            ),
            WorkloadName::Rw => (vec![(Read, 0.75), (Insert, 0.25)], Distribution::Zipfian),
            WorkloadName::Wh => (vec![(Read, 0.5), (Insert, 0.5)], Distribution::Zipfian),
            WorkloadName::Uh => (vec![(Read, 0.5), (Update, 0.5)], Distribution::Zipfian),
        };
        Mix { ops, distribution }
    }

    /// Lowercase name (`a`, `ro`, ...).
    pub fn name(self) -> &'static str {
        match self {
            WorkloadName::A => "a",
            WorkloadName::B => "b",
            WorkloadName::C => "c",
            WorkloadName::D => "d",
            WorkloadName::E => "e",
            WorkloadName::F => "f",
            WorkloadName::Ro => "ro",
            WorkloadName::Rw => "rw",
            WorkloadName::Wh => "wh",
            WorkloadName::Uh => "uh",
        }
    }
}

impl Mix {
    /// The operation for a uniform draw `u` in `[0, 1)`.
    pub fn pick(&self, u: f64) -> OpKind {
        let mut acc = 0.0;
        for &(kind, p) in &self.ops {
            acc += p;
            if u < acc {
                return kind;
            }
        }
        self.ops.last().map_or(OpKind::Read, |&(k, _)| k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_sum_to_one_and_pick_in_proportion() {
        for w in WorkloadName::value_variants() {
            let m = w.mix();
            let sum: f64 = m.ops.iter().map(|(_, p)| p).sum();
            assert!((sum - 1.0).abs() < 1e-12, "{w:?}");
        }
        let a = WorkloadName::A.mix();
        assert_eq!(a.pick(0.0), OpKind::Read);
        assert_eq!(a.pick(0.49), OpKind::Read);
        assert_eq!(a.pick(0.5), OpKind::Update);
        assert_eq!(a.pick(0.999_999), OpKind::Update);
        assert_eq!(WorkloadName::D.mix().distribution, Distribution::Latest);
        assert_eq!(WorkloadName::E.mix().pick(0.96), OpKind::Insert);
        assert_eq!(WorkloadName::F.mix().pick(0.7), OpKind::ReadModifyWrite);
        assert_eq!(WorkloadName::Rw.mix().pick(0.8), OpKind::Insert);
    }
}
