//! The SVG charts of `experiment dcompaction`, one per paper figure, drawn from the
//! rows of the parts that ran (a part that did not run draws nothing).

use super::report::{io_points, io_shares};
use super::row::{Phase, Row};
use super::DcompactionArgs;
use crate::error::Result;
use crate::experiment::chart;

fn mib(b: u64) -> f64 {
    b as f64 / (1u64 << 20) as f64
}

/// A grouped bar chart into `--charts`/`file`: `value(group, series)` per bar.
fn bars(
    args: &DcompactionArgs,
    file: &str,
    title: &str,
    metric: &str,
    groups: &[String],
    series: &[String],
    value: impl Fn(&str, &str) -> Option<f64>,
) -> Result<()> {
    if groups.is_empty() || series.is_empty() {
        return Ok(());
    }
    let values = groups
        .iter()
        .map(|g| series.iter().map(|s| value(g, s)).collect())
        .collect();
    chart(
        &args.charts.join(file),
        title,
        metric,
        groups.to_vec(),
        series.to_vec(),
        values,
    )
}

/// Distinct values of `key` over `rows`, in order of first appearance.
fn distinct(rows: &[&Row], key: impl Fn(&Row) -> String) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in rows {
        let k = key(r);
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

fn part<'a>(rows: &'a [Row], name: &str) -> Vec<&'a Row> {
    rows.iter().filter(|r| r.part == name).collect()
}

fn find<'a>(rows: &[&'a Row], dataset: &str, config: &str) -> Option<&'a Row> {
    rows.iter()
        .copied()
        .find(|r| r.dataset == dataset && r.config == config)
}

/// Draws every chart the rows allow.
///
/// # Errors
/// Plotting and I/O errors.
pub fn draw(args: &DcompactionArgs, rows: &[Row]) -> Result<()> {
    overall(args, &part(rows, "overall"))?;
    sensitivity(args, &part(rows, "volume"), "volume")?;
    sensitivity(args, &part(rows, "record"), "record")?;
    thresholds(args, &part(rows, "vct"), &part(rows, "vsmt"))?;
    devices(args, &part(rows, "devices"))?;
    motivation(args, &part(rows, "motivation"))
}

/// Figs. 10–12: throughput per dataset, compaction bytes, D2's latencies.
fn overall(args: &DcompactionArgs, rows: &[&Row]) -> Result<()> {
    let configs = distinct(rows, |r| r.config.clone());
    let groups: Vec<String> = ["D1 writes", "D2 80% writes", "D3 20% writes", "D4 reads"]
        .into_iter()
        .filter(|g| {
            let d = if g.starts_with("D4") {
                "D1"
            } else {
                g.get(..2).unwrap_or_default()
            };
            rows.iter().any(|r| r.dataset == d)
        })
        .map(String::from)
        .collect();
    bars(
        args,
        "dcompaction-throughput.svg",
        "Throughput by dataset (Fig. 10)",
        "operations / s",
        &groups,
        &configs,
        |g, c| match g.get(..2) {
            Some("D4") => find(rows, "D1", c)?.read.as_ref().map(|p| p.ops_per_sec),
            Some(d) => find(rows, d, c).map(|r| r.main.ops_per_sec),
            None => None,
        },
    )?;
    let groups: Vec<String> = ["D1", "D2", "D3"]
        .into_iter()
        .filter(|d| rows.iter().any(|r| r.dataset == *d))
        .flat_map(|d| [format!("{d} read"), format!("{d} written")])
        .collect();
    bars(
        args,
        "dcompaction-compaction-bytes.svg",
        "Compaction bytes once compactions settle, MiB (Fig. 11)",
        "MiB",
        &groups,
        &configs,
        |g, c| {
            let r = find(rows, g.get(..2)?, c)?;
            Some(mib(if g.ends_with("read") {
                r.compaction_bytes_read
            } else {
                r.compaction_bytes_written
            }))
        },
    )?;
    let groups = latency_groups();
    let d2: Vec<&Row> = rows.iter().copied().filter(|r| r.dataset == "D2").collect();
    let d2_configs = distinct(&d2, |r| r.config.clone());
    bars(
        args,
        "dcompaction-d2-latency.svg",
        "D2 (80% writes): write and get latency, us (Fig. 12)",
        "us",
        &groups,
        &d2_configs,
        |g, c| latency(&find(&d2, "D2", c)?.main, g),
    )
}

fn latency_groups() -> Vec<String> {
    ["write mean", "write P99", "get mean", "get P99"]
        .map(String::from)
        .to_vec()
}

fn latency(p: &Phase, group: &str) -> Option<f64> {
    match group {
        "write mean" => p.writes.mean_us,
        "write P99" => p.writes.p99_us,
        "get mean" => p.gets.mean_us,
        _ => p.gets.p99_us,
    }
}

/// Figs. 13–15: write and read throughput by data volume or record size, and the
/// option's saving of compaction bytes.
fn sensitivity(args: &DcompactionArgs, rows: &[&Row], name: &str) -> Result<()> {
    let points = distinct(rows, |r| r.dataset.clone());
    let configs = distinct(rows, |r| r.config.clone());
    let (fig_w, fig_r) = match name {
        "volume" => ("Fig. 13", "Fig. 14b"),
        _ => ("Fig. 15", "Fig. 15"),
    };
    bars(
        args,
        &format!("dcompaction-{name}-write.svg"),
        &format!("Write throughput by {name} ({fig_w})"),
        "writes / s",
        &points,
        &configs,
        |p, c| find(rows, p, c).map(|r| r.main.ops_per_sec),
    )?;
    bars(
        args,
        &format!("dcompaction-{name}-read.svg"),
        &format!("Read throughput after the writes, by {name} ({fig_r})"),
        "gets / s",
        &points,
        &configs,
        |p, c| find(rows, p, c)?.read.as_ref().map(|r| r.ops_per_sec),
    )?;
    let saving = |p: &str, written: bool| {
        let pick = |r: &Row| {
            if written {
                r.compaction_bytes_written
            } else {
                r.compaction_bytes_read
            }
        };
        let off = rows
            .iter()
            .find(|r| r.dataset == p && r.config == "strata off fixed")?;
        let on = rows
            .iter()
            .find(|r| r.dataset == p && r.config == "strata dC fixed")?;
        (pick(off) > 0).then(|| 100.0 * (1.0 - pick(on) as f64 / pick(off) as f64))
    };
    bars(
        args,
        &format!("dcompaction-{name}-saving.svg"),
        &format!("Compaction bytes saved by the option, % of off, by {name} (Fig. 14a)"),
        "% saved",
        &points,
        &["read".to_string(), "written".to_string()],
        |p, s| saving(p, s == "written"),
    )
}

/// Figs. 16–18: write latency, compaction bytes and time by VCT; read latency and
/// tables per get by VSMT.
fn thresholds(args: &DcompactionArgs, vct: &[&Row], vsmt: &[&Row]) -> Result<()> {
    let by = |rows: &[&Row], label: fn(&Row) -> String| -> Vec<String> { distinct(rows, label) };
    let vct_label = |r: &Row| r.vct.map_or("off".into(), |v| format!("VCT {v}"));
    let groups = by(vct, vct_label);
    let get = |g: &str| vct.iter().copied().find(|r| vct_label(r) == g);
    bars(
        args,
        "dcompaction-vct-latency.svg",
        "Write latency by VCT, D1, us (Fig. 16)",
        "us",
        &groups,
        &["mean".to_string(), "P99".to_string()],
        |g, s| {
            let w = &get(g)?.main.writes;
            if s == "mean" {
                w.mean_us
            } else {
                w.p99_us
            }
        },
    )?;
    bars(
        args,
        "dcompaction-vct-compaction.svg",
        "Compaction bytes by VCT, D1, MiB (Fig. 17a)",
        "MiB",
        &groups,
        &["read".to_string(), "written".to_string()],
        |g, s| {
            let r = get(g)?;
            Some(mib(if s == "read" {
                r.compaction_bytes_read
            } else {
                r.compaction_bytes_written
            }))
        },
    )?;
    bars(
        args,
        "dcompaction-vct-time.svg",
        "Compaction time by VCT, D1, s (Fig. 17b)",
        "s",
        &groups,
        &["compaction jobs".to_string()],
        |g, _| get(g)?.compaction_seconds,
    )?;
    let vsmt_label = |r: &Row| r.vsmt.map_or("off".into(), |v| format!("VSMT {v}"));
    let groups = by(vsmt, vsmt_label);
    let read = |g: &str| {
        vsmt.iter()
            .copied()
            .find(|r| vsmt_label(r) == g)?
            .read
            .as_ref()
    };
    bars(
        args,
        "dcompaction-vsmt-latency.svg",
        "Get latency after loading D1, by VSMT, us (Fig. 18a)",
        "us",
        &groups,
        &["mean".to_string(), "P99".to_string()],
        |g, s| {
            let p = read(g)?;
            if s == "mean" {
                p.gets.mean_us
            } else {
                p.gets.p99_us
            }
        },
    )?;
    bars(
        args,
        "dcompaction-vsmt-tables.svg",
        "Tables probed per get, by VSMT (Fig. 18b)",
        "per get",
        &groups,
        &["tables".to_string(), "of them parents".to_string()],
        |g, s| {
            let p = read(g)?;
            if s == "tables" {
                p.tables_probed_per_get
            } else {
                p.parents_probed_per_get
            }
        },
    )
}

/// Fig. 19: throughput on the simulated disks.
fn devices(args: &DcompactionArgs, rows: &[&Row]) -> Result<()> {
    let configs = distinct(rows, |r| r.config.clone());
    let mut groups = Vec::new();
    for r in rows {
        let dev = r.device.unwrap_or("real");
        let g = format!("{dev} {}", r.dataset);
        if !groups.contains(&g) {
            groups.push(g);
            if r.dataset == "D1" && r.read.is_some() {
                groups.push(format!("{dev} D4"));
            }
        }
    }
    bars(
        args,
        "dcompaction-devices.svg",
        "Throughput on simulated disks (Fig. 19: hdd; D1 on sata-ssd)",
        "operations / s",
        &groups,
        &configs,
        |g, c| {
            let (dev, d) = g.split_once(' ')?;
            let at = |d: &str| {
                rows.iter()
                    .copied()
                    .find(|r| r.device.unwrap_or("real") == dev && r.dataset == d && r.config == c)
            };
            match d {
                "D4" => at("D1")?.read.as_ref().map(|p| p.ops_per_sec),
                _ => at(d).map(|r| r.main.ops_per_sec),
            }
        },
    )
}

/// Figs. 2 and 3 from the baseline's counters.
fn motivation(args: &DcompactionArgs, rows: &[&Row]) -> Result<()> {
    let writes: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| r.write_ratio >= 1.0)
        .collect();
    let label = |r: &Row| format!("{:.1} GB-equiv.", r.volume_gb_equivalent);
    let mut sorted = writes.clone();
    sorted.sort_by(|a, b| a.volume_gb_equivalent.total_cmp(&b.volume_gb_equivalent));
    let groups = distinct(&sorted, label);
    let configs = distinct(&writes, |r| r.config.clone());
    bars(
        args,
        "dcompaction-motivation-wamp.svg",
        "Write amplification by data volume, baseline (Fig. 2)",
        "W-Amp",
        &groups,
        &configs,
        |g, c| {
            writes
                .iter()
                .find(|r| label(r) == g && r.config == c)
                .map(|r| r.write_amplification)
        },
    )?;
    let strata: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| r.engine == "strata")
        .collect();
    let points = io_points(&strata);
    let groups: Vec<String> = points.iter().map(|(n, _)| (*n).to_string()).collect();
    let kinds = ["WAL", "flush", "get", "compaction"].map(String::from);
    bars(
        args,
        "dcompaction-motivation-io.svg",
        "Share of disk I/O by kind, Strata baseline, % (Fig. 3)",
        "% of bytes",
        &groups,
        &kinds,
        |g, k| {
            let (_, io) = points.iter().find(|(n, _)| *n == g)?;
            let i = kinds.iter().position(|x| x == k)?;
            io_shares(io)?.get(i).copied()
        },
    )
}
