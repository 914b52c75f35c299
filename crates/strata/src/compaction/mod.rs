//! Compaction: choosing what to merge (policy) and merging it (mechanism).
//!
//! Role: every job that writes or moves tables is a [`Plan`]. Policies build plans:
//! the [`picker`] over the current immutable `Version` for automatic and manual
//! compactions, `Plan::flush` for flushes. The database's scheduler records a
//! compaction plan in [`picker::Busy`] and hands it to the `executor`, the one mechanism
//! that runs plans: it merges the inputs through [`gc`] (version GC against live
//! snapshots, tombstone drop at the bottom), routes each user key to an output stream,
//! cuts each stream's outputs with a [`partitioner`], writes and fsyncs the new
//! SSTables, and returns the `VersionEdit` that the version set logs and installs.
//!
//! Policies are pure functions from `&Version` (plus options) to plain-data plans, so
//! they are tested with hand-built versions and can be simulated with no I/O. A
//! technique adds a policy, an output partitioner or a [`plan::Router`], and never a
//! branch in the executor.
//!
//! Modules:
//! - [`plan`]: the plan: action, input runs, output streams, router.
//! - [`policy`]: the [`CompactionPolicy`] seam the scheduler asks for work; the
//!   [`policy::Leveled`] policy is the [`picker`]. The database's default is
//!   [`Delayed`], which is `Leveled` unless delayed compaction is on.
//! - [`requests`]: the tables reads ask to have compacted ([`Requests`]), sampled for
//!   the policy.
//! - [`picker`]: leveled scores, targets and file selection.
//! - `executor`: runs a plan and returns its edit.
//! - `virtualize`: the executor's [`Action::Virtualize`]: inputs replaced by virtual
//!   tables over them, cut like the output stream, with no data I/O.
//! - [`gc`]: which versions of a key survive (snapshot stripes).
//! - [`covered`]: whole files no reader can see (under newer range tombstones), dropped
//!   by metadata before any other pick.
//! - [`partitioner`]: where outputs are cut (fixed size, or [`aligned`]).
//! - [`placement`]: the [`PlacementPolicy`] seam that picks each output's data path;
//!   the default [`ByLevel`] is RocksDB's rule.
//! - [`aligned`]: aligned compaction (Kim et al. Algorithm 1) and the false-overlap
//!   statistic.
//! - [`delayed`]: delayed compaction (Pei et al.): rewrites of few tables deferred as
//!   virtual tables, the [`Delayed`] policy.

pub mod aligned;
pub mod covered;
pub mod delayed;
pub(crate) mod executor;
pub mod gc;
pub(crate) mod merge_chain;
pub mod partitioner;
pub mod picker;
pub mod placement;
pub mod plan;
pub mod policy;
pub(crate) mod query_driven;
pub mod requests;
pub(crate) mod rewrite;
pub(crate) mod virtualize;

pub use covered::{Coverage, Tombstones};
pub use delayed::Delayed;
pub use placement::{ByLevel, PlacementPolicy};
pub use plan::{Action, Plan, Reason};
pub use policy::CompactionPolicy;
pub use requests::Requests;
