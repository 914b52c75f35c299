//! The [`ScanTees`] seam: which user iterators show the merged entries of their deeper
//! levels to a [`Tee`] (`iter::tee`), so that a technique can keep the merge a scan
//! already computed (ARCHITECTURE §5.3).
//!
//! An injected component ([`crate::DbBuilder`], like the compaction policy), asked once
//! per user iterator as it is built. With none injected, or when it answers `None`,
//! the iterator is built exactly as without the seam. When it answers
//! `Some((level, tee))`:
//! - the levels from `level` down are merged under their own merging iterator, one
//!   child of the iterator's merge, wrapped in a `TeeIterator` over `tee`; the
//!   memtables, L0 and the levels above `level` stay where they are;
//! - those levels are read *without* the snapshot filter (ARCHITECTURE §5.4): a table
//!   newer than the read would otherwise be skipped and its entries would never reach
//!   the tee, which must see every entry of the teed levels between its `start` and
//!   its last `entry`. The user iterator hides what its snapshot must not see, as it
//!   does for entries of every other source;
//! - the tee receives internal entries, every version, in internal-key order, never
//!   the user's view; it lives as long as the user iterator and drops with it.
//!
//! Contract for implementors: `tee` runs on the reader's thread while the iterator is
//! built (no lock is held); it must not block. `level` must be at least 1 and below
//! the version's `num_levels`; any other answer builds the iterator without a tee.

use super::family::Family;
use super::DbInner;
use crate::iter::Tee;
use crate::version::Version;
use std::fmt;
use std::sync::Arc;

/// A user iterator about to be built: what a [`ScanTees`] decides on.
pub(crate) struct ScanStart<'a> {
    /// The database (a tee that acts when the reader is done holds it weakly, so an
    /// iterator outliving `close` keeps nothing running).
    pub db: &'a Arc<DbInner>,
    /// The family read.
    pub family: &'a Arc<Family>,
    /// The version the iterator pins.
    pub version: &'a Arc<Version>,
}

/// See the module docs.
pub(crate) trait ScanTees: Send + Sync + fmt::Debug {
    /// For the user iterator `scan` is about to build: the first level whose entries,
    /// merged with every deeper level's, `Tee` sees; `None` to build it as always.
    fn tee(&self, scan: &ScanStart<'_>) -> Option<(usize, Box<dyn Tee>)>;

    /// Work the component still has queued or running for the database (what a tee
    /// saw, acted on off the reader's thread); `Db::wait_for_compactions` waits for
    /// it to reach 0. Default: none.
    fn pending(&self) -> usize {
        0
    }

    /// The database is closing: drop queued work (the running part finishes, and
    /// `close` waits until [`ScanTees::pending`] is 0). Default: nothing.
    fn close(&self) {}
}

/// Tees nothing: the component of a read-only open, which writes nothing back.
#[derive(Debug, Default)]
pub(crate) struct NoTees;

impl ScanTees for NoTees {
    fn tee(&self, _scan: &ScanStart<'_>) -> Option<(usize, Box<dyn Tee>)> {
        None
    }
}

#[cfg(test)]
mod tests;
