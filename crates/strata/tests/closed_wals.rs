//! WALs closed by a memtable switch are not fsynced at the switch (docs/ARCHITECTURE.md
//! §7.4): their handles wait for a sync write, a flush of a database with several
//! families, or the flush that makes them obsolete.
//!
//! What it protects: a database written without sync writes keeps no handle to a WAL
//! it has deleted (an open handle would keep the deleted file's disk space until
//! close), and what it wrote is all there after a reopen.

mod common;

use common::{key, tiny_options};
use strata::{Db, ReadOptions, WriteOptions};

/// Open descriptors of this process that point at deleted `.log` files under `dir`.
fn deleted_wal_handles(dir: &std::path::Path) -> Vec<String> {
    let prefix = dir.display().to_string();
    std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .map(|target| target.display().to_string())
        .filter(|t| t.starts_with(&prefix) && t.contains(".log") && t.ends_with("(deleted)"))
        .collect()
}

#[test]
fn obsolete_closed_wals_are_not_held_open() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let db = Db::open(&path, tiny_options()).expect("open");
    // 4 KiB memtables: hundreds of switches, none of them syncing the WAL it closes.
    for i in 0..4000u32 {
        db.put(&WriteOptions::default(), &key(i), &[b'v'; 100])
            .expect("put");
    }
    db.flush().expect("flush");
    db.wait_for_compactions().expect("compactions");
    let held = deleted_wal_handles(dir.path());
    assert!(held.is_empty(), "deleted WALs still open: {held:?}");
    db.close().expect("close");
    let db = Db::open(&path, tiny_options()).expect("reopen");
    for i in (0..4000u32).step_by(97) {
        assert!(
            db.get(&ReadOptions::default(), &key(i))
                .expect("get")
                .is_some(),
            "key {i}"
        );
    }
    db.close().expect("close");
}
