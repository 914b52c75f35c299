//! Version edits: the delta between two versions, and the MANIFEST record that stores it.
//!
//! Role: flushes, compactions and recovery build a [`VersionEdit`]; the version set
//! appends its encoding to the MANIFEST (`version::manifest`) and then applies it to the
//! current [`super::Version`]. At open, recovery decodes every record and replays it.
//! A *snapshot edit* (every live file as a new file, plus the three counters) starts
//! each MANIFEST.
//!
//! # Format (format version 1)
//! An edit is a sequence of fields, each a varint **tag** followed by its payload. All
//! integers are LEB128 varints (`crate::coding`); `bytes` is a varint length followed by
//! that many bytes. Fields appear in the order below; the decoder accepts any order but
//! rejects a repeated scalar field.
//!
//! | tag | name               | payload                                       | since |
//! |-----|--------------------|-----------------------------------------------|-------|
//! | 0   | (invalid)          | never written; decoding it is an error        | —     |
//! | 1   | `log_number`       | varint64                                      | v1    |
//! | 2   | `next_file_number` | varint64                                      | v1    |
//! | 3   | `last_sequence`    | varint64                                      | v1    |
//! | 4   | `deleted_file`     | level: varint32, number: varint64             | v1    |
//! | 5   | `new_file`         | level: varint32, body: bytes (sub-fields)     | v1    |
//! | 6   | `column_family`    | varint32 id; written only when not 0          | v2    |
//! | 7   | `column_family_add`| bytes: the family's name (UTF-8)              | v2    |
//! | 8   | `column_family_drop` | (none)                                      | v2    |
//! | 9   | `max_column_family`| varint32: the largest id ever given           | v2    |
//! | 10  | `virtual_parent`   | body: bytes (new-file sub-fields, no level)   | v3    |
//! | 11  | `family_record`    | key: varint32, value: bytes                   | v4    |
//! | `t \| 0x2000` | safe-to-ignore | bytes (skipped by readers that do not know `t`) | v1 |
//!
//! Retired tags: none yet. A retired tag stays listed here forever and is never reused.
//!
//! ## Column families (format version 2)
//! An edit belongs to one column family, the default one (id 0) unless tag 6 names
//! another; `log_number`, `deleted_file` and `new_file` are that family's. A MANIFEST
//! of a database without families never holds tags 6 to 9, so it is byte for byte a
//! v1 MANIFEST, and a v1 reader refuses a v2 edit (unknown tag) rather than apply a
//! family's files to the default tree. `next_file_number`, `last_sequence` and
//! `max_column_family` are database-wide whatever the family. Adding a family is an
//! edit with tags 6 and 7 (and its log number); dropping one, tags 6 and 8. Family
//! ids are never reused: `max_column_family` survives drops, so a WAL record of a
//! dropped family is recognised at replay (and skipped).
//!
//! A top-level tag with bit 13 (`0x2000`, [`TAG_SAFE_TO_IGNORE`]) set carries a
//! length-prefixed payload; a reader that does not know it skips it. Any other unknown
//! tag is an error (it may change the meaning of the edit), as in RocksDB.
//!
//! ## Virtual tables (format version 3)
//! A virtual table (`version::virtual_table`) is a `new_file` whose body has sub-tag 11
//! (its parents, in read order) and, unless every slice is the table's whole range
//! with the size split evenly, sub-tag 13 (each slice's range and bytes). Tag 10 carries
//! a parent's full new-file body, once, in the edit whose version first names it, and
//! in every snapshot edit while it is live; like `new_file` it belongs to the edit's
//! family. A parent has no level: it left every level when it became a parent. Tag 10
//! is not safe to ignore, so a build without it refuses the MANIFEST at once ("unknown
//! edit tag") instead of failing later on a table it cannot find.
//!
//! ## Family records (format version 4)
//! Tag 11 sets one *record* of the edit's family: an opaque value under a numeric key,
//! which the version keeps (`Version::record`) until an edit sets the key again, and
//! every snapshot edit repeats while the family lives. The engine does not read the
//! values: they are the durable state of a component that owns a family (what its
//! values mean, how its levels are laid out), changed atomically with the family's
//! files when an edit carries both. Keys are allocated to owners: 1–999 to the
//! crate's own (the family kinds of `db::family_kind`, each naming its keys where it
//! defines them and claiming a family by its keys: 1 and 2 for tables; 3 for the
//! value layout of `expiry`), 1000 and up to tests. One edit sets
//! a key at most once. A database that never sets a record writes no tag 11, so its MANIFEST
//! is byte for byte what format version 3 writes. Tag 11 is not safe to ignore: a
//! reader that skipped it would open the family without its owner's state.
//!
//! ## New-file body
//! The body of tag 5 is a sequence of sub-fields `sub_tag: varint32, value: bytes`, so
//! every sub-field can be skipped by length and new ones can be added later:
//!
//! | sub-tag | field            | value encoding                             | required |
//! |---------|------------------|--------------------------------------------|----------|
//! | 0       | (invalid)        | —                                          | —        |
//! | 1       | `number`         | varint64                                   | yes      |
//! | 2       | `path_id`        | varint32                                   | yes      |
//! | 3       | `size`           | varint64                                   | yes      |
//! | 4       | `smallest`       | raw internal key (>= 8 bytes, valid kind)  | yes      |
//! | 5       | `largest`        | raw internal key (>= 8 bytes, valid kind)  | yes      |
//! | 6       | `smallest_seqno` | varint64                                   | yes      |
//! | 7       | `largest_seqno`  | varint64                                   | yes      |
//! | 8       | `num_entries`    | varint64                                   | yes      |
//! | 9       | `num_deletions`  | varint64                                   | yes      |
//! | 10      | `column_group`   | varint32                                   | yes      |
//! | 11      | virtual parents  | count: varint64, then count × varint64     | no: absent = [`FileKind::Real`] |
//! | 12      | `num_range_deletions` | varint64, written only when > 0 (not safe to ignore: a reader that skipped it would ignore the file's range tombstones on iteration) | no: absent = 0 |
//! | 13      | virtual slices   | one per parent of sub-tag 11, in its order: smallest user key: bytes, largest user key: bytes, referenced bytes: varint64 (v3; not safe to ignore) | no: absent = each slice is the table's range, the size split evenly, the remainder to the first |
//! | 78 (14 \| 0x40) | `creation_time` | varint64 seconds since the Unix epoch, written only when > 0 (safe to ignore: a reader that skips it only loses the table's age, which periodic compaction uses) | no: absent = 0, unknown |
//!
//! Sub-tags with bit 6 (`0x40`, [`SUB_TAG_SAFE_TO_IGNORE`]) set may be skipped by a
//! reader that does not know them; any other unknown sub-tag is an error. Retired
//! sub-tags: none yet. Each value must be consumed exactly by its decoder (trailing
//! bytes inside a sub-field are corruption).
//!
//! ## Worked example
//! `VersionEdit { log_number: Some(7), ..Default::default() }` encodes as `01 07`;
//! `deleted_files: vec![(2, 300)]` adds `04 02 ac 02`.
//!
//! # Invariants
//! 1. Tag and sub-tag numbers are append-only and zero is never valid, so zeroed or
//!    truncated space cannot decode as a plausible edit.
//! 2. `decode(encode(e)) == e` for every edit whose keys are valid internal keys, and
//!    `encode` is deterministic (the frozen fixture in the tests pins the bytes).
//! 3. `decode` never panics and never allocates more than a small multiple of its input
//!    length, whatever the input (it is a fuzz target).
//! 4. Changing the format means new tags (or safe-to-ignore ones) plus a new frozen
//!    fixture; existing tags never change meaning.
//!
//! Concurrency: plain data; `Send + Sync`.
//!
//! See also: `version::manifest` (the log that holds these records), the
//! `frozen_fixture_v1` test below.

use super::file_meta::{FileKind, FileMetaData};
use super::virtual_table::{whole_range_slices, Slice};
use crate::coding::{put_length_prefixed, put_varint32, put_varint64, Decoder};
use crate::key::{parse_internal_key, user_key};

/// Top-level tag bit: the field carries a length-prefixed payload that readers which do
/// not know the tag may skip.
pub const TAG_SAFE_TO_IGNORE: u64 = 1 << 13;

/// New-file sub-tag bit: a reader that does not know the sub-tag may skip it.
pub const SUB_TAG_SAFE_TO_IGNORE: u32 = 1 << 6;

/// Top-level tags. On disk: append only, never renumber.
mod tag {
    pub const LOG_NUMBER: u64 = 1;
    pub const NEXT_FILE_NUMBER: u64 = 2;
    pub const LAST_SEQUENCE: u64 = 3;
    pub const DELETED_FILE: u64 = 4;
    pub const NEW_FILE: u64 = 5;
    pub const COLUMN_FAMILY: u64 = 6;
    pub const COLUMN_FAMILY_ADD: u64 = 7;
    pub const COLUMN_FAMILY_DROP: u64 = 8;
    pub const MAX_COLUMN_FAMILY: u64 = 9;
    pub const VIRTUAL_PARENT: u64 = 10;
    pub const FAMILY_RECORD: u64 = 11;
}

/// New-file sub-tags. On disk: append only, never renumber.
mod sub {
    pub const NUMBER: u32 = 1;
    pub const PATH_ID: u32 = 2;
    pub const SIZE: u32 = 3;
    pub const SMALLEST: u32 = 4;
    pub const LARGEST: u32 = 5;
    pub const SMALLEST_SEQNO: u32 = 6;
    pub const LARGEST_SEQNO: u32 = 7;
    pub const NUM_ENTRIES: u32 = 8;
    pub const NUM_DELETIONS: u32 = 9;
    pub const COLUMN_GROUP: u32 = 10;
    pub const VIRTUAL_PARENTS: u32 = 11;
    pub const NUM_RANGE_DELETIONS: u32 = 12;
    pub const VIRTUAL_SLICES: u32 = 13;
    /// Safe to ignore: a reader that skips it only loses the table's age.
    pub const CREATION_TIME: u32 = 14 | super::SUB_TAG_SAFE_TO_IGNORE;
}

/// The change from one version to the next.
///
/// Built by the flush or compaction that produced it (single owner), then encoded into
/// the MANIFEST and applied with [`super::Version::apply`]. Files are deleted before
/// new ones are added, so deleting `(1, n)` and adding `(2, n)` moves file `n` down a
/// level (a trivial move).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VersionEdit {
    /// WAL files numbered below this are no longer needed (their memtables are flushed).
    pub log_number: Option<u64>,
    /// The next unused file number.
    pub next_file_number: Option<u64>,
    /// The largest sequence number written to any SSTable or WAL covered by this state.
    pub last_sequence: Option<u64>,
    /// Files removed: `(level, file number)`.
    pub deleted_files: Vec<(usize, u64)>,
    /// Files added: `(level, metadata)`.
    pub new_files: Vec<(usize, FileMetaData)>,
    /// Parents of virtual tables that the version learns of with this edit (ordinary
    /// tables, in no level).
    pub new_parents: Vec<FileMetaData>,
    /// The column family this edit changes (0: the default family).
    pub column_family: u32,
    /// Creates family `column_family` with this name.
    pub add_column_family: Option<String>,
    /// Drops family `column_family`.
    pub drop_column_family: bool,
    /// The largest family id ever given (ids are not reused).
    pub max_column_family: Option<u32>,
    /// Records of the family set by this edit: `(key, value)`, each key at most once
    /// (format version 4, module docs).
    pub records: Vec<(u32, Vec<u8>)>,
}

impl VersionEdit {
    /// Appends the encoding of this edit (format version 1, see the module docs) to `dst`.
    ///
    /// Levels are written as varint32; a level above `u32::MAX` is a broken invariant
    /// (versions have at most 32 levels, debug-asserted) and is clamped to a value the
    /// decoder's version refuses (see `level_u32`). Key and parent-list lengths are
    /// varint64, so nothing else can be truncated.
    pub fn encode(&self, dst: &mut Vec<u8>) {
        if self.column_family != 0 {
            put_varint64(dst, tag::COLUMN_FAMILY);
            put_varint32(dst, self.column_family);
        }
        if let Some(name) = &self.add_column_family {
            put_varint64(dst, tag::COLUMN_FAMILY_ADD);
            put_length_prefixed(dst, name.as_bytes());
        }
        if self.drop_column_family {
            put_varint64(dst, tag::COLUMN_FAMILY_DROP);
        }
        if let Some(v) = self.max_column_family {
            put_varint64(dst, tag::MAX_COLUMN_FAMILY);
            put_varint32(dst, v);
        }
        if let Some(v) = self.log_number {
            put_varint64(dst, tag::LOG_NUMBER);
            put_varint64(dst, v);
        }
        if let Some(v) = self.next_file_number {
            put_varint64(dst, tag::NEXT_FILE_NUMBER);
            put_varint64(dst, v);
        }
        if let Some(v) = self.last_sequence {
            put_varint64(dst, tag::LAST_SEQUENCE);
            put_varint64(dst, v);
        }
        for &(level, number) in &self.deleted_files {
            put_varint64(dst, tag::DELETED_FILE);
            put_varint32(dst, level_u32(level));
            put_varint64(dst, number);
        }
        let mut body = Vec::new();
        for (level, f) in &self.new_files {
            put_varint64(dst, tag::NEW_FILE);
            put_varint32(dst, level_u32(*level));
            body.clear();
            encode_new_file(&mut body, f);
            put_length_prefixed(dst, &body);
        }
        for f in &self.new_parents {
            put_varint64(dst, tag::VIRTUAL_PARENT);
            body.clear();
            encode_new_file(&mut body, f);
            put_length_prefixed(dst, &body);
        }
        for (key, value) in &self.records {
            put_varint64(dst, tag::FAMILY_RECORD);
            put_varint32(dst, *key);
            put_length_prefixed(dst, value);
        }
    }

    /// Decodes an edit encoded by [`VersionEdit::encode`] (any format version this build
    /// knows).
    ///
    /// # Errors
    /// A static description of the first problem: truncation, an unknown tag not marked
    /// safe to ignore, a repeated scalar field, a missing required new-file field, or an
    /// invalid internal key. Never panics.
    pub fn decode(src: &[u8]) -> Result<VersionEdit, &'static str> {
        let mut d = Decoder::new(src);
        let mut edit = VersionEdit::default();
        let mut record_keys = std::collections::HashSet::new();
        while !d.is_empty() {
            let t = d.varint64().ok_or("truncated edit tag")?;
            match t {
                tag::LOG_NUMBER => set_once(&mut edit.log_number, &mut d, "repeated log_number")?,
                tag::NEXT_FILE_NUMBER => set_once(
                    &mut edit.next_file_number,
                    &mut d,
                    "repeated next_file_number",
                )?,
                tag::LAST_SEQUENCE => {
                    set_once(&mut edit.last_sequence, &mut d, "repeated last_sequence")?
                }
                tag::DELETED_FILE => {
                    let level = d.varint32().ok_or("truncated deleted_file level")?;
                    let number = d.varint64().ok_or("truncated deleted_file number")?;
                    edit.deleted_files.push((level_usize(level)?, number));
                }
                tag::NEW_FILE => {
                    let level = d.varint32().ok_or("truncated new_file level")?;
                    let body = d.length_prefixed().ok_or("truncated new_file body")?;
                    edit.new_files
                        .push((level_usize(level)?, decode_new_file(body)?));
                }
                tag::VIRTUAL_PARENT => {
                    let body = d.length_prefixed().ok_or("truncated virtual_parent body")?;
                    let parent = decode_new_file(body)?;
                    if parent.kind != FileKind::Real {
                        return Err("a virtual_parent is itself virtual");
                    }
                    edit.new_parents.push(parent);
                }
                tag::COLUMN_FAMILY => {
                    if edit.column_family != 0 {
                        return Err("repeated column_family");
                    }
                    match d.varint32().ok_or("truncated column_family")? {
                        0 => return Err("column_family 0 is never written"),
                        id => edit.column_family = id,
                    }
                }
                tag::COLUMN_FAMILY_ADD => {
                    let name = d.length_prefixed().ok_or("truncated column_family_add")?;
                    let name =
                        std::str::from_utf8(name).map_err(|_| "column family name is not UTF-8")?;
                    if edit.add_column_family.replace(name.to_owned()).is_some() {
                        return Err("repeated column_family_add");
                    }
                }
                tag::COLUMN_FAMILY_DROP => {
                    if std::mem::replace(&mut edit.drop_column_family, true) {
                        return Err("repeated column_family_drop");
                    }
                }
                tag::FAMILY_RECORD => {
                    let key = d.varint32().ok_or("truncated family_record key")?;
                    let value = d.length_prefixed().ok_or("truncated family_record value")?;
                    if !record_keys.insert(key) {
                        return Err("repeated family_record key");
                    }
                    edit.records.push((key, value.to_vec()));
                }
                tag::MAX_COLUMN_FAMILY => {
                    let v = d.varint32().ok_or("truncated max_column_family")?;
                    if edit.max_column_family.replace(v).is_some() {
                        return Err("repeated max_column_family");
                    }
                }
                0 => return Err("invalid edit tag 0"),
                t if t & TAG_SAFE_TO_IGNORE != 0 => {
                    d.length_prefixed()
                        .ok_or("truncated safe-to-ignore edit field")?;
                }
                _ => return Err("unknown edit tag"),
            }
        }
        Ok(edit)
    }
}

/// A level as written on disk. Levels are below `num_levels <= 32`: every edit is
/// applied to a version (which refuses a level out of range) before it is encoded
/// (`db::files::log_and_apply`), so the conversion is exact. Were that ever broken, the
/// clamp to `u32::MAX` would decode as a level out of range (corruption reported at
/// open), never as a different valid level.
fn level_u32(level: usize) -> u32 {
    debug_assert!(level < 1 << 16, "level out of range: level=`{level}`");
    u32::try_from(level).unwrap_or(u32::MAX)
}

/// A level as decoded. Levels the encoder could not have written (it asserts
/// `< 1 << 16`; versions have at most 32) are refused here, so whatever decodes also
/// re-encodes (a fuzz finding: a `deleted_file` at level 720,895 tripped the encoder's
/// assertion); smaller out-of-range levels are refused by `Version::apply`.
fn level_usize(level: u32) -> Result<usize, &'static str> {
    if level >= 1 << 16 {
        return Err("level out of range");
    }
    usize::try_from(level).map_err(|_| "level does not fit in usize")
}

/// Reads one varint into `slot`; `repeated` is the error if `slot` was already set.
fn set_once(
    slot: &mut Option<u64>,
    d: &mut Decoder<'_>,
    repeated: &'static str,
) -> Result<(), &'static str> {
    let v = d.varint64().ok_or("truncated edit scalar field")?;
    if slot.replace(v).is_some() {
        return Err(repeated);
    }
    Ok(())
}

fn put_sub(dst: &mut Vec<u8>, sub_tag: u32, value: &[u8]) {
    put_varint32(dst, sub_tag);
    put_length_prefixed(dst, value);
}

fn put_sub_u64(dst: &mut Vec<u8>, scratch: &mut Vec<u8>, sub_tag: u32, v: u64) {
    scratch.clear();
    put_varint64(scratch, v);
    put_sub(dst, sub_tag, scratch);
}

fn encode_new_file(dst: &mut Vec<u8>, f: &FileMetaData) {
    let mut s = Vec::with_capacity(16);
    put_sub_u64(dst, &mut s, sub::NUMBER, f.number);
    put_sub_u64(dst, &mut s, sub::PATH_ID, u64::from(f.path_id));
    put_sub_u64(dst, &mut s, sub::SIZE, f.size);
    put_sub(dst, sub::SMALLEST, &f.smallest);
    put_sub(dst, sub::LARGEST, &f.largest);
    put_sub_u64(dst, &mut s, sub::SMALLEST_SEQNO, f.smallest_seqno);
    put_sub_u64(dst, &mut s, sub::LARGEST_SEQNO, f.largest_seqno);
    put_sub_u64(dst, &mut s, sub::NUM_ENTRIES, f.num_entries);
    put_sub_u64(dst, &mut s, sub::NUM_DELETIONS, f.num_deletions);
    put_sub_u64(dst, &mut s, sub::COLUMN_GROUP, u64::from(f.column_group));
    if let FileKind::Virtual { slices } = &f.kind {
        s.clear();
        put_varint64(&mut s, slices.len() as u64);
        for slice in slices {
            put_varint64(&mut s, slice.parent);
        }
        put_sub(dst, sub::VIRTUAL_PARENTS, &s);
    }
    if f.num_range_deletions > 0 {
        put_sub_u64(dst, &mut s, sub::NUM_RANGE_DELETIONS, f.num_range_deletions);
    }
    if f.creation_time > 0 {
        put_sub_u64(dst, &mut s, sub::CREATION_TIME, f.creation_time);
    }
    if let FileKind::Virtual { slices } = &f.kind {
        let parents: Vec<u64> = slices.iter().map(|s| s.parent).collect();
        let whole = whole_range_slices(
            &parents,
            f.smallest_user_key(),
            f.largest_user_key(),
            f.size,
        );
        if *slices != whole {
            s.clear();
            for slice in slices {
                put_length_prefixed(&mut s, &slice.smallest);
                put_length_prefixed(&mut s, &slice.largest);
                put_varint64(&mut s, slice.bytes);
            }
            put_sub(dst, sub::VIRTUAL_SLICES, &s);
        }
    }
}

/// Decodes a value that must be exactly one varint.
fn exact_varint64(v: &[u8]) -> Result<u64, &'static str> {
    let mut d = Decoder::new(v);
    let x = d.varint64().ok_or("bad new_file varint")?;
    if !d.is_empty() {
        return Err("trailing bytes in new_file varint");
    }
    Ok(x)
}

fn exact_varint32(v: &[u8]) -> Result<u32, &'static str> {
    u32::try_from(exact_varint64(v)?).map_err(|_| "new_file field exceeds 32 bits")
}

fn internal_key(v: &[u8]) -> Result<Vec<u8>, &'static str> {
    parse_internal_key(v).ok_or("bad internal key in new_file")?;
    Ok(v.to_vec())
}

/// Decodes the slice ranges and bytes of sub-tag 13 onto `slices` (one per parent, in
/// order; their ranges and bytes are replaced).
fn slice_ranges(v: &[u8], slices: &mut [Slice]) -> Result<(), &'static str> {
    let mut d = Decoder::new(v);
    for slice in slices.iter_mut() {
        slice.smallest = d
            .length_prefixed()
            .ok_or("truncated virtual slice")?
            .to_vec();
        slice.largest = d
            .length_prefixed()
            .ok_or("truncated virtual slice")?
            .to_vec();
        slice.bytes = d.varint64().ok_or("truncated virtual slice bytes")?;
    }
    if !d.is_empty() {
        return Err("trailing bytes in virtual slices");
    }
    Ok(())
}

/// Decodes the virtual-parents list; allocation is bounded by the value's length.
fn parents(v: &[u8]) -> Result<Vec<u64>, &'static str> {
    let mut d = Decoder::new(v);
    let n = d.varint64().ok_or("bad virtual parent count")?;
    if n > v.len() as u64 {
        return Err("virtual parent count exceeds its bytes");
    }
    let mut out = Vec::with_capacity(usize::try_from(n).unwrap_or(0));
    for _ in 0..n {
        out.push(d.varint64().ok_or("truncated virtual parent")?);
    }
    if !d.is_empty() {
        return Err("trailing bytes in virtual parents");
    }
    Ok(out)
}

fn put_field<T>(slot: &mut Option<T>, v: T) -> Result<(), &'static str> {
    if slot.replace(v).is_some() {
        return Err("repeated new_file sub-field");
    }
    Ok(())
}

fn decode_new_file(body: &[u8]) -> Result<FileMetaData, &'static str> {
    let mut d = Decoder::new(body);
    let (mut number, mut path_id, mut size) = (None, None, None);
    let (mut smallest, mut largest) = (None, None);
    let (mut smallest_seqno, mut largest_seqno) = (None, None);
    let (mut num_entries, mut num_deletions, mut column_group) = (None, None, None);
    let mut parents_of = None;
    let mut slices_of = None;
    let mut num_range_deletions = None;
    let mut creation_time = None;
    while !d.is_empty() {
        let t = d.varint32().ok_or("truncated new_file sub-tag")?;
        let v = d.length_prefixed().ok_or("truncated new_file sub-field")?;
        match t {
            sub::NUMBER => put_field(&mut number, exact_varint64(v)?)?,
            sub::PATH_ID => put_field(&mut path_id, exact_varint32(v)?)?,
            sub::SIZE => put_field(&mut size, exact_varint64(v)?)?,
            sub::SMALLEST => put_field(&mut smallest, internal_key(v)?)?,
            sub::LARGEST => put_field(&mut largest, internal_key(v)?)?,
            sub::SMALLEST_SEQNO => put_field(&mut smallest_seqno, exact_varint64(v)?)?,
            sub::LARGEST_SEQNO => put_field(&mut largest_seqno, exact_varint64(v)?)?,
            sub::NUM_ENTRIES => put_field(&mut num_entries, exact_varint64(v)?)?,
            sub::NUM_DELETIONS => put_field(&mut num_deletions, exact_varint64(v)?)?,
            sub::COLUMN_GROUP => put_field(&mut column_group, exact_varint32(v)?)?,
            sub::VIRTUAL_PARENTS => put_field(&mut parents_of, parents(v)?)?,
            sub::VIRTUAL_SLICES => put_field(&mut slices_of, v)?,
            sub::NUM_RANGE_DELETIONS => put_field(&mut num_range_deletions, exact_varint64(v)?)?,
            sub::CREATION_TIME => put_field(&mut creation_time, exact_varint64(v)?)?,
            0 => return Err("invalid new_file sub-tag 0"),
            t if t & SUB_TAG_SAFE_TO_IGNORE != 0 => {}
            _ => return Err("unknown new_file sub-tag"),
        }
    }
    let size = size.ok_or("new_file lacks size")?;
    let smallest = smallest.ok_or("new_file lacks smallest")?;
    let largest = largest.ok_or("new_file lacks largest")?;
    let kind = match (parents_of, slices_of) {
        (None, None) => FileKind::Real,
        (None, Some(_)) => return Err("virtual slices without virtual parents"),
        (Some(parents), slices_of) => {
            let (lo, hi) = (user_key(&smallest), user_key(&largest));
            let mut slices = whole_range_slices(&parents, lo, hi, size);
            if let Some(v) = slices_of {
                slice_ranges(v, &mut slices)?;
            }
            FileKind::Virtual { slices }
        }
    };
    Ok(FileMetaData {
        number: number.ok_or("new_file lacks number")?,
        path_id: path_id.ok_or("new_file lacks path_id")?,
        size,
        smallest,
        largest,
        smallest_seqno: smallest_seqno.ok_or("new_file lacks smallest_seqno")?,
        largest_seqno: largest_seqno.ok_or("new_file lacks largest_seqno")?,
        num_entries: num_entries.ok_or("new_file lacks num_entries")?,
        num_deletions: num_deletions.ok_or("new_file lacks num_deletions")?,
        column_group: column_group.ok_or("new_file lacks column_group")?,
        kind,
        num_range_deletions: num_range_deletions.unwrap_or(0),
        creation_time: creation_time.unwrap_or(0),
    })
}

#[cfg(test)]
mod tests;
