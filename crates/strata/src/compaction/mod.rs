//! Compaction: choosing what to merge (policy) and merging it (mechanism).
//!
//! Role: the database's background scheduler asks the [`picker`] for a
//! [`CompactionPlan`] over the current immutable `Version`, records it in [`Busy`], and
//! hands it to the executor (`db::background::run_compaction`), which merges the inputs
//! through [`gc`] (version GC against live snapshots, tombstone drop at the bottom),
//! cuts outputs with a [`partitioner`], writes and fsyncs the new SSTables with
//! [`job`], and logs a `VersionEdit` in the MANIFEST before installing it.
//!
//! Policies are pure functions from `&Version` (plus options) to plain-data plans, so
//! they are tested with hand-built versions and can be simulated with no I/O; the job
//! is the one mechanism that executes plans (flushes use it too).
//!
//! Modules:
//! - [`picker`]: leveled scores, targets and file selection.
//! - [`gc`]: which versions of a key survive (snapshot stripes).
//! - [`partitioner`]: where outputs are cut (fixed size, or [`aligned`]).
//! - [`aligned`]: aligned compaction (Kim et al. Algorithm 1) and the false-overlap
//!   statistic.
//! - [`job`]: drains a merged input into new tables.

pub mod aligned;
pub mod gc;
pub mod job;
pub mod partitioner;
pub mod picker;

pub use picker::{
    level_targets, pending_compaction_bytes, pick, pick_manual, scores, Busy, CompactionPlan,
    CompactionReason,
};
