//! fjall 3 behind [`KvEngine`], configured from the same flags as Strata (feature
//! `fjall`).
//!
//! One fjall `Database` with one keyspace (`default`), or with
//! `--num_column_families=N` the keyspaces `default`, `cf1` .. `cf{N-1}` (fjall's
//! column families), each created with the same options, each key in the one
//! [`super::family_of`] picks; a batch or a transaction spans keyspaces atomically.
//! The flags are turned into a
//! [`FjallPlan`] (`fjall_options.rs`, tested in every build) and applied here; how each
//! flag maps is in `mapping.rs` and in every JSON result (`option_mapping`).
//!
//! Behaviour that differs from Strata and RocksDB, because fjall 3 has no equivalent:
//! - `compact(begin, end)` flushes, then compacts the whole keyspace to the last level
//!   (`Keyspace::major_compact`, fjall's only manual compaction; it ignores the range
//!   and writes 64 MB tables whatever `--target_file_size_base` says).
//! - `flush` is `Keyspace::rotate_memtable_and_wait` (public but doc-hidden in fjall 3)
//!   followed by a wait until no sealed memtable is left.
//! - `wait_for_compactions` polls until no flush is queued, no sealed memtable is left
//!   and no compaction runs or completes over three polls 20 ms apart. fjall schedules
//!   compactions only after a flush (or at open), so compaction debt left when it goes
//!   idle stays until the next flush; the wait does not force it.
//! - `--create_if_missing=false` and `--error_if_exists` are checked here: fjall always
//!   creates.
//! - Keys must be 1..=65535 bytes and values under 4 GiB (fjall panics otherwise; here
//!   such a write is a [`CliError::BadInput`] and writes nothing). Strata and RocksDB
//!   accept the empty key.
//! - Statistics: fjall counts no bytes written by flushes or compactions, nor WAL bytes
//!   appended, so write amplification is unavailable (reported as `null`, see
//!   [`KvEngine::unavailable_stats`]). Files and bytes per level come from the tree's
//!   current version (doc-hidden `AbstractTree` API of fjall 3); the bytes are fjall's
//!   table `file_size` metadata, which counts data blocks only. Live table bytes are the
//!   lengths of the version's table files on disk instead (see `stats`). The counters
//!   are fjall's runtime figures and the `metrics` feature's block-load and filter
//!   counts.
//! - Keyspace options (block size, filter, compression, compaction strategy) are stored
//!   when the keyspace is created; reopening with `--use_existing_db` keeps the stored
//!   ones, whatever the flags say now.
//! - `--transaction_db` opens an `OptimisticTxDatabase` (the same files); transactions
//!   are its `WriteTransaction`s, whose reads are all conflict-checked (fjall's
//!   serializable snapshot isolation), and every other operation goes to the plain
//!   `Database` and `Keyspace` inside it, outside fjall's conflict tracking.

use super::fjall_options::{self as fj, FjallCodec, FjallPlan};
use super::{
    family_of, missing_family, scan_bounds, scan_refused, stat, BatchOp, Commit, Direct, Direction,
    EngineStats, Families, KvEngine, LevelReport, Scan, Visitor, DEFAULT_FAMILY,
};
use crate::engine::options::EngineFlags;
use crate::error::{CliError, Result};
use fjall::config::{
    BlockSizePolicy, BloomConstructionPolicy, CompressionPolicy, FilterPolicy, FilterPolicyEntry,
    RestartIntervalPolicy,
};
use fjall::{
    AbstractTree, CompressionType, Database, Guard, Keyspace, KeyspaceCreateOptions,
    OptimisticTxDatabase, PersistMode, Readable,
};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

/// A keyspace's directory of table files, each named by its table id
/// (`lsm_tree::file::TABLES_FOLDER`, not exported by fjall).
const TABLES_DIR: &str = "tables";

/// An open fjall database and the keyspaces key operations go to.
pub struct FjallEngine {
    /// The keyspaces key operations go to, in routing order (`family_of` indexes it);
    /// never empty. Declared before `db`, so they are dropped first.
    ks: Vec<Keyspace>,
    db: Database,
    /// With `--transaction_db`: the transactional handle over `db`.
    tx: Option<OptimisticTxDatabase>,
    plan: FjallPlan,
}

fn codec(c: FjallCodec) -> CompressionType {
    match c {
        FjallCodec::None => CompressionType::None,
        FjallCodec::Lz4 => CompressionType::Lz4,
    }
}

fn keyspace_options(p: &FjallPlan) -> KeyspaceCreateOptions {
    let filter = match p.bloom_bits_per_key {
        Some(bits) => FilterPolicy::all(FilterPolicyEntry::Bloom(
            BloomConstructionPolicy::BitsPerKey(bits),
        )),
        None => FilterPolicy::disabled(),
    };
    let compression: Vec<CompressionType> = p.compression.iter().map(|&c| codec(c)).collect();
    KeyspaceCreateOptions::default()
        .max_memtable_size(p.memtable_bytes)
        .data_block_size_policy(BlockSizePolicy::all(p.block_size))
        .data_block_restart_interval_policy(RestartIntervalPolicy::all(p.restart_interval))
        .data_block_compression_policy(CompressionPolicy::new(compression))
        .filter_policy(filter)
        .expect_point_read_hits(false)
        .compaction_strategy(Arc::new(
            fjall::compaction::Leveled::default()
                .with_l0_threshold(p.l0_threshold)
                .with_table_target_size(p.table_target_size)
                .with_level_ratio_policy(vec![p.level_ratio]),
        ))
}

/// The database-wide settings of a plan, on the builder of a plain or a transactional
/// database (a macro: fjall does not export the builder's `Openable` bound).
macro_rules! configure {
    ($builder:expr, $plan:expr) => {
        $builder
            .cache_size($plan.cache_bytes)
            .worker_threads($plan.worker_threads)
            .max_cached_files(Some($plan.max_cached_files))
            .journal_compression(CompressionType::None)
    };
}

impl FjallEngine {
    /// Opens (or creates) `flags.db` with the mapped options.
    ///
    /// # Errors
    /// [`CliError::Usage`] for flags fjall cannot honour, a missing (existing)
    /// database with `--create_if_missing=false` (`--error_if_exists`), a missing
    /// [`Families::One`] or a keyspace name fjall refuses; fjall's open error.
    pub fn open(flags: &EngineFlags, families: &Families) -> Result<FjallEngine> {
        let plan = FjallPlan::from_flags(flags)?;
        let exists = flags.db.join(fj::VERSION_MARKER).is_file();
        if !exists && !plan.create_if_missing {
            return Err(CliError::Usage(format!(
                "database '{}' does not exist (create_if_missing is false)",
                flags.db.display()
            )));
        }
        if exists && plan.error_if_exists {
            return Err(CliError::Usage(format!(
                "database '{}' exists (error_if_exists is true)",
                flags.db.display()
            )));
        }
        let (db, tx) = if flags.transaction_db {
            let tx = configure!(OptimisticTxDatabase::builder(&flags.db), plan).open()?;
            (tx.inner().clone(), Some(tx))
        } else {
            (configure!(Database::builder(&flags.db), plan).open()?, None)
        };
        let mut ks = Vec::new();
        for name in families.names() {
            check_name(&name)?;
            // The adapter's `default` keyspace always exists (it is created on first
            // open), as the default family of Strata and RocksDB does.
            if let Families::One(_) = families {
                if name != DEFAULT_FAMILY && !db.keyspace_exists(&name) {
                    return Err(missing_family(&name, &flags.db, &names_of(&db)));
                }
            }
            ks.push(db.keyspace(&name, || keyspace_options(&plan))?);
        }
        Ok(FjallEngine { ks, db, tx, plan })
    }

    /// The keyspace `key` belongs to.
    fn ks(&self, key: &[u8]) -> &Keyspace {
        // `family_of` is below `ks.len()`, and `ks` is never empty (`open`).
        &self.ks[family_of(key, self.ks.len())]
    }

    /// fdatasync the journal after a write when `--sync`.
    fn sync(&self) -> Result<()> {
        if self.plan.sync {
            self.db.persist(PersistMode::SyncData)?;
        }
        Ok(())
    }

    /// Waits until no sealed memtable is waiting for (or in) a flush.
    fn wait_for_flushes(&self) {
        while self.sealed_memtables() > 0 || self.db.outstanding_flushes() > 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Sealed memtables of every routed keyspace.
    fn sealed_memtables(&self) -> usize {
        self.ks.iter().map(Keyspace::sealed_memtable_count).sum()
    }
}

/// The database's keyspace names, `default` first, the rest sorted (fjall keeps them
/// in a hash map).
fn names_of(db: &Database) -> Vec<String> {
    let mut names: Vec<String> = db
        .list_keyspace_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    names.sort_by(|a, b| (a != DEFAULT_FAMILY, a).cmp(&(b != DEFAULT_FAMILY, b)));
    names
}

/// Refuses a keyspace name fjall would panic on (it asserts 1..=255 bytes).
fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > 255 {
        return Err(CliError::Usage(format!(
            "fjall keyspace names must be 1..=255 bytes, got {}",
            name.len()
        )));
    }
    Ok(())
}

/// Refuses a batch (or a transaction's writes) fjall would panic on or cannot do.
fn check_ops(ops: &[BatchOp<'_>]) -> Result<()> {
    for op in ops {
        match *op {
            BatchOp::Put(k, v) => check_kv(k, v)?,
            BatchOp::Delete(k) => check_kv(k, b"")?,
            BatchOp::Merge(..) => return Err(no_merge()),
        }
    }
    Ok(())
}

/// Refuses a key or value fjall would panic on.
fn check_kv(key: &[u8], value: &[u8]) -> Result<()> {
    if key.is_empty() || key.len() > usize::from(u16::MAX) {
        return Err(CliError::BadInput(format!(
            "fjall keys must be 1..=65535 bytes, got {}",
            key.len()
        )));
    }
    if u32::try_from(value.len()).is_err() {
        return Err(CliError::BadInput(format!(
            "fjall values must be under 4 GiB, got {} bytes",
            value.len()
        )));
    }
    Ok(())
}

/// Visits the entries of `ks` that `scan` names until `visit` returns false; returns
/// how many were visited.
///
/// # Errors
/// fjall's read error.
pub(crate) fn scan_keyspace<V>(ks: &Keyspace, scan: Scan<'_>, visit: &mut V) -> Result<usize>
where
    V: FnMut(&[u8], &[u8]) -> bool + ?Sized,
{
    if scan.limit == 0 {
        return Ok(0);
    }
    let range = ks.range::<&[u8], _>(scan_bounds(scan));
    match scan.direction {
        Direction::Forward => visit_all(range, scan.limit, visit),
        Direction::Reverse => visit_all(range.rev(), scan.limit, visit),
    }
}

/// Visits up to `limit` entries of `it`; returns how many were visited.
fn visit_all<V>(it: impl Iterator<Item = Guard>, limit: usize, visit: &mut V) -> Result<usize>
where
    V: FnMut(&[u8], &[u8]) -> bool + ?Sized,
{
    let mut n = 0;
    for guard in it {
        if n >= limit {
            break;
        }
        let (k, v) = guard.into_inner()?;
        n += 1;
        if !visit(&k, &v) {
            break;
        }
    }
    Ok(n)
}

/// fjall 3 has no merge operator; a read-modify-write stand-in would not be atomic
/// and would measure something else, so merges are refused.
pub(crate) fn no_merge() -> CliError {
    CliError::Usage("--engine=fjall has no merge operator (fjall 3.x): merge and mergerandom run on strata and rocksdb".into())
}

impl KvEngine for FjallEngine {
    fn name(&self) -> &'static str {
        "fjall"
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        check_kv(key, value)?;
        self.ks(key).insert(key, value)?;
        self.sync()
    }

    fn get_with(&self, key: &[u8], found: &mut dyn FnMut(&[u8])) -> Result<bool> {
        Ok(self.ks(key).get(key)?.map(|v| found(&v)).is_some())
    }

    fn direct(&self) -> Option<Direct<'_>> {
        match (self.ks.as_slice(), &self.tx) {
            ([keyspace], None) => Some(Direct::Fjall {
                keyspace,
                db: &self.db,
                sync: self.plan.sync,
            }),
            _ => None,
        }
    }

    fn delete(&self, key: &[u8]) -> Result<()> {
        check_kv(key, b"")?;
        self.ks(key).remove(key)?;
        self.sync()
    }

    fn merge(&self, _key: &[u8], _operand: &[u8]) -> Result<()> {
        Err(no_merge())
    }

    fn delete_range(&self, _start: &[u8], _end: &[u8]) -> Result<()> {
        Err(CliError::Usage(
            "--engine=fjall has no range deletion (fjall 3.x): delete_range and deleterange \
             run on strata and rocksdb"
                .into(),
        ))
    }

    fn write_batch(&self, ops: &[BatchOp<'_>]) -> Result<()> {
        check_ops(ops)?;
        let mut batch = self.db.batch();
        if self.plan.sync {
            batch = batch.durability(Some(PersistMode::SyncData));
        }
        for op in ops {
            match *op {
                BatchOp::Put(k, v) => batch.insert(self.ks(k), k, v),
                BatchOp::Delete(k) => batch.remove(self.ks(k), k),
                // Refused by the check above.
                BatchOp::Merge(..) => {}
            }
        }
        Ok(batch.commit()?)
    }

    fn transaction(&self, read_for_update: &[&[u8]], ops: &[BatchOp<'_>]) -> Result<Commit> {
        let Some(db) = &self.tx else {
            return Err(super::not_transactional("fjall"));
        };
        check_ops(ops)?;
        let mut tx = db.write_tx()?;
        if self.plan.sync {
            tx = tx.durability(Some(PersistMode::SyncData));
        }
        let mut found = 0;
        for key in read_for_update {
            // Every read of a fjall write transaction is conflict-checked.
            found += usize::from(tx.get(self.ks(key), key)?.is_some());
        }
        for op in ops {
            match *op {
                BatchOp::Put(k, v) => tx.insert(self.ks(k), k, v),
                BatchOp::Delete(k) => tx.remove(self.ks(k), k),
                // Refused by `check_ops`.
                BatchOp::Merge(..) => {}
            }
        }
        Ok(match tx.commit()? {
            Ok(()) => Commit::Done { found },
            Err(fjall::Conflict) => Commit::Conflict,
        })
    }

    fn scan(&self, scan: Scan<'_>, visit: &mut Visitor<'_>) -> Result<usize> {
        let [ks] = self.ks.as_slice() else {
            return Err(scan_refused("fjall", self.ks.len()));
        };
        scan_keyspace(ks, scan, visit)
    }

    fn flush(&self) -> Result<()> {
        for ks in &self.ks {
            ks.rotate_memtable_and_wait()?;
        }
        self.wait_for_flushes();
        Ok(())
    }

    fn compact(&self, _begin: Option<&[u8]>, _end: Option<&[u8]>) -> Result<()> {
        self.flush()?;
        for ks in &self.ks {
            ks.major_compact()?;
        }
        Ok(())
    }

    fn wait_for_compactions(&self) -> Result<()> {
        let mut quiet = 0;
        let mut completed = self.db.compactions_completed();
        while quiet < 3 {
            std::thread::sleep(Duration::from_millis(20));
            let now = self.db.compactions_completed();
            let idle = self.db.outstanding_flushes() == 0
                && self.sealed_memtables() == 0
                && self.db.active_compactions() == 0
                && now == completed;
            quiet = if idle { quiet + 1 } else { 0 };
            completed = now;
        }
        Ok(())
    }

    /// Database figures once; per-keyspace counters, per-level files and bytes, and
    /// live table bytes summed over the routed keyspaces; the text table lists each
    /// keyspace's own.
    fn stats(&self) -> EngineStats {
        let mut levels: Vec<LevelReport> = (0..fj::LEVELS)
            .map(|level| LevelReport {
                level,
                ..LevelReport::default()
            })
            .collect();
        let mut table = String::new();
        let mut live_table_bytes = 0u64;
        for ks in &self.ks {
            let version = ks.tree.current_version();
            // The length of each live table file (the version holds them, so none is
            // deleted under the stat), as Strata and RocksDB count theirs. Not
            // `Keyspace::disk_space`, which sums each table's `file_size` metadata:
            // lsm-tree 3.1 records there the end of the data blocks, leaving out the
            // index, filter and metadata blocks. Should a file not be found (a layout
            // other than lsm-tree 3.1's `tables/<id>`), the keyspace falls back to that
            // undercount.
            let tables = ks.path().join(TABLES_DIR);
            let on_disk: Option<u64> = version
                .iter_levels()
                .flat_map(|l| l.list_ids())
                .map(|id| {
                    std::fs::metadata(tables.join(id.to_string()))
                        .ok()
                        .map(|m| m.len())
                })
                .sum();
            live_table_bytes += on_disk.unwrap_or_else(|| ks.disk_space());
            if self.ks.len() > 1 {
                let _ = writeln!(table, "** keyspace {} **", ks.name());
            }
            table.push_str("Level  Files  Size(MiB)\n");
            for r in &mut levels {
                let l = version.level(r.level);
                let (files, size) = l.map_or((0, 0), |l| (l.table_count() as u64, l.size()));
                r.files += files;
                r.size_bytes += size;
                let _ = writeln!(
                    table,
                    "L{:<5} {:>5} {:>10.2}",
                    r.level,
                    files,
                    size as f64 / f64::from(1u32 << 20)
                );
            }
        }
        let as_u64 = |v: usize| v as u64;
        // Sums a per-keyspace figure over the routed keyspaces.
        let sum = |f: &dyn Fn(&Keyspace) -> u64| self.ks.iter().map(f).sum::<u64>();
        let counters: Vec<(String, u64)> = [
            (
                "compactions_completed",
                as_u64(self.db.compactions_completed()),
            ),
            ("active_compactions", as_u64(self.db.active_compactions())),
            (
                "time_compacting_us",
                u64::try_from(self.db.time_compacting().as_micros()).unwrap_or(u64::MAX),
            ),
            ("outstanding_flushes", as_u64(self.db.outstanding_flushes())),
            ("sealed_memtables", as_u64(self.sealed_memtables())),
            ("write_buffer_bytes", self.db.write_buffer_size()),
            ("journal_count", as_u64(self.db.journal_count())),
            (
                "journal_disk_bytes",
                self.db.journal_disk_space().unwrap_or(0),
            ),
            ("keyspace_disk_bytes", sum(&|k| k.disk_space())),
            ("table_count", sum(&|k| as_u64(k.table_count()))),
            ("approximate_len", sum(&|k| as_u64(k.approximate_len()))),
            ("cache_bytes", self.db.cache_size()),
            ("cache_capacity_bytes", self.db.cache_capacity()),
            (
                "block.data.loads",
                sum(&|k| as_u64(k.metrics().data_block_load_count())),
            ),
            (
                "block.data.cache_hits",
                sum(&|k| as_u64(k.metrics().data_block_load_cached_count())),
            ),
            (
                "block.index.loads",
                sum(&|k| as_u64(k.metrics().index_block_load_count())),
            ),
            (
                "block.index.cache_hits",
                sum(&|k| as_u64(k.metrics().index_block_load_cached_count())),
            ),
            (
                "block.filter.loads",
                sum(&|k| as_u64(k.metrics().filter_block_load_count())),
            ),
            (
                "block.filter.cache_hits",
                sum(&|k| as_u64(k.metrics().filter_block_load_cached_count())),
            ),
            ("block.io_bytes", sum(&|k| k.metrics().block_io())),
            (
                "filter.queries",
                sum(&|k| as_u64(k.metrics().filter_queries())),
            ),
            (
                "filter.io_skipped",
                sum(&|k| as_u64(k.metrics().io_skipped_by_filter())),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let _ = writeln!(
            table,
            "(fjall: no per-level read/write bytes or compaction counts; \
             flush and compaction bytes are not counted)"
        );
        EngineStats {
            level_table: table,
            levels,
            counters,
            live_table_bytes,
            ..EngineStats::default()
        }
    }

    fn unavailable_stats(&self) -> &'static [&'static str] {
        &[
            stat::WAL_BYTES,
            stat::FLUSH_BYTES_WRITTEN,
            stat::COMPACTION_BYTES_WRITTEN,
            stat::COMPACTION_BYTES_READ,
            stat::LEVEL_READ_BYTES,
            stat::LEVEL_WRITE_BYTES,
            stat::LEVEL_COUNT,
            stat::WRITE_AMPLIFICATION,
        ]
    }

    fn create_cf(&mut self, name: &str) -> Result<()> {
        check_name(name)?;
        if self.db.keyspace_exists(name) {
            return Err(CliError::Usage(format!("keyspace `{name}` exists")));
        }
        let plan = &self.plan;
        self.db.keyspace(name, || keyspace_options(plan))?;
        Ok(())
    }

    fn drop_cf(&mut self, name: &str) -> Result<()> {
        if name == DEFAULT_FAMILY {
            return Err(CliError::Usage(
                "the default column family cannot be dropped".into(),
            ));
        }
        check_name(name)?;
        if !self.db.keyspace_exists(name) {
            return Err(CliError::Usage(format!(
                "no keyspace `{name}` (it has: {})",
                names_of(&self.db).join(", ")
            )));
        }
        // `keyspace` opens the existing one (its options are stored; these are unused).
        let plan = &self.plan;
        let ks = self.db.keyspace(name, || keyspace_options(plan))?;
        Ok(self.db.delete_keyspace(ks)?)
    }

    fn cf_names(&self) -> Result<Vec<String>> {
        Ok(names_of(&self.db))
    }

    fn close(self: Box<Self>) -> Result<()> {
        let FjallEngine { ks, db, .. } = *self;
        db.persist(PersistMode::SyncAll)?;
        drop(ks);
        drop(db);
        Ok(())
    }
}
