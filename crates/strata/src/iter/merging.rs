//! (being written)

/// Merges several sorted iterators (being written).
pub struct MergingIterator;
