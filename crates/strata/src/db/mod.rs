//! The database handle: open/recovery, the write path, the read path and background
//! work.
//!
//! Where a call goes:
//! - `put` / `delete` / `write` → `write` (group commit: WAL append, memtable insert).
//! - `get` → `read` (memtables, then L0 newest first, then one file per level).
//! - `iter` → `read` builds a merging iterator wrapped in a [`DbIterator`].
//! - `transaction` → `crate::txn`; its commit → `conflict` (the conflict check, run by
//!   the write leader through `write`).
//! - flushes and compactions → `background` threads; each job is a
//!   `compaction::Plan` that `jobs` runs through the one executor and installs
//!   through the `VersionSet`; `obsolete` deletes what no version references.
//! - `open` → [`DbBuilder::open`] (components) → `open` (MANIFEST replay, options check, WAL replay via `replay`,
//!   first MANIFEST, cleanup).
//!
//! Concurrency: [`Db`] is `Send + Sync`. Reads take no lock: they load the current
//! [`SuperVersion`] from an `ArcSwap` and the visible sequence number from an atomic.
//! Writers queue in the group-commit queue; the mutable state is one `DbState` behind
//! one mutex (see `state`).

mod background;
mod builder;
mod checkpoint;
mod conflict;
mod events;
#[cfg(feature = "metrics")]
mod export;
mod family;
pub(crate) mod family_kind;
mod family_view;
mod flush;
mod iter;
mod jobs;
mod no_space;
mod obsolete;
mod open;
mod property;
mod read;
mod read_only;
#[cfg(test)]
mod records_tests;
mod replay;
mod room;
pub(crate) mod scan_tee;
mod secondary;
mod state;
mod super_version;
pub(crate) mod tree_hooks;
mod write;
pub(crate) mod write_back;

pub use builder::DbBuilder;
pub use checkpoint::CheckpointInfo;
pub use family::CfHandle;
pub use iter::DbIterator;
pub use secondary::CatchUp;
// For `strata ldb verify`, which checks a database's tables without opening it.
#[cfg(feature = "internals")]
pub use open::check_tables_exist;
pub(crate) use read::PartialRead;
pub use super_version::SuperVersion;

use crate::cache::{BlockCache, TableCache};
use crate::compaction::{CompactionPolicy, PlacementPolicy};
use crate::env::{FileLock, FileSystem};
use crate::error::{Error, Result};
use crate::key::SequenceNumber;
use crate::listener::BackgroundErrorState;
use crate::memory_budget::MemoryBudget;
use crate::memtable::MemTable;
use crate::options::CfOptions;
use crate::options::{Options, ReadOptions, WriteOptions};
use crate::options_file;
use crate::snapshot::{Snapshot, SnapshotList};
use crate::stats::path::PathStats;
use crate::stats::{DbStats, LevelStats, Statistics};
use crate::txn::{Transaction, TransactionOptions};
use crate::version::VersionSet;
use crate::WriteBatch;
use arc_swap::ArcSwap;
use family::{Family, FamilyState};
use family_view::FamilyView;
use open::Access;
use parking_lot::{Condvar, Mutex};
use state::DbState;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::sync::Arc;
use std::thread::JoinHandle;
use write::{Force, WriteQueue};

/// Shared engine internals; [`Db`] is a handle to them.
pub(crate) struct DbInner {
    /// The database directory.
    pub dir: PathBuf,
    /// Validated options (immutable while open): the database-wide ones, and the
    /// default family's per-tree ones (each family's are in its [`family::Family`]).
    pub opts: Options,
    /// The options each column family but the default one was created or last opened
    /// with (before its kind configured it), as the `OPTIONS` file records them.
    /// Held while that file is rewritten for a family's creation or drop, so the file
    /// and the family set change in one order.
    pub family_options: Mutex<BTreeMap<String, CfOptions>>,
    /// The file system everything goes through.
    pub fs: Arc<dyn FileSystem>,
    /// Bytes the running compactions reserved on their output paths (`room`).
    pub reservations: room::Reservations,
    /// Memtables and scheduling state. Never held across I/O.
    pub state: Mutex<DbState>,
    /// Wakes background threads: work may be available or shutdown began.
    pub bg_cv: Condvar,
    /// Wakes waiters on background progress (stalled writers, `flush`, manual
    /// compaction, `wait_for_compactions`).
    pub done_cv: Condvar,
    /// The MANIFEST, the current version, file numbers and file references. Lock
    /// order: its MANIFEST writer before `state` (see `version::set`).
    pub versions: VersionSet,
    /// The default column family (also in `state.families`), reached without a
    /// lookup by the API that names no family.
    pub default: Arc<Family>,
    /// Each live family's id, name and merge operator: what `Db::write` checks a
    /// batch against without taking `state`. Stored under the `state` lock whenever a
    /// family is created or dropped.
    pub family_view: ArcSwap<FamilyView>,
    /// Live snapshots.
    pub snapshots: Arc<SnapshotList>,
    /// Open tables.
    pub table_cache: Arc<TableCache>,
    /// Decoded blocks (also referenced by `table_cache`), kept for usage figures.
    pub block_cache: Option<Arc<BlockCache>>,
    /// Exact counters.
    pub stats: Arc<Statistics>,
    /// What to compact next (an injected component; pure, see `compaction::policy`)
    /// in every family whose records call for no policy of their own (each family
    /// holds the one it uses: `Family::policy`).
    pub policy: Arc<dyn CompactionPolicy>,
    /// Which data path new tables go to (an injected component; pure, see
    /// `compaction::placement`).
    pub placement: Arc<dyn PlacementPolicy>,
    /// Which user iterators tee their deeper levels (a component; see
    /// `db::scan_tee`): by default `db::write_back::WriteBacks`.
    pub scan_tees: Arc<dyn scan_tee::ScanTees>,
    /// Gives each family its tree hooks (a component; see `db::tree_hooks`); `None`
    /// for a read-only open, which gives no family hooks.
    pub hooks: Option<Arc<dyn tree_hooks::TreeHooksFactory>>,
    /// Reads each family's records into its options and policy (a component; see
    /// `db::family_kind`); `None`: no family's records change either.
    pub kinds: Option<Arc<dyn family_kind::FamilyKinds>>,
    /// Table I/O counters of each data path, indexed by path id (recorded by the
    /// `env::CountingFs` wrapping `fs`).
    pub path_stats: Vec<Arc<PathStats>>,
    /// Group-commit queue and the WAL writer.
    pub writes: WriteQueue,
    /// Read-write, or read-only (§7.6: nothing is written, writes are refused).
    pub access: Access,
    /// The budget the memtables and the block cache are charged to, if any
    /// (`memory_budget`; the block cache is then a handle of the budget's).
    pub memory_budget: Option<MemoryBudget>,
    /// One resume attempt at a time (`no_space::resume`). Lock order: before `state`.
    pub resuming: Mutex<()>,
    /// Queues events for the registered listeners (`events`; no-ops without any).
    pub events: events::Events,
    /// Threads reading a `multi_get` batch's blocks together (`read::read_pool`),
    /// started on first use.
    pub read_pool: read::read_pool::ReadPool,
    /// The `db` label of its metrics (`DbBuilder::metrics_label`; default the path).
    pub metrics_label: Arc<str>,
    /// The database-wide `metrics` handles (`export`).
    #[cfg(feature = "metrics")]
    pub metrics: export::DbMetrics,
    /// What a secondary instance follows the writer with (§7.6.1); `None` otherwise.
    pub secondary: Option<secondary::Secondary>,
    /// Held while open (by a read-write open only).
    _lock: Option<Box<dyn FileLock>>,
}

impl DbInner {
    /// `Ok` unless the database was opened read-only: every path that writes (a
    /// write, flush, compaction or family change) asks first.
    ///
    /// # Errors
    /// `InvalidArgument` naming the read-only open and the path.
    pub fn check_writable(&self) -> Result<()> {
        match self.access {
            Access::ReadWrite => Ok(()),
            Access::ReadOnly => Err(read_only::refused(&self.dir)),
            Access::Secondary => Err(secondary::refused(&self.dir)),
        }
    }

    /// A new, empty memtable, charged to the memory budget if there is one.
    pub fn new_memtable(&self) -> Arc<MemTable> {
        Arc::new(MemTable::charged(self.memory_budget.as_ref()))
    }

    /// Sets `records` of `family` (`version::edit`, format version 4) in one MANIFEST
    /// edit: durable when this returns, and in the version every later read and pick
    /// of the family sees. The seam through which a component that owns a family
    /// keeps its state beside the family's files.
    ///
    /// Requires: no database lock held (it takes the MANIFEST writer and `state`).
    ///
    /// # Errors
    /// `InvalidArgument` for a read-only open, a dropped family, a key given twice or
    /// a value over `MAX_VALUE_LEN` (every later MANIFEST repeats it); `NoSpace` while
    /// the disk is full (nothing set); `Io` from the MANIFEST write (a failed sync
    /// poisons, as for any edit).
    #[cfg_attr(
        not(test),
        allow(
            dead_code,
            reason = "the family-records seam; only tests set records until a family's owner does"
        )
    )]
    pub fn set_records(&self, family: &Family, records: Vec<(u32, Vec<u8>)>) -> Result<()> {
        self.check_writable()?;
        check_records(&records)?;
        self.state.lock().check_writes()?;
        let edit = crate::version::VersionEdit {
            records,
            ..Default::default()
        };
        match jobs::install(self, family, edit, &[], |_| {})? {
            true => Ok(()),
            false => Err(Error::InvalidArgument(format!(
                "column family {} was dropped",
                family.versions.name()
            ))),
        }
    }

    /// Creates column family `name` with `options` and `records` (see
    /// [`Self::set_records`]), durably, in one MANIFEST edit: no reader ever sees the
    /// family without its records. Its options and policy are what the family-kinds
    /// component makes of the records (`db::family_kind`), as at every later open.
    ///
    /// Requires: no database lock held.
    ///
    /// # Errors
    /// `InvalidArgument` for a read-only open, an empty or taken name, invalid
    /// options, or records [`Self::set_records`] refuses; the kinds' errors for
    /// records they cannot read (nothing created); `NoSpace`; `Poisoned` if the
    /// MANIFEST write failed.
    pub fn create_family(
        &self,
        name: &str,
        options: &CfOptions,
        records: Vec<(u32, Vec<u8>)>,
    ) -> Result<Arc<Family>> {
        self.check_writable()?;
        if name.is_empty() {
            return Err(Error::InvalidArgument(
                "column family name must not be empty".into(),
            ));
        }
        check_records(&records)?;
        // Held to the end: the OPTIONS file and the family set change in one order.
        let mut recorded = self.family_options.lock();
        if name == crate::version::DEFAULT_FAMILY_NAME || recorded.contains_key(name) {
            return Err(Error::InvalidArgument(format!(
                "column family already exists: name=`{name}`"
            )));
        }
        let opts = self.opts.clone().with_cf_options(options);
        opts.validate()
            .map_err(|e| Error::InvalidArgument(format!("column family `{name}`: {e}")))?;
        // A value layout is the family's from its creation: its record is in the
        // family's first edit.
        let mut records = records;
        records.extend(crate::expiry::layout_records(&opts));
        // The kinds read the records before anything is written, from the version the
        // family will start with, so a family is never created that no open could
        // configure.
        let first = crate::version::VersionEdit {
            records: records.clone(),
            ..Default::default()
        };
        let first = crate::version::Version::new(opts.num_levels)
            .apply(&first)
            .map_err(|e| Error::Internal(format!("new column family `{name}`: {e}")))?;
        let (opts, policy) =
            open::configure_family(self.kinds.as_ref(), name, &first, opts, &self.policy)?;
        let log_number = {
            let st = self.state.lock();
            st.check_writes()?;
            st.current_wal()
        };
        // Every write acknowledged before the family exists is durable before it does:
        // a crash never keeps the family and loses an earlier write.
        write::sync_wal(self)?;
        // The family's options are recorded before it exists, so no open ever finds the
        // family without them; if the creation then fails, the section names no family
        // and the next open ignores it (and the next rewrite drops it).
        let mut next = recorded.clone();
        next.insert(name.to_string(), options.clone());
        options_file::store(self.fs.as_ref(), &self.dir, &self.opts, &next)?;
        let versions = match self
            .versions
            .create_family(name, opts.num_levels, log_number, records)
        {
            Ok(v) => v,
            Err(e @ Error::InvalidArgument(_)) => return Err(e),
            Err(e) => return Err(fail(self, e)),
        };
        *recorded = next;
        drop(recorded);
        let hooks = match &self.hooks {
            Some(factory) => {
                let family = (versions.id(), self.versions.last_sequence());
                factory.hooks_for(&opts, &self.fs, self.versions.dirs(), family)?
            }
            None => None,
        };
        let family = Arc::new(Family::new(
            versions,
            (opts, policy),
            self.new_memtable(),
            hooks,
            &self.metrics_label,
        ));
        let state = FamilyState::new(Arc::clone(&family), log_number, 0);
        let mut st = self.state.lock();
        st.families.insert(family.id(), state);
        families_changed(self, &mut st);
        drop(st);
        self.events.family_created(&family);
        Ok(family)
    }
}

/// `Ok` if `records` may be set in one edit: no key twice (a MANIFEST holding it
/// would not decode), no value over `MAX_VALUE_LEN` (every later MANIFEST repeats it).
///
/// # Errors
/// `InvalidArgument` naming the record.
fn check_records(records: &[(u32, Vec<u8>)]) -> Result<()> {
    let mut keys: Vec<u32> = records.iter().map(|(k, _)| *k).collect();
    keys.sort_unstable();
    if let Some(w) = keys.windows(2).find(|w| w.first() == w.get(1)) {
        return Err(Error::InvalidArgument(format!(
            "family record {:?} set twice in one edit",
            w.first()
        )));
    }
    if let Some((k, v)) = records
        .iter()
        .find(|(_, v)| v.len() > crate::limits::MAX_VALUE_LEN)
    {
        return Err(Error::InvalidArgument(format!(
            "family record {k} holds {} bytes, over the limit of {}",
            v.len(),
            crate::limits::MAX_VALUE_LEN
        )));
    }
    Ok(())
}

/// An open database. `Send + Sync`: share it across threads by reference or `Arc`.
///
/// Dropping the handle without [`Db::close`] stops background work too; writes not
/// acknowledged with `sync` may be lost only on a machine crash, not a process exit
/// (every write reaches the OS before it is acknowledged).
pub struct Db {
    inner: Arc<DbInner>,
    threads: Vec<JoinHandle<()>>,
}

impl Db {
    /// The shared state, for the crate's modules built on the database (`table`).
    pub(crate) fn inner(&self) -> &DbInner {
        &self.inner
    }

    /// Opens (or creates, with `create_if_missing`) the database in `path` with the
    /// default components ([`DbBuilder`] injects others), replaying the MANIFEST and
    /// any write-ahead logs, and checking `options` against the database and its
    /// `OPTIONS` file (the compatibility check of docs/ARCHITECTURE.md §15.3).
    ///
    /// # Errors
    /// `InvalidArgument` for bad options, options the existing database cannot be
    /// opened with (naming the option, e.g. too few `num_levels`), a direct-I/O option
    /// (`use_direct_reads`, `use_direct_io_for_flush_and_compaction`) the file system
    /// of `path` refuses (naming the option and the path), or a
    /// missing/existing database against `create_if_missing`/`error_if_exists`;
    /// `Locked` if another handle has it open; `Corruption` naming file and offset (or
    /// line, for `OPTIONS`) for damaged metadata or logs; `Io`.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        DbBuilder::new().open(path, options)
    }

    /// Opens the database in `path` read-only (RocksDB's `OpenForReadOnly`): it sees
    /// the database as of the call (the MANIFEST's version and the WALs' writes,
    /// replayed into memory), takes no `LOCK` and writes nothing, so it works on a
    /// read-only medium, while a writer holds the database, and in any number of
    /// processes at once. Every column family is opened (with the per-tree fields of
    /// `options`; [`DbBuilder::open_cf_read_only`] gives families their own). A scan
    /// writes nothing back and nothing runs in the background (docs/ARCHITECTURE.md
    /// §7.6).
    ///
    /// Writes, flushes, compactions and family changes return `InvalidArgument`
    /// naming the read-only open; [`Db::wait_for_compactions`] and [`Db::close`] return
    /// at once.
    ///
    /// # Errors
    /// `InvalidArgument` if `path` holds no database (one is never created) or for
    /// options it cannot be opened with; `Corruption` naming file and offset for
    /// damaged metadata or logs, or for a table the MANIFEST names that is missing
    /// while the database is not changing; `Io`.
    pub fn open_read_only(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        DbBuilder::new().open_read_only(path, options)
    }

    /// Opens a secondary instance of the database in `path` (RocksDB's
    /// `OpenAsSecondary`): a read-only follower of the handle that writes it, in this
    /// or another process, which sees the database as of the open and then as of each
    /// [`Db::try_catch_up`]. It takes no `LOCK` of the database and writes nothing in
    /// its directories: its own files (a `LOCK`, and a hard link to each table it
    /// reads, so that the writer's compactions never delete a table under it) live in
    /// `secondary_dir`, which it creates, and which no other secondary may share. Where
    /// tables cannot be linked into `secondary_dir` (another file system), it keeps
    /// them open instead, as a read-only open does (the property
    /// `strata.secondary-pinning` says which). Every column family is opened
    /// ([`DbBuilder::open_cf_secondary`] gives families their own options); families
    /// the writer creates or drops appear or go at a catch-up (docs/ARCHITECTURE.md
    /// §7.6.1).
    ///
    /// Writes, flushes, compactions and family changes return `InvalidArgument`
    /// naming the secondary open; [`Db::wait_for_compactions`] and [`Db::close`]
    /// return at once.
    ///
    /// # Errors
    /// `InvalidArgument` if `path` holds no database, if `secondary_dir` is the
    /// database's directory, holds a database, or is in use by another secondary, or
    /// for options the database cannot be opened with; `Corruption` naming file and
    /// offset for damaged metadata or logs; `Io`.
    pub fn open_secondary(
        path: impl AsRef<Path>,
        secondary_dir: impl AsRef<Path>,
        options: Options,
    ) -> Result<Db> {
        DbBuilder::new().open_secondary(path, secondary_dir, options)
    }

    /// Brings a secondary instance up to the writer (RocksDB's `TryCatchUpWithPrimary`):
    /// reads the MANIFEST's records appended since the last catch-up (or the new
    /// MANIFEST the writer rolled over to) and installs the version they describe,
    /// then reads the WALs' new records into memtables. Afterwards every read answers
    /// as the writer did at the returned [`CatchUp::sequence`] (also
    /// [`Db::latest_sequence`]). A record the writer is still appending is left for the
    /// next catch-up. Iterators opened before keep reading the state they were opened
    /// on; a snapshot taken before a catch-up that installed newer tables is refused
    /// by reads after it (`InvalidArgument`: the writer's compactions may have dropped
    /// what it would see).
    ///
    /// # Errors
    /// `InvalidArgument` for a handle that is not a secondary; `Corruption` naming
    /// file and offset for a damaged record (a whole record failing its checksum, not
    /// one being written); `Io` for a table or WAL the writer deleted while the
    /// catch-up read, after the catch-up was tried again from the newer state for as
    /// long as the writer kept moving (30 s). A failed catch-up installs nothing: the
    /// handle keeps answering as of the last one.
    pub fn try_catch_up(&self) -> Result<CatchUp> {
        secondary::catch_up(&self.inner)
    }

    /// A builder that injects components (file system, shared block cache) before
    /// opening.
    pub fn builder() -> DbBuilder {
        DbBuilder::new()
    }

    /// Sets `key` to `value`.
    ///
    /// # Errors
    /// - `InvalidArgument` if `key` is longer than [`crate::MAX_KEY_LEN`] (8 MiB) or
    ///   `value` longer than [`crate::MAX_VALUE_LEN`] (128 MiB), e.g.
    ///   ``value too large: len=`N` max=`M` record=`0` ``. Nothing is written.
    /// - `Poisoned` after a background failure, or if this write's WAL append or fsync
    ///   failed (the database is poisoned from then on and the error carries the cause).
    /// - `NoSpace` ([`crate::ErrorKind::NoSpace`]) if the disk or quota is full: this
    ///   write's WAL append met it (the partial record was cut back off), or an
    ///   earlier write, flush or compaction did. Nothing was written; the database
    ///   refuses writes until space is free, then resumes by itself (or on
    ///   [`Db::resume`]). Reads keep working.
    /// - A retryable error ([`Error::is_retryable`]) if the write had to switch to a
    ///   new memtable and its WAL could not be created (too many open files), or if it
    ///   stalled behind flushes and compactions and one of them failed retryably
    ///   meanwhile. Nothing was written; the database stays healthy and the caller may
    ///   retry.
    pub fn put(&self, wo: &WriteOptions, key: &[u8], value: &[u8]) -> Result<()> {
        let mut b =
            WriteBatch::with_capacity(key.len().saturating_add(value.len()).saturating_add(21));
        b.put(key, value);
        self.write(wo, b)
    }

    /// Sets `key` to `value` until `ttl` from now: reads stop seeing it then, and
    /// compactions remove it ([`WriteBatch::put_with_ttl`]). Needs a database (a
    /// default family) created with [`Options::expiring_values`].
    ///
    /// # Errors
    /// `InvalidArgument` if the default family does not store deadlines; otherwise
    /// as [`Db::put`].
    pub fn put_with_ttl(
        &self,
        wo: &WriteOptions,
        key: &[u8],
        value: &[u8],
        ttl: std::time::Duration,
    ) -> Result<()> {
        let mut b =
            WriteBatch::with_capacity(key.len().saturating_add(value.len()).saturating_add(21));
        b.put_with_ttl(key, value, ttl);
        self.write(wo, b)
    }

    /// Deletes `key` (a no-op if absent).
    ///
    /// # Errors
    /// As [`Db::put`] (`InvalidArgument` for a key over [`crate::MAX_KEY_LEN`]).
    pub fn delete(&self, wo: &WriteOptions, key: &[u8]) -> Result<()> {
        let mut b = WriteBatch::with_capacity(key.len() + 6);
        b.delete(key);
        self.write(wo, b)
    }

    /// Deletes every key in `[start, end)` (RocksDB's `DeleteRange`): one range
    /// tombstone, whatever the number of keys. Reads stop seeing them at once;
    /// compactions drop them (see [`WriteBatch::delete_range`]).
    ///
    /// # Errors
    /// `InvalidArgument` if `start > end` (`start == end` deletes nothing); otherwise
    /// as [`Db::put`].
    pub fn delete_range(&self, wo: &WriteOptions, start: &[u8], end: &[u8]) -> Result<()> {
        let mut b =
            WriteBatch::with_capacity(start.len().saturating_add(end.len()).saturating_add(21));
        b.delete_range(start, end);
        self.write(wo, b)
    }

    /// Records a merge `operand` for `key`: the configured
    /// [`Options::merge_operator`] combines it with the key's older value when the
    /// key is read (see [`crate::merge`]).
    ///
    /// # Errors
    /// `InvalidArgument` if no merge operator is configured; otherwise as
    /// [`Db::put`].
    pub fn merge(&self, wo: &WriteOptions, key: &[u8], operand: &[u8]) -> Result<()> {
        let mut b =
            WriteBatch::with_capacity(key.len().saturating_add(operand.len()).saturating_add(21));
        b.merge(key, operand);
        self.write(wo, b)
    }

    /// Applies every update of `batch` atomically: readers see all or none of it.
    ///
    /// # Errors
    /// - `InvalidArgument` if an update of `batch` broke a size limit (a key over
    ///   [`crate::MAX_KEY_LEN`], a value over [`crate::MAX_VALUE_LEN`], or the batch
    ///   over [`crate::MAX_BATCH_LEN`]; see [`WriteBatch::check_limits`]). The check
    ///   runs before the batch is queued: nothing of it reaches the WAL or the
    ///   memtable, and [`Db::latest_sequence`] does not move.
    /// - `InvalidArgument` if `batch` holds a merge and no
    ///   [`Options::merge_operator`] is configured (nothing is written).
    /// - Otherwise as [`Db::put`].
    pub fn write(&self, wo: &WriteOptions, batch: WriteBatch) -> Result<()> {
        // Refused here, before group commit: a batch over a limit could be written but
        // not flushed into a readable table, or not replayed (see `crate::limits`).
        batch.check_limits()?;
        let batch = self.prepare(batch)?;
        write::write(&self.inner, wo, Some(batch), None)
    }

    /// Refuses a batch naming a family this database does not have (never created,
    /// or dropped), holding a merge for a family without a merge operator, or holding
    /// an operand its family's operator refuses ([`FamilyView::check`]); returns it
    /// with its deadlines stored where its families keep them ([`FamilyView::stamp`]).
    fn prepare(&self, batch: WriteBatch) -> Result<WriteBatch> {
        if !batch.has_families()
            && !batch.has_merge()
            && !self.inner.default.opts.expiring_values
            && batch.deadlines().is_empty()
        {
            return Ok(batch);
        }
        let view = self.inner.family_view.load();
        view.check(&batch)?;
        view.stamp(batch)
    }

    /// Begins an optimistic transaction: it reads a snapshot taken now (and its own
    /// writes), buffers its writes, and commits them only if no key it wrote or read
    /// with [`Transaction::get_for_update`] was written by anyone after the snapshot
    /// (snapshot isolation; docs/ARCHITECTURE.md §16).
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// use strata::{Db, ErrorKind, Options, ReadOptions, TransactionOptions, WriteOptions};
    /// let db = Db::open(dir.path(), Options::default())?;
    /// loop {
    ///     let mut txn = db.transaction(&TransactionOptions::default());
    ///     let n = txn.get_for_update(&ReadOptions::default(), b"counter")?
    ///         .map_or(0, |v| u64::from_le_bytes(v.try_into().unwrap_or_default()));
    ///     txn.put(b"counter", &(n + 1).to_le_bytes())?;
    ///     match txn.commit(&WriteOptions::default()) {
    ///         Err(e) if e.kind() == ErrorKind::Conflict => continue, // run it again
    ///         r => break r?,
    ///     }
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn transaction(&self, options: &TransactionOptions) -> Transaction<'_> {
        Transaction::begin(self, options)
    }

    /// Commits `batch` iff no key of `keys` (`(family id, key)`) has a version newer
    /// than `snapshot` in its family,
    /// validated atomically with the write (`conflict`). For [`Transaction::commit`].
    pub(crate) fn write_unless_changed<'k>(
        &self,
        wo: &WriteOptions,
        batch: WriteBatch,
        snapshot: SequenceNumber,
        keys: impl IntoIterator<Item = (u32, &'k [u8])>,
    ) -> Result<()> {
        let batch = self.prepare(batch)?;
        conflict::write_unless_changed(&self.inner, wo, batch, snapshot, keys)
    }

    /// The value of `key`, as of `ro.snapshot` (or now).
    ///
    /// # Errors
    /// `Corruption` if a block on the read path fails its checksum; `Io`.
    pub fn get(&self, ro: &ReadOptions, key: &[u8]) -> Result<Option<Vec<u8>>> {
        read::get(&self.inner, &self.inner.default, ro, key)
    }

    /// An iterator over the keys within `ro`'s bounds as of `ro.snapshot` (or now).
    /// It pins the memtables and files it reads until dropped.
    ///
    /// # Errors
    /// `Io` or `Corruption` opening a table.
    pub fn iter(&self, ro: &ReadOptions) -> Result<DbIterator> {
        read::iter(&self.inner, &self.inner.default, ro)
    }

    /// Pins the current state: reads with this snapshot see exactly the writes
    /// acknowledged before this call.
    pub fn snapshot(&self) -> Snapshot {
        let versions = &self.inner.versions;
        self.inner.snapshots.acquire(|| versions.last_sequence())
    }

    /// The sequence number of the latest acknowledged write.
    pub fn latest_sequence(&self) -> SequenceNumber {
        self.inner.versions.last_sequence()
    }

    /// The default family's tree hooks (tests of a technique's hooks).
    #[cfg(test)]
    pub(crate) fn default_hooks(&self) -> Option<Arc<dyn tree_hooks::TreeHooks>> {
        self.inner.default.hooks.clone()
    }

    /// Switches the active memtable and waits until every memtable holding data is
    /// flushed to L0.
    ///
    /// # Errors
    /// `Poisoned` if a flush fails fatally. A retryable failure (a table file, or the
    /// next WAL, could not be created or opened, see [`Error::is_retryable`]) is
    /// returned as is: the
    /// database stays healthy, the flush is retried in the background with backoff,
    /// and the caller may call `flush` again.
    pub fn flush(&self) -> Result<()> {
        write::write(
            &self.inner,
            &WriteOptions::default(),
            None,
            Some(Force::All),
        )?;
        background::wait_for_flushes(&self.inner)
    }

    /// Tries at once to leave the no-space state (RocksDB's `DB::Resume`): writes a
    /// probe file in every directory the database writes and, if the disk took it,
    /// accepts writes again (flushes and compactions that failed run again in the
    /// background). The database also does this by itself, 10 ms after the failure
    /// and then with a backoff up to 200 ms (docs/ARCHITECTURE.md §7.8). `Ok` for
    /// a database that is not out of space.
    ///
    /// # Errors
    /// `NoSpace` if the disk is still full (naming the directory); `Poisoned` for a
    /// poisoned database, which only a reopen repairs.
    pub fn resume(&self) -> Result<()> {
        no_space::resume(&self.inner)
    }

    /// Makes a checkpoint in `dir` (RocksDB's `Checkpoint::CreateCheckpoint`): a
    /// consistent copy of the database as of the call, every column family included,
    /// that [`Db::open`] opens like any database. Tables are hard links (no bytes
    /// copied; copied where linking fails, e.g. on another file system), with a fresh
    /// MANIFEST holding only the live version, `CURRENT`, `OPTIONS`, and the WALs'
    /// unflushed writes copied up to the call. With `db_paths`, every table lands in
    /// `dir` and the checkpoint's `OPTIONS` names no data paths. Writers pause only
    /// for the cut's metadata steps: WAL fsyncs and the checkpoint's MANIFEST
    /// (docs/ARCHITECTURE.md §7.7). Flush first ([`Db::flush`]) to copy no WAL bytes.
    ///
    /// # Errors
    /// `InvalidArgument` if `dir` exists and is not an empty directory (a checkpoint a
    /// crash interrupted leaves one without `CURRENT`, which is no database), or for a
    /// read-only handle;
    /// `Poisoned` for a poisoned database or if the WAL fsync failed; `Io`.
    pub fn checkpoint(&self, dir: impl AsRef<Path>) -> Result<CheckpointInfo> {
        checkpoint::create(&self.inner, dir.as_ref())
    }

    /// Compacts every file overlapping the user-key range `[begin, end]` (unbounded
    /// where `None`) down to the last level that holds data, after flushing.
    ///
    /// # Errors
    /// `Poisoned`, `Io` or `Corruption` from the compactions run; `NoSpace` naming the
    /// bytes if a compaction's output would not fit on its disk (nothing of it ran;
    /// docs/ARCHITECTURE.md §7.8).
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        self.flush()?;
        background::compact_range(&self.inner, &self.inner.default, begin, end)
    }

    /// Waits until no flush or compaction is pending or running.
    ///
    /// # Errors
    /// The background error, if one occurred; a retryable failure of a flush or
    /// compaction during the wait, as for [`Db::flush`].
    pub fn wait_for_compactions(&self) -> Result<()> {
        // A read-only handle runs nothing; its replayed memtables are never flushed.
        if !self.inner.access.writes() {
            return Ok(());
        }
        background::wait_idle(&self.inner)
    }

    /// Opens (or creates) the database in `path` as [`Db::open`] does, giving the
    /// column families listed in `families` their options. Every family of the
    /// database is opened; one not listed runs with the options its `OPTIONS`
    /// section records (docs/ARCHITECTURE.md §15.2; a family written before those
    /// sections existed, with the per-tree fields of `options`). A listed family's
    /// options replace the recorded ones, except that a family listed without a
    /// merge operator keeps its recorded one; a compaction filter factory is not
    /// recorded, so list each family that has one.
    ///
    /// # Errors
    /// As [`Db::open`]; `InvalidArgument` for a listed family the database does not
    /// have, or whose options are invalid (naming it).
    pub fn open_cf(
        path: impl AsRef<Path>,
        options: Options,
        families: &[(&str, CfOptions)],
    ) -> Result<Db> {
        DbBuilder::new().open_cf(path, options, families)
    }

    /// The names of the column families of the database in `path` (the default one
    /// first), read from its MANIFEST without opening it (RocksDB's
    /// `ListColumnFamilies`).
    ///
    /// # Errors
    /// `InvalidArgument` if there is no database in `path`; `Corruption` naming the
    /// file and offset for a damaged `CURRENT` or MANIFEST; `Io`.
    pub fn list_cfs(path: impl AsRef<Path>) -> Result<Vec<String>> {
        let fs = crate::env::PosixFs;
        let dir = path.as_ref();
        let recovered =
            crate::version::manifest::recover(&fs, dir, &|_| crate::options::MAX_LEVELS)?;
        let manifest = recovered.ok_or_else(|| {
            Error::InvalidArgument(format!("no database: path=`{}`", dir.display()))
        })?;
        Ok(manifest.families.into_iter().map(|f| f.name).collect())
    }

    /// Creates column family `name` with `options` (RocksDB's `CreateColumnFamily`):
    /// a tree of its own in this database, sharing its WAL, caches and threads. The
    /// creation is durable when this returns (one MANIFEST record).
    ///
    /// # Errors
    /// `InvalidArgument` if a family of that name exists, the name is empty, or
    /// `options` are invalid; `Poisoned` if the MANIFEST write failed.
    pub fn create_cf(&self, name: &str, options: CfOptions) -> Result<CfHandle> {
        let family = self.inner.create_family(name, &options, Vec::new())?;
        Ok(CfHandle { family })
    }

    /// Drops column family `cf` (RocksDB's `DropColumnFamily`), durably (one MANIFEST
    /// record): writes naming it are refused from now on, its unflushed writes are
    /// discarded, and its files are deleted once no handle, iterator or job holds
    /// them (see [`CfHandle`]).
    ///
    /// # Errors
    /// `InvalidArgument` for the default family or a family already dropped;
    /// `Poisoned` if the MANIFEST write failed.
    pub fn drop_cf(&self, cf: &CfHandle) -> Result<()> {
        let inner = &self.inner;
        inner.check_writable()?;
        inner.state.lock().check_writes()?;
        // As in `create_cf`: the drop is durable only with every earlier write.
        write::sync_wal(inner)?;
        let mut recorded = inner.family_options.lock();
        match inner.versions.drop_family(&cf.family.versions) {
            Ok(()) => {}
            Err(e @ Error::InvalidArgument(_)) => return Err(e),
            Err(e) => return Err(fail(inner, e)),
        }
        recorded.remove(cf.family.versions.name());
        // The family is gone whatever happens to this rewrite: a section left behind
        // names no family, so the next open ignores it and its rewrite drops it.
        let _ = options_file::store(inner.fs.as_ref(), &inner.dir, &inner.opts, &recorded);
        drop(recorded);
        inner.events.family_dropped(&cf.family);
        let mut st = inner.state.lock();
        let state = st.families.remove(&cf.id());
        families_changed(inner, &mut st);
        drop(st);
        drop(state);
        flush::release_wals(inner);
        inner.done_cv.notify_all();
        inner.bg_cv.notify_all();
        obsolete::delete_obsolete(inner);
        Ok(())
    }

    /// The live column family named `name`, if any (`"default"` is the default one).
    pub fn cf(&self, name: &str) -> Option<CfHandle> {
        let st = self.inner.state.lock();
        st.families
            .values()
            .find(|f| f.family.versions.name() == name)
            .map(|f| CfHandle {
                family: Arc::clone(&f.family),
            })
    }

    /// The default column family: what the methods without `_cf` use.
    pub fn default_cf(&self) -> CfHandle {
        CfHandle {
            family: Arc::clone(&self.inner.default),
        }
    }

    /// The names of the live column families, the default one first.
    pub fn cf_names(&self) -> Vec<String> {
        self.inner
            .versions
            .families()
            .iter()
            .map(|f| f.name().to_owned())
            .collect()
    }

    /// [`Db::put`] into column family `cf`.
    ///
    /// # Errors
    /// As [`Db::write`] (`InvalidArgument` if `cf` was dropped).
    pub fn put_cf(&self, wo: &WriteOptions, cf: &CfHandle, key: &[u8], value: &[u8]) -> Result<()> {
        let mut b =
            WriteBatch::with_capacity(key.len().saturating_add(value.len()).saturating_add(26));
        b.put_cf(cf, key, value);
        self.write(wo, b)
    }

    /// [`Db::put_with_ttl`] into column family `cf` (created with
    /// [`Options::expiring_values`]).
    ///
    /// # Errors
    /// As [`Db::put_with_ttl`].
    pub fn put_with_ttl_cf(
        &self,
        wo: &WriteOptions,
        cf: &CfHandle,
        key: &[u8],
        value: &[u8],
        ttl: std::time::Duration,
    ) -> Result<()> {
        let mut b =
            WriteBatch::with_capacity(key.len().saturating_add(value.len()).saturating_add(26));
        b.put_with_ttl_cf(cf, key, value, ttl);
        self.write(wo, b)
    }

    /// [`Db::delete`] in column family `cf`.
    ///
    /// # Errors
    /// As [`Db::put_cf`].
    pub fn delete_cf(&self, wo: &WriteOptions, cf: &CfHandle, key: &[u8]) -> Result<()> {
        let mut b = WriteBatch::with_capacity(key.len() + 11);
        b.delete_cf(cf, key);
        self.write(wo, b)
    }

    /// [`Db::delete_range`] in column family `cf`.
    ///
    /// # Errors
    /// As [`Db::delete_range`] and [`Db::put_cf`].
    pub fn delete_range_cf(
        &self,
        wo: &WriteOptions,
        cf: &CfHandle,
        start: &[u8],
        end: &[u8],
    ) -> Result<()> {
        let mut b =
            WriteBatch::with_capacity(start.len().saturating_add(end.len()).saturating_add(26));
        b.delete_range_cf(cf, start, end);
        self.write(wo, b)
    }

    /// [`Db::merge`] in column family `cf`, combined by its merge operator.
    ///
    /// # Errors
    /// `InvalidArgument` if `cf` has no merge operator; otherwise as [`Db::put_cf`].
    pub fn merge_cf(
        &self,
        wo: &WriteOptions,
        cf: &CfHandle,
        key: &[u8],
        operand: &[u8],
    ) -> Result<()> {
        let mut b =
            WriteBatch::with_capacity(key.len().saturating_add(operand.len()).saturating_add(26));
        b.merge_cf(cf, key, operand);
        self.write(wo, b)
    }

    /// The values of `keys` (RocksDB's `MultiGet`), in the order given, all as of one
    /// sequence number (`ro.snapshot`, or now): each answer is what [`Db::get`] gives
    /// at that sequence, and a failure concerns its key alone. The batch shares one
    /// read view, is sorted once, and walks the tables level by level for all its
    /// keys (docs/ARCHITECTURE.md §5.2).
    pub fn multi_get<K: AsRef<[u8]>>(
        &self,
        ro: &ReadOptions,
        keys: &[K],
    ) -> Vec<Result<Option<Vec<u8>>>> {
        self.multi_get_family(ro, &self.inner.default, keys)
    }

    /// [`Db::multi_get`] in column family `cf`.
    pub fn multi_get_cf<K: AsRef<[u8]>>(
        &self,
        ro: &ReadOptions,
        cf: &CfHandle,
        keys: &[K],
    ) -> Vec<Result<Option<Vec<u8>>>> {
        self.multi_get_family(ro, &cf.family, keys)
    }

    fn multi_get_family<K: AsRef<[u8]>>(
        &self,
        ro: &ReadOptions,
        family: &Family,
        keys: &[K],
    ) -> Vec<Result<Option<Vec<u8>>>> {
        let keys: Vec<&[u8]> = keys.iter().map(AsRef::as_ref).collect();
        read::multi_get(&self.inner, family, ro, &keys)
    }

    /// [`Db::get`] in column family `cf`.
    ///
    /// # Errors
    /// As [`Db::get`].
    pub fn get_cf(&self, ro: &ReadOptions, cf: &CfHandle, key: &[u8]) -> Result<Option<Vec<u8>>> {
        read::get(&self.inner, &cf.family, ro, key)
    }

    /// [`Db::iter`] over column family `cf`.
    ///
    /// # Errors
    /// As [`Db::iter`].
    pub fn iter_cf(&self, ro: &ReadOptions, cf: &CfHandle) -> Result<DbIterator> {
        read::iter(&self.inner, &cf.family, ro)
    }

    /// [`Db::get_cf`] of what `partial` wants of the value (ARCHITECTURE §7.1.3).
    ///
    /// # Errors
    /// As [`Db::get_cf`].
    pub(crate) fn get_partial_cf(
        &self,
        ro: &ReadOptions,
        cf: &CfHandle,
        key: &[u8],
        partial: &mut dyn PartialRead,
    ) -> Result<Option<Vec<u8>>> {
        read::get_partial(&self.inner, &cf.family, ro, key, Some(partial))
    }

    /// [`Db::iter_cf`] over what `partial` wants of the values (ARCHITECTURE §7.1.3).
    ///
    /// # Errors
    /// As [`Db::iter_cf`].
    pub(crate) fn iter_partial_cf(
        &self,
        ro: &ReadOptions,
        cf: &CfHandle,
        partial: &dyn PartialRead,
    ) -> Result<DbIterator> {
        read::iter_partial(&self.inner, &cf.family, ro, Some(partial))
    }

    /// [`Db::flush`] of column family `cf` only: switches its memtable if it holds
    /// data and waits until every memtable waiting for a flush is flushed.
    ///
    /// # Errors
    /// As [`Db::flush`].
    pub fn flush_cf(&self, cf: &CfHandle) -> Result<()> {
        let force = Some(Force::Family(cf.id()));
        write::write(&self.inner, &WriteOptions::default(), None, force)?;
        background::wait_for_flushes(&self.inner)
    }

    /// [`Db::compact_range`] of column family `cf` (after flushing it).
    ///
    /// # Errors
    /// As [`Db::compact_range`].
    pub fn compact_range_cf(
        &self,
        cf: &CfHandle,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        self.flush_cf(cf)?;
        background::compact_range(&self.inner, &cf.family, begin, end)
    }

    /// [`Db::stats`] with column family `cf`'s per-level table (the counters are the
    /// database's).
    pub fn cf_stats(&self, cf: &CfHandle) -> DbStats {
        self.stats_of(&cf.family)
    }

    /// Exact statistics (database-wide counters) and the default family's per-level
    /// table.
    pub fn stats(&self) -> DbStats {
        self.stats_of(&self.inner.default)
    }

    fn stats_of(&self, family: &Family) -> DbStats {
        stats_of(&self.inner, family)
    }

    /// The value of the named property of the default column family (RocksDB's
    /// `GetProperty`, with its names: `rocksdb.estimate-num-keys`, or the same with
    /// `strata.`): a decimal number, or text for `stats`. docs/ARCHITECTURE.md §10
    /// lists them: `num-files-at-level<N>`, `estimate-num-keys`,
    /// `estimate-pending-compaction-bytes`, `cur-size-all-mem-tables`,
    /// `num-immutable-mem-table`, `block-cache-usage`, `live-sst-files-size`, `stats`.
    ///
    /// # Errors
    /// `InvalidArgument` for an unknown name, listing the known ones.
    pub fn property(&self, name: &str) -> Result<String> {
        property::property(&self.inner, &self.inner.default, name)
    }

    /// [`Db::property`] of column family `cf`.
    ///
    /// # Errors
    /// As [`Db::property`].
    pub fn property_cf(&self, cf: &CfHandle, name: &str) -> Result<String> {
        property::property(&self.inner, &cf.family, name)
    }

    /// Checks every block checksum of every live table; returns the blocks checked.
    ///
    /// # Errors
    /// `Corruption` naming the first bad file and offset.
    pub fn verify_checksums(&self) -> Result<u64> {
        let mut blocks = 0;
        for family in self.inner.versions.families() {
            for f in family.current().physical_tables() {
                blocks += self.inner.table_cache.get(f)?.verify_checksums()?;
            }
        }
        Ok(blocks)
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.inner.dir
    }

    /// Stops background work, syncs the WAL, deletes files no version references any
    /// more (those still held by live iterators stay until the next open), and releases
    /// the directory lock.
    ///
    /// # Errors
    /// The background error, if one occurred, or the final WAL sync's error.
    pub fn close(mut self) -> Result<()> {
        self.shutdown()
    }

    /// Stops everything, then delivers every event queued meanwhile (the last ones
    /// come from the final deletion of obsolete files) and stops the listeners'
    /// dispatcher.
    fn shutdown(&mut self) -> Result<()> {
        let result = self.stop();
        self.inner.events.close();
        result
    }

    fn stop(&mut self) -> Result<()> {
        {
            let mut st = self.inner.state.lock();
            st.shutting_down = true;
        }
        self.inner.bg_cv.notify_all();
        self.inner.done_cv.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        // Work a tee component does off the background threads (queued, or on a
        // reader's thread) ends before close returns: queued work is dropped, running
        // work abandons at its claim (none claims after `shutting_down`) or installs.
        // It holds the database while it runs, so a reopen right after close would
        // find it locked.
        self.inner.scan_tees.close();
        let mut hooks_result = Ok(());
        {
            let mut st = self.inner.state.lock();
            while st.compactions_running > 0 || self.inner.scan_tees.pending() > 0 {
                self.inner
                    .done_cv
                    .wait_for(&mut st, std::time::Duration::from_millis(10));
            }
        }
        // Every job is done: the last figures, for a reader of the recorder after
        // close.
        #[cfg(feature = "metrics")]
        export::publish(&self.inner);
        let families: Vec<Arc<Family>> = {
            let st = self.inner.state.lock();
            st.families
                .values()
                .map(|f| Arc::clone(&f.family))
                .collect()
        };
        for f in families {
            if let Some(h) = &f.hooks {
                if let (Err(e), Ok(())) = (h.close(), &hooks_result) {
                    hooks_result = Err(e);
                }
            }
        }
        if !self.inner.access.writes() {
            // A secondary removes the links nothing reads any more.
            secondary::release(&self.inner);
            return hooks_result;
        }
        write::sync_wal(&self.inner)?;
        obsolete::delete_obsolete(&self.inner);
        let st = self.inner.state.lock();
        st.check_bg_error()?;
        hooks_result
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            let _ = self.shutdown();
        }
    }
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Db({})", self.inner.dir.display())
    }
}

/// [`Db::stats`] with `family`'s per-level table.
fn stats_of(inner: &DbInner, family: &Family) -> DbStats {
    let version = family.versions.current();
    let scores = family.policy.scores(&version, &family.opts);
    let st = inner.state.lock();
    let level_stats = st.families.get(&family.id()).map(|f| &f.level_stats);
    let levels = (0..version.num_levels())
        .map(|l| {
            let mut s = level_stats
                .and_then(|ls| ls.get(l).cloned())
                .unwrap_or_default();
            s.files = version.level_files(l);
            s.virtual_files = version
                .files(l)
                .iter()
                .filter(|f| f.kind != crate::version::FileKind::Real)
                .count();
            s.size = version.level_bytes(l);
            s.score = scores.get(l).copied().unwrap_or(0.0);
            s
        })
        .collect::<Vec<LevelStats>>();
    DbStats {
        levels,
        counters: inner.stats.snapshot(),
        block_cache_usage: inner.block_cache.as_ref().map_or(0, |c| c.usage() as u64),
        paths: inner.path_stats.iter().map(|p| p.snapshot()).collect(),
        space: crate::version::virtual_table::table_space(&version),
        tree_hooks: family
            .hooks
            .as_ref()
            .map(|h| h.figures())
            .unwrap_or_default(),
    }
}

/// After a family was added to or removed from `st.families`: rebuilds the views
/// derived from it (the writers' memtable list, the lock-free family list). Requires:
/// `st` is the `state` lock.
fn families_changed(inner: &DbInner, st: &mut DbState) {
    st.refresh_mems();
    inner.family_view.store(Arc::new(st.family_view()));
}

/// What a failure of a write, flush, compaction or MANIFEST edit does to the database:
/// a full disk that left nothing in doubt moves it to the no-space state and is
/// returned as `NoSpace` (`no_space::enter`); another retryable error is returned as
/// is (the database stays healthy); anything else poisons it.
pub(crate) fn fail(inner: &DbInner, e: Error) -> Error {
    if e.is_no_space() {
        no_space::enter(inner, e)
    } else if e.is_retryable() {
        inner
            .events
            .background_error(&e, BackgroundErrorState::Retrying);
        e
    } else {
        poison(inner, e)
    }
}

/// Converts a background error into the poisoned form every caller sees.
pub(crate) fn poison(inner: &DbInner, e: Error) -> Error {
    let mut st = inner.state.lock();
    let first = st.bg_error.is_none();
    let err = st.set_bg_error(e);
    drop(st);
    if first {
        inner
            .events
            .background_error(&err, BackgroundErrorState::Poisoned);
    }
    inner.done_cv.notify_all();
    err
}
