//! `strata table advise`: the design advisor (`strata::table::advisor`) from a
//! hand-written workload (`--workload=FILE`) or from the paper's workload HW (its
//! Table 3) scaled to `--columns` columns and the tree `--levels`, `--size_ratio`.
//!
//! # The workload file (JSON)
//!
//! ```text
//! {"columns": 30, "levels": 7, "size_ratio": 2.0, "row_entries_per_block": 104.0,
//!  "inserts": 20000000.0,
//!  "ops": [{"level": 1, "kind": "point", "columns": [0, 1], "count": 1000.0},
//!          {"level": 6, "kind": "scan", "columns": [27, 28, 29], "count": 12.0,
//!           "entries": 50000000.0},
//!          {"level": 3, "kind": "update", "columns": [4], "count": 10.0}]}
//! ```
//! `levels` is the deepest level `L` (levels `0..=L`); columns are numbered from 0
//! over the non-key columns in schema order; `entries` is a scan's selected entries
//! at its level (`s_i`). `--dump_workload` prints the synthetic workload in this
//! format, so a description can start from it.
//!
//! # The synthetic workload (HW, the paper's §7.2)
//!
//! Per level `i`, the share of the data it holds under the model's spread
//! (`TreeShape::scan_share`), the newest data highest, memtables and L0 taking what the
//! levels leave. A point read of a key drawn at position `x` of insertion time
//! (1 = newest) by a normal distribution is served by the level whose band holds `x`:
//! Q2a (every column, mean 0.98) and Q2b (the last half, mean 0.85), σ 0.02, 500,000
//! each. Q3 (the last tenth of the columns, 50% of the rows) and Q4 (the last third,
//! 5%) are 12 scans each, spread over the levels as the data is. Q5, 1% of the
//! inserts, updates one column chosen uniformly, and an update is priced at every
//! level it passes (Eq. 7); with `c` columns that is `c` single-column projections per
//! level. Projections scale from the paper's 30 columns to `c` by position.

use crate::error::{CliError, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Instant;
use strata::table::advisor::{self, Workload};
use strata::table::cost::{LevelOp, OpKind, TreeShape};

/// One operation class of a workload file.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
struct FileOp {
    level: usize,
    kind: String,
    columns: Vec<u32>,
    count: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    entries: Option<f64>,
}

/// A workload file. See the module docs.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
struct WorkloadFile {
    columns: usize,
    levels: usize,
    size_ratio: f64,
    row_entries_per_block: f64,
    inserts: f64,
    ops: Vec<FileOp>,
}

impl WorkloadFile {
    /// The advisor's input.
    fn to_input(&self) -> Result<(TreeShape, Workload)> {
        let shape = TreeShape {
            size_ratio: self.size_ratio,
            last_level: self.levels,
            row_entries_per_block: self.row_entries_per_block,
            columns: self.columns,
        };
        let mut ops = vec![Vec::new(); self.levels + 1];
        for op in &self.ops {
            let kind = match (op.kind.as_str(), op.entries) {
                ("point", None) => OpKind::PointRead,
                ("update", None) => OpKind::Update,
                ("scan", Some(entries)) => OpKind::Scan { entries },
                (k, e) => {
                    return Err(CliError::BadInput(format!(
                        "operation kind `{k}`{}: want point, update, or scan with entries",
                        if e.is_some() { " with entries" } else { "" }
                    )))
                }
            };
            let level = ops.get_mut(op.level).ok_or_else(|| {
                CliError::BadInput(format!(
                    "level {} beyond --levels {}",
                    op.level, self.levels
                ))
            })?;
            level.push(LevelOp {
                kind,
                columns: op.columns.clone(),
                count: op.count,
            });
        }
        Ok((
            shape,
            Workload {
                inserts: self.inserts,
                ops,
            },
        ))
    }
}

/// The synthetic workload's size: the paper's load and run.
pub struct Hw {
    /// Columns (the key not counted).
    pub columns: usize,
    /// The deepest level.
    pub levels: usize,
    /// `T`.
    pub size_ratio: f64,
    /// Rows in the table (the paper: 400 M).
    pub rows: f64,
    /// Inserts during the run (the paper: 20 M).
    pub inserts: f64,
    /// Bytes of a data block (entries per row block follow from the row's width).
    pub block_bytes: f64,
}

/// The standard normal CDF (Abramowitz and Stegun 7.1.26, error below 1.5e-7).
fn phi(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

impl Hw {
    /// Table 3 as a workload file. See the module docs.
    fn workload(&self) -> WorkloadFile {
        let c = self.columns;
        // An 8-byte key and c four-byte columns per row.
        let row_bytes = 8.0 + 4.0 * c as f64;
        let shape = TreeShape {
            size_ratio: self.size_ratio,
            last_level: self.levels,
            row_entries_per_block: (self.block_bytes / row_bytes).max(1.0),
            columns: c,
        };
        // The paper's columns a(from+1)..a30 of 30, scaled by position.
        let last = |from_of_30: usize| -> Vec<u32> {
            let from = (from_of_30 * c).div_ceil(30).min(c.saturating_sub(1));
            (from..c).filter_map(|x| u32::try_from(x).ok()).collect()
        };
        let shares: Vec<f64> = (0..=self.levels)
            .map(|i| {
                if i == 0 {
                    0.0
                } else {
                    shape.scan_share(1.0, i)
                }
            })
            .collect();
        let mut ops = Vec::new();
        // The levels' bands, newest first, below the memtables' and L0's.
        let mut hi: f64 = shares.iter().sum();
        for (level, share) in shares.iter().enumerate().skip(1) {
            let lo = hi - share;
            for (mean, columns) in [(0.98, last(0)), (0.85, last(15))] {
                let p = phi((hi - mean) / 0.02) - phi((lo - mean) / 0.02);
                if p * 500_000.0 >= 1e-9 {
                    ops.push(FileOp {
                        level,
                        kind: "point".into(),
                        columns,
                        count: p * 500_000.0,
                        entries: None,
                    });
                }
            }
            for (fraction, columns) in [(0.5, last(27)), (0.05, last(20))] {
                ops.push(FileOp {
                    level,
                    kind: "scan".into(),
                    columns,
                    count: 12.0,
                    entries: Some(shape.scan_share(fraction * self.rows, level)),
                });
            }
            for col in 0..c {
                ops.push(FileOp {
                    level,
                    kind: "update".into(),
                    columns: u32::try_from(col).into_iter().collect(),
                    count: 0.01 * self.inserts / c as f64,
                    entries: None,
                });
            }
            hi = lo;
        }
        WorkloadFile {
            columns: c,
            levels: self.levels,
            size_ratio: self.size_ratio,
            row_entries_per_block: shape.row_entries_per_block,
            inserts: self.inserts,
            ops,
        }
    }
}

/// What `advise` is asked to work from.
pub enum Source<'a> {
    /// A workload file.
    File(&'a Path),
    /// The synthetic HW.
    Hw(Hw),
}

/// Runs the advisor and returns the lines to print: the workload itself when `dump`,
/// else the advice (`json`: one JSON line; else a table).
///
/// # Errors
/// An unreadable or malformed workload file (`BadInput`), the advisor's refusals.
pub fn advise(source: Source<'_>, dump: bool, json: bool) -> Result<Vec<String>> {
    let file = match source {
        Source::File(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::io("read workload", path, e))?;
            serde_json::from_str::<WorkloadFile>(&text)
                .map_err(|e| CliError::BadInput(format!("{}: {e}", path.display())))?
        }
        Source::Hw(hw) => hw.workload(),
    };
    if dump {
        let line = serde_json::to_string(&file)
            .map_err(|e| CliError::BadInput(format!("workload: {e}")))?;
        return Ok(vec![line]);
    }
    let (shape, workload) = file.to_input()?;
    let start = Instant::now();
    let advice = advisor::advise(&shape, &workload)?;
    let seconds = start.elapsed().as_secs_f64();
    let layout = advice.layout.to_text();
    if json {
        let line = serde_json::json!({
            "columns": file.columns,
            "levels": file.levels,
            "size_ratio": file.size_ratio,
            "row_entries_per_block": file.row_entries_per_block,
            "operations": file.ops.len(),
            "layout": layout,
            "level_costs": advice.level_costs,
            "total_cost": advice.level_costs.iter().sum::<f64>(),
            "exact": advice.exact,
            "seconds": seconds,
        });
        return Ok(vec![line.to_string()]);
    }
    let mut out = vec![
        format!("layout: {layout}"),
        format!(
            "search: {} in {:.3} s ({} operation classes, {} columns, levels 0..={}, T = {})",
            if advice.exact {
                "exact"
            } else {
                "greedy merge on some level"
            },
            seconds,
            file.ops.len(),
            file.columns,
            file.levels,
            file.size_ratio
        ),
        format!("{:>5}  {:>7}  {:>14}", "level", "groups", "cost (blocks)"),
    ];
    for (level, cost) in advice.level_costs.iter().enumerate() {
        let groups = match advice.layout.level(level) {
            strata::table::LevelLayout::Row => 1,
            strata::table::LevelLayout::Groups(g) => g.len(),
        };
        out.push(format!("{level:>5}  {groups:>7}  {cost:>14.1}"));
    }
    out.push(format!(
        "{:>5}  {:>7}  {:>14.1}",
        "total",
        "",
        advice.level_costs.iter().sum::<f64>()
    ));
    Ok(out)
}

#[cfg(test)]
mod tests;
