//! Reopening a database with fewer `num_levels` than its tree uses is a clear option
//! error, not corruption, and changes nothing on disk.
//!
//! What it protects: the MANIFEST places every table at a level. Before the OPTIONS
//! check, a reopen with `num_levels` at or below the deepest non-empty level replayed
//! the MANIFEST into too few levels and reported `Corruption` ("level out of range"),
//! telling the user to restore a backup of a healthy database. Now recovery replays
//! with `MAX_LEVELS` and `options_file::check_compatible` answers `InvalidArgument`
//! naming `num_levels`, the deepest level and the value needed, before anything is
//! written. Shrinking `num_levels` down to what the tree needs, or growing it, works.

mod common;

use common::{key, on};
use std::collections::BTreeMap;
use std::path::Path;
use strata::env::{FaultFs, FileSystem};
use strata::{Db, ErrorKind, Options, ReadOptions, WriteOptions};

const DIR: &str = "/db";

/// Level targets of about 1 KiB, so compactions push data to the last level.
fn deep_options() -> Options {
    common::tiny_options()
        .with_num_levels(7)
        .with_max_bytes_for_level_base(1024)
        .with_max_bytes_for_level_multiplier(1.5)
}

fn deepest_level(db: &Db) -> Option<usize> {
    db.stats().levels.iter().rposition(|l| l.files > 0)
}

fn contents(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    common::db_scan(db, None, true, &None, &None, usize::MAX)
        .expect("scan")
        .into_iter()
        .collect()
}

fn files(fs: &FaultFs) -> Vec<(String, u64)> {
    let mut names = fs.list(Path::new(DIR)).expect("list");
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let size = fs.file_size(&Path::new(DIR).join(&n)).expect("size");
            (n, size)
        })
        .collect()
}

#[test]
fn reopen_with_fewer_levels_than_the_tree_is_invalid_argument() {
    let fs = FaultFs::new();
    let db = on(&fs).open(DIR, deep_options()).expect("open");
    for i in 0..600u32 {
        db.put(
            &WriteOptions::default(),
            &key(i % 300),
            &[b'a' + (i % 26) as u8; 150],
        )
        .expect("put");
    }
    db.flush().expect("flush");
    db.wait_for_compactions().expect("idle");
    let deepest = deepest_level(&db).expect("files");
    assert!(
        deepest >= 4,
        "the workload must reach a deep level, got L{deepest}"
    );
    let expected = contents(&db);
    assert_eq!(expected.len(), 300);
    db.close().expect("close");

    let before = files(&fs);
    for num_levels in [3, deepest] {
        let err = on(&fs)
            .open(DIR, Options::default().with_num_levels(num_levels))
            .expect_err("too few levels");
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains(&format!(
                "num_levels=`{num_levels}` is less than the database's deepest level \
                 L{deepest} (needs >= {})",
                deepest + 1
            )),
            "{msg}"
        );
        assert!(msg.contains("last opened with num_levels=`7`"), "{msg}");
    }
    assert_eq!(files(&fs), before, "a refused open writes nothing");

    // Exactly enough levels, then more: both open and read everything. (Default level
    // targets: no compaction moves data deeper meanwhile.)
    for num_levels in [deepest + 1, 12] {
        let db = on(&fs)
            .open(DIR, Options::default().with_num_levels(num_levels))
            .unwrap_or_else(|e| panic!("num_levels={num_levels}: {e}"));
        assert_eq!(db.stats().levels.len(), num_levels);
        assert_eq!(deepest_level(&db), Some(deepest));
        assert_eq!(contents(&db), expected, "num_levels={num_levels}");
        db.close().expect("close");
    }
}

#[test]
fn reopen_with_fewer_levels_that_hold_every_file_succeeds() {
    let fs = FaultFs::new();
    let db = on(&fs)
        .open(DIR, Options::default().with_num_levels(7))
        .expect("open");
    for i in 0..50u32 {
        db.put(&WriteOptions::default(), &key(i), b"v")
            .expect("put");
    }
    db.flush().expect("flush");
    assert_eq!(deepest_level(&db), Some(0));
    db.close().expect("close");
    let db = on(&fs)
        .open(DIR, Options::default().with_num_levels(3))
        .expect("L0 fits in 3 levels");
    assert_eq!(db.stats().levels.len(), 3);
    assert_eq!(
        db.get(&ReadOptions::default(), &key(7)).expect("get"),
        Some(b"v".to_vec())
    );
    db.close().expect("close");
}
