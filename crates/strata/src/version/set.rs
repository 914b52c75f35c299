//! The version set: the one owner of the MANIFEST, the current version, file numbers
//! and the references that keep files alive.
//!
//! # Role
//! Opening a database calls [`VersionSet::recover`], which replays the MANIFEST
//! ([`super::manifest::recover`]) and adopts every recovered file (one [`FileRef`]
//! each), or [`VersionSet::create`] for a new database. Open then starts a fresh
//! MANIFEST with [`VersionSet::start_manifest`].
//! While the database is open, every job that changes the set of files (flush,
//! compaction, trivial move) allocates its outputs with [`VersionSet::new_table`] and
//! installs its edit with [`VersionSet::log_and_apply`]. Readers take
//! [`VersionSet::current`] without locking.
//!
//! # What it owns
//! - the MANIFEST writer, behind `writer` (the only lock here that is held across I/O:
//!   one MANIFEST append + fsync, or a roll-over to a new MANIFEST);
//! - one [`FamilyVersion`] per live column family: its current [`Version`] (an
//!   `ArcSwap`, so loading it never waits on the writer) and its logged WAL number;
//!   families are created and dropped here, by a MANIFEST edit each;
//! - the next file number, the MANIFEST number and the last sequence number (atomics,
//!   so reading them never waits on the writer either);
//! - the queue of obsolete files ([`ObsoleteFiles`]); live files are those some
//!   [`FileRef`] still points to (see `version::file_ref` for why that is the rule).
//!
//! # Invariants
//! 1. Edits are applied one at a time, in MANIFEST order: `log_and_apply` holds
//!    `writer` from loading the current version to storing its successor, and runs the
//!    caller's `install` hook before releasing it, so read views are published in the
//!    same order.
//! 2. An edit is durable in the MANIFEST before its version becomes current; a version
//!    that failed to become durable is never current.
//! 3. After a failed MANIFEST write nothing more is appended to that MANIFEST (it may
//!    end in a partial record), unless the failure was a full disk (the record was
//!    cut back off, `wal::LogWriter::add_records`, or a roll-over's new MANIFEST was
//!    never named by `CURRENT` and is removed): every later
//!    `log_and_apply` fails, with the failed
//!    write's error as the cause (a job racing the failing one must not poison the
//!    database with a causeless refusal; the crash loop caught that).
//! 4. Every file number handed out is above every number recorded as used, so a number
//!    is never reused while a file of that number may exist.
//! 5. The last sequence number an edit records is read under `writer`, so the values
//!    in the MANIFEST never decrease and each covers every table named before it. (A
//!    value read before waiting for `writer` could be older than one a concurrent flush
//!    logged meanwhile; a roll-over snapshot carrying it made recovery read below the
//!    newest tables, hiding acknowledged writes. The crash loop found this.)
//!
//! Lock order: `writer` before the database's `state` lock (the `install` hook takes
//! `state`). Nothing here takes `writer` while holding `state`.

use super::edit::VersionEdit;
use super::family::{FamilyVersion, DEFAULT_FAMILY_ID, DEFAULT_FAMILY_NAME};
use super::file_ref::{FileRef, Obsolete, ObsoleteFiles};
use super::manifest::{self, Manifest, RecoveredFamily};
use super::version::Version;
use crate::env::{FileOptions, FileSystem, WritableFile};
use crate::error::{Error, Result};
use crate::filename::{self, Dirs};
use parking_lot::{Mutex, RwLock};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

/// What the version set starts from: a replayed MANIFEST, or an empty database.
#[derive(Debug)]
struct Recovered {
    /// The live families, the default one first.
    pub families: Vec<RecoveredFamily>,
    /// The largest family id ever given.
    pub max_column_family: u32,
    /// The next unused file number.
    pub next_file_number: u64,
    /// The MANIFEST that was replayed, if any.
    pub manifest_number: Option<u64>,
    /// The last sequence number the MANIFEST records (0 for a new database).
    pub last_sequence: u64,
}

/// What [`VersionSet::recover`] found besides the version set itself.
#[derive(Debug, Clone)]
pub(crate) struct RecoveryInfo {
    /// The MANIFEST that was replayed.
    pub manifest_number: u64,
    /// Per live family (default first): its name and the deepest level holding a
    /// file (`None`: no files). The family's version has `max(num_levels,
    /// deepest_level + 1)` levels, and the caller must refuse options with fewer
    /// levels than the tree.
    pub deepest_levels: Vec<(String, Option<usize>)>,
    /// The largest family id ever given (dropped families included): WAL records of
    /// a smaller id that is not live belong to a dropped family.
    pub max_column_family: u32,
    /// Where the MANIFEST's whole records end (a secondary reads on from here).
    pub resume_at: u64,
}

/// The MANIFEST writer and whether it may still be appended to (invariant 3).
struct Writer {
    manifest: Option<Manifest>,
    /// The error of the MANIFEST write that failed, if one did. Later edits fail with
    /// it as their cause, so a job that races the failing one reports the disk's
    /// error, not a bare refusal.
    failed: Option<Arc<Error>>,
}

/// See the module docs.
pub(crate) struct VersionSet {
    fs: Arc<dyn FileSystem>,
    /// The database directory (WALs, MANIFESTs, `CURRENT`) and the table directory of
    /// each data path.
    dirs: Dirs,
    /// MANIFEST size that triggers a roll-over to a new one.
    max_manifest_file_size: u64,
    /// How [`VersionSet::new_table`] creates table files (direct I/O or not); set once,
    /// before the set is shared.
    table_file_options: FileOptions,
    writer: Mutex<Writer>,
    /// The live families by id. Changed only under `writer` (create, drop); read
    /// briefly by lookups.
    families: RwLock<BTreeMap<u32, Arc<FamilyVersion>>>,
    /// The largest family id ever given (ids are never reused). Under `writer`.
    max_column_family: AtomicU32,
    next_file_number: AtomicU64,
    /// Number of the live MANIFEST (0 before `start_manifest`).
    manifest_number: AtomicU64,
    /// Highest sequence number visible to readers: published by the write leader after
    /// its group is in the memtable, recorded in every edit (invariant 5).
    last_sequence: AtomicU64,
    obsolete: Arc<ObsoleteFiles>,
}

impl std::fmt::Debug for VersionSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VersionSet")
            .field("dirs", &self.dirs)
            .field("manifest_number", &self.manifest_number())
            .field("next_file_number", &self.next_file_number())
            .finish_non_exhaustive()
    }
}

impl VersionSet {
    /// Replays the MANIFEST that `CURRENT` in `dirs.db` names (see
    /// [`super::manifest::recover`] for the recovery rule) into a version set that
    /// adopts one reference per recovered file. Returns `Ok(None)` iff there is no
    /// `CURRENT` (no database). No MANIFEST is writable until
    /// [`VersionSet::start_manifest`].
    ///
    /// # Errors
    /// `Corruption` naming the file and offset for a damaged `CURRENT` or MANIFEST;
    /// `Internal` if `dirs.tables` is empty (`Dirs::new` always has one); I/O errors.
    pub fn recover(
        fs: Arc<dyn FileSystem>,
        dirs: Dirs,
        max_manifest_file_size: u64,
        num_levels: &dyn Fn(&str) -> usize,
    ) -> Result<Option<(VersionSet, RecoveryInfo)>> {
        let Some(r) = manifest::recover(fs.as_ref(), &dirs.db, num_levels)? else {
            return Ok(None);
        };
        let info = RecoveryInfo {
            manifest_number: r.manifest_number,
            deepest_levels: r
                .families
                .iter()
                .map(|f| (f.name.clone(), f.deepest_level))
                .collect(),
            max_column_family: r.max_column_family,
            resume_at: r.resume_at,
        };
        let recovered = Recovered {
            families: r.families,
            max_column_family: r.max_column_family,
            next_file_number: r.next_file_number,
            manifest_number: Some(r.manifest_number),
            last_sequence: r.last_sequence,
        };
        let versions = VersionSet::new(fs, dirs, max_manifest_file_size, recovered)?;
        Ok(Some((versions, info)))
    }

    /// The version set of a new, empty database with `num_levels` levels, whose
    /// default family starts with `records` (family records, `version::edit`; the
    /// first MANIFEST's snapshot holds them).
    ///
    /// # Errors
    /// `Internal` if `dirs.tables` is empty (`Dirs::new` always has one) or `records`
    /// sets a key twice.
    pub fn create(
        fs: Arc<dyn FileSystem>,
        dirs: Dirs,
        max_manifest_file_size: u64,
        num_levels: usize,
        records: Vec<(u32, Vec<u8>)>,
    ) -> Result<VersionSet> {
        let version = Version::new(num_levels)
            .apply(&VersionEdit {
                records,
                ..Default::default()
            })
            .map_err(|e| Error::Internal(format!("the new database's records: {e}")))?;
        let empty = Recovered {
            families: vec![RecoveredFamily {
                id: DEFAULT_FAMILY_ID,
                name: DEFAULT_FAMILY_NAME.to_owned(),
                version,
                log_number: 0,
                deepest_level: None,
            }],
            max_column_family: 0,
            next_file_number: 2,
            manifest_number: None,
            last_sequence: 0,
        };
        VersionSet::new(fs, dirs, max_manifest_file_size, empty)
    }

    /// A version set over `recovered`, adopting one reference per recovered file.
    /// Requires: `recovered.next_file_number` is above every file number in use.
    fn new(
        fs: Arc<dyn FileSystem>,
        dirs: Dirs,
        max_manifest_file_size: u64,
        recovered: Recovered,
    ) -> Result<VersionSet> {
        if dirs.tables.is_empty() {
            return Err(Error::Internal("no table directory".into()));
        }
        let obsolete = Arc::new(ObsoleteFiles::default());
        let mut families = BTreeMap::new();
        for f in recovered.families {
            let mut version = f.version;
            let refs: Vec<Arc<FileRef>> = version
                .physical_tables()
                .map(|f| FileRef::new(f.number, f.path_id, &obsolete))
                .collect();
            version
                .attach_refs(&Version::default(), &refs)
                .map_err(Error::Internal)?;
            families.insert(
                f.id,
                Arc::new(FamilyVersion::new(f.id, f.name, version, f.log_number)),
            );
        }
        Ok(VersionSet {
            fs,
            dirs,
            max_manifest_file_size,
            table_file_options: FileOptions::default(),
            writer: Mutex::new(Writer {
                manifest: None,
                failed: None,
            }),
            families: RwLock::new(families),
            max_column_family: AtomicU32::new(recovered.max_column_family),
            next_file_number: AtomicU64::new(recovered.next_file_number),
            manifest_number: AtomicU64::new(recovered.manifest_number.unwrap_or(0)),
            last_sequence: AtomicU64::new(recovered.last_sequence),
            obsolete,
        })
    }

    /// The default family (never dropped), for tests.
    #[cfg(test)]
    pub fn default_family(&self) -> Arc<FamilyVersion> {
        self.families.read()[&DEFAULT_FAMILY_ID].clone()
    }

    /// The live families, by id (the default family first).
    pub fn families(&self) -> Vec<Arc<FamilyVersion>> {
        self.families.read().values().cloned().collect()
    }

    /// The default family's current version (tests and tools).
    #[cfg(test)]
    pub fn current(&self) -> Arc<Version> {
        self.default_family().current()
    }

    /// The database directory (WALs, MANIFESTs, `CURRENT`).
    pub fn db_dir(&self) -> &Path {
        &self.dirs.db
    }

    /// The directory of data path `path_id`.
    ///
    /// # Errors
    /// `Internal` if no such path exists (a plan named a path the options lack).
    pub fn dir(&self, path_id: u32) -> Result<&Path> {
        self.dirs
            .tables
            .get(path_id as usize)
            .map(PathBuf::as_path)
            .ok_or_else(|| Error::Internal(format!("no data path: path_id=`{path_id}`")))
    }

    /// The database directory and every data path's directory.
    pub fn dirs(&self) -> &Dirs {
        &self.dirs
    }

    /// Allocates a file number (tables, WALs, MANIFESTs).
    pub fn new_file_number(&self) -> u64 {
        self.next_file_number.fetch_add(1, Ordering::AcqRel)
    }

    /// Records that `number` is in use, so it is never handed out (invariant 4).
    pub fn mark_file_number_used(&self, number: u64) {
        self.next_file_number
            .fetch_max(number.saturating_add(1), Ordering::AcqRel);
    }

    /// The next file number that would be handed out.
    pub fn next_file_number(&self) -> u64 {
        self.next_file_number.load(Ordering::Acquire)
    }

    /// Number of the live MANIFEST. Never waits on the MANIFEST writer.
    pub fn manifest_number(&self) -> u64 {
        self.manifest_number.load(Ordering::Acquire)
    }

    /// The oldest WAL some live family still needs, as the MANIFEST records it: WALs
    /// numbered below this are obsolete.
    pub fn log_number(&self) -> u64 {
        self.families
            .read()
            .values()
            .map(|f| f.log_number())
            .min()
            .unwrap_or(0)
    }

    /// The newest WAL number a live family's MANIFEST record names: that WAL exists
    /// (each family's log number only grows, and WALs at or above every family's are
    /// kept), so open checks it.
    pub fn max_log_number(&self) -> u64 {
        self.families
            .read()
            .values()
            .map(|f| f.log_number())
            .max()
            .unwrap_or(0)
    }

    /// The highest sequence number visible to readers. Never waits on the MANIFEST
    /// writer.
    pub fn last_sequence(&self) -> u64 {
        self.last_sequence.load(Ordering::Acquire)
    }

    /// Publishes `sequence` as the highest visible one.
    ///
    /// Requires: one publisher at a time (the write group whose predecessor published,
    /// `db/write.rs`, or open before the database is shared), and every entry up to
    /// `sequence` already readable (in a memtable or a table), so a reader at
    /// `sequence` sees whole batches.
    pub fn set_last_sequence(&self, sequence: u64) {
        debug_assert!(sequence >= self.last_sequence(), "last sequence going back");
        self.last_sequence.store(sequence, Ordering::Release);
    }

    /// Creates table files with `opts` from now on (chainable; call before sharing).
    #[must_use]
    pub fn with_table_file_options(mut self, opts: FileOptions) -> VersionSet {
        self.table_file_options = opts;
        self
    }

    /// The queue of files that became obsolete.
    pub fn obsolete(&self) -> &Arc<ObsoleteFiles> {
        &self.obsolete
    }

    /// Creates a new, empty table file in data path `path_id` and returns its reference
    /// (the file is a *pending output*: live until the reference drops) with its writer.
    /// The file is created with the table file options
    /// ([`VersionSet::with_table_file_options`]): direct I/O or not.
    ///
    /// # Errors
    /// `Internal` for an unknown path; I/O errors creating the file (the reference is
    /// dropped, so the name is collected if the file was created).
    pub fn new_table(&self, path_id: u32) -> Result<(Arc<FileRef>, Box<dyn WritableFile>)> {
        let dir = self.dir(path_id)?;
        let number = self.new_file_number();
        let file_ref = FileRef::new(number, path_id, &self.obsolete);
        let file = self
            .fs
            .create_with(&filename::table_file(dir, number), self.table_file_options)?;
        Ok((file_ref, file))
    }

    /// Applies `edit` to the current version, makes it durable in a *new* MANIFEST
    /// holding the whole resulting version, points `CURRENT` at it, and makes the result
    /// current. Used once, at the end of recovery. `refs` are the references of files
    /// the edit adds; `log_number` and the last sequence are recorded in the snapshot.
    ///
    /// # Errors
    /// `Internal` if the edit does not apply; I/O errors (`CURRENT` then still names
    /// the previous MANIFEST, so a retry starts from the same durable state).
    pub fn start_manifest(
        &self,
        edits: &[(u32, VersionEdit)],
        refs: &[Arc<FileRef>],
        log_number: u64,
    ) -> Result<()> {
        let mut writer = self.writer.lock();
        let mut versions = Vec::new();
        for family in self.families() {
            let mut version = family.current();
            for (_, edit) in edits.iter().filter(|(id, _)| *id == family.id()) {
                version = Arc::new(self.successor(&version, edit, refs)?);
            }
            versions.push((family, version, log_number));
        }
        let number = self.new_file_number();
        let snapshot = self.snapshot_edits(&versions, self.last_sequence());
        let manifest = Manifest::create(&self.fs, self.db_dir(), number, &snapshot)?;
        writer.manifest = Some(manifest);
        self.manifest_number.store(number, Ordering::Release);
        for (family, version, log_number) in versions {
            family.install(version, Some(log_number));
        }
        Ok(())
    }

    /// Writes, into the directory `dir` of another database (a checkpoint), a MANIFEST
    /// holding every live family's current version with its log number and the
    /// database-wide counters, every table placed in data path 0 (the checkpoint keeps
    /// all its tables in `dir`); `CURRENT` is not written (the caller names the
    /// MANIFEST last, `manifest::set_current`). Then, still under the writer lock (so
    /// no edit installs a version that releases a WAL or table the returned versions
    /// need), calls `pin` with the versions, which must open whatever it needs to read
    /// later. Returns the MANIFEST's number and the versions (keeping their tables
    /// alive).
    ///
    /// # Errors
    /// I/O errors writing `dir`; `pin`'s error.
    pub fn write_manifest_into<T>(
        &self,
        dir: &Path,
        pin: impl FnOnce(&[FamilyAt]) -> Result<T>,
    ) -> Result<(u64, Vec<FamilyAt>, T)> {
        let _writer = self.writer.lock();
        let versions: Vec<_> = self
            .families()
            .into_iter()
            .map(|f| {
                let (v, log) = (f.current(), f.log_number());
                (f, v, log)
            })
            .collect();
        // Numbered before the snapshot records `next_file_number`, so an open of the
        // checkpoint never hands the MANIFEST's number out again.
        let number = self.new_file_number();
        let mut snapshot = self.snapshot_edits(&versions, self.last_sequence());
        for edit in &mut snapshot {
            let files = edit.new_files.iter_mut().map(|(_, f)| f);
            for f in files.chain(edit.new_parents.iter_mut()) {
                f.path_id = 0;
            }
        }
        Manifest::write(&self.fs, dir, number, &snapshot)?;
        let pinned = pin(&versions)?;
        Ok((number, versions, pinned))
    }

    /// The records that start a new MANIFEST: per family (the default one first, with
    /// the database-wide counters) an edit adding its files at `version` and its log
    /// number; the others also add the family by name. Requires: `writer` held.
    fn snapshot_edits(&self, versions: &[FamilyAt], last_sequence: u64) -> Vec<VersionEdit> {
        versions
            .iter()
            .map(|(family, version, log_number)| {
                let mut edit = version.to_snapshot_edit();
                edit.log_number = Some(*log_number);
                if family.id() == DEFAULT_FAMILY_ID {
                    edit.next_file_number = Some(self.next_file_number());
                    edit.last_sequence = Some(last_sequence);
                    let max = self.max_column_family.load(Ordering::Acquire);
                    edit.max_column_family = (max > 0).then_some(max);
                } else {
                    edit.column_family = family.id();
                    edit.add_column_family = Some(family.name().to_owned());
                }
                edit
            })
            .collect()
    }

    /// Applies `edit` to the current version, appends it to the MANIFEST (rolling over
    /// to a new MANIFEST when the current one exceeds its size limit) and makes the
    /// result current; then calls `install` with it, still in MANIFEST order
    /// (invariant 1). `refs` are the references of the files the edit adds (files it
    /// moves keep the references they have). The edit's `next_file_number` and
    /// `last_sequence` are filled in here, under the writer lock (invariant 5).
    ///
    /// Requires: every table the edit adds is fsynced and its directory entry durable;
    /// the caller does not hold the database's `state` lock.
    ///
    /// # Errors
    /// `Internal` if the edit does not apply to the current version (broken
    /// bookkeeping); I/O errors from the MANIFEST, after which every later call fails
    /// with `Poisoned`, that error as its cause (invariant 3). On error nothing is installed; the caller must poison the
    /// database, since the edit's durability is unknown.
    pub fn log_and_apply(
        &self,
        family: &FamilyVersion,
        mut edit: VersionEdit,
        refs: &[Arc<FileRef>],
        install: impl FnOnce(&Arc<Version>),
    ) -> Result<Arc<Version>> {
        let mut writer = self.writer.lock();
        if let Some(cause) = &writer.failed {
            return Err(Error::Poisoned(Arc::clone(cause)));
        }
        if family.is_dropped() {
            return Err(dropped(family));
        }
        edit.column_family = family.id();
        let version = Arc::new(self.successor(&family.current(), &edit, refs)?);
        self.write_edit(&mut writer, &mut edit, Some((family, &version)))?;
        family.install(Arc::clone(&version), edit.log_number);
        install(&version);
        Ok(version)
    }

    /// Appends `edit` (filling in the counters) to the MANIFEST, or rolls over to a
    /// new one whose snapshot already holds it, where `changed` is the family the edit
    /// changes and its new version. Requires: `writer` held (passed in).
    ///
    /// # Errors
    /// As [`Self::log_and_apply`]; after an I/O error other than a full disk the
    /// writer is failed (invariant 3).
    fn write_edit(
        &self,
        writer: &mut Writer,
        edit: &mut VersionEdit,
        changed: Option<(&FamilyVersion, &Arc<Version>)>,
    ) -> Result<()> {
        edit.last_sequence = Some(self.last_sequence());
        let result = match writer.manifest.as_mut() {
            None => Err(Error::Internal("no MANIFEST is open for writing".into())),
            Some(m) if m.size() >= self.max_manifest_file_size => self.roll_over(m, edit, changed),
            Some(m) => {
                edit.next_file_number = Some(self.next_file_number());
                m.append(edit)
            }
        };
        if let Err(e) = &result {
            // Only a full disk is undone exactly (the record cut back, or a new
            // MANIFEST that `CURRENT` never named removed); after any other error the
            // MANIFEST's state is in doubt.
            if !e.is_no_space() {
                writer.failed = Some(Arc::new(e.duplicate()));
            }
        }
        result
    }

    /// Installs, without writing anything, the state another process's MANIFEST
    /// describes (a secondary, `db::secondary`): `manifest` (read from
    /// `MANIFEST-<manifest_number>`). A live family it names gets its version and log
    /// number, a family it adds is created, a live family it lacks is dropped. `refs`
    /// are the references of the tables that are new to this set (every other table
    /// keeps the reference it has). Returns the families created and dropped.
    ///
    /// Requires: the caller made every new table readable first (linked or pinned).
    ///
    /// # Errors
    /// `Internal` if a version names a table nobody references (broken bookkeeping);
    /// nothing is installed then.
    pub fn follow(
        &self,
        manifest: super::manifest::RecoveredManifest,
        refs: &[Arc<FileRef>],
    ) -> Result<Followed> {
        let _writer = self.writer.lock();
        let inconsistent =
            |reason: String| Error::Internal(format!("followed version does not apply: {reason}"));
        let current = self.families();
        let mut installs = Vec::new();
        let mut created = Vec::new();
        for f in manifest.families {
            let mut version = f.version;
            match current.iter().find(|c| c.id() == f.id) {
                Some(live) => {
                    version
                        .attach_refs(&live.current(), refs)
                        .map_err(inconsistent)?;
                    installs.push((Arc::clone(live), version, f.log_number));
                }
                None => {
                    version
                        .attach_refs(&Version::default(), refs)
                        .map_err(inconsistent)?;
                    created.push(Arc::new(FamilyVersion::new(
                        f.id,
                        f.name,
                        version,
                        f.log_number,
                    )));
                }
            }
        }
        let dropped: Vec<_> = current
            .into_iter()
            .filter(|c| !installs.iter().any(|(f, _, _)| f.id() == c.id()))
            .collect();
        for (family, version, log_number) in installs {
            family.install(Arc::new(version), Some(log_number));
        }
        let mut families = self.families.write();
        for f in &dropped {
            families.remove(&f.id());
            f.mark_dropped();
        }
        for f in &created {
            families.insert(f.id(), Arc::clone(f));
        }
        drop(families);
        self.max_column_family
            .fetch_max(manifest.max_column_family, Ordering::AcqRel);
        self.mark_file_number_used(manifest.next_file_number.saturating_sub(1));
        self.manifest_number
            .store(manifest.manifest_number, Ordering::Release);
        Ok((created, dropped))
    }

    /// Creates column family `name` with a version of `num_levels` levels holding no
    /// file and `records` (the family's records from its first version on; see
    /// `VersionEdit::records`), needing WALs from `log_number` on (the WAL taking
    /// writes now: no older WAL can hold a record of a family that did not exist),
    /// durably: one MANIFEST edit adding it under a new id, so no reader of the
    /// MANIFEST ever sees the family without its records.
    ///
    /// Requires: no key twice in `records`, no value over `MAX_VALUE_LEN` (the caller
    /// refuses those as the user's error).
    ///
    /// # Errors
    /// `InvalidArgument` if a live family has that name or `records` break the
    /// requirement (nothing written); MANIFEST errors as [`Self::log_and_apply`] (the
    /// caller poisons the database).
    pub fn create_family(
        &self,
        name: &str,
        num_levels: usize,
        log_number: u64,
        records: Vec<(u32, Vec<u8>)>,
    ) -> Result<Arc<FamilyVersion>> {
        let mut writer = self.writer.lock();
        if let Some(cause) = &writer.failed {
            return Err(Error::Poisoned(Arc::clone(cause)));
        }
        if self.families.read().values().any(|f| f.name() == name) {
            return Err(Error::InvalidArgument(format!(
                "column family already exists: name=`{name}`"
            )));
        }
        let id = self
            .max_column_family
            .load(Ordering::Acquire)
            .checked_add(1)
            .ok_or_else(|| Error::InvalidArgument("column family ids exhausted".into()))?;
        let mut edit = VersionEdit {
            column_family: id,
            add_column_family: Some(name.to_owned()),
            max_column_family: Some(id),
            log_number: Some(log_number),
            records,
            ..Default::default()
        };
        let version = Version::new(num_levels)
            .apply(&edit)
            .map_err(|e| Error::InvalidArgument(format!("column family `{name}`: {e}")))?;
        let family = Arc::new(FamilyVersion::new(id, name.to_owned(), version, log_number));
        // Registered before the write so a roll-over's snapshot includes it; removed
        // again if the write fails.
        self.max_column_family.store(id, Ordering::Release);
        self.families.write().insert(id, Arc::clone(&family));
        if let Err(e) = self.write_edit(&mut writer, &mut edit, None) {
            self.families.write().remove(&id);
            return Err(e);
        }
        Ok(family)
    }

    /// Drops `family` durably (one MANIFEST edit): it leaves the set, and its files
    /// become obsolete once nothing holds its last version any more.
    ///
    /// # Errors
    /// `InvalidArgument` for the default family or a family already dropped;
    /// MANIFEST errors as [`Self::log_and_apply`].
    pub fn drop_family(&self, family: &FamilyVersion) -> Result<()> {
        let mut writer = self.writer.lock();
        if let Some(cause) = &writer.failed {
            return Err(Error::Poisoned(Arc::clone(cause)));
        }
        if family.id() == DEFAULT_FAMILY_ID {
            return Err(Error::InvalidArgument(
                "the default column family cannot be dropped".into(),
            ));
        }
        if family.is_dropped() {
            return Err(dropped(family));
        }
        let mut edit = VersionEdit {
            column_family: family.id(),
            drop_column_family: true,
            ..Default::default()
        };
        let removed = self.families.write().remove(&family.id());
        if let Err(e) = self.write_edit(&mut writer, &mut edit, None) {
            if let Some(f) = removed {
                self.families.write().insert(f.id(), f);
            }
            return Err(e);
        }
        family.mark_dropped();
        Ok(())
    }

    /// The version `edit` makes of `base`, holding its files' references.
    fn successor(
        &self,
        base: &Version,
        edit: &VersionEdit,
        refs: &[Arc<FileRef>],
    ) -> Result<Version> {
        let inconsistent =
            |reason: String| Error::Internal(format!("version edit does not apply: {reason}"));
        let mut version = base.apply(edit).map_err(inconsistent)?;
        if cfg!(debug_assertions) {
            version.check_invariants().map_err(inconsistent)?;
        }
        version.attach_refs(base, refs).map_err(inconsistent)?;
        Ok(version)
    }

    /// Replaces `m` by a new MANIFEST whose first records are the whole of every live
    /// family (bounds recovery time), `changed` (the family `edit` changes) at its new
    /// version and log number; the old one becomes obsolete once `CURRENT` names the
    /// new one. Requires: `writer` held (the caller's `m`); the family set already as
    /// the edit leaves it (created families in, dropped ones out).
    fn roll_over(
        &self,
        m: &mut Manifest,
        edit: &VersionEdit,
        changed: Option<(&FamilyVersion, &Arc<Version>)>,
    ) -> Result<()> {
        let number = self.new_file_number();
        let versions: Vec<_> = self
            .families()
            .into_iter()
            .map(|f| match changed {
                Some((c, v)) if c.id() == f.id() => {
                    let log = edit.log_number.unwrap_or_else(|| f.log_number());
                    (f, Arc::clone(v), log)
                }
                _ => {
                    let (v, log) = (f.current(), f.log_number());
                    (f, v, log)
                }
            })
            .collect();
        let snapshot = self.snapshot_edits(
            &versions,
            edit.last_sequence.unwrap_or_else(|| self.last_sequence()),
        );
        let old = m.number();
        *m = match Manifest::create(&self.fs, self.db_dir(), number, &snapshot) {
            Ok(new) => new,
            Err(e) => {
                if e.is_no_space() {
                    // A full disk before `CURRENT` was renamed: only creating and
                    // appending take space, and `write_file_atomic` reports what fails
                    // after its rename as an fsync. The new MANIFEST is named by
                    // nothing and the old one stays in use. Best effort; an open
                    // removes what is left.
                    let _ = self
                        .fs
                        .remove(&self.db_dir().join(filename::manifest_name(number)));
                }
                return Err(e);
            }
        };
        self.manifest_number.store(number, Ordering::Release);
        self.obsolete.push(Obsolete::Manifest(old));
        Ok(())
    }
}

/// The families [`VersionSet::follow`] created and dropped.
pub type Followed = (Vec<Arc<FamilyVersion>>, Vec<Arc<FamilyVersion>>);

/// A family at one version, with the log number recorded beside it.
pub type FamilyAt = (Arc<FamilyVersion>, Arc<Version>, u64);

/// The error of an edit of a dropped family: not a failure of the database (a job of
/// the family that raced the drop is abandoned, see `db::jobs`).
fn dropped(family: &FamilyVersion) -> Error {
    Error::InvalidArgument(format!("column family dropped: name=`{}`", family.name()))
}

#[cfg(test)]
mod tests;
