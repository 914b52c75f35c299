//! The metadata file of one backup, `meta/<id>`: which files the backup is made of,
//! with the size and whole-file crc32c each had when it was backed up.
//!
//! A backup exists iff its metadata file does: the engine writes it last, atomically
//! (temp file, fsync, rename, directory fsync), after every file it names is durable.
//!
//! # Format (format version 1)
//! Integers are LEB128 varints (`crate::coding`) unless marked fixed (little endian);
//! `bytes` is a varint length followed by that many bytes.
//!
//! ```text
//! +----------+---------------------------------------------------------------+
//! | magic    | 8 bytes "STRATABK"                                            |
//! | version  | varint32: the format version, 1                               |
//! | id       | varint64: the backup's id (equals the file's name)            |
//! | created  | varint64: seconds since the Unix epoch when the backup began  |
//! | sequence | varint64: the database's last sequence number at that moment: |
//! |          |           the backup holds every write up to it               |
//! | copied   | varint64: bytes this backup added to the backup directory     |
//! | count    | varint32: number of file entries that follow                  |
//! | file ... | count times:                                                  |
//! |   kind   |   1 byte: 0 private (under private/), 1 shared (under shared/)|
//! |   name   |   bytes: the file's name in a database directory (UTF-8)      |
//! |   size   |   varint64: its length in bytes                               |
//! |   crc32c |   fixed32: crc32c of its whole content (not masked)           |
//! | checksum | fixed32: masked crc32c of every byte before it                |
//! +----------+---------------------------------------------------------------+
//! ```
//!
//! A decoder refuses, as corruption naming the file and offset: a wrong checksum or
//! magic, another format version (a newer writer: nothing here is skippable, since
//! restoring part of a backup would be silent data loss), a name that is not one of
//! the engine's file names (so a restore cannot write outside its target), a shared
//! file that is not a table or a private one that is, a name listed twice, no
//! `CURRENT`, and trailing bytes. A new field means format version 2 and a new frozen
//! fixture (`meta/tests.rs`).

use crate::coding::{mask_crc, put_fixed32, put_length_prefixed, put_varint32, put_varint64};
use crate::coding::{unmask_crc, Decoder};
use crate::error::{Error, Result};
use crate::filename::{self, FileType};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The first bytes of every metadata file.
pub const MAGIC: &[u8; 8] = b"STRATABK";

/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// Subdirectory of files shared between backups (tables), by name, size and crc32c.
pub const SHARED: &str = "shared";

/// Subdirectory of each backup's own files, named `<id>-<name>`.
pub const PRIVATE: &str = "private";

/// One file of a backup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileEntry {
    /// Its name in a database directory (`000012.sst`, `CURRENT`, ...).
    pub name: String,
    /// True for a table kept under `shared/`.
    pub shared: bool,
    /// Length in bytes.
    pub size: u64,
    /// crc32c of the whole content.
    pub crc32c: u32,
}

impl FileEntry {
    /// Where the file is kept, relative to the backup directory, in backup `id`.
    ///
    /// A shared table is named by its number, size and crc32c: two databases (or one
    /// database before and after a restore) may each have a table 12, and only the
    /// three together say it is the same file.
    pub fn stored_path(&self, id: u64) -> PathBuf {
        if self.shared {
            let stem = self.name.strip_suffix(".sst").unwrap_or(&self.name);
            Path::new(SHARED).join(format!("{stem}-{}-{:08x}.sst", self.size, self.crc32c))
        } else {
            Path::new(PRIVATE).join(private_name(id, &self.name))
        }
    }
}

/// The name under `private/` of backup `id`'s file `name`. The private files sit in
/// one flat directory, not one per backup: the file-system seam removes files, not
/// directories, and a purge must leave nothing behind.
pub fn private_name(id: u64, name: &str) -> String {
    format!("{id}-{name}")
}

/// The id a name under `private/` belongs to, if it is one of the engine's.
pub fn private_owner(name: &str) -> Option<u64> {
    name.split_once('-')?.0.parse().ok()
}

/// What one metadata file records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackupMeta {
    /// The backup's id.
    pub id: u64,
    /// Seconds since the Unix epoch when the backup began.
    pub created: u64,
    /// The database's last sequence number when the backup began.
    pub sequence: u64,
    /// Bytes this backup added to the backup directory.
    pub copied: u64,
    /// Every file, in name order.
    pub files: Vec<FileEntry>,
}

impl BackupMeta {
    /// The encoding described in the module docs.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        put_varint32(&mut out, FORMAT_VERSION);
        for v in [self.id, self.created, self.sequence, self.copied] {
            put_varint64(&mut out, v);
        }
        put_varint32(
            &mut out,
            u32::try_from(self.files.len()).unwrap_or(u32::MAX),
        );
        for f in &self.files {
            out.push(u8::from(f.shared));
            put_length_prefixed(&mut out, f.name.as_bytes());
            put_varint64(&mut out, f.size);
            put_fixed32(&mut out, f.crc32c);
        }
        let crc = mask_crc(crc32c::crc32c(&out));
        put_fixed32(&mut out, crc);
        out
    }

    /// Decodes the metadata file `path` whose bytes are `data`.
    ///
    /// # Errors
    /// `Corruption` naming `path` and the offset of the first bad field (see the
    /// module docs for what is refused). Never panics, whatever `data` holds.
    pub fn decode(data: &[u8], path: &Path) -> Result<BackupMeta> {
        let bad = |offset: usize, reason: &str| Error::Corruption {
            file: path.to_path_buf(),
            offset: offset as u64,
            reason: format!("backup metadata: {reason}"),
        };
        let body_len = data
            .len()
            .checked_sub(4)
            .filter(|&n| n >= MAGIC.len())
            .ok_or_else(|| bad(0, "shorter than magic and checksum"))?;
        let (body, stored) = data.split_at(body_len);
        let stored = Decoder::new(stored).fixed32().map(unmask_crc);
        if stored != Some(crc32c::crc32c(body)) {
            return Err(bad(body_len, "checksum mismatch"));
        }
        let mut d = Decoder::new(body);
        if d.bytes(MAGIC.len()) != Some(MAGIC.as_slice()) {
            return Err(bad(0, "bad magic"));
        }
        let at = d.position();
        match d.varint32() {
            Some(FORMAT_VERSION) => {}
            Some(v) => return Err(bad(at, &format!("unknown format version {v}"))),
            None => return Err(bad(at, "truncated format version")),
        }
        let mut header = [0u64; 4];
        for field in &mut header {
            let at = d.position();
            *field = d.varint64().ok_or_else(|| bad(at, "truncated header"))?;
        }
        let [id, created, sequence, copied] = header;
        let at = d.position();
        let count = d
            .varint32()
            .ok_or_else(|| bad(at, "truncated file count"))?;
        let mut files = Vec::new();
        let mut names = BTreeSet::new();
        for _ in 0..count {
            let at = d.position();
            let f =
                file_entry(&mut d).ok_or_else(|| bad(at, "truncated or malformed file entry"))?;
            let kind_ok = match filename::parse(&f.name) {
                Some(FileType::Table(_)) => f.shared,
                Some(FileType::Current | FileType::Manifest(_) | FileType::Wal(_)) => !f.shared,
                Some(FileType::Options) => !f.shared,
                Some(FileType::Lock | FileType::Temp) | None => false,
            };
            // Only a plain name: `filename::parse` accepts `x/../1.log` as a WAL.
            let plain = Path::new(&f.name).file_name() == Some(f.name.as_ref());
            if !kind_ok || !plain {
                return Err(bad(at, &format!("not a backed-up file name: `{}`", f.name)));
            }
            if !names.insert(f.name.clone()) {
                return Err(bad(at, &format!("file listed twice: `{}`", f.name)));
            }
            files.push(f);
        }
        if !d.is_empty() {
            return Err(bad(d.position(), "trailing bytes"));
        }
        if !names.contains(crate::version::manifest::CURRENT) {
            return Err(bad(body_len, "no CURRENT file"));
        }
        Ok(BackupMeta {
            id,
            created,
            sequence,
            copied,
            files,
        })
    }
}

/// The next file entry, or `None` if truncated (or the name is not UTF-8).
fn file_entry(d: &mut Decoder<'_>) -> Option<FileEntry> {
    let shared = match d.u8()? {
        0 => false,
        1 => true,
        _ => return None,
    };
    let name = std::str::from_utf8(d.length_prefixed()?).ok()?.to_owned();
    Some(FileEntry {
        name,
        shared,
        size: d.varint64()?,
        crc32c: d.fixed32()?,
    })
}

#[cfg(test)]
mod tests;
