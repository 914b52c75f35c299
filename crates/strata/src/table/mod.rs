//! Tables: rows of typed columns under a primary key, stored in a column family of
//! their own (the LASER paper's real-time LSM-tree, issue 31; docs/ARCHITECTURE.md
//! §19).
//!
//! A table is a column family whose records (its catalog, `catalog.rs`) hold its
//! schema and layout, written in the edit that creates it; every open reads them and
//! gives the family the row operator (`operator.rs`), so a plain [`crate::Db::open`]
//! reads a table whatever options it is given. Rows are stored as parts (`part.rs`):
//! an insert is a `Put` of the whole row, an update a merge operand holding only the
//! changed columns (never a read-modify-write), a delete a `Delete`. Reads resolve a
//! key's parts through the operator, as compactions fold them.
//!
//! A layout may give levels below L0 column groups: the table's compaction policy
//! (`policy.rs`, CG-local compaction) then writes each group's share of every row to
//! a run of its own (`splitter.rs`), and reads reunite the parts through the
//! operator. Gets and scans read only the runs of the groups a projection needs,
//! and a get stops where its columns settle (`projection.rs`). What exists today
//! stores a group's parts in the engine's ordinary (row-format) blocks, the paper's
//! "simulated" column groups. Each handle keeps a profile of its operations
//! (`profile.rs`), which [`Table::workload`] turns into the design advisor's input.
//! The cost model ([`cost`]) and the design advisor ([`advisor`]) are pure code over
//! a workload description. Column blocks, batch scans and layout changes are planned
//! (issue 31).

pub mod advisor;
mod catalog;
pub mod cost;
mod layout;
mod operator;
mod part;
mod policy;
mod profile;
mod projection;
mod scan;
mod schema;
mod splitter;

pub(crate) use catalog::TableKinds;
pub use layout::{Layout, LevelLayout};
pub use profile::Profile;
pub use scan::Scan;
pub use schema::{Column, ColumnType, KeyType, Schema, Value};

use crate::db::{CfHandle, Db};
use crate::error::{Error, Result};
use crate::options::{ReadOptions, WriteOptions};
use catalog::Catalog;
use layout::LayoutRecord;
use parking_lot::Mutex;
use part::Part;
use projection::Projection;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One run of a table's level ([`Table::runs`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunInfo {
    /// Its level.
    pub level: usize,
    /// Its column group's id (0: whole rows).
    pub group: u32,
    /// The column numbers it stores (every column for rows; none for a group this
    /// handle's catalog does not know).
    pub columns: Vec<usize>,
    /// Its files.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Their entries (of every kind).
    pub entries: u64,
}

/// A table of an open database. See the module docs.
pub struct Table<'db> {
    db: &'db Db,
    cf: CfHandle,
    schema: Arc<Schema>,
    layout: Layout,
    /// Every group of the table's layouts, by id (`LayoutRecord::groups`): reads open
    /// the runs of the groups a projection needs (`projection.rs`).
    groups: BTreeMap<u32, Vec<u32>>,
    /// What went through this handle (`profile.rs`).
    profile: Arc<Mutex<Profile>>,
}

impl std::fmt::Debug for Table<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("name", &self.cf.name())
            .field("schema", &self.schema)
            .field("layout", &self.layout.to_text())
            .finish()
    }
}

impl<'db> Table<'db> {
    /// Creates table `name` in `db`: a column family with the database's per-tree
    /// options, holding its schema and layout from its first MANIFEST edit on.
    ///
    /// # Errors
    /// `InvalidArgument` for a taken name, a layout that does not fit the schema
    /// ([`Layout::check`]), or a read-only database; the MANIFEST's errors as for
    /// [`Db::create_cf`].
    pub fn create(db: &'db Db, name: &str, schema: Schema, layout: Layout) -> Result<Table<'db>> {
        layout.check(schema.columns().len())?;
        let record = LayoutRecord::first(&layout);
        let records = vec![
            (catalog::SCHEMA, schema.encode()),
            (catalog::LAYOUT, record.encode()),
        ];
        // The family takes the database's per-tree options but its merge operator
        // (its kind gives it the row operator at every open, so none is recorded) and
        // its value layout (rows are merged, so they carry no deadlines).
        let inner = db.inner();
        let options = inner
            .opts
            .cf_options()
            .with_merge_operator(None)
            .with_expiring_values(false);
        let family = inner.create_family(name, &options, records)?;
        Ok(Table {
            db,
            cf: CfHandle { family },
            schema: Arc::new(schema),
            layout,
            groups: record.groups,
            profile: Arc::default(),
        })
    }

    /// Opens table `name` of `db`.
    ///
    /// # Errors
    /// `InvalidArgument` if there is no column family `name` or it is not a table;
    /// `Corruption` for a catalog that does not decode.
    pub fn open(db: &'db Db, name: &str) -> Result<Table<'db>> {
        let cf = db
            .cf(name)
            .ok_or_else(|| Error::InvalidArgument(format!("no table `{name}`")))?;
        let catalog = Catalog::read(name, &cf.family.versions.current())?.ok_or_else(|| {
            Error::InvalidArgument(format!("column family `{name}` is not a table"))
        })?;
        let layout = catalog.layout.layout().map_err(Error::Internal)?;
        Ok(Table {
            db,
            cf,
            schema: catalog.schema,
            layout,
            groups: catalog.layout.groups,
            profile: Arc::default(),
        })
    }

    /// Drops the table: its family and every row, durably (as [`Db::drop_cf`]).
    ///
    /// # Errors
    /// As [`Db::drop_cf`].
    pub fn drop_table(self) -> Result<()> {
        self.db.drop_cf(&self.cf)
    }

    /// The table's schema.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The table's layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Inserts (or replaces) the row `row` (every column, in schema order) under
    /// `key`.
    ///
    /// # Errors
    /// `InvalidArgument` for a key or value of the wrong type, a null in a column
    /// that is not nullable, or the wrong number of values; the write's errors.
    pub fn insert(&self, wo: &WriteOptions, key: &Value, row: &[Value]) -> Result<()> {
        let columns = self.schema.columns().len();
        if row.len() != columns {
            return Err(Error::InvalidArgument(format!(
                "a row of {} values for a table of {columns} columns",
                row.len()
            )));
        }
        let cells = self.cells(row.iter().enumerate())?;
        let part = Part {
            insert: true,
            cells,
        };
        let key = self.schema.encode_key(key)?;
        self.db
            .put_cf(wo, &self.cf, &key, &part.encode(&self.schema))?;
        self.profile.lock().inserts += 1;
        Ok(())
    }

    /// Sets columns `set` (column number, value) of the row under `key`, writing only
    /// them (a merge operand, no read). A key with no live row is left without one.
    ///
    /// # Errors
    /// `InvalidArgument` for a column twice or out of range, a value of the wrong
    /// type, or no column; the write's errors.
    pub fn update(&self, wo: &WriteOptions, key: &Value, set: &[(usize, Value)]) -> Result<()> {
        if set.is_empty() {
            return Err(Error::InvalidArgument("an update of no column".into()));
        }
        let mut cells = self.cells(set.iter().map(|(c, v)| (*c, v)))?;
        cells.sort_by_key(|(c, _)| *c);
        if let Some(w) = cells
            .windows(2)
            .find(|w| w.first().map(|x| x.0) == w.get(1).map(|x| x.0))
        {
            return Err(Error::InvalidArgument(format!(
                "column {:?} set twice in one update",
                w.first().map(|x| x.0)
            )));
        }
        let set: Vec<usize> = cells.iter().map(|(c, _)| *c as usize).collect();
        let part = Part {
            insert: false,
            cells,
        };
        let key = self.schema.encode_key(key)?;
        self.db
            .merge_cf(wo, &self.cf, &key, &part.encode(&self.schema))?;
        *self.profile.lock().updates.entry(set).or_default() += 1;
        Ok(())
    }

    /// Deletes the row under `key` (if any).
    ///
    /// # Errors
    /// `InvalidArgument` for a key of the wrong type; the write's errors.
    pub fn delete(&self, wo: &WriteOptions, key: &Value) -> Result<()> {
        let key = self.schema.encode_key(key)?;
        self.db.delete_cf(wo, &self.cf, &key)
    }

    /// Deletes every row with a key in `[from, to)` (one range tombstone; an empty
    /// range deletes nothing).
    ///
    /// # Errors
    /// `InvalidArgument` for a bound of the wrong type; the write's errors.
    pub fn delete_range(&self, wo: &WriteOptions, from: &Value, to: &Value) -> Result<()> {
        let (from, to) = (self.schema.encode_key(from)?, self.schema.encode_key(to)?);
        if from >= to {
            return Ok(());
        }
        self.db.delete_range_cf(wo, &self.cf, &from, &to)
    }

    /// The values of columns `projection` (column numbers, in the order wanted) of the
    /// row under `key`, at `ro`'s snapshot; `None` if there is no row.
    ///
    /// # Errors
    /// `InvalidArgument` for a key of the wrong type or a column out of range;
    /// `MergeFailed`/`Corruption` for a stored part that does not decode.
    pub fn get(
        &self,
        ro: &ReadOptions,
        key: &Value,
        projection: &[usize],
    ) -> Result<Option<Vec<Value>>> {
        self.check_projection(projection)?;
        let key = self.schema.encode_key(key)?;
        let mut wants = Projection::new(&self.schema, &self.groups, projection);
        let Some(bytes) = self.db.get_partial_cf(ro, &self.cf, &key, &mut wants)? else {
            return Ok(None);
        };
        let served = wants.served();
        let part = Part::decode(&self.schema, &bytes).map_err(|e| Error::Corruption {
            file: format!("table `{}`", self.cf.name()).into(),
            offset: 0,
            reason: format!("the row of key {key:02x?}: {e}"),
        })?;
        if !part.exists() {
            return Ok(None);
        }
        self.profile.lock().count_get(projection, served);
        Ok(Some(part.project(projection)))
    }

    /// What went through this handle since it was opened or last reset: the workload
    /// the design advisor takes ([`Table::workload`]).
    pub fn profile(&self) -> Profile {
        self.profile.lock().clone()
    }

    /// Starts the profile afresh.
    pub fn reset_profile(&self) {
        *self.profile.lock() = Profile::default();
    }

    /// The design advisor's input from this handle's profile and the tree as it is:
    /// `T` and the levels from the family's options; `B`, the entries of a row block,
    /// from the runs written (a row run's entries per block, or a group run's scaled
    /// by Eq. 3); each level's share of the rows from its runs' entries.
    pub fn workload(&self) -> (cost::TreeShape, advisor::Workload) {
        let opts = &self.cf.family.opts;
        let runs = self.runs();
        let c = self.schema.columns().len();
        let block = opts.level(1).block_size as f64;
        let row_entries_per_block = runs
            .iter()
            .filter(|r| r.entries > 0 && r.bytes > 0)
            .max_by_key(|r| (r.columns.len(), r.entries))
            .map_or(block / (16.0 + 6.0 * c as f64), |r| {
                let per_block = r.entries as f64 * block / r.bytes as f64;
                per_block * (1 + r.columns.len()) as f64 / (1 + c) as f64
            });
        let shape = cost::TreeShape {
            size_ratio: opts.max_bytes_for_level_multiplier,
            last_level: opts.num_levels.saturating_sub(1),
            row_entries_per_block,
            columns: c,
        };
        let workload = self.profile.lock().workload(&shape, &runs);
        (shape, workload)
    }

    /// Compacts the whole table (`Db::compact_range_cf`), waiting for it.
    ///
    /// # Errors
    /// As [`Db::compact_range_cf`].
    pub fn compact(&self) -> Result<()> {
        self.db.compact_range_cf(&self.cf, None, None)
    }

    /// The runs of the table's levels that hold files, level by level (the row run
    /// first within a level, then the groups by id).
    pub fn runs(&self) -> Vec<RunInfo> {
        let version = self.cf.family.versions.current();
        let all: Vec<usize> = (0..self.schema.columns().len()).collect();
        let mut out = Vec::new();
        for level in 0..version.num_levels() {
            for run in version.runs(level).filter(|r| !r.files().is_empty()) {
                let columns = match run.group() {
                    crate::version::file_meta::ALL_COLUMNS => all.clone(),
                    g => self
                        .groups
                        .get(&g)
                        .map_or_else(Vec::new, |cols| cols.iter().map(|&c| c as usize).collect()),
                };
                out.push(RunInfo {
                    level,
                    group: run.group(),
                    columns,
                    files: run.files().len(),
                    bytes: run.bytes(),
                    entries: run.files().iter().map(|f| f.num_entries).sum(),
                });
            }
        }
        out
    }

    /// Lines describing the table, for `strata table show`: its schema, its layout,
    /// and per level holding files each run's group, columns, files and bytes.
    pub fn describe(&self) -> Vec<String> {
        let s = &self.schema;
        let columns: Vec<String> = s
            .columns()
            .iter()
            .map(|c| format!("{}:{:?}{}", c.name, c.ty, if c.nullable { "?" } else { "" }))
            .collect();
        let mut out = vec![
            format!(
                "table {}: key {}:{:?}",
                self.cf.name(),
                s.key_name(),
                s.key_type()
            ),
            format!("columns: {}", columns.join(",")),
            format!("layout: {}", self.layout.to_text()),
        ];
        for run in self.runs() {
            let what = match run.group {
                crate::version::file_meta::ALL_COLUMNS => "rows".to_owned(),
                g => {
                    let names: Vec<&str> = run
                        .columns
                        .iter()
                        .filter_map(|&c| s.columns().get(c).map(|c| c.name.as_str()))
                        .collect();
                    format!("group {g} [{}]", names.join(","))
                }
            };
            out.push(format!(
                "L{}: {what} files={} bytes={}",
                run.level, run.files, run.bytes
            ));
        }
        out
    }

    /// The rows with keys in `[from, to]` (`None`: unbounded), in key order or
    /// `reverse`, with the values of columns `projection`, at `ro`'s snapshot (or
    /// the state when the scan starts).
    ///
    /// # Errors
    /// `InvalidArgument` for a bound of the wrong type or a column out of range; the
    /// rows: `Corruption` for a stored part that does not decode, read errors.
    pub fn scan(
        &self,
        ro: &ReadOptions,
        (from, to): (Option<&Value>, Option<&Value>),
        projection: &[usize],
        reverse: bool,
    ) -> Result<Scan> {
        self.check_projection(projection)?;
        let encode = |v: Option<&Value>| v.map(|v| self.schema.encode_key(v)).transpose();
        let (from, to) = (encode(from)?, encode(to)?);
        let (start, end) = if reverse { (to, from) } else { (from, to) };
        let wants = Projection::new(&self.schema, &self.groups, projection);
        Ok(Scan::new(
            self.db.iter_partial_cf(ro, &self.cf, &wants)?,
            Arc::clone(&self.schema),
            self.cf.name(),
            (start, end),
            projection.to_vec(),
            reverse,
        )
        .profiled(Arc::clone(&self.profile)))
    }

    fn check_projection(&self, projection: &[usize]) -> Result<()> {
        match projection
            .iter()
            .find(|&&c| c >= self.schema.columns().len())
        {
            Some(c) => Err(Error::InvalidArgument(format!("no column number {c}"))),
            None => Ok(()),
        }
    }

    /// The cells of `values` (column number, value), each checked against the schema.
    fn cells<'v>(
        &self,
        values: impl Iterator<Item = (usize, &'v Value)>,
    ) -> Result<Vec<(u32, Value)>> {
        values
            .map(|(c, v)| {
                self.schema.check_value(c, v)?;
                let c = u32::try_from(c)
                    .map_err(|_| Error::InvalidArgument(format!("no column number {c}")))?;
                Ok((c, v.clone()))
            })
            .collect()
    }
}

/// The catalog records' and parts' codecs, for the fuzz targets (`internals`; not a
/// stable API). Each decodes strictly and re-encodes what it decoded.
#[cfg(feature = "internals")]
pub mod codecs {
    use super::layout::LayoutRecord;
    use super::part::Part;
    use super::schema::Schema;

    /// A schema record decoded and encoded again.
    ///
    /// # Errors
    /// What is wrong with the record.
    pub fn schema(record: &[u8]) -> Result<(Schema, Vec<u8>), String> {
        let schema = Schema::decode(record)?;
        let again = schema.encode();
        Ok((schema, again))
    }

    /// The schema record of `schema`.
    pub fn schema_record(schema: &Schema) -> Vec<u8> {
        schema.encode()
    }

    /// The layout record a table created with `layout` starts with.
    pub fn layout_record(layout: &super::Layout) -> Vec<u8> {
        LayoutRecord::first(layout).encode()
    }

    /// A layout record decoded and encoded again.
    ///
    /// # Errors
    /// What is wrong with the record.
    pub fn layout(record: &[u8]) -> Result<Vec<u8>, String> {
        LayoutRecord::decode(record).map(|r| r.encode())
    }

    /// A part of a table of `schema` decoded and encoded again.
    ///
    /// # Errors
    /// What is wrong with the part.
    pub fn part(schema: &Schema, bytes: &[u8]) -> Result<Vec<u8>, String> {
        Part::decode(schema, bytes).map(|p| p.encode(schema))
    }
}

#[cfg(test)]
mod groups_tests;
#[cfg(test)]
mod tests;
