//! The floor each peer adapter is held to: the timed loops of `bench --floor` call the
//! peer's own API directly, with nothing of the [`KvEngine`] adapter in between.
//!
//! Role: the benchmark loops of [`super::workloads`] that time single operations
//! (the fills, overwrite, deleterandom, readrandom, readseq, readreverse, seekrandom)
//! are generic over [`Hot`], the calls they make. [`Hot`] is implemented once for
//! `dyn KvEngine` (the adapter every comparison uses) and once per peer for its own
//! handle ([`Direct`]): RocksDB through `put_opt`, `get_pinned_opt` (no copy of the
//! value), `raw_iterator_opt` and `WriteBatch`; fjall through `Keyspace::insert`,
//! `get`, its range iterator and its batch. Both run the same loop (same keys, values,
//! timing), so the ratio adapter / floor is what the adapter costs the peer. The
//! database is the one the adapter opened, with the same options. The walks share
//! two small generic helpers with the adapters, inlined into each driver: RocksDB's
//! positions its raw iterator through `engine::scan_cursor` (one bound comparison
//! per entry beyond the peer's own calls), fjall's iterates its keyspace's range
//! through `engine::fjall::scan_keyspace` (nothing beyond fjall's own calls).

use super::flags::{BenchArgs, Benchmark};
use crate::engine::{BatchOp, Direct, KvEngine, Scan};
use crate::error::{CliError, Result};

/// The calls of the timed loops.
pub(crate) trait Hot: Sync {
    /// Writes `key = value`.
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()>;
    /// Deletes `key`.
    fn delete(&self, key: &[u8]) -> Result<()>;
    /// Merges a counter operand into `key`.
    fn merge(&self, key: &[u8], operand: &[u8]) -> Result<()>;
    /// Applies `ops` atomically.
    fn write_batch(&self, ops: &[BatchOp<'_>]) -> Result<()>;
    /// The length of `key`'s value; `None` iff absent.
    fn get_len(&self, key: &[u8]) -> Result<Option<usize>>;
    /// Visits the entries `scan` names until `visit` returns false; returns how many.
    fn scan<V: FnMut(&[u8], &[u8]) -> bool>(&self, scan: Scan<'_>, visit: V) -> Result<usize>;
}

impl Hot for dyn KvEngine + '_ {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        KvEngine::put(self, key, value)
    }
    fn delete(&self, key: &[u8]) -> Result<()> {
        KvEngine::delete(self, key)
    }
    fn merge(&self, key: &[u8], operand: &[u8]) -> Result<()> {
        KvEngine::merge(self, key, operand)
    }
    fn write_batch(&self, ops: &[BatchOp<'_>]) -> Result<()> {
        KvEngine::write_batch(self, ops)
    }
    fn get_len(&self, key: &[u8]) -> Result<Option<usize>> {
        KvEngine::get_len(self, key)
    }
    fn scan<V: FnMut(&[u8], &[u8]) -> bool>(&self, scan: Scan<'_>, mut visit: V) -> Result<usize> {
        KvEngine::scan(self, scan, &mut visit)
    }
}

/// Refuses `--floor` where there is no floor to measure: Strata (the floor is for
/// the peers' adapters), several column families, transactions, and benchmarks whose
/// loops are not generic over [`Hot`] (they would run through the adapter and be
/// mislabelled).
///
/// # Errors
/// [`CliError::Usage`] naming what is refused.
pub(crate) fn check(args: &BenchArgs) -> Result<()> {
    let usage = |m: &str| Err(CliError::Usage(format!("'--floor': {m}")));
    if args.engine.engine == crate::engine::options::EngineKind::Strata {
        return usage("the floor drives a peer directly: use --engine=rocksdb or fjall");
    }
    if args.engine.num_column_families != 1 || args.engine.transaction_db {
        return usage("one column family and no --transaction_db");
    }
    if let Some(b) = args.benchmarks.iter().find(|b| !covers(**b)) {
        return usage(&format!(
            "{} has no direct driver (the floor runs fillseq, fillrandom, overwrite, \
             deleterandom, mergerandom, readrandom, readseq, readreverse, seekrandom, \
             and the untimed flush, compact, waitforcompaction and stats)",
            b.name()
        ));
    }
    // The adapter refuses keys fjall would panic on; the direct driver checks nothing.
    if args.engine.engine == crate::engine::options::EngineKind::Fjall
        && args.key_size > usize::from(u16::MAX)
    {
        return usage("fjall keys are at most 65535 bytes");
    }
    Ok(())
}

/// True iff `b` runs on [`Hot`] (or times nothing).
fn covers(b: Benchmark) -> bool {
    use Benchmark as B;
    matches!(
        b,
        B::Fillseq
            | B::Fillrandom
            | B::Overwrite
            | B::Deleterandom
            | B::Mergerandom
            | B::Readrandom
            | B::Readseq
            | B::Readreverse
            | B::Seekrandom
            | B::Flush
            | B::Compact
            | B::Waitforcompaction
            | B::Stats
    )
}

/// The direct handle of `engine`, which `--floor` needs.
///
/// # Errors
/// [`CliError::Usage`] if the engine lends none.
pub(crate) fn direct(engine: &dyn KvEngine) -> Result<Direct<'_>> {
    engine.direct().ok_or_else(|| {
        CliError::Usage(format!(
            "'--floor': {} lends no direct handle (one column family, no transactions)",
            engine.name()
        ))
    })
}

/// Runs `$body` with `$h` bound to the [`Hot`] the loops call: the adapter `$engine`
/// without a floor, the peer's direct driver with one.
macro_rules! with_hot {
    ($floor:expr, $engine:expr, |$h:ident| $body:expr) => {
        match $floor {
            None => {
                let $h: &dyn $crate::engine::KvEngine = $engine;
                $body
            }
            #[cfg(feature = "rocksdb")]
            Some($crate::engine::Direct::Rocksdb { db, sync }) => {
                let driver = $crate::bench::floor::RocksFloor::new(db, sync);
                let $h = &driver;
                $body
            }
            #[cfg(feature = "fjall")]
            Some($crate::engine::Direct::Fjall { keyspace, db, sync }) => {
                let driver = $crate::bench::floor::FjallFloor::new(keyspace, db, sync);
                let $h = &driver;
                $body
            }
            Some($crate::engine::Direct::_Unbuilt(_, never)) => match never {},
        }
    };
}
pub(crate) use with_hot;

/// RocksDB driven directly: one `ReadOptions` and `WriteOptions` for every point
/// operation, values read pinned (never copied).
#[cfg(feature = "rocksdb")]
pub(crate) struct RocksFloor<'a> {
    db: &'a rocksdb::DB,
    read: rocksdb::ReadOptions,
    write: rocksdb::WriteOptions,
}

#[cfg(feature = "rocksdb")]
impl<'a> RocksFloor<'a> {
    /// The driver of `db`; `sync`: `--sync`.
    pub(crate) fn new(db: &'a rocksdb::DB, sync: bool) -> RocksFloor<'a> {
        let mut write = rocksdb::WriteOptions::default();
        write.set_sync(sync);
        RocksFloor {
            db,
            read: rocksdb::ReadOptions::default(),
            write,
        }
    }
}

#[cfg(feature = "rocksdb")]
impl Hot for RocksFloor<'_> {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.db.put_opt(key, value, &self.write)?)
    }
    fn delete(&self, key: &[u8]) -> Result<()> {
        Ok(self.db.delete_opt(key, &self.write)?)
    }
    fn merge(&self, key: &[u8], operand: &[u8]) -> Result<()> {
        Ok(self.db.merge_opt(key, operand, &self.write)?)
    }
    fn write_batch(&self, ops: &[BatchOp<'_>]) -> Result<()> {
        let mut batch = rocksdb::WriteBatch::default();
        for op in ops {
            match *op {
                BatchOp::Put(k, v) => batch.put(k, v),
                BatchOp::Delete(k) => batch.delete(k),
                BatchOp::Merge(k, v) => batch.merge(k, v),
            }
        }
        Ok(self.db.write_opt(batch, &self.write)?)
    }
    fn get_len(&self, key: &[u8]) -> Result<Option<usize>> {
        Ok(self.db.get_pinned_opt(key, &self.read)?.map(|v| v.len()))
    }
    fn scan<V: FnMut(&[u8], &[u8]) -> bool>(&self, scan: Scan<'_>, mut visit: V) -> Result<usize> {
        let mut ro = rocksdb::ReadOptions::default();
        if let Some(end) = scan.end {
            ro.set_iterate_upper_bound(end.to_vec());
        }
        let mut it = self.db.raw_iterator_opt(ro);
        let n = crate::engine::scan_cursor(&mut it, scan, &mut visit);
        it.status()?;
        Ok(n)
    }
}

/// fjall driven directly: its keyspace's own calls and iterator; `--sync` persists
/// the journal after each write, as fjall's documentation says to.
#[cfg(feature = "fjall")]
pub(crate) struct FjallFloor<'a> {
    keyspace: &'a fjall::Keyspace,
    db: &'a fjall::Database,
    sync: bool,
}

#[cfg(feature = "fjall")]
impl<'a> FjallFloor<'a> {
    /// The driver of `keyspace` in `db`; `sync`: `--sync`.
    pub(crate) fn new(
        keyspace: &'a fjall::Keyspace,
        db: &'a fjall::Database,
        sync: bool,
    ) -> FjallFloor<'a> {
        FjallFloor { keyspace, db, sync }
    }

    fn persist(&self) -> Result<()> {
        if self.sync {
            self.db.persist(fjall::PersistMode::SyncData)?;
        }
        Ok(())
    }
}

#[cfg(feature = "fjall")]
impl Hot for FjallFloor<'_> {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.keyspace.insert(key, value)?;
        self.persist()
    }
    fn delete(&self, key: &[u8]) -> Result<()> {
        self.keyspace.remove(key)?;
        self.persist()
    }
    fn merge(&self, _key: &[u8], _operand: &[u8]) -> Result<()> {
        Err(crate::engine::fjall::no_merge())
    }
    fn write_batch(&self, ops: &[BatchOp<'_>]) -> Result<()> {
        let mut batch = self.db.batch();
        if self.sync {
            batch = batch.durability(Some(fjall::PersistMode::SyncData));
        }
        for op in ops {
            match *op {
                BatchOp::Put(k, v) => batch.insert(self.keyspace, k, v),
                BatchOp::Delete(k) => batch.remove(self.keyspace, k),
                BatchOp::Merge(..) => return Err(crate::engine::fjall::no_merge()),
            }
        }
        Ok(batch.commit()?)
    }
    fn get_len(&self, key: &[u8]) -> Result<Option<usize>> {
        Ok(self.keyspace.get(key)?.map(|v| v.len()))
    }
    fn scan<V: FnMut(&[u8], &[u8]) -> bool>(&self, scan: Scan<'_>, mut visit: V) -> Result<usize> {
        crate::engine::fjall::scan_keyspace(self.keyspace, scan, &mut visit)
    }
}
