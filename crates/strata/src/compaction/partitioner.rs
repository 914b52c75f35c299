//! Output partitioners: where a compaction (or flush) ends one output file and starts
//! the next.
//!
//! Seam: the compaction executor asks [`OutputPartitioner::should_cut`] before the
//! first entry of each new user key of a stream (never between versions of one key, so
//! files of a sorted level never share a user key). A plan names each stream's policy
//! as plain data ([`Partitioning`], chosen by [`for_compaction`] from the options) and
//! the executor instantiates it with [`for_stream`]; the aligned policy of Kim et al.
//! lives in `compaction::aligned`.

use super::plan::{OutputStream, Partitioning};
use crate::options::{Options, OutputPartitioning};
use crate::version::FileMetaData;
use std::sync::Arc;

/// Decides output file boundaries.
pub trait OutputPartitioner: Send {
    /// True iff the current output file (holding `current_size` bytes) should be
    /// finished before `next_user_key` is added. Called for every new user key, in
    /// order; `current_size` is 0 when no file is open, and the answer must then be
    /// false.
    fn should_cut(&mut self, next_user_key: &[u8], current_size: u64) -> bool;

    /// True iff this partitioner may end a file where its range tombstones end
    /// ([`OutputPartitioner::cut_at_tombstones_end`]); the writer looks for such ends
    /// only then. Default: false.
    fn cuts_at_tombstone_ends(&self) -> bool {
        false
    }

    /// True iff a file whose last entry precedes `next_user_key` and whose range
    /// tombstones end at `tombstones_end` (before `next_user_key`) should be finished
    /// at `tombstones_end` rather than stretched to `next_user_key`: for example when
    /// the next level holds much data in between, which a file spanning the gap would
    /// drag into its next compaction. Default: never.
    fn cut_at_tombstones_end(&self, tombstones_end: &[u8], next_user_key: &[u8]) -> bool {
        let _ = (tombstones_end, next_user_key);
        false
    }
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

/// The partitioner of one output stream.
pub fn for_stream(stream: &OutputStream) -> Box<dyn OutputPartitioner> {
    match &stream.partitioning {
        Partitioning::Fixed { target } => Box::new(FixedSize { target: *target }),
        Partitioning::Aligned {
            grandparents,
            target,
            variance,
        } => Box::new(super::aligned::Aligned::new(
            grandparents,
            *target,
            *variance,
        )),
    }
}

/// The partitioning of a compaction's output into `output_level` under `opts`:
/// `grandparents` are the files of the level below it overlapping the plan's range.
pub fn for_compaction(opts: &Options, grandparents: Vec<Arc<FileMetaData>>) -> Partitioning {
    match opts.output_partitioning {
        OutputPartitioning::Fixed => Partitioning::Fixed {
            target: opts.target_file_size_base,
        },
        OutputPartitioning::Aligned { variance } => Partitioning::Aligned {
            grandparents,
            target: opts.target_file_size_base,
            variance,
        },
    }
}
