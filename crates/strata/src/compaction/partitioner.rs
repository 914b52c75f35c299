//! Output partitioners: where a compaction (or flush) ends one output file and starts
//! the next.
//!
//! Seam: the compaction executor asks [`OutputPartitioner::should_cut`] before the
//! first entry of each new user key (never between versions of one key, so files of a
//! sorted level never share a user key). Policies are chosen per plan by
//! [`for_plan`]; the aligned policy of Kim et al. lives in `compaction::aligned`.

use super::picker::CompactionPlan;
use crate::options::{Options, OutputPartitioning};

/// Decides output file boundaries.
pub trait OutputPartitioner: Send {
    /// True iff the current output file (holding `current_size` bytes) should be
    /// finished before `next_user_key` is added. Called for every new user key, in
    /// order; `current_size` is 0 when no file is open, and the answer must then be
    /// false.
    fn should_cut(&mut self, next_user_key: &[u8], current_size: u64) -> bool;
}

/// Cuts when the file reaches a fixed size.
#[derive(Debug)]
pub struct FixedSize {
    /// Target file size, bytes.
    pub target: u64,
}

impl OutputPartitioner for FixedSize {
    fn should_cut(&mut self, _next_user_key: &[u8], current_size: u64) -> bool {
        current_size >= self.target
    }
}

/// The partitioner a compaction plan uses under `opts`.
pub fn for_plan(opts: &Options, plan: &CompactionPlan) -> Box<dyn OutputPartitioner> {
    match opts.output_partitioning {
        OutputPartitioning::Fixed => Box::new(FixedSize {
            target: opts.target_file_size_base,
        }),
        OutputPartitioning::Aligned { variance } => Box::new(super::aligned::Aligned::new(
            &plan.grandparents,
            opts.target_file_size_base,
            variance,
        )),
    }
}
