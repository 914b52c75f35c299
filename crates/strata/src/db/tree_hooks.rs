//! The tree-hooks seam: code attached to one column family's tree that learns from the
//! family's point reads and adjusts the compactions planned for it.
//!
//! Role: a technique that must see which tables answer reads and then change what
//! compactions write (keeping records a read found hot on a fast tier, say)
//! implements [`TreeHooks`]; a [`TreeHooksFactory`] component (chosen once per open,
//! `DbBuilder`; by default `tiering::TieringHooks`) gives each family its hooks, or
//! none. A family without hooks pays one
//! `Option` test per get and per picked compaction.
//!
//! Contract:
//! - [`TreeHooks::read_token`] runs on the reader's thread before the get loads its
//!   sequence number and super-version; the token comes back in the get's
//!   [`TableRead`], so hooks can tell what registered after the read began.
//! - [`TreeHooks::table_read`] runs on the reader's thread, after the get has its
//!   answer, with no database lock held. It must be cheap and must not block on I/O
//!   (a reader never waits for it); it may take a lock of the hooks' own.
//! - [`TreeHooks::source_after`] names a level `k`; a get that no memtable and no table
//!   of levels `0..=k` answered then asks [`TreeHooks::get_after`] before it probes
//!   level `k + 1`. The answer must be a copy of a `Put` that is still the key's
//!   newest version in levels `k + 1` and deeper, for every read sequence number it
//!   is returned to (the hooks prove this for their source: `tiering` does in
//!   ARCHITECTURE §18). The get applies its range-tombstone floor and merge operands
//!   to it as to a table's `Put`. Only `get` asks: iterators, `multi_get` and the
//!   conflict check of transactions skip the source, which is correct because its
//!   records are copies of records below it.
//! - [`TreeHooks::registering`] runs under the `state` lock for every plan of the
//!   family just before the plan is registered in `Busy` (after `adjust_plan`),
//!   whoever made it (the policy, a manual compaction, a scan's write-back). It may
//!   add input runs of records already in the tree (copies, at their own sequence
//!   numbers) to a plan whose output streams and router it set in `adjust_plan` (so
//!   never to a write-back's, whose outputs are written before it registers),
//!   inside the key range of the plan's input files; it must not change outputs,
//!   ranges or input files, and must not do I/O.
//! - [`TreeHooks::adjust_plan`] runs under the database's `state` lock, between the
//!   policy's pick and the plan's registration in `Busy`, so it must not do I/O or
//!   take the `state` lock. It may add output streams, bound them and replace the
//!   router, or replace the plan by another the policy could have picked over the
//!   same version (other files of the same level); every invariant of
//!   `compaction::plan` and of the picker must still hold, and the result must not
//!   conflict with `busy` (`Busy::conflicts`).
//! - [`TreeHooks::take_copies`] and [`TreeHooks::copies_checked`] run on the flush
//!   thread, with no database lock held, when [`TreeHooks::has_copies`] says the hooks
//!   have copies to write up over the family's current version (and `table_read`
//!   returned true to wake the thread; so does every install). `has_copies` runs
//!   under the `state` lock, so it must be cheap and take
//!   no lock of the database.
//!   Hooks may keep a batch waiting for a version that can take it (`has_copies`
//!   false until an install changes what it shows); once `take_copies` is called,
//!   the batch is the hooks' to hand over or drop: `has_copies` must not stay true
//!   for a batch it dropped or kept (the flush thread would spin). The hooks hand over copies of records in levels deeper than `check_through`,
//!   each its key's newest version there (the contract of `get_after`); the flush
//!   thread drops every copy whose key has any version, or a covering range
//!   tombstone, in the memtables or levels `0..=check_through` of the family's
//!   current super-version; the hooks drop what else they know to be stale and return
//!   what to write; the flush thread writes that as one L0 table at the copies' own
//!   sequence numbers (`Reason::CopiesUp`). Why an L0 table of old sequence numbers
//!   keeps every read right: ARCHITECTURE §6.14, "Copies in L0".
//! - [`TreeHooks::close`] runs when the database closes (after the background threads
//!   stop): hooks holding state of their own make it durable there.

use crate::compaction::picker::Busy;
use crate::compaction::Plan;
use crate::env::FileSystem;
use crate::error::Result;
use crate::filename::Dirs;
use crate::key::SequenceNumber;
use crate::options::Options;
use crate::version::Version;
use std::fmt;
use std::sync::Arc;

/// What a get without a snapshot found in a table: the answer's base.
#[derive(Debug)]
pub(crate) struct TableRead<'a> {
    /// The key read.
    pub user_key: &'a [u8],
    /// The value the get returns.
    pub value: &'a [u8],
    /// The sequence number of the `Put` that answered (meaningful when `plain`).
    pub seq: SequenceNumber,
    /// The level of the table that answered.
    pub level: usize,
    /// True iff the value is that `Put`'s own: no merge operand was met and no range
    /// tombstone covers the key in any source the get read.
    pub plain: bool,
    /// What [`TreeHooks::read_token`] returned before the get began.
    pub token: u64,
}

/// A copy of a record the hooks hand the flush thread (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Copy {
    pub key: Vec<u8>,
    pub seq: SequenceNumber,
    /// A `Put`'s value.
    pub value: Vec<u8>,
}

/// Copies to write up into L0 (see the module docs).
#[derive(Debug)]
pub(crate) struct Copies {
    /// Sorted by key, one per key.
    pub records: Vec<Copy>,
    /// The deepest level the flush thread checks for newer versions: every copy is of
    /// a record deeper than it.
    pub check_through: usize,
    /// The data path of the L0 table.
    pub path_id: u32,
    /// Handed back to [`TreeHooks::copies_checked`].
    pub batch: u64,
}

/// One family's hooks. See the module docs for the contract.
pub(crate) trait TreeHooks: Send + Sync + fmt::Debug {
    /// A token sampled before a get loads its sequence number.
    fn read_token(&self) -> u64 {
        0
    }

    /// A get without a snapshot had its answer from a table. True to wake the flush
    /// thread: the hooks now have copies for it ([`TreeHooks::has_copies`]).
    fn table_read(&self, read: &TableRead<'_>) -> bool;

    /// True iff [`TreeHooks::take_copies`] would hand something over (or drop it)
    /// given `version`, the family's current version. Requires: the `state` lock held.
    fn has_copies(&self, _version: &Version) -> bool {
        false
    }

    /// Copies to write up into L0, if any. `version` is the family's current version,
    /// the one the flush thread will check them against, and the one
    /// [`TreeHooks::has_copies`] was just asked about.
    fn take_copies(&self, _version: &Version) -> Option<Copies> {
        None
    }

    /// Of the batch `batch`, `survivors` had no newer version in the levels the
    /// flush thread checked, and `dropped` had; returns the copies to write (possibly
    /// none).
    fn copies_checked(&self, _batch: u64, survivors: Vec<Copy>, _dropped: usize) -> Vec<Copy> {
        survivors
    }

    /// The level after which gets ask [`TreeHooks::get_after`]; `None` for never.
    fn source_after(&self) -> Option<usize> {
        None
    }

    /// The sequence number and value of `user_key`'s newest copy visible at `seq` in
    /// the hooks' own source, if any. See the module docs.
    fn get_after(
        &self,
        _user_key: &[u8],
        _seq: SequenceNumber,
    ) -> Option<(SequenceNumber, Vec<u8>)> {
        None
    }

    /// Adjusts `plan`, a compaction just picked for this family over `version`, before
    /// it is registered in `busy`.
    fn adjust_plan(&self, plan: &mut Plan, version: &Version, busy: &Busy);

    /// `plan` is about to be registered in `Busy`. See the module
    /// docs for what the hooks may change.
    fn registering(&self, _plan: &mut Plan) {}

    /// Named figures of the hooks' own state, for `DbStats::tree_hooks`.
    fn figures(&self) -> Vec<(&'static str, u64)>;

    /// Makes the hooks' own state durable; called once, at close.
    ///
    /// # Errors
    /// I/O errors of that state (reported by `Db::close`).
    fn close(&self) -> Result<()>;
}

/// Gives each family its hooks. See the module docs.
pub(crate) trait TreeHooksFactory: Send + Sync + fmt::Debug {
    /// The hooks of family `family.0` configured by `opts`, in a database whose
    /// directories are `dirs` and whose last sequence number is `family.1`
    /// (every record in the tree, its memtables or its WAL has at most this one);
    /// `None` for none.
    ///
    /// # Errors
    /// I/O or corruption errors opening the hooks' state (the open fails).
    fn hooks_for(
        &self,
        opts: &Options,
        fs: &Arc<dyn FileSystem>,
        dirs: &Dirs,
        family: (u32, SequenceNumber),
    ) -> Result<Option<Arc<dyn TreeHooks>>>;
}

#[cfg(test)]
mod tests;
