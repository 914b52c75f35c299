//! The read view: active memtable + immutable memtables + the current version.
//!
//! A [`SuperVersion`] is immutable and shared by `Arc`; the database swaps in a new one
//! (through `arc_swap`) whenever a memtable is switched, a flush or compaction installs a
//! version. Readers load the pointer without taking any lock, and everything they read
//! stays alive (memtables by `Arc`, table files because the [`Version`] pins them: see
//! `db::files` for how obsolete files are found) until they drop it.

use crate::memtable::MemTable;
use crate::version::Version;
use std::sync::Arc;

/// One consistent set of read sources.
pub struct SuperVersion {
    /// The memtable taking writes.
    pub mem: Arc<MemTable>,
    /// Memtables waiting to be flushed, newest first.
    pub imm: Vec<Arc<MemTable>>,
    /// The table files.
    pub version: Arc<Version>,
}

impl SuperVersion {
    /// Bytes of the active and immutable memtables (`cur-size-all-mem-tables`).
    pub fn memtable_bytes(&self) -> u64 {
        std::iter::once(&self.mem)
            .chain(&self.imm)
            .map(|m| m.approximate_memory_usage() as u64)
            .sum()
    }
}
