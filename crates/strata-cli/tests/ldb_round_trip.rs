//! Protects: `strata ldb` put/get/delete/merge/scan/dump/load/compact on the real engine,
//! including `--hex` and the one-line error for a missing key.

mod common;

use common::{db_flag, ok, strata};

#[test]
fn put_get_delete_scan_dump_load() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = db_flag(&tmp.path().join("db"));
    ok(&["ldb", &db, "put", "apple", "red"], None);
    ok(&["ldb", &db, "put", "banana", "yellow"], None);
    ok(
        &["ldb", &db, "--hex", "put", "0x636865727279", "0x00FF"],
        None,
    );
    assert_eq!(ok(&["ldb", &db, "get", "apple"], None), "red\n");
    assert_eq!(
        ok(&["ldb", &db, "--hex", "get", "0x6170706C65"], None),
        "0x726564\n"
    );
    assert_eq!(
        ok(&["ldb", &db, "scan", "--from=b", "--to=c"], None),
        "banana : yellow\n"
    );
    ok(&["ldb", &db, "delete", "banana"], None);
    let missing = strata(&["ldb", &db, "get", "banana"], None);
    assert!(!missing.status.success());
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        err.starts_with("error: ") && err.lines().count() == 1,
        "{err}"
    );

    let dump = ok(&["ldb", &db, "--hex", "dump"], None);
    assert_eq!(
        dump,
        "0x6170706C65 ==> 0x726564\n0x636865727279 ==> 0x00FF\n"
    );

    // dump | load into a second database reproduces it.
    let db2 = db_flag(&tmp.path().join("db2"));
    ok(&["ldb", &db2, "--hex", "load"], Some(&dump));
    assert_eq!(ok(&["ldb", &db2, "--hex", "dump"], None), dump);
    ok(&["ldb", &db2, "compact"], None);
    assert_eq!(ok(&["ldb", &db2, "--hex", "dump"], None), dump);
}

/// `merge` adds 8-byte counters (`strata.u64_add`) across a compaction; `delete_range`
/// deletes a range; a bad operand is refused when read, in one line.
#[test]
fn merge_adds_counters_and_delete_range_drops_a_range() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = db_flag(&tmp.path().join("db"));
    ok(
        &["ldb", &db, "--hex", "merge", "6b", "0x0500000000000000"],
        None,
    );
    ok(&["ldb", &db, "compact"], None);
    ok(
        &["ldb", &db, "--hex", "merge", "6b", "0x0700000000000000"],
        None,
    );
    assert_eq!(
        ok(&["ldb", &db, "--hex", "get", "6b"], None),
        "0x0C00000000000000\n"
    );
    // delete_range removes [from, to) and keeps `to`.
    for k in ["r1", "r2", "r3"] {
        ok(&["ldb", &db, "put", k, "v"], None);
    }
    ok(&["ldb", &db, "delete_range", "r1", "r3"], None);
    assert_eq!(ok(&["ldb", &db, "scan", "--from=r"], None), "r3 : v\n");
    ok(&["ldb", &db, "merge", "bad", "x"], None);
    let out = strata(&["ldb", &db, "get", "bad"], None);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("merge failed") && err.lines().count() == 1,
        "{err}"
    );
}

#[test]
fn reading_a_missing_database_fails_without_creating_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("nothing");
    let out = strata(&["ldb", &db_flag(&dir), "dump"], None);
    assert!(!out.status.success());
    assert!(!dir.join("CURRENT").exists());
}
