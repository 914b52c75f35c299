//! One memory budget for memtables and the block cache (docs/ARCHITECTURE.md §4.4).
//!
//! What it protects: every column family's memtables are charged to the budget from
//! their first block to their release; past half the budget the largest active
//! memtable is flushed, so memtables stay near their share whatever
//! `write_buffer_size` says; past 7/8 writes stop while a flush is pending, so the
//! total never runs away when flushes cannot keep up (here: cannot happen at all);
//! the block cache gives memory back as memtables grow and takes it again once they
//! are flushed; a budget shared by two databases sees both; nothing is lost, every
//! answer is the model's.

mod common;

use common::{key, on};
use std::collections::BTreeMap;
use strata::env::{FaultFs, FaultKinds, FaultRule};
use strata::{BlockCache, Db, ErrorKind, MemoryBudget, Options, ReadOptions, WriteOptions};

const DIR: &str = "/db";
const MIB: usize = 1 << 20;

fn value(i: u32, len: usize) -> Vec<u8> {
    let mut v = format!("v{i}-").into_bytes();
    v.resize(len, b'a' + (i % 26) as u8);
    v
}

/// Options whose memtables would never flush by size: 256 MiB each.
fn big_memtables() -> Options {
    Options::default()
        .with_write_buffer_size(256 * MIB)
        .with_cache_index_and_filter_blocks(true)
}

/// Four families written round-robin under an 8 MiB budget: without it each
/// memtable would grow to 256 MiB; with it memtables stay under the stop line and
/// the budget's flushes keep them there. Every write reads back.
#[test]
fn memtables_of_every_family_stay_within_the_budget() {
    let fs = FaultFs::new();
    let budget = MemoryBudget::new(8 * MIB).expect("budget");
    let db = on(&fs)
        .memory_budget(&budget)
        .open(DIR, big_memtables())
        .expect("open");
    let cfs: Vec<_> = (1..4)
        .map(|i| {
            db.create_cf(&format!("cf{i}"), big_memtables().cf_options())
                .expect("create_cf")
        })
        .collect();
    let mut model: Vec<BTreeMap<Vec<u8>, Vec<u8>>> = vec![BTreeMap::new(); 4];
    let mut peak = 0;
    for i in 0..40_000u32 {
        let f = (i % 4) as usize;
        let (k, v) = (key(i), value(i, 200));
        match f {
            0 => db.put(&WriteOptions::default(), &k, &v),
            _ => db.put_cf(&WriteOptions::default(), &cfs[f - 1], &k, &v),
        }
        .expect("put");
        model[f].insert(k, v);
        peak = peak.max(budget.memtable_usage());
    }
    let c = db.stats().counters;
    // ~8.5 MB of entries went through memtables capped at 7 MiB (the stop line).
    assert!(
        peak <= 7 * MIB + MIB / 2,
        "memtables peaked at {peak} bytes"
    );
    assert!(c.memory_budget_flushes >= 2, "{}", c.memory_budget_flushes);
    assert!(c.flush_bytes_written > 0);
    db.flush().expect("flush");
    for (f, m) in model.iter().enumerate() {
        for (k, v) in m {
            let got = match f {
                0 => db.get(&ReadOptions::default(), k),
                _ => db.get_cf(&ReadOptions::default(), &cfs[f - 1], k),
            }
            .expect("get");
            assert_eq!(got.as_ref(), Some(v), "family {f}");
        }
    }
    // The cache, squeezed while memtables were full, has the budget back.
    assert!(budget.memtable_usage() < MIB, "{}", budget.memtable_usage());
    assert!(budget.usage() <= 8 * MIB + MIB / 8, "{}", budget.usage());
    db.close().expect("close");
    // The family handles hold their families (and memtables) until dropped.
    drop(cfs);
    assert_eq!(
        budget.memtable_usage(),
        0,
        "every arena released its charge"
    );
}

/// Flushes that cannot finish (every table create fails): memtables pile up to the
/// stop line, then writes stop instead of growing them; the stalled write gets the
/// flush's retryable error. Once tables can be created again the backlog flushes
/// and writes go on; nothing is lost.
#[test]
fn writes_stop_near_the_budget_when_flushes_cannot_keep_up() {
    let fs = FaultFs::new();
    let budget = MemoryBudget::new(4 * MIB).expect("budget");
    let opts = big_memtables().with_max_write_buffer_number(64);
    let db = on(&fs)
        .memory_budget(&budget)
        .open(DIR, opts)
        .expect("open");
    fs.inject(FaultRule::sticky(FaultKinds::CREATE, 0).on_path(".sst"));
    let mut model = BTreeMap::new();
    let mut peak = 0;
    let mut refused = None;
    for i in 0..20_000u32 {
        match db.put(&WriteOptions::default(), &key(i), &value(i, 1000)) {
            Ok(()) => {
                model.insert(key(i), value(i, 1000));
            }
            Err(e) => {
                refused = Some((i, e));
                break;
            }
        }
        peak = peak.max(budget.memtable_usage());
    }
    let (at, e) = refused.expect("a write stalled and was refused");
    assert!(e.is_retryable(), "{e}");
    assert_ne!(e.kind(), ErrorKind::Poisoned);
    assert!(
        peak <= 4 * MIB,
        "memtables peaked at {peak} bytes (stop at 3.5 MiB)"
    );
    assert!(peak >= 3 * MIB, "memtables peaked at {peak} bytes only");
    let c = db.stats().counters;
    assert!(c.memory_budget_stops >= 1, "{c:?}");
    fs.clear_faults();
    for i in at..at + 500 {
        db.put(&WriteOptions::default(), &key(i), &value(i, 1000))
            .expect("put after the disk took tables again");
        model.insert(key(i), value(i, 1000));
    }
    db.flush().expect("flush");
    for (k, v) in &model {
        assert_eq!(
            db.get(&ReadOptions::default(), k).expect("get").as_ref(),
            Some(v)
        );
    }
}

/// Two databases on one budget: both are charged, and their memtables together stay
/// within it; closing them releases everything.
#[test]
fn two_databases_share_one_budget() {
    let fs = FaultFs::new();
    let budget = MemoryBudget::new(8 * MIB).expect("budget");
    let builder = on(&fs).memory_budget(&budget);
    let a = builder.open("/a", big_memtables()).expect("open a");
    let one = budget.memtable_usage();
    assert!(
        one > 0,
        "a memtable's first block is charged when it is made"
    );
    let b = builder.open("/b", big_memtables()).expect("open b");
    assert_eq!(
        budget.memtable_usage(),
        2 * one,
        "the second database is charged too"
    );
    let mut peak = 0;
    for i in 0..30_000u32 {
        let db = if i % 2 == 0 { &a } else { &b };
        db.put(&WriteOptions::default(), &key(i), &value(i, 300))
            .expect("put");
        peak = peak.max(budget.memtable_usage());
    }
    assert!(
        peak <= 7 * MIB + MIB / 2,
        "memtables peaked at {peak} bytes"
    );
    assert!(a.stats().counters.memory_budget_flushes >= 1);
    assert!(b.stats().counters.memory_budget_flushes >= 1);
    for i in 0..30_000u32 {
        let db = if i % 2 == 0 { &a } else { &b };
        assert_eq!(
            db.get(&ReadOptions::default(), &key(i)).expect("get"),
            Some(value(i, 300))
        );
    }
    a.close().expect("close");
    b.close().expect("close");
    assert_eq!(budget.memtable_usage(), 0);
}

/// `Options::memory_budget` makes a budget of the database's own; bad values and a
/// second cache are refused by name.
#[test]
fn options_budget_and_refusals() {
    let fs = FaultFs::new();
    let db = on(&fs)
        .open(DIR, big_memtables().with_memory_budget(4 * MIB))
        .expect("open");
    let mut peak_flushes = 0;
    for i in 0..20_000u32 {
        db.put(&WriteOptions::default(), &key(i), &value(i, 200))
            .expect("put");
        peak_flushes = db.stats().counters.memory_budget_flushes;
    }
    assert!(peak_flushes >= 1, "the options' budget flushed nothing");
    // The budget's cache replaced the 32 MiB one `block_cache_capacity` would make.
    assert!(db.stats().block_cache_usage <= 4 * MIB as u64);
    db.close().expect("close");

    let e = Options::default()
        .with_memory_budget(MIB / 16)
        .validate()
        .expect_err("too small");
    assert!(e.to_string().contains("memory_budget"), "{e}");
    let budget = MemoryBudget::new(8 * MIB).expect("budget");
    let e = Db::builder()
        .file_system(std::sync::Arc::new(fs.clone()))
        .memory_budget(&budget)
        .block_cache(std::sync::Arc::new(BlockCache::new(MIB)))
        .open("/other", Options::default())
        .expect_err("two caches");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

/// With a budget, each background job ends by giving the heap it freed back (glibc's
/// `malloc_trim`; docs/ARCHITECTURE.md §4.4); without one, the allocator is left alone.
#[test]
fn background_jobs_give_freed_heap_back_only_under_a_budget() {
    let trims = |budget: Option<&MemoryBudget>| {
        let fs = FaultFs::new();
        let mut builder = on(&fs);
        if let Some(b) = budget {
            builder = builder.memory_budget(b);
        }
        let db = builder.open(DIR, big_memtables()).expect("open");
        for round in 0..3u32 {
            for i in 0..200u32 {
                db.put(&WriteOptions::default(), &key(i), &value(i + round, 100))
                    .expect("put");
            }
            db.flush().expect("flush");
        }
        db.compact_range(None, None).expect("compact");
        // A flush's trim follows its end, which is what lets `flush` return: wait a
        // little for the last one (with a budget), then count.
        let trims = || db.stats().counters.memory_budget_heap_trims;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while budget.is_some() && trims() < 3 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let n = trims();
        db.close().expect("close");
        n
    };
    let budget = MemoryBudget::new(8 * MIB).expect("budget");
    assert_eq!(trims(None), 0);
    let with = trims(Some(&budget));
    if cfg!(all(target_os = "linux", target_env = "gnu")) {
        assert!(with >= 3, "one per flush at least: {with}");
    } else {
        assert_eq!(with, 0);
    }
}
