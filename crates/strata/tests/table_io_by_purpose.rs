//! Protects: `DbStats::total_io_bytes` and its split by purpose (`io_bytes_read`,
//! `io_bytes_written`). Every table byte is counted once, under what caused it: the
//! parts add up to the total exactly at every point, flushes and compactions write
//! exactly the bytes their own counters say, and a phase of only gets, only scans or
//! only `verify_checksums` grows only its own part. No block cache, so every read
//! reaches a table file.

mod common;

use common::*;
use strata::{Db, DbStats, IoBytes, Options, ReadOptions, WriteOptions};

fn options() -> Options {
    let mut o = Options::default();
    o.write_buffer_size = 8 << 10;
    o.target_file_size_base = 16 << 10;
    o.max_bytes_for_level_base = 64 << 10;
    o.block_cache_capacity = 0;
    o
}

/// The total and its parts; asserts that they agree.
fn io(db: &Db) -> (IoBytes, IoBytes, DbStats) {
    let s = db.stats();
    let (read, written) = (s.io_bytes_read(), s.io_bytes_written());
    assert_eq!(s.total_io_bytes(), read.total() + written.total(), "{s:?}");
    (read, written, s)
}

/// `after - before`, purpose by purpose.
fn grew(before: IoBytes, after: IoBytes) -> [u64; 5] {
    [
        after.get - before.get,
        after.scan - before.scan,
        after.flush - before.flush,
        after.compaction - before.compaction,
        after.other - before.other,
    ]
}

#[test]
fn every_table_byte_is_counted_once_under_its_purpose() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), options()).expect("open");
    let wo = WriteOptions::default();
    for i in 0..6000u32 {
        let v = format!("value-{i}-{}", "x".repeat(80));
        db.put(&wo, &key(i * 7919 % 2000), v.as_bytes())
            .expect("put");
    }
    db.flush().expect("flush");
    db.wait_for_compactions().expect("settle");

    // Writing: flushes and compactions wrote exactly what their counters say, and
    // compactions read; nothing else touched a table.
    let (r0, w0, s) = io(&db);
    assert!(s.counters.compaction_bytes_written > 0, "{s:?}");
    assert_eq!(w0.flush, s.counters.flush_bytes_written);
    assert_eq!(w0.compaction, s.counters.compaction_bytes_written);
    assert_eq!(grew(IoBytes::default(), w0)[..2], [0, 0]);
    assert_eq!(w0.other, 0);
    assert!(r0.compaction > 0);
    assert_eq!(
        (r0.get, r0.scan, r0.flush, r0.other),
        (0, 0, 0, 0),
        "{r0:?}"
    );

    // Gets read, as gets, and write nothing.
    let ro = ReadOptions::default();
    for i in 0..500u32 {
        db.get(&ro, &key(i * 13 % 2000)).expect("get");
    }
    let (r1, w1, _) = io(&db);
    let g = grew(r0, r1);
    assert!(g[0] > 0, "{r1:?}");
    assert_eq!(g[1..], [0, 0, 0, 0], "{r0:?} -> {r1:?}");
    assert_eq!(w1, w0);

    // A scan reads, as a scan.
    let mut it = db.iter(&ro).expect("iter");
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    it.status().expect("scan");
    drop(it);
    assert_eq!(n, 2000);
    let (r2, w2, _) = io(&db);
    let g = grew(r1, r2);
    assert!(g[1] > 0, "{r2:?}");
    assert_eq!([g[0], g[2], g[3], g[4]], [0, 0, 0, 0], "{r1:?} -> {r2:?}");
    assert_eq!(w2, w0);

    // Verification is neither.
    db.verify_checksums().expect("verify");
    let (r3, w3, _) = io(&db);
    let g = grew(r2, r3);
    assert!(g[4] > 0, "{r3:?}");
    assert_eq!(g[..4], [0, 0, 0, 0], "{r2:?} -> {r3:?}");
    assert_eq!(w3, w0);
    db.close().expect("close");
}
