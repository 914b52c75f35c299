//! Protects: `strata device-bench` against a device model runs every line through the
//! engine's direct-I/O file system, writes one JSON line each with its target, and the
//! model is a floor it cannot beat (latency at depth 1 about the model's or more, IOPS
//! at depth 16 at most its cap); a bad `--device` is a one-line usage error.

mod common;

use common::{ok, strata};

#[test]
fn gp3_lines_have_targets_and_respect_the_model() {
    // Under the target directory, which is on a real disk (O_DIRECT) more often than /tmp.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let json = tmp.path().join("device.jsonl");
    let out = ok(
        &[
            "device-bench",
            &format!("--path={}", tmp.path().display()),
            "--device=gp3",
            "--size=4194304",
            "--duration=0.2",
            &format!("--json={}", json.display()),
        ],
        None,
    );
    assert_eq!(out.lines().count(), 2 + 6, "{out}");
    let rows: Vec<serde_json::Value> = std::fs::read_to_string(&json)
        .expect("json")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let names: Vec<&str> = rows.iter().filter_map(|r| r["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "seqwrite-1m",
            "randread-4k-qd1",
            "randread-4k-qd16",
            "randread-16k-qd1",
            "randread-16k-qd16",
            "seqread-1m"
        ]
    );
    let field = |name: &str, key: &str| {
        rows.iter()
            .find(|r| r["name"] == name)
            .and_then(|r| r[key].as_f64())
            .unwrap_or_else(|| panic!("{name}.{key} in {rows:?}"))
    };
    for r in &rows {
        assert_eq!(r["device"], "gp3");
        assert!(r["target"].as_f64().is_some() && r["deviation_pct"].as_f64().is_some());
    }
    // 1 ms + 4 KiB at 1000 MiB/s: no read is faster than the model, less the clock's
    // wake-up compensation (at most 100 µs early).
    assert_eq!(field("randread-4k-qd1", "target"), 1003.90625);
    assert!(field("randread-4k-qd1", "p50_us") >= 900.0, "{rows:?}");
    // 10,000 IOPS cap: sixteen threads cannot beat it (a few I/Os of slack at the start).
    assert!(field("randread-16k-qd16", "iops") <= 10_500.0, "{rows:?}");
    assert!(field("randread-16k-qd16", "model_delay_secs") > 0.0);
    assert!(!tmp.path().join("strata-device-bench.dat").exists());
}

#[test]
fn a_bad_device_is_a_one_line_usage_error() {
    let out = strata(&["device-bench", "--path=.", "--device=floppy"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown preset `floppy`"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
