//! RocksDB behind [`KvEngine`], configured from the same flags as Strata (feature
//! `rocksdb`).
//!
//! Mapping: memtable size and count, target file size, level base and multiplier, L0
//! triggers, pending-compaction limits, level count, a block-based table with a
//! whole-key full bloom filter (`--bloom_bits`), an LRU block cache (`--cache_size`),
//! block size and restart interval, compression, background jobs, compaction priority,
//! compaction style (`--compaction_style=universal` with the `--universal_*` flags as
//! `UniversalCompactOptions`), WAL on, `sync` per `--sync`, direct I/O per
//! `--use_direct_reads` and `--use_direct_io_for_flush_and_compaction`. Statistics are
//! off, RocksDB's default: flush and compaction bytes, so write amplification, are
//! summed from the event log RocksDB writes to `LOG` (`rocks_stats::parse_event_log`),
//! or, with `--rocksdb_statistics`, read from its tickers (`FLUSH_WRITE_BYTES`,
//! `COMPACT_WRITE_BYTES`, ...); either way exactly as Strata counts them. Live table
//! bytes come from
//! `rocksdb.live-sst-files-size`. Strata-only options (output partitioning, snapshot
//! filter) have no RocksDB equivalent and are ignored. `--transaction_db` opens an
//! `OptimisticTransactionDB` (same options); transactions take a snapshot at begin
//! (`set_snapshot`), as Strata's do, and every other operation goes to its base DB.
//!
//! Column families: every family the database has is opened (RocksDB refuses an open
//! that leaves one out), each with the same options, and the ones `--num_column_families`
//! asks for are created (`create_missing_column_families`). Key operations go to the
//! family [`super::family_of`] picks through the `_cf` calls, looked up by name per
//! operation (a handle borrows the database, so it cannot be kept beside it).

use super::rocks_stats::{parse_compaction_stats, parse_event_log, parse_tickers};
use super::{
    family_of, missing_family, scan_cursor, scan_refused, stat, BatchOp, Commit, Direct,
    EngineStats, Families, KvEngine, LevelReport, Scan, Visitor,
};
use crate::engine::options::{
    CompactionPriFlag, CompactionStyleFlag, CompressionFlag, EngineFlags, TieringFlag,
    WalRecoveryFlag,
};
use crate::error::{CliError, Result};
use rocksdb::merge_operator::MergeOperands;
use rocksdb::properties;
use rocksdb::statistics::{StatsLevel, Ticker};
use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamilyDescriptor, CompactionPri, DBAccess, DBCompactionStyle,
    DBCompressionType, DBPath, DBRawIteratorWithThreadMode, DBRecoveryMode,
    OptimisticTransactionDB, OptimisticTransactionOptions, Options, ReadOptions,
    UniversalCompactOptions, WaitForCompactOptions, WriteBatchWithTransaction, WriteBufferManager,
    WriteOptions, DB, DEFAULT_COLUMN_FAMILY_NAME,
};
use std::path::Path;
use strata::merge::U64Add;

fn clamp_i32(v: usize) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// `v` for a C API setter that takes `int` and stores it in an `unsigned int` (the
/// `rocksdb_universal_compaction_options_set_*` calls): the bit pattern, which C's
/// conversion turns back into `v`, so `u32::MAX` arrives as `UINT_MAX` (it would be
/// clamped to `INT_MAX` by [`clamp_i32`]).
fn unsigned_int(v: u32) -> i32 {
    i32::from_ne_bytes(v.to_ne_bytes())
}

/// `--compaction_style` and the `--universal_*` flags on `o`. The universal flags are
/// unused with `level`, as RocksDB ignores `compaction_options_universal` then.
fn set_compaction_style(o: &mut Options, flags: &EngineFlags) {
    match flags.compaction_style {
        CompactionStyleFlag::Level => o.set_compaction_style(DBCompactionStyle::Level),
        CompactionStyleFlag::Universal => {
            o.set_compaction_style(DBCompactionStyle::Universal);
            // Every field the flags do not name keeps RocksDB's default (the struct's
            // constructor), as db_bench leaves them.
            let mut u = UniversalCompactOptions::default();
            u.set_size_ratio(unsigned_int(flags.universal_size_ratio));
            u.set_min_merge_width(unsigned_int(flags.universal_min_merge_width));
            u.set_max_merge_width(unsigned_int(flags.universal_max_merge_width));
            u.set_max_size_amplification_percent(unsigned_int(
                flags.universal_max_size_amplification_percent,
            ));
            // Copied into `o` (the C API assigns the struct), so `u` may drop.
            o.set_universal_compaction_options(&u);
        }
    }
}

/// The database: plain, or opened for optimistic transactions (`--transaction_db`).
/// Two types with the same methods; [`with_db`] runs one expression on either.
enum Handle {
    Plain(DB),
    Optimistic(OptimisticTransactionDB),
}

/// Evaluates `$body` with `$db` bound to the handle's database, whichever kind it is.
macro_rules! with_db {
    ($handle:expr, $db:ident => $body:expr) => {
        match $handle {
            Handle::Plain($db) => $body,
            Handle::Optimistic($db) => $body,
        }
    };
}

/// The handle of family `$name` of `$db`, or an error (a family this engine opened
/// cannot vanish, but a missing handle must not panic a run).
macro_rules! cf {
    ($db:expr, $name:expr) => {
        $db.cf_handle($name).ok_or_else(|| {
            CliError::Usage(format!("rocksdb: column family `{}` is not open", $name))
        })?
    };
}

/// Appends `ops` to `batch`, each in its family (of a plain or a transactional
/// database: a macro, because the two handle types share no trait with `cf_handle`).
macro_rules! fill_batch {
    ($self:expr, $db:expr, $batch:expr, $ops:expr) => {
        for op in $ops {
            match *op {
                BatchOp::Put(k, v) => $batch.put_cf(cf!($db, $self.family(k)), k, v),
                BatchOp::Delete(k) => $batch.delete_cf(cf!($db, $self.family(k)), k),
                BatchOp::Merge(k, v) => $batch.merge_cf(cf!($db, $self.family(k)), k, v),
            }
        }
    };
}

cursor_by_inherent_methods!(['a, D: DBAccess] DBRawIteratorWithThreadMode<'a, D>, |it| it.item());

/// An open RocksDB database.
pub struct RocksEngine {
    db: Handle,
    /// The families key operations go to, in routing order (`family_of` indexes it);
    /// never empty.
    families: Vec<String>,
    /// Transactions snapshot at begin (`set_snapshot(true)`), as Strata's do.
    txn_options: OptimisticTransactionOptions,
    /// Kept for its statistics object (tickers are read through it).
    options: Options,
    wo: WriteOptions,
    /// Every point read's options (RocksDB's defaults), made once.
    ro: ReadOptions,
    /// `--sync` (what `wo` was given; RocksDB's options cannot be read back).
    wo_sync: bool,
    /// `--rocksdb_statistics`: without it no ticker counts, and flush and compaction
    /// bytes come from the event log in `LOG`.
    statistics: bool,
    /// The database directory, which holds `LOG`.
    dir: std::path::PathBuf,
    /// Opened read-only: RocksDB then keeps no `LOG` of its own (the one on disk is
    /// the last writer's).
    read_only: bool,
    /// Every key goes to the default family of a plain database: the point
    /// operations skip the family lookup, as a single-family application would.
    default_only: bool,
    /// Kept alive as long as the table factory that points at it.
    _cache: Option<Cache>,
}

impl RocksEngine {
    /// Opens `flags.db` with the mapped options, every existing family and the ones
    /// `families` routes to.
    ///
    /// # Errors
    /// RocksDB's open error; [`CliError::Usage`] for a missing [`Families::One`].
    pub fn open(flags: &EngineFlags, families: &Families) -> Result<RocksEngine> {
        RocksEngine::open_as(flags, families, false)
    }

    /// [`RocksEngine::open`] read-only (RocksDB's `OpenForReadOnly`): no lock taken,
    /// nothing written, every family the database has (`families` must exist).
    ///
    /// # Errors
    /// As [`RocksEngine::open`].
    pub fn open_read_only(flags: &EngineFlags, families: &Families) -> Result<RocksEngine> {
        RocksEngine::open_as(flags, families, true)
    }

    fn open_as(flags: &EngineFlags, families: &Families, read_only: bool) -> Result<RocksEngine> {
        let mut o = Options::default();
        o.create_if_missing(flags.create_if_missing);
        o.create_missing_column_families(true);
        o.set_error_if_exists(flags.error_if_exists);
        o.set_paranoid_checks(flags.paranoid_checks);
        // Strata's `U64Add` under its name, so both engines merge the same counters.
        o.set_merge_operator_associative("strata.u64_add", u64_add);
        // The counterpart of Strata's concurrent group inserts (see the mapping).
        o.set_allow_concurrent_memtable_write(flags.enable_pipelined_write);
        o.set_write_buffer_size(flags.write_buffer_size);
        o.set_max_write_buffer_number(clamp_i32(flags.max_write_buffer_number));
        o.set_target_file_size_base(flags.target_file_size_base);
        // With tiering, the base may carry the fast tier's stretch (see the mapping).
        if matches!(flags.tiering, TieringFlag::Hotrap | TieringFlag::Time) {
            return Err(CliError::Usage(
                "invalid value for '--tiering' with --engine=rocksdb: RocksDB has no HotRAP, \
                 and its time-aware tiering is not mapped yet (--tiering=fat is its \
                 RocksDB-fat baseline)"
                    .into(),
            ));
        }
        let (base, additional) = flags.rocksdb_level_sizing()?;
        o.set_max_bytes_for_level_base(base);
        o.set_max_bytes_for_level_multiplier(flags.max_bytes_for_level_multiplier);
        // Strata sizes levels statically from L1 down, as RocksDB did before 8.4.
        o.set_level_compaction_dynamic_level_bytes(false);
        o.set_level_zero_file_num_compaction_trigger(clamp_i32(
            flags.level0_file_num_compaction_trigger,
        ));
        o.set_level_zero_slowdown_writes_trigger(clamp_i32(flags.level0_slowdown_writes_trigger));
        o.set_level_zero_stop_writes_trigger(clamp_i32(flags.level0_stop_writes_trigger));
        o.set_soft_pending_compaction_bytes_limit(
            usize::try_from(flags.soft_pending_compaction_bytes_limit).unwrap_or(usize::MAX),
        );
        o.set_hard_pending_compaction_bytes_limit(
            usize::try_from(flags.hard_pending_compaction_bytes_limit).unwrap_or(usize::MAX),
        );
        o.set_num_levels(clamp_i32(flags.num_levels));
        o.set_max_open_files(clamp_i32(flags.open_files));
        o.set_max_background_jobs(clamp_i32(flags.max_background_jobs));
        if flags.periodic_compaction_seconds > 0 {
            o.set_periodic_compaction_seconds(flags.periodic_compaction_seconds);
        }
        let codec = |c: CompressionFlag| match c {
            CompressionFlag::None => DBCompressionType::None,
            CompressionFlag::Lz4 => DBCompressionType::Lz4,
            CompressionFlag::Zstd => DBCompressionType::Zstd,
        };
        o.set_compression_type(codec(flags.compression_type));
        if !flags.compression_per_level.is_empty() {
            // Same policy vector as Strata's: the last entry serves every deeper level.
            let per_level: Vec<DBCompressionType> = flags
                .compression_per_level
                .iter()
                .map(|&c| codec(c))
                .collect();
            o.set_compression_per_level(&per_level);
        }
        set_compaction_style(&mut o, flags);
        o.set_compaction_pri(match flags.compaction_pri {
            CompactionPriFlag::MinOverlappingRatio => CompactionPri::MinOverlappingRatio,
            CompactionPriFlag::OldestSmallestSeqFirst => CompactionPri::OldestSmallestSeqFirst,
        });
        o.set_wal_recovery_mode(match flags.wal_recovery_mode {
            WalRecoveryFlag::TolerateCorruptedTailRecords => {
                DBRecoveryMode::TolerateCorruptedTailRecords
            }
            WalRecoveryFlag::AbsoluteConsistency => DBRecoveryMode::AbsoluteConsistency,
            WalRecoveryFlag::PointInTime => DBRecoveryMode::PointInTime,
        });
        // The same switches as Strata's (`--use_direct_reads`,
        // `--use_direct_io_for_flush_and_compaction`); RocksDB also keeps WAL and
        // MANIFEST buffered.
        o.set_use_direct_reads(flags.use_direct_reads);
        o.set_use_direct_io_for_flush_and_compaction(flags.use_direct_io_for_flush_and_compaction);
        if !flags.db_paths.is_empty() {
            let paths = flags
                .db_paths
                .iter()
                .map(|p| DBPath::new(&p.path, p.target_size))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| CliError::Usage(format!("invalid value for '--db_paths': {e}")))?;
            o.set_db_paths(&paths);
        }
        if !additional.is_empty() {
            o.set_max_bytes_for_level_multiplier_additional(&additional);
        }
        if flags.rocksdb_statistics {
            o.enable_statistics();
            // Tickers are all the adapter reads; timers and histograms cost every
            // operation clock reads it would never report.
            o.set_statistics_level(StatsLevel::ExceptHistogramOrTimers);
        }

        let mut t = BlockBasedOptions::default();
        t.set_block_size(flags.block_size);
        t.set_block_restart_interval(clamp_i32(flags.block_restart_interval));
        t.set_cache_index_and_filter_blocks(flags.cache_index_and_filter_blocks);
        if flags.bloom_bits > 0 {
            t.set_bloom_filter(f64::from(flags.bloom_bits), false);
            t.set_whole_key_filtering(true);
        }
        let cache = if flags.memory_budget > 0 {
            // Memtables charged to the cache (RocksDB's one memory limit): the cache
            // is the budget, and the WriteBufferManager flushes and stalls within half
            // of it (docs/ARCHITECTURE.md §4.4 compares the rules).
            let c = Cache::new_lru_cache(flags.memory_budget);
            t.set_block_cache(&c);
            let wbm = WriteBufferManager::new_write_buffer_manager_with_cache(
                flags.memory_budget / 2,
                true,
                c.clone(),
            );
            o.set_write_buffer_manager(&wbm);
            Some(c)
        } else if flags.cache_size > 0 {
            let c = Cache::new_lru_cache(flags.cache_size);
            t.set_block_cache(&c);
            Some(c)
        } else {
            t.disable_cache();
            None
        };
        o.set_block_based_table_factory(&t);

        let wanted = families.names();
        // RocksDB opens a database only with every family it has named.
        let existing = if flags.db.join("CURRENT").is_file() {
            DB::list_cf(&o, &flags.db)?
        } else {
            vec![DEFAULT_COLUMN_FAMILY_NAME.to_string()]
        };
        if let Families::One(name) = families {
            if !existing.contains(name) {
                return Err(missing_family(name, &flags.db, &existing));
            }
        }
        let mut all = existing;
        for name in &wanted {
            if !all.contains(name) {
                all.push(name.clone());
            }
        }
        // Every family with the database's options, as Strata's and fjall's are.
        let descriptors = all
            .iter()
            .map(|name| ColumnFamilyDescriptor::new(name, o.clone()))
            .collect::<Vec<_>>();
        let db = if read_only {
            Handle::Plain(DB::open_cf_descriptors_read_only(
                &o,
                &flags.db,
                descriptors,
                false,
            )?)
        } else if flags.transaction_db {
            Handle::Optimistic(OptimisticTransactionDB::open_cf_descriptors(
                &o,
                &flags.db,
                descriptors,
            )?)
        } else {
            Handle::Plain(DB::open_cf_descriptors(&o, &flags.db, descriptors)?)
        };
        let mut txn_options = OptimisticTransactionOptions::default();
        txn_options.set_snapshot(true);
        let mut wo = WriteOptions::default();
        wo.set_sync(flags.sync);
        wo.disable_wal(false);
        Ok(RocksEngine {
            db,
            families: wanted,
            txn_options,
            options: o,
            wo,
            wo_sync: flags.sync,
            statistics: flags.rocksdb_statistics,
            dir: flags.db.clone(),
            read_only,
            default_only: families.names() == [DEFAULT_COLUMN_FAMILY_NAME],
            ro: ReadOptions::default(),
            _cache: cache,
        })
    }
}

impl RocksEngine {
    /// The database, when it is plain and every key goes to its default family.
    fn plain_default(&self) -> Option<&DB> {
        match &self.db {
            Handle::Plain(db) if self.default_only => Some(db),
            _ => None,
        }
    }

    /// The family `key` belongs to.
    fn family(&self, key: &[u8]) -> &str {
        // `family_of` is below `families.len()`, and `families` is never empty.
        &self.families[family_of(key, self.families.len())]
    }
}

/// The column families of the RocksDB database in `db` (`DB::list_cf`), unopened.
///
/// # Errors
/// RocksDB's error (no database, a damaged MANIFEST).
pub fn list_cfs(db: &Path) -> Result<Vec<String>> {
    Ok(DB::list_cf(&Options::default(), db)?)
}

/// `strata::merge::U64Add` as a RocksDB associative merge function (used for both
/// the full and the partial merge); `None` (a failed merge) for a value that is not 8
/// bytes, as Strata's operator refuses it.
fn u64_add(_key: &[u8], existing: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    let mut sum = existing.map_or(Ok(0), U64Add::decode).ok()?;
    for op in operands {
        sum = sum.wrapping_add(U64Add::decode(op).ok()?);
    }
    Some(sum.to_le_bytes().to_vec())
}

impl KvEngine for RocksEngine {
    fn name(&self) -> &'static str {
        "rocksdb"
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        if let Some(db) = self.plain_default() {
            return Ok(db.put_opt(key, value, &self.wo)?);
        }
        with_db!(&self.db, db => db.put_cf_opt(cf!(db, self.family(key)), key, value, &self.wo))?;
        Ok(())
    }

    fn get_with(&self, key: &[u8], found: &mut dyn FnMut(&[u8])) -> Result<bool> {
        let value = match self.plain_default() {
            Some(db) => db.get_pinned_opt(key, &self.ro)?,
            None => with_db!(&self.db, db => {
                db.get_pinned_cf_opt(cf!(db, self.family(key)), key, &self.ro)
            })?,
        };
        Ok(value.map(|v| found(&v)).is_some())
    }

    fn direct(&self) -> Option<Direct<'_>> {
        self.plain_default().map(|db| Direct::Rocksdb {
            db,
            sync: self.wo_sync,
        })
    }

    /// Without statistics: WAL bytes (no event states them), and everything the event
    /// log would give if `LOG` cannot be read.
    fn unavailable_stats(&self) -> &'static [&'static str] {
        if self.statistics {
            &[]
        } else if !self.read_only && self.dir.join("LOG").is_file() {
            &[stat::WAL_BYTES]
        } else {
            &[
                stat::WAL_BYTES,
                stat::FLUSH_BYTES_WRITTEN,
                stat::COMPACTION_BYTES_WRITTEN,
                stat::COMPACTION_BYTES_READ,
                stat::WRITE_AMPLIFICATION,
            ]
        }
    }

    /// `batched_multi_get_cf` (RocksDB's batched `MultiGet`) when every key goes to one
    /// family; per-key gets otherwise.
    fn multi_get(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>> {
        if self.families.len() != 1 {
            return keys.iter().map(|k| self.get(k)).collect();
        }
        with_db!(&self.db, db => {
            let cf = cf!(db, self.family(&[]));
            db.batched_multi_get_cf(cf, keys, false)
                .into_iter()
                .map(|r| Ok(r?.map(|v| v.to_vec())))
                .collect()
        })
    }

    fn delete(&self, key: &[u8]) -> Result<()> {
        if let Some(db) = self.plain_default() {
            return Ok(db.delete_opt(key, &self.wo)?);
        }
        with_db!(&self.db, db => db.delete_cf_opt(cf!(db, self.family(key)), key, &self.wo))?;
        Ok(())
    }

    fn merge(&self, key: &[u8], operand: &[u8]) -> Result<()> {
        if let Some(db) = self.plain_default() {
            return Ok(db.merge_opt(key, operand, &self.wo)?);
        }
        with_db!(&self.db, db => {
            db.merge_cf_opt(cf!(db, self.family(key)), key, operand, &self.wo)
        })?;
        Ok(())
    }

    /// One range deletion in every family: the keys of the range are spread over them.
    /// On a plain database they are one atomic batch; the transactional handle has no
    /// batch range deletion, so there they are one write per family.
    fn delete_range(&self, start: &[u8], end: &[u8]) -> Result<()> {
        match &self.db {
            Handle::Plain(db) => {
                let mut batch = WriteBatchWithTransaction::<false>::default();
                for name in &self.families {
                    batch.delete_range_cf(cf!(db, name.as_str()), start, end);
                }
                Ok(db.write_opt(batch, &self.wo)?)
            }
            Handle::Optimistic(db) => {
                for name in &self.families {
                    db.delete_range_cf_opt(cf!(db, name.as_str()), start, end, &self.wo)?;
                }
                Ok(())
            }
        }
    }

    fn write_batch(&self, ops: &[BatchOp<'_>]) -> Result<()> {
        match &self.db {
            Handle::Plain(db) => {
                let mut batch = WriteBatchWithTransaction::<false>::default();
                fill_batch!(self, db, batch, ops);
                Ok(db.write_opt(batch, &self.wo)?)
            }
            Handle::Optimistic(db) => {
                let mut batch = WriteBatchWithTransaction::<true>::default();
                fill_batch!(self, db, batch, ops);
                Ok(db.write_opt(batch, &self.wo)?)
            }
        }
    }

    fn transaction(&self, read_for_update: &[&[u8]], ops: &[BatchOp<'_>]) -> Result<Commit> {
        let Handle::Optimistic(db) = &self.db else {
            return Err(super::not_transactional("rocksdb"));
        };
        let txn = db.transaction_opt(&self.wo, &self.txn_options);
        let mut found = 0;
        for key in read_for_update {
            let cf = cf!(db, self.family(key));
            found += usize::from(txn.get_for_update_cf(cf, key, true)?.is_some());
        }
        for op in ops {
            match *op {
                BatchOp::Put(k, v) => txn.put_cf(cf!(db, self.family(k)), k, v)?,
                BatchOp::Delete(k) => txn.delete_cf(cf!(db, self.family(k)), k)?,
                BatchOp::Merge(k, v) => txn.merge_cf(cf!(db, self.family(k)), k, v)?,
            }
        }
        match txn.commit() {
            Ok(()) => Ok(Commit::Done { found }),
            // Busy: a conflict; TryAgain: the memtable history no longer reaches the
            // snapshot (RocksDB cannot tell). Both mean: run it again.
            Err(e)
                if matches!(
                    e.kind(),
                    rocksdb::ErrorKind::Busy | rocksdb::ErrorKind::TryAgain
                ) =>
            {
                Ok(Commit::Conflict)
            }
            Err(e) => Err(e.into()),
        }
    }

    fn scan(&self, scan: Scan<'_>, visit: &mut Visitor<'_>) -> Result<usize> {
        let [family] = self.families.as_slice() else {
            return Err(scan_refused("rocksdb", self.families.len()));
        };
        let mut ro = ReadOptions::default();
        if let Some(end) = scan.end {
            ro.set_iterate_upper_bound(end.to_vec());
        }
        with_db!(&self.db, db => {
            let mut it = db.raw_iterator_cf_opt(cf!(db, family.as_str()), ro);
            let n = scan_cursor(&mut it, scan, visit);
            it.status()?;
            Ok(n)
        })
    }

    fn flush(&self) -> Result<()> {
        for name in &self.families {
            with_db!(&self.db, db => db.flush_cf(cf!(db, name.as_str())))?;
        }
        Ok(())
    }

    fn compact(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        for name in &self.families {
            with_db!(&self.db, db => db.compact_range_cf(cf!(db, name.as_str()), begin, end));
        }
        Ok(())
    }

    fn wait_for_compactions(&self) -> Result<()> {
        let mut w = WaitForCompactOptions::default();
        w.set_flush(false);
        Ok(with_db!(&self.db, db => db.wait_for_compact(&w))?)
    }

    /// Tickers are database-wide; the level figures and live table bytes are summed
    /// over the routed families, level by level, and the text table lists each
    /// family's own.
    fn stats(&self) -> EngineStats {
        let cfstats = |family: &str| -> String {
            let value = with_db!(&self.db, db => match db.cf_handle(family) {
                Some(cf) => db.property_value_cf(cf, "rocksdb.cfstats-no-file-histogram"),
                None => Ok(None),
            });
            value.ok().flatten().unwrap_or_default()
        };
        // Each family's live files are its own, so the sum counts every file once.
        let live_table_bytes = |family: &str| -> u64 {
            let value = with_db!(&self.db, db => match db.cf_handle(family) {
                Some(cf) => db.property_int_value_cf(cf, properties::LIVE_SST_FILES_SIZE),
                None => Ok(None),
            });
            value.ok().flatten().unwrap_or_default()
        };
        let t = |ticker| self.options.get_ticker_count(ticker);
        let mut level_table = String::new();
        let mut levels: Vec<LevelReport> = Vec::new();
        for family in &self.families {
            let text = cfstats(family);
            for l in parse_compaction_stats(&text) {
                match levels.iter_mut().find(|r| r.level == l.level) {
                    Some(r) => {
                        r.files += l.files;
                        r.size_bytes += l.size_bytes;
                        r.read_bytes += l.read_bytes;
                        r.write_bytes += l.write_bytes;
                        r.count += l.count;
                    }
                    None => levels.push(l),
                }
            }
            if self.families.len() > 1 {
                level_table.push_str(&format!("** column family {family} **\n"));
            }
            level_table.push_str(&text);
        }
        levels.sort_by_key(|l| l.level);
        let (wal_bytes, flush, written, read) = if self.statistics {
            (
                t(Ticker::WalFileBytes),
                t(Ticker::FlushWriteBytes),
                t(Ticker::CompactWriteBytes),
                t(Ticker::CompactReadBytes),
            )
        } else {
            // `LOG` is begun afresh at each open (the old one renamed), so it covers
            // this process, as the tickers would. RocksDB writes it through a buffer
            // (flushed at least every 10 s), so a figure read the moment a run ends
            // can miss that run's last compactions.
            let log = std::fs::read(self.dir.join("LOG")).unwrap_or_default();
            let e = parse_event_log(&String::from_utf8_lossy(&log));
            (0, e.flush_written, e.compaction_written, e.compaction_read)
        };
        EngineStats {
            level_table,
            levels,
            counters: self
                .options
                .get_statistics()
                .map(|s| parse_tickers(&s))
                .unwrap_or_default(),
            wal_bytes,
            flush_bytes_written: flush,
            compaction_bytes_written: written,
            compaction_bytes_read: read,
            live_table_bytes: self.families.iter().map(|f| live_table_bytes(f)).sum(),
            paths: Vec::new(),
        }
    }

    fn create_cf(&mut self, name: &str) -> Result<()> {
        let exists = with_db!(&self.db, db => db.cf_handle(name).is_some());
        if exists {
            return Err(CliError::Usage(format!("column family `{name}` exists")));
        }
        // The database's options, as every family opened here has them.
        let options = &self.options;
        match &mut self.db {
            Handle::Plain(db) => db.create_cf(name, options)?,
            Handle::Optimistic(db) => db.create_cf(name, options)?,
        }
        Ok(())
    }

    fn drop_cf(&mut self, name: &str) -> Result<()> {
        if name == DEFAULT_COLUMN_FAMILY_NAME {
            return Err(CliError::Usage(
                "the default column family cannot be dropped".into(),
            ));
        }
        let names = self.cf_names()?;
        if !names.iter().any(|n| n == name) {
            return Err(CliError::Usage(format!(
                "no column family `{name}` (it has: {})",
                names.join(", ")
            )));
        }
        match &mut self.db {
            Handle::Plain(db) => db.drop_cf(name)?,
            Handle::Optimistic(db) => db.drop_cf(name)?,
        }
        Ok(())
    }

    fn cf_names(&self) -> Result<Vec<String>> {
        let path = with_db!(&self.db, db => db.path().to_path_buf());
        list_cfs(&path)
    }

    fn close(self: Box<Self>) -> Result<()> {
        with_db!(&self.db, db => db.cancel_all_background_work(true));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::conformance::small_flags;
    use crate::engine::options::EngineKind;
    use std::collections::BTreeMap;

    /// The `compaction_style` and `compaction_options_universal` of the default family
    /// in the newest OPTIONS file of `db`, as RocksDB wrote them.
    fn options_file_style(db: &Path) -> (String, BTreeMap<String, String>) {
        let newest = std::fs::read_dir(db)
            .expect("read_dir")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("OPTIONS-"))
            })
            .max()
            .expect("an OPTIONS file");
        let text = std::fs::read_to_string(&newest).expect("read OPTIONS");
        let field = |name: &str| {
            text.lines()
                .filter_map(|l| l.trim().strip_prefix(name)?.strip_prefix('='))
                .next()
                .unwrap_or_else(|| panic!("no {name} in {}", newest.display()))
                .to_string()
        };
        let universal = field("compaction_options_universal");
        let map = universal
            .trim_start_matches('{')
            .trim_end_matches('}')
            .split(';')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        (field("compaction_style"), map)
    }

    fn reopen_and_read_style(flags: &EngineFlags) -> (String, BTreeMap<String, String>) {
        super::super::destroy(&flags.db).expect("destroy");
        let e = RocksEngine::open(flags, &Families::Spread(1)).expect("open");
        Box::new(e).close().expect("close");
        options_file_style(&flags.db)
    }

    /// The flags reach RocksDB: its OPTIONS file says universal with the flags'
    /// values, and the flags' defaults are RocksDB's own (UINT_MAX included, through
    /// the C API's `int`).
    #[test]
    fn universal_flags_reach_the_options_file() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let flags = small_flags(EngineKind::Rocksdb, &tmp.path().join("db"));
        let (style, _) = reopen_and_read_style(&flags);
        assert_eq!(style, "kCompactionStyleLevel");

        let universal = EngineFlags {
            compaction_style: CompactionStyleFlag::Universal,
            ..flags.clone()
        };
        let (style, with_flag_defaults) = reopen_and_read_style(&universal);
        assert_eq!(style, "kCompactionStyleUniversal");
        for (k, v) in [
            ("size_ratio", "1"),
            ("min_merge_width", "2"),
            ("max_merge_width", "4294967295"),
            ("max_size_amplification_percent", "200"),
        ] {
            assert_eq!(
                with_flag_defaults.get(k).map(String::as_str),
                Some(v),
                "{k}: {with_flag_defaults:?}"
            );
        }
        // Exactly what RocksDB's own defaults give, field for field.
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_compaction_style(DBCompactionStyle::Universal);
        o.set_universal_compaction_options(&UniversalCompactOptions::default());
        let plain = tmp.path().join("plain");
        drop(DB::open(&o, &plain).expect("open plain"));
        let (_, rocksdb_defaults) = options_file_style(&plain);
        assert_eq!(with_flag_defaults, rocksdb_defaults);

        let (_, set) = reopen_and_read_style(&EngineFlags {
            universal_size_ratio: 10,
            universal_min_merge_width: 3,
            universal_max_merge_width: 8,
            universal_max_size_amplification_percent: 150,
            ..universal
        });
        for (k, v) in [
            ("size_ratio", "10"),
            ("min_merge_width", "3"),
            ("max_merge_width", "8"),
            ("max_size_amplification_percent", "150"),
        ] {
            assert_eq!(set.get(k).map(String::as_str), Some(v), "{k}: {set:?}");
        }
    }

    /// Universal compaction runs (its merges of every sorted run land in the last
    /// level) and live table bytes are the live SST files' sizes, summed over the
    /// families.
    #[test]
    fn universal_compaction_fills_the_last_level_and_live_bytes_add_up() {
        let tmp = tempfile::tempdir().expect("tempdir");
        for (style, families) in [
            (CompactionStyleFlag::Universal, 1),
            (CompactionStyleFlag::Universal, 2),
            (CompactionStyleFlag::Level, 1),
        ] {
            let flags = EngineFlags {
                compaction_style: style,
                num_column_families: families,
                ..small_flags(EngineKind::Rocksdb, &tmp.path().join("db"))
            };
            super::super::destroy(&flags.db).expect("destroy");
            let e = RocksEngine::open(&flags, &Families::Spread(families)).expect("open");
            let value = [7u8; 100];
            for i in 0..20_000u32 {
                e.put(
                    format!("key{:08}", i.wrapping_mul(2_654_435_761)).as_bytes(),
                    &value,
                )
                .expect("put");
            }
            e.flush().expect("flush");
            e.wait_for_compactions().expect("wait");
            let files = with_db!(&e.db, db => db.live_files()).expect("live_files");
            let on_disk: u64 = files.iter().map(|f| f.size as u64).sum();
            let stats = e.stats();
            assert!(on_disk > 0, "{style:?}");
            assert_eq!(stats.live_table_bytes, on_disk, "{style:?} x{families}");
            let last = clamp_i32(flags.num_levels - 1);
            let in_last = files.iter().filter(|f| f.level == last).count();
            match style {
                CompactionStyleFlag::Universal => {
                    assert!(in_last > 0, "{style:?} x{families}: {:?}", stats.levels)
                }
                // Static level sizes: 2.4 MB fills L1-L3 of a 256 KiB base, not L6.
                CompactionStyleFlag::Level => {
                    assert_eq!(in_last, 0, "{style:?}: {:?}", stats.levels)
                }
            }
            Box::new(e).close().expect("close");
        }
    }
}
