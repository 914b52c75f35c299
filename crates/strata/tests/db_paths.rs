//! `Options::db_paths`: tables spread over several directories by level, found again
//! after close/reopen and after a crash, with a clear error for a missing path and
//! counters per path.
//!
//! What it protects: placement (each level's tables in the directory `ByLevel` gives
//! it, a file moved between paths rewritten rather than renamed across them), recovery
//! and orphan removal in every path, the open-time checks (a missing directory, a
//! table in a path the options no longer have), and `DbStats::paths`.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use strata::env::FaultFs;
use strata::{Db, ErrorKind, Options, ReadOptions, WriteOptions};

/// Table files directly in `dir`.
fn tables_in(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().ends_with(".sst"))
                .count()
        })
        .unwrap_or(0)
}

/// Writes 600 keys of 100-byte values (in 4 KiB memtables: many flushes and
/// compactions), returning what the database must hold.
fn fill(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut want = BTreeMap::new();
    for i in 0..3000u32 {
        let k = key(i * 7919 % 600);
        let v = format!("value-{i}-{}", "x".repeat(90)).into_bytes();
        db.put(&WriteOptions::default(), &k, &v).expect("put");
        want.insert(k, v);
    }
    want
}

fn check(db: &Db, want: &BTreeMap<Vec<u8>, Vec<u8>>) {
    for (k, v) in want {
        assert_eq!(
            db.get(&ReadOptions::default(), k).expect("get").as_ref(),
            Some(v)
        );
    }
    let all = db_scan(db, None, true, &None, &None, usize::MAX).expect("scan");
    assert_eq!(all.len(), want.len());
}

/// Closes `db` (so no job is between installing a version and deleting the files it
/// replaced), then checks that each path's directory holds exactly the tables of the
/// levels `ByLevel` gives it: L0 in `db-fast`, L1 in `db-mid`, L2 and deeper in
/// `db-slow`.
fn close_and_assert_levels_in_their_paths(db: Db, root: &Path) {
    let files: Vec<usize> = db.stats().levels.iter().map(|l| l.files).collect();
    db.close().expect("close");
    let deeper: usize = files.iter().skip(2).sum();
    assert_eq!(tables_in(&root.join("db-fast")), files[0], "L0 {files:?}");
    assert_eq!(tables_in(&root.join("db-mid")), files[1], "L1 {files:?}");
    assert_eq!(tables_in(&root.join("db-slow")), deeper, "L2+ {files:?}");
    assert!(deeper > 0, "the workload must reach L2: {files:?}");
    assert_eq!(
        tables_in(&root.join("db")),
        0,
        "no table in the database directory"
    );
}

#[test]
fn tables_spread_over_three_paths_survive_close_and_reopen() {
    let root = tempfile::tempdir().expect("tempdir");
    let opts = paths_under(root.path(), tiny_options());
    let db_dir = root.path().join("db");
    let db = Db::open(&db_dir, opts.clone()).expect("open");
    let want = fill(&db);
    db.flush().expect("flush");
    db.wait_for_compactions().expect("idle");
    check(&db, &want);

    // Every path wrote tables and read them back (compaction inputs at least); the
    // counters name their directories in path-id order.
    let stats = db.stats();
    assert_eq!(stats.paths.len(), 3);
    for (p, name) in stats.paths.iter().zip(["db-fast", "db-mid", "db-slow"]) {
        assert_eq!(p.path, root.path().join(name));
        assert!(p.writes > 0 && p.bytes_written > 0, "{name}: {p:?}");
        assert!(
            p.reads > 0 && p.read_latency.count() == p.reads,
            "{name}: {p:?}"
        );
    }
    let written: u64 = stats.paths.iter().map(|p| p.bytes_written).sum();
    assert_eq!(written, stats.table_bytes_written());
    close_and_assert_levels_in_their_paths(db, root.path());

    let db = Db::open(&db_dir, opts).expect("reopen");
    check(&db, &want);
    db.compact_range(None, None).expect("compact");
    check(&db, &want);
    close_and_assert_levels_in_their_paths(db, root.path());
}

#[test]
fn synced_writes_over_three_paths_survive_a_crash() {
    let fs = FaultFs::new();
    let opts = three_data_paths();
    let db = on(&fs).open("/db", opts.clone()).expect("open");
    let want = fill(&db);
    db.put(&WriteOptions::default().with_sync(true), b"last", b"synced")
        .expect("sync put");
    db.wait_for_compactions().expect("idle");
    // Every path received tables (L0 may be empty by now: compacted into L1).
    for p in db.stats().paths {
        assert!(p.bytes_written > 0, "{p:?}");
    }
    drop(db);
    fs.crash();
    let db = on(&fs).open("/db", opts).expect("reopen after crash");
    check_prefix(&db, &want);
    assert_eq!(
        db.get(&ReadOptions::default(), b"last").expect("get"),
        Some(b"synced".to_vec())
    );
}

/// Everything written before the synced write is there (the synced write made the WAL
/// durable up to it).
fn check_prefix(db: &Db, want: &BTreeMap<Vec<u8>, Vec<u8>>) {
    for (k, v) in want {
        assert_eq!(
            db.get(&ReadOptions::default(), k).expect("get").as_ref(),
            Some(v),
            "key {}",
            String::from_utf8_lossy(k)
        );
    }
}

#[test]
fn a_missing_data_path_is_invalid_argument_naming_it() {
    let root = tempfile::tempdir().expect("tempdir");
    let opts = paths_under(root.path(), tiny_options());
    let db_dir = root.path().join("db");
    // A new database creates its paths.
    let db = Db::open(&db_dir, opts.clone()).expect("create");
    fill(&db);
    db.close().expect("close");
    for name in ["db-fast", "db-mid", "db-slow"] {
        assert!(root.path().join(name).is_dir(), "{name} created");
    }
    // An existing one refuses a path that vanished, naming it, and creates nothing.
    let mid = root.path().join("db-mid");
    std::fs::rename(&mid, root.path().join("elsewhere")).expect("move away");
    let err = Db::open(&db_dir, opts.clone()).expect_err("missing path");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(err.to_string().contains("db_paths[1]"), "{err}");
    assert!(err.to_string().contains(&*mid.to_string_lossy()), "{err}");
    assert!(!mid.exists(), "open must not recreate a missing data path");
    // Moved back, the database opens whole.
    std::fs::rename(root.path().join("elsewhere"), &mid).expect("move back");
    Db::open(&db_dir, opts)
        .expect("reopen")
        .close()
        .expect("close");
}

#[test]
fn dropping_a_path_that_holds_tables_is_refused() {
    let root = tempfile::tempdir().expect("tempdir");
    let opts = paths_under(root.path(), tiny_options());
    let db_dir = root.path().join("db");
    let db = Db::open(&db_dir, opts.clone()).expect("create");
    fill(&db);
    db.wait_for_compactions().expect("idle");
    db.close().expect("close");
    let fewer = opts.clone().with_db_paths(opts.db_paths[..1].to_vec());
    let err = Db::open(&db_dir, fewer).expect_err("tables in path 2");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(err.to_string().contains("db_paths has 1 entries"), "{err}");
    // And a table removed from its path is corruption naming the file.
    let slow = root.path().join("db-slow");
    let victim = std::fs::read_dir(&slow)
        .expect("list")
        .filter_map(|e| e.ok())
        .find(|e| e.file_name().to_string_lossy().ends_with(".sst"))
        .expect("a table in db-slow")
        .path();
    std::fs::remove_file(&victim).expect("remove");
    let err = Db::open(&db_dir, opts).expect_err("missing table");
    assert_eq!(err.kind(), ErrorKind::Corruption, "{err}");
    assert!(
        err.to_string().contains(&*victim.to_string_lossy()),
        "{err}"
    );
}

/// Tables are placed by their data path's index: swapping two entries that hold
/// tables is `InvalidArgument` naming `db_paths` (both orders shown), not a missing
/// table; the right order opens, and an appended entry is fine.
#[test]
fn reordering_paths_that_hold_tables_is_refused_naming_db_paths() {
    let root = tempfile::tempdir().expect("tempdir");
    let opts = paths_under(root.path(), tiny_options());
    let db_dir = root.path().join("db");
    let db = Db::open(&db_dir, opts.clone()).expect("create");
    let want = fill(&db);
    db.wait_for_compactions().expect("idle");
    db.close().expect("close");
    let mut swapped = opts.db_paths.clone();
    swapped.swap(1, 2);
    let err = Db::open(&db_dir, opts.clone().with_db_paths(swapped)).expect_err("swapped");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("db_paths differ from the last open's"),
        "{msg}"
    );
    assert!(
        msg.contains("db-slow\", \"") || msg.contains("db-slow\"]"),
        "{msg}"
    );
    let mut more = opts.db_paths.clone();
    // An existing database refuses a missing path (it cannot tell a new one from a
    // lost one), so the new path is made first.
    std::fs::create_dir(root.path().join("db-extra")).expect("mkdir");
    more.push(strata::DbPath::new(root.path().join("db-extra"), 0));
    let db = Db::open(&db_dir, opts.with_db_paths(more)).expect("appended path");
    check(&db, &want);
    db.close().expect("close");
}

#[test]
fn bad_db_paths_are_rejected_by_validate() {
    let dup = Options::default().with_db_paths(vec![
        strata::DbPath::new("/a", 1),
        strata::DbPath::new("/a", 2),
    ]);
    let err = Db::open("/nonexistent-strata-db", dup).expect_err("duplicate");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("repeats db_paths[0]"), "{err}");
    let blank = Options::default().with_db_paths(vec![strata::DbPath::new(" /a", 1)]);
    let err = Db::open("/nonexistent-strata-db", blank).expect_err("blank");
    assert!(err.to_string().contains("db_paths[0].path"), "{err}");
    let many = Options::default().with_db_paths(
        (0..17)
            .map(|i| strata::DbPath::new(format!("/p{i}"), 1))
            .collect(),
    );
    let err = Db::open("/nonexistent-strata-db", many).expect_err("too many");
    assert!(err.to_string().contains("db_paths.len()"), "{err}");
}

/// Two tiers (`Options::tiering`, the HotRAP paper's RocksDB-fat): with a 24 KiB fast
/// budget L0 and L1 (8 KiB each in `tiny_options`) fit, L1 is stretched to 16 KiB to
/// fill it, and L2 and deeper go to the slow path. The tables land there, survive a
/// reopen, and a reopen with tiering off reads the same data.
#[test]
fn tiering_puts_the_fast_levels_on_the_fast_path() {
    let root = tempfile::tempdir().expect("tempdir");
    let (fast, slow) = (root.path().join("db-fast"), root.path().join("db-slow"));
    let opts = tiny_options()
        .with_db_paths(vec![
            strata::DbPath::new(&fast, 24 << 10),
            strata::DbPath::new(&slow, 0),
        ])
        .with_tiering(Some(strata::Tiering::fat()));
    let layout = strata::TierLayout::of(&opts).expect("layout");
    assert_eq!((layout.last_fast_level, layout.stretch), (1, 2.0));
    let db_dir = root.path().join("db");
    let db = Db::open(&db_dir, opts.clone()).expect("open");
    let want = fill(&db);
    db.flush().expect("flush");
    db.wait_for_compactions().expect("idle");
    check(&db, &want);
    let files: Vec<usize> = db.stats().levels.iter().map(|l| l.files).collect();
    db.close().expect("close");
    let deeper: usize = files.iter().skip(2).sum();
    assert_eq!(tables_in(&fast), files[0] + files[1], "L0-L1 {files:?}");
    assert_eq!(tables_in(&slow), deeper, "L2+ {files:?}");
    assert!(
        deeper > 0 && files[1] > 0,
        "both tiers hold tables: {files:?}"
    );
    let stored = std::fs::read_to_string(db_dir.join("OPTIONS")).expect("OPTIONS");
    assert!(
        stored.contains("\ntiering=mode:fat,fast_path:0,slow_path:1,fd_size:0\n"),
        "{stored}"
    );

    let db = Db::open(&db_dir, opts.clone()).expect("reopen tiered");
    check(&db, &want);
    db.close().expect("close");
    let db = Db::open(&db_dir, opts.with_tiering(None)).expect("reopen untiered");
    check(&db, &want);
    db.close().expect("close");
    let stored = std::fs::read_to_string(db_dir.join("OPTIONS")).expect("OPTIONS");
    assert!(!stored.contains("tiering"), "{stored}");
}
