use super::*;

fn hw(columns: usize) -> Hw {
    Hw {
        columns,
        levels: 7,
        size_ratio: 2.0,
        rows: 400e6,
        inserts: 20e6,
        block_bytes: 4096.0,
    }
}

#[test]
fn the_normal_cdf_matches_its_table() {
    for (z, want) in [
        (0.0, 0.5),
        (1.0, 0.841_344_7),
        (-1.96, 0.024_997_9),
        (3.0, 0.998_650_1),
    ] {
        assert!((phi(z) - want).abs() < 1e-6, "Φ({z}) = {}", phi(z));
    }
}

/// The synthetic HW keeps Table 3's shape: point reads of recent keys high in the
/// tree (Q2a above Q2b), scans everywhere growing by T per level, and one update
/// class per column at every level.
#[test]
fn the_synthetic_workload_keeps_table_3s_shape() {
    let w = hw(30).workload();
    let points = |level: usize, from: u32| -> f64 {
        w.ops
            .iter()
            .filter(|o| o.level == level && o.kind == "point" && o.columns.first() == Some(&from))
            .map(|o| o.count)
            .sum()
    };
    let q2a: Vec<f64> = (1..=7).map(|l| points(l, 0)).collect();
    let q2b: Vec<f64> = (1..=7).map(|l| points(l, 15)).collect();
    let peak = |v: &[f64]| {
        v.iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|m| m.0 + 1)
    };
    assert!(peak(&q2a) < peak(&q2b), "Q2a {q2a:?} Q2b {q2b:?}");
    // 500,000 each, less what the memtables and L0 serve.
    assert!(q2b.iter().sum::<f64>() > 499_000.0);
    let scans: Vec<f64> = (1..=7)
        .filter_map(|l| {
            w.ops
                .iter()
                .find(|o| o.level == l && o.kind == "scan" && o.columns == vec![27, 28, 29])
                .and_then(|o| o.entries)
        })
        .collect();
    assert_eq!(scans.len(), 7);
    for pair in scans.windows(2) {
        assert!((pair[1] / pair[0] - 2.0).abs() < 1e-9, "{scans:?}");
    }
    let q4 = w
        .ops
        .iter()
        .find(|o| o.kind == "scan" && o.columns.len() == 10);
    assert_eq!(q4.map(|o| o.columns[0]), Some(20), "Q4 reads a21..a30");
    let updates = w.ops.iter().filter(|o| o.kind == "update").count();
    assert_eq!(updates, 30 * 7);
}

/// A dumped workload read back as a file gives the same advice, and a file with a
/// bad operation is refused with what is wrong.
#[test]
fn a_dumped_workload_advises_alike_and_bad_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.json");
    let dumped = advise(Source::Hw(hw(30)), true, false).unwrap();
    std::fs::write(&path, &dumped[0]).unwrap();
    let layout = |lines: Vec<String>| lines[0].clone();
    let from_file = layout(advise(Source::File(&path), false, false).unwrap());
    assert_eq!(
        layout(advise(Source::Hw(hw(30)), false, false).unwrap()),
        from_file
    );
    assert!(from_file.starts_with("layout: row;"), "{from_file}");
    let json = advise(Source::File(&path), false, true).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json[0]).unwrap();
    assert_eq!(v["levels"], 7);
    assert_eq!(v["level_costs"].as_array().map(Vec::len), Some(8));
    let mut bad: WorkloadFile = serde_json::from_str(&dumped[0]).unwrap();
    bad.ops[0].kind = "scan".into();
    std::fs::write(&path, serde_json::to_string(&bad).unwrap()).unwrap();
    let e = advise(Source::File(&path), false, false).unwrap_err();
    assert!(e.to_string().contains("scan with entries"), "{e}");
    bad.ops[0].kind = "point".into();
    bad.ops[0].level = 9;
    std::fs::write(&path, serde_json::to_string(&bad).unwrap()).unwrap();
    let e = advise(Source::File(&path), false, false).unwrap_err();
    assert!(e.to_string().contains("level 9"), "{e}");
}
