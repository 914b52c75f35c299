//! Compaction: picker policies (pure), snapshot-aware GC, output partitioners, and the
//! one executor that writes tables.

pub mod aligned;
pub mod gc;
pub mod job;
pub mod partitioner;
pub mod picker;
