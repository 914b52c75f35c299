//! Protects: `strata ldb verify` (every block of every live table checked, the count
//! printed; a flipped byte reported on one line naming the file and offset) and
//! `strata sst-dump` (every property, `--scan` entries, `--hex`, one-line corruption
//! errors), on a database built by the real engine.

mod common;

use common::{db_flag, fails_with, ok};
use std::path::{Path, PathBuf};

/// A database of 500 keys in small blocks, compacted into tables, and its table files.
fn build(dir: &Path) -> Vec<PathBuf> {
    let db = db_flag(dir);
    let input: String = (0..500)
        .map(|i| format!("key{i:04} ==> value-{i}\n"))
        .collect();
    ok(&["ldb", &db, "--block_size=256", "load"], Some(&input));
    ok(&["ldb", &db, "delete", "key0007"], None);
    ok(&["ldb", &db, "--block_size=256", "compact"], None);
    let mut tables: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .collect();
    tables.sort();
    assert!(!tables.is_empty(), "no tables in {}", dir.display());
    tables
}

fn one_error_line(args: &[&str]) -> String {
    fails_with(args, None)
}

fn flip(path: &Path, offset: usize) {
    let mut bytes = std::fs::read(path).expect("read");
    bytes[offset] ^= 0x40;
    std::fs::write(path, bytes).expect("write");
}

#[test]
fn ldb_verify_counts_blocks_and_names_a_bad_one() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");
    let tables = build(&dir);
    let db = db_flag(&dir);
    let out = ok(&["ldb", &db, "verify"], None);
    let blocks: u64 = out
        .trim()
        .strip_prefix("verify: ok blocks=")
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("unexpected output: {out}"));
    assert!(blocks > 10, "{out}");
    assert!(out.contains(&format!("tables={}", tables.len())), "{out}");

    flip(&tables[0], 10);
    let err = one_error_line(&["ldb", &db, "verify"]);
    let name = tables[0].file_name().expect("name").to_string_lossy();
    assert!(
        err.contains("corruption") && err.contains(name.as_ref()) && err.contains("offset=0"),
        "{err}"
    );
    // A missing database is an error, not a new empty one.
    let missing = db_flag(&tmp.path().join("nope"));
    one_error_line(&["ldb", &missing, "verify"]);
}

#[test]
fn sst_dump_prints_properties_and_entries() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let tables = build(&tmp.path().join("db"));
    let file = tables[0].to_string_lossy().into_owned();
    let props = ok(&["sst-dump", &file], None);
    for field in [
        "file_number: ",
        "file_size: ",
        "format_version: ",
        "compression: None",
        "num_entries: ",
        "num_deletions: ",
        "num_data_blocks: ",
        "raw_key_size: ",
        "raw_value_size: ",
        "data_size: ",
        "index_size: ",
        "filter_size: ",
        "smallest_key: 'key0000' seq=",
        "largest_key: 'key",
        "smallest_seqno: ",
        "largest_seqno: ",
        "column_group: ",
        "blocks_verified: ",
    ] {
        assert!(props.contains(field), "missing {field:?} in\n{props}");
    }
    assert!(!props.contains("=> "), "entries without --scan:\n{props}");

    let scan = ok(&["sst-dump", &file, "--scan"], None);
    let entries: Vec<&str> = scan.lines().filter(|l| l.contains(" => ")).collect();
    let num_entries: usize = props
        .lines()
        .find_map(|l| l.strip_prefix("num_entries: "))
        .and_then(|n| n.parse().ok())
        .expect("num_entries");
    assert_eq!(entries.len(), num_entries);
    assert!(
        entries[0].starts_with("'key0000' seq=") && entries[0].ends_with("kind=Put => 'value-0'"),
        "{}",
        entries[0]
    );
    let hex = ok(&["sst-dump", &file, "--scan", "--hex"], None);
    assert!(
        hex.contains("'0x6B657930303030' seq=") && hex.contains("=> '0x76616C75652D30'"),
        "{hex}"
    );

    flip(&tables[0], 10);
    let err = one_error_line(&["sst-dump", &file, "--scan"]);
    assert!(err.contains("corruption") && err.contains(&file), "{err}");
    let err = one_error_line(&["sst-dump", &tmp.path().join("none.sst").to_string_lossy()]);
    assert!(err.contains("none.sst"), "{err}");
}
