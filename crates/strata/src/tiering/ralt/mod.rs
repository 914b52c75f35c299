//! RALT, the Recent Access Lookup Table (HotRAP §3.2, §3.7): which keys are hot,
//! tracked in a small LSM-tree of access records on the fast tier.
//!
//! Role: reads record accesses ([`Ralt::access`]); tiering asks whether a key is hot
//! ([`Ralt::is_hot`]) and how many hot bytes and records lie in a key range
//! ([`Ralt::range_hot`]). (The paper's fourth operation, a cursor over the hot
//! keys of a range, is not needed while retention asks the filters key by key.) Records hold the key and the size of its record in the tree,
//! never the value (`record.rs`).
//!
//! # Structure
//! - **Buffer.** Accesses go to an unsorted in-memory buffer, sharded by thread so
//!   that concurrent readers rarely meet on a lock. When it holds `buffer_bytes`, the
//!   worker takes it, sorts it, combines each key's records and writes one L0 table.
//!   Once four buffers' worth wait for the worker, further accesses are dropped and
//!   counted (a read never waits for RALT).
//! - **Tree** (`tree.rs`). Leveled: L0 tables (whole buffers), then sorted runs ten
//!   times larger level by level; records of one key combine whenever they meet.
//!   Each table keeps its index, with prefix sums of hot bytes, and a bloom filter of
//!   its hot keys in memory (`table.rs`), so `is_hot` and `range_hot_size` read no
//!   data block.
//! - **Time.** Every `γ · fd_size` accessed bytes a new slice (tick) begins; every
//!   `R = R_hs` bytes a new counter period (Algorithm 1's decrement, applied lazily).
//! - **Eviction** (`evict.rs`). When the hot bytes pass the hot-set limit or the
//!   tables pass the physical limit by β, the worker scans the whole tree twice: first to
//!   sample the two thresholds (and, with auto-tuning, to count the stable records and
//!   set new limits), then to merge everything into one sorted run in the last level,
//!   dropping records below the physical threshold and marking those at or above the
//!   hot threshold as hot.
//! - **Versions.** The tree is an immutable [`tree::Version`] behind an `ArcSwap`:
//!   readers load it without a lock; only the worker replaces it.
//! - **One thread.** Flushes, compactions and evictions run on RALT's own worker
//!   thread, one at a time.
//!
//! # Durability
//! RALT is advisory: it never holds user data. Its tables are fsynced, then named in
//! its table list (`TABLES`, written atomically). A clean close flushes the buffer; a
//! crash loses the buffer (the accesses since the last flush), never a table the list
//! names. A list or table that cannot be read at open, or a damaged table a merge
//! meets, costs only what RALT recorded: it starts over empty, counted in
//! [`RaltStats::resets`], and the database opens and runs as before.
//!
//! # Departures from the paper and the reference code
//! - An eviction merges the whole tree in one pass (the reference merges step by
//!   step); RALT's space may double for its length. RALT is small (its physical
//!   limit is a few percent of the fast tier).
//! - Records of one key in the same slice count that slice once (the score's
//!   definition); the reference keeps one of them.
//! - Eviction sizing. The paper evicts once a limit is exceeded, removes β of the
//!   records, then retunes the limits (Algorithm 1, lines 18–21). Here an eviction
//!   starts at `(1 + β)` times a limit and keeps `(1 − β)` of it, with the limits
//!   Algorithm 1 sets from the same scan: every eviction rewrites the whole tree, so
//!   it should come at most once per `2β` of the limit, and a retuned limit that
//!   takes effect one eviction late would let the tree stay over it that long.
//! - Counter decrements are exact and lazy (a record stores the period of its
//!   counter), not once per eviction pass.

pub mod evict;
pub mod record;
pub mod table;
pub mod tree;

use crate::env::FileSystem;
use crate::error::{Error, ErrorKind, Result};
use arc_swap::ArcSwap;
use evict::{Sampler, Tuning, SAMPLES};
use parking_lot::{Condvar, Mutex};
use record::{Counting, Keyed, Record};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use table::{RaltIo, RaltTable};
use tree::{MergedScan, Outputs, Persisted, Version, Writer};

/// The most levels RALT's tree has.
pub const MAX_LEVELS: usize = 8;
/// Buffer shards.
const SHARDS: usize = 16;
/// L0 tables that trigger a merge into L1.
const L0_TRIGGER: usize = 4;
/// Size ratio between levels.
const RATIO: u64 = 10;
/// Bytes a buffered access takes beyond its key (record, vector slot).
const BUFFERED_OVERHEAD: u64 = 48;

/// RALT's settings. The defaults are the paper's (§3.2, §3.7, §4.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RaltOptions {
    /// The fast tier's budget in bytes: the unit of the time slice, the counter
    /// period and the auto-tuned limits.
    pub fd_size: u64,
    /// α, γ's slices and Algorithm 1's Δc and c_max.
    pub counting: Counting,
    /// γ: a time slice is `gamma · fd_size` accessed bytes (paper: 10%).
    pub gamma: f64,
    /// β: the fraction of bytes an eviction removes (paper: 10%).
    pub beta: f64,
    /// Bloom bits per hot key (paper: 20).
    pub bloom_bits: u32,
    /// Data block size (paper: 8 KiB).
    pub block_size: usize,
    /// Target table size.
    pub table_size: u64,
    /// Bytes the buffer holds before it is flushed.
    pub buffer_bytes: u64,
    /// Algorithm 1 on: limits follow the stable records after each eviction.
    pub auto_tune: bool,
    /// The hot-set limit (the start value with auto-tuning; paper: 50% of
    /// `fd_size`).
    pub hot_limit: u64,
    /// The physical limit (the start value with auto-tuning; paper: 15% of
    /// `fd_size`).
    pub phys_limit: u64,
}

impl RaltOptions {
    /// The paper's settings for a fast tier of `fd_size` bytes.
    pub fn new(fd_size: u64) -> RaltOptions {
        RaltOptions {
            fd_size,
            counting: Counting {
                alpha: 0.999,
                delta_c: 2.6,
                c_max: 5.0,
            },
            gamma: 0.1,
            beta: 0.1,
            bloom_bits: 20,
            block_size: (fd_size / 4096).clamp(512, 8 << 10) as usize,
            // About 80 tables at the physical limit's start value, whatever the tier.
            table_size: (fd_size / 512).clamp(2 << 20, 64 << 20),
            buffer_bytes: (fd_size / 256).clamp(16 << 10, 16 << 20),
            auto_tune: true,
            hot_limit: fd_size / 2,
            phys_limit: fd_size / 100 * 15,
        }
    }

    fn tick_bytes(&self) -> u64 {
        ((self.fd_size as f64 * self.gamma) as u64).max(1)
    }

    fn period_bytes(&self) -> u64 {
        Tuning::for_fd_size(self.fd_size).max_hot.max(1)
    }
}

/// Figures of one RALT (gauges and counters).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RaltStats {
    /// Hot bytes in its tables (the hot-set size).
    pub hot_bytes: u64,
    /// The hot-set limit.
    pub hot_limit: u64,
    /// Bytes of its table files (the physical size).
    pub phys_bytes: u64,
    /// The physical limit.
    pub phys_limit: u64,
    /// Accesses recorded.
    pub accesses: u64,
    /// Accesses dropped because the buffer was full.
    pub accesses_dropped: u64,
    /// Buffers flushed, compactions and evictions run.
    pub flushes: u64,
    /// See `flushes`.
    pub compactions: u64,
    /// See `flushes`.
    pub evictions: u64,
    /// Times RALT started over empty: a list or table it could not read at open, or
    /// a damaged table met by a merge.
    pub resets: u64,
    /// Bytes read from and written to its files.
    pub bytes_read: u64,
    /// See `bytes_read`.
    pub bytes_written: u64,
    /// The current time slice.
    pub tick: u64,
}

/// State only the worker changes (under `Shared::state`).
#[derive(Debug)]
struct WorkerState {
    hot_limit: u64,
    phys_limit: u64,
    next_number: u64,
    /// Rounds asked for by `settle`, regardless of the buffer's size.
    requested: u64,
    /// The requests the last finished round served: a round serves every request
    /// made before it started.
    served: u64,
    /// The last error of a background step, until `settle` reports it (the worker
    /// retries).
    error: Option<Error>,
}

struct Shared {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    opts: RaltOptions,
    io: Arc<RaltIo>,
    version: ArcSwap<Version>,
    shards: Vec<Mutex<Vec<Keyed>>>,
    buffered: AtomicU64,
    accessed: AtomicU64,
    accesses: AtomicU64,
    dropped: AtomicU64,
    flushes: AtomicU64,
    compactions: AtomicU64,
    evictions: AtomicU64,
    resets: AtomicU64,
    state: Mutex<WorkerState>,
    work: Condvar,
    done: Condvar,
    shutdown: AtomicBool,
}

/// A running RALT. See the module docs.
pub struct Ralt {
    shared: Arc<Shared>,
    worker: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Ralt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ralt")
            .field("dir", &self.shared.dir)
            .finish()
    }
}

impl Ralt {
    /// Opens (or creates) the RALT in `dir` on `fs` and starts its worker thread.
    /// Files in `dir` its table list does not name are removed.
    ///
    /// # Errors
    /// I/O errors; `Corruption` for a damaged table list or table.
    pub fn open(fs: Arc<dyn FileSystem>, dir: &Path, opts: RaltOptions) -> Result<Ralt> {
        fs.create_dir_all(dir)?;
        let io = Arc::new(RaltIo::default());
        // RALT holds no user data: a list or table it cannot read costs the hotness
        // it recorded, never the database's open. It starts empty instead.
        let (persisted, version, resets) = match load(fs.as_ref(), dir, &io) {
            Ok(Some((persisted, version))) => (persisted, version, 0),
            Ok(None) => (fresh(&opts), Version::empty(), 0),
            Err(_) => {
                tree::store_list(fs.as_ref(), dir, &io, &fresh(&opts), &Version::empty())?;
                (fresh(&opts), Version::empty(), 1)
            }
        };
        let named: HashSet<String> = version
            .tables()
            .map(|(_, t)| format!("{:06}.ralt", t.number))
            .chain([tree::LIST.to_string()])
            .collect();
        for name in fs.list(dir)? {
            if !named.contains(&name) {
                // Best effort: a stray entry that cannot go (a directory) is harmless.
                let _ = fs.remove(&dir.join(&name));
            }
        }
        let (hot_limit, phys_limit) = if opts.auto_tune {
            (persisted.hot_limit, persisted.phys_limit)
        } else {
            (opts.hot_limit, opts.phys_limit)
        };
        let shared = Arc::new(Shared {
            fs,
            dir: dir.to_path_buf(),
            opts,
            io,
            version: ArcSwap::from_pointee(version),
            shards: (0..SHARDS).map(|_| Mutex::new(Vec::new())).collect(),
            buffered: AtomicU64::new(0),
            accessed: AtomicU64::new(persisted.accessed),
            accesses: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
            compactions: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            resets: AtomicU64::new(resets),
            state: Mutex::new(WorkerState {
                hot_limit,
                phys_limit,
                next_number: persisted.next_number,
                requested: 0,
                served: 0,
                error: None,
            }),
            work: Condvar::new(),
            done: Condvar::new(),
            shutdown: AtomicBool::new(false),
        });
        let worker_shared = Arc::clone(&shared);
        let worker = std::thread::Builder::new()
            .name("strata-ralt".into())
            .spawn(move || worker_shared.run())
            .map_err(|e| Error::Internal(format!("cannot start RALT's thread: {e}")))?;
        Ok(Ralt {
            shared,
            worker: Some(worker),
        })
    }

    /// Records one access of `key`, whose value is `value_len` bytes. Never blocks on
    /// I/O: when four buffers' worth wait for the worker, the access is dropped
    /// (counted in [`RaltStats::accesses_dropped`]).
    pub fn access(&self, key: &[u8], value_len: usize) {
        let s = &self.shared;
        let hot_size = u32::try_from(key.len() + value_len).unwrap_or(u32::MAX);
        let before = s.accessed.fetch_add(u64::from(hot_size), Ordering::Relaxed);
        let now = before + u64::from(hot_size);
        let tick = s.tick_of(now);
        let period = s.period_of(now);
        let record = Record::access(hot_size, tick, period, &s.opts.counting);
        let charge = key.len() as u64 + BUFFERED_OVERHEAD;
        let buffered = s.buffered.fetch_add(charge, Ordering::Relaxed) + charge;
        if buffered > s.opts.buffer_bytes.saturating_mul(4) {
            s.buffered.fetch_sub(charge, Ordering::Relaxed);
            s.dropped.fetch_add(1, Ordering::Relaxed);
            s.work.notify_one();
            return;
        }
        let shard = shard_of(key);
        if let Some(m) = s.shards.get(shard) {
            m.lock().push((key.to_vec(), record));
        }
        s.accesses.fetch_add(1, Ordering::Relaxed);
        if buffered >= s.opts.buffer_bytes && buffered - charge < s.opts.buffer_bytes {
            s.work.notify_one();
        }
    }

    /// True iff `key` is hot: some table's filter of hot keys holds it (no false
    /// negatives for keys hot when their table was written; about 0.1% false
    /// positives at 20 bits per key). Buffered accesses do not count until flushed.
    pub fn is_hot(&self, key: &[u8]) -> bool {
        let v = self.shared.version.load();
        v.levels.iter().enumerate().any(|(level, tables)| {
            if level == 0 {
                tables.iter().any(|t| in_range(t, key) && t.may_be_hot(key))
            } else {
                let i = tables.partition_point(|t| t.last_key() < key);
                tables
                    .get(i)
                    .is_some_and(|t| in_range(t, key) && t.may_be_hot(key))
            }
        })
    }

    /// An estimate of the hot bytes and hot records of keys in `[lo, hi]`, from
    /// memory: per table, those of the blocks that may hold them (edge blocks whole);
    /// summed over L1 and deeper, and for L0, whose tables are whole buffers repeating
    /// the same keys, the largest of its tables. A heuristic for picking: it may
    /// count a key once per level, or miss keys of L0 found in one buffer only.
    pub fn range_hot(&self, lo: &[u8], hi: &[u8]) -> (u64, u64) {
        let v = self.shared.version.load();
        let add = |(b, r): (u64, u64), (tb, tr): (u64, u64)| (b + tb, r + tr);
        // L0's tables are whole buffers that repeat the same hot keys: the largest of
        // them stands for L0; deeper levels hold each key once per level.
        let l0 = v.levels.first().map_or((0, 0), |ts| {
            ts.iter()
                .map(|t| t.range_hot(lo, hi))
                .fold((0, 0), |(b, r), (tb, tr)| (b.max(tb), r.max(tr)))
        });
        v.levels
            .iter()
            .skip(1)
            .flatten()
            .map(|t| t.range_hot(lo, hi))
            .fold(l0, add)
    }

    /// Current figures.
    pub fn stats(&self) -> RaltStats {
        let s = &self.shared;
        let v = s.version.load();
        let st = s.state.lock();
        RaltStats {
            hot_bytes: v.hot_bytes(),
            hot_limit: st.hot_limit,
            phys_bytes: v.file_bytes(),
            phys_limit: st.phys_limit,
            accesses: s.accesses.load(Ordering::Relaxed),
            accesses_dropped: s.dropped.load(Ordering::Relaxed),
            flushes: s.flushes.load(Ordering::Relaxed),
            compactions: s.compactions.load(Ordering::Relaxed),
            evictions: s.evictions.load(Ordering::Relaxed),
            resets: s.resets.load(Ordering::Relaxed),
            bytes_read: s.io.bytes_read.load(Ordering::Relaxed),
            bytes_written: s.io.bytes_written.load(Ordering::Relaxed),
            tick: u64::from(s.tick_of(s.accessed.load(Ordering::Relaxed))),
        }
    }

    /// Flushes the buffer and waits until the worker has nothing left to do
    /// (flushes, compactions, evictions).
    ///
    /// # Errors
    /// The worker's last error, if its last round failed.
    pub fn settle(&self) -> Result<()> {
        let s = &self.shared;
        let mut st = s.state.lock();
        st.requested += 1;
        let ticket = st.requested;
        s.work.notify_one();
        while st.served < ticket && !s.shutdown.load(Ordering::Acquire) {
            s.done.wait(&mut st);
        }
        match st.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn stop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        {
            let _st = self.shared.state.lock();
            self.shared.work.notify_all();
        }
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

impl Drop for Ralt {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The persisted state of a RALT that has none yet.
fn fresh(opts: &RaltOptions) -> Persisted {
    Persisted {
        accessed: 0,
        hot_threshold: f64::NEG_INFINITY,
        hot_limit: opts.hot_limit,
        phys_limit: opts.phys_limit,
        next_number: 1,
    }
}

/// The table list of `dir` and the version it names, `None` if there is no list.
fn load(fs: &dyn FileSystem, dir: &Path, io: &Arc<RaltIo>) -> Result<Option<(Persisted, Version)>> {
    let Some((persisted, listed)) = tree::load_list(fs, dir)? else {
        return Ok(None);
    };
    let mut version = Version::empty();
    version.hot_threshold = persisted.hot_threshold;
    for &(level, number) in &listed {
        let path = tree::table_path(dir, number);
        let table = RaltTable::open(number, &path, fs.open_random(&path)?, Arc::clone(io))?;
        while version.levels.len() <= level {
            version.levels.push(Vec::new());
        }
        if let Some(l) = version.levels.get_mut(level) {
            l.push(Arc::new(table));
        }
    }
    Ok(Some((persisted, version)))
}

fn in_range(t: &RaltTable, key: &[u8]) -> bool {
    t.first_key() <= key && key <= t.last_key()
}

fn shard_of(key: &[u8]) -> usize {
    (crate::sst::filter::hash64(key) as usize) % SHARDS
}

impl Shared {
    fn tick_of(&self, accessed: u64) -> u32 {
        u32::try_from(accessed / self.opts.tick_bytes()).unwrap_or(u32::MAX)
    }

    fn period_of(&self, accessed: u64) -> u32 {
        u32::try_from(accessed / self.opts.period_bytes()).unwrap_or(u32::MAX)
    }

    /// The worker: waits for a full buffer (or a request), then flushes, compacts and
    /// evicts until nothing is left; retries after a failure.
    fn run(&self) {
        loop {
            let serving = {
                let mut st = self.state.lock();
                while !self.shutdown.load(Ordering::Acquire)
                    && st.served == st.requested
                    && self.buffered.load(Ordering::Relaxed) < self.opts.buffer_bytes
                {
                    self.work
                        .wait_for(&mut st, std::time::Duration::from_millis(200));
                }
                if self.shutdown.load(Ordering::Acquire) {
                    self.done.notify_all();
                    return;
                }
                st.requested
            };
            let mut result = self.round();
            if result
                .as_ref()
                .is_err_and(|e| e.kind() == ErrorKind::Corruption)
            {
                // A damaged table would fail every merge that meets it, and RALT's
                // upkeep with it: start over empty (module docs, Durability).
                result = self.reset();
            }
            let mut st = self.state.lock();
            let failed = result.is_err();
            if let Err(e) = result {
                st.error = Some(e);
            }
            st.served = serving;
            self.done.notify_all();
            if failed {
                // Back off before retrying; accesses meanwhile are dropped once four
                // buffers wait.
                self.work
                    .wait_for(&mut st, std::time::Duration::from_millis(100));
            }
        }
    }

    /// One round of work: flush the buffer, then compact and evict while needed.
    fn round(&self) -> Result<()> {
        self.flush()?;
        while self.compact()? {}
        self.evict_if_needed()
    }

    /// Replaces the tree by an empty one, keeping the limits and the clock.
    fn reset(&self) -> Result<()> {
        let v = self.version.load_full();
        let gone: Vec<Arc<RaltTable>> = v.tables().map(|(_, t)| Arc::clone(t)).collect();
        self.install(Version::empty(), &gone)?;
        self.resets.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn writer(&self) -> Writer<'_> {
        Writer {
            fs: self.fs.as_ref(),
            dir: &self.dir,
            io: &self.io,
            block_size: self.opts.block_size,
            bloom_bits: self.opts.bloom_bits,
            table_size: self.opts.table_size,
        }
    }

    fn persisted(&self, st: &WorkerState, version: &Version) -> Persisted {
        Persisted {
            accessed: self.accessed.load(Ordering::Relaxed),
            hot_threshold: version.hot_threshold,
            hot_limit: st.hot_limit,
            phys_limit: st.phys_limit,
            next_number: st.next_number,
        }
    }

    /// Installs `version`: writes the table list naming it, then publishes it, then
    /// removes the files of `gone`.
    fn install(&self, version: Version, gone: &[Arc<RaltTable>]) -> Result<()> {
        let persisted = self.persisted(&self.state.lock(), &version);
        tree::store_list(self.fs.as_ref(), &self.dir, &self.io, &persisted, &version)?;
        self.version.store(Arc::new(version));
        for t in gone {
            // Readers holding the old version keep their open file handles.
            let _ = self.fs.remove(&tree::table_path(&self.dir, t.number));
        }
        Ok(())
    }

    fn take_number(&self) -> u64 {
        self.state.lock().next_number
    }

    fn set_number(&self, n: u64) {
        self.state.lock().next_number = n;
    }

    /// Writes the buffered accesses as one L0 table.
    fn flush(&self) -> Result<()> {
        let mut records: Vec<Keyed> = Vec::new();
        for shard in &self.shards {
            records.append(&mut shard.lock());
        }
        // What these records were charged (an access racing this drain keeps its own).
        let charged: u64 = records
            .iter()
            .map(|(k, _)| k.len() as u64 + BUFFERED_OVERHEAD)
            .sum();
        let _ = self
            .buffered
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                Some(b.saturating_sub(charged))
            });
        if records.is_empty() {
            return Ok(());
        }
        // Stable sort: a key's accesses stay in arrival order, oldest first.
        records.sort_by(|a, b| a.0.cmp(&b.0));
        let v = self.version.load_full();
        let period = self.period_of(self.accessed.load(Ordering::Relaxed));
        let counting = self.opts.counting;
        let mut number = self.take_number();
        // One table per buffer, so that L0's trigger counts buffers.
        let writer = Writer {
            table_size: u64::MAX,
            ..self.writer()
        };
        let mut out = Outputs::new(&writer, &mut number);
        let mut iter = records.into_iter().peekable();
        while let Some((key, mut record)) = iter.next() {
            while let Some((_, newer)) = iter.next_if(|(k, _)| *k == key) {
                record = Record::merge(&record, &newer, &counting);
            }
            let hot = record.rank(&key, period, &counting) >= v.hot_threshold;
            out.add(&key, &record, hot)?;
        }
        let tables = out.finish()?;
        self.set_number(number);
        let mut next = (*v).clone();
        if let Some(l0) = next.levels.first_mut() {
            for t in tables.into_iter().rev() {
                l0.insert(0, t);
            }
        }
        self.install(next, &[])?;
        self.flushes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Runs one compaction if the tree needs one; true if it ran.
    fn compact(&self) -> Result<bool> {
        let v = self.version.load_full();
        let base = self.opts.buffer_bytes.saturating_mul(RATIO);
        let Some(c) = tree::pick(&v, L0_TRIGGER, base, RATIO) else {
            return Ok(false);
        };
        let period = self.period_of(self.accessed.load(Ordering::Relaxed));
        let outputs = self.rewrite(&c.inputs, &v, None, period)?;
        let next = tree::apply(&v, &c, outputs);
        self.install(next, &c.inputs)?;
        self.compactions.fetch_add(1, Ordering::Relaxed);
        Ok(true)
    }

    /// Merges `inputs` (newest first) into new tables: each record hot iff its rank is
    /// at or above `v`'s threshold; with `evict_below`, records ranked below it are
    /// dropped.
    /// `period`: the counter period the ranks are taken at (an eviction's two scans
    /// must use one).
    fn rewrite(
        &self,
        inputs: &[Arc<RaltTable>],
        v: &Version,
        evict_below: Option<f64>,
        period: u32,
    ) -> Result<Vec<Arc<RaltTable>>> {
        let counting = self.opts.counting;
        let mut scan = MergedScan::new(inputs, &[], counting)?;
        let mut number = self.take_number();
        let writer = self.writer();
        let mut out = Outputs::new(&writer, &mut number);
        while let Some((key, record)) = scan.next_record()? {
            let rank = record.rank(&key, period, &counting);
            if evict_below.is_some_and(|t| rank < t) {
                continue;
            }
            out.add(&key, &record, rank >= v.hot_threshold)?;
        }
        let tables = out.finish()?;
        self.set_number(number);
        Ok(tables)
    }

    /// Evicts if the hot bytes or the table bytes are over their limits.
    fn evict_if_needed(&self) -> Result<()> {
        let v = self.version.load_full();
        let (hot_limit, phys_limit) = {
            let st = self.state.lock();
            (st.hot_limit, st.phys_limit)
        };
        // β of slack above each limit, and eviction targets β below it: 2β of the
        // limit arrives between two evictions (each rewrites the whole tree).
        let over = |bytes: u64, limit: u64| bytes as f64 > limit as f64 * (1.0 + self.opts.beta);
        if !over(v.hot_bytes(), hot_limit) && !over(v.file_bytes(), phys_limit) {
            return Ok(());
        }
        self.evict(&v, hot_limit, phys_limit)
    }

    /// The eviction of the module docs: one scan to sample thresholds (and tune the
    /// limits), one to rewrite the tree as one run in its last level.
    fn evict(&self, v: &Arc<Version>, hot_limit: u64, phys_limit: u64) -> Result<()> {
        let counting = self.opts.counting;
        let period = self.period_of(self.accessed.load(Ordering::Relaxed));
        let tables: Vec<Arc<RaltTable>> = v.tables().map(|(_, t)| Arc::clone(t)).collect();
        let record_total: u64 = tables.iter().map(|t| t.record_bytes).sum();
        let phys_total: u64 = tables.iter().map(|t| t.phys_bytes).sum();
        let seed = self.accessed.load(Ordering::Relaxed);
        let mut hot_sampler = Sampler::new(record_total, SAMPLES, seed);
        let mut phys_sampler = Sampler::new(phys_total, SAMPLES, seed.rotate_left(17));
        let (mut stable_hot, mut stable_phys, mut all_hot, mut all_phys) = (0u64, 0u64, 0u64, 0u64);
        let mut scan = MergedScan::new(&tables, &[], counting)?;
        let mut encoded = Vec::new();
        while let Some((key, record)) = scan.next_record()? {
            let rank = record.rank(&key, period, &counting);
            encoded.clear();
            record.encode_into(&mut encoded);
            let phys = table::phys_size(&key, &encoded);
            let hot = u64::from(record.hot_size);
            hot_sampler.feed(hot, rank);
            phys_sampler.feed(phys, rank);
            all_hot += hot;
            all_phys += phys;
            if record.is_stable(period) {
                stable_hot += hot;
                stable_phys += phys;
            }
        }
        let (hot_limit, phys_limit) = if self.opts.auto_tune {
            let ratio = all_phys as f64 / all_hot.max(1) as f64;
            Tuning::for_fd_size(self.opts.fd_size).limits(stable_hot, stable_phys, ratio)
        } else {
            (hot_limit, phys_limit)
        };
        let keep = 1.0 - self.opts.beta;
        let hot_threshold = hot_sampler.threshold((hot_limit as f64 * keep) as u64);
        // The sampler counts each key's merged record once; the files hold every copy
        // of it plus block overhead. Their ratio turns the limit into record bytes.
        let file_total = v.file_bytes().max(1);
        let phys_keep = (phys_limit.min(file_total) as f64 * keep * phys_total as f64
            / file_total as f64) as u64;
        let evict_below = phys_sampler.threshold(phys_keep);
        let mut next = Version {
            levels: Vec::new(),
            hot_threshold: hot_threshold.max(evict_below),
        };
        let outputs = self.rewrite(&tables, &next, Some(evict_below), period)?;
        let last = v.levels.len().max(2) - 1;
        next.levels = vec![Vec::new(); last + 1];
        if let Some(l) = next.levels.get_mut(last) {
            *l = outputs;
        }
        {
            let mut st = self.state.lock();
            st.hot_limit = hot_limit;
            st.phys_limit = phys_limit;
        }
        self.install(next, &tables)?;
        self.evictions.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
