//! The family-kinds seam: what a column family's records make of it.
//!
//! Role: a family whose records (`version::edit`, format version 4; `Version::record`)
//! describe state of its own, such as a schema, needs components no caller should have
//! to pass again at every open: the merge operator that reads its values and the
//! compaction policy that plans its compactions. A [`FamilyKinds`] component (chosen
//! once per open, `DbBuilder`; none by default) reads a family's records and gives it
//! those; a family whose records it does not claim keeps the options it was opened or
//! created with and the database's policy. So a plain open reads such a family
//! correctly, whatever options the caller passed for it, as it would a table file.
//!
//! Contract:
//! - [`FamilyKinds::configure`] runs once per family and open (after the MANIFEST is
//!   recovered, before any WAL is replayed, so replay and every later flush and
//!   compaction see the configured options), and once when a family is created with
//!   records, with no database lock held. It sees the family's current version; later
//!   record changes reach the family's policy through the versions it is given (a
//!   policy is a pure function of the version), not through a new `configure`.
//! - It may set any per-family field of the options (`crate::CfOptions`) except
//!   `num_levels`, which the MANIFEST's recovery already used; a change to it is
//!   `Internal`. The result is validated as a family's options are.
//! - It must not do I/O: its input is the records and the options.

use crate::compaction::CompactionPolicy;
use crate::error::{Error, Result};
use crate::options::Options;
use crate::version::Version;
use std::fmt;
use std::sync::Arc;

/// Reads a family's records into its options and policy. See the module docs.
pub(crate) trait FamilyKinds: Send + Sync + fmt::Debug {
    /// Adjusts `opts`, the options family `name` opens (or is created) with, to what
    /// `version`'s records call for, and returns the family's compaction policy when
    /// they call for one; `None` for the database's. A family whose records this
    /// component does not claim is left as it is (`Ok(None)`).
    ///
    /// # Errors
    /// `Corruption` or `InvalidArgument` naming the family and record when its
    /// records cannot be read (the open, or the creation, fails).
    fn configure(
        &self,
        name: &str,
        version: &Version,
        opts: &mut Options,
    ) -> Result<Option<Arc<dyn CompactionPolicy>>>;
}

/// Family `name`'s options and policy: `opts` (what it opens or is created with) and
/// `default` (the database's policy), as `kinds` configure them from `version`.
///
/// # Errors
/// `configure`'s errors; `Internal` if it changed `num_levels`; `InvalidArgument`
/// naming the family if the options it gave do not validate.
pub(super) fn configure(
    kinds: Option<&Arc<dyn FamilyKinds>>,
    name: &str,
    version: &Version,
    mut opts: Options,
    default: &Arc<dyn CompactionPolicy>,
) -> Result<(Options, Arc<dyn CompactionPolicy>)> {
    let Some(kinds) = kinds else {
        return Ok((opts, Arc::clone(default)));
    };
    let levels = opts.num_levels;
    let policy = kinds.configure(name, version, &mut opts)?;
    if opts.num_levels != levels {
        return Err(Error::Internal(format!(
            "column family `{name}`: its records' kind changed num_levels from {levels} to {}",
            opts.num_levels
        )));
    }
    opts.validate()
        .map_err(|e| Error::InvalidArgument(format!("column family `{name}`: {e}")))?;
    Ok((opts, policy.unwrap_or_else(|| Arc::clone(default))))
}

#[cfg(test)]
mod tests;
