//! Concurrency, with pipelined writes on and off:
//! - writer threads commit whole "rounds" (one batch setting every key of their group to
//!   the round number) while reader threads check, at snapshots and with iterators, that
//!   every batch is seen entirely or not at all and that rounds never go backwards;
//! - writer threads commit batches of fresh keys while readers count what each snapshot
//!   sees: exactly the entries sequenced up to it, i.e. a prefix of the commit order.
//!
//! Tiny memtables keep memtable switches, flushes and compactions running throughout.

mod common;

use common::tiny_options;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use strata::{Db, ReadOptions, WriteBatch, WriteOptions};

const WRITERS: u32 = 3;
const KEYS: u32 = 40;

fn k(w: u32, i: u32) -> Vec<u8> {
    format!("w{w}-{i:04}").into_bytes()
}

#[test]
fn readers_see_atomic_monotonic_batches_during_background_work() {
    atomic_monotonic_batches(true);
}

#[test]
fn readers_see_atomic_monotonic_batches_without_pipelined_writes() {
    atomic_monotonic_batches(false);
}

fn atomic_monotonic_batches(pipelined: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = tiny_options()
        .with_max_background_jobs(3)
        .with_enable_pipelined_write(pipelined);
    let db = Arc::new(Db::open(dir.path(), opts).expect("open"));
    let stop = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::new();
    for w in 0..WRITERS {
        let db = Arc::clone(&db);
        handles.push(std::thread::spawn(move || {
            for round in 1..=150u32 {
                let mut b = WriteBatch::new();
                for i in 0..KEYS {
                    b.put(&k(w, i), &round.to_be_bytes());
                }
                db.write(&WriteOptions::default().with_sync(round % 50 == 0), b)
                    .expect("write");
            }
        }));
    }
    let mut readers = Vec::new();
    for r in 0..3u32 {
        let db = Arc::clone(&db);
        let stop = Arc::clone(&stop);
        readers.push(std::thread::spawn(move || {
            let mut last = [0u32; WRITERS as usize];
            let mut checks = 0u64;
            while !stop.load(Ordering::Relaxed) || checks < 20 {
                let snap = db.snapshot();
                let ro = ReadOptions::default().with_snapshot(snap.clone());
                for w in 0..WRITERS {
                    // Iterator over the group at the snapshot.
                    let mut it = db
                        .iter(
                            &ReadOptions::default()
                                .with_snapshot(snap.clone())
                                .with_lower_bound(k(w, 0))
                                .with_upper_bound(k(w, KEYS)),
                        )
                        .expect("iter");
                    if r % 2 == 0 {
                        it.seek_to_first();
                    } else {
                        it.seek_to_last();
                    }
                    let mut rounds = Vec::new();
                    while it.valid() {
                        let v = u32::from_be_bytes(it.value().try_into().expect("4 bytes"));
                        rounds.push(v);
                        if r % 2 == 0 {
                            it.next();
                        } else {
                            it.prev();
                        }
                    }
                    it.status().expect("iter status");
                    assert!(
                        rounds.is_empty() || rounds.len() == KEYS as usize,
                        "partial batch: {} keys",
                        rounds.len()
                    );
                    if let Some(&first) = rounds.first() {
                        assert!(rounds.iter().all(|&x| x == first), "torn batch {rounds:?}");
                        assert!(first >= last[w as usize], "round went backwards");
                        // Point reads at the same snapshot agree with the iterator.
                        let probe = (checks as u32) % KEYS;
                        let got = db.get(&ro, &k(w, probe)).expect("get").expect("present");
                        assert_eq!(u32::from_be_bytes(got.try_into().expect("4 bytes")), first);
                        last[w as usize] = first;
                    }
                }
                checks += 1;
            }
            checks
        }));
    }
    for h in handles {
        h.join().expect("writer");
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        assert!(r.join().expect("reader") > 0);
    }
    db.wait_for_compactions().expect("idle");
    for w in 0..WRITERS {
        for i in 0..KEYS {
            let v = db
                .get(&ReadOptions::default(), &k(w, i))
                .expect("get")
                .expect("present");
            assert_eq!(v, 150u32.to_be_bytes());
        }
    }
    let stats = db.stats();
    assert!(stats.counters.flush_bytes_written > 0);
    assert!(
        stats.counters.compaction_bytes_written > 0,
        "{}",
        stats.level_table()
    );
}

#[test]
fn every_snapshot_sees_a_prefix_of_the_commit_order() {
    snapshots_see_commit_order_prefixes(true);
}

#[test]
fn every_snapshot_sees_a_prefix_of_the_commit_order_without_pipelined_writes() {
    snapshots_see_commit_order_prefixes(false);
}

/// Every entry is a fresh key and sequence numbers are dense, so the entries sequenced
/// up to a snapshot number exactly `snapshot.sequence() - start`. The read path never
/// shows an entry above the snapshot, so a snapshot that sees that many entries sees
/// exactly them: a prefix of the commit order. One missing (a later group published
/// before an earlier one finished inserting) makes the count fall short.
fn snapshots_see_commit_order_prefixes(pipelined: bool) {
    const PREFIX_WRITERS: u64 = 4;
    const BATCHES: u64 = 600;
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = tiny_options()
        .with_write_buffer_size(64 << 10)
        .with_enable_pipelined_write(pipelined);
    let db = Arc::new(Db::open(dir.path(), opts).expect("open"));
    let start = db.latest_sequence();
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..PREFIX_WRITERS)
        .map(|w| {
            let db = Arc::clone(&db);
            std::thread::spawn(move || {
                for b in 0..BATCHES {
                    // 1 to 3 entries per batch, so groups of mixed sizes form.
                    let mut batch = WriteBatch::new();
                    for e in 0..=(b + w) % 3 {
                        batch.put(format!("t{w}-{b:05}-{e}").as_bytes(), &[b as u8; 40]);
                    }
                    db.write(&WriteOptions::default().with_sync(b % 200 == 0), batch)
                        .expect("write");
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let db = Arc::clone(&db);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut checks = 0u64;
                while !stop.load(Ordering::Relaxed) || checks < 5 {
                    let snap = db.snapshot();
                    let expected = snap.sequence() - start;
                    let ro = ReadOptions::default().with_snapshot(snap.clone());
                    let mut it = db.iter(&ro).expect("iter");
                    let mut seen = 0u64;
                    if r == 0 {
                        it.seek_to_first();
                    } else {
                        it.seek_to_last();
                    }
                    while it.valid() {
                        seen += 1;
                        if r == 0 {
                            it.next();
                        } else {
                            it.prev();
                        }
                    }
                    it.status().expect("iter status");
                    assert_eq!(
                        seen,
                        expected,
                        "snapshot {} sees {seen} entries, {expected} were sequenced before it",
                        snap.sequence()
                    );
                    checks += 1;
                }
                checks
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer");
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        assert!(r.join().expect("reader") >= 5);
    }
    let total: u64 = (0..PREFIX_WRITERS)
        .map(|w| (0..BATCHES).map(|b| (b + w) % 3 + 1).sum::<u64>())
        .sum();
    assert_eq!(db.latest_sequence() - start, total);
}
