//! Races of HotRAP's promotion cache (ARCHITECTURE §18, P1 to P3): readers fill the
//! cache with copies of hot keys read from the slow tier while writers update those
//! same keys, compactions move new versions down and take copies out, and full caches
//! are promoted by flush into L0.
//!
//! What it protects: no get ever returns a version older than the last one
//! acknowledged before it began (a stale copy would), and a snapshot reads the same
//! value however often it is read while copies come and go.

mod common;

use common::*;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use strata::env::FaultFs;
use strata::{Options, ReadOptions, Tiering, WriteOptions};

const HOT: u32 = 48;
const COLD: u32 = 600;

fn tiered(root: &Path) -> Options {
    tiny_options()
        .with_block_cache_capacity(0)
        .with_max_open_files(10_000)
        // A promotion cache of 1 KiB: the hot keys' copies fill it, so it seals and
        // promotion flushes race with the writers too.
        .with_target_file_size_base(1024)
        .with_db_paths(vec![
            strata::DbPath::new(root.join("db-fast"), 24 << 10),
            strata::DbPath::new(root.join("db-slow"), 0),
        ])
        .with_tiering(Some(Tiering::hotrap()))
}

fn value(counter: u64) -> Vec<u8> {
    format!("{counter:08}-{}", "v".repeat(80)).into_bytes()
}

fn counter(v: &[u8]) -> u64 {
    std::str::from_utf8(v.get(..8).expect("8 digits"))
        .expect("utf-8")
        .parse()
        .expect("a counter")
}

/// Per hot key: the last counter acknowledged and the last one a writer started.
struct Counters {
    acked: Vec<AtomicU64>,
    started: Vec<AtomicU64>,
}

fn hot_key(i: u32) -> Vec<u8> {
    // Spread among the cold keys, so compactions of the cold ones meet them.
    key(i * (COLD / HOT) + 1)
}

#[test]
fn no_get_returns_a_version_older_than_one_acknowledged_before_it() {
    let fs = FaultFs::new();
    let db = Arc::new(on(&fs).open("/db", tiered(Path::new("/"))).expect("open"));
    let w = WriteOptions::default();
    // Every key once, then the cold ones again until the hot keys sit in the slow tier.
    let counters = Arc::new(Counters {
        acked: (0..HOT).map(|_| AtomicU64::new(1)).collect(),
        started: (0..HOT).map(|_| AtomicU64::new(1)).collect(),
    });
    for i in 0..HOT {
        db.put(&w, &hot_key(i), &value(1)).expect("put");
    }
    for round in 0..3u64 {
        for i in 0..COLD {
            if (i % (COLD / HOT)) != 1 {
                db.put(&w, &key(i), &value(round)).expect("put");
            }
        }
    }
    db.flush().expect("flush");
    db.wait_for_compactions().expect("idle");

    let stop = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + Duration::from_secs(6);
    let mut threads = Vec::new();
    // A writer of hot keys: each update is acknowledged before the next begins.
    {
        let (db, c, stop) = (Arc::clone(&db), Arc::clone(&counters), Arc::clone(&stop));
        threads.push(std::thread::spawn(move || {
            let w = WriteOptions::default();
            let mut n = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let i = (n * 7) % HOT;
                n += 1;
                let next = c.started[i as usize].fetch_add(1, Ordering::SeqCst) + 1;
                db.put(&w, &hot_key(i), &value(next)).expect("put");
                c.acked[i as usize].store(next, Ordering::SeqCst);
                std::thread::sleep(Duration::from_micros(300));
            }
            0
        }));
    }
    // A writer of cold keys, so that compactions keep moving tables down.
    {
        let (db, stop) = (Arc::clone(&db), Arc::clone(&stop));
        threads.push(std::thread::spawn(move || {
            let w = WriteOptions::default();
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let i = (n * 13 % u64::from(COLD)) as u32;
                n += 1;
                if i % (COLD / HOT) != 1 {
                    db.put(&w, &key(i), &value(n)).expect("put");
                }
            }
            n
        }));
    }
    // Readers of the hot keys: fill the cache, check every answer.
    for t in 0..2u32 {
        let (db, c, stop) = (Arc::clone(&db), Arc::clone(&counters), Arc::clone(&stop));
        threads.push(std::thread::spawn(move || {
            let r = ReadOptions::default();
            let mut n = t;
            let mut reads = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let i = (n * 5) % HOT;
                n += 1;
                let floor = c.acked[i as usize].load(Ordering::SeqCst);
                let got = db.get(&r, &hot_key(i)).expect("get").expect("present");
                let got = counter(&got);
                assert!(
                    got >= floor,
                    "key {i}: read {got} after {floor} was acknowledged"
                );
                reads += 1;
            }
            reads
        }));
    }
    // A snapshot reader: the same answer for as long as the snapshot lives.
    {
        let (db, c, stop) = (Arc::clone(&db), Arc::clone(&counters), Arc::clone(&stop));
        threads.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let lows: Vec<u64> = c.acked.iter().map(|a| a.load(Ordering::SeqCst)).collect();
                let snap = db.snapshot();
                let highs: Vec<u64> = c.started.iter().map(|a| a.load(Ordering::SeqCst)).collect();
                let at = ReadOptions::default().with_snapshot(snap);
                let first: Vec<u64> = (0..HOT)
                    .map(|i| counter(&db.get(&at, &hot_key(i)).expect("get").expect("present")))
                    .collect();
                for i in 0..HOT as usize {
                    assert!(
                        (lows[i]..=highs[i]).contains(&first[i]),
                        "snapshot read {} of key {i}, not in {}..={}",
                        first[i],
                        lows[i],
                        highs[i]
                    );
                }
                for _ in 0..20 {
                    std::thread::sleep(Duration::from_millis(5));
                    for i in 0..HOT {
                        let again = db.get(&at, &hot_key(i)).expect("get").expect("present");
                        assert_eq!(counter(&again), first[i as usize], "key {i} at a snapshot");
                    }
                }
            }
            0
        }));
    }
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().expect("a thread failed");
    }
    db.wait_for_compactions().expect("idle");
    let figures = db.stats().tree_hooks;
    let figure = |name: &str| {
        figures
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |(_, v)| *v)
    };
    println!("{figures:?}");
    // The race was run: copies were made, served and taken while keys changed.
    assert!(figure("cache_inserts") > 0, "{figures:?}");
    assert!(figure("gets_cache") > 0, "{figures:?}");
    assert!(figure("cache_registrations") > 0, "{figures:?}");
    assert!(figure("cache_seals") > 0, "{figures:?}");
    assert!(figure("promotion_flushes") > 0, "{figures:?}");
    // Every hot key reads its last acknowledged version once the writers stop.
    let r = ReadOptions::default();
    for i in 0..HOT {
        let got = db.get(&r, &hot_key(i)).expect("get").expect("present");
        assert_eq!(
            counter(&got),
            counters.acked[i as usize].load(Ordering::SeqCst)
        );
    }
    match Arc::try_unwrap(db) {
        Ok(db) => db.close().expect("close"),
        Err(_) => panic!("a thread kept the database"),
    }
}
