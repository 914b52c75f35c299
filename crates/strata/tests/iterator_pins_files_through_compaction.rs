//! DESIGN invariant 4: no table is deleted while a version that a live iterator holds
//! names it. An iterator opened before a full compaction must read its whole view, with
//! its tables still on disk, and the tables it pinned must go once it is dropped.

mod common;

use std::collections::BTreeSet;
use strata::{Db, ReadOptions, WriteOptions};

fn tables(dir: &std::path::Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("list")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".sst"))
        .collect()
}

#[test]
fn iterator_pins_files_through_compaction() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), common::tiny_options()).expect("open");
    let wo = WriteOptions::default();
    for i in 0..400u32 {
        db.put(&wo, format!("k{i:05}").as_bytes(), &[b'a'; 40])
            .expect("put");
    }
    db.flush().expect("flush");
    db.wait_for_compactions().expect("settle");
    let before = tables(dir.path());
    assert!(!before.is_empty());
    let mut it = db.iter(&ReadOptions::default()).expect("iter");
    // Overwrite everything and compact it all away under the iterator.
    for i in 0..400u32 {
        db.put(&wo, format!("k{i:05}").as_bytes(), &[b'b'; 40])
            .expect("put");
    }
    db.compact_range(None, None).expect("compact");
    let during = tables(dir.path());
    assert!(
        before.is_subset(&during),
        "a table the iterator pins was deleted: {:?}",
        before.difference(&during).collect::<Vec<_>>()
    );
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        assert_eq!(
            it.value(),
            &[b'a'; 40][..],
            "the iterator sees its own view"
        );
        n += 1;
        it.next();
    }
    it.status().expect("no error");
    assert_eq!(n, 400);
    drop(it);
    // The next job (or close) collects what the iterator held.
    db.put(&wo, b"zz", b"x").expect("put");
    db.flush().expect("flush");
    db.wait_for_compactions().expect("settle");
    db.close().expect("close");
    let after = tables(dir.path());
    assert!(
        before.is_disjoint(&after),
        "pinned tables outlived the iterator: {:?}",
        before.intersection(&after).collect::<Vec<_>>()
    );
    let db = Db::open(dir.path(), common::tiny_options()).expect("reopen");
    assert_eq!(
        db.get(&ReadOptions::default(), b"k00007").expect("get"),
        Some(vec![b'b'; 40])
    );
}
