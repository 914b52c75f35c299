//! [`DbBuilder`]: opens a database with injected components.
//!
//! Role: components are objects, not settings (STYLE rule 9): the file system every
//! file goes through, optionally a block cache or a memory budget shared with other
//! databases, the compaction policy, the placement policy and event listeners. They are
//! given here, never in [`Options`], and are not persisted in the `OPTIONS` file.
//! [`Db::open`] is the builder with every component defaulted.
//!
//! ```
//! use std::sync::Arc;
//! use strata::env::PosixFs;
//! use strata::{BlockCache, Db, Options};
//! let dir = tempfile::tempdir().expect("tempdir");
//! let cache = Arc::new(BlockCache::new(64 << 20));
//! let builder = Db::builder()
//!     .file_system(Arc::new(PosixFs))
//!     .block_cache(Arc::clone(&cache));
//! let a = builder.open(dir.path().join("a"), Options::default())?;
//! let b = builder.open(dir.path().join("b"), Options::default())?; // shares `cache`
//! # a.close()?; b.close()?;
//! # Ok::<(), strata::Error>(())
//! ```

use super::family_kind::FamilyKinds;
use super::open::Access;
use super::scan_tee::{NoTees, ScanTees};
use super::tree_hooks::TreeHooksFactory;
use super::write_back::WriteBacks;
use super::{background, open, read_only, secondary, Db};
use crate::cache::BlockCache;
use crate::compaction::{CompactionPolicy, Delayed, PlacementPolicy};
use crate::env::{FileSystem, PosixFs};
use crate::error::Result;
use crate::listener::EventListener;
use crate::memory_budget::MemoryBudget;
use crate::options::{CfOptions, Options};
use crate::table::TableKinds;
use crate::tiering::{Tiered, TieringHooks};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// The components one open uses (internal form of a [`DbBuilder`]).
#[derive(Clone)]
pub(crate) struct Components {
    /// The file system everything goes through.
    pub fs: Arc<dyn FileSystem>,
    /// A cache shared with other databases; `None`: the open creates one of
    /// `Options::block_cache_capacity` bytes (or none for 0).
    pub block_cache: Option<Arc<BlockCache>>,
    /// What to compact next.
    pub policy: Arc<dyn CompactionPolicy>,
    /// Which data path new tables go to.
    pub placement: Arc<dyn PlacementPolicy>,
    /// Which user iterators tee their deeper levels.
    pub scan_tees: Arc<dyn ScanTees>,
    /// A memory budget shared with other databases; `None`: the open makes one of
    /// `Options::memory_budget` bytes, or none for 0.
    pub memory_budget: Option<MemoryBudget>,
    /// Gives each family its tree hooks (`db::tree_hooks`).
    pub hooks: Option<Arc<dyn TreeHooksFactory>>,
    /// Reads each family's records into its options and policy (`db::family_kind`).
    pub kinds: Option<Arc<dyn FamilyKinds>>,
    /// Told about events, in this order (`crate::listener`).
    pub listeners: Vec<Arc<dyn EventListener>>,
    /// The `db` label of the database's metrics; `None`: its path.
    pub metrics_label: Option<String>,
}

/// Opens databases with injected components. Cheap to clone; one builder may open
/// several databases (or reopen one), each getting the same components.
#[derive(Clone, Default)]
pub struct DbBuilder {
    fs: Option<Arc<dyn FileSystem>>,
    block_cache: Option<Arc<BlockCache>>,
    policy: Option<Arc<dyn CompactionPolicy>>,
    placement: Option<Arc<dyn PlacementPolicy>>,
    scan_tees: Option<Arc<dyn ScanTees>>,
    memory_budget: Option<MemoryBudget>,
    hooks: Option<Arc<dyn TreeHooksFactory>>,
    kinds: Option<Arc<dyn FamilyKinds>>,
    listeners: Vec<Arc<dyn EventListener>>,
    metrics_label: Option<String>,
}

impl fmt::Debug for DbBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DbBuilder")
            .field("custom_file_system", &self.fs.is_some())
            .field("block_cache", &self.block_cache)
            .field("compaction_policy", &self.policy)
            .field("placement_policy", &self.placement)
            .field("scan_tees", &self.scan_tees)
            .field("memory_budget", &self.memory_budget)
            .field("family_kinds", &self.kinds)
            .field("listeners", &self.listeners.len())
            .field("metrics_label", &self.metrics_label)
            .finish()
    }
}

impl DbBuilder {
    /// A builder with default components: [`PosixFs`], a block cache of
    /// `Options::block_cache_capacity` bytes created per open, and leveled compaction.
    pub fn new() -> DbBuilder {
        DbBuilder::default()
    }

    /// Every file of the database goes through `fs` (e.g. the fault-injecting `FaultFs` of the
    /// `test-util` feature, in tests). Default: [`PosixFs`].
    #[must_use]
    pub fn file_system(mut self, fs: Arc<dyn FileSystem>) -> DbBuilder {
        self.fs = Some(fs);
        self
    }

    /// Caches data blocks in `cache`, which may be shared with other databases: each
    /// open takes its own key space in it, so databases never see each other's blocks
    /// but compete for one capacity.
    /// `Options::block_cache_capacity` is then ignored. Default: each open creates a
    /// cache of `block_cache_capacity` bytes.
    #[must_use]
    pub fn block_cache(mut self, cache: Arc<BlockCache>) -> DbBuilder {
        self.block_cache = Some(cache);
        self
    }

    /// Charges the memtables of every column family and the block cache to `budget`,
    /// which may be shared with other databases (RocksDB's `WriteBufferManager`
    /// charged to its block cache): the database reads through a handle of the
    /// budget's cache, flushes its largest memtable when memtables pass half the
    /// budget, and slows and then stops writes as they near all of it
    /// (docs/ARCHITECTURE.md §4.4). `Options::memory_budget` and
    /// `Options::block_cache_capacity` are then ignored; giving a
    /// [`DbBuilder::block_cache`] as well is `InvalidArgument` at open.
    #[must_use]
    pub fn memory_budget(mut self, budget: &MemoryBudget) -> DbBuilder {
        self.memory_budget = Some(budget.clone());
        self
    }

    /// Asks `policy` what to compact (see `compaction::policy` for the contract every
    /// plan it returns must keep). Default: `compaction::Delayed`, which is
    /// `compaction::Leveled` unless `Options::delayed_compaction` is on.
    ///
    /// **Experimental**, and only with the `internals` feature: the seam research
    /// techniques plug into, whose argument types (versions, plans) are internal.
    #[cfg(any(test, feature = "internals"))]
    #[must_use]
    pub fn compaction_policy(mut self, policy: Arc<dyn CompactionPolicy>) -> DbBuilder {
        self.policy = Some(policy);
        self
    }

    /// Asks `tees` which user iterators show the merged entries of their deeper
    /// levels to a tee (see `db::scan_tee` for the contract). Default:
    /// `db::write_back::WriteBacks`, the scans of families with
    /// `Options::query_compaction` on. Crate tests only: the trait's argument holds
    /// the database's internals.
    #[cfg(test)]
    #[must_use]
    pub(crate) fn scan_tees(mut self, tees: Arc<dyn ScanTees>) -> DbBuilder {
        self.scan_tees = Some(tees);
        self
    }

    /// Gives each family the tree hooks `hooks` makes (tests of the seam;
    /// `db::tree_hooks`).
    #[cfg(test)]
    #[must_use]
    pub(crate) fn tree_hooks(mut self, hooks: Arc<dyn TreeHooksFactory>) -> DbBuilder {
        self.hooks = Some(hooks);
        self
    }

    /// Reads each family's records into its options and policy with `kinds` (tests
    /// of the seam; `db::family_kind`).
    #[cfg(test)]
    #[must_use]
    pub(crate) fn family_kinds(mut self, kinds: Arc<dyn FamilyKinds>) -> DbBuilder {
        self.kinds = Some(kinds);
        self
    }

    /// Tells `listener` about the database's events (flushes, compactions, table
    /// files, memtable switches, write stalls, background errors, column families;
    /// see [`EventListener`]). Any number may be registered: each event goes to them
    /// in registration order, on a dispatcher thread of the database's own, never on
    /// the thread that caused it. A read-only open calls none.
    #[must_use]
    pub fn listener(mut self, listener: Arc<dyn EventListener>) -> DbBuilder {
        self.listeners.push(listener);
        self
    }

    /// The value of the `db` label on every metric the database publishes (cargo
    /// feature `metrics`; docs/ARCHITECTURE.md §10.2), so that several databases in
    /// one process are told apart. Default: the database's path as given to `open`
    /// (with ` (read-only)` or ` (secondary)` appended for those opens, so that a
    /// reader does not publish over its writer). Databases opened by one builder with
    /// a label share it: give each its own.
    #[must_use]
    pub fn metrics_label(mut self, label: impl Into<String>) -> DbBuilder {
        self.metrics_label = Some(label.into());
        self
    }

    /// Places new tables in the data paths (`Options::db_paths`) as `placement` says
    /// (see `compaction::placement` for its contract). Default:
    /// `tiering::Tiered`: a tiered family's levels on its two tiers (`Options::tiering`),
    /// any other family's by `compaction::ByLevel`, RocksDB's rule.
    ///
    /// **Experimental**, and only with the `internals` feature, like
    /// [`DbBuilder::compaction_policy`].
    #[cfg(any(test, feature = "internals"))]
    #[must_use]
    pub fn placement_policy(mut self, placement: Arc<dyn PlacementPolicy>) -> DbBuilder {
        self.placement = Some(placement);
        self
    }

    /// Validates `options` and opens (or creates) the database in `path`; see
    /// [`Db::open`].
    ///
    /// # Errors
    /// As [`Db::open`].
    pub fn open(&self, path: impl AsRef<Path>, options: Options) -> Result<Db> {
        self.open_cf(path, options, &[])
    }

    /// Validates `options` and opens (or creates) the database in `path` with the
    /// listed column families' options; see [`Db::open_cf`].
    ///
    /// # Errors
    /// As [`Db::open_cf`].
    pub fn open_cf(
        &self,
        path: impl AsRef<Path>,
        options: Options,
        families: &[(&str, CfOptions)],
    ) -> Result<Db> {
        options.validate()?;
        let scan_tees = self
            .scan_tees
            .clone()
            .unwrap_or_else(|| Arc::new(WriteBacks::default()));
        let components = self.components(scan_tees);
        let inner = Arc::new(open::open(
            path.as_ref(),
            options,
            components,
            families,
            Access::ReadWrite,
            None,
        )?);
        let threads = background::start(&inner)?;
        Ok(Db { inner, threads })
    }

    /// Opens the database in `path` read-only; see [`Db::open_read_only`].
    ///
    /// # Errors
    /// As [`Db::open_read_only`].
    pub fn open_read_only(&self, path: impl AsRef<Path>, options: Options) -> Result<Db> {
        self.open_cf_read_only(path, options, &[])
    }

    /// [`DbBuilder::open_read_only`] giving the listed column families their options
    /// (as [`Db::open_cf`]).
    ///
    /// # Errors
    /// As [`Db::open_read_only`]; as [`Db::open_cf`] for the families.
    pub fn open_cf_read_only(
        &self,
        path: impl AsRef<Path>,
        options: Options,
        families: &[(&str, CfOptions)],
    ) -> Result<Db> {
        options.validate()?;
        let mut options = options;
        options.create_if_missing = false;
        options.error_if_exists = false;
        // A scan of a read-only handle writes nothing back.
        let components = self.components(Arc::new(NoTees));
        let dir = path.as_ref();
        let inner = read_only::until_stable(components.fs.as_ref(), dir, || {
            let components = components.clone();
            open::open(
                dir,
                options.clone(),
                components,
                families,
                Access::ReadOnly,
                None,
            )
        })?;
        // No background thread: nothing is flushed or compacted.
        Ok(Db {
            inner: Arc::new(inner),
            threads: Vec::new(),
        })
    }

    /// Opens a secondary instance of the database in `path`, keeping its own files in
    /// `secondary_dir`; see [`Db::open_secondary`].
    ///
    /// # Errors
    /// As [`Db::open_secondary`].
    pub fn open_secondary(
        &self,
        path: impl AsRef<Path>,
        secondary_dir: impl AsRef<Path>,
        options: Options,
    ) -> Result<Db> {
        self.open_cf_secondary(path, secondary_dir, options, &[])
    }

    /// [`DbBuilder::open_secondary`] giving the listed column families their options
    /// (as [`Db::open_cf`]; families created later take the options the `OPTIONS` file
    /// records for them).
    ///
    /// # Errors
    /// As [`Db::open_secondary`]; as [`Db::open_cf`] for the families.
    pub fn open_cf_secondary(
        &self,
        path: impl AsRef<Path>,
        secondary_dir: impl AsRef<Path>,
        options: Options,
        families: &[(&str, CfOptions)],
    ) -> Result<Db> {
        options.validate()?;
        let mut options = options;
        options.create_if_missing = false;
        options.error_if_exists = false;
        let components = self.components(Arc::new(NoTees));
        let dir = path.as_ref();
        let prepared = secondary::prepare(components.fs.as_ref(), dir, secondary_dir.as_ref())?;
        let inner = read_only::until_stable(components.fs.as_ref(), dir, || {
            let components = components.clone();
            let access = Access::Secondary;
            open::open(
                dir,
                options.clone(),
                components,
                families,
                access,
                Some(&prepared),
            )
        })?;
        // No background thread: the writer flushes and compacts.
        Ok(Db {
            inner: Arc::new(inner),
            threads: Vec::new(),
        })
    }

    fn components(&self, scan_tees: Arc<dyn ScanTees>) -> Components {
        Components {
            fs: self.fs.clone().unwrap_or_else(|| Arc::new(PosixFs)),
            block_cache: self.block_cache.clone(),
            policy: self.policy.clone().unwrap_or_else(|| Arc::new(Delayed)),
            placement: self.placement.clone().unwrap_or_else(|| Arc::new(Tiered)),
            scan_tees,
            memory_budget: self.memory_budget.clone(),
            hooks: Some(
                self.hooks
                    .clone()
                    .unwrap_or_else(|| Arc::new(TieringHooks) as Arc<dyn TreeHooksFactory>),
            ),
            kinds: Some(
                self.kinds
                    .clone()
                    .unwrap_or_else(|| Arc::new(TableKinds) as Arc<dyn FamilyKinds>),
            ),
            listeners: self.listeners.clone(),
            metrics_label: self.metrics_label.clone(),
        }
    }
}
