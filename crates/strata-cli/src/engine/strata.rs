//! The Strata engine behind [`KvEngine`].

use super::{
    scan_cursor, BatchOp, Commit, Direction, EngineStats, KvEngine, LevelReport, PathReport,
    Visitor,
};
use crate::engine::options::EngineFlags;
use crate::error::{CliError, Result};
use std::path::Path;
use std::sync::Arc;
use strata::env::{DeviceFs, PosixFs};
use strata::{
    Db, DbBuilder, DbIterator, ErrorKind, ReadOptions, TransactionOptions, WriteBatch, WriteOptions,
};

/// An open Strata database.
pub struct StrataEngine {
    db: Db,
    wo: WriteOptions,
}

impl StrataEngine {
    /// Opens `flags.db` with already-validated `options`.
    ///
    /// # Errors
    /// The engine's open error.
    pub fn open(flags: &EngineFlags, options: strata::Options) -> Result<StrataEngine> {
        let db = db_builder(flags, &flags.db)?.open(&flags.db, options)?;
        Ok(StrataEngine {
            db,
            wo: WriteOptions::default().with_sync(flags.sync),
        })
    }
}

/// The builder that opens a Strata database in `db_dir` as `flags` ask: on the real
/// file system, with `--device`'s models under their data paths (`db_dir` itself for
/// index 0 when there are no `--db_paths`).
///
/// # Errors
/// [`CliError::Usage`] for a path index with no data path.
pub fn db_builder(flags: &EngineFlags, db_dir: &Path) -> Result<DbBuilder> {
    if flags.device.is_empty() {
        return Ok(Db::builder());
    }
    let mut fs = DeviceFs::new(Arc::new(PosixFs));
    for d in &flags.device {
        let dir = if flags.db_paths.is_empty() {
            (d.path_index == 0).then(|| db_dir.to_path_buf())
        } else {
            flags.db_paths.get(d.path_index).map(|p| p.path.clone())
        };
        let dir = dir.ok_or_else(|| {
            CliError::Usage(format!(
                "invalid value for '--device': path index {} but there are {} data paths",
                d.path_index,
                flags.db_paths.len().max(1)
            ))
        })?;
        fs = fs.with_device(dir, d.device_model()?);
    }
    Ok(Db::builder().file_system(Arc::new(fs)))
}

cursor_by_inherent_methods!([] DbIterator, |it| it.valid().then(|| (it.key(), it.value())));

impl KvEngine for StrataEngine {
    fn name(&self) -> &'static str {
        "strata"
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.db.put(&self.wo, key, value)?)
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.db.get(&ReadOptions::default(), key)?)
    }

    fn delete(&self, key: &[u8]) -> Result<()> {
        Ok(self.db.delete(&self.wo, key)?)
    }

    fn merge(&self, key: &[u8], operand: &[u8]) -> Result<()> {
        Ok(self.db.merge(&self.wo, key, operand)?)
    }

    fn delete_range(&self, start: &[u8], end: &[u8]) -> Result<()> {
        Ok(self.db.delete_range(&self.wo, start, end)?)
    }

    fn write_batch(&self, ops: &[BatchOp<'_>]) -> Result<()> {
        let mut batch = WriteBatch::new();
        for op in ops {
            match *op {
                BatchOp::Put(k, v) => batch.put(k, v),
                BatchOp::Delete(k) => batch.delete(k),
                BatchOp::Merge(k, v) => batch.merge(k, v),
            }
        }
        Ok(self.db.write(&self.wo, batch)?)
    }

    fn transaction(&self, read_for_update: &[&[u8]], ops: &[BatchOp<'_>]) -> Result<Commit> {
        let ro = ReadOptions::default();
        let mut txn = self.db.transaction(&TransactionOptions::default());
        let mut found = 0;
        for key in read_for_update {
            found += usize::from(txn.get_for_update(&ro, key)?.is_some());
        }
        for op in ops {
            match *op {
                BatchOp::Put(k, v) => txn.put(k, v)?,
                BatchOp::Delete(k) => txn.delete(k)?,
                BatchOp::Merge(..) => {
                    return Err(CliError::Usage(
                        "strata: a transaction takes puts and deletes, not merges (yet)".into(),
                    ))
                }
            }
        }
        match txn.commit(&self.wo) {
            Ok(()) => Ok(Commit::Done { found }),
            Err(e) if e.kind() == ErrorKind::Conflict => Ok(Commit::Conflict),
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
        let mut it = self.db.iter(&ReadOptions::default())?;
        let n = scan_cursor(&mut it, start, direction, limit, visit);
        it.status()?;
        Ok(n)
    }

    fn flush(&self) -> Result<()> {
        Ok(self.db.flush()?)
    }

    fn compact(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        Ok(self.db.compact_range(begin, end)?)
    }

    fn wait_for_compactions(&self) -> Result<()> {
        Ok(self.db.wait_for_compactions()?)
    }

    fn stats(&self) -> EngineStats {
        let s = self.db.stats();
        let c = &s.counters;
        EngineStats {
            level_table: format!("{}{}", s.level_table(), s.path_table()),
            levels: s
                .levels
                .iter()
                .enumerate()
                .map(|(level, l)| LevelReport {
                    level,
                    files: l.files as u64,
                    size_bytes: l.size,
                    read_bytes: l.read_bytes,
                    write_bytes: l.write_bytes,
                    count: l.count,
                })
                .collect(),
            counters: c
                .pairs()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            wal_bytes: c.wal_bytes_written,
            flush_bytes_written: c.flush_bytes_written,
            compaction_bytes_written: c.compaction_bytes_written,
            compaction_bytes_read: c.compaction_bytes_read,
            paths: s
                .paths
                .iter()
                .map(|p| {
                    let us = |d: std::time::Duration| d.as_secs_f64() * 1e6;
                    PathReport {
                        path: p.path.display().to_string(),
                        reads: p.reads,
                        bytes_read: p.bytes_read,
                        writes: p.writes,
                        bytes_written: p.bytes_written,
                        read_mean_us: us(p.read_latency.mean()),
                        read_p50_us: us(p.read_latency.quantile(0.5)),
                        read_p99_us: us(p.read_latency.quantile(0.99)),
                    }
                })
                .collect(),
        }
    }

    fn close(self: Box<Self>) -> Result<()> {
        Ok(self.db.close()?)
    }
}
