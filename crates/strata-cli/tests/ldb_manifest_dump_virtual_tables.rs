//! Protects: `strata ldb manifest_dump` (every level's files, each virtual table with
//! its slices, the parents with their garbage, read from the MANIFEST without writing
//! a byte in the database directory) and `strata ldb verify` on a database with
//! virtual tables (the parents and slices counted; a deleted parent reported naming
//! its file), on a database whose compactions the real engine deferred.

mod common;

use common::{db_flag, field, ok, strata};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use strata::{Db, DbStats, DelayedCompaction, Options, WriteOptions};

/// Small memtables, tables and levels, so a few thousand puts make several levels,
/// with delayed compaction (VCT 8): compactions reading fewer than 8 real tables are
/// deferred into virtual tables. Puts only: a bottommost compaction with deletions is
/// never deferred.
fn options() -> Options {
    Options::default()
        .with_write_buffer_size(4096)
        .with_target_file_size_base(2048)
        .with_max_bytes_for_level_base(8192)
        .with_max_bytes_for_level_multiplier(4.0)
        .with_level0_file_num_compaction_trigger(2)
        .with_num_levels(5)
        .with_every_level(|l| l.with_block_size(256))
        .with_delayed_compaction(Some(DelayedCompaction::new().with_vct(8)))
}

/// Fills a database in `dir` until a compaction was deferred; returns its statistics
/// once idle (and closed).
fn build(dir: &Path) -> DbStats {
    let db = Db::open(dir, options()).expect("open");
    let wo = WriteOptions::default();
    // Keys scattered over the key space, so flushes overlap the levels below them.
    for round in 0..4u32 {
        for i in 0..2000u32 {
            let k = (i * 7919 + round * 131) % 2000;
            let v = format!("value-{round}-{k:05}-{}", "x".repeat(20));
            db.put(&wo, format!("key{k:05}").as_bytes(), v.as_bytes())
                .expect("put");
        }
    }
    db.flush().expect("flush");
    db.wait_for_compactions().expect("idle");
    let stats = db.stats();
    db.close().expect("close");
    stats
}

/// Every file under `dir` with its length and modification time.
fn listing(dir: &Path) -> BTreeMap<PathBuf, (u64, SystemTime)> {
    std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| {
            let e = e.expect("entry");
            let m = e.metadata().expect("metadata");
            (e.path(), (m.len(), m.modified().expect("mtime")))
        })
        .collect()
}

#[test]
fn manifest_dump_lists_virtual_tables_and_verify_checks_their_parents() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");
    let stats = build(&dir);
    let virtual_files: usize = stats.levels.iter().map(|l| l.virtual_files).sum();
    assert!(virtual_files > 0, "no virtual table: {stats:?}");
    assert!(
        // Garbage may be 0: a new parent's slices reference all of its bytes, and the
        // garbage bound rewrites tables once it grows; the dump's total must match.
        stats.space.parents > 0,
        "{stats:?}"
    );
    let db = db_flag(&dir);

    let before = listing(&dir);
    let dump = ok(&["ldb", &db, "manifest_dump"], None);
    assert_eq!(listing(&dir), before, "manifest_dump changed the directory");
    println!("{dump}");

    // Every virtual table is listed with its slices, each naming a listed parent.
    let lines: Vec<&str> = dump.lines().collect();
    let virtual_lines: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].trim_start().starts_with("virtual "))
        .collect();
    assert_eq!(virtual_lines.len(), virtual_files, "{dump}");
    let parents: Vec<&str> = lines
        .iter()
        .skip_while(|l| l.trim() != "parents:")
        .skip(2)
        .take_while(|l| !l.trim_start().starts_with("total"))
        .map(|l| l.split_whitespace().next().expect("number"))
        .collect();
    assert_eq!(parents.len() as u64, stats.space.parents, "{dump}");
    let mut slices = 0;
    for &i in &virtual_lines {
        let n = field(lines[i], "slices");
        for s in &lines[i + 1..=i + n as usize] {
            let parent = s
                .split_whitespace()
                .find_map(|w| w.strip_prefix("parent="))
                .unwrap_or_else(|| panic!("not a slice: {s}"));
            assert!(parents.contains(&parent), "{s} names no listed parent");
        }
        slices += n;
    }
    // The family's totals agree with the engine's own accounting.
    let total = lines
        .iter()
        .find(|l| l.trim_start().starts_with("total: "))
        .expect("total line");
    assert_eq!(field(total, "virtual"), virtual_files as u64, "{total}");
    assert_eq!(field(total, "slices"), slices, "{total}");
    assert_eq!(field(total, "parents"), stats.space.parents, "{total}");
    assert_eq!(field(total, "parent_bytes"), stats.space.parent_bytes);
    assert_eq!(field(total, "referenced"), stats.space.referenced_bytes);
    assert_eq!(field(total, "garbage"), stats.space.garbage_bytes);
    assert_eq!(field(total, "bytes_on_disk"), stats.space.live_table_bytes);

    // verify counts what it checked.
    let out = ok(&["ldb", &db, "verify"], None);
    assert!(out.starts_with("verify: ok blocks="), "{out}");
    assert_eq!(field(&out, "parents"), stats.space.parents, "{out}");
    assert_eq!(field(&out, "slices"), slices, "{out}");
    let tables = std::fs::read_dir(&dir)
        .expect("read_dir")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "sst"))
        })
        .count();
    assert_eq!(field(&out, "tables"), tables as u64, "{out}");

    // A deleted parent: verify names it, before opening the database.
    let parent = dir.join(format!("{}.sst", parents[0]));
    std::fs::remove_file(&parent).expect("remove a parent");
    let before = listing(&dir);
    let out = strata(&["ldb", &db, "verify"], None);
    assert!(!out.status.success(), "verify passed without a parent");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines().count() == 1 && err.contains(&*parent.to_string_lossy()),
        "{err}"
    );
    assert_eq!(
        listing(&dir),
        before,
        "a failed verify changed the directory"
    );
    // The dump still shows the parent: it reads the MANIFEST only.
    let dump = ok(&["ldb", &db, "manifest_dump"], None);
    assert!(dump.contains(&format!("\n    {}   ", parents[0])), "{dump}");
}
