//! Protects: `strata experiment laser` end to end at a tiny scale: every design and
//! projection gives a JSON line, a point read of every column reads one data block
//! per group (of a column per group: 30 for `cg_size=1`, 1 for rows), within a few
//! percent of the model; compaction wrote blocks, more for narrower groups; and the
//! three charts are drawn.

mod common;

use common::experiment;

#[test]
fn laser_fig7_counts_blocks_beside_the_model() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (out, rows) = experiment(
        tmp.path(),
        "laser",
        &[
            "--rows=4000",
            "--cg_sizes=1,30",
            "--projections=1,30",
            "--gets=100",
            "--scans=3",
        ],
    );
    assert_eq!(rows.len(), 2 * (1 + 2 * 2), "{out}");
    let find = |cg: u64, measure: &str, k: u64| {
        rows.iter()
            .find(|r| r["cg_size"] == cg && r["measure"] == measure && r["k"] == k)
            .unwrap_or_else(|| panic!("no {measure} row for cg={cg} k={k}: {out}"))
    };
    for (cg, k, blocks) in [(1, 30, 30.0), (1, 1, 1.0), (30, 30, 1.0), (30, 1, 1.0)] {
        let r = find(cg, "point", k);
        let (measured, model) = (r["measured_blocks"].as_f64(), r["model_blocks"].as_f64());
        let (measured, model) = (measured.unwrap(), model.unwrap());
        assert!(
            (model - blocks).abs() < 1e-9,
            "cg={cg} k={k}: model {model}"
        );
        assert!(
            measured >= blocks && measured <= blocks * 1.1,
            "cg={cg} k={k}: measured {measured}"
        );
    }
    let written = |cg| find(cg, "write", 0)["measured_blocks"].as_f64().unwrap();
    assert!(written(30) > 0.0 && written(1) > written(30), "{out}");
    for measure in ["point", "scan", "write"] {
        let chart = tmp
            .path()
            .join(format!("charts/laser-fig7-narrow-{measure}.svg"));
        assert!(chart.exists(), "{}", chart.display());
    }
}
