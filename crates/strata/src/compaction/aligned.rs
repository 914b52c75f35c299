//! Aligned compaction (being written).
use crate::version::FileMetaData;
use std::sync::Arc;

/// Aligned output partitioner (being written).
#[derive(Debug)]
pub struct Aligned {
    target: u64,
}

impl Aligned {
    /// Builds the partitioner.
    pub fn new(_grandparents: &[Arc<FileMetaData>], target: u64, _variance: f64) -> Self {
        Aligned { target }
    }
}

impl super::partitioner::OutputPartitioner for Aligned {
    fn should_cut(&mut self, _k: &[u8], size: u64) -> bool {
        size >= self.target
    }
}
