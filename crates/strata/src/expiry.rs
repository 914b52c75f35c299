//! Values with deadlines ([`crate::Db::put_with_ttl`]): a column family created with
//! [`crate::Options::expiring_values`] stores a deadline with every value, hides a
//! value from reads once its deadline has passed, and removes it at the next
//! compaction that rewrites it (docs/ARCHITECTURE.md §7.9).
//!
//! # The value layout (format version 1, the only one)
//! In such a family every `Put` value, in the WAL, the memtables and the tables, is
//! the caller's value followed by a trailer:
//! ```text
//! +-----------------------------+------------------------------+
//! | value (n bytes, the caller's) | deadline (u64 little endian) |
//! +-----------------------------+------------------------------+
//! ```
//! The deadline is in milliseconds since the Unix epoch: the value is readable while
//! the clock is before it; 0 means never expires (a plain `put`). Deletions, range
//! deletions and the keys carry no trailer, and such a family has no merges (its
//! options refuse a merge operator: an operand has no deadline to carry). Nothing else
//! in the tables, WAL or memtables changes: the layout is a property of the family,
//! held with its data by a family record in the MANIFEST ([`LAYOUT_RECORD`], value
//! [`LAYOUT_V1`], set when the family is created) and adopted or checked at every
//! open ([`adopt_recorded`]): a family's layout is chosen when it is created and never
//! changes. The `OPTIONS` file shows it too (`expiring_values=true`), as a record of
//! the options, not the truth. The frozen fixture is in `expiry/tests.rs`.
//!
//! # Where the layout is applied
//! - Writes: [`stamp`], once per batch on the write path (`Db::write`, before the
//!   batch is queued), appends each put's trailer: its deadline from
//!   `WriteBatch::put_with_ttl`, or 0. A batch touching no such family is not
//!   decoded.
//! - Reads: a read takes the clock once ([`ReadClock`]); `get`, `multi_get` and the
//!   iterators strip the trailer and treat an expired value as a deletion of the key
//!   (older versions stay hidden, as under a deletion). A snapshot does not stop the
//!   clock: a value read through a snapshot expires like any other.
//! - Compactions: [`with_expiry_filter`] gives the family a compaction filter that
//!   removes expired values (under the filter's snapshot rule, `compaction_filter`)
//!   and hands the others, trailer stripped, to the application's filter if it has
//!   one, putting the trailer back on a changed value.

use crate::batch::{WriteBatch, WriteBatchInternal};
use crate::compaction_filter::{
    CompactionFilter, CompactionFilterFactory, Decision, FilterContext,
};
use crate::error::{Error, Result};
use crate::key::ValueKind;
use crate::options::Options;
use crate::version::Version;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Bytes of the deadline trailer.
pub(crate) const TRAILER_LEN: usize = 8;

/// The family record (`version::edit`, tag 11; keys 1–999 are the crate's, 1 and 2
/// the tables') whose presence says the family's values carry deadlines.
pub(crate) const LAYOUT_RECORD: u32 = 3;

/// [`LAYOUT_RECORD`]'s value: the layout's format version.
pub(crate) const LAYOUT_V1: &[u8] = &[1];

/// The records a family created with `opts` starts with: the layout's, or none.
pub(crate) fn layout_records(opts: &Options) -> Vec<(u32, Vec<u8>)> {
    match opts.expiring_values {
        true => vec![(LAYOUT_RECORD, LAYOUT_V1.to_vec())],
        false => Vec::new(),
    }
}

/// Family `name`'s options `opts` made to agree with its records in `version`: a
/// family created with the layout keeps it whatever the open passed.
///
/// # Errors
/// `InvalidArgument` naming the family if `opts` asks for the layout and the family
/// was created without it (its values would be misread), or the family has it and
/// `opts` a merge operator; `Corruption` for a layout record of an unknown version.
pub(crate) fn adopt_recorded(name: &str, version: &Version, opts: &mut Options) -> Result<()> {
    match version.record(LAYOUT_RECORD) {
        Some(LAYOUT_V1) => opts.expiring_values = true,
        Some(other) => {
            return Err(Error::Corruption {
                file: "MANIFEST".into(),
                offset: 0,
                reason: format!(
                    "column family `{name}`: value layout record {other:?} is not one \
                     this build reads"
                ),
            })
        }
        None if opts.expiring_values => {
            return Err(Error::InvalidArgument(format!(
                "column family `{name}`: expiring_values=`true` but the family was \
                 created without it: its values carry no deadlines (the value layout \
                 is chosen when a family is created)"
            )))
        }
        None => {}
    }
    if let (true, Some(op)) = (opts.expiring_values, &opts.merge_operator) {
        return Err(Error::InvalidArgument(format!(
            "column family `{name}`: merge_operator=`{}` but its values carry deadlines \
             (expiring_values, recorded): such a family has no merges",
            op.name()
        )));
    }
    Ok(())
}

/// The wall clock in milliseconds since the Unix epoch (0 before it).
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The deadline of a value written now to live `ttl`: never 0 (which means never
/// expires), saturating far in the future.
pub(crate) fn deadline_after(ttl: Duration) -> u64 {
    let ttl = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
    now_ms().saturating_add(ttl).max(1)
}

/// Appends `value` as the layout stores it with `deadline` to `out`.
fn encode(value: &[u8], deadline: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(value);
    out.extend_from_slice(&deadline.to_le_bytes());
}

/// `stored` split into the caller's value and its deadline; `None` if it is shorter
/// than the trailer.
fn split(stored: &[u8]) -> Option<(&[u8], u64)> {
    let cut = stored.len().checked_sub(TRAILER_LEN)?;
    let (value, trailer) = stored.split_at(cut);
    let deadline = u64::from_le_bytes(trailer.try_into().ok()?);
    Some((value, deadline))
}

fn expired(deadline: u64, now: u64) -> bool {
    deadline != 0 && now >= deadline
}

/// One read's clock: what it sees of values with deadlines.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadClock {
    now: u64,
}

impl ReadClock {
    /// The clock for a read of a family with `opts`, taken now; `None` if its values
    /// carry no deadlines.
    pub fn for_family(opts: &Options) -> Option<ReadClock> {
        opts.expiring_values.then(|| ReadClock { now: now_ms() })
    }

    /// The caller's value in `stored` (the value as the family stores it), or `None`
    /// if it has expired.
    ///
    /// # Errors
    /// `Corruption` naming `key` if `stored` is shorter than the trailer.
    pub fn visible<'v>(&self, key: &[u8], stored: &'v [u8]) -> Result<Option<&'v [u8]>> {
        match split(stored) {
            Some((_, deadline)) if expired(deadline, self.now) => Ok(None),
            Some((value, _)) => Ok(Some(value)),
            None => Err(malformed(key, stored.len())),
        }
    }

    /// [`Self::visible`] of an owned answer (`None`: no value), trailer cut off in
    /// place.
    ///
    /// # Errors
    /// As [`Self::visible`].
    pub fn answer(&self, key: &[u8], stored: Option<Vec<u8>>) -> Result<Option<Vec<u8>>> {
        let Some(mut value) = stored else {
            return Ok(None);
        };
        let len = match self.visible(key, &value)? {
            None => return Ok(None),
            Some(v) => v.len(),
        };
        value.truncate(len);
        Ok(Some(value))
    }
}

/// A stored value too short for its trailer. A read does not know which file (or
/// memtable) the value came from, so the error names the layout and the key.
fn malformed(key: &[u8], len: usize) -> Error {
    Error::Corruption {
        file: "(a value of a family with expiring_values)".into(),
        offset: 0,
        reason: format!(
            "the value of key `{}` is {len} bytes, shorter than its {TRAILER_LEN}-byte \
             deadline trailer",
            key.escape_ascii()
        ),
    }
}

/// `batch` as a family with expiring values stores it: every put into a family for
/// which `expiring(id)` is true gets its trailer (its deadline from
/// `WriteBatch::put_with_ttl`, or 0). `name(id)` names a family in errors.
///
/// Cost: the batch is decoded and rebuilt once; a caller skips this for a batch that
/// touches no such family and has no deadlines.
///
/// # Errors
/// `InvalidArgument` if a put with a deadline goes to a family without expiring
/// values (naming it), or if a value with its trailer breaks a size limit;
/// `Internal` if the batch does not decode.
pub(crate) fn stamp(
    batch: WriteBatch,
    expiring: impl Fn(u32) -> bool,
    name: impl Fn(u32) -> String,
) -> Result<WriteBatch> {
    let deadlines = batch.deadlines();
    let mut next_deadline = deadlines.iter().peekable();
    let mut out = WriteBatch::with_capacity(batch.approximate_size());
    let mut refused = None;
    let mut record = 0u32;
    let mut value_buf = Vec::new();
    batch
        .iterate_cf(|family, _, kind, key, value| {
            let deadline = match next_deadline.peek() {
                Some(&&(r, d)) if r == record => {
                    next_deadline.next();
                    Some(d)
                }
                _ => None,
            };
            record = record.saturating_add(1);
            if refused.is_some() {
                return;
            }
            if kind == ValueKind::Put && expiring(family) {
                value_buf.clear();
                encode(value, deadline.unwrap_or(0), &mut value_buf);
                out.add_record(family, kind, key, &value_buf);
                return;
            }
            if deadline.is_some() {
                refused = Some(Error::InvalidArgument(format!(
                    "put_with_ttl: column family `{}` does not store deadlines (create it \
                     with expiring_values)",
                    name(family)
                )));
                return;
            }
            out.add_record(family, kind, key, value);
        })
        .map_err(|e| Error::Internal(format!("a batch built by the API decodes: {}", e.0)))?;
    if let Some(e) = refused {
        return Err(e);
    }
    out.check_limits()?;
    Ok(out)
}

/// `opts` with the compaction filter of a family with expiring values: the built-in
/// expiry filter, in front of the application's if it has one. Unchanged for any
/// other family.
pub(crate) fn with_expiry_filter(mut opts: Options) -> Options {
    if opts.expiring_values {
        let inner = opts.compaction_filter_factory.take();
        let name = match &inner {
            None => EXPIRY.to_string(),
            Some(f) => format!("{EXPIRY}+{}", f.name()),
        };
        opts.compaction_filter_factory = Some(Arc::new(ExpiryFilterFactory { inner, name }));
    }
    opts
}

/// The built-in filter's name.
const EXPIRY: &str = "strata.expiry";

struct ExpiryFilterFactory {
    inner: Option<Arc<dyn CompactionFilterFactory>>,
    name: String,
}

impl CompactionFilterFactory for ExpiryFilterFactory {
    fn name(&self) -> &str {
        &self.name
    }

    fn create(&self, ctx: &FilterContext) -> Option<Box<dyn CompactionFilter>> {
        Some(Box::new(ExpiryFilter {
            now: now_ms(),
            inner: self.inner.as_ref().and_then(|f| f.create(ctx)),
        }))
    }
}

/// One job's filter. Its clock is read when the job begins: a value that expires
/// during the job is removed by the next one (reads already hide it).
struct ExpiryFilter {
    now: u64,
    inner: Option<Box<dyn CompactionFilter>>,
}

impl CompactionFilter for ExpiryFilter {
    fn filter(&mut self, key: &[u8], value: &[u8]) -> Decision {
        // A value without a trailer is left as it is: reads report it as corrupt,
        // naming the key; a compaction must not turn it into something readable.
        let Some((user_value, deadline)) = split(value) else {
            return Decision::Keep;
        };
        if expired(deadline, self.now) {
            return Decision::Remove;
        }
        let Some(inner) = self.inner.as_mut() else {
            return Decision::Keep;
        };
        match inner.filter(key, user_value) {
            Decision::Change(changed) => {
                let mut stored = Vec::with_capacity(changed.len() + TRAILER_LEN);
                encode(&changed, deadline, &mut stored);
                Decision::Change(stored)
            }
            decision => decision,
        }
    }
}

#[cfg(test)]
mod tests;
