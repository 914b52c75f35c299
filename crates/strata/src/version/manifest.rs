//! The MANIFEST: the durable log of version edits, and `CURRENT`, which names it.
//!
//! Role: at open, [`recover`] reads `CURRENT`, replays every edit of the MANIFEST it
//! names, and returns the recovered [`Version`] and counters. The database then starts a
//! *new* MANIFEST with [`Manifest::create`] (its first record a snapshot of the
//! recovered state, via [`Version::to_snapshot_edit`]) and never appends to a recovered
//! one, so a torn tail left by a crash is never written after. While open, every flush
//! and compaction calls [`Manifest::append`] before installing the new version. When the
//! MANIFEST grows large the database rolls to a new one the same way.
//!
//! # Format
//! `MANIFEST-<number>` uses the log format of [`crate::wal`] (32 KiB blocks, CRC32C per
//! fragment); each record is one [`VersionEdit`] encoding (`version::edit`). The first
//! record is a snapshot: every live file plus `log_number`, `next_file_number` and
//! `last_sequence`; with column families, the snapshot is one record per family (the
//! default family's first, holding the counters and `max_column_family`; each other
//! family's adding it by name with its files and log number), all fsynced together
//! before `CURRENT` names the file. `CURRENT` holds the MANIFEST's file name and a newline, e.g.
//! `MANIFEST-000005\n`.
//!
//! # Durability order (what makes a crash at any point safe)
//! 1. A flush or compaction writes its new SSTables, fsyncs each, and fsyncs the
//!    directory (its writer, a flush or compaction, does this) **before** the edit naming them is
//!    appended. So an edit on disk never names a file that a crash can lose.
//! 2. [`Manifest::append`] appends the edit and fsyncs the MANIFEST; only after it
//!    returns `Ok` is the new version installed and are obsolete files deleted. So a
//!    file is deleted only once the MANIFEST no longer needs it.
//! 3. [`Manifest::create`] fsyncs the new MANIFEST and the directory **before**
//!    `CURRENT` is atomically replaced (temp file + fsync + rename + directory fsync).
//!    So `CURRENT` never names a MANIFEST that is missing or incomplete; a crash before
//!    the rename leaves the old `CURRENT` and MANIFEST in charge.
//!
//! If `append` fails the edit may or may not be on disk: the caller poisons the
//! database and installs nothing, and the next open decides from what is durable.
//!
//! # Recovery rule
//! Every record must be intact and decode to an edit that applies cleanly. The only
//! damage tolerated is a damaged *final* record (truncated, or failing its checksum,
//! with no intact record after it): an append whose fsync never returned, whose edit
//! was therefore never installed, torn or garbled by a power cut. Damage followed by
//! an intact record is corruption (an fsynced record was damaged). A tail that hid an
//! installed edit cannot pass unnoticed: open then finds a live table or the named WAL
//! missing and reports corruption. After replay the version must satisfy
//! [`Version::check_invariants`], and the three counters must have been set.
//! `next_file_number` is raised above every file number in use (live tables, the
//! MANIFEST itself, the WAL), as LevelDB's `MarkFileNumberUsed` does.
//!
//! Concurrency: a [`Manifest`] has one owner, the database's `manifest` mutex, held by
//! `db::files::log_and_apply` from reading the current version to installing the new
//! one; [`recover`] runs before the database is shared.
//!
//! See also: the tests below (`recover_round_trip`, `flipped_byte_is_corruption_unless_in_the_final_record`,
//! `truncated_last_record_is_tolerated`).

use super::edit::VersionEdit;
use super::family::{DEFAULT_FAMILY_ID, DEFAULT_FAMILY_NAME};
use super::version::Version;
use crate::env::{read_to_vec, write_file_atomic, FileSystem};
use crate::error::{Error, Result};
use crate::filename::{self, FileType};
use crate::options::MAX_LEVELS;
use crate::wal::{LogError, LogReader, LogWriter};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Name of the file that names the live MANIFEST.
pub const CURRENT: &str = "CURRENT";

/// The writer of the live MANIFEST file.
///
/// Single owner; every method needs `&mut self` or is a cheap getter.
pub struct Manifest {
    writer: LogWriter,
    number: u64,
}

impl std::fmt::Debug for Manifest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manifest")
            .field("number", &self.number)
            .field("size", &self.writer.size())
            .finish_non_exhaustive()
    }
}

impl Manifest {
    /// Creates `MANIFEST-<number>` in `dir` holding `snapshot` as its first record,
    /// fsyncs it, fsyncs `dir`, then points `CURRENT` at it via
    /// [`write_file_atomic`] (temp + fsync + rename + directory fsync).
    ///
    /// Requires: `number` is unused; `snapshot` holds every live file and sets
    /// `log_number`, `next_file_number` (greater than `number`) and `last_sequence`.
    ///
    /// # Errors
    /// I/O errors. On error `CURRENT` still names the previous MANIFEST, or is the new
    /// one if only the final directory fsync failed; either is consistent, but the
    /// caller must treat the failure as fatal (poison) since durability is unknown,
    /// except a full disk ([`crate::Error::is_no_space`]), which can only have met the
    /// new MANIFEST or `CURRENT`'s temporary file before the rename.
    pub fn create(
        fs: &Arc<dyn FileSystem>,
        dir: &Path,
        number: u64,
        snapshot: &[VersionEdit],
    ) -> Result<Manifest> {
        let m = Manifest::write(fs, dir, number, snapshot)?;
        set_current(fs.as_ref(), dir, number)?;
        Ok(m)
    }

    /// [`Manifest::create`] without pointing `CURRENT` at it: the MANIFEST and its
    /// directory entry are durable, `CURRENT` is untouched (a checkpoint names it last,
    /// [`set_current`], once every file it needs is durable).
    ///
    /// # Errors
    /// I/O errors.
    pub fn write(
        fs: &Arc<dyn FileSystem>,
        dir: &Path,
        number: u64,
        snapshot: &[VersionEdit],
    ) -> Result<Manifest> {
        let name = filename::manifest_name(number);
        let file = fs.create(&dir.join(&name))?;
        let mut m = Manifest {
            writer: LogWriter::new(file),
            number,
        };
        m.append_all(snapshot)?;
        fs.sync_dir(dir)?;
        Ok(m)
    }

    /// Appends one edit and fsyncs it: the edit is durable iff this returns `Ok`.
    ///
    /// Requires: every SSTable the edit adds is already fsynced and its directory entry
    /// durable (see the module's durability order).
    ///
    /// # Errors
    /// I/O errors; the edit is not installed. A retryable one (a full disk,
    /// [`Error::is_retryable`]) left the MANIFEST as it was (the record was cut back
    /// off) and it may be appended to again; after any other, the MANIFEST may end in
    /// a partial record and the caller must poison the database.
    ///
    /// [`Error::is_retryable`]: crate::Error::is_retryable
    pub fn append(&mut self, edit: &VersionEdit) -> Result<()> {
        self.append_all(std::slice::from_ref(edit))
    }

    /// Appends `edits`, one record each, and fsyncs once: as [`Self::append`]. A crash
    /// may keep a prefix of them, so each must be valid on its own.
    ///
    /// # Errors
    /// As [`Self::append`].
    pub fn append_all(&mut self, edits: &[VersionEdit]) -> Result<()> {
        let records: Vec<Vec<u8>> = edits
            .iter()
            .map(|edit| {
                let mut buf = Vec::new();
                edit.encode(&mut buf);
                buf
            })
            .collect();
        self.writer.add_records(records.iter().map(Vec::as_slice))?;
        self.writer.sync()
    }

    /// This MANIFEST's file number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// Bytes written to this MANIFEST so far (the database rolls to a new one when this
    /// grows large).
    pub fn size(&self) -> u64 {
        self.writer.size()
    }
}

/// One column family as replayed by [`recover`].
#[derive(Debug)]
pub struct RecoveredFamily {
    /// The family's id (0: default).
    pub id: u32,
    /// The family's name.
    pub name: String,
    /// Its live files.
    pub version: Version,
    /// WALs numbered below this hold nothing of this family that is not in a table.
    pub log_number: u64,
    /// The deepest level holding a file (`None`: no files). The caller must check it
    /// against the family's configured number of levels.
    pub deepest_level: Option<usize>,
}

/// The state a MANIFEST describes, as replayed by [`recover`].
#[derive(Debug)]
pub struct RecoveredManifest {
    /// The live column families, the default one first, then by id.
    pub families: Vec<RecoveredFamily>,
    /// The largest family id ever given (dropped ones included).
    pub max_column_family: u32,
    /// The next unused file number (already above every number in use).
    pub next_file_number: u64,
    /// The last sequence number covered by the recovered tables.
    pub last_sequence: u64,
    /// The number of the MANIFEST that was replayed.
    pub manifest_number: u64,
    /// Where the records replayed end: after the last whole record applied (a
    /// follower reads on from here, `follow`).
    pub resume_at: u64,
}

/// Reads `CURRENT` in `dir` and replays every edit of the MANIFEST it names. See the
/// module's recovery rule.
///
/// Edits are replayed into versions of [`MAX_LEVELS`] levels, not the configured
/// number: a database written with more levels than this open configures is then a
/// *wrong option*, not a corrupt MANIFEST. Each family's version has
/// `num_levels(name)` levels if its files fit (`deepest_level < num_levels`), else
/// `deepest_level + 1`; the caller must reject the latter
/// ([`RecoveredFamily::deepest_level`]).
///
/// Returns `Ok(None)` iff `CURRENT` does not exist (no database here yet).
///
/// # Errors
/// [`Error::Corruption`] naming the file and offset for: bad `CURRENT` content, a
/// missing MANIFEST, a damaged record (checksum failure, or truncation anywhere but the
/// last record), an undecodable edit, an edit that does not apply (unknown file,
/// duplicate file, level beyond [`MAX_LEVELS`]), a final version that breaks its invariants, or
/// missing counters. I/O errors as they come.
pub fn recover(
    fs: &dyn FileSystem,
    dir: &Path,
    num_levels: &dyn Fn(&str) -> usize,
) -> Result<Option<RecoveredManifest>> {
    match current_number(fs, dir)? {
        Some(number) => replay_file(fs, dir, number, num_levels).map(Some),
        None => Ok(None),
    }
}

/// The number of the MANIFEST `CURRENT` in `dir` names; `Ok(None)` iff there is no
/// `CURRENT`.
///
/// # Errors
/// `Corruption` naming `CURRENT` for content that names no MANIFEST; I/O errors.
pub(crate) fn current_number(fs: &dyn FileSystem, dir: &Path) -> Result<Option<u64>> {
    let current = dir.join(CURRENT);
    if !fs.exists(&current) {
        return Ok(None);
    }
    let content = read_to_vec(fs, &current)?;
    parse_current(&content)
        .map(Some)
        .ok_or_else(|| Error::corruption(&current, 0, "CURRENT does not name a MANIFEST"))
}

/// Replays every edit of `MANIFEST-<manifest_number>` in `dir` (see [`recover`]).
///
/// # Errors
/// As [`recover`].
pub(crate) fn replay_file(
    fs: &dyn FileSystem,
    dir: &Path,
    manifest_number: u64,
    num_levels: &dyn Fn(&str) -> usize,
) -> Result<RecoveredManifest> {
    let path = dir.join(filename::manifest_name(manifest_number));
    if !fs.exists(&path) {
        return Err(Error::corruption(
            dir.join(CURRENT),
            0,
            format!(
                "CURRENT names a missing MANIFEST: file=`{}`",
                path.display()
            ),
        ));
    }
    let mut reader = LogReader::new(fs.open_sequential(&path)?);
    let mut replay = Replay {
        families: BTreeMap::from([(
            DEFAULT_FAMILY_ID,
            ReplayFamily {
                name: DEFAULT_FAMILY_NAME.to_owned(),
                version: Version::new(MAX_LEVELS),
                log_number: None,
            },
        )]),
        max_column_family: 0,
        next_file_number: None,
        last_sequence: None,
        path,
    };
    let mut record = Vec::new();
    let mut end = 0u64;
    let mut resume_at = 0u64;
    loop {
        match reader.read_record(&mut record) {
            Ok(Some(offset)) => {
                replay.apply(&record, offset)?;
                end = offset;
                resume_at = reader.position();
            }
            Ok(None) => break,
            Err(LogError::Io(e)) => return Err(e),
            Err(damage) => {
                // Tolerated only if no intact record follows: a torn final append
                // (cut short, or garbled by a power cut before its fsync returned).
                let offset = damage.offset();
                loop {
                    match reader.read_record(&mut record) {
                        Ok(None) => {
                            return replay.finish(manifest_number, (end, resume_at), num_levels)
                        }
                        Ok(Some(_)) => {
                            return Err(Error::corruption(
                                &replay.path,
                                offset,
                                "damaged MANIFEST record is followed by intact ones",
                            ))
                        }
                        Err(LogError::Io(e)) => return Err(e),
                        Err(_) => continue,
                    }
                }
            }
        }
    }
    replay.finish(manifest_number, (end, resume_at), num_levels)
}

/// For a follower of the MANIFEST another process writes (`db::secondary`): the state
/// after the edits appended to `MANIFEST-<manifest_number>` in `dir` since `from` (the
/// end of the last whole record read before), applied over `families` (the state as
/// of `from`: id, name, version, log number) and `max_column_family`. `Ok(None)` if no
/// whole record was appended since. An incomplete last record is not written yet: it
/// is left for the next call (the result's `resume_at` stops before it).
///
/// # Errors
/// `Corruption` naming the MANIFEST and offset for a damaged record (a whole record
/// failing its checksum), an undecodable edit or one that does not apply; I/O errors
/// (the MANIFEST is gone if a writer rolled over to a new one: the caller reads
/// `CURRENT` again).
pub(crate) fn follow(
    fs: &dyn FileSystem,
    dir: &Path,
    (manifest_number, from): (u64, u64),
    families: impl FnOnce() -> Vec<(u32, String, Version, u64)>,
    max_column_family: u32,
    num_levels: &dyn Fn(&str) -> usize,
) -> Result<Option<RecoveredManifest>> {
    let path = dir.join(filename::manifest_name(manifest_number));
    let mut reader = LogReader::resume(fs.open_sequential(&path)?, from)?;
    let mut record = Vec::new();
    let Some(first) = reader.read_written(&mut record, &path)? else {
        return Ok(None);
    };
    let mut replay = Replay {
        families: BTreeMap::new(),
        max_column_family,
        // The counters were set by the records before `from`; the follower keeps its
        // own last sequence.
        next_file_number: Some(0),
        last_sequence: Some(0),
        path: path.clone(),
    };
    for (id, name, version, log_number) in families() {
        let version = version.with_num_levels(MAX_LEVELS).map_err(|reason| {
            Error::Internal(format!("column family `{name}` over MAX_LEVELS: {reason}"))
        })?;
        let log_number = Some(log_number);
        replay.families.insert(
            id,
            ReplayFamily {
                name,
                version,
                log_number,
            },
        );
    }
    let mut end = first;
    replay.apply(&record, first)?;
    let mut resume_at = reader.position();
    while let Some(offset) = reader.read_written(&mut record, &path)? {
        replay.apply(&record, offset)?;
        end = offset;
        resume_at = reader.position();
    }
    replay
        .finish(manifest_number, (end, resume_at), num_levels)
        .map(Some)
}

/// `MANIFEST-<n>\n` -> `n`.
fn parse_current(content: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(content).ok()?.strip_suffix('\n')?;
    match filename::parse(s)? {
        FileType::Manifest(n) if !s.contains(['/', '\\']) => Some(n),
        _ => None,
    }
}

/// One family's replay state.
struct ReplayFamily {
    name: String,
    version: Version,
    log_number: Option<u64>,
}

/// Replay state of [`recover`].
struct Replay {
    /// The live families by id.
    families: BTreeMap<u32, ReplayFamily>,
    max_column_family: u32,
    next_file_number: Option<u64>,
    last_sequence: Option<u64>,
    path: PathBuf,
}

impl Replay {
    fn apply(&mut self, record: &[u8], offset: u64) -> Result<()> {
        let edit = VersionEdit::decode(record).map_err(|reason| {
            Error::corruption(&self.path, offset, format!("bad version edit: {reason}"))
        })?;
        self.apply_edit(&edit).map_err(|reason| {
            Error::corruption(
                &self.path,
                offset,
                format!("inconsistent version edit: {reason}"),
            )
        })
    }

    fn apply_edit(&mut self, edit: &VersionEdit) -> std::result::Result<(), String> {
        let id = edit.column_family;
        if let Some(max) = edit.max_column_family {
            self.max_column_family = self.max_column_family.max(max);
        }
        if let Some(name) = &edit.add_column_family {
            if id == DEFAULT_FAMILY_ID || self.families.contains_key(&id) {
                return Err(format!("column family {id} added twice"));
            }
            if self.families.values().any(|f| f.name == *name) {
                return Err(format!("two column families named `{name}`"));
            }
            self.max_column_family = self.max_column_family.max(id);
            self.families.insert(
                id,
                ReplayFamily {
                    name: name.clone(),
                    version: Version::new(MAX_LEVELS),
                    log_number: None,
                },
            );
        }
        let family = self
            .families
            .get_mut(&id)
            .ok_or_else(|| format!("edit of unknown column family {id}"))?;
        family.version = family.version.apply(edit)?;
        family.log_number = edit.log_number.or(family.log_number);
        if edit.drop_column_family {
            if id == DEFAULT_FAMILY_ID {
                return Err("the default column family is dropped".into());
            }
            self.families.remove(&id);
        }
        self.next_file_number = edit.next_file_number.or(self.next_file_number);
        self.last_sequence = edit.last_sequence.or(self.last_sequence);
        Ok(())
    }

    /// `end`: the offset of the last record applied (errors name it); `resume_at`:
    /// where the next record would start.
    fn finish(
        self,
        manifest_number: u64,
        (end, resume_at): (u64, u64),
        num_levels: &dyn Fn(&str) -> usize,
    ) -> Result<RecoveredManifest> {
        let path = &self.path;
        let missing =
            |what: &str| Error::corruption(path, end, format!("MANIFEST never sets {what}"));
        let default_log = self
            .families
            .get(&DEFAULT_FAMILY_ID)
            .and_then(|f| f.log_number)
            .ok_or_else(|| missing("log_number"))?;
        let next = self
            .next_file_number
            .ok_or_else(|| missing("next_file_number"))?;
        let recorded = self.last_sequence.ok_or_else(|| missing("last_sequence"))?;
        let mut families = Vec::with_capacity(self.families.len());
        let mut last_sequence = recorded;
        let mut max_used = manifest_number.max(default_log);
        for (id, f) in self.families {
            // Every entry of a table was written under a sequence number already
            // published, so the last sequence is at least each table's newest. Builds
            // between the version-set refactor and its fix could record a stale value
            // (an edit logged after a newer one); reading below a table's entries
            // would hide them.
            // Virtual tables and parents have numbers too (a parent's entries are
            // its virtual tables').
            for file in f.version.live_files().chain(f.version.parents()) {
                last_sequence = last_sequence.max(file.largest_seqno);
                max_used = max_used.max(file.number);
            }
            f.version.check_invariants().map_err(|reason| {
                Error::corruption(
                    path,
                    end,
                    format!(
                        "recovered version of family `{}` is inconsistent: {reason}",
                        f.name
                    ),
                )
            })?;
            // Cut the MAX_LEVELS replay version back, keeping every file (see
            // `recover`).
            let deepest_level = f.version.deepest_nonempty_level();
            let levels = num_levels(&f.name).max(deepest_level.map_or(0, |d| d + 1));
            let version = f
                .version
                .with_num_levels(levels)
                .map_err(|reason| Error::corruption(path, end, reason))?;
            let log_number = f.log_number.unwrap_or(0);
            max_used = max_used.max(log_number);
            families.push(RecoveredFamily {
                id,
                name: f.name,
                version,
                log_number,
                deepest_level,
            });
        }
        Ok(RecoveredManifest {
            families,
            max_column_family: self.max_column_family,
            next_file_number: next.max(max_used.saturating_add(1)),
            last_sequence,
            manifest_number,
            resume_at,
        })
    }
}

/// Points `dir`'s `CURRENT` at `MANIFEST-<number>` atomically ([`write_file_atomic`]:
/// temp + fsync + rename + directory fsync).
///
/// # Errors
/// I/O errors; `CURRENT` then names the previous MANIFEST, or the new one if only the
/// final directory fsync failed.
pub fn set_current(fs: &dyn FileSystem, dir: &Path, number: u64) -> Result<()> {
    let name = filename::manifest_name(number);
    write_file_atomic(fs, dir, CURRENT, format!("{name}\n").as_bytes())
}

#[cfg(test)]
mod tests;
