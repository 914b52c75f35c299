//! One stress thread: random puts, deletes, batches, gets, scans and snapshot reads,
//! each read checked against the expected state.
//!
//! Thread `t` of `n` owns the keys `k` with `k % n == t` and is the only writer of
//! them (expected-state invariant 1), so its reads of its own keys have exactly one
//! right answer. Scans cross every thread's keys: the owner's keys in the range must be
//! exactly the expected ones; other threads' keys must carry a well-formed value of
//! their own key. A snapshot records the expected state of a range of its own keys and
//! is read again (by `get` and by a scan) after more writes.
//!
//! Column families: each operation picks one family at random and works in it (its
//! keys, its expected slots); a batch picks a family per update, so most batches span
//! families and must land in all of them or in none. Transactions stay in the default
//! family (transactions over families are checked by the library's
//! `tests/transaction_conflicts.rs`). Ownership is by key number, the same in every
//! family.
//!
//! Every write follows the same protocol: [`ExpectedState::begin`] for each key, the
//! database write, [`ExpectedState::commit`] for each key, then the acknowledged-write
//! counter. A kill anywhere leaves each key settled or in flight (see
//! [`super::expected`]). A transaction begins its keys just before its commit; a commit
//! that lost a conflict wrote nothing, so its keys are settled back on their current
//! values ([`ExpectedState::resolve`]).

use super::expected::{ExpectedState, MAX_VALUE_ID};
use super::keyspace;
use super::space::SpaceWatch;
use super::StressArgs;
use crate::error::{CliError, Result};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use strata::{
    CfHandle, Db, ErrorKind, ReadOptions, Snapshot, TransactionOptions, WriteBatch, WriteOptions,
};

/// Longest key range of a scan or a snapshot check.
const MAX_RANGE: u64 = 64;
/// Most updates in one batch.
const MAX_BATCH: usize = 8;

/// Operations one thread ran.
#[derive(Clone, Debug, Default)]
pub struct ThreadStats {
    /// Single puts.
    pub puts: u64,
    /// Single merges (counter keys).
    pub merges: u64,
    /// Single deletes.
    pub deletes: u64,
    /// Range deletions.
    pub range_deletes: u64,
    /// Batches.
    pub batches: u64,
    /// Batches whose updates spanned more than one column family.
    pub cross_family_batches: u64,
    /// Committed transactions.
    pub transactions: u64,
    /// Commits that lost a conflict (and were run again).
    pub txn_conflicts: u64,
    /// Transactions rolled back on purpose.
    pub txn_rollbacks: u64,
    /// Point reads.
    pub gets: u64,
    /// Range scans.
    pub scans: u64,
    /// Snapshots taken and checked.
    pub snapshot_checks: u64,
    /// Manual flushes.
    pub flushes: u64,
    /// Manual range compactions.
    pub compactions: u64,
    /// Operations refused with `NoSpace` (`--on_no_space=wait`): they wrote nothing.
    pub no_space_refused: u64,
}

impl ThreadStats {
    /// Sum of two tallies.
    pub fn add(&mut self, o: &ThreadStats) {
        self.puts += o.puts;
        self.merges += o.merges;
        self.deletes += o.deletes;
        self.range_deletes += o.range_deletes;
        self.batches += o.batches;
        self.cross_family_batches += o.cross_family_batches;
        self.transactions += o.transactions;
        self.txn_conflicts += o.txn_conflicts;
        self.txn_rollbacks += o.txn_rollbacks;
        self.gets += o.gets;
        self.scans += o.scans;
        self.snapshot_checks += o.snapshot_checks;
        self.flushes += o.flushes;
        self.compactions += o.compactions;
        self.no_space_refused += o.no_space_refused;
    }

    /// Every operation counted.
    pub fn ops(&self) -> u64 {
        self.writes()
            + self.txn_rollbacks
            + self.gets
            + self.scans
            + self.snapshot_checks
            + self.flushes
            + self.compactions
    }

    /// Writes acknowledged (puts, merges, deletes, range deletions, batches, committed
    /// transactions).
    pub fn writes(&self) -> u64 {
        self.puts
            + self.merges
            + self.deletes
            + self.range_deletes
            + self.batches
            + self.transactions
    }
}

/// What a worker shares with the others.
pub struct Shared<'a> {
    /// The database.
    pub db: &'a Db,
    /// Its column families, family `f` of the expected state at index `f`.
    pub cfs: &'a [CfHandle],
    /// The expected state.
    pub st: &'a ExpectedState,
    /// The command line.
    pub args: &'a StressArgs,
    /// Stop when passed.
    pub deadline: Option<Instant>,
    /// Set by the first failing thread; every thread stops at its next operation.
    pub stop: &'a AtomicBool,
    /// Full-disk refusals of every thread (`--on_no_space=wait`).
    pub space: &'a SpaceWatch,
}

/// A snapshot taken earlier, with what it must show.
struct HeldSnapshot {
    snap: Snapshot,
    /// The family it reads.
    f: usize,
    /// `(key, value id)` of the owned keys in the range at snapshot time.
    expected: Vec<(u64, Option<u32>)>,
    start: u64,
    end: u64,
    check_at: u64,
}

struct Worker<'a> {
    sh: &'a Shared<'a>,
    t: u64,
    threads: u64,
    owned: u64,
    max_len: usize,
    wo: WriteOptions,
    rng: StdRng,
    stats: ThreadStats,
    held: Option<HeldSnapshot>,
}

/// Keys below `max_key` that thread `t` of `threads` owns (whole blocks, and the part
/// of the last one below `max_key`).
fn owned_count(t: u64, threads: u64, max_key: u64) -> u64 {
    (t..)
        .step_by(threads as usize)
        .map(|b| b * keyspace::BLOCK)
        .take_while(|&first| first < max_key)
        .map(|first| keyspace::BLOCK.min(max_key - first))
        .sum()
}

/// Runs thread `t` until its operation budget or the deadline, or until another thread
/// fails.
///
/// # Errors
/// [`CliError::Mismatch`] for a wrong read; engine and expected-state I/O errors.
pub fn run(sh: &Shared<'_>, t: usize, seed: u64) -> Result<ThreadStats> {
    let threads = sh.args.threads as u64;
    let max_key = sh.st.max_key();
    let t = t as u64;
    let mut w = Worker {
        sh,
        t,
        threads,
        owned: owned_count(t, threads, max_key),
        max_len: sh.st.value_size() as usize,
        wo: WriteOptions::default().with_sync(sh.args.engine.sync),
        rng: StdRng::seed_from_u64(seed ^ (t.wrapping_add(1)).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        stats: ThreadStats::default(),
        held: None,
    };
    let result = w.run_ops();
    if result.is_err() {
        sh.stop.store(true, Ordering::Relaxed);
    }
    result.map(|()| w.stats)
}

impl<'a> Worker<'a> {
    fn run_ops(&mut self) -> Result<()> {
        let a = self.sh.args;
        let mut n = 0u64;
        while (a.ops_per_thread == 0 || n < a.ops_per_thread)
            && self.sh.deadline.is_none_or(|d| Instant::now() < d)
            && !self.sh.stop.load(Ordering::Relaxed)
        {
            n += 1;
            self.one_op(n)?;
        }
        if let Some(h) = self.held.take() {
            self.check_snapshot(h)?;
        }
        Ok(())
    }

    /// A random column family.
    fn family(&mut self) -> usize {
        self.rng.random_range(0..self.sh.cfs.len())
    }

    /// The handle of family `f`. Requires: `f < cfs.len()` (every `f` comes from
    /// [`Self::family`] or a loop over the families).
    fn cf(&self, f: usize) -> &'a CfHandle {
        let cfs: &'a [CfHandle] = self.sh.cfs;
        &cfs[f]
    }

    fn one_op(&mut self, n: u64) -> Result<()> {
        let a = self.sh.args;
        if a.flush_one_in > 0 && self.rng.random_range(0..a.flush_one_in) == 0 {
            // Half of the flushes are of one family, so families flush apart and their
            // WALs are released at different times.
            let flushed = if self.rng.random_bool(0.5) {
                self.sh.db.flush()
            } else {
                let f = self.family();
                self.sh.db.flush_cf(self.cf(f))
            };
            if !self.refused_for_space(flushed)? {
                self.stats.flushes += 1;
            }
            return Ok(());
        }
        if a.compact_range_one_in > 0 && self.rng.random_range(0..a.compact_range_one_in) == 0 {
            let f = self.family();
            let s = self.rng.random_range(0..self.sh.st.max_key());
            let e = (s + self.rng.random_range(1..=MAX_RANGE * 4)).min(self.sh.st.max_key() - 1);
            let compacted = self.sh.db.compact_range_cf(
                self.cf(f),
                Some(&keyspace::key(s)),
                Some(&keyspace::key(e)),
            );
            if !self.refused_for_space(compacted)? {
                self.stats.compactions += 1;
            }
            return Ok(());
        }
        if self.held.as_ref().is_some_and(|h| n >= h.check_at) {
            if let Some(h) = self.held.take() {
                self.check_snapshot(h)?;
            }
            return Ok(());
        }
        let mut r = self.rng.random_range(0..100u32);
        let mut pick = |pct: u32| {
            let hit = r < pct;
            r = r.saturating_sub(pct);
            hit
        };
        if pick(a.put_pct) {
            self.put()
        } else if pick(a.merge_pct) {
            self.merge()
        } else if pick(a.delete_pct) {
            self.delete()
        } else if pick(a.delete_range_pct) {
            self.delete_range()
        } else if pick(a.batch_pct) {
            self.batch()
        } else if pick(a.txn_pct) {
            self.transaction()
        } else if pick(a.get_pct) {
            self.get()
        } else if pick(a.scan_pct) {
            self.scan()
        } else {
            self.take_snapshot(n);
            Ok(())
        }
    }

    /// A random key this thread owns.
    fn own_key(&mut self) -> u64 {
        let i = self.rng.random_range(0..self.owned);
        let block = self.t + self.threads * (i / keyspace::BLOCK);
        block * keyspace::BLOCK + i % keyspace::BLOCK
    }

    /// A value id different from the current one of family `f`'s key `k`.
    fn new_id(&mut self, f: usize, k: u64) -> u32 {
        let cur = self.sh.st.get(f, k).current;
        loop {
            let id = self.rng.random_range(1..=MAX_VALUE_ID);
            if Some(id) != cur {
                return id;
            }
        }
    }

    /// Commits the `(family, key)` pairs of an acknowledged write.
    fn acked(&mut self, keys: &[(usize, u64)]) -> Result<()> {
        for &(f, k) in keys {
            self.sh.st.commit(f, k)?;
        }
        self.sh.st.count_acked(self.t as usize)
    }

    /// Settles the `(family, key)` pairs of a write on its outcome: committed if it
    /// was acknowledged (true); with `--on_no_space=wait`, a write refused for a full
    /// disk wrote nothing, so its keys are settled back on their current values, the
    /// refusal is counted and the thread pauses before its next operation (false).
    ///
    /// # Errors
    /// Any other engine error; expected-state I/O errors.
    fn settle(&mut self, written: strata::Result<()>, keys: &[(usize, u64)]) -> Result<bool> {
        if !self.refused_for_space(written)? {
            self.acked(keys)?;
            return Ok(true);
        }
        for &(f, k) in keys {
            self.sh.st.resolve(f, k, self.sh.st.get(f, k).current)?;
        }
        Ok(false)
    }

    /// True iff `result` is a full-disk refusal that `--on_no_space=wait` tolerates
    /// (counted, then a pause); false for success.
    ///
    /// # Errors
    /// Any other engine error, and every error without `--on_no_space=wait`.
    fn refused_for_space(&mut self, result: strata::Result<()>) -> Result<bool> {
        match result {
            Ok(()) => {
                self.sh.space.accepted();
                Ok(false)
            }
            Err(e) if e.kind() == ErrorKind::NoSpace && self.sh.args.on_no_space.waits() => {
                self.stats.no_space_refused += 1;
                self.sh.space.refused();
                Ok(true)
            }
            Err(e) => Err(e.into()),
        }
    }

    fn put(&mut self) -> Result<()> {
        let f = self.family();
        let k = self.own_key();
        let id = self.new_id(f, k);
        self.sh.st.begin(f, k, Some(id))?;
        let written = self.sh.db.put_cf(
            &self.wo,
            self.cf(f),
            &keyspace::key(k),
            &keyspace::value(k, id, self.max_len),
        );
        if self.settle(written, &[(f, k)])? {
            self.stats.puts += 1;
        }
        Ok(())
    }

    /// A merge moving a counter key this thread owns to a new id (a put if the
    /// thread owns no counter key).
    fn merge(&mut self) -> Result<()> {
        let Some(k) = (0..64)
            .map(|_| self.own_key())
            .find(|&k| keyspace::is_counter(k))
        else {
            return self.put();
        };
        let f = self.family();
        let from = self.sh.st.get(f, k).current;
        let id = self.new_id(f, k);
        self.sh.st.begin(f, k, Some(id))?;
        let written = self.sh.db.merge_cf(
            &self.wo,
            self.cf(f),
            &keyspace::key(k),
            &keyspace::counter_operand(from, id),
        );
        if self.settle(written, &[(f, k)])? {
            self.stats.merges += 1;
        }
        Ok(())
    }

    /// A range deletion of 1-16 keys this thread owns: from an owned key to at most
    /// the end of its block (`keyspace::BLOCK`).
    fn delete_range(&mut self) -> Result<()> {
        let k = self.own_key();
        let block_end = (k / keyspace::BLOCK + 1) * keyspace::BLOCK;
        let end = (k + self.rng.random_range(1..=keyspace::BLOCK))
            .min(block_end)
            .min(self.sh.st.max_key());
        let f = self.family();
        let keys: Vec<(usize, u64)> = (k..end).map(|key| (f, key)).collect();
        for &(f, key) in &keys {
            self.sh.st.begin(f, key, None)?;
        }
        let written = self.sh.db.delete_range_cf(
            &self.wo,
            self.cf(f),
            &keyspace::key(k),
            &keyspace::key(end),
        );
        if self.settle(written, &keys)? {
            self.stats.range_deletes += 1;
        }
        Ok(())
    }

    fn delete(&mut self) -> Result<()> {
        let f = self.family();
        let k = self.own_key();
        self.sh.st.begin(f, k, None)?;
        let written = self
            .sh
            .db
            .delete_cf(&self.wo, self.cf(f), &keyspace::key(k));
        if self.settle(written, &[(f, k)])? {
            self.stats.deletes += 1;
        }
        Ok(())
    }

    /// A batch of 2-8 updates, each in a family of its own choosing, so that most
    /// batches span families: a kill must leave all of a batch or none of it, in
    /// every family.
    fn batch(&mut self) -> Result<()> {
        let n = self.rng.random_range(2..=MAX_BATCH);
        let mut keys: Vec<(usize, u64)> = (0..n)
            .map(|_| {
                let f = self.family();
                (f, self.own_key())
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let mut b = WriteBatch::new();
        for &(f, k) in &keys {
            let cf = self.cf(f);
            if self.rng.random_range(0..5) == 0 {
                self.sh.st.begin(f, k, None)?;
                b.delete_cf(cf, &keyspace::key(k));
            } else {
                let from = self.sh.st.get(f, k).current;
                let id = self.new_id(f, k);
                self.sh.st.begin(f, k, Some(id))?;
                if keyspace::is_counter(k) && self.rng.random_bool(0.5) {
                    b.merge_cf(cf, &keyspace::key(k), &keyspace::counter_operand(from, id));
                } else {
                    b.put_cf(cf, &keyspace::key(k), &keyspace::value(k, id, self.max_len));
                }
            }
        }
        let written = self.sh.db.write(&self.wo, b);
        if !self.settle(written, &keys)? {
            return Ok(());
        }
        self.stats.batches += 1;
        if keys
            .iter()
            .any(|&(f, _)| Some(f) != keys.first().map(|&(f0, _)| f0))
        {
            self.stats.cross_family_batches += 1;
        }
        Ok(())
    }

    /// A transaction over 1-8 of this thread's keys, run until it commits or is rolled
    /// back on purpose. Its reads of its own keys are exact (no one else writes them),
    /// so only the read of another thread's key, made half of the time, may make the
    /// commit conflict; a conflict without one is a false conflict, a mismatch.
    fn transaction(&mut self) -> Result<()> {
        // The default family: Strata's transactions have no column families yet.
        const F: usize = 0;
        let n = self.rng.random_range(1..=MAX_BATCH);
        let mut keys: Vec<u64> = (0..n).map(|_| self.own_key()).collect();
        keys.sort_unstable();
        keys.dedup();
        let foreign = self
            .rng
            .random_bool(0.5)
            .then(|| self.rng.random_range(0..self.sh.st.max_key()));
        let ro = ReadOptions::default();
        loop {
            let mut txn = self.sh.db.transaction(&TransactionOptions::default());
            for &k in &keys {
                let v = txn.get_for_update(&ro, &keyspace::key(k))?;
                let found = self.identify("transaction get_for_update", k, v)?;
                self.expect(
                    "transaction get_for_update",
                    k,
                    found,
                    self.sh.st.get(F, k).current,
                )?;
            }
            if let Some(f) = foreign {
                let v = txn.get_for_update(&ro, &keyspace::key(f))?;
                self.identify("transaction get_for_update", f, v)?;
            }
            let mut writes = Vec::with_capacity(keys.len());
            for &k in &keys {
                let id = (self.rng.random_range(0..5) != 0).then(|| self.new_id(F, k));
                match id {
                    Some(id) => {
                        txn.put(&keyspace::key(k), &keyspace::value(k, id, self.max_len))?
                    }
                    None => txn.delete(&keyspace::key(k))?,
                }
                writes.push((k, id));
            }
            for &(k, id) in &writes {
                let v = txn.get(&ro, &keyspace::key(k))?;
                let found = self.identify("transaction get of its own write", k, v)?;
                self.expect("transaction get of its own write", k, found, id)?;
            }
            if self.rng.random_range(0..10) == 0 {
                txn.rollback();
                self.stats.txn_rollbacks += 1;
                return Ok(());
            }
            for &(k, id) in &writes {
                self.sh.st.begin(F, k, id)?;
            }
            match txn.commit(&self.wo) {
                Ok(()) => {
                    let keys: Vec<(usize, u64)> = keys.iter().map(|&k| (F, k)).collect();
                    self.acked(&keys)?;
                    self.stats.transactions += 1;
                    return Ok(());
                }
                Err(e) if e.kind() == ErrorKind::NoSpace => {
                    let keys: Vec<(usize, u64)> = keys.iter().map(|&k| (F, k)).collect();
                    // Refused for a full disk: nothing written, keys settled back.
                    self.settle(Err(e), &keys)?;
                    return Ok(());
                }
                Err(e) if e.kind() == ErrorKind::Conflict => {
                    for &k in &keys {
                        self.sh.st.resolve(F, k, self.sh.st.get(F, k).current)?;
                    }
                    if foreign.is_none() {
                        return Err(self.mismatch(format!(
                            "a transaction over its own keys only conflicted: {e}"
                        )));
                    }
                    self.stats.txn_conflicts += 1;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The value id `v` (a read of key `k`) stands for, or a mismatch.
    fn identify(&self, what: &str, k: u64, v: Option<Vec<u8>>) -> Result<Option<u32>> {
        match v {
            None => Ok(None),
            Some(v) => keyspace::identify(k, &v, self.max_len)
                .map(Some)
                .map_err(|e| self.mismatch(format!("{what} of key {k} returned a {e}"))),
        }
    }

    fn mismatch(&self, msg: String) -> CliError {
        CliError::Mismatch(format!("thread {}: {msg}", self.t))
    }

    fn expect(&self, what: &str, k: u64, found: Option<u32>, want: Option<u32>) -> Result<()> {
        if found == want {
            return Ok(());
        }
        let d = |x: Option<u32>| match x {
            None => "absent".to_string(),
            Some(id) => format!("value id {id}"),
        };
        Err(self.mismatch(format!(
            "{what} of key {k} found {} but expected {}",
            d(found),
            d(want)
        )))
    }

    fn get(&mut self) -> Result<()> {
        let f = self.family();
        let k = self.own_key();
        let v = self
            .sh
            .db
            .get_cf(&ReadOptions::default(), self.cf(f), &keyspace::key(k))?;
        let what = format!("get in family {}", self.cf(f).name());
        let found = self.identify(&what, k, v)?;
        self.expect(&what, k, found, self.sh.st.get(f, k).current)?;
        self.stats.gets += 1;
        Ok(())
    }

    /// A random key range `[start, end)` of at most [`MAX_RANGE`] keys.
    fn range(&mut self) -> (u64, u64) {
        let max = self.sh.st.max_key();
        let s = self.rng.random_range(0..max);
        (s, (s + self.rng.random_range(1..=MAX_RANGE)).min(max))
    }

    /// Reads `[start, end)` of family `f` by an iterator (forward or reverse, chosen at
    /// random) as of `snap` (or now); returns `(key, value id)` in ascending order.
    /// Every key must be in the range, in order, and carry a well-formed value of its
    /// own.
    fn read_range(
        &mut self,
        f: usize,
        start: u64,
        end: u64,
        snap: Option<&Snapshot>,
    ) -> Result<Vec<(u64, u32)>> {
        let ro = ReadOptions::default()
            .with_snapshot(snap.cloned())
            .with_lower_bound(keyspace::key(start))
            .with_upper_bound(keyspace::key(end));
        let reverse = self.rng.random_bool(0.5);
        let mut it = self.sh.db.iter_cf(&ro, self.cf(f))?;
        if reverse {
            it.seek_to_last();
        } else {
            it.seek_to_first();
        }
        let mut out: Vec<(u64, u32)> = Vec::new();
        while it.valid() {
            let k = keyspace::parse_key(it.key())
                .filter(|k| (start..end).contains(k))
                .ok_or_else(|| {
                    self.mismatch(format!(
                        "scan of [{start}, {end}) returned key `{}`",
                        String::from_utf8_lossy(it.key())
                    ))
                })?;
            let id = keyspace::identify(k, it.value(), self.max_len)
                .map_err(|e| self.mismatch(format!("scan of key {k} returned a {e}")))?;
            let in_order = out
                .last()
                .is_none_or(|&(prev, _)| if reverse { k < prev } else { k > prev });
            if !in_order {
                return Err(self.mismatch(format!(
                    "scan of [{start}, {end}) returned key {k} out of order"
                )));
            }
            out.push((k, id));
            if reverse {
                it.prev();
            } else {
                it.next();
            }
        }
        it.status()?;
        if reverse {
            out.reverse();
        }
        Ok(out)
    }

    /// The owned keys of `[start, end)`.
    fn owned_in(&self, start: u64, end: u64) -> impl Iterator<Item = u64> + use<> {
        let (t, n) = (self.t, self.threads);
        (start..end).filter(move |&k| keyspace::owner(k, n) == t)
    }

    /// Checks that `got` (a scan) holds exactly `want` for the owned keys.
    fn expect_owned(
        &self,
        what: &str,
        got: &[(u64, u32)],
        want: &[(u64, Option<u32>)],
    ) -> Result<()> {
        let mut got_owned = got
            .iter()
            .filter(|&&(k, _)| keyspace::owner(k, self.threads) == self.t)
            .peekable();
        for &(k, w) in want {
            let found = match got_owned.peek() {
                Some(&&(gk, id)) if gk == k => {
                    got_owned.next();
                    Some(id)
                }
                _ => None,
            };
            self.expect(what, k, found, w)?;
        }
        if let Some(&(k, id)) = got_owned.next() {
            return Err(self.mismatch(format!(
                "{what} returned key {k} (value id {id}) twice or unasked"
            )));
        }
        Ok(())
    }

    fn scan(&mut self) -> Result<()> {
        let f = self.family();
        let (s, e) = self.range();
        let got = self.read_range(f, s, e, None)?;
        let want: Vec<(u64, Option<u32>)> = self
            .owned_in(s, e)
            .map(|k| (k, self.sh.st.get(f, k).current))
            .collect();
        self.expect_owned(
            &format!("scan of family {}", self.cf(f).name()),
            &got,
            &want,
        )?;
        self.stats.scans += 1;
        Ok(())
    }

    fn take_snapshot(&mut self, n: u64) {
        let f = self.family();
        let (start, end) = self.range();
        let snap = self.sh.db.snapshot();
        let expected = self
            .owned_in(start, end)
            .map(|k| (k, self.sh.st.get(f, k).current))
            .collect();
        let check_at = n + self.rng.random_range(10..200);
        self.held = Some(HeldSnapshot {
            snap,
            f,
            expected,
            start,
            end,
            check_at,
        });
    }

    fn check_snapshot(&mut self, h: HeldSnapshot) -> Result<()> {
        let ro = ReadOptions::default().with_snapshot(h.snap.clone());
        for &(k, want) in &h.expected {
            let v = self.sh.db.get_cf(&ro, self.cf(h.f), &keyspace::key(k))?;
            let what = format!("snapshot get in family {}", self.cf(h.f).name());
            let found = self.identify(&what, k, v)?;
            self.expect(&what, k, found, want)?;
        }
        let got = self.read_range(h.f, h.start, h.end, Some(&h.snap))?;
        let what = format!("snapshot scan of family {}", self.cf(h.f).name());
        self.expect_owned(&what, &got, &h.expected)?;
        self.stats.snapshot_checks += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of 16 keys dealt round-robin: the counts add up to the key space and
    /// every key has exactly one owner.
    #[test]
    fn every_key_has_one_owner_and_the_counts_add_up() {
        for (threads, max_key) in [(1, 5), (3, 48), (3, 100), (4, 2000), (7, 113)] {
            let counts: Vec<u64> = (0..threads)
                .map(|t| owned_count(t, threads, max_key))
                .collect();
            assert_eq!(counts.iter().sum::<u64>(), max_key, "{threads} {max_key}");
            for (t, &c) in counts.iter().enumerate() {
                let owned = (0..max_key)
                    .filter(|&k| keyspace::owner(k, threads) == t as u64)
                    .count();
                assert_eq!(owned as u64, c, "{threads} {max_key} thread {t}");
            }
        }
    }
}
