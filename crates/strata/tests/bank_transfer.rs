//! Bank transfers in optimistic transactions (issue 13): threads move random amounts
//! between accounts, each transfer a transaction that reads both balances with
//! `get_for_update`, writes both and a journal entry, and is retried on `Conflict`.
//! Some transfers are rolled back on purpose, some are dropped, some lose a conflict.
//! Meanwhile a checker takes snapshots and checks, through an iterator (both
//! directions), point reads and a read-only transaction's iterator, that the total
//! never changes; and tiny memtables plus explicit flushes and compactions move the
//! concurrent writes into tables, so conflicts must be found there. At the end, and
//! again after a reopen: the total holds, the journal holds exactly the committed
//! transfers (nothing of a rolled-back or failed one), and replaying it gives every
//! balance.
//!
//! What it protects: skipping or narrowing the commit-time check (lost updates change
//! the total), a check not atomic with the write queue, a failed commit that leaves a
//! write behind, a transaction iterator that mixes snapshots.
//!
//! The seed is printed; `STRATA_SEED=<n>` replays the random choices (thread
//! interleavings are not replayable).

mod common;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use strata::env::FaultFs;
use strata::{Db, ErrorKind, Options, ReadOptions, TransactionOptions, WriteOptions};

const ACCOUNTS: u32 = 16;
const INITIAL: u64 = 1_000;
const TOTAL: u64 = ACCOUNTS as u64 * INITIAL;
const THREADS: u32 = 4;
const TRANSFERS_PER_THREAD: u32 = 500;

fn account(i: u32) -> Vec<u8> {
    format!("acct{i:02}").into_bytes()
}

fn journal(thread: u32, n: u32) -> Vec<u8> {
    format!("journal/{thread}/{n:05}").into_bytes()
}

/// A balance: the amount, padded so that memtables fill and flush often.
fn encode(amount: u64) -> Vec<u8> {
    let mut v = amount.to_le_bytes().to_vec();
    v.resize(64, b'.');
    v
}

fn decode(v: &[u8]) -> u64 {
    u64::from_le_bytes(v[..8].try_into().expect("8 bytes"))
}

/// A committed transfer, as the journal records it: from, to, amount.
type Transfer = (u32, u32, u64);

fn encode_transfer((from, to, amount): Transfer) -> Vec<u8> {
    format!("{from} {to} {amount}").into_bytes()
}

fn decode_transfer(v: &[u8]) -> Transfer {
    let s = std::str::from_utf8(v).expect("utf-8");
    let mut it = s.split(' ').map(|x| x.parse::<u64>().expect("number"));
    let (a, b, c) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
    (a as u32, b as u32, c)
}

fn accounts_range() -> ReadOptions {
    ReadOptions::default()
        .with_lower_bound(b"acct".to_vec())
        .with_upper_bound(b"acct~".to_vec())
}

fn seed() -> u64 {
    let seed = std::env::var("STRATA_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    eprintln!("bank_transfer seed {seed} (replay with STRATA_SEED={seed})");
    seed
}

fn options(pipelined: bool) -> Options {
    common::tiny_options()
        .with_max_background_jobs(3)
        .with_enable_pipelined_write(pipelined)
}

#[derive(Default)]
struct Counts {
    committed: AtomicU64,
    conflicts: AtomicU64,
    rolled_back: AtomicU64,
    checks: AtomicU64,
}

/// What one thread did: the transfers it committed, and the journal keys of the ones
/// that must have left no trace.
#[derive(Default)]
struct Outcome {
    /// Journal key → transfer.
    committed: BTreeMap<Vec<u8>, Transfer>,
    /// The per-attempt keys of the committed attempts.
    committed_attempts: BTreeSet<Vec<u8>>,
    abandoned: BTreeSet<Vec<u8>>,
}

/// One transfer, retried until it commits or is rolled back on purpose.
fn transfer(db: &Db, rng: &mut StdRng, thread: u32, n: u32, out: &mut Outcome, counts: &Counts) {
    let ro = ReadOptions::default();
    let wo = WriteOptions::default();
    let from = rng.random_range(0..ACCOUNTS);
    let to = (from + rng.random_range(1..ACCOUNTS)) % ACCOUNTS;
    for attempt in 0.. {
        let key = journal(thread, n);
        let attempt_key = [key.as_slice(), format!("/try{attempt}").as_bytes()].concat();
        let mut txn = db.transaction(&TransactionOptions::default());
        let a = decode(
            &txn.get_for_update(&ro, &account(from))
                .unwrap()
                .expect("account"),
        );
        let b = decode(
            &txn.get_for_update(&ro, &account(to))
                .unwrap()
                .expect("account"),
        );
        let amount = rng.random_range(0..=a.min(50));
        txn.put(&account(from), &encode(a - amount)).unwrap();
        txn.put(&account(to), &encode(b + amount)).unwrap();
        // A journal key per attempt too: a failed attempt must leave none behind.
        txn.put(&attempt_key, b"attempt").unwrap();
        txn.put(&key, &encode_transfer((from, to, amount))).unwrap();
        // The transaction reads its own writes.
        assert_eq!(
            txn.get(&ro, &account(to)).unwrap().map(|v| decode(&v)),
            Some(b + amount)
        );
        match rng.random_range(0..100u32) {
            0..=4 => {
                txn.rollback();
                out.abandoned.insert(key);
                out.abandoned.insert(attempt_key);
                counts.rolled_back.fetch_add(1, Ordering::Relaxed);
                return;
            }
            5..=7 => {
                drop(txn);
                out.abandoned.insert(key);
                out.abandoned.insert(attempt_key);
                counts.rolled_back.fetch_add(1, Ordering::Relaxed);
                return;
            }
            // Give the others time to commit, and push their writes into tables.
            8..=15 => db.flush().unwrap(),
            16..=25 => std::thread::yield_now(),
            _ => {}
        }
        match txn.commit(&wo) {
            Ok(()) => {
                out.committed.insert(key, (from, to, amount));
                out.committed_attempts.insert(attempt_key);
                counts.committed.fetch_add(1, Ordering::Relaxed);
                return;
            }
            Err(e) if e.kind() == ErrorKind::Conflict => {
                out.abandoned.insert(attempt_key);
                counts.conflicts.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => panic!("thread {thread} transfer {n}: {e}"),
        }
    }
}

/// Checks the total at one snapshot, three ways.
fn check_total(db: &Db, rng: &mut StdRng) {
    let snapshot = db.snapshot();
    let ro = accounts_range().with_snapshot(snapshot.clone());
    let mut it = db.iter(&ro).unwrap();
    let forward = rng.random_bool(0.5);
    let (mut n, mut total) = (0, 0);
    if forward {
        it.seek_to_first();
    } else {
        it.seek_to_last();
    }
    while it.valid() {
        n += 1;
        total += decode(it.value());
        if forward {
            it.next();
        } else {
            it.prev();
        }
    }
    it.status().unwrap();
    assert_eq!((n, total), (ACCOUNTS, TOTAL), "iterator at {snapshot:?}");

    let ro = ReadOptions::default().with_snapshot(snapshot.clone());
    let total: u64 = (0..ACCOUNTS)
        .map(|i| decode(&db.get(&ro, &account(i)).unwrap().expect("account")))
        .sum();
    assert_eq!(total, TOTAL, "gets at {snapshot:?}");

    // A read-only transaction's iterator, over its own (empty) writes.
    let txn = db.transaction(&TransactionOptions::default());
    let mut it = txn.iter(&accounts_range()).unwrap();
    let mut total = 0;
    it.seek_to_last();
    while it.valid() {
        total += decode(it.value());
        it.prev();
    }
    it.status().unwrap();
    assert_eq!(total, TOTAL, "transaction iterator at {:?}", txn.snapshot());
}

/// The final state: total, journal exactly the committed transfers, balances replayed.
fn check_final(db: &Db, outcomes: &[Outcome]) {
    let ro = ReadOptions::default();
    // Replayed per thread, not in commit order: a balance may dip below zero midway.
    let mut balances = vec![INITIAL as i64; ACCOUNTS as usize];
    for out in outcomes {
        for (key, transfer) in &out.committed {
            let got = db.get(&ro, key).unwrap();
            let got = got.unwrap_or_else(|| panic!("committed {} missing", key.escape_ascii()));
            let (from, to, amount) = decode_transfer(&got);
            assert_eq!((from, to, amount), *transfer);
            balances[from as usize] -= amount as i64;
            balances[to as usize] += amount as i64;
        }
        for key in &out.committed_attempts {
            let got = db.get(&ro, key).unwrap();
            assert_eq!(
                got.as_deref(),
                Some(&b"attempt"[..]),
                "{}",
                key.escape_ascii()
            );
        }
        for key in &out.abandoned {
            assert_eq!(
                db.get(&ro, key).unwrap(),
                None,
                "trace of {}",
                key.escape_ascii()
            );
        }
    }
    for (i, want) in balances.iter().enumerate() {
        let got = decode(&db.get(&ro, &account(i as u32)).unwrap().expect("account"));
        assert_eq!(got as i64, *want, "account {i}");
    }
    assert_eq!(balances.iter().sum::<i64>(), TOTAL as i64);
    let journal_keys = {
        let ro = ReadOptions::default()
            .with_lower_bound(b"journal/".to_vec())
            .with_upper_bound(b"journal0".to_vec());
        let mut it = db.iter(&ro).unwrap();
        it.seek_to_first();
        let mut n = 0;
        while it.valid() {
            n += 1;
            it.next();
        }
        it.status().unwrap();
        n
    };
    let committed: usize = outcomes
        .iter()
        .map(|o| o.committed.len() + o.committed_attempts.len())
        .sum();
    assert_eq!(
        journal_keys, committed,
        "the journal holds exactly the commits"
    );
}

fn run(pipelined: bool) {
    let seed = seed();
    let fs = FaultFs::new();
    let open = || {
        Db::builder()
            .file_system(Arc::new(fs.clone()))
            .open("/db", options(pipelined))
            .expect("open")
    };
    let db = open();
    let wo = WriteOptions::default();
    for i in 0..ACCOUNTS {
        db.put(&wo, &account(i), &encode(INITIAL)).unwrap();
    }
    let counts = Counts::default();
    let stop = AtomicBool::new(false);
    let outcomes = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (db, counts, outcomes) = (&db, &counts, &outcomes);
                s.spawn(move || {
                    let mut rng = StdRng::seed_from_u64(seed ^ u64::from(t + 1) << 32);
                    let mut out = Outcome::default();
                    for n in 0..TRANSFERS_PER_THREAD {
                        transfer(db, &mut rng, t, n, &mut out, counts);
                    }
                    outcomes.lock().unwrap().push(out);
                })
            })
            .collect();
        s.spawn(|| {
            let mut rng = StdRng::seed_from_u64(seed);
            while !stop.load(Ordering::Relaxed) {
                check_total(&db, &mut rng);
                counts.checks.fetch_add(1, Ordering::Relaxed);
            }
        });
        s.spawn(|| {
            let mut rounds = 0u32;
            while !stop.load(Ordering::Relaxed) {
                rounds += 1;
                if rounds.is_multiple_of(5) {
                    db.compact_range(None, None).unwrap();
                } else {
                    db.flush().unwrap();
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        });
        for w in workers {
            w.join().unwrap();
        }
        stop.store(true, Ordering::Relaxed);
    });
    let outcomes = outcomes.into_inner().unwrap();
    let c = |a: &AtomicU64| a.load(Ordering::Relaxed);
    eprintln!(
        "seed {seed} pipelined={pipelined}: committed {} conflicts {} rolled back {} checks {} L0.. {:?}",
        c(&counts.committed),
        c(&counts.conflicts),
        c(&counts.rolled_back),
        c(&counts.checks),
        db.stats().levels.iter().map(|l| l.files).collect::<Vec<_>>()
    );
    assert!(c(&counts.conflicts) > 0, "the run must exercise conflicts");
    assert!(c(&counts.checks) > 0);
    assert_eq!(
        c(&counts.committed) + c(&counts.rolled_back),
        u64::from(THREADS * TRANSFERS_PER_THREAD)
    );
    check_final(&db, &outcomes);
    check_total(&db, &mut StdRng::seed_from_u64(seed));
    db.close().unwrap();
    let db = open();
    check_final(&db, &outcomes);
    check_total(&db, &mut StdRng::seed_from_u64(seed));
}

#[test]
fn transfers_keep_the_total_with_pipelined_writes() {
    run(true);
}

#[test]
fn transfers_keep_the_total_without_pipelined_writes() {
    run(false);
}
