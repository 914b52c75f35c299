//! Protects: `Db::property` / `property_cf` (docs/ARCHITECTURE.md §10): each name's
//! value agrees with what it names (the level table, the memtables, the counters),
//! RocksDB's `rocksdb.` prefix and `strata.` are the same property, and an unknown
//! name is an error listing the known ones.

mod common;

use common::tiny_options;
use strata::{CfOptions, Db, ErrorKind, WriteOptions};

fn num(db: &Db, name: &str) -> u64 {
    let v = db.property(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    v.parse().unwrap_or_else(|_| panic!("{name} = {v:?}"))
}

#[test]
fn properties_agree_with_what_they_name() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), tiny_options().with_write_buffer_size(64 << 10)).unwrap();
    let wo = WriteOptions::default();
    assert_eq!(num(&db, "rocksdb.estimate-num-keys"), 0);
    for i in 0..500u32 {
        db.put(&wo, format!("k{i:04}").as_bytes(), &[b'v'; 50])
            .unwrap();
    }
    // Unflushed: all in memory.
    assert_eq!(num(&db, "rocksdb.estimate-num-keys"), 500);
    assert!(num(&db, "rocksdb.cur-size-all-mem-tables") > 500 * 50);
    assert_eq!(num(&db, "rocksdb.live-sst-files-size"), 0);
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    assert_eq!(
        num(&db, "strata.estimate-num-keys"),
        500,
        "each key in one table"
    );
    assert_eq!(num(&db, "rocksdb.num-immutable-mem-table"), 0);
    let stats = db.stats();
    for (l, level) in stats.levels.iter().enumerate() {
        assert_eq!(
            num(&db, &format!("rocksdb.num-files-at-level{l}")),
            level.files as u64,
            "level {l}"
        );
    }
    let table_bytes: u64 = stats.levels.iter().map(|l| l.size).sum();
    assert!(table_bytes > 0);
    assert_eq!(num(&db, "rocksdb.live-sst-files-size"), table_bytes);
    assert_eq!(
        num(&db, "rocksdb.block-cache-usage"),
        db.stats().block_cache_usage
    );
    let _ = num(&db, "rocksdb.estimate-pending-compaction-bytes");
    assert!(db.property("rocksdb.stats").unwrap().contains("L0"));
    // Deletions count against the estimate (each hides an older entry).
    for i in 0..100u32 {
        db.delete(&wo, format!("k{i:04}").as_bytes()).unwrap();
    }
    db.flush().unwrap();
    assert!(num(&db, "rocksdb.estimate-num-keys") <= 500);

    let other = db.create_cf("other", CfOptions::default()).unwrap();
    db.put_cf(&wo, &other, b"x", b"1").unwrap();
    assert_eq!(
        db.property_cf(&other, "rocksdb.estimate-num-keys").unwrap(),
        "1"
    );

    for bad in [
        "estimate-num-keys",
        "rocksdb.no-such-thing",
        "rocksdb.num-files-at-level99",
        "rocksdb.num-files-at-levelx",
    ] {
        let e = db.property(bad).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{bad}: {e}");
        assert!(e.to_string().contains("estimate-num-keys"), "{bad}: {e}");
    }
    db.close().unwrap();
}
