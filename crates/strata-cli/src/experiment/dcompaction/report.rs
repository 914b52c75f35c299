//! What `experiment dcompaction` prints for people: one table per stream (each
//! configuration's figures, then the option's effect), the motivation figures derived
//! from the baseline's counters, and the comparisons the paper makes.

use super::row::{IoBytes, Phase, Row};
use crate::engine::VirtualSpace;

fn mib(b: u64) -> f64 {
    b as f64 / (1u64 << 20) as f64
}

/// `a → b` as a signed percentage; `-` when `a` is 0 or either is missing.
pub fn pct(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if a > 0.0 => format!("{:+.2}%", 100.0 * (b / a - 1.0)),
        _ => "-".into(),
    }
}

fn us(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}"))
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// The header of [`print_row`]'s lines.
pub fn print_header(title: &str) {
    println!("== {title}");
    println!(
        "{:<28} {:>9} {:>15} {:>15} {:>6} {:>15} {:>15} {:>6} {:>6} {:>6} {:>5} {:>8} {:>6}",
        "config",
        "ops/s",
        "write us m/p99",
        "get us m/p99",
        "stall",
        "comp R/W MiB",
        "+reads R/W",
        "W-Amp",
        "tbl/g",
        "par/g",
        "VT",
        "garb MiB",
        "SpAmp"
    );
}

/// One phase of `r`: the compaction bytes and virtual tables once it settled.
fn phase_line(label: &str, p: &Phase, r: &Row, virt: Option<VirtualSpace>, after_reads: bool) {
    let (cr, cw) = if after_reads {
        (
            r.compaction_bytes_read_after_reads,
            r.compaction_bytes_written_after_reads,
        )
    } else {
        (r.compaction_bytes_read, r.compaction_bytes_written)
    };
    println!(
        "{:<28} {:>9.0} {:>15} {:>15} {:>6} {:>15} {:>15} {:>6.2} {:>6} {:>6} {:>5} {:>8} {:>6}",
        label,
        p.ops_per_sec,
        format!("{}/{}", us(p.writes.mean_us), us(p.writes.p99_us)),
        format!("{}/{}", us(p.gets.mean_us), us(p.gets.p99_us)),
        p.stall_fraction
            .map_or("-".into(), |s| format!("{:.0}%", 100.0 * s)),
        format!(
            "{:.0}/{:.0}",
            mib(r.compaction_bytes_read),
            mib(r.compaction_bytes_written)
        ),
        format!("{:.0}/{:.0}", mib(cr), mib(cw)),
        r.write_amplification,
        opt(p.tables_probed_per_get, 2),
        opt(p.parents_probed_per_get, 2),
        virt.map_or("-".into(), |v| v.virtual_tables.to_string()),
        virt.map_or("-".into(), |v| format!("{:.1}", mib(v.garbage_bytes))),
        opt(r.space_amplification, 3),
    );
}

/// One line for the main phase of `r`, and for D1 one more for its read phase (D4).
pub fn print_row(r: &Row) {
    let mark = match r.compaction_bound {
        Some(false) => " *",
        _ => "",
    };
    let label = format!("{}{mark}", r.config);
    phase_line(&label, &r.main, r, r.virtual_space_after_main, false);
    if let Some(read) = &r.read {
        let name = if r.dataset == "D1" {
            "  D4 reads".to_string()
        } else {
            "  then reads".to_string()
        };
        phase_line(&name, read, r, r.virtual_space, true);
    }
}

/// The legend under a stream's table.
pub fn print_legend(rows: &[&Row]) {
    if rows.iter().any(|r| r.compaction_bound == Some(false)) {
        println!(
            "  * not compaction-bound: Strata without the option stalled writes < 20% of \
             the phase"
        );
    }
}

/// The option's effect on one stream: each Strata `dC` row against the `off` row of
/// its partitioning, and against RocksDB leveled where it ran.
pub fn print_effect(rows: &[&Row]) {
    for on in rows.iter().filter(|r| r.delayed_compaction) {
        let off = rows.iter().find(|r| {
            r.engine == "strata" && !r.delayed_compaction && r.partitioning == on.partitioning
        });
        let rocks = rows
            .iter()
            .find(|r| r.engine == "rocksdb" && r.compaction_style == "level");
        for (name, base) in [("off", off), ("rocksdb leveled", rocks)] {
            let Some(base) = base else { continue };
            println!("  -> {} vs {name}: {}", on.config, effect(base, on));
        }
    }
}

/// The paper's comparisons of `on` against `base`: compaction bytes, throughput,
/// latencies, and the read phase's.
pub fn effect(base: &Row, on: &Row) -> String {
    let f = |x: u64| Some(x as f64);
    let mut s = format!(
        "compaction written {}, read {}; ops/s {}; write mean {}; get mean {}",
        pct(
            f(base.compaction_bytes_written),
            f(on.compaction_bytes_written)
        ),
        pct(f(base.compaction_bytes_read), f(on.compaction_bytes_read)),
        pct(Some(base.main.ops_per_sec), Some(on.main.ops_per_sec)),
        pct(base.main.writes.mean_us, on.main.writes.mean_us),
        pct(base.main.gets.mean_us, on.main.gets.mean_us),
    );
    if let (Some(a), Some(b)) = (&base.read, &on.read) {
        s.push_str(&format!(
            "; reads: ops/s {}, get mean {}, after reads written {}, read {}",
            pct(Some(a.ops_per_sec), Some(b.ops_per_sec)),
            pct(a.gets.mean_us, b.gets.mean_us),
            pct(
                f(base.compaction_bytes_written_after_reads),
                f(on.compaction_bytes_written_after_reads)
            ),
            pct(
                f(base.compaction_bytes_read_after_reads),
                f(on.compaction_bytes_read_after_reads)
            ),
        ));
    }
    s
}

/// Shares (percent) of WAL, flush, get and compaction bytes in `io`; `None` without
/// a get figure or without I/O.
pub fn io_shares(io: &IoBytes) -> Option<[f64; 4]> {
    let get = io.get?;
    let total = (io.wal + io.flush + get + io.compaction) as f64;
    (total > 0.0).then(|| [io.wal, io.flush, get, io.compaction].map(|b| 100.0 * b as f64 / total))
}

/// The I/O of the motivation's get proportions: D1 (0% gets), D2 (20%), D3 (80%) and
/// D4 (100%, the read phase of the D1 run), from `rows` of one baseline.
pub fn io_points<'a>(rows: &[&'a Row]) -> Vec<(&'static str, &'a IoBytes)> {
    let main = |d: &str| rows.iter().find(|r| r.dataset == d).map(|r| &r.main.io);
    let d4 = rows
        .iter()
        .find(|r| r.dataset == "D1")
        .and_then(|r| r.read.as_ref())
        .map(|p| &p.io);
    [
        ("0% gets (D1)", main("D1")),
        ("20% gets (D2)", main("D2")),
        ("80% gets (D3)", main("D3")),
        ("100% gets (D4)", d4),
    ]
    .into_iter()
    .filter_map(|(name, io)| Some((name, io?)))
    .collect()
}

/// Fig. 2 and Fig. 3 from the baseline rows: W-Amp by data volume, I/O shares by get
/// proportion.
pub fn print_motivation(baseline: &[&Row]) {
    println!("== motivation (Fig. 2): write amplification by data volume, baseline");
    let mut by_volume: Vec<&&Row> = baseline
        .iter()
        .filter(|r| r.write_ratio >= 1.0 && r.device.is_none())
        .collect();
    by_volume.sort_by(|a, b| {
        (a.config.as_str(), a.volume_gb_equivalent)
            .partial_cmp(&(b.config.as_str(), b.volume_gb_equivalent))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    by_volume.dedup_by(|a, b| a.config == b.config && a.operations == b.operations);
    for r in by_volume {
        println!(
            "{:<20} {:>5.2} GB-equiv. ({:>9} ops): user {:>8.1} MiB, table writes {:>9.1} MiB, W-Amp {:.2}",
            r.config,
            r.volume_gb_equivalent,
            r.operations,
            mib(r.stats.counters.iter().find(|(k, _)| k == "user_bytes_written").map_or(0, |c| c.1)),
            mib(r.flush_bytes_written + r.compaction_bytes_written),
            r.write_amplification
        );
    }
    println!("== motivation (Fig. 3): share of disk I/O by kind, Strata baseline");
    println!(
        "{:<16} {:>7} {:>7} {:>7} {:>11}",
        "gets", "WAL", "flush", "get", "compaction"
    );
    let strata: Vec<&Row> = baseline
        .iter()
        .copied()
        .filter(|r| r.engine == "strata" && r.device.is_none())
        .collect();
    for (name, io) in io_points(&strata) {
        if let Some([w, f, g, c]) = io_shares(io) {
            println!("{name:<16} {w:>6.2}% {f:>6.2}% {g:>6.2}% {c:>10.2}%");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_sum_to_one_hundred() {
        let io = IoBytes {
            wal: 10,
            flush: 20,
            compaction: 60,
            get: Some(10),
        };
        let s = io_shares(&io).expect("shares");
        assert!((s.iter().sum::<f64>() - 100.0).abs() < 1e-9);
        assert_eq!(s[3], 60.0);
        assert!(io_shares(&IoBytes::default()).is_none());
        assert_eq!(pct(Some(200.0), Some(100.0)), "-50.00%");
        assert_eq!(pct(Some(0.0), Some(1.0)), "-");
    }
}
