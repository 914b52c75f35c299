//! The benchmarks' worker loops.
//!
//! Role: [`run`] executes one benchmark on `--threads` scoped workers through
//! [`run_parallel`] and returns merged [`OpStats`]. Key and value streams are derived only
//! from `--seed`, the benchmark's position in `--benchmarks` and the thread index, so
//! every engine sees the same operations (db_bench also reseeds per benchmark, which is
//! why readrandom after fillrandom finds only ~63% of keys: fillrandom repeats keys).

use super::flags::{BenchArgs, Benchmark};
use super::floor::{with_hot, Hot};
use crate::engine::{BatchOp, Commit, Direction, EngineStats, KvEngine, Scan};
use crate::error::Result;
use crate::runner::{run_parallel, Budget, OpStats, Progress, PROGRESS_CHUNK};
use crate::values::ValueGenerator;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// What one benchmark measured.
#[derive(Debug)]
pub struct Outcome {
    /// Merged statistics of the measured threads.
    pub stats: OpStats,
    /// Wall time, seconds.
    pub seconds: f64,
    /// `(found, of)` for read benchmarks.
    pub found: Option<(u64, u64)>,
    /// Extra text for the report line (e.g. the writer's count in readwhilewriting).
    pub note: Option<String>,
}

/// A 64-bit mix (splitmix64 finalizer) to derive independent seeds.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of thread `tid` in the benchmark at position `index`.
pub fn thread_seed(seed: u64, index: usize, tid: usize) -> u64 {
    mix(seed ^ mix((index as u64) << 32 | tid as u64))
}

/// Holds one writer thread to `--benchmark_write_rate_limit`: after each operation it
/// sleeps until the bytes written so far are due, so an oversleep is made up by later
/// operations that do not sleep (the schedule is absolute, not per operation).
struct Pacer {
    start: Instant,
    bytes_per_sec: f64,
    bytes: u64,
}

impl Pacer {
    /// `None` without a limit; otherwise this thread's share of `limit` bytes/s.
    fn new(limit: u64, threads: usize) -> Option<Pacer> {
        (limit > 0).then(|| Pacer {
            start: Instant::now(),
            bytes_per_sec: limit as f64 / threads.max(1) as f64,
            bytes: 0,
        })
    }

    fn account(&mut self, bytes: usize) {
        self.bytes += bytes as u64;
        let due = Duration::from_secs_f64(self.bytes as f64 / self.bytes_per_sec);
        let elapsed = self.start.elapsed();
        if due > elapsed {
            std::thread::sleep(due - elapsed);
        }
    }
}

struct Ctx<'a> {
    engine: &'a dyn KvEngine,
    args: &'a BenchArgs,
    index: usize,
    /// Transactions that lost a conflict and ran again (`--transaction_db`).
    conflicts: AtomicU64,
    /// readrandomwriterandom: reads and writes done.
    reads: AtomicU64,
    writes: AtomicU64,
}

/// Runs benchmark `b` (at position `index` of `--benchmarks`). `None` for `stats`,
/// which measures nothing.
///
/// # Errors
/// The first engine error of any worker.
/// The operand of `mergerandom`: `+1` as `strata.u64_add` reads it.
const COUNTER_ONE: [u8; 8] = 1u64.to_le_bytes();

/// With `floor`, the timed loops call the peer's own handle instead of `engine`
/// (`bench --floor`, [`super::floor`]); the untimed benchmarks still go through
/// `engine`.
pub fn run(
    engine: &dyn KvEngine,
    floor: Option<crate::engine::Direct<'_>>,
    args: &BenchArgs,
    b: Benchmark,
    index: usize,
) -> Result<Option<Outcome>> {
    let ctx = Ctx {
        engine,
        args,
        index,
        conflicts: AtomicU64::new(0),
        reads: AtomicU64::new(0),
        writes: AtomicU64::new(0),
    };
    let threads = args.threads;
    let label = b.name();
    let writes = (args.duration == 0).then_some(args.num);
    let reads = (args.duration == 0).then_some(args.read_count());
    let outcome = match b {
        Benchmark::Fillseq
        | Benchmark::Fillrandom
        | Benchmark::Overwrite
        | Benchmark::Deleterandom
        | Benchmark::Mergerandom => {
            let (r, el) = with_hot!(floor, engine, |h| run_parallel(
                label,
                threads,
                writes,
                |tid, p| ctx.write(h, b, tid, p)
            ))?;
            let note = ctx
                .conflicts()
                .filter(|_| in_transactions(b))
                .map(|c| format!("(transactions: {c} conflicts retried)"));
            merged(r, el.as_secs_f64(), note)
        }
        Benchmark::Readrandomwriterandom => {
            let (r, el) = run_parallel(label, threads, reads, |tid, p| {
                ctx.read_write_random(tid, p)
            })?;
            let mut o = merged(r, el.as_secs_f64(), None);
            let reads = ctx.reads.load(Ordering::Relaxed);
            let writes = ctx.writes.load(Ordering::Relaxed);
            o.found = Some((o.stats.found, reads));
            let txn = ctx.conflicts().map_or(String::new(), |c| {
                format!(", transactions: {c} conflicts retried")
            });
            o.note = Some(format!("(reads: {reads}, writes: {writes}{txn})"));
            o
        }
        Benchmark::Deleteseq | Benchmark::Deleterange => {
            let width = if b == Benchmark::Deleterange {
                args.range_tombstone_width
            } else {
                1
            };
            let ops = args.delete_count().div_ceil(width);
            let (r, el) = run_parallel(label, threads, Some(ops), |tid, p| {
                ctx.delete_prefix(width, tid, p)
            })?;
            merged(r, el.as_secs_f64(), None)
        }
        Benchmark::Multireadrandom => {
            let (r, el) = run_parallel(label, threads, reads, |tid, p| {
                ctx.multi_read_random(tid, p)
            })?;
            let mut o = merged(r, el.as_secs_f64(), None);
            o.found = Some((o.stats.found, o.stats.ops));
            o.note = Some(format!("(batches of {})", args.batch_size.max(1)));
            o
        }
        Benchmark::Readrandom => {
            let (r, el) = with_hot!(floor, engine, |h| run_parallel(
                label,
                threads,
                reads,
                |tid, p| ctx.read_random(h, tid, p)
            ))?;
            let mut o = merged(r, el.as_secs_f64(), None);
            o.found = Some((o.stats.found, o.stats.ops));
            o
        }
        Benchmark::Readseq | Benchmark::Readreverse => {
            let dir = if b == Benchmark::Readseq {
                Direction::Forward
            } else {
                Direction::Reverse
            };
            let (r, el) = with_hot!(floor, engine, |h| run_parallel(
                label,
                threads,
                reads,
                |tid, p| ctx.read_seq(h, dir, tid, p)
            ))?;
            merged(r, el.as_secs_f64(), None)
        }
        Benchmark::Seekrandom => {
            let (r, el) = with_hot!(floor, engine, |h| run_parallel(
                label,
                threads,
                reads,
                |tid, p| ctx.seek_random(h, tid, p)
            ))?;
            let mut o = merged(r, el.as_secs_f64(), None);
            o.found = Some((o.stats.found, o.stats.ops));
            o
        }
        Benchmark::Rangescan => {
            let before = engine.stats();
            let scans = (args.duration == 0).then_some(args.scans);
            let (r, el) = run_parallel(label, threads, scans, |tid, p| ctx.range_scan(tid, p))?;
            let after = engine.stats();
            let mut o = merged(r, el.as_secs_f64(), None);
            o.note = Some(range_scan_note(&o.stats, &before, &after));
            o
        }
        Benchmark::Readwhilewriting => ctx.read_while_writing()?,
        Benchmark::Flush => single(|| engine.flush())?,
        Benchmark::Compact => single(|| engine.compact(None, None))?,
        Benchmark::Waitforcompaction => single(|| engine.wait_for_compactions())?,
        Benchmark::Stats => return Ok(None),
    };
    Ok(Some(outcome))
}

/// True iff `--transaction_db` runs `b`'s writes as transactions (the fills; also
/// readrandomwriterandom, in its own loop): puts, the kind every engine's transaction
/// takes.
fn in_transactions(b: Benchmark) -> bool {
    matches!(
        b,
        Benchmark::Fillseq | Benchmark::Fillrandom | Benchmark::Overwrite
    )
}

/// rangescan's note: entries returned, per scan, and the table bytes scans read per
/// scan (engines that count them: Strata's `table_bytes_read_by_scan`).
fn range_scan_note(stats: &OpStats, before: &EngineStats, after: &EngineStats) -> String {
    let scans = stats.ops.max(1) as f64;
    let table = match (
        before.counter("table_bytes_read_by_scan"),
        after.counter("table_bytes_read_by_scan"),
    ) {
        (Some(b), Some(a)) => format!("{:.0}", a.saturating_sub(b) as f64 / scans),
        _ => "n/a".to_string(),
    };
    format!(
        "({} entries, {:.1} per scan; table bytes read per scan: {table})",
        stats.found,
        stats.found as f64 / scans
    )
}

fn merged(parts: Vec<OpStats>, seconds: f64, note: Option<String>) -> Outcome {
    let mut stats = OpStats::default();
    for p in &parts {
        stats.merge(p);
    }
    Outcome {
        stats,
        seconds,
        found: None,
        note,
    }
}

fn single(op: impl FnOnce() -> Result<()>) -> Result<Outcome> {
    let start = Instant::now();
    op()?;
    let mut stats = OpStats::default();
    stats.record(start, 0);
    Ok(Outcome {
        seconds: start.elapsed().as_secs_f64(),
        stats,
        found: None,
        note: None,
    })
}

impl Ctx<'_> {
    /// With `--transaction_db`, how many transactions ran again after a conflict.
    fn conflicts(&self) -> Option<u64> {
        (self.args.engine.transaction_db).then(|| self.conflicts.load(Ordering::Relaxed))
    }

    /// Runs one transaction until it commits; returns how many of `read_for_update`
    /// were found.
    fn commit(&self, read_for_update: &[&[u8]], ops: &[BatchOp<'_>]) -> Result<usize> {
        loop {
            match self.engine.transaction(read_for_update, ops)? {
                Commit::Done { found } => return Ok(found),
                Commit::Conflict => {
                    self.conflicts.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// The value stream of thread `tid` (the same on every engine).
    fn values(&self, tid: usize) -> ValueGenerator {
        let a = self.args;
        ValueGenerator::new(
            thread_seed(a.seed, usize::MAX, tid),
            a.compression_ratio,
            a.value_size,
        )
    }

    fn rng(&self, tid: usize) -> SmallRng {
        SmallRng::seed_from_u64(thread_seed(self.args.seed, self.index, tid))
    }

    fn budget(&self, total: u64, threads: usize, tid: usize) -> Budget {
        Budget::split(total, threads, tid, self.args.duration)
    }

    /// deleteseq (`width` 1: one delete per key) and deleterange (one range tombstone
    /// per `width` keys) over keys `[0, --deletes)`; thread `tid` takes its own
    /// contiguous slice, as fillseq does.
    fn delete_prefix(&self, width: u64, tid: usize, progress: &Progress) -> Result<OpStats> {
        let a = self.args;
        let (total, threads) = (a.delete_count(), a.threads as u64);
        let tid = tid as u64;
        let begin = (total / threads) * tid + tid.min(total % threads);
        let end = begin + total / threads + u64::from(tid < total % threads);
        let fmt = a.key_format();
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        let mut stats = OpStats::default();
        let mut k = begin;
        while k < end {
            let next = (k + width).min(end);
            fmt.write(k, &mut lo);
            let start = if width == 1 {
                let start = Instant::now();
                self.engine.delete(&lo)?;
                start
            } else {
                fmt.write(next, &mut hi);
                let start = Instant::now();
                self.engine.delete_range(&lo, &hi)?;
                start
            };
            stats.record_n(start, 1, lo.len() + if width == 1 { 0 } else { hi.len() });
            progress.add(1);
            k = next;
        }
        Ok(stats)
    }

    /// fillseq, fillrandom, overwrite, deleterandom, mergerandom.
    fn write<H: Hot + ?Sized>(
        &self,
        engine: &H,
        b: Benchmark,
        tid: usize,
        progress: &Progress,
    ) -> Result<OpStats> {
        let a = self.args;
        let threads = a.threads;
        let budget = self.budget(a.num, threads, tid);
        // fillseq: thread `tid` writes its own contiguous slice of [0, num).
        let seq_start =
            (a.num / threads as u64) * tid as u64 + (tid as u64).min(a.num % threads as u64);
        let mut rng = self.rng(tid);
        let mut values = self.values(tid);
        let fmt = a.key_format();
        let batch = a.batch_size;
        // With --transaction_db each write (one batch) is a transaction.
        let txn = a.engine.transaction_db && in_transactions(b);
        let mut keys: Vec<Vec<u8>> = vec![Vec::with_capacity(a.key_size); batch];
        let mut vals: Vec<Vec<u8>> = vec![Vec::new(); if batch > 1 || txn { batch } else { 0 }];
        let mut stats = OpStats::default();
        let mut pacer = Pacer::new(a.benchmark_write_rate_limit, threads);
        let mut i = 0u64;
        let mut since_progress = 0u64;
        while budget.allows(i) {
            let n = match budget {
                Budget::Count(total) => (batch as u64).min(total - i) as usize,
                Budget::Until(_) => batch,
            };
            for (j, key) in keys.iter_mut().take(n).enumerate() {
                let k = match b {
                    Benchmark::Fillseq => seq_start + i + j as u64,
                    _ => rng.random_range(0..a.num),
                };
                fmt.write(k, key);
            }
            let delete = b == Benchmark::Deleterandom;
            let merge = b == Benchmark::Mergerandom;
            let start;
            let mut bytes = n * a.key_size;
            if n == 1 && !txn {
                let key = keys.first().map(Vec::as_slice).unwrap_or_default();
                if delete {
                    start = Instant::now();
                    engine.delete(key)?;
                } else if merge {
                    bytes += COUNTER_ONE.len();
                    start = Instant::now();
                    engine.merge(key, &COUNTER_ONE)?;
                } else {
                    let v = values.next(a.value_size);
                    bytes += v.len();
                    start = Instant::now();
                    engine.put(key, v)?;
                }
            } else {
                let ops: Vec<BatchOp<'_>> = if delete {
                    keys.iter().take(n).map(|k| BatchOp::Delete(k)).collect()
                } else if merge {
                    bytes += n * COUNTER_ONE.len();
                    keys.iter()
                        .take(n)
                        .map(|k| BatchOp::Merge(k, &COUNTER_ONE))
                        .collect()
                } else {
                    for v in vals.iter_mut().take(n) {
                        v.clear();
                        v.extend_from_slice(values.next(a.value_size));
                        bytes += v.len();
                    }
                    keys.iter()
                        .zip(&vals)
                        .take(n)
                        .map(|(k, v)| BatchOp::Put(k, v))
                        .collect()
                };
                start = Instant::now();
                if txn {
                    self.commit(&[], &ops)?;
                } else {
                    engine.write_batch(&ops)?;
                }
            }
            stats.record_n(start, n as u64, bytes);
            if let Some(p) = pacer.as_mut() {
                p.account(bytes);
            }
            i += n as u64;
            since_progress += n as u64;
            if since_progress >= PROGRESS_CHUNK {
                progress.add(since_progress);
                since_progress = 0;
            }
        }
        progress.add(since_progress);
        Ok(stats)
    }

    fn read_random<H: Hot + ?Sized>(
        &self,
        engine: &H,
        tid: usize,
        progress: &Progress,
    ) -> Result<OpStats> {
        let a = self.args;
        let budget = self.budget(a.read_count(), a.threads, tid);
        self.read_random_loop(engine, budget, tid, progress)
    }

    fn read_random_loop<H: Hot + ?Sized>(
        &self,
        engine: &H,
        budget: Budget,
        tid: usize,
        progress: &Progress,
    ) -> Result<OpStats> {
        let a = self.args;
        let mut rng = self.rng(tid);
        let fmt = a.key_format();
        let mut key = Vec::with_capacity(a.key_size);
        let mut stats = OpStats::default();
        let mut i = 0u64;
        while budget.allows(i) {
            fmt.write(rng.random_range(0..a.num), &mut key);
            let start = Instant::now();
            let bytes = match engine.get_len(&key)? {
                Some(len) => {
                    stats.found += 1;
                    key.len() + len
                }
                None => 0,
            };
            stats.record(start, bytes);
            i += 1;
            if i.is_multiple_of(PROGRESS_CHUNK) {
                progress.add(PROGRESS_CHUNK);
            }
        }
        progress.add(i % PROGRESS_CHUNK);
        Ok(stats)
    }

    /// multireadrandom: readrandom's key stream (same seed, same keys) in batches of
    /// `--batch_size`; each key is an operation, timed as its batch's time divided by
    /// the batch's keys.
    fn multi_read_random(&self, tid: usize, progress: &Progress) -> Result<OpStats> {
        let a = self.args;
        let budget = self.budget(a.read_count(), a.threads, tid);
        let batch = a.batch_size.max(1);
        let mut rng = self.rng(tid);
        let fmt = a.key_format();
        let mut keys: Vec<Vec<u8>> = vec![Vec::with_capacity(a.key_size); batch];
        let mut stats = OpStats::default();
        let mut i = 0u64;
        while budget.allows(i) {
            let n = match budget {
                Budget::Count(total) => batch.min(usize::try_from(total - i).unwrap_or(batch)),
                Budget::Until(_) => batch,
            };
            for key in keys.iter_mut().take(n) {
                fmt.write(rng.random_range(0..a.num), key);
            }
            let refs: Vec<&[u8]> = keys.iter().take(n).map(Vec::as_slice).collect();
            let start = Instant::now();
            let values = self.engine.multi_get(&refs)?;
            let per_key = start.elapsed().as_nanos() as u64 / n as u64;
            for (k, v) in refs.iter().zip(&values) {
                let bytes = v.as_ref().map_or(0, |v| {
                    stats.found += 1;
                    k.len() + v.len()
                });
                stats.record_nanos(per_key, bytes);
            }
            i += n as u64;
            progress.add(n as u64);
        }
        Ok(stats)
    }

    /// readseq and readreverse: walks the database from its first (last) key, pass
    /// after pass, until `--reads` entries or `--duration` seconds, so a walk can be
    /// long enough to measure on a small database. Timed per [`PROGRESS_CHUNK`]
    /// entries, each entry the chunk's mean: one clock read per entry would cost a
    /// fast walk a tenth of its rate, and every engine alike.
    fn read_seq<H: Hot + ?Sized>(
        &self,
        engine: &H,
        dir: Direction,
        tid: usize,
        progress: &Progress,
    ) -> Result<OpStats> {
        let a = self.args;
        let budget = self.budget(a.read_count(), a.threads, tid);
        let mut stats = OpStats::default();
        let mut chunk = (Instant::now(), 0u64, 0usize);
        let mut i = 0u64;
        while budget.allows(i) {
            let limit = match budget {
                Budget::Count(n) => usize::try_from(n - i).unwrap_or(usize::MAX),
                Budget::Until(_) => usize::MAX,
            };
            let n = engine.scan(Scan::new(None, dir, limit), |k, v| {
                chunk.1 += 1;
                chunk.2 += k.len() + v.len();
                i += 1;
                if i.is_multiple_of(PROGRESS_CHUNK) {
                    let now = Instant::now();
                    stats.record_spread(now.duration_since(chunk.0), chunk.1, chunk.2);
                    chunk = (now, 0, 0);
                    progress.add(PROGRESS_CHUNK);
                }
                budget.allows(i)
            })?;
            if n == 0 {
                break; // an empty database
            }
        }
        if chunk.1 > 0 {
            stats.record_spread(chunk.0.elapsed(), chunk.1, chunk.2);
        }
        progress.add(i % PROGRESS_CHUNK);
        Ok(stats)
    }

    /// rangescan: each operation one forward scan of every key in `[lo, lo + width)`,
    /// `width` = `--scan_fraction` of `[0, num)`, `lo` uniform; `found` counts the
    /// entries returned.
    fn range_scan(&self, tid: usize, progress: &Progress) -> Result<OpStats> {
        let a = self.args;
        let budget = self.budget(a.scans, a.threads, tid);
        let width = ((a.num as f64 * a.scan_fraction).round() as u64).clamp(1, a.num.max(1));
        let mut rng = self.rng(tid);
        let fmt = a.key_format();
        let (mut lo, mut hi) = (
            Vec::with_capacity(a.key_size),
            Vec::with_capacity(a.key_size),
        );
        let mut stats = OpStats::default();
        let mut i = 0u64;
        while budget.allows(i) {
            let first = rng.random_range(0..=a.num.saturating_sub(width));
            fmt.write(first, &mut lo);
            fmt.write(first + width, &mut hi);
            let mut bytes = 0;
            let start = Instant::now();
            let n = self.engine.scan(
                Scan::new(Some(&lo), Direction::Forward, usize::MAX).until(Some(&hi)),
                &mut |k, v| {
                    bytes += k.len() + v.len();
                    true
                },
            )?;
            stats.record(start, bytes);
            stats.found += n as u64;
            i += 1;
            progress.add(1);
        }
        Ok(stats)
    }

    fn seek_random<H: Hot + ?Sized>(
        &self,
        engine: &H,
        tid: usize,
        progress: &Progress,
    ) -> Result<OpStats> {
        let a = self.args;
        let budget = self.budget(a.read_count(), a.threads, tid);
        let dir = if a.reverse_iterator {
            Direction::Reverse
        } else {
            Direction::Forward
        };
        let mut rng = self.rng(tid);
        let fmt = a.key_format();
        let mut key = Vec::with_capacity(a.key_size);
        let mut stats = OpStats::default();
        let mut i = 0u64;
        while budget.allows(i) {
            fmt.write(rng.random_range(0..a.num), &mut key);
            let mut bytes = 0;
            let mut first = true;
            let mut found = false;
            let start = Instant::now();
            engine.scan(
                Scan::new(Some(&key), dir, a.seek_nexts.saturating_add(1)),
                |k, v| {
                    if first {
                        found = k == key.as_slice();
                        first = false;
                    }
                    bytes += k.len() + v.len();
                    true
                },
            )?;
            stats.record(start, bytes);
            stats.found += u64::from(found);
            i += 1;
            if i.is_multiple_of(PROGRESS_CHUNK) {
                progress.add(PROGRESS_CHUNK);
            }
        }
        progress.add(i % PROGRESS_CHUNK);
        Ok(stats)
    }

    /// readrandomwriterandom: db_bench's cycle of `--readwritepercent` random reads,
    /// then the rest of a hundred random writes. With `--transaction_db` a write is a
    /// transaction reading its key with get_for_update, then writing it.
    fn read_write_random(&self, tid: usize, progress: &Progress) -> Result<OpStats> {
        let a = self.args;
        let budget = self.budget(a.read_count(), a.threads, tid);
        let mut rng = self.rng(tid);
        let mut values = self.values(tid);
        let fmt = a.key_format();
        let mut key = Vec::with_capacity(a.key_size);
        let mut stats = OpStats::default();
        let (mut reads, mut writes) = (0u64, 0u64);
        let mut i = 0u64;
        while budget.allows(i) {
            fmt.write(rng.random_range(0..a.num), &mut key);
            let bytes;
            let start;
            if i % 100 < u64::from(a.readwritepercent) {
                start = Instant::now();
                let v = self.engine.get_len(&key)?;
                bytes = v.map_or(0, |len| key.len() + len);
                stats.found += u64::from(v.is_some());
                reads += 1;
            } else {
                let v = values.next(a.value_size);
                bytes = key.len() + v.len();
                start = Instant::now();
                if a.engine.transaction_db {
                    self.commit(&[key.as_slice()], &[BatchOp::Put(&key, v)])?;
                } else {
                    self.engine.put(&key, v)?;
                }
                writes += 1;
            }
            stats.record(start, bytes);
            i += 1;
            if i.is_multiple_of(PROGRESS_CHUNK) {
                progress.add(PROGRESS_CHUNK);
            }
        }
        progress.add(i % PROGRESS_CHUNK);
        self.reads.fetch_add(reads, Ordering::Relaxed);
        self.writes.fetch_add(writes, Ordering::Relaxed);
        Ok(stats)
    }

    /// `--threads` readers plus one writer that overwrites random keys until the last
    /// reader finishes. Only the readers are reported; the writer's count is a note.
    fn read_while_writing(&self) -> Result<Outcome> {
        let a = self.args;
        let readers = a.threads;
        let readers_left = AtomicUsize::new(readers);
        let expected = (a.duration == 0).then_some(a.read_count());
        let (parts, el) = run_parallel("readwhilewriting", readers + 1, expected, |tid, p| {
            if tid == readers {
                return self.writer(&readers_left).map(|s| (s, true));
            }
            let budget = self.budget(a.read_count(), readers, tid);
            let r = self.read_random_loop(self.engine, budget, tid, p);
            readers_left.fetch_sub(1, Ordering::Release);
            r.map(|s| (s, false))
        })?;
        let mut stats = OpStats::default();
        let mut writes = 0;
        for (s, is_writer) in &parts {
            if *is_writer {
                writes += s.ops;
            } else {
                stats.merge(s);
            }
        }
        Ok(Outcome {
            found: Some((stats.found, stats.ops)),
            stats,
            seconds: el.as_secs_f64(),
            note: Some(format!("(writer: {writes} writes)")),
        })
    }

    fn writer(&self, readers_left: &AtomicUsize) -> Result<OpStats> {
        let a = self.args;
        let mut rng = self.rng(usize::MAX - 1);
        let mut values = self.values(usize::MAX);
        let fmt = a.key_format();
        let mut key = Vec::with_capacity(a.key_size);
        let mut stats = OpStats::default();
        while readers_left.load(Ordering::Acquire) > 0 {
            fmt.write(rng.random_range(0..a.num), &mut key);
            let v = values.next(a.value_size);
            let start = Instant::now();
            self.engine.put(&key, v)?;
            stats.record(start, key.len() + v.len());
        }
        Ok(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_differ_by_benchmark_and_thread() {
        let s = thread_seed(301, 0, 0);
        assert_eq!(s, thread_seed(301, 0, 0));
        assert_ne!(s, thread_seed(301, 1, 0));
        assert_ne!(s, thread_seed(301, 0, 1));
        assert_ne!(s, thread_seed(302, 0, 0));
    }

    fn args(extra: &[&str]) -> BenchArgs {
        use clap::Parser;
        #[derive(Parser)]
        struct T {
            #[command(flatten)]
            b: BenchArgs,
        }
        let base = ["t", "--num=20000", "--value_size=50"];
        T::try_parse_from(base.iter().chain(extra.iter()).copied())
            .expect("parse")
            .b
    }

    #[test]
    fn floor_is_refused_where_there_is_none_to_measure() {
        let refused = |extra: &[&str], needle: &str| {
            let a = args(extra);
            let err = a.validate().expect_err("refused").to_string();
            assert!(err.contains("'--floor'") && err.contains(needle), "{err}");
        };
        refused(&["--floor"], "--engine=rocksdb or fjall");
        refused(
            &["--floor", "--engine=fjall", "--num_column_families=2"],
            "one column",
        );
        refused(
            &["--floor", "--engine=rocksdb", "--transaction_db"],
            "one column",
        );
        refused(
            &[
                "--floor",
                "--engine=fjall",
                "--benchmarks=fillseq,multireadrandom",
            ],
            "multireadrandom has no direct driver",
        );
        let a = args(&[
            "--floor",
            "--engine=fjall",
            "--benchmarks=fillseq,readseq,stats",
        ]);
        a.validate().expect("a floor over fills and walks");
    }

    fn go(e: &dyn KvEngine, a: &BenchArgs, b: Benchmark, index: usize) -> Outcome {
        run(e, None, a, b, index).expect("runs").expect("measured")
    }

    #[test]
    fn benchmarks_on_memory_engine() {
        use crate::engine::memory::MemoryEngine;
        let e = MemoryEngine::default();
        let a = args(&["--threads=2"]);
        let o = go(&e, &a, Benchmark::Fillrandom, 0);
        assert_eq!(o.stats.ops, 20_000);
        let distinct = e.len() as f64 / 20_000.0;
        assert!((distinct - 0.632).abs() < 0.02, "{distinct}");
        let o = go(&e, &a, Benchmark::Readrandom, 1);
        let (found, of) = o.found.expect("found");
        assert_eq!(of, 20_000);
        assert!((found as f64 / of as f64 - 0.632).abs() < 0.02, "{found}");
        let o = go(&e, &a, Benchmark::Readseq, 2);
        // Each of the 2 threads scans 10000 entries from the start (fewer exist? no).
        assert_eq!(o.stats.ops, 20_000);
        let o = go(&e, &a, Benchmark::Seekrandom, 3);
        assert_eq!(o.stats.ops, 20_000);
        let o = go(&e, &a, Benchmark::Readwhilewriting, 4);
        assert_eq!(o.stats.ops, 20_000);
        assert!(o.note.is_some_and(|n| n.starts_with("(writer: ")));
        let o = go(&e, &a, Benchmark::Deleterandom, 5);
        assert_eq!(o.stats.ops, 20_000);
        assert!(run(&e, None, &a, Benchmark::Stats, 6)
            .expect("runs")
            .is_none());

        let e = MemoryEngine::default();
        let a = args(&["--threads=3", "--batch_size=7"]);
        let o = go(&e, &a, Benchmark::Fillseq, 0);
        assert_eq!(o.stats.ops, 20_000);
        assert_eq!(e.len(), 20_000, "fillseq writes every key once");
        let o = go(&e, &a, Benchmark::Readrandom, 1);
        assert_eq!(o.found, Some((20_000, 20_000)));
        let o = go(&e, &a, Benchmark::Readreverse, 2);
        assert_eq!(o.stats.ops, 20_000);
        // More reads than keys: the walks go round, 50,000 entries of 66 bytes.
        let more = args(&["--threads=2", "--reads=50000"]);
        for b in [Benchmark::Readseq, Benchmark::Readreverse] {
            let o = go(&e, &more, b, 2);
            assert_eq!((o.stats.ops, o.stats.bytes), (50_000, 50_000 * 66), "{b:?}");
            assert_eq!(o.stats.hist.len(), 50_000, "{b:?}: one sample per entry");
        }
        let a = args(&["--reverse_iterator", "--seek_nexts=3", "--reads=100"]);
        let o = go(&e, &a, Benchmark::Seekrandom, 3);
        assert_eq!(o.found, Some((100, 100)));
        assert_eq!(o.stats.bytes, 100 * 4 * (16 + 50));
        // Every key of [0, 20000) is present: each scan of 5% returns exactly 1,000.
        let a = args(&["--threads=2", "--scans=30", "--scan_fraction=0.05"]);
        let o = go(&e, &a, Benchmark::Rangescan, 4);
        assert_eq!((o.stats.ops, o.stats.found), (30, 30 * 1000));
        assert_eq!(o.stats.bytes, 30 * 1000 * (16 + 50));
        let note = o.note.expect("a note");
        assert!(
            note.starts_with("(30000 entries, 1000.0 per scan;"),
            "{note}"
        );
        let a = args(&["--threads=2", "--readwritepercent=60"]);
        let o = go(&e, &a, Benchmark::Readrandomwriterandom, 5);
        assert_eq!(o.stats.ops, 20_000);
        assert_eq!(o.found.map(|(_, reads)| reads), Some(12_000));
        assert_eq!(o.note.as_deref(), Some("(reads: 12000, writes: 8000)"));
        let a = args(&["--threads=2", "--transaction_db", "--batch_size=3"]);
        let o = go(&e, &a, Benchmark::Fillrandom, 6);
        assert_eq!(o.stats.ops, 20_000);
        assert_eq!(
            o.note.as_deref(),
            Some("(transactions: 0 conflicts retried)")
        );
        let o = go(&e, &a, Benchmark::Readrandomwriterandom, 7);
        assert_eq!(o.stats.ops, 20_000);
        assert!(o
            .note
            .is_some_and(|n| n.ends_with("transactions: 0 conflicts retried)")));
        let a = args(&["--duration=1", "--threads=2"]);
        let o = go(&e, &a, Benchmark::Overwrite, 4);
        assert!(o.seconds >= 1.0 && o.stats.ops > 0);
    }

    /// `--benchmark_write_rate_limit` holds the writes to their byte rate: 20,000 writes
    /// of 16 + 50 bytes at 6,600,000 bytes/s take at least 0.2 s.
    #[test]
    fn write_rate_limit_paces_the_writers() {
        use crate::engine::memory::MemoryEngine;
        let e = MemoryEngine::default();
        let a = args(&["--threads=2", "--benchmark_write_rate_limit=6600000"]);
        let o = go(&e, &a, Benchmark::Fillrandom, 0);
        assert_eq!(o.stats.ops, 20_000);
        assert!(o.seconds >= 0.2 - 0.005, "{}", o.seconds);
        assert!(o.seconds < 5.0, "{}", o.seconds);
    }

    /// deleteseq and deleterange remove exactly keys `[0, --deletes)`, split among
    /// threads, with one operation per key or per tombstone.
    #[test]
    fn deleteseq_and_deleterange_remove_the_prefix() {
        use crate::engine::memory::MemoryEngine;
        for (b, width, ops) in [
            (Benchmark::Deleteseq, "1", 2_000),
            // Three slices of 667, 667 and 666 keys: three tombstones each.
            (Benchmark::Deleterange, "300", 9),
        ] {
            let e = MemoryEngine::default();
            let a = args(&["--threads=3", "--batch_size=1"]);
            go(&e, &a, Benchmark::Fillseq, 0);
            let w = format!("--range_tombstone_width={width}");
            let a = args(&["--threads=3", "--deletes=2000", &w]);
            let o = go(&e, &a, b, 1);
            assert_eq!(o.stats.ops, ops, "{b:?}");
            assert_eq!(e.len(), 18_000, "{b:?}");
            let mut first = None;
            e.scan(Scan::new(None, Direction::Forward, 1), &mut |k, _| {
                first = Some(k.to_vec());
                false
            })
            .expect("scan");
            let mut want = Vec::new();
            a.key_format().write(2000, &mut want);
            assert_eq!(first, Some(want), "{b:?}");
        }
    }

    /// Every merge adds one: the counters sum to the operations, with and without
    /// batches.
    #[test]
    fn mergerandom_counts_every_operation() {
        use crate::engine::memory::MemoryEngine;
        for extra in [&["--threads=2"][..], &["--batch_size=5"][..]] {
            let e = MemoryEngine::default();
            let a = args(extra);
            let o = go(&e, &a, Benchmark::Mergerandom, 0);
            assert_eq!(o.stats.ops, 20_000);
            let mut sum = 0u64;
            e.scan(
                Scan::new(None, Direction::Forward, usize::MAX),
                &mut |_, v| {
                    sum += strata::merge::U64Add::decode(v).expect("a counter");
                    true
                },
            )
            .expect("scan");
            assert_eq!(sum, 20_000, "{extra:?}");
        }
    }

    #[test]
    fn fillrandom_key_stream_covers_about_63_percent() {
        // num random draws from [0, num) hit 1 - 1/e of the keys: readrandom's
        // "found X of Y" after fillrandom should be close to 63%.
        let num = 100_000u64;
        let mut rng = SmallRng::seed_from_u64(thread_seed(301, 0, 0));
        let mut seen = vec![false; num as usize];
        for _ in 0..num {
            seen[rng.random_range(0..num) as usize] = true;
        }
        let frac = seen.iter().filter(|s| **s).count() as f64 / num as f64;
        assert!((frac - 0.632).abs() < 0.01, "{frac}");
    }
}
