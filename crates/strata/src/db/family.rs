//! Column families of an open database: what each one reads and writes with, and the
//! handle users hold.
//!
//! Each family is a tree of its own (memtables, levels, compaction options, level
//! statistics); all share the WAL, the block and table caches, the background threads
//! and the write controller (docs/ARCHITECTURE.md §17). What is fixed while the family
//! lives is a [`Family`]: its part of the version set (`version::FamilyVersion`: name,
//! id, current version, log number), its options, and its read view. What changes
//! under the database's `state` lock (memtables, running compactions, figures) is its
//! [`FamilyState`] in `DbState::families`.
//!
//! A [`CfHandle`] holds the `Arc<Family>`: reads through it load the family's read
//! view without any lookup. A dropped family's handle still reads what the family held
//! when it was dropped (its last read view pins its memtables and files, as an
//! iterator does); writes naming it are refused. Its files are deleted when the last
//! handle, iterator or job holding them is gone.

use super::state::MemWithLog;
use super::tree_hooks::TreeHooks;
use super::SuperVersion;
use crate::compaction::picker::Busy;
use crate::compaction::CompactionPolicy;
use crate::memtable::MemTable;
use crate::options::Options;
use crate::stats::LevelStats;
use crate::version::{FamilyVersion, Version};
use arc_swap::ArcSwap;
use std::sync::Arc;

/// One column family of an open database. See the module docs.
pub(crate) struct Family {
    /// Its part of the version set (name, id, current version, log number).
    pub versions: Arc<FamilyVersion>,
    /// The database's options with this family's per-tree fields
    /// ([`crate::CfOptions`]); the default family's are the database's own.
    pub opts: Options,
    /// The current read view; swapped (under the `state` lock) whenever the family's
    /// memtables or version change.
    pub super_version: ArcSwap<SuperVersion>,
    /// The family's tree hooks, if its options ask for any (`db::tree_hooks`).
    pub hooks: Option<Arc<dyn TreeHooks>>,
    /// What plans the family's compactions: the database's policy, or the one its
    /// records call for (`db::family_kind`).
    pub policy: Arc<dyn CompactionPolicy>,
    /// The family's `metrics` handles (`db::export`), shared with the writers' family
    /// list.
    #[cfg(feature = "metrics")]
    pub metrics: Arc<super::export::FamilyMetrics>,
}

impl Family {
    /// A family whose read view is an empty `mem` over its current version, with
    /// `hooks`, planned by `policy`, its metrics labelled `db` = `db_label`.
    #[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
    pub fn new(
        versions: Arc<FamilyVersion>,
        (opts, policy): (Options, Arc<dyn CompactionPolicy>),
        mem: Arc<MemTable>,
        hooks: Option<Arc<dyn TreeHooks>>,
        db_label: &str,
    ) -> Family {
        let version = versions.current();
        #[cfg(feature = "metrics")]
        let metrics = Arc::new(super::export::FamilyMetrics::new(
            db_label,
            versions.name(),
            opts.num_levels,
        ));
        Family {
            versions,
            // The one place every family's options pass (open and `create_cf`): the
            // layout's filter joins the application's here, so every job, manual
            // and periodic rewrites included, sees it as the family's filter.
            opts: crate::expiry::with_expiry_filter(opts),
            super_version: ArcSwap::from_pointee(SuperVersion {
                mem,
                imm: Vec::new(),
                version,
            }),
            hooks,
            policy,
            #[cfg(feature = "metrics")]
            metrics,
        }
    }

    /// The family's id (0: default).
    pub fn id(&self) -> u32 {
        self.versions.id()
    }
}

/// The mutable state of one family, in `DbState::families`, under the `state` lock.
pub(crate) struct FamilyState {
    /// The family this state belongs to.
    pub family: Arc<Family>,
    /// The memtable taking writes. Written by the group-commit leader (switch).
    pub mem: MemWithLog,
    /// Immutable memtables, oldest first. Pushed by the leader, popped by the flush
    /// when its version is installed.
    pub imm: Vec<MemWithLog>,
    /// Files and output ranges of running compactions of this family.
    pub busy: Busy,
    /// Compaction figures per level (read/write bytes, count); files and size are
    /// filled when reported.
    pub level_stats: Vec<LevelStats>,
    /// Estimated compaction debt of the family's current version (bytes), refreshed at
    /// each install.
    pub pending_compaction_bytes: u64,
}

impl FamilyState {
    /// The state of `family`, whose read view holds `mem` (needing WALs from
    /// `log_number` on) and no immutable memtable.
    pub fn new(family: Arc<Family>, log_number: u64, pending_compaction_bytes: u64) -> Self {
        let mem = Arc::clone(&family.super_version.load().mem);
        let levels = family.opts.num_levels;
        FamilyState {
            family,
            mem: MemWithLog { mem, log_number },
            imm: Vec::new(),
            busy: Busy::default(),
            level_stats: vec![LevelStats::default(); levels],
            pending_compaction_bytes,
        }
    }

    /// True iff the family holds no unflushed write.
    pub fn is_empty(&self) -> bool {
        self.imm.is_empty() && self.mem.mem.is_empty()
    }

    /// Publishes a new read view: the memtables over `version`. Requires: the `state`
    /// lock held (this is part of it), so views are published in the order the state
    /// changed, and `version` at least as new as every version published before.
    pub fn install_super_version(&self, version: &Arc<Version>) {
        let sv = SuperVersion {
            mem: Arc::clone(&self.mem.mem),
            imm: self.imm.iter().rev().map(|m| Arc::clone(&m.mem)).collect(),
            version: Arc::clone(version),
        };
        self.family.super_version.store(Arc::new(sv));
    }
}

/// A column family of an open database (RocksDB's `ColumnFamilyHandle`), from
/// [`crate::Db::create_cf`] or [`crate::Db::cf`]. Cheap to clone; `Send + Sync`.
///
/// Use it with the `_cf` methods of [`crate::Db`] and [`crate::WriteBatch`]. It is
/// tied to the database that gave it: a write naming it on another database is
/// refused unless that database has a family of the same id. After
/// [`crate::Db::drop_cf`], reads through it still see what the family held when it
/// was dropped, and writes are refused (`InvalidArgument`); its files are deleted
/// once every handle, iterator and job holding them is gone.
#[derive(Clone)]
pub struct CfHandle {
    pub(crate) family: Arc<Family>,
}

impl CfHandle {
    /// The family's name.
    pub fn name(&self) -> &str {
        self.family.versions.name()
    }

    /// The family's id: 0 for the default family; ids are never reused.
    pub fn id(&self) -> u32 {
        self.family.id()
    }

    /// True once the family was dropped.
    pub fn is_dropped(&self) -> bool {
        self.family.versions.is_dropped()
    }
}

impl std::fmt::Debug for CfHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CfHandle")
            .field("name", &self.name())
            .field("id", &self.id())
            .finish()
    }
}
