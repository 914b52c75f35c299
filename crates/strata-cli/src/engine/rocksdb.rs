//! RocksDB behind [`KvEngine`], configured from the same flags as Strata (feature
//! `rocksdb`).
//!
//! Mapping: memtable size and count, target file size, level base and multiplier, L0
//! triggers, pending-compaction limits, level count, a block-based table with a
//! whole-key full bloom filter (`--bloom_bits`), an LRU block cache (`--cache_size`),
//! block size and restart interval, compression, background jobs, compaction priority,
//! WAL on, `sync` per `--sync`, direct I/O per `--use_direct_reads` and
//! `--use_direct_io_for_flush_and_compaction`. Statistics come from RocksDB's tickers
//! (`FLUSH_WRITE_BYTES`, `COMPACT_WRITE_BYTES`, ...) so write amplification is computed
//! exactly as for Strata. Strata-only options (output partitioning, snapshot filter)
//! have no RocksDB equivalent and are ignored. `--transaction_db` opens an
//! `OptimisticTransactionDB` (same options); transactions take a snapshot at begin
//! (`set_snapshot`), as Strata's do, and every other operation goes to its base DB.

use super::rocks_stats::{parse_compaction_stats, parse_tickers};
use super::{scan_cursor, BatchOp, Commit, Direction, EngineStats, KvEngine, Visitor};
use crate::engine::options::{CompactionPriFlag, CompressionFlag, EngineFlags, WalRecoveryFlag};
use crate::error::{CliError, Result};
use rocksdb::merge_operator::MergeOperands;
use rocksdb::statistics::Ticker;
use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamilyDescriptor, CompactionPri, DBAccess, DBCompressionType,
    DBPath, DBRawIteratorWithThreadMode, DBRecoveryMode, OptimisticTransactionDB,
    OptimisticTransactionOptions, Options, ReadOptions, WaitForCompactOptions,
    WriteBatchWithTransaction, WriteOptions, DB, DEFAULT_COLUMN_FAMILY_NAME,
};
use strata::merge::U64Add;

fn clamp_i32(v: usize) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
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

/// `ops` as a RocksDB batch (of a plain or a transactional database).
fn batch<const T: bool>(ops: &[BatchOp<'_>]) -> WriteBatchWithTransaction<T> {
    let mut batch = WriteBatchWithTransaction::<T>::default();
    for op in ops {
        match *op {
            BatchOp::Put(k, v) => batch.put(k, v),
            BatchOp::Delete(k) => batch.delete(k),
            BatchOp::Merge(k, v) => batch.merge(k, v),
        }
    }
    batch
}

cursor_by_inherent_methods!(['a, D: DBAccess] DBRawIteratorWithThreadMode<'a, D>, |it| it.item());

/// An open RocksDB database.
pub struct RocksEngine {
    db: Handle,
    /// Transactions snapshot at begin (`set_snapshot(true)`), as Strata's do.
    txn_options: OptimisticTransactionOptions,
    /// Kept for its statistics object (tickers are read through it).
    options: Options,
    wo: WriteOptions,
    /// Kept alive as long as the table factory that points at it.
    _cache: Option<Cache>,
}

impl RocksEngine {
    /// Opens `flags.db` with the mapped options.
    ///
    /// # Errors
    /// RocksDB's open error.
    pub fn open(flags: &EngineFlags) -> Result<RocksEngine> {
        let mut o = Options::default();
        o.create_if_missing(flags.create_if_missing);
        o.set_error_if_exists(flags.error_if_exists);
        o.set_paranoid_checks(flags.paranoid_checks);
        // Strata's `U64Add` under its name, so both engines merge the same counters.
        o.set_merge_operator_associative("strata.u64_add", u64_add);
        // The counterpart of Strata's concurrent group inserts (see the mapping).
        o.set_allow_concurrent_memtable_write(flags.enable_pipelined_write);
        o.set_write_buffer_size(flags.write_buffer_size);
        o.set_max_write_buffer_number(clamp_i32(flags.max_write_buffer_number));
        o.set_target_file_size_base(flags.target_file_size_base);
        o.set_max_bytes_for_level_base(flags.max_bytes_for_level_base);
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
        o.enable_statistics();

        let mut t = BlockBasedOptions::default();
        t.set_block_size(flags.block_size);
        t.set_block_restart_interval(clamp_i32(flags.block_restart_interval));
        if flags.bloom_bits > 0 {
            t.set_bloom_filter(f64::from(flags.bloom_bits), false);
            t.set_whole_key_filtering(true);
        }
        let cache = if flags.cache_size > 0 {
            let c = Cache::new_lru_cache(flags.cache_size);
            t.set_block_cache(&c);
            Some(c)
        } else {
            t.disable_cache();
            None
        };
        o.set_block_based_table_factory(&t);

        let db = if flags.transaction_db {
            // With the default family named, so that `delete_range` can address it
            // (the transactional handle has no family-less range deletion).
            let default = ColumnFamilyDescriptor::new(DEFAULT_COLUMN_FAMILY_NAME, o.clone());
            Handle::Optimistic(OptimisticTransactionDB::open_cf_descriptors(
                &o,
                &flags.db,
                [default],
            )?)
        } else {
            Handle::Plain(DB::open(&o, &flags.db)?)
        };
        let mut txn_options = OptimisticTransactionOptions::default();
        txn_options.set_snapshot(true);
        let mut wo = WriteOptions::default();
        wo.set_sync(flags.sync);
        wo.disable_wal(false);
        Ok(RocksEngine {
            db,
            txn_options,
            options: o,
            wo,
            _cache: cache,
        })
    }
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
        Ok(with_db!(&self.db, db => db.put_opt(key, value, &self.wo))?)
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(with_db!(&self.db, db => db.get(key))?)
    }

    fn delete(&self, key: &[u8]) -> Result<()> {
        Ok(with_db!(&self.db, db => db.delete_opt(key, &self.wo))?)
    }

    fn merge(&self, key: &[u8], operand: &[u8]) -> Result<()> {
        Ok(with_db!(&self.db, db => db.merge_opt(key, operand, &self.wo))?)
    }

    fn delete_range(&self, start: &[u8], end: &[u8]) -> Result<()> {
        match &self.db {
            Handle::Plain(db) => {
                let mut batch = WriteBatchWithTransaction::<false>::default();
                batch.delete_range(start, end);
                Ok(db.write_opt(batch, &self.wo)?)
            }
            Handle::Optimistic(db) => {
                let cf = db
                    .cf_handle(DEFAULT_COLUMN_FAMILY_NAME)
                    .ok_or_else(|| CliError::Usage("rocksdb: no default column family".into()))?;
                Ok(db.delete_range_cf_opt(cf, start, end, &self.wo)?)
            }
        }
    }

    fn write_batch(&self, ops: &[BatchOp<'_>]) -> Result<()> {
        Ok(with_db!(&self.db, db => db.write_opt(batch(ops), &self.wo))?)
    }

    fn transaction(&self, read_for_update: &[&[u8]], ops: &[BatchOp<'_>]) -> Result<Commit> {
        let Handle::Optimistic(db) = &self.db else {
            return Err(super::not_transactional("rocksdb"));
        };
        let txn = db.transaction_opt(&self.wo, &self.txn_options);
        let mut found = 0;
        for key in read_for_update {
            found += usize::from(txn.get_for_update(key, true)?.is_some());
        }
        for op in ops {
            match *op {
                BatchOp::Put(k, v) => txn.put(k, v)?,
                BatchOp::Delete(k) => txn.delete(k)?,
                BatchOp::Merge(k, v) => txn.merge(k, v)?,
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

    fn scan(
        &self,
        start: Option<&[u8]>,
        direction: Direction,
        limit: usize,
        visit: &mut Visitor<'_>,
    ) -> Result<usize> {
        with_db!(&self.db, db => {
            let mut it = db.raw_iterator_opt(ReadOptions::default());
            let n = scan_cursor(&mut it, start, direction, limit, visit);
            it.status()?;
            Ok(n)
        })
    }

    fn flush(&self) -> Result<()> {
        Ok(with_db!(&self.db, db => db.flush())?)
    }

    fn compact(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        with_db!(&self.db, db => db.compact_range(begin, end));
        Ok(())
    }

    fn wait_for_compactions(&self) -> Result<()> {
        let mut w = WaitForCompactOptions::default();
        w.set_flush(false);
        Ok(with_db!(&self.db, db => db.wait_for_compact(&w))?)
    }

    fn stats(&self) -> EngineStats {
        let prop = |name: &str| {
            with_db!(&self.db, db => db.property_value(name))
                .ok()
                .flatten()
                .unwrap_or_default()
        };
        let t = |ticker| self.options.get_ticker_count(ticker);
        let cfstats = prop("rocksdb.cfstats-no-file-histogram");
        EngineStats {
            level_table: cfstats.clone(),
            levels: parse_compaction_stats(&cfstats),
            counters: self
                .options
                .get_statistics()
                .map(|s| parse_tickers(&s))
                .unwrap_or_default(),
            wal_bytes: t(Ticker::WalFileBytes),
            flush_bytes_written: t(Ticker::FlushWriteBytes),
            compaction_bytes_written: t(Ticker::CompactWriteBytes),
            compaction_bytes_read: t(Ticker::CompactReadBytes),
            paths: Vec::new(),
        }
    }

    fn close(self: Box<Self>) -> Result<()> {
        with_db!(&self.db, db => db.cancel_all_background_work(true));
        Ok(())
    }
}
