//! Issue 9 item 7: a read-only `strata ldb` command pointed at a path that holds no
//! database fails with one clear line and leaves nothing behind (it used to create the
//! directory and a `LOCK` file).

mod common;

use common::{db_flag, strata};

#[test]
fn read_commands_on_a_missing_database_create_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let missing = tmp.path().join("missing");
    let db = db_flag(&missing);
    for cmd in [
        vec!["ldb", &db, "get", "k"],
        vec!["ldb", &db, "scan"],
        vec!["ldb", &db, "dump"],
        vec!["ldb", &db, "verify"],
        vec!["ldb", &db, "manifest_dump"],
    ] {
        let out = strata(&cmd, None);
        assert!(!out.status.success(), "{cmd:?} succeeded");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("error: ") && err.contains("does not exist"),
            "{cmd:?}: {err}"
        );
        assert!(!missing.exists(), "{cmd:?} created {}", missing.display());
    }
}
