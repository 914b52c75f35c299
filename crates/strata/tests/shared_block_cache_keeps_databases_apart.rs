//! Two databases sharing one block cache never read each other's blocks.
//!
//! What it protects: block cache keys are `(file number, offset)` within a database,
//! and file numbers repeat across databases (two fresh databases both write
//! `000004.sst`). A cache injected with `DbBuilder::block_cache` is shared, so each
//! open must take its own key space (`BlockCache::share`); otherwise the second
//! database would be served the first one's cached blocks (wrong values, no error).

mod common;

use common::key;
use std::sync::Arc;
use strata::env::FaultFs;
use strata::{BlockCache, Db, Options, ReadOptions, WriteOptions};

fn fill(db: &Db, tag: &str) {
    for i in 0..200u32 {
        db.put(
            &WriteOptions::default(),
            &key(i),
            format!("{tag}-{i}").as_bytes(),
        )
        .expect("put");
    }
    db.flush().expect("flush");
}

fn check(db: &Db, tag: &str) {
    for i in 0..200u32 {
        assert_eq!(
            db.get(&ReadOptions::default(), &key(i)).expect("get"),
            Some(format!("{tag}-{i}").into_bytes()),
            "database {tag}, key {i}"
        );
    }
}

#[test]
fn shared_block_cache_keeps_databases_apart() {
    let cache = Arc::new(BlockCache::new(1 << 20));
    let builder = Db::builder()
        .file_system(Arc::new(FaultFs::new()))
        .block_cache(Arc::clone(&cache));
    // Same options and workload shape: both databases number their files alike.
    let a = builder.open("/a", Options::default()).expect("open a");
    let b = builder.open("/b", Options::default()).expect("open b");
    fill(&a, "a");
    fill(&b, "b");
    check(&a, "a"); // caches a's blocks
    let after_a = cache.usage();
    assert!(after_a > 0, "reads go through the shared cache");
    check(&b, "b"); // same file numbers and offsets: must miss, then cache b's blocks
    assert!(cache.usage() > after_a, "b's blocks are cached separately");
    check(&a, "a");
    assert_eq!(a.stats().block_cache_usage, b.stats().block_cache_usage);
    // `block_cache_capacity` is ignored when a cache is injected.
    let c = builder
        .open("/c", Options::default().with_block_cache_capacity(0))
        .expect("open c");
    fill(&c, "c");
    check(&c, "c");
    assert_eq!(c.stats().block_cache_usage as usize, cache.usage());
    for db in [a, b, c] {
        db.close().expect("close");
    }
}
