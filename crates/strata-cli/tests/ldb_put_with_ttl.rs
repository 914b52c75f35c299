//! Protects: `strata ldb put --ttl=SECONDS` in a database created with
//! `--expiring_values` (an expired value is gone from `get`, `scan` and `dump`; a
//! plain put stays; later commands without the flag keep the recorded layout), and
//! the clear refusal of `--ttl` in a database without it.

mod common;

use common::{db_flag, ok, strata};

#[test]
fn put_with_ttl_hides_expired_values_and_plain_databases_refuse_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = db_flag(&tmp.path().join("db"));
    ok(
        &["ldb", &db, "--expiring_values=true", "put", "plain", "p"],
        None,
    );
    ok(&["ldb", &db, "put", "--ttl=0", "gone", "g"], None);
    ok(&["ldb", &db, "put", "--ttl=3600", "live", "l"], None);
    assert!(!strata(&["ldb", &db, "get", "gone"], None).status.success());
    assert_eq!(ok(&["ldb", &db, "get", "live"], None), "l\n");
    assert_eq!(ok(&["ldb", &db, "get", "plain"], None), "p\n");
    assert_eq!(ok(&["ldb", &db, "dump"], None), "live ==> l\nplain ==> p\n");
    ok(&["ldb", &db, "compact"], None);
    assert_eq!(ok(&["ldb", &db, "scan"], None), "live : l\nplain : p\n");

    let plain = db_flag(&tmp.path().join("plain"));
    ok(&["ldb", &plain, "put", "k", "v"], None);
    let refused = strata(&["ldb", &plain, "put", "--ttl=5", "k", "v"], None);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("expiring_values"), "{err}");
    assert_eq!(ok(&["ldb", &plain, "get", "k"], None), "v\n");
}
