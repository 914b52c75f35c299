//! Protects: `strata experiment query-compaction` end to end at a tiny scale: one
//! interleaved run with the option off and on over the same streams. Every JSON line
//! carries the figures the experiment reports; the insert, query and write-back parts
//! add up to at most the total (the rest is the gets' reads and opening tables); the
//! run without
//! the option writes nothing back, the run with it writes back and splits boundary
//! files; and both return the same entries.

mod common;

use common::experiment;

#[test]
fn tiny_interleaved_run_reports_every_figure_and_writes_back() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (stdout, rows) = experiment(
        tmp.path(),
        "query-compaction",
        &[
            "--scale=0.05",
            "--workloads=interleaved5",
            // Updates: older versions for the obsolete rule to see.
            "--keys=updates",
            "--fractions=0.25",
            "--queries=20",
            "--configs=off,on-l1",
            "--gets=200",
        ],
    );
    assert!(stdout.contains("crossover"), "{stdout}");
    assert_eq!(rows.len(), 2, "{rows:?}");
    let n = |r: &serde_json::Value, k: &str| {
        r[k].as_u64()
            .unwrap_or_else(|| panic!("{k} missing from {r}"))
    };
    for r in &rows {
        let parts = n(r, "insert_io_bytes") + n(r, "query_io_bytes") + n(r, "write_back_io_bytes");
        assert!(parts <= n(r, "total_io_bytes"), "{r}");
        assert!(n(r, "live_table_bytes") > 0, "{r}");
        assert!(n(r, "levels") >= 3, "a tree of several levels: {r}");
        // One total after the first inserts, then one per query.
        let series = r["total_io_after_query"].as_array().expect("series");
        assert_eq!(series.len(), 21, "{r}");
        assert!(r["get_table_bytes_per_get"].as_f64().is_some(), "{r}");
    }
    let (off, on) = (&rows[0], &rows[1]);
    assert_eq!(off["config"], "off");
    assert_eq!(n(off, "query_compactions"), 0);
    assert_eq!(n(off, "write_back_io_bytes"), 0);
    assert!(n(on, "query_compactions") > 0, "{on}");
    assert!(n(on, "query_compaction_files_split") > 0, "{on}");
    assert!(n(on, "write_back_io_bytes") > 0, "{on}");
    assert_eq!(n(off, "entries_returned"), n(on, "entries_returned"));
}
