//! The verifier: every key of every column family of the database against the
//! expected state.
//!
//! Role: run by `strata stress --verify_only` after a kill, at the start of a stress run
//! on an existing database, and at the end of every run. In each family, each key is
//! read with `get`, then the whole family is read by one forward scan, and the two must
//! agree with each other and with the expected state of that family:
//!
//! - a key with no write in flight must hold exactly its acknowledged value (or be
//!   absent iff it is expected absent): nothing acknowledged is lost, nothing deleted
//!   comes back, no stale or foreign value is returned;
//! - a key with a write in flight may hold the old or the new value (or absence);
//! - the scan yields only stress keys below `max_key`, in order, each with the value
//!   `get` returned.
//!
//!
//! A family the database does not have (a kill before the run created it) reads as
//! empty: right iff the expected state holds nothing acknowledged in it.
//!
//! With `resolve`, and only if nothing is wrong, each in-flight key is settled on what
//! the database holds, so the next run starts from an exact expected state.

use super::expected::ExpectedState;
use super::keyspace;
use crate::engine::family_name;
use crate::error::{CliError, Result};
use strata::{CfHandle, Db, ReadOptions};

/// How many mismatch messages are kept.
const KEEP_MESSAGES: usize = 5;

/// What a verification pass found.
#[derive(Clone, Debug, Default)]
pub struct Verified {
    /// Column families checked.
    pub families: u64,
    /// Keys checked, over every family.
    pub keys: u64,
    /// Keys present.
    pub present: u64,
    /// Keys whose write was in flight and is in the database.
    pub in_flight_new: u64,
    /// Keys whose write was in flight and is not (the old value or absence remains;
    /// allowed: the write was never acknowledged).
    pub in_flight_old: u64,
    /// Entries the scan returned.
    pub scanned: u64,
    /// Keys that are wrong.
    pub mismatches: u64,
    /// The first few problems, one line each.
    pub messages: Vec<String>,
}

impl Verified {
    fn wrong(&mut self, msg: String) {
        self.mismatches += 1;
        if self.messages.len() < KEEP_MESSAGES {
            self.messages.push(msg);
        }
    }

    /// `Ok` iff nothing was wrong; else a [`CliError::Mismatch`] naming the first
    /// problem and the count.
    ///
    /// # Errors
    /// [`CliError::Mismatch`].
    pub fn into_result(self) -> Result<Verified> {
        match self.messages.first() {
            None if self.mismatches == 0 => Ok(self),
            first => Err(CliError::Mismatch(format!(
                "{} of {} keys wrong; first: {}",
                self.mismatches,
                self.keys,
                first.map(String::as_str).unwrap_or("?")
            ))),
        }
    }
}

fn describe(found: Option<u32>) -> String {
    match found {
        None => "absent".to_string(),
        Some(id) => format!("value id {id}"),
    }
}

/// Checks every key of every family of `db` against `st` (see the module docs).
/// Problems are counted in the result, not returned as errors.
///
/// # Errors
/// Engine errors from reads (a read that fails is not a mismatch but a failure, e.g.
/// corruption); [`CliError::Io`] writing resolutions.
pub fn verify(db: &Db, st: &ExpectedState, resolve: bool) -> Result<Verified> {
    let mut out = Verified::default();
    let mut resolutions = Vec::new();
    for f in 0..st.families() {
        let name = family_name(f);
        let cf = db.cf(&name);
        out.families += 1;
        verify_family(db, cf.as_ref(), f, &name, st, &mut out, &mut resolutions)?;
    }
    if resolve && out.mismatches == 0 {
        for (f, k, found) in resolutions {
            st.resolve(f, k, found)?;
        }
    }
    Ok(out)
}

/// Checks family `f` (named `name`; `cf` is `None` if the database lacks it), adding to
/// `out` and to `resolutions` (`(family, key, found)` of in-flight keys).
fn verify_family(
    db: &Db,
    cf: Option<&CfHandle>,
    f: usize,
    name: &str,
    st: &ExpectedState,
    out: &mut Verified,
    resolutions: &mut Vec<(usize, u64, Option<u32>)>,
) -> Result<()> {
    let max_len = st.value_size() as usize;
    let ro = ReadOptions::default();
    let mut seen: Vec<Option<u32>> = Vec::with_capacity(st.max_key() as usize);
    for k in 0..st.max_key() {
        out.keys += 1;
        let slot = st.get(f, k);
        let value = match cf {
            Some(cf) => db.get_cf(&ro, cf, &keyspace::key(k))?,
            None => None,
        };
        let found = match value {
            None => None,
            Some(v) => match keyspace::identify(k, &v, max_len) {
                Ok(id) => Some(id),
                Err(what) => {
                    out.wrong(format!("family {name} key {k}: get returned a {what}"));
                    seen.push(None);
                    continue;
                }
            },
        };
        seen.push(found);
        if found.is_some() {
            out.present += 1;
        }
        if !slot.accepts(found) {
            let pending = match slot.pending {
                None => String::new(),
                Some(p) => format!(" or {} (in flight)", describe(p)),
            };
            let missing = if cf.is_none() {
                " (the database has no such family)"
            } else {
                ""
            };
            out.wrong(format!(
                "family {name} key {k}: {} but expected {}{pending}{missing}",
                describe(found),
                describe(slot.current)
            ));
            continue;
        }
        if let Some(p) = slot.pending {
            if found == p {
                out.in_flight_new += 1;
            } else {
                out.in_flight_old += 1;
            }
            resolutions.push((f, k, found));
        }
    }
    if let Some(cf) = cf {
        scan_agrees(db, cf, name, st, &seen, out)?;
    }
    Ok(())
}

/// One forward scan over family `cf` (named `name`) must return exactly the keys `get`
/// found (`seen`), with the same values.
fn scan_agrees(
    db: &Db,
    cf: &CfHandle,
    name: &str,
    st: &ExpectedState,
    seen: &[Option<u32>],
    out: &mut Verified,
) -> Result<()> {
    let max_len = st.value_size() as usize;
    let mut it = db.iter_cf(&ReadOptions::default(), cf)?;
    it.seek_to_first();
    let mut next_expected = 0u64;
    while it.valid() {
        out.scanned += 1;
        let Some(k) = keyspace::parse_key(it.key()).filter(|k| *k < st.max_key()) else {
            out.wrong(format!(
                "family {name}: scan returned a key outside the key space: `{}`",
                String::from_utf8_lossy(it.key())
            ));
            it.next();
            continue;
        };
        if k < next_expected {
            out.wrong(format!("family {name}: scan returned key {k} out of order"));
            it.next();
            continue;
        }
        skipped(seen, next_expected..k, name, out);
        next_expected = k + 1;
        match keyspace::identify(k, it.value(), max_len) {
            Ok(id) => {
                if seen.get(k as usize).copied().flatten() != Some(id) {
                    out.wrong(format!(
                        "family {name} key {k}: scan found value id {id} but get found {}",
                        describe(seen.get(k as usize).copied().flatten())
                    ));
                }
            }
            Err(what) => out.wrong(format!("family {name} key {k}: scan returned a {what}")),
        }
        it.next();
    }
    it.status()?;
    skipped(seen, next_expected..st.max_key(), name, out);
    Ok(())
}

/// Keys in `range` that `get` found present were skipped by the scan of family `name`.
fn skipped(seen: &[Option<u32>], range: std::ops::Range<u64>, name: &str, out: &mut Verified) {
    for k in range {
        if let Some(Some(id)) = seen.get(k as usize) {
            out.wrong(format!(
                "family {name} key {k}: get found value id {id} but the scan skipped it"
            ));
        }
    }
}
