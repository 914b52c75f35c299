//! The Strata engine behind [`KvEngine`].
//!
//! Column families: the engine holds the handles of the families key operations go to
//! ([`Families`]); every key is routed by [`super::family_of`], a batch spanning
//! families is one atomic `WriteBatch` with `_cf` records. Families are created with
//! `Options::cf_options()` of the database's options, so every family is configured as
//! the flags say; a reopen needs no per-family options (`Db::open` gives a family it
//! is not told about the per-tree fields of the same `Options`).

use super::{
    family_of, missing_family, scan_cursor, scan_refused, BatchOp, Commit, EngineStats, Families,
    KvEngine, LevelReport, PathReport, Scan, VirtualSpace, Visitor, DEFAULT_FAMILY,
};
use crate::engine::options::EngineFlags;
use crate::error::{CliError, Result};
use std::path::Path;
use std::sync::Arc;
use strata::env::{DeviceFs, PosixFs};
use strata::{
    CfHandle, CfOptions, Db, DbBuilder, DbIterator, ErrorKind, ReadOptions, TransactionOptions,
    WriteBatch, WriteOptions,
};

/// An open Strata database.
pub struct StrataEngine {
    db: Db,
    wo: WriteOptions,
    /// The families key operations go to, in routing order (`family_of` indexes it);
    /// never empty.
    cfs: Vec<CfHandle>,
    /// The per-tree options of the database, for families created by `create_cf`.
    cf_options: CfOptions,
}

impl StrataEngine {
    /// Opens `flags.db` with already-validated `options`, routing key operations to
    /// `families` (created with `options`' per-tree fields where missing, for
    /// [`Families::Spread`]).
    ///
    /// # Errors
    /// The engine's open or create error; [`CliError::Usage`] for a missing
    /// [`Families::One`].
    pub fn open(
        flags: &EngineFlags,
        options: strata::Options,
        families: &Families,
    ) -> Result<StrataEngine> {
        let names = families.names();
        let cf_options = options.cf_options();
        // The flags configure every family: each one the database has is listed with
        // them (unlisted, a family would run with the options it recorded), but for
        // the merge operator of a family that recorded one, which it keeps (listing
        // another would be refused), and of a family whose values carry deadlines,
        // which has none.
        let existing = Db::list_cfs(&flags.db).unwrap_or_default();
        let recorded = strata::options_file::load(&PosixFs, &flags.db)
            .ok()
            .flatten();
        let options = fit_default(options, recorded.as_ref());
        let has_operator = |name: &str| {
            recorded
                .as_ref()
                .and_then(|r| r.families.get(name))
                .is_some_and(|f| f.merge_operator.is_some() || f.options.expiring_values)
        };
        let listed: Vec<(&str, CfOptions)> = existing
            .iter()
            .filter(|n| n.as_str() != "default")
            .map(|n| {
                let cf = cf_options.clone();
                let cf = match has_operator(n) {
                    true => cf.with_merge_operator(None),
                    false => cf,
                };
                (n.as_str(), cf)
            })
            .collect();
        let db = db_builder(flags, &flags.db)?.open_cf(&flags.db, options, &listed)?;
        let mut cfs = Vec::with_capacity(names.len());
        for name in &names {
            let cf = match (db.cf(name), families) {
                (Some(cf), _) => cf,
                (None, Families::Spread(_)) => db.create_cf(name, cf_options.clone())?,
                (None, Families::One(_)) => {
                    return Err(missing_family(name, &flags.db, &db.cf_names()))
                }
            };
            cfs.push(cf);
        }
        Ok(StrataEngine {
            db,
            wo: WriteOptions::default().with_sync(flags.sync),
            cfs,
            cf_options,
        })
    }

    /// [`StrataEngine::open`] read-only (`Db::open_read_only`): no lock, nothing
    /// written, so a live database can be inspected beside its writer. `families` must
    /// exist; writes through the engine are refused by the database.
    ///
    /// # Errors
    /// As [`StrataEngine::open`]; a family the database lacks.
    pub fn open_read_only(
        flags: &EngineFlags,
        options: strata::Options,
        families: &Families,
    ) -> Result<StrataEngine> {
        StrataEngine::open_reader(flags, options, families, None)
    }

    /// [`StrataEngine::open_read_only`] as a secondary instance keeping its files in
    /// `secondary_dir` (`Db::open_secondary`): it reads the database as of its open
    /// through links of its own, so a writer's compactions delete nothing under it.
    ///
    /// # Errors
    /// As [`StrataEngine::open_read_only`]; a `secondary_dir` in use or that is a
    /// database.
    pub fn open_secondary(
        flags: &EngineFlags,
        options: strata::Options,
        families: &Families,
        secondary_dir: &std::path::Path,
    ) -> Result<StrataEngine> {
        StrataEngine::open_reader(flags, options, families, Some(secondary_dir))
    }

    fn open_reader(
        flags: &EngineFlags,
        options: strata::Options,
        families: &Families,
        secondary_dir: Option<&std::path::Path>,
    ) -> Result<StrataEngine> {
        let cf_options = options.cf_options();
        let recorded = strata::options_file::load(&PosixFs, &flags.db)
            .ok()
            .flatten();
        let options = fit_default(options, recorded.as_ref());
        let builder = db_builder(flags, &flags.db)?;
        let db = match secondary_dir {
            Some(dir) => builder.open_secondary(&flags.db, dir, options)?,
            None => builder.open_read_only(&flags.db, options)?,
        };
        let cfs = families
            .names()
            .iter()
            .map(|name| {
                db.cf(name)
                    .ok_or_else(|| missing_family(name, &flags.db, &db.cf_names()))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(StrataEngine {
            db,
            wo: WriteOptions::default().with_sync(flags.sync),
            cfs,
            cf_options,
        })
    }

    /// The family `key` belongs to.
    fn cf(&self, key: &[u8]) -> &CfHandle {
        let i = family_of(key, self.cfs.len());
        // `family_of` is below `cfs.len()`, and `cfs` is never empty (`open`).
        &self.cfs[i]
    }
}

/// The flags' `options` for the default family of a database whose last open
/// recorded `recorded`: without the harness's merge operator where the values carry
/// deadlines (such a family has no merges, and the open would refuse one).
fn fit_default(
    options: strata::Options,
    recorded: Option<&strata::options_file::StoredOptions>,
) -> strata::Options {
    match recorded.is_some_and(|r| r.options.expiring_values) {
        true => options.with_merge_operator(None),
        false => options,
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

/// `DbStats::total_io_bytes` and its parts by purpose, as counters named
/// `table_io_bytes`, `table_bytes_read_by_<purpose>` and
/// `table_bytes_written_by_<purpose>` (the parts add up to the total).
fn io_by_purpose(s: &strata::DbStats) -> Vec<(String, u64)> {
    let mut out = vec![("table_io_bytes".to_string(), s.total_io_bytes())];
    for (kind, b) in [
        ("read", s.io_bytes_read()),
        ("written", s.io_bytes_written()),
    ] {
        for (purpose, n) in [
            ("get", b.get),
            ("scan", b.scan),
            ("flush", b.flush),
            ("compaction", b.compaction),
            ("write_back", b.write_back),
            ("other", b.other),
        ] {
            out.push((format!("table_bytes_{kind}_by_{purpose}"), n));
        }
    }
    out
}

impl KvEngine for StrataEngine {
    fn name(&self) -> &'static str {
        "strata"
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.db.put_cf(&self.wo, self.cf(key), key, value)?)
    }

    fn get_with(&self, key: &[u8], found: &mut dyn FnMut(&[u8])) -> Result<bool> {
        let value = self.db.get_cf(&ReadOptions::default(), self.cf(key), key)?;
        Ok(value.map(|v| found(&v)).is_some())
    }

    fn put_with_ttl(&self, key: &[u8], value: &[u8], ttl: std::time::Duration) -> Result<()> {
        Ok(self
            .db
            .put_with_ttl_cf(&self.wo, self.cf(key), key, value, ttl)?)
    }

    /// One `multi_get_cf` per family the keys go to (one call with one family).
    fn multi_get(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>> {
        let ro = ReadOptions::default();
        let [cf] = self.cfs.as_slice() else {
            return keys.iter().map(|k| self.get(k)).collect();
        };
        self.db
            .multi_get_cf(&ro, cf, keys)
            .into_iter()
            .map(|r| r.map_err(CliError::from))
            .collect()
    }

    fn delete(&self, key: &[u8]) -> Result<()> {
        Ok(self.db.delete_cf(&self.wo, self.cf(key), key)?)
    }

    fn merge(&self, key: &[u8], operand: &[u8]) -> Result<()> {
        Ok(self.db.merge_cf(&self.wo, self.cf(key), key, operand)?)
    }

    /// One range tombstone in every family, in one atomic batch: the keys of the range
    /// are spread over all of them.
    fn delete_range(&self, start: &[u8], end: &[u8]) -> Result<()> {
        let mut batch = WriteBatch::new();
        for cf in &self.cfs {
            batch.delete_range_cf(cf, start, end);
        }
        Ok(self.db.write(&self.wo, batch)?)
    }

    fn write_batch(&self, ops: &[BatchOp<'_>]) -> Result<()> {
        let mut batch = WriteBatch::new();
        for op in ops {
            match *op {
                BatchOp::Put(k, v) => batch.put_cf(self.cf(k), k, v),
                BatchOp::Delete(k) => batch.delete_cf(self.cf(k), k),
                BatchOp::Merge(k, v) => batch.merge_cf(self.cf(k), k, v),
            }
        }
        Ok(self.db.write(&self.wo, batch)?)
    }

    fn transaction(&self, read_for_update: &[&[u8]], ops: &[BatchOp<'_>]) -> Result<Commit> {
        // Every key in its routed family, as plain writes (one transaction may span
        // families).
        let ro = ReadOptions::default();
        let mut txn = self.db.transaction(&TransactionOptions::default());
        let mut found = 0;
        for key in read_for_update {
            found += usize::from(txn.get_for_update_cf(&ro, self.cf(key), key)?.is_some());
        }
        for op in ops {
            match *op {
                BatchOp::Put(k, v) => txn.put_cf(self.cf(k), k, v)?,
                BatchOp::Delete(k) => txn.delete_cf(self.cf(k), k)?,
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

    fn scan(&self, scan: Scan<'_>, visit: &mut Visitor<'_>) -> Result<usize> {
        let [cf] = self.cfs.as_slice() else {
            return Err(scan_refused("strata", self.cfs.len()));
        };
        let mut ro = ReadOptions::default();
        ro.upper_bound = scan.end.map(<[u8]>::to_vec);
        let mut it = self.db.iter_cf(&ro, cf)?;
        let n = scan_cursor(&mut it, scan, visit);
        it.status()?;
        Ok(n)
    }

    fn flush(&self) -> Result<()> {
        Ok(self.db.flush()?)
    }

    fn compact(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        for cf in &self.cfs {
            self.db.compact_range_cf(cf, begin, end)?;
        }
        Ok(())
    }

    fn wait_for_compactions(&self) -> Result<()> {
        Ok(self.db.wait_for_compactions()?)
    }

    /// The counters are database-wide (`Db::stats`); the level figures and live table
    /// bytes are summed over the routed families, level by level, and the text table
    /// lists each family's own table.
    fn stats(&self) -> EngineStats {
        let per_family: Vec<strata::DbStats> =
            self.cfs.iter().map(|cf| self.db.cf_stats(cf)).collect();
        let s = self.db.stats();
        let c = &s.counters;
        let mut levels: Vec<LevelReport> = Vec::new();
        let mut level_table = String::new();
        for (cf, fs) in self.cfs.iter().zip(&per_family) {
            if self.cfs.len() > 1 {
                level_table.push_str(&format!("** column family {} **\n", cf.name()));
            }
            level_table.push_str(&fs.level_table());
            for (level, l) in fs.levels.iter().enumerate() {
                if levels.len() <= level {
                    levels.resize_with(level + 1, LevelReport::default);
                }
                if let Some(r) = levels.get_mut(level) {
                    r.level = level;
                    r.files += l.files as u64;
                    r.size_bytes += l.size;
                    r.read_bytes += l.read_bytes;
                    r.write_bytes += l.write_bytes;
                    r.count += l.count;
                }
            }
        }
        level_table.push_str(&s.path_table());
        EngineStats {
            level_table,
            levels,
            counters: c
                .pairs()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .chain(io_by_purpose(&s))
                // The tree hooks' own figures (tiering: RALT, the promotion cache).
                .chain(s.tree_hooks.iter().map(|(k, v)| (format!("hooks.{k}"), *v)))
                .collect(),
            wal_bytes: c.wal_bytes_written,
            flush_bytes_written: c.flush_bytes_written,
            compaction_bytes_written: c.compaction_bytes_written,
            compaction_bytes_read: c.compaction_bytes_read,
            // Families share no table files, so the sum counts each once.
            live_table_bytes: per_family.iter().map(|f| f.space.live_table_bytes).sum(),
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

    fn create_cf(&mut self, name: &str) -> Result<()> {
        if self.db.cf(name).is_some() {
            return Err(CliError::Usage(format!(
                "column family `{name}` exists in '{}'",
                self.db.path().display()
            )));
        }
        self.db.create_cf(name, self.cf_options.clone())?;
        Ok(())
    }

    fn drop_cf(&mut self, name: &str) -> Result<()> {
        if name == DEFAULT_FAMILY {
            return Err(CliError::Usage(
                "the default column family cannot be dropped".into(),
            ));
        }
        let cf = self
            .db
            .cf(name)
            .ok_or_else(|| missing_family(name, self.db.path(), &self.db.cf_names()))?;
        // A family this engine routes to is dropped under it: later writes to it fail
        // (the engine refuses writes to a dropped family), which is what ldb wants.
        Ok(self.db.drop_cf(&cf)?)
    }

    fn cf_names(&self) -> Result<Vec<String>> {
        Ok(self.db.cf_names())
    }

    /// Families share no tables, so the sums count each table and parent once.
    fn virtual_space(&self) -> Option<VirtualSpace> {
        let mut v = VirtualSpace::default();
        for cf in &self.cfs {
            let s = self.db.cf_stats(cf);
            v.virtual_tables += s.levels.iter().map(|l| l.virtual_files as u64).sum::<u64>();
            v.parents += s.space.parents;
            v.parent_bytes += s.space.parent_bytes;
            v.referenced_bytes += s.space.referenced_bytes;
            v.garbage_bytes += s.space.garbage_bytes;
        }
        Some(v)
    }

    fn close(self: Box<Self>) -> Result<()> {
        Ok(self.db.close()?)
    }
}
