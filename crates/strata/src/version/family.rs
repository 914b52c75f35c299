//! One column family's part of the version set: its name, its current version and
//! the oldest WAL its memtables may still need.
//!
//! Role: the version set keeps one [`FamilyVersion`] per live column family
//! (`version::set`), and the database's family handle (`db::family`) holds the same
//! `Arc`, so reads reach the family's current version without a lookup. A family
//! dropped by `Db::drop_cf` is marked [`FamilyVersion::is_dropped`] and leaves the
//! version set; the `Arc` (and with it the family's last version, which pins its
//! files) lives on for as long as a handle, iterator or job holds it.
//!
//! Concurrency: `Send + Sync`. The current version and the log number are atomics
//! written only by the version set under its MANIFEST writer lock (so in MANIFEST
//! order); readers load them without locking.

use super::version::Version;
use arc_swap::ArcSwap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Id of the default column family, which every database has and which cannot be
/// dropped.
pub(crate) const DEFAULT_FAMILY_ID: u32 = 0;

/// Name of the default column family (RocksDB's `kDefaultColumnFamilyName`).
pub const DEFAULT_FAMILY_NAME: &str = "default";

/// See the module docs.
#[derive(Debug)]
pub(crate) struct FamilyVersion {
    id: u32,
    name: String,
    current: ArcSwap<Version>,
    /// WALs numbered below this hold nothing of this family that is not in a table
    /// (the MANIFEST's value for the family).
    log_number: AtomicU64,
    dropped: AtomicBool,
}

impl FamilyVersion {
    /// A family at `version`, needing WALs from `log_number` on.
    pub fn new(id: u32, name: String, version: Version, log_number: u64) -> FamilyVersion {
        FamilyVersion {
            id,
            name,
            current: ArcSwap::from_pointee(version),
            log_number: AtomicU64::new(log_number),
            dropped: AtomicBool::new(false),
        }
    }

    /// The family's id (0: the default family), recorded in WAL records and edits.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The family's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The family's current version. Never waits on the MANIFEST writer.
    pub fn current(&self) -> Arc<Version> {
        self.current.load_full()
    }

    /// The oldest WAL this family may still need, as the MANIFEST records it.
    pub fn log_number(&self) -> u64 {
        self.log_number.load(Ordering::Acquire)
    }

    /// True once the drop of this family is durable.
    pub fn is_dropped(&self) -> bool {
        self.dropped.load(Ordering::Acquire)
    }

    /// Requires: the version set's MANIFEST writer lock held, the edit making
    /// `version` current durable.
    pub(super) fn install(&self, version: Arc<Version>, log_number: Option<u64>) {
        if let Some(l) = log_number {
            self.log_number.store(l, Ordering::Release);
        }
        self.current.store(version);
    }

    /// Requires: as [`Self::install`], for the drop edit.
    pub(super) fn mark_dropped(&self) {
        self.dropped.store(true, Ordering::Release);
    }
}
