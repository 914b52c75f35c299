//! Storage engines behind one object-safe trait, so every workload runs unchanged on
//! Strata, RocksDB or fjall.
//!
//! Role: `bench`, `ycsb` and `ldb` open a `Box<dyn KvEngine>` with [`open`] and share
//! `&dyn KvEngine` across scoped worker threads (engines are `Send + Sync`). After the
//! workers are joined the box is consumed by [`KvEngine::close`].
//!
//! Statistics are reported engine-neutrally in [`EngineStats`], so write amplification
//! is computed the same way for every engine: (flush + compaction bytes written) / flush
//! bytes. A figure an engine does not expose is named by [`KvEngine::unavailable_stats`]
//! (and reported as `null`, never as a made-up number). How each engine applies the
//! shared flags is described by [`mapping::of`], printed into every JSON result.

/// Implements [`Cursor`] for an iterator type whose inherent methods have the trait's
/// names and meanings; `entry` is `$entry` with the iterator bound to `$it`.
macro_rules! cursor_by_inherent_methods {
    ([$($generics:tt)*] $ty:ty, |$it:ident| $entry:expr) => {
        impl<$($generics)*> $crate::engine::Cursor for $ty {
            fn seek(&mut self, key: &[u8]) {
                <$ty>::seek(self, key)
            }
            fn seek_for_prev(&mut self, key: &[u8]) {
                <$ty>::seek_for_prev(self, key)
            }
            fn seek_to_first(&mut self) {
                <$ty>::seek_to_first(self)
            }
            fn seek_to_last(&mut self) {
                <$ty>::seek_to_last(self)
            }
            fn next(&mut self) {
                <$ty>::next(self)
            }
            fn prev(&mut self) {
                <$ty>::prev(self)
            }
            fn entry(&self) -> Option<(&[u8], &[u8])> {
                let $it = self;
                $entry
            }
        }
    };
}

#[cfg(test)]
pub mod conformance;
#[cfg(feature = "fjall")]
pub mod fjall;
pub mod fjall_options;
pub mod mapping;
#[cfg(test)]
pub mod memory;
pub mod options;
mod rocks_stats;
#[cfg(feature = "rocksdb")]
pub mod rocksdb;
pub mod strata;

use crate::error::{CliError, Result};
use options::{EngineFlags, EngineKind};
use serde::Serialize;
use std::path::Path;

/// One update of a batch.
#[derive(Clone, Copy, Debug)]
pub enum BatchOp<'a> {
    /// `key = value`.
    Put(&'a [u8], &'a [u8]),
    /// Delete `key`.
    Delete(&'a [u8]),
    /// Merge a counter operand into `key` (see [`KvEngine::merge`]).
    Merge(&'a [u8], &'a [u8]),
}

/// How an engine's optimistic transaction ended ([`KvEngine::transaction`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Commit {
    /// Committed; `found` of the keys read for update existed.
    Done {
        /// Keys read for update that held a value.
        found: usize,
    },
    /// Lost a conflict and wrote nothing; the caller runs it again.
    Conflict,
}

/// Scan direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Ascending from the first key `>= start` (or the first key).
    Forward,
    /// Descending from the last key `<= start` (or the last key).
    Reverse,
}

/// The calls a scan makes on an engine's positioned iterator (Strata's `DbIterator`,
/// RocksDB's raw iterator), so that [`scan_cursor`] serves both.
pub trait Cursor {
    /// Positions at the first key `>= key`.
    fn seek(&mut self, key: &[u8]);
    /// Positions at the last key `<= key`.
    fn seek_for_prev(&mut self, key: &[u8]);
    /// Positions at the first key.
    fn seek_to_first(&mut self);
    /// Positions at the last key.
    fn seek_to_last(&mut self);
    /// Moves to the next key.
    fn next(&mut self);
    /// Moves to the previous key.
    fn prev(&mut self);
    /// The current entry, or `None` when not positioned.
    fn entry(&self) -> Option<(&[u8], &[u8])>;
}

/// One scan: where it starts, the exclusive upper bound it stays below, its direction
/// and how many entries it visits at most.
#[derive(Clone, Copy, Debug)]
pub struct Scan<'a> {
    /// Forward: from the first key `>= start`; reverse: from the last key `<= start`;
    /// `None`: from the first (last) key.
    pub start: Option<&'a [u8]>,
    /// Only keys `< end` are visited, in either direction (RocksDB's
    /// `iterate_upper_bound`, Strata's `ReadOptions::upper_bound`); `None`: no bound.
    pub end: Option<&'a [u8]>,
    /// Which way.
    pub direction: Direction,
    /// The most entries visited.
    pub limit: usize,
}

impl<'a> Scan<'a> {
    /// A scan of up to `limit` entries from `start` in `direction`, with no end.
    pub fn new(start: Option<&'a [u8]>, direction: Direction, limit: usize) -> Scan<'a> {
        Scan {
            start,
            end: None,
            direction,
            limit,
        }
    }

    /// The same scan, below `end`.
    pub fn until(self, end: Option<&'a [u8]>) -> Scan<'a> {
        Scan { end, ..self }
    }

    /// True iff `key` is below the scan's end.
    fn below_end(&self, key: &[u8]) -> bool {
        self.end.is_none_or(|e| key < e)
    }
}

/// The key range of `scan` as bounds (for engines that iterate ranges): forward
/// `[start, end)`; reverse up to `start` inclusive or `end` exclusive, whichever is
/// lower.
#[cfg(any(test, feature = "fjall"))]
pub fn scan_bounds<'a>(scan: Scan<'a>) -> (std::ops::Bound<&'a [u8]>, std::ops::Bound<&'a [u8]>) {
    use std::ops::Bound;
    let end = scan.end.map_or(Bound::Unbounded, Bound::Excluded);
    match (scan.direction, scan.start) {
        (_, None) => (Bound::Unbounded, end),
        // Ranges must not be inverted (`BTreeMap::range` panics): empty at `end`.
        (Direction::Forward, Some(s)) => match scan.end {
            Some(e) if s >= e => (Bound::Included(e), Bound::Excluded(e)),
            _ => (Bound::Included(s), end),
        },
        (Direction::Reverse, Some(s)) if scan.end.is_none_or(|e| s < e) => {
            (Bound::Unbounded, Bound::Included(s))
        }
        (Direction::Reverse, Some(_)) => (Bound::Unbounded, end),
    }
}

/// Visits up to `scan.limit` entries of `c` as `scan` says, until `visit` returns false;
/// returns how many were visited. The caller checks the iterator's error status
/// afterwards, and gives `c` the scan's end as its native upper bound: keys at or above
/// it are also skipped here (reverse: before the first visit; forward: the scan stops).
pub fn scan_cursor<V>(c: &mut impl Cursor, scan: Scan<'_>, visit: &mut V) -> usize
where
    V: FnMut(&[u8], &[u8]) -> bool + ?Sized,
{
    let Scan {
        start,
        direction,
        limit,
        ..
    } = scan;
    match (direction, start) {
        (Direction::Forward, Some(k)) => c.seek(k),
        (Direction::Forward, None) => c.seek_to_first(),
        (Direction::Reverse, Some(k)) => c.seek_for_prev(k),
        (Direction::Reverse, None) => c.seek_to_last(),
    }
    let mut n = 0;
    while n < limit {
        let Some((k, v)) = c.entry() else { break };
        if !scan.below_end(k) {
            if direction == Direction::Forward {
                break;
            }
            c.prev();
            continue;
        }
        n += 1;
        if !visit(k, v) {
            break;
        }
        match direction {
            Direction::Forward => c.next(),
            Direction::Reverse => c.prev(),
        }
    }
    n
}

/// Called for each `(key, value)` of a scan; returns false to stop.
pub type Visitor<'a> = dyn FnMut(&[u8], &[u8]) -> bool + 'a;

/// A peer's own handle, lent to the direct drivers of `bench --floor`
/// (`bench::floor`), which call it without this module's trait in between.
#[derive(Clone, Copy)]
pub enum Direct<'a> {
    /// The RocksDB database (one column family, not transactional) and whether
    /// `--sync` is set.
    #[cfg(feature = "rocksdb")]
    Rocksdb {
        /// The database.
        db: &'a ::rocksdb::DB,
        /// `--sync`.
        sync: bool,
    },
    /// The fjall keyspace every key goes to, its database (for batches and
    /// `--sync`'s journal persist), and whether `--sync` is set.
    #[cfg(feature = "fjall")]
    Fjall {
        /// The one keyspace.
        keyspace: &'a ::fjall::Keyspace,
        /// Its database.
        db: &'a ::fjall::Database,
        /// `--sync`.
        sync: bool,
    },
    /// Never built: keeps the lifetime used when no peer is compiled in.
    #[doc(hidden)]
    _Unbuilt(std::marker::PhantomData<&'a ()>, std::convert::Infallible),
}

/// The name every engine gives its first column family (RocksDB's
/// `kDefaultColumnFamilyName`, Strata's default family, the fjall adapter's keyspace).
pub const DEFAULT_FAMILY: &str = "default";

/// The name of column family `i` of `--num_column_families`: `default`, then `cf1`,
/// `cf2`, ... (the same on every engine, so a database is comparable across engines).
pub fn family_name(i: usize) -> String {
    if i == 0 {
        DEFAULT_FAMILY.to_string()
    } else {
        format!("cf{i}")
    }
}

/// The family (index into `n` families) that holds `key`: FNV-1a 64 of the key bytes
/// modulo `n`. Shared by every engine, so the same key lands in the same family
/// everywhere. With `n <= 1` nothing is hashed: a single-family run does exactly what
/// it did before column families existed.
pub fn family_of(key: &[u8], n: usize) -> usize {
    if n <= 1 {
        return 0;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in key {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // `n` fits in u64 and the remainder is below `n`, so both conversions are exact.
    (h % n as u64) as usize
}

/// Which column families an opened engine's key operations go to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Families {
    /// `n` families named by [`family_name`], created where missing, each key in the
    /// family [`family_of`] picks (`bench --num_column_families`).
    Spread(usize),
    /// Every operation in the existing family of this name (`ldb --cf`); a missing
    /// family is an error at open.
    One(String),
}

impl Families {
    /// The names of the families operations go to, in routing order.
    pub fn names(&self) -> Vec<String> {
        match self {
            Families::Spread(n) => (0..(*n).max(1)).map(family_name).collect(),
            Families::One(name) => vec![name.clone()],
        }
    }
}

/// The error of a scan over several column families: keys are spread over them by a
/// hash, so no one family holds a range, and a merged scan is not what the benchmark
/// measures.
pub fn scan_refused(engine: &str, n: usize) -> CliError {
    CliError::Usage(format!(
        "{engine}: scans are not meaningful over {n} column families (keys are spread by \
         hash); run readseq, readreverse, seekrandom and scans with \
         --num_column_families=1"
    ))
}

/// The error for a column family the database does not have.
pub fn missing_family(name: &str, db: &Path, have: &[String]) -> CliError {
    CliError::Usage(format!(
        "no column family `{name}` in '{}' (it has: {})",
        db.display(),
        have.join(", ")
    ))
}

/// A key-value engine as the workloads see it. Object-safe; `Send + Sync`.
pub trait KvEngine: Send + Sync {
    /// `strata`, `rocksdb` or `fjall`.
    fn name(&self) -> &'static str;
    /// Writes `key = value`.
    ///
    /// # Errors
    /// The engine's write error.
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()>;
    /// Reads `key`: calls `found` with its value, borrowed where the engine lends it
    /// (RocksDB's pinned slice, fjall's slice), and returns true; false iff absent.
    /// The timed loops read through this, so no peer pays for a copy the workload
    /// does not need (Strata's `Db::get_cf` returns a vector of its own).
    ///
    /// # Errors
    /// The engine's read error.
    fn get_with(&self, key: &[u8], found: &mut dyn FnMut(&[u8])) -> Result<bool>;
    /// Reads `key` into a new vector; `None` iff absent.
    ///
    /// # Errors
    /// The engine's read error.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut value = None;
        self.get_with(key, &mut |v| value = Some(v.to_vec()))?;
        Ok(value)
    }
    /// The length of `key`'s value; `None` iff absent.
    ///
    /// # Errors
    /// The engine's read error.
    fn get_len(&self, key: &[u8]) -> Result<Option<usize>> {
        let mut len = 0;
        let found = self.get_with(key, &mut |v| len = v.len())?;
        Ok(found.then_some(len))
    }
    /// Reads every key of `keys` in one batched call where the engine has one
    /// (Strata's `multi_get_cf`, RocksDB's `batched_multi_get_cf`); the answers in the
    /// order of `keys`. The default calls [`KvEngine::get`] per key.
    ///
    /// # Errors
    /// The first key's read error.
    fn multi_get(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>> {
        keys.iter().map(|k| self.get(k)).collect()
    }
    /// Deletes `key` (absent keys are fine).
    ///
    /// # Errors
    /// The engine's write error.
    fn delete(&self, key: &[u8]) -> Result<()>;
    /// Merges `operand` into `key` with the harness's merge operator: 64-bit
    /// little-endian counter addition (`strata.u64_add`; see [`mapping::of`]).
    ///
    /// # Errors
    /// The engine's write error; [`CliError::Usage`] where the engine has no merge.
    fn merge(&self, key: &[u8], operand: &[u8]) -> Result<()>;
    /// Deletes every key in `[start, end)` with one range tombstone.
    ///
    /// # Errors
    /// The engine's write error; [`CliError::Usage`] where the engine has none.
    fn delete_range(&self, start: &[u8], end: &[u8]) -> Result<()>;
    /// Applies `ops` atomically.
    ///
    /// # Errors
    /// The engine's write error.
    fn write_batch(&self, ops: &[BatchOp<'_>]) -> Result<()>;
    /// Runs one optimistic transaction: reads each of `read_for_update` so that a
    /// concurrent write to it fails the commit, applies `ops`, and commits. A database
    /// opened with `--transaction_db` (RocksDB's `OptimisticTransactionDB`, fjall's
    /// `OptimisticTxDatabase`; Strata needs no special open).
    ///
    /// # Errors
    /// [`CliError::Usage`] if the engine was not opened for transactions; the engine's
    /// read or write error. A conflict is not an error: [`Commit::Conflict`].
    fn transaction(&self, read_for_update: &[&[u8]], ops: &[BatchOp<'_>]) -> Result<Commit>;
    /// Visits the entries `scan` names (up to its limit, below its end) until `visit`
    /// returns false. Returns the number of entries visited.
    ///
    /// # Errors
    /// The iterator's error status.
    fn scan(&self, scan: Scan<'_>, visit: &mut Visitor<'_>) -> Result<usize>;
    /// Flushes memtables to L0 and waits.
    ///
    /// # Errors
    /// The engine's flush error.
    fn flush(&self) -> Result<()>;
    /// Compacts `[begin, end]` (unbounded where `None`) to the bottom level and waits.
    ///
    /// # Errors
    /// The engine's compaction error.
    fn compact(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()>;
    /// Waits until background flushes and compactions are done.
    ///
    /// # Errors
    /// The engine's background error.
    fn wait_for_compactions(&self) -> Result<()>;
    /// Current statistics.
    fn stats(&self) -> EngineStats;
    /// The figures of [`EngineStats`] this engine cannot provide (names from [`stat`]);
    /// they read 0 in [`KvEngine::stats`] and are reported as unavailable, not as 0.
    fn unavailable_stats(&self) -> &'static [&'static str] {
        &[]
    }
    /// Creates column family `name` with the per-tree options the database was opened
    /// with (`ldb create_cf`). The default refuses: an engine without families (the
    /// test engines).
    ///
    /// # Errors
    /// [`CliError::Usage`] if the family exists or the engine has no families; the
    /// engine's error.
    fn create_cf(&mut self, name: &str) -> Result<()> {
        let _ = name;
        Err(CliError::Usage(format!(
            "{}: no column families",
            self.name()
        )))
    }
    /// Writes `key = value` to expire `ttl` from now (`ldb put --ttl`). The default
    /// refuses: only Strata stores deadlines (in a database or family created with
    /// `--expiring_values`).
    ///
    /// # Errors
    /// [`CliError::Usage`] for an engine without deadlines; the engine's error.
    fn put_with_ttl(&self, key: &[u8], value: &[u8], ttl: std::time::Duration) -> Result<()> {
        let _ = (key, value, ttl);
        Err(CliError::Usage(format!(
            "{}: no values with deadlines (--ttl is Strata's)",
            self.name()
        )))
    }
    /// Drops column family `name` and its data (`ldb drop_cf`); `default` cannot be
    /// dropped. The default refuses, as [`KvEngine::create_cf`].
    ///
    /// # Errors
    /// [`CliError::Usage`] for a missing family or `default`; the engine's error.
    fn drop_cf(&mut self, name: &str) -> Result<()> {
        let _ = name;
        Err(CliError::Usage(format!(
            "{}: no column families",
            self.name()
        )))
    }
    /// The names of the database's column families, `default` first.
    ///
    /// # Errors
    /// The engine's error.
    fn cf_names(&self) -> Result<Vec<String>> {
        Ok(vec![DEFAULT_FAMILY.to_string()])
    }
    /// The peer's own handle for a direct driver (`bench --floor`); `None` for Strata
    /// and for a peer opened with several families or for transactions.
    fn direct(&self) -> Option<Direct<'_>> {
        None
    }
    /// The virtual tables of the routed families and the parents they keep on disk,
    /// summed over the families, exact from the current version; `None` iff the
    /// engine has no virtual tables (every engine but Strata).
    fn virtual_space(&self) -> Option<VirtualSpace> {
        None
    }
    /// Stops background work and closes the database.
    ///
    /// # Errors
    /// The engine's close error.
    fn close(self: Box<Self>) -> Result<()>;
}

/// Names of the [`EngineStats`] figures, as [`KvEngine::unavailable_stats`] lists them.
#[cfg_attr(not(feature = "fjall"), allow(dead_code))]
pub mod stat {
    /// [`super::EngineStats::wal_bytes`].
    pub const WAL_BYTES: &str = "wal_bytes";
    /// [`super::EngineStats::flush_bytes_written`].
    pub const FLUSH_BYTES_WRITTEN: &str = "flush_bytes_written";
    /// [`super::EngineStats::compaction_bytes_written`].
    pub const COMPACTION_BYTES_WRITTEN: &str = "compaction_bytes_written";
    /// [`super::EngineStats::compaction_bytes_read`].
    pub const COMPACTION_BYTES_READ: &str = "compaction_bytes_read";
    /// [`super::EngineStats::live_table_bytes`].
    pub const LIVE_TABLE_BYTES: &str = "live_table_bytes";
    /// [`super::LevelReport::read_bytes`] of every level.
    pub const LEVEL_READ_BYTES: &str = "levels.read_bytes";
    /// [`super::LevelReport::write_bytes`] of every level.
    pub const LEVEL_WRITE_BYTES: &str = "levels.write_bytes";
    /// [`super::LevelReport::count`] of every level.
    pub const LEVEL_COUNT: &str = "levels.count";
    /// Write amplification, which needs flush and compaction bytes.
    pub const WRITE_AMPLIFICATION: &str = "write_amplification";
}

/// Files and compaction figures of one level, engine-neutral.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LevelReport {
    /// Level number (0 = L0).
    pub level: usize,
    /// Files in the level.
    pub files: u64,
    /// Bytes in the level.
    pub size_bytes: u64,
    /// Bytes read by compactions into the level (0 where the engine does not say).
    pub read_bytes: u64,
    /// Bytes written into the level.
    pub write_bytes: u64,
    /// Compactions (or flushes for L0) into the level.
    pub count: u64,
}

/// Statistics of an engine, engine-neutral.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EngineStats {
    /// The engine's own human-readable level table.
    #[serde(skip)]
    pub level_table: String,
    /// Per-level figures.
    pub levels: Vec<LevelReport>,
    /// Every counter the engine exposes, by name, in the engine's order.
    #[serde(serialize_with = "counters_as_map")]
    pub counters: Vec<(String, u64)>,
    /// Bytes appended to write-ahead logs.
    pub wal_bytes: u64,
    /// Bytes of tables written by flushes.
    pub flush_bytes_written: u64,
    /// Bytes of tables written by compactions.
    pub compaction_bytes_written: u64,
    /// Bytes of tables read by compactions.
    pub compaction_bytes_read: u64,
    /// Bytes of every live table file (the tables the current version needs on disk),
    /// each file counted once, summed over the routed families: the numerator of
    /// space amplification, taken alike for every engine. Strata:
    /// `TableSpace::live_table_bytes`; RocksDB: `rocksdb.live-sst-files-size`; fjall:
    /// its adapter's doc says what it counts.
    pub live_table_bytes: u64,
    /// Table I/O per data path (`--db_paths`), where the engine reports it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<PathReport>,
}

impl EngineStats {
    /// The value of the counter `name`; `None` iff the engine has no such counter.
    pub fn counter(&self, name: &str) -> Option<u64> {
        self.counters
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| *v)
    }
}

/// Virtual tables and their parents ([`KvEngine::virtual_space`]): Strata's
/// `LevelStats::virtual_files` and `TableSpace` gauges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct VirtualSpace {
    /// Virtual tables in the levels.
    pub virtual_tables: u64,
    /// Distinct parents those tables read.
    pub parents: u64,
    /// The parents' file bytes.
    pub parent_bytes: u64,
    /// Of `parent_bytes`, the bytes live slices reference.
    pub referenced_bytes: u64,
    /// Of `parent_bytes`, the bytes no slice references (on disk, unreadable).
    pub garbage_bytes: u64,
}

/// Table I/O of one data path, engine-neutral.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PathReport {
    /// The directory.
    pub path: String,
    /// Table reads.
    pub reads: u64,
    /// Bytes they returned.
    pub bytes_read: u64,
    /// Table appends.
    pub writes: u64,
    /// Bytes appended.
    pub bytes_written: u64,
    /// Mean read latency, microseconds.
    pub read_mean_us: f64,
    /// Median read latency (upper bound of its power-of-two bucket), microseconds.
    pub read_p50_us: f64,
    /// 99th-percentile read latency (bucket upper bound), microseconds.
    pub read_p99_us: f64,
}

fn counters_as_map<S: serde::Serializer>(
    counters: &[(String, u64)],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_map(counters.iter().map(|(k, v)| (k, v)))
}

impl EngineStats {
    /// (flush + compaction bytes written) / flush bytes written; 0 if nothing flushed.
    pub fn write_amplification(&self) -> f64 {
        if self.flush_bytes_written == 0 {
            0.0
        } else {
            (self.flush_bytes_written + self.compaction_bytes_written) as f64
                / self.flush_bytes_written as f64
        }
    }
}

/// The error of a transaction on an engine opened without `--transaction_db`.
#[cfg_attr(not(any(feature = "rocksdb", feature = "fjall")), allow(dead_code))]
pub fn not_transactional(engine: &str) -> CliError {
    CliError::Usage(format!(
        "{engine}: transactions need the database opened with --transaction_db"
    ))
}

/// Opens the engine `flags` select, first deleting the database unless
/// `--use_existing_db` (or `keep` is set, as for `ldb` and `ycsb --phase=run`), with
/// `--num_column_families` families ([`Families::Spread`]).
///
/// # Errors
/// Bad options ([`CliError::Usage`]), a refused deletion, or the engine's open error.
pub fn open(flags: &EngineFlags, keep: bool) -> Result<Box<dyn KvEngine>> {
    open_families(flags, keep, &Families::Spread(flags.num_column_families))
}

/// [`open`] with the column families `families` instead of `--num_column_families`.
/// Every family the database has is opened (RocksDB insists); key operations go to
/// `families` only.
///
/// # Errors
/// As [`open`]; [`CliError::Usage`] for flags the engine cannot honour (before the
/// database is deleted), for a [`Families::One`] the database lacks, for
/// no families, and for several families with `--transaction_db` on Strata (whose
/// transactions have no column families).
pub fn open_families(
    flags: &EngineFlags,
    keep: bool,
    families: &Families,
) -> Result<Box<dyn KvEngine>> {
    if *families == Families::Spread(0) {
        return Err(CliError::Usage(
            "invalid value for '--num_column_families': must be > 0".into(),
        ));
    }
    // Every engine's flags pass Strata's checks of the values they share, so a bad
    // value is refused alike whichever engine runs; what an engine cannot do at all
    // (`--compaction_style=universal` on Strata, fjall's refusals) is refused here too.
    // All of it before the database is deleted.
    let options = match flags.engine {
        EngineKind::Strata => flags.strata_options()?,
        EngineKind::Fjall => {
            fjall_options::FjallPlan::from_flags(flags)?;
            flags.shared_options()?
        }
        EngineKind::Rocksdb => flags.shared_options()?,
    };
    if !keep && !flags.use_existing_db {
        destroy(&flags.db)?;
    }
    match flags.engine {
        EngineKind::Strata => Ok(Box::new(strata::StrataEngine::open(
            flags, options, families,
        )?)),
        #[cfg(feature = "rocksdb")]
        EngineKind::Rocksdb => Ok(Box::new(rocksdb::RocksEngine::open(flags, families)?)),
        #[cfg(not(feature = "rocksdb"))]
        EngineKind::Rocksdb => Err(CliError::Usage(
            "'--engine=rocksdb' needs a build with `--features rocksdb`".into(),
        )),
        #[cfg(feature = "fjall")]
        EngineKind::Fjall => Ok(Box::new(fjall::FjallEngine::open(flags, families)?)),
        #[cfg(not(feature = "fjall"))]
        EngineKind::Fjall => Err(fjall_not_built()),
    }
}

/// Opens the existing database in `flags.db` to read it, with the column families
/// `families`: Strata (`Db::open_read_only`) and RocksDB (`OpenForReadOnly`) read-only,
/// with no lock and nothing written, so beside a live writer; fjall, which has no
/// read-only open, as by [`open_families`] (read-write, keeping the database).
///
/// # Errors
/// As [`open_families`]; a family the database lacks.
pub fn open_read_only(flags: &EngineFlags, families: &Families) -> Result<Box<dyn KvEngine>> {
    match flags.engine {
        EngineKind::Strata => Ok(Box::new(strata::StrataEngine::open_read_only(
            flags,
            flags.strata_options()?,
            families,
        )?)),
        #[cfg(feature = "rocksdb")]
        EngineKind::Rocksdb => {
            flags.shared_options()?;
            Ok(Box::new(rocksdb::RocksEngine::open_read_only(
                flags, families,
            )?))
        }
        _ => open_families(flags, true, families),
    }
}

/// [`open_read_only`] as a secondary instance keeping its files in `secondary_dir`
/// (Strata's `Db::open_secondary`, for `ldb --secondary_path`).
///
/// # Errors
/// [`CliError::Usage`] for another engine; the engine's open errors.
pub fn open_secondary(
    flags: &EngineFlags,
    families: &Families,
    secondary_dir: &std::path::Path,
) -> Result<Box<dyn KvEngine>> {
    match flags.engine {
        EngineKind::Strata => Ok(Box::new(strata::StrataEngine::open_secondary(
            flags,
            flags.strata_options()?,
            families,
            secondary_dir,
        )?)),
        _ => Err(CliError::Usage(
            "'--secondary_path' works on strata databases only".into(),
        )),
    }
}

#[cfg(not(feature = "fjall"))]
fn fjall_not_built() -> CliError {
    CliError::Usage(
        "'--engine=fjall' needs a build with `--features fjall` \
         (cargo build --release -p strata-cli --features fjall)"
            .into(),
    )
}

/// The column families of the database in `flags.db`, `default` first, read without
/// opening it where the engine can (Strata's `Db::list_cfs`, RocksDB's
/// `DB::list_cf`); fjall has no such call, so its database is opened and closed.
///
/// # Errors
/// [`CliError::Usage`] if there is no database; the engine's error.
pub fn list_cfs(flags: &EngineFlags) -> Result<Vec<String>> {
    if !is_database_dir(&flags.db) {
        return Err(CliError::Usage(format!(
            "no database in '{}'",
            flags.db.display()
        )));
    }
    match flags.engine {
        EngineKind::Strata => Ok(::strata::Db::list_cfs(&flags.db)?),
        #[cfg(feature = "rocksdb")]
        EngineKind::Rocksdb => rocksdb::list_cfs(&flags.db),
        #[cfg(not(feature = "rocksdb"))]
        EngineKind::Rocksdb => Err(CliError::Usage(
            "'--engine=rocksdb' needs a build with `--features rocksdb`".into(),
        )),
        #[cfg(feature = "fjall")]
        EngineKind::Fjall => {
            let e = open_families(flags, true, &Families::Spread(1))?;
            let names = e.cf_names()?;
            e.close()?;
            Ok(names)
        }
        #[cfg(not(feature = "fjall"))]
        EngineKind::Fjall => Err(fjall_not_built()),
    }
}

/// Whether `dir` holds a database of one of the engines: a `CURRENT` file (Strata,
/// RocksDB) or fjall's `version` marker beside its `keyspaces` directory.
pub fn is_database_dir(dir: &Path) -> bool {
    dir.join("CURRENT").is_file()
        || (dir.join(fjall_options::VERSION_MARKER).is_file()
            && dir.join(fjall_options::KEYSPACES_DIR).is_dir())
}

/// Deletes the database directory `dir`, refusing anything that does not look like a
/// database ([`is_database_dir`]) unless it is empty. A missing directory is fine.
///
/// # Errors
/// [`CliError::Usage`] for a non-database directory; [`CliError::Io`] on failure.
pub fn destroy(dir: &Path) -> Result<()> {
    let mut entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(CliError::io("read_dir", dir, e)),
    };
    let empty = entries.next().is_none();
    if !empty && !is_database_dir(dir) {
        return Err(CliError::Usage(format!(
            "refusing to delete '{}': not a database directory (no CURRENT file, \
             no fjall version marker); pass --use_existing_db or another --db",
            dir.display()
        )));
    }
    std::fs::remove_dir_all(dir).map_err(|e| CliError::io("remove_dir_all", dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_amplification_is_table_bytes_over_flushed() {
        let s = EngineStats {
            flush_bytes_written: 100,
            compaction_bytes_written: 250,
            ..EngineStats::default()
        };
        assert!((s.write_amplification() - 3.5).abs() < 1e-9);
        assert_eq!(EngineStats::default().write_amplification(), 0.0);
    }

    #[test]
    fn destroy_refuses_non_database_directories() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("db");
        destroy(&dir).expect("missing is fine");
        std::fs::create_dir(&dir).expect("mkdir");
        std::fs::write(dir.join("precious.txt"), b"x").expect("write");
        assert!(matches!(destroy(&dir), Err(CliError::Usage(_))));
        assert!(dir.join("precious.txt").exists());
        std::fs::write(dir.join("CURRENT"), b"MANIFEST-000001\n").expect("write");
        destroy(&dir).expect("database dir is deleted");
        assert!(!dir.exists());
        // A fjall database: `version` marker and `keyspaces` directory.
        std::fs::create_dir_all(dir.join("keyspaces")).expect("mkdir");
        std::fs::write(dir.join("precious.txt"), b"x").expect("write");
        assert!(matches!(destroy(&dir), Err(CliError::Usage(_))));
        std::fs::write(dir.join("version"), b"x").expect("write");
        destroy(&dir).expect("fjall dir is deleted");
        assert!(!dir.exists());
    }

    /// Strata and fjall refuse universal compaction naming the flag, before the
    /// database is deleted.
    #[test]
    fn universal_is_refused_by_strata_and_fjall_before_deleting() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let db = tmp.path().join("db");
        let e = open(
            &EngineFlags {
                db: db.clone(),
                ..conformance::default_flags()
            },
            false,
        )
        .expect("open");
        e.put(b"k", b"v").expect("put");
        e.close().expect("close");
        for engine in [EngineKind::Strata, EngineKind::Fjall] {
            let flags = EngineFlags {
                engine,
                db: db.clone(),
                compaction_style: options::CompactionStyleFlag::Universal,
                ..conformance::default_flags()
            };
            let Err(err) = open(&flags, false) else {
                panic!("{engine:?} opened with universal compaction");
            };
            assert!(matches!(err, CliError::Usage(_)), "{engine:?}: {err:?}");
            let msg = err.to_string();
            assert!(msg.contains("'--compaction_style'"), "{engine:?}: {msg}");
            assert!(db.join("CURRENT").is_file(), "{engine:?}: database deleted");
        }
    }

    #[cfg(not(feature = "fjall"))]
    #[test]
    fn fjall_without_the_feature_says_how_to_build_it() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let flags = EngineFlags {
            engine: EngineKind::Fjall,
            db: tmp.path().join("db"),
            ..conformance::default_flags()
        };
        let Err(err) = open(&flags, false) else {
            panic!("opened without the feature");
        };
        let msg = err.to_string();
        assert!(msg.contains("--features fjall"), "{msg}");
    }
}
