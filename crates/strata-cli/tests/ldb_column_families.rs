//! Protects: `strata ldb` over column families on the real engine: `create_cf`,
//! `list_cfs` (closed database), `--cf=NAME` for put/get/delete/merge/delete_range/
//! scan/dump/load/compact, families kept apart, `drop_cf`, and one-line errors for a
//! missing family, a family that exists, dropping `default` and listing no database.

mod common;

use common::{db_flag, fails_with, ok, strata};

/// Stderr of a run that must fail with one `error: ` line.
fn fails(args: &[&str]) -> String {
    fails_with(args, None)
}

#[test]
fn families_are_created_listed_written_apart_and_dropped() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = db_flag(&tmp.path().join("db"));
    let err = fails(&["ldb", &db, "list_cfs"]);
    assert!(err.contains("no database"), "{err}");

    ok(&["ldb", &db, "put", "k", "in-default"], None);
    assert_eq!(ok(&["ldb", &db, "list_cfs"], None), "default\n");
    ok(&["ldb", &db, "create_cf", "users"], None);
    ok(&["ldb", &db, "create_cf", "counters"], None);
    assert_eq!(
        ok(&["ldb", &db, "list_cfs"], None),
        "default\nusers\ncounters\n"
    );
    let err = fails(&["ldb", &db, "create_cf", "users"]);
    assert!(err.contains("`users` exists"), "{err}");

    // The same key in two families holds two values.
    ok(&["ldb", &db, "--cf=users", "put", "k", "in-users"], None);
    ok(&["ldb", &db, "--cf=users", "put", "a", "1"], None);
    ok(&["ldb", &db, "--cf=users", "put", "b", "2"], None);
    ok(&["ldb", &db, "--cf=users", "put", "c", "3"], None);
    assert_eq!(ok(&["ldb", &db, "get", "k"], None), "in-default\n");
    assert_eq!(
        ok(&["ldb", &db, "--cf=users", "get", "k"], None),
        "in-users\n"
    );
    assert!(!strata(&["ldb", &db, "get", "a"], None).status.success());
    assert_eq!(
        ok(&["ldb", &db, "--cf=users", "scan", "--from=b"], None),
        "b : 2\nc : 3\nk : in-users\n"
    );
    ok(&["ldb", &db, "--cf=users", "delete", "c"], None);
    ok(&["ldb", &db, "--cf=users", "delete_range", "a", "b"], None);
    ok(&["ldb", &db, "--cf=users", "compact"], None);
    assert_eq!(
        ok(&["ldb", &db, "--cf=users", "dump"], None),
        "b ==> 2\nk ==> in-users\n"
    );
    assert_eq!(ok(&["ldb", &db, "dump"], None), "k ==> in-default\n");

    // Counters merge in their family only; load writes into the named family.
    for _ in 0..2 {
        ok(
            &[
                "ldb",
                &db,
                "--hex",
                "--cf=counters",
                "merge",
                "0x68",
                "0x0300000000000000",
            ],
            None,
        );
    }
    assert_eq!(
        ok(&["ldb", &db, "--hex", "--cf=counters", "get", "0x68"], None),
        "0x0600000000000000\n"
    );
    ok(
        &["ldb", &db, "--cf=counters", "load"],
        Some("x ==> 1\ny ==> 2\n"),
    );
    assert_eq!(
        ok(&["ldb", &db, "--cf=counters", "scan", "--from=x"], None),
        "x : 1\ny : 2\n"
    );
    assert!(ok(&["ldb", &db, "verify"], None).starts_with("verify: ok"));

    // A missing family is named, with the ones the database has.
    let err = fails(&["ldb", &db, "--cf=nope", "get", "k"]);
    assert!(
        err.contains("no column family `nope`") && err.contains("users"),
        "{err}"
    );
    let err = fails(&["ldb", &db, "--cf=nope", "put", "k", "v"]);
    assert!(err.contains("`nope`"), "{err}");
    let err = fails(&["ldb", &db, "drop_cf", "default"]);
    assert!(err.contains("cannot be dropped"), "{err}");
    let err = fails(&["ldb", &db, "drop_cf", "nope"]);
    assert!(err.contains("`nope`"), "{err}");

    ok(&["ldb", &db, "drop_cf", "users"], None);
    assert_eq!(ok(&["ldb", &db, "list_cfs"], None), "default\ncounters\n");
    let err = fails(&["ldb", &db, "--cf=users", "get", "k"]);
    assert!(err.contains("no column family `users`"), "{err}");
    assert_eq!(ok(&["ldb", &db, "get", "k"], None), "in-default\n");
    assert_eq!(
        ok(&["ldb", &db, "--cf=counters", "scan", "--from=x"], None),
        "x : 1\ny : 2\n"
    );
}

/// A family another program created with its own merge operator (here the built-in
/// `Append`, while `ldb`'s flags carry `U64Add`) is written, read and dropped through
/// `ldb`: the flags configure every family but never replace a family's recorded
/// operator (before, listing it with the flags' operator made every read-write `ldb`
/// command refuse the database).
#[test]
fn a_family_with_its_own_operator_is_written_and_dropped_through_ldb() {
    use std::sync::Arc;
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("db");
    let db = strata::Db::open(&path, strata::Options::default()).expect("open");
    let append = strata::CfOptions::default()
        .with_merge_operator(Some(Arc::new(strata::merge::Append::new(b","))));
    let tags = db.create_cf("tags", append).expect("create_cf");
    let wo = strata::WriteOptions::default();
    db.merge_cf(&wo, &tags, b"k", b"a").expect("merge");
    drop(tags);
    db.close().expect("close");
    let db_arg = db_flag(&path);
    ok(&["ldb", &db_arg, "--cf=tags", "put", "p", "v"], None);
    assert_eq!(ok(&["ldb", &db_arg, "--cf=tags", "get", "p"], None), "v\n");
    assert_eq!(ok(&["ldb", &db_arg, "--cf=tags", "get", "k"], None), "a\n");
    ok(&["ldb", &db_arg, "drop_cf", "tags"], None);
    assert_eq!(ok(&["ldb", &db_arg, "list_cfs"], None), "default\n");
}
