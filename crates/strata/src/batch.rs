//! Write batches: several updates applied atomically, and the WAL record format.
//!
//! # Format (also the payload of one WAL record)
//! ```text
//! +--------------+-------------+---------------------------------------------+
//! | seq: u64 LE  | count: u32 LE | records...                                |
//! +--------------+-------------+---------------------------------------------+
//! record := kind: u8 (1 = Put, 0 = Delete, 2 = Merge, 3 = RangeDelete; see key::ValueKind)
//!           [varint32 family]                   (only if kind has bit 0x80, v2)
//!           varint key_len, key, [varint value_len, value]   (no value for Delete;
//!           for RangeDelete, key = start and value = end of the range [start, end))
//! ```
//! The i-th record gets sequence number `seq + i`.
//!
//! Format version 2 (column families) adds the family: a record of a family other
//! than the default one (id 0) sets bit 0x80 (`FAMILY_FLAG`) of its kind byte and
//! names the family's id right after it. A record of the default family is written
//! exactly as in version 1, so a batch without families is byte for byte a v1 batch
//! and every v1 batch (every WAL an older release wrote) decodes unchanged. A v1
//! reader refuses a v2 record (an unknown kind byte) instead of misapplying it.
//!
//! # Surface
//! Users build a batch with [`WriteBatch::new`], `put`, `delete`, `merge`,
//! `delete_range`, `append` and `clear`.
//! The encoding side (sequence number, raw bytes, decoding, iteration) is the
//! [`WriteBatchInternal`] trait: the engine's, and with the `internals` feature the
//! tools'.
//!
//! # Limits
//! A record whose key is longer than [`MAX_KEY_LEN`] or whose value is longer than
//! [`MAX_VALUE_LEN`], or that would make the batch longer than [`MAX_BATCH_LEN`], is
//! *not added*: the batch remembers the first such violation (and ignores every later
//! update), and [`crate::Db::write`] refuses the whole batch with
//! [`crate::Error::InvalidArgument`] before anything reaches the WAL. `put` and `delete`
//! therefore stay infallible (no API change), and an oversized value is never copied.
//! [`WriteBatchInternal::from_data`] records a violation the same way but still accepts the
//! bytes, so WAL records written before the limits existed replay. See
//! [`crate::limits`] for why these bounds.
//!
//! # Invariants
//! 1. `count` equals the number of records (checked by [`WriteBatchInternal::iterate`]).
//! 2. A batch is applied entirely or not at all: it is one WAL record.
//! 3. [`WriteBatch::check_limits`] is `Ok` iff every record is within the key and value
//!    limits and the batch is within [`MAX_BATCH_LEN`]; then `count` cannot overflow
//!    (`crate::limits` invariant 3).

use crate::coding::{
    get_fixed32, get_fixed64, put_length_prefixed, put_varint32, varint_len, Decoder,
};
use crate::db::CfHandle;
use crate::error::{Error, Result};
use crate::key::{SequenceNumber, ValueKind, MAX_SEQUENCE};
use crate::limits::{MAX_BATCH_LEN, MAX_KEY_LEN, MAX_VALUE_LEN};
use std::time::Duration;

/// Bit of a record's kind byte that says a family id follows (format version 2).
pub(crate) const FAMILY_FLAG: u8 = 0x80;

/// Bytes of the batch header (`seq` and `count`).
pub(crate) const HEADER_LEN: usize = 12;
const HEADER: usize = HEADER_LEN;

/// Bytes of the shortest record: a delete of the empty key (kind byte, length 0).
pub(crate) const MIN_RECORD_LEN: usize = 2;

/// Bytes of a put record with a key of `key_len` and a value of `value_len` bytes.
pub(crate) const fn max_record_len(key_len: usize, value_len: usize) -> usize {
    1 + varint_len(key_len as u64) + key_len + varint_len(value_len as u64) + value_len
}

/// Bytes of the record of `key` and (for a put) `value` in `family`.
fn record_len(family: u32, key: &[u8], value: Option<&[u8]>) -> usize {
    let family_len = if family == 0 {
        0
    } else {
        varint_len(u64::from(family))
    };
    1 + family_len
        + varint_len(key.len() as u64)
        + key.len()
        + value.map_or(0, |v| varint_len(v.len() as u64) + v.len())
}

/// An atomic group of puts, deletes and merges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteBatch {
    rep: Vec<u8>,
    /// The first limit an update broke (that update and all later ones were not
    /// added), or `None`. Written by `record`, `append` and `from_data`.
    over_limit: Option<LimitExceeded>,
    /// Index of the first `delete_range` whose start is after its end (refused by
    /// [`WriteBatch::check_limits`]), or `None`.
    inverted_range: Option<u32>,
    /// The families other than the default one that records name, and the families
    /// (the default one included) that records merge into, each sorted and without
    /// repeats: the write path checks them without decoding the batch. Derived from
    /// `rep`.
    families: Families,
    /// `(record index, deadline)` of each `put_with_ttl`, ascending by index: kept
    /// beside the records until the write path stores them (`expiry::stamp`), so
    /// the serialized form is unchanged.
    deadlines: Vec<(u32, u64)>,
}

/// Which column families a batch's records name (see `WriteBatch::families`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Families {
    /// Families other than the default one that records name, ascending.
    named: Vec<u32>,
    /// Families that records merge into, ascending.
    merging: Vec<u32>,
}

impl Families {
    /// Records a record of `kind` in `family`.
    fn note(&mut self, family: u32, kind: ValueKind) {
        if family != 0 {
            insert_sorted(&mut self.named, family);
        }
        if kind == ValueKind::Merge {
            insert_sorted(&mut self.merging, family);
        }
    }

    fn extend(&mut self, other: &Families) {
        for &f in &other.named {
            insert_sorted(&mut self.named, f);
        }
        for &f in &other.merging {
            insert_sorted(&mut self.merging, f);
        }
    }
}

/// Inserts `v` into the ascending `list` unless present (lists hold a few families).
fn insert_sorted(list: &mut Vec<u32>, v: u32) {
    if let Err(i) = list.binary_search(&v) {
        list.insert(i, v);
    }
}

/// The first size limit a [`WriteBatch`] update broke.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitExceeded {
    /// What was too large: `"key"`, `"value"` or `"batch"`.
    pub what: &'static str,
    /// Index of the offending record within the batch.
    pub record: u32,
    /// Its length (for `"batch"`: the length the batch would have had), bytes.
    pub len: usize,
    /// The limit, bytes.
    pub max: usize,
}

impl std::fmt::Display for LimitExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} too large: len=`{}` max=`{}` record=`{}`",
            self.what, self.len, self.max, self.record
        )
    }
}

impl LimitExceeded {
    /// The first limit that `key` and `value` (of record `record`) break, if any.
    fn check(record: u32, key: &[u8], value: Option<&[u8]>) -> Option<LimitExceeded> {
        let over = |what, len, max| {
            (len > max).then_some(LimitExceeded {
                what,
                record,
                len,
                max,
            })
        };
        over("key", key.len(), MAX_KEY_LEN)
            .or_else(|| over("value", value.map_or(0, <[u8]>::len), MAX_VALUE_LEN))
    }
}

impl Default for WriteBatch {
    fn default() -> Self {
        WriteBatch::new()
    }
}

/// Why a serialized batch was rejected.
#[derive(Debug, PartialEq, Eq)]
pub struct BadBatch(pub &'static str);

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        WriteBatch {
            rep: vec![0; HEADER],
            over_limit: None,
            inverted_range: None,
            families: Families::default(),
            deadlines: Vec::new(),
        }
    }

    /// An empty batch with room for `bytes` of records (avoids regrowth; capped at
    /// [`MAX_BATCH_LEN`]).
    pub fn with_capacity(bytes: usize) -> Self {
        let mut rep = Vec::with_capacity(HEADER + bytes.min(MAX_BATCH_LEN));
        rep.resize(HEADER, 0);
        WriteBatch {
            rep,
            over_limit: None,
            inverted_range: None,
            families: Families::default(),
            deadlines: Vec::new(),
        }
    }

    /// Adds `key = value`, unless the batch already broke a limit or this update would
    /// break one (see the module's limits; [`crate::Db::write`] then refuses the batch).
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        self.record(0, ValueKind::Put, key, Some(value));
    }

    /// [`Self::put`] into column family `cf` ([`crate::Db::create_cf`]).
    pub fn put_cf(&mut self, cf: &CfHandle, key: &[u8], value: &[u8]) {
        self.record(cf.id(), ValueKind::Put, key, Some(value));
    }

    /// Adds `key = value` that expires `ttl` from now: reads stop seeing it then, and
    /// compactions remove it. The batch must go to a family created with
    /// [`crate::Options::expiring_values`] ([`crate::Db::write`] refuses it otherwise);
    /// in such a family a plain [`Self::put`] never expires. A zero `ttl` writes a
    /// value that is already expired.
    pub fn put_with_ttl(&mut self, key: &[u8], value: &[u8], ttl: Duration) {
        self.put_expiring(0, key, value, ttl);
    }

    /// [`Self::put_with_ttl`] into column family `cf`.
    pub fn put_with_ttl_cf(&mut self, cf: &CfHandle, key: &[u8], value: &[u8], ttl: Duration) {
        self.put_expiring(cf.id(), key, value, ttl);
    }

    fn put_expiring(&mut self, family: u32, key: &[u8], value: &[u8], ttl: Duration) {
        let index = self.count();
        self.record(family, ValueKind::Put, key, Some(value));
        if self.count() != index {
            self.deadlines
                .push((index, crate::expiry::deadline_after(ttl)));
        }
    }

    /// Adds a deletion of `key`, under the same limits as [`Self::put`].
    pub fn delete(&mut self, key: &[u8]) {
        self.record(0, ValueKind::Delete, key, None);
    }

    /// [`Self::delete`] in column family `cf`.
    pub fn delete_cf(&mut self, cf: &CfHandle, key: &[u8]) {
        self.record(cf.id(), ValueKind::Delete, key, None);
    }

    /// Adds a merge `operand` for `key`, under the same limits as [`Self::put`]: the
    /// database's [`crate::Options::merge_operator`] combines it with the key's older
    /// value when the key is read (see [`crate::merge`]).
    pub fn merge(&mut self, key: &[u8], operand: &[u8]) {
        self.record(0, ValueKind::Merge, key, Some(operand));
    }

    /// [`Self::merge`] in column family `cf` (combined by that family's
    /// [`crate::CfOptions::merge_operator`]).
    pub fn merge_cf(&mut self, cf: &CfHandle, key: &[u8], operand: &[u8]) {
        self.record(cf.id(), ValueKind::Merge, key, Some(operand));
    }

    /// Adds a deletion of every key in `[start, end)` (RocksDB's `DeleteRange`):
    /// entries written before it are hidden from every later read, and compaction
    /// drops them. `start == end` deletes nothing; `start > end` makes
    /// [`crate::Db::write`] refuse the batch. Under the same size limits as
    /// [`Self::put`] (`end` counts as the value).
    pub fn delete_range(&mut self, start: &[u8], end: &[u8]) {
        self.range(0, start, end);
    }

    /// [`Self::delete_range`] in column family `cf`.
    pub fn delete_range_cf(&mut self, cf: &CfHandle, start: &[u8], end: &[u8]) {
        self.range(cf.id(), start, end);
    }

    fn range(&mut self, family: u32, start: &[u8], end: &[u8]) {
        if start > end && self.inverted_range.is_none() && self.over_limit.is_none() {
            self.inverted_range = Some(self.count());
        }
        // `end` becomes a key too (a fragment bound, a table's largest key in the
        // MANIFEST), so it is held to the key limit, not the value limit.
        if self.over_limit.is_none() && end.len() > MAX_KEY_LEN {
            self.over_limit = Some(LimitExceeded {
                what: "key",
                record: self.count(),
                len: end.len(),
                max: MAX_KEY_LEN,
            });
            return;
        }
        self.record(family, ValueKind::RangeDelete, start, Some(end));
    }

    /// True iff the batch holds a merge.
    pub fn has_merge(&self) -> bool {
        !self.families.merging.is_empty()
    }

    /// The deadlines of the batch's `put_with_ttl` records: `(record index, deadline
    /// in ms since the Unix epoch)`, ascending by index.
    pub(crate) fn deadlines(&self) -> &[(u32, u64)] {
        &self.deadlines
    }

    /// True iff a record names a column family other than the default one.
    pub(crate) fn has_families(&self) -> bool {
        !self.families.named.is_empty()
    }

    /// The column families other than the default one that records name, ascending.
    pub(crate) fn named_families(&self) -> &[u32] {
        &self.families.named
    }

    /// The column families (the default one included) that records merge into,
    /// ascending.
    pub(crate) fn merge_families(&self) -> &[u32] {
        &self.families.merging
    }

    /// Sets the count to `index + added` for a batch that will be `len` bytes long and
    /// returns true, or records the batch-size violation and returns false. Within
    /// [`MAX_BATCH_LEN`] the count cannot overflow (module invariant 3); the checked add
    /// keeps that a checked fact rather than an assumption.
    fn grow(&mut self, index: u32, added: u32, len: usize) -> bool {
        match index.checked_add(added) {
            Some(count) if len <= MAX_BATCH_LEN => {
                self.set_count(count);
                true
            }
            _ => {
                self.over_limit = Some(LimitExceeded {
                    what: "batch",
                    record: index,
                    len,
                    max: MAX_BATCH_LEN,
                });
                false
            }
        }
    }

    fn record(&mut self, family: u32, kind: ValueKind, key: &[u8], value: Option<&[u8]>) {
        if self.over_limit.is_some() {
            return;
        }
        let index = self.count();
        if let Some(over) = LimitExceeded::check(index, key, value) {
            self.over_limit = Some(over);
            return;
        }
        if !self.grow(index, 1, self.rep.len() + record_len(family, key, value)) {
            return;
        }
        if family == 0 {
            self.rep.push(kind as u8);
        } else {
            self.rep.push(kind as u8 | FAMILY_FLAG);
            put_varint32(&mut self.rep, family);
        }
        self.families.note(family, kind);
        put_length_prefixed(&mut self.rep, key);
        if let Some(v) = value {
            put_length_prefixed(&mut self.rep, v);
        }
    }

    /// `Ok` iff no update broke a limit (module invariant 3) and no `delete_range`
    /// has its start after its end.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the first limit broken, the offending length
    /// and the limit, e.g. ``value too large: len=`N` max=`M` record=`0` ``, or the
    /// inverted range's record.
    pub fn check_limits(&self) -> Result<()> {
        if let Some(over) = &self.over_limit {
            return Err(Error::InvalidArgument(over.to_string()));
        }
        match self.inverted_range {
            None => Ok(()),
            Some(record) => Err(Error::InvalidArgument(format!(
                "delete_range start is after its end: record=`{record}`"
            ))),
        }
    }

    /// `Ok` iff adding `key` (with `value`; `None` for a delete) to `family` would keep the batch
    /// within every limit. Adds nothing. For callers that must refuse one update and
    /// keep the batch usable (`txn::WriteBatchWithIndex`).
    ///
    /// # Errors
    /// As [`Self::check_limits`], for the batch as it would be.
    pub(crate) fn check_update(&self, family: u32, key: &[u8], value: Option<&[u8]>) -> Result<()> {
        self.check_limits()?;
        let record = self.count();
        let len = self
            .rep
            .len()
            .saturating_add(record_len(family, key, value));
        let over = LimitExceeded::check(record, key, value).or_else(|| {
            (len > MAX_BATCH_LEN).then_some(LimitExceeded {
                what: "batch",
                record,
                len,
                max: MAX_BATCH_LEN,
            })
        });
        match over {
            Some(over) => Err(Error::InvalidArgument(over.to_string())),
            None => Ok(()),
        }
    }

    /// Number of updates in the batch.
    pub fn len(&self) -> usize {
        self.count() as usize
    }

    /// True iff the batch holds no updates.
    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// Removes every update and forgets a broken limit.
    pub fn clear(&mut self) {
        self.rep.clear();
        self.rep.resize(HEADER, 0);
        self.over_limit = None;
        self.inverted_range = None;
        self.families = Families::default();
        self.deadlines.clear();
    }

    /// Size of the serialized batch in bytes (the header included; compared with
    /// [`MAX_BATCH_LEN`]).
    pub fn approximate_size(&self) -> usize {
        self.rep.len()
    }

    /// Appends every update of `other` to this batch, unless either batch broke a
    /// limit or the result would be longer than [`MAX_BATCH_LEN`]; then nothing is
    /// appended and this batch remembers the (first) violation.
    pub fn append(&mut self, other: &WriteBatch) {
        if self.over_limit.is_some() {
            return;
        }
        let index = self.count();
        if let Some(over) = &other.over_limit {
            self.over_limit = Some(LimitExceeded {
                record: index.saturating_add(over.record),
                ..over.clone()
            });
            return;
        }
        let records = other.rep.get(HEADER..).unwrap_or_default();
        if !self.grow(index, other.count(), self.rep.len() + records.len()) {
            return;
        }
        self.rep.extend_from_slice(records);
        self.families.extend(&other.families);
        self.deadlines.extend(
            other
                .deadlines
                .iter()
                .map(|&(r, d)| (index.saturating_add(r), d)),
        );
        if self.inverted_range.is_none() {
            self.inverted_range = other.inverted_range.map(|r| index.saturating_add(r));
        }
    }

    fn set_count(&mut self, n: u32) {
        if let Some(c) = self.rep.get_mut(8..12) {
            c.copy_from_slice(&n.to_le_bytes());
        }
    }

    /// The header's update count (the engine's and the format's u32).
    fn count(&self) -> u32 {
        get_fixed32(&self.rep, 8).unwrap_or(0)
    }
}

/// The engine's (and the tools') view of a batch as the WAL record it is: its sequence
/// number, raw bytes, decoding and iteration. Not for users: reachable only inside the
/// crate, or with the `internals` feature (tools and fuzz targets).
pub trait WriteBatchInternal: Sized {
    /// Sequence number of the first update (assigned at commit).
    fn sequence(&self) -> SequenceNumber;

    /// Assigns the sequence number of the first update.
    fn set_sequence(&mut self, seq: SequenceNumber);

    /// The serialized batch (the WAL record payload).
    fn data(&self) -> &[u8];

    /// The first limit an update broke, if any (see [`WriteBatch::check_limits`]).
    #[cfg_attr(
        not(feature = "internals"),
        allow(
            dead_code,
            reason = "tests and the `batch` fuzz check; the engine checks limits"
        )
    )]
    fn limit_exceeded(&self) -> Option<&LimitExceeded>;

    /// Rebuilds a batch from a WAL record, validating every record.
    ///
    /// A well-formed batch that breaks a size limit is accepted (WAL records written
    /// before the limits existed must replay), with the violation recorded:
    /// [`WriteBatch::check_limits`] reports it, so [`crate::Db::write`] refuses such a
    /// batch.
    ///
    /// # Errors
    /// [`BadBatch`] if the bytes are not a well-formed batch.
    fn from_data(data: Vec<u8>) -> Result<Self, BadBatch>;

    /// Calls `f(seq, kind, key, value)` for each update in order (`value` is empty for
    /// deletes), whatever its column family.
    ///
    /// # Errors
    /// [`BadBatch`] if a record is malformed, the count is wrong, or a record's
    /// sequence number exceeds [`MAX_SEQUENCE`].
    #[cfg_attr(
        not(feature = "internals"),
        allow(
            dead_code,
            reason = "tests and the fuzz checks; the engine needs the family"
        )
    )]
    fn iterate(
        &self,
        mut f: impl FnMut(SequenceNumber, ValueKind, &[u8], &[u8]),
    ) -> Result<(), BadBatch> {
        self.iterate_cf(|_, seq, kind, key, value| f(seq, kind, key, value))
    }

    /// Adds one update of `kind` to column family `family` (0: default) exactly as the
    /// `WriteBatch` builders do (`put_cf`, `delete_cf`, `merge_cf`, `delete_range_cf`,
    /// limits included), without a family handle: for tools and fuzz checks that
    /// rebuild a batch from its records, and for the write path's
    /// `expiry::stamp`. `value` is ignored for a delete.
    fn add_record(&mut self, family: u32, kind: ValueKind, key: &[u8], value: &[u8]);

    /// [`Self::iterate`], also passing each update's column family id (0: the default
    /// family) first.
    ///
    /// # Errors
    /// As [`Self::iterate`].
    fn iterate_cf(
        &self,
        f: impl FnMut(u32, SequenceNumber, ValueKind, &[u8], &[u8]),
    ) -> Result<(), BadBatch>;
}

impl WriteBatchInternal for WriteBatch {
    fn sequence(&self) -> SequenceNumber {
        get_fixed64(&self.rep, 0).unwrap_or(0)
    }

    fn set_sequence(&mut self, seq: SequenceNumber) {
        if let Some(c) = self.rep.get_mut(0..8) {
            c.copy_from_slice(&seq.to_le_bytes());
        }
    }

    fn data(&self) -> &[u8] {
        &self.rep
    }

    fn add_record(&mut self, family: u32, kind: ValueKind, key: &[u8], value: &[u8]) {
        match kind {
            ValueKind::Delete => self.record(family, kind, key, None),
            ValueKind::RangeDelete => self.range(family, key, value),
            ValueKind::Put | ValueKind::Merge => self.record(family, kind, key, Some(value)),
        }
    }

    fn limit_exceeded(&self) -> Option<&LimitExceeded> {
        self.over_limit.as_ref()
    }

    fn from_data(data: Vec<u8>) -> Result<WriteBatch, BadBatch> {
        if data.len() < HEADER {
            return Err(BadBatch("batch shorter than header"));
        }
        let mut b = WriteBatch {
            rep: data,
            over_limit: None,
            inverted_range: None,
            families: Families::default(),
            deadlines: Vec::new(),
        };
        // The first violation in record order, exactly as `record` would find it.
        let mut over = None;
        let mut index = 0u32;
        let mut len = HEADER;
        let mut families = Families::default();
        b.iterate_cf(|family, _, kind, key, value| {
            families.note(family, kind);
            let value = (kind != ValueKind::Delete).then_some(value);
            len = len.saturating_add(record_len(family, key, value));
            // A range's end becomes a key: held to the key limit, as `delete_range`
            // holds it.
            let end_over = (kind == ValueKind::RangeDelete)
                .then(|| value.filter(|e| e.len() > MAX_KEY_LEN))
                .flatten()
                .map(|e| LimitExceeded {
                    what: "key",
                    record: index,
                    len: e.len(),
                    max: MAX_KEY_LEN,
                });
            if over.is_none() {
                over = end_over
                    .or_else(|| LimitExceeded::check(index, key, value))
                    .or_else(|| {
                        (len > MAX_BATCH_LEN).then_some(LimitExceeded {
                            what: "batch",
                            record: index,
                            len,
                            max: MAX_BATCH_LEN,
                        })
                    });
            }
            index = index.saturating_add(1);
        })?;
        b.over_limit = over;
        b.families = families;
        // An inverted range in a WAL record replays as written (it deletes nothing).
        Ok(b)
    }

    fn iterate_cf(
        &self,
        mut f: impl FnMut(u32, SequenceNumber, ValueKind, &[u8], &[u8]),
    ) -> Result<(), BadBatch> {
        let mut d = Decoder::new(self.rep.get(HEADER..).unwrap_or_default());
        let mut seq = self.sequence();
        let mut n = 0u32;
        while !d.is_empty() {
            let byte = d.u8().ok_or(BadBatch("bad record kind"))?;
            let family = if byte & FAMILY_FLAG == 0 {
                0
            } else {
                match d.varint32() {
                    // Family 0 is never written with the flag: one encoding per record.
                    Some(id) if id != 0 => id,
                    _ => return Err(BadBatch("bad record family")),
                }
            };
            let kind =
                ValueKind::from_u8(byte & !FAMILY_FLAG).ok_or(BadBatch("bad record kind"))?;
            let key = d.length_prefixed().ok_or(BadBatch("truncated key"))?;
            let value = match kind {
                ValueKind::Delete => &[][..],
                ValueKind::Put | ValueKind::Merge | ValueKind::RangeDelete => {
                    d.length_prefixed().ok_or(BadBatch("truncated value"))?
                }
            };
            if seq > MAX_SEQUENCE {
                // A corrupt header near u64::MAX would overflow `seq` and mint keys
                // whose trailer cannot hold the sequence number.
                return Err(BadBatch("sequence number out of range"));
            }
            f(family, seq, kind, key, value);
            seq += 1;
            n = n.checked_add(1).ok_or(BadBatch("record count mismatch"))?;
        }
        if n != self.count() {
            return Err(BadBatch("record count mismatch"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Format version 1 bytes of a batch at sequence 0x0102030405 holding
    /// `put a=1`, `delete bc`, `put k=""`. Frozen: never edit; a format change adds a new
    /// fixture.
    const BATCH_FIXTURE_V1: &[u8] = &[
        0x05, 0x04, 0x03, 0x02, 0x01, 0x00, 0x00, 0x00, // sequence, LE u64
        0x03, 0x00, 0x00, 0x00, // count, LE u32
        0x01, 0x01, b'a', 0x01, b'1', // Put, key len, key, value len, value
        0x00, 0x02, b'b', b'c', // Delete, key len, key
        0x01, 0x01, b'k', 0x00, // Put, key len, key, empty value
    ];

    #[test]
    fn frozen_fixture_v1() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1");
        b.delete(b"bc");
        b.put(b"k", b"");
        b.set_sequence(0x01_0203_0405);
        assert_eq!(b.data(), BATCH_FIXTURE_V1, "batch encoding changed");
        assert_eq!(WriteBatch::from_data(BATCH_FIXTURE_V1.to_vec()), Ok(b));
    }

    /// Format version 1 bytes of a batch at sequence 7 holding `merge a+=x` and
    /// `put b=y`: the `Merge` kind (2) was reserved in the first format and is written
    /// since merge operators exist. Frozen.
    const BATCH_FIXTURE_V1_MERGE: &[u8] = &[
        0x07, 0, 0, 0, 0, 0, 0, 0, // sequence
        0x02, 0x00, 0x00, 0x00, // count
        0x02, 0x01, b'a', 0x01, b'x', // Merge, key len, key, operand len, operand
        0x01, 0x01, b'b', 0x01, b'y', // Put
    ];

    /// Format version 2 bytes of a batch at sequence 9 holding `put a=1` in the
    /// default family and `delete b` and `merge c+=x` in family 3: the default
    /// family's record is the v1 record, the others carry the family flag and id.
    /// Frozen.
    const BATCH_FIXTURE_V2_FAMILIES: &[u8] = &[
        0x09, 0, 0, 0, 0, 0, 0, 0, // sequence
        0x03, 0x00, 0x00, 0x00, // count
        0x01, 0x01, b'a', 0x01, b'1', // Put (default family)
        0x80, 0x03, 0x01, b'b', // Delete | FAMILY_FLAG, family 3, key
        0x82, 0x03, 0x01, b'c', 0x01, b'x', // Merge | FAMILY_FLAG, family 3, key, operand
    ];

    #[test]
    fn frozen_fixture_v2_families() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1");
        b.record(3, ValueKind::Delete, b"b", None);
        b.record(3, ValueKind::Merge, b"c", Some(b"x"));
        b.set_sequence(9);
        assert!(b.has_families());
        assert_eq!(
            b.data(),
            BATCH_FIXTURE_V2_FAMILIES,
            "batch encoding changed"
        );
        let back = WriteBatch::from_data(BATCH_FIXTURE_V2_FAMILIES.to_vec()).unwrap();
        assert_eq!(back, b);
        let mut seen = Vec::new();
        back.iterate_cf(|cf, seq, kind, k, v| seen.push((cf, seq, kind, k.to_vec(), v.to_vec())))
            .unwrap();
        assert_eq!(
            seen,
            vec![
                (0, 9, ValueKind::Put, b"a".to_vec(), b"1".to_vec()),
                (3, 10, ValueKind::Delete, b"b".to_vec(), vec![]),
                (3, 11, ValueKind::Merge, b"c".to_vec(), b"x".to_vec()),
            ]
        );
        // The flag with family 0, or with no id, is not a record.
        for bad in [&[0x80u8, 0x00, 0x01, b'b'][..], &[0x81u8][..]] {
            let mut data = BATCH_FIXTURE_V2_FAMILIES[..12].to_vec();
            data[8] = 1;
            data.extend_from_slice(bad);
            assert!(WriteBatch::from_data(data).is_err(), "{bad:?}");
        }
        // The record length counts the family id, so the batch-size limit holds.
        let mut big = WriteBatch::new();
        big.record(300, ValueKind::Put, b"k", Some(b"v"));
        assert_eq!(
            big.approximate_size(),
            HEADER + record_len(300, b"k", Some(b"v"))
        );
    }

    #[test]
    fn a_range_end_is_held_to_the_key_limit() {
        let mut b = WriteBatch::new();
        b.delete_range(b"a", &vec![b'z'; MAX_KEY_LEN + 1]);
        let e = b.check_limits().unwrap_err().to_string();
        assert!(e.contains("key too large"), "{e}");
        assert!(b.is_empty());
        let mut ok = WriteBatch::new();
        ok.delete_range(b"a", &vec![b'z'; MAX_KEY_LEN]);
        assert!(ok.check_limits().is_ok());
    }

    #[test]
    fn frozen_fixture_v1_merge() {
        let mut b = WriteBatch::new();
        b.merge(b"a", b"x");
        b.put(b"b", b"y");
        b.set_sequence(7);
        assert!(b.has_merge());
        assert_eq!(b.data(), BATCH_FIXTURE_V1_MERGE, "batch encoding changed");
        let back = WriteBatch::from_data(BATCH_FIXTURE_V1_MERGE.to_vec()).unwrap();
        assert!(back.has_merge());
        assert_eq!(back, b);
        let mut seen = Vec::new();
        back.iterate(|seq, kind, k, v| seen.push((seq, kind, k.to_vec(), v.to_vec())))
            .unwrap();
        assert_eq!(
            seen,
            vec![
                (7, ValueKind::Merge, b"a".to_vec(), b"x".to_vec()),
                (8, ValueKind::Put, b"b".to_vec(), b"y".to_vec()),
            ]
        );
        let mut plain = WriteBatch::new();
        plain.put(b"b", b"y");
        assert!(!plain.has_merge());
        plain.append(&b);
        assert!(plain.has_merge());
        plain.clear();
        assert!(!plain.has_merge());
    }

    #[test]
    fn round_trip_and_validation() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1");
        b.delete(b"b");
        b.put(b"c", b"");
        b.set_sequence(100);
        let again = WriteBatch::from_data(b.data().to_vec()).expect("valid");
        let mut seen = Vec::new();
        again
            .iterate(|s, k, key, v| seen.push((s, k, key.to_vec(), v.to_vec())))
            .expect("iterate");
        assert_eq!(
            seen,
            vec![
                (100, ValueKind::Put, b"a".to_vec(), b"1".to_vec()),
                (101, ValueKind::Delete, b"b".to_vec(), vec![]),
                (102, ValueKind::Put, b"c".to_vec(), vec![]),
            ]
        );
        let d = b.data();
        assert!(WriteBatch::from_data(d[..d.len() - 1].to_vec()).is_err());
        let mut wrong_count = d.to_vec();
        wrong_count[8] = 9;
        assert!(WriteBatch::from_data(wrong_count).is_err());
    }

    #[test]
    fn records_over_a_limit_are_not_added_and_the_first_violation_is_kept() {
        let big_key = vec![b'k'; MAX_KEY_LEN + 1];
        let mut b = WriteBatch::new();
        b.put(b"a", b"1");
        b.put(&big_key, b"v");
        b.put(b"c", b"3");
        b.delete(&big_key);
        assert_eq!(b.count(), 1, "nothing after the violation is added");
        let over = b.limit_exceeded().expect("violation recorded");
        assert_eq!(
            (over.what, over.record, over.len),
            ("key", 1, MAX_KEY_LEN + 1)
        );
        let err = b.check_limits().expect_err("over the key limit");
        assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
        let msg = err.to_string();
        assert!(
            msg.contains(&format!(
                "key too large: len=`{}` max=`{MAX_KEY_LEN}`",
                MAX_KEY_LEN + 1
            )),
            "{msg}"
        );
        b.clear();
        assert!(b.check_limits().is_ok());

        // At the key limit and an empty value: accepted.
        b.put(&big_key[..MAX_KEY_LEN], b"");
        b.delete(&big_key[..MAX_KEY_LEN]);
        assert!(b.check_limits().is_ok());
        assert_eq!(b.count(), 2);
    }

    #[test]
    fn value_and_batch_limits_at_one_over_and_at() {
        let value = vec![7u8; MAX_VALUE_LEN + 1];
        let mut b = WriteBatch::new();
        b.put(b"k", &value);
        let over = b.limit_exceeded().expect("over");
        assert_eq!(
            (over.what, over.len, over.max),
            ("value", MAX_VALUE_LEN + 1, MAX_VALUE_LEN)
        );
        assert_eq!(b.approximate_size(), HEADER, "the value was not copied");

        // Three maximal values fit in MAX_BATCH_LEN; a fourth does not.
        let mut b = WriteBatch::new();
        let at = &value[..MAX_VALUE_LEN];
        for i in 0..3u8 {
            b.put(&[i], at);
        }
        assert!(b.check_limits().is_ok());
        b.put(b"x", at);
        let over = b.limit_exceeded().expect("batch over");
        assert_eq!(
            (over.what, over.record, over.max),
            ("batch", 3, MAX_BATCH_LEN)
        );
        assert!(over.len > MAX_BATCH_LEN);
        assert_eq!(b.count(), 3);
        assert!(b.approximate_size() <= MAX_BATCH_LEN);

        // `append` obeys the same bound and carries a violation over.
        let mut one = WriteBatch::new();
        one.put(b"y", at);
        let mut fits = WriteBatch::new();
        fits.put(b"z", b"small");
        fits.append(&one);
        assert!(fits.check_limits().is_ok());
        assert_eq!(fits.count(), 2);
        let mut full = WriteBatch::new();
        for i in 0..3u8 {
            full.put(&[i], at);
        }
        full.append(&one);
        assert_eq!(full.limit_exceeded().map(|o| o.what), Some("batch"));
        assert_eq!(full.count(), 3);
        let mut c = WriteBatch::new();
        c.put(b"first", b"1");
        c.append(&b);
        assert_eq!(
            c.limit_exceeded().map(|o| (o.what, o.record)),
            Some(("batch", 4))
        );
        assert_eq!(c.count(), 1, "a violating batch is not appended");
    }

    #[test]
    fn from_data_accepts_an_old_record_over_a_limit_and_records_it() {
        // Bytes a build without limits could have logged: a value one over the limit.
        let value = vec![1u8; MAX_VALUE_LEN + 1];
        let mut rep = vec![0u8; HEADER];
        rep[8] = 1;
        rep.push(ValueKind::Put as u8);
        put_length_prefixed(&mut rep, b"k");
        put_length_prefixed(&mut rep, &value);
        let b = WriteBatch::from_data(rep).expect("well formed: replays");
        assert_eq!(b.limit_exceeded().map(|o| o.what), Some("value"));
        let mut seen = 0;
        b.iterate(|_, _, _, v| seen = v.len()).expect("iterate");
        assert_eq!(seen, MAX_VALUE_LEN + 1);
        assert!(WriteBatch::from_data(BATCH_FIXTURE_V1.to_vec())
            .expect("fixture")
            .check_limits()
            .is_ok());
    }

    #[test]
    fn sequence_numbers_past_the_maximum_are_rejected() {
        // Found by the `batch` fuzz target: a header sequence near u64::MAX overflowed.
        for (seq, records) in [(u64::MAX, 2u32), (MAX_SEQUENCE, 2), (MAX_SEQUENCE + 1, 1)] {
            let mut b = WriteBatch::new();
            for _ in 0..records {
                b.delete(b"k");
            }
            b.set_sequence(seq);
            assert!(WriteBatch::from_data(b.data().to_vec()).is_err(), "{seq}");
        }
        let mut last = WriteBatch::new();
        last.put(b"k", b"v");
        last.set_sequence(MAX_SEQUENCE);
        assert!(WriteBatch::from_data(last.data().to_vec()).is_ok());
    }
}
