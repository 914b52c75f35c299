//! Compaction: choosing what to merge (policy) and merging it (mechanism).
//!
//! Role: the database's background scheduler asks the [`picker`] for a
//! [`CompactionPlan`] over the current immutable `Version`, records it in [`Busy`], and
//! hands it to the compaction job, which merges the inputs, cuts outputs with an output
//! partitioner, writes and fsyncs the new SSTables, and returns a `VersionEdit` for the
//! version set to log in the MANIFEST and install.
//!
//! Policies are pure functions from `&Version` (plus options) to plain-data plans, so
//! they are tested with hand-built versions and can be simulated with no I/O; the job
//! is the one mechanism that executes plans.
//!
//! Modules:
//! - [`picker`]: leveled scores, targets and file selection (this module's policies).
//! - `job` (planned): executes a plan: merging iterator, version GC against live
//!   snapshots, tombstone drop at the bottom, emits the `VersionEdit`.
//! - `partitioner` (planned): where outputs are cut: fixed size, or aligned to the
//!   grandparents' boundaries (`CompactionPlan::grandparents`).

pub mod picker;

pub use picker::{
    level_targets, pending_compaction_bytes, pick, pick_manual, scores, Busy, CompactionPlan,
    CompactionReason,
};
