//! Table readers pinned by the version (ARCHITECTURE §5.5) must not outlive their
//! files: once a compaction replaces every table that point lookups pinned, the old
//! files are deleted and no descriptor of this process still points at one of them.
//! (A pin kept past the last `FileRef` would hold a deleted file open, on disk space
//! the file system cannot reclaim.) With delayed compaction the lookups pin parents
//! of virtual tables through their slices, and a parent's pin must go with the last
//! table naming it.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use strata::{Db, DelayedCompaction, Options, ReadOptions, WriteOptions};

fn tables(dir: &Path) -> BTreeSet<PathBuf> {
    std::fs::read_dir(dir)
        .expect("list")
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .collect()
}

/// Table files of `dir` that this process holds open (Linux: `/proc/self/fd`); a
/// deleted one shows as `<path> (deleted)`.
fn open_tables(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir("/proc/self/fd")
        .expect("list /proc/self/fd")
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target.starts_with(dir))
        .map(|target| target.display().to_string())
        .filter(|target| target.contains(".sst"))
        .collect()
}

#[test]
#[cfg(target_os = "linux")]
fn pinned_tables_close_with_their_files() {
    check(common::tiny_options());
}

#[test]
#[cfg(target_os = "linux")]
fn pinned_parents_close_with_their_files() {
    // The widest garbage bound: a rewrite for space, which timing under load could
    // bring before the lookups, would leave no virtual table for them to read through.
    let delayed = DelayedCompaction::new()
        .with_vct(8)
        .with_vsmt(2)
        .with_max_garbage_ratio(1.0);
    check(common::tiny_options().with_delayed_compaction(Some(delayed)));
}

#[cfg(target_os = "linux")]
fn check(opts: Options) {
    let dir = tempfile::tempdir().expect("tempdir");
    let delayed = opts.delayed_compaction.is_some();
    let db = Db::open(dir.path(), opts).expect("open");
    let (wo, ro) = (WriteOptions::default(), ReadOptions::default());
    // Keys in a scattered order, so that compactions rewrite (or defer) rather than
    // move files down.
    let key = |i: u32| format!("k{:05}", i * 149 % 400).into_bytes();
    for i in 0..400u32 {
        db.put(&wo, &key(i), &[b'a'; 40]).expect("put");
    }
    db.flush().expect("flush");
    db.wait_for_compactions().expect("settle");
    for i in 0..400u32 {
        assert_eq!(db.get(&ro, &key(i)).expect("get"), Some(vec![b'a'; 40]));
    }
    let before = tables(dir.path());
    assert!(
        !open_tables(dir.path()).is_empty(),
        "lookups left no table open"
    );
    if delayed {
        let s = db.stats();
        assert!(
            s.counters.virtual_parents_probed > 0,
            "no lookup read a parent: {s}"
        );
    }

    for i in 0..400u32 {
        db.put(&wo, &key(i), &[b'b'; 40]).expect("put");
    }
    db.compact_range(None, None).expect("compact");
    db.wait_for_compactions().expect("settle");
    for i in 0..400u32 {
        assert_eq!(db.get(&ro, &key(i)).expect("get"), Some(vec![b'b'; 40]));
    }
    let after = tables(dir.path());
    assert!(
        before.is_disjoint(&after),
        "replaced tables not deleted: {:?}",
        before.intersection(&after).collect::<Vec<_>>()
    );
    let still_open: Vec<String> = open_tables(dir.path())
        .into_iter()
        .filter(|t| t.ends_with("(deleted)") || !after.contains(Path::new(t)))
        .collect();
    assert!(
        still_open.is_empty(),
        "deleted tables still open: {still_open:?}"
    );
    db.close().expect("close");
}
