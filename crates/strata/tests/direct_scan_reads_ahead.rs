//! With `use_direct_reads`, a scan reads ahead: after two sequential block reads of a
//! table, blocks come from growing windows (8 KiB up to 256 KiB), so the file sees far
//! fewer reads than the blocks it serves, and the scan returns exactly what a buffered
//! scan does. Skipped with a note where the temp directory refuses O_DIRECT.

mod common;

use common::*;
use strata::{Db, ReadOptions, WriteOptions};

#[test]
fn a_direct_scan_reads_ahead_and_returns_the_same_entries() {
    let Some(dir) = direct_io_tempdir("a_direct_scan_reads_ahead") else {
        return;
    };
    let opts = tiny_options()
        .with_write_buffer_size(256 << 10)
        .with_target_file_size_base(256 << 10)
        .with_use_direct_reads(true)
        .with_block_cache_capacity(0);
    let db = Db::open(dir.path(), opts).expect("open");
    for i in 0..20_000u32 {
        let v = format!("value-{i}-{}", "y".repeat(40));
        db.put(&WriteOptions::default(), &key(i), v.as_bytes())
            .expect("put");
    }
    db.compact_range(None, None).expect("compact");
    db.wait_for_compactions().expect("idle");
    let before = db.stats();
    let mut it = db.iter(&ReadOptions::default()).expect("iter");
    it.seek_to_first();
    let mut n = 0u32;
    while it.valid() {
        assert_eq!(it.key(), key(n).as_slice());
        n += 1;
        it.next();
    }
    it.status().expect("scan");
    assert_eq!(n, 20_000);
    let after = db.stats();
    let blocks = after.counters.blocks_read - before.counters.blocks_read;
    let reads = after.paths[0].reads - before.paths[0].reads;
    assert!(blocks > 1000, "the scan read {blocks} blocks");
    assert!(
        reads * 8 < blocks,
        "{reads} file reads for {blocks} blocks: no readahead"
    );
    // Backwards (no readahead: every step is a jump back) gives the same entries.
    it.seek_to_last();
    while it.valid() {
        n -= 1;
        assert_eq!(it.key(), key(n).as_slice());
        it.prev();
    }
    assert_eq!(n, 0);
}
