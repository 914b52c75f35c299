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

/// `merge` adds 8-byte counters (`strata.u64_add`) across a compaction, from decimal
/// numbers or raw `--hex` operands; `delete_range` deletes a range; a malformed operand
/// is refused before anything is written, in one line.
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
    // Decimal operands, a negative one subtracting.
    ok(&["ldb", &db, "merge", "counter", "5"], None);
    ok(&["ldb", &db, "merge", "counter", "-2"], None);
    assert_eq!(
        ok(&["ldb", &db, "--hex", "get", "636F756E746572"], None),
        "0x0300000000000000\n"
    );
    // Malformed operands: not a number, and raw bytes of the wrong width. Each is
    // refused in one line and writes nothing (before the fix, `merge counter 5` wrote
    // the one-byte operand `5` and every later read of the key failed).
    for args in [
        &["merge", "bad", "x"][..],
        &["merge", "bad", "5x"],
        &["--hex", "merge", "626164", "0x05"],
    ] {
        let out = strata(&[&["ldb", db.as_str()][..], args].concat(), None);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("merge operand") && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
    let out = strata(&["ldb", &db, "get", "bad"], None);
    assert!(String::from_utf8_lossy(&out.stderr).contains("key not found"));
    assert_eq!(
        ok(&["ldb", &db, "--hex", "get", "636F756E746572"], None),
        "0x0300000000000000\n"
    );
}

/// The harness's operator under its own name, but accepting every operand: what an
/// older build that did not check operands wrote.
struct UncheckedU64Add;

impl strata::MergeOperator for UncheckedU64Add {
    fn name(&self) -> &str {
        "strata.u64_add"
    }

    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, strata::merge::MergeError> {
        strata::merge::U64Add.full_merge(key, existing, operands)
    }
}

/// A key whose operands the operator refuses (written by a build that did not check
/// them) does not stop `dump` or `scan`: the other keys are printed, the key is named
/// with its error on stderr, and the exit status is non-zero.
#[test]
fn dump_and_scan_go_on_past_an_unreadable_key() {
    use std::sync::Arc;
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");
    let old = strata::Db::open(
        &dir,
        strata::Options::default().with_merge_operator(Some(Arc::new(UncheckedU64Add))),
    )
    .expect("open");
    let wo = strata::WriteOptions::default();
    old.put(&wo, b"a", b"1").expect("put");
    old.merge(&wo, b"b1", b"5").expect("an unchecked operand");
    old.merge(&wo, b"b2", b"6").expect("an unchecked operand");
    old.put(&wo, b"c", b"3").expect("put");
    old.close().expect("close");

    let db = db_flag(&dir);
    let out = strata(&["ldb", &db, "dump"], None);
    assert!(!out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "a ==> 1\nc ==> 3\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("key b1 unreadable")
            && err.contains("key b2 unreadable")
            && err.contains("merge failed")
            && err.contains("2 key(s) could not be read"),
        "{err}"
    );
    // `--max_keys` counts the unreadable keys too.
    let out = strata(&["ldb", &db, "scan", "--max_keys=2"], None);
    assert!(!out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "a : 1\n");
    let out = strata(&["ldb", &db, "scan", "--from=c"], None);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "c : 3\n");
}

#[test]
fn reading_a_missing_database_fails_without_creating_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("nothing");
    let out = strata(&["ldb", &db_flag(&dir), "dump"], None);
    assert!(!out.status.success());
    assert!(!dir.join("CURRENT").exists());
}

/// The reading commands open read-only: they work while another handle holds the
/// database for writing (before, they failed with "database is locked"), see what it
/// wrote (flushed or still in its WAL), and leave it untouched; a write command is
/// still refused by the lock.
#[test]
fn reading_commands_work_beside_a_live_writer() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");
    let writer = strata::Db::open(
        &dir,
        strata::Options::default()
            .with_merge_operator(Some(std::sync::Arc::new(strata::merge::U64Add))),
    )
    .expect("open");
    let wo = strata::WriteOptions::default();
    writer.put(&wo, b"a", b"1").expect("put");
    writer.flush().expect("flush");
    writer.put(&wo, b"b", b"2").expect("put, in the WAL only");
    let db = db_flag(&dir);
    assert_eq!(ok(&["ldb", &db, "get", "b"], None), "2\n");
    assert_eq!(ok(&["ldb", &db, "dump"], None), "a ==> 1\nb ==> 2\n");
    assert_eq!(ok(&["ldb", &db, "scan", "--from=b"], None), "b : 2\n");
    assert!(ok(&["ldb", &db, "verify"], None).starts_with("verify: ok"));
    let out = strata(&["ldb", &db, "put", "c", "3"], None);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("locked"));
    writer.put(&wo, b"c", b"3").expect("the writer goes on");
    writer.close().expect("close");
    assert_eq!(ok(&["ldb", &db, "get", "c"], None), "3\n");
}

/// `--secondary_path=DIR` (RocksDB's flag): `get`, `scan` and `dump` read beside a live
/// writer through a secondary instance, whose files (its lock, its links) go to `DIR`
/// and nowhere in the database; a write command with it is refused.
#[test]
fn reading_commands_open_a_secondary_with_secondary_path() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");
    let writer = strata::Db::open(
        &dir,
        strata::Options::default()
            .with_merge_operator(Some(std::sync::Arc::new(strata::merge::U64Add))),
    )
    .expect("open");
    let wo = strata::WriteOptions::default();
    writer.put(&wo, b"a", b"1").expect("put");
    writer.flush().expect("flush");
    writer.put(&wo, b"b", b"2").expect("put, in the WAL only");
    let listing = |d: &std::path::Path| {
        let mut names: Vec<String> = std::fs::read_dir(d)
            .expect("list")
            .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
            .collect();
        names.sort();
        names
    };
    let before = listing(&dir);
    let db = db_flag(&dir);
    let sec = tmp.path().join("secondary");
    let sec_flag = format!("--secondary_path={}", sec.display());
    assert_eq!(
        ok(&["ldb", &db, &sec_flag, "get", "b"], None),
        "2
"
    );
    assert_eq!(
        ok(&["ldb", &db, &sec_flag, "dump"], None),
        "a ==> 1
b ==> 2
"
    );
    assert_eq!(
        ok(&["ldb", &db, &sec_flag, "scan", "--from=b"], None),
        "b : 2
"
    );
    // Nothing appeared in the database's directory (the live writer may meanwhile
    // have deleted the WAL its flush made obsolete).
    let after = listing(&dir);
    assert!(
        after.iter().all(|f| before.contains(f)),
        "the secondary wrote into the database's directory: {before:?} then {after:?}"
    );
    assert!(listing(&sec).contains(&"LOCK".to_string()));
    let out = strata(&["ldb", &db, &sec_flag, "put", "c", "3"], None);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("secondary_path"));
    writer.close().expect("close");
}

/// `ldb checkpoint --to=DIR` makes a copy that `ldb` reads like the source, with its
/// tables linked; a non-empty target is refused in one line.
#[test]
fn checkpoint_makes_an_openable_copy() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = db_flag(&tmp.path().join("db"));
    ok(&["ldb", &db, "put", "a", "1"], None);
    ok(&["ldb", &db, "compact"], None);
    ok(&["ldb", &db, "put", "b", "2"], None);
    let to = tmp.path().join("cp");
    let to_flag = format!("--to={}", to.display());
    let out = ok(&["ldb", &db, "checkpoint", &to_flag], None);
    assert!(
        out.starts_with("checkpoint: ")
            && !out.contains("tables_linked=0")
            && out.contains("tables_copied=0"),
        "{out}"
    );
    assert_eq!(
        ok(&["ldb", &db_flag(&to), "dump"], None),
        "a ==> 1\nb ==> 2\n"
    );
    let again = strata(&["ldb", &db, "checkpoint", &to_flag], None);
    assert!(!again.status.success());
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(
        err.contains("not empty") && err.lines().count() == 1,
        "{err}"
    );
}

/// `ldb property NAME` prints a property by RocksDB's name; an unknown name is one
/// line listing the known ones.
#[test]
fn property_prints_a_named_property() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = db_flag(&tmp.path().join("db"));
    for k in ["a", "b", "c"] {
        ok(&["ldb", &db, "put", k, "v"], None);
    }
    assert_eq!(
        ok(&["ldb", &db, "property", "rocksdb.estimate-num-keys"], None),
        "3\n"
    );
    let out = strata(&["ldb", &db, "property", "rocksdb.nope"], None);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("estimate-num-keys") && err.lines().count() == 1,
        "{err}"
    );
}
