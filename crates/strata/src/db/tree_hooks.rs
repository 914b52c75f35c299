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
//! - [`TreeHooks::table_read`] runs on the reader's thread, after the get has its
//!   answer, with no database lock held. It must be cheap and must not block on I/O
//!   (a reader never waits for it).
//! - [`TreeHooks::adjust_plan`] runs under the database's `state` lock, between the
//!   policy's pick and the plan's registration in `Busy`, so it must not do I/O or
//!   take the `state` lock. It may add output streams, bound them and replace the
//!   router, or replace the plan by another the policy could have picked over the
//!   same version (other files of the same level); every invariant of
//!   `compaction::plan` and of the picker must still hold, and the result must not
//!   conflict with `busy` (`Busy::conflicts`).
//! - [`TreeHooks::close`] runs when the database closes (after the background threads
//!   stop): hooks holding state of their own make it durable there.

use crate::compaction::picker::Busy;
use crate::compaction::Plan;
use crate::env::FileSystem;
use crate::error::Result;
use crate::filename::Dirs;
use crate::options::Options;
use crate::version::Version;
use std::fmt;
use std::sync::Arc;

/// One family's hooks. See the module docs for the contract.
pub(crate) trait TreeHooks: Send + Sync + fmt::Debug {
    /// A get without a snapshot found `user_key`'s value (`value_len` bytes) in a table
    /// on data path `path_id`.
    fn table_read(&self, user_key: &[u8], value_len: usize, path_id: u32);

    /// Adjusts `plan`, a compaction just picked for this family over `version`, before
    /// it is registered in `busy`.
    fn adjust_plan(&self, plan: &mut Plan, version: &Version, busy: &Busy);

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
    /// The hooks of family `family_id` configured by `opts`, in a database whose
    /// directories are `dirs`; `None` for none.
    ///
    /// # Errors
    /// I/O or corruption errors opening the hooks' state (the open fails).
    fn hooks_for(
        &self,
        opts: &Options,
        fs: &Arc<dyn FileSystem>,
        dirs: &Dirs,
        family_id: u32,
    ) -> Result<Option<Arc<dyn TreeHooks>>>;
}

#[cfg(test)]
mod tests;
