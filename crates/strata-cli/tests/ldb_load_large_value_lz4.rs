//! Regression (issue 9, item 1) as a new user reproduced it: `strata ldb
//! --compression_type=lz4 load` of one `key ==> value` line with a 300 MiB value was
//! acknowledged, and after `compact` the value could not be read (`Corruption … raw
//! length too large`). Now a value over `strata::MAX_VALUE_LEN` is refused by `load`
//! with one error line, and a value at the limit loads, compacts and reads back.

mod common;

use common::{db_flag, ok, strata};

#[test]
fn load_refuses_a_value_over_the_limit_and_keeps_one_at_the_limit() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = db_flag(&tmp.path().join("db"));
    let lz4 = "--compression_type=lz4";

    let over = format!("big ==> {}\n", "x".repeat(strata::MAX_VALUE_LEN + 1));
    let out = strata(&["ldb", &db, lz4, "load"], Some(&over));
    assert!(!out.status.success(), "an over-limit value was loaded");
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!(
        "value too large: len=`{}` max=`{}`",
        strata::MAX_VALUE_LEN + 1,
        strata::MAX_VALUE_LEN
    );
    assert!(err.contains(&want), "{err}");
    assert!(!strata(&["ldb", &db, "get", "big"], None).status.success());

    let value = "y".repeat(strata::MAX_VALUE_LEN);
    ok(
        &["ldb", &db, lz4, "load"],
        Some(&format!("big ==> {value}\n")),
    );
    ok(&["ldb", &db, lz4, "compact"], None);
    let got = ok(&["ldb", &db, lz4, "get", "big"], None);
    assert!(
        got.len() == value.len() + 1 && got.starts_with(&value),
        "{} bytes",
        got.len()
    );
    ok(&["ldb", &db, "verify"], None);
}
