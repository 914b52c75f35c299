//! Compaction filters (RocksDB's `CompactionFilter`): code that keeps, removes or
//! changes values as compactions rewrite them, so that data an application no longer
//! wants (expired sessions, tombstoned tenants) goes without a delete per key.
//!
//! Set one per column family with [`crate::Options::compaction_filter_factory`] (or
//! [`crate::CfOptions`]). Each compaction job asks the factory for a filter
//! ([`CompactionFilterFactory::create`], with the job's [`FilterContext`]); the one
//! executor then calls it on every value written by a `put` that survives the job's
//! version garbage collection, in key order.
//!
//! # What a filter never sees (the snapshot rule)
//! A filter is called only on entries newer than every live snapshot: an entry a
//! snapshot can read is written unchanged, so a snapshot's reads never change under
//! it. It is not called by flushes, on merge operands or merge results, on deletions,
//! or on entries under a range tombstone.
//!
//! # What `Remove` does
//! The entry becomes a deletion at the same sequence number, so older versions of the
//! key (kept for snapshots, or in deeper levels) stay hidden from current reads; a
//! bottommost job with no live snapshot drops it outright (nothing older exists).
//! `Change` keeps the key and sequence number with the new value. A new value over
//! [`crate::MAX_VALUE_LEN`] is refused: the old value is kept and the refusal counted
//! (`compaction_filter_changes_refused`). Every write is held to that limit, and the
//! table format's guarantees rest on it (`limits.rs`, invariant 1: a single-entry
//! block fits the reader's block bound; past 4 GiB a block's u32 offsets would fail
//! the job).

use std::fmt;
use std::sync::Arc;

/// What a filter decides about one value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Write it unchanged.
    Keep,
    /// Delete the key (see the module docs).
    Remove,
    /// Write this value instead.
    Change(Vec<u8>),
}

/// The compaction job a filter is made for.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FilterContext {
    /// The level the job writes.
    pub level: usize,
    /// True for `Db::compact_range`.
    pub manual: bool,
    /// True iff no data of the job's keys lies below its output.
    pub bottommost: bool,
}

/// A filter for one compaction job: called in key order, one job at a time.
pub trait CompactionFilter: Send {
    /// The decision about `value`, the newest value of `key` the job writes.
    fn filter(&mut self, key: &[u8], value: &[u8]) -> Decision;
}

/// Makes a filter per compaction job. Set it with
/// [`crate::Options::compaction_filter_factory`].
pub trait CompactionFilterFactory: Send + Sync {
    /// The factory's name (in `Debug` output and comparisons of options).
    fn name(&self) -> &str;

    /// The filter for the job described by `ctx`, or `None` to filter nothing in it.
    fn create(&self, ctx: &FilterContext) -> Option<Box<dyn CompactionFilter>>;
}

/// Factories compare by name, as merge operators do.
impl PartialEq for dyn CompactionFilterFactory {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl fmt::Debug for dyn CompactionFilterFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CompactionFilterFactory({:?})", self.name())
    }
}

/// A factory from a closure that builds the filter (`name` for `Debug`).
pub fn factory<F>(name: &str, make: F) -> Arc<dyn CompactionFilterFactory>
where
    F: Fn(&FilterContext) -> Option<Box<dyn CompactionFilter>> + Send + Sync + 'static,
{
    Arc::new(FnFactory {
        name: name.to_owned(),
        make,
    })
}

struct FnFactory<F> {
    name: String,
    make: F,
}

impl<F> CompactionFilterFactory for FnFactory<F>
where
    F: Fn(&FilterContext) -> Option<Box<dyn CompactionFilter>> + Send + Sync + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn create(&self, ctx: &FilterContext) -> Option<Box<dyn CompactionFilter>> {
        (self.make)(ctx)
    }
}
