//! Incremental backups (docs/ARCHITECTURE.md §7.7.1), on the model of RocksDB's
//! BackupEngine: a backup directory holds any number of backups of a database, the
//! tables they have in common stored once.
//!
//! # Layout
//! ```text
//! backup_dir/
//!   LOCK                              held by the open BackupEngine
//!   meta/<id>                         a backup's metadata (`meta` module): it exists
//!                                     iff this file does
//!   shared/<n>-<size>-<crc32c>.sst    table n, shared by every backup naming it
//!   private/<id>-<name>               the backup's CURRENT, MANIFEST, OPTIONS, WALs
//!   tmp/                              scratch checkpoint of the backup being made
//! ```
//! A table is identified by its number, size and whole-file crc32c together: the
//! number alone is not enough (a restored database, or another database backed up
//! into the same directory, reuses numbers). A second backup of a database that
//! changed by 1% finds most of its tables already under `shared/` and copies only the
//! new ones ([`BackupInfo::copied`]).
//!
//! # Create
//! 1. `db.checkpoint(tmp/)`: a consistent cut of the database while writers run
//!    (hard links to tables where the file system allows, WAL tails up to the cut; see
//!    `db::checkpoint`). The backup holds exactly the checkpoint's state.
//! 2. Each table's size and crc32c are computed; a table whose shared name is absent,
//!    or present with another size (damaged since), is copied to `shared/<name>.tmp`,
//!    synced and renamed into place (the copy's own crc32c must match). Every other file is copied to `private/<id>-<name>` and
//!    synced. `shared/` and `private/` are then synced.
//! 3. `meta/<id>` is written atomically (temp file, fsync, rename, directory fsync).
//! 4. `tmp/` is emptied.
//!
//! Crash argument: until step 3's rename is durable no metadata names the new files,
//! so after a crash the backup does not exist and every file it left (the scratch
//! checkpoint, `*.tmp`, new shared tables, private files of its id, `meta/*.dbtmp`) is
//! named by no metadata file: opening the engine removes them. Once the rename is
//! durable, every file the metadata names was synced and its directory entry synced
//! before it: the backup is whole. A shared name is only ever created by a rename
//! of a complete, synced copy, so a name that exists (even a leftover of an
//! interrupted create) holds the whole table. Deletion runs the other way: the
//! metadata file is removed and its directory synced before any file it named, so a
//! crash never leaves metadata naming a removed file.
//!
//! # Restore
//! Every file is copied into the target (which must be empty or absent) and checked
//! against its recorded size and crc32c as it is copied, `CURRENT` last and
//! atomically after the directory is synced: until then the target holds no
//! database (an open without `create_if_missing` refuses it), after it the whole
//! backup. The copies are independent of the backup directory.

internal_modules!(meta);

use crate::db::Db;
use crate::env::{read_to_vec, write_file_atomic, FileLock, FileSystem, PosixFs};
use crate::error::{Error, Result};
use crate::filename::{self, FileType};
use crate::version::manifest::CURRENT;
use meta::{private_owner, BackupMeta, FileEntry, PRIVATE, SHARED};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Subdirectory of the metadata files.
const META: &str = "meta";
/// Subdirectory of the scratch checkpoint.
const SCRATCH: &str = "tmp";
/// Suffix of a shared table being copied (removed by garbage collection).
const COPYING: &str = "tmp";
/// Suffix of a metadata file being written (`write_file_atomic`'s temp name).
const WRITING: &str = ".dbtmp";

/// One backup, as [`BackupEngine::list`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackupInfo {
    /// The backup's id: 1 for the first, then one more than the newest.
    pub id: u64,
    /// Seconds since the Unix epoch when the backup began.
    pub timestamp: u64,
    /// The database's last sequence number when the backup began: the backup holds
    /// every write up to it (and maybe later ones, up to the checkpoint's cut).
    pub sequence: u64,
    /// Number of files in the backup.
    pub files: u64,
    /// Bytes of all its files (what a restore copies).
    pub size: u64,
    /// Bytes it added to the backup directory when made: its private files and the
    /// tables no earlier backup had stored.
    pub copied: u64,
}

impl BackupInfo {
    fn of(meta: &BackupMeta) -> BackupInfo {
        BackupInfo {
            id: meta.id,
            timestamp: meta.created,
            sequence: meta.sequence,
            files: meta.files.len() as u64,
            size: meta.files.iter().map(|f| f.size).sum(),
            copied: meta.copied,
        }
    }
}

/// Incremental backups of databases in one backup directory (see the module docs).
///
/// The engine locks the directory while it is open. Methods that change the directory
/// take `&mut self`, so one handle never collects garbage under its own create.
pub struct BackupEngine {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    _lock: Box<dyn FileLock>,
    /// Bytes per second `create` and `restore` may write ([`BackupEngine::set_rate_limit`]).
    rate_limit: Option<u64>,
    /// Told of each file handled ([`BackupEngine::set_progress`]).
    progress: Option<Progress>,
}

/// A progress callback: `(bytes of the files handled so far, bytes of all the
/// operation's files)`.
pub type Progress = Arc<dyn Fn(u64, u64) + Send + Sync>;

impl std::fmt::Debug for BackupEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackupEngine")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl BackupEngine {
    /// Opens (creating if missing) the backup directory `dir` on the local file
    /// system: [`BackupEngine::open`] with [`PosixFs`].
    ///
    /// # Errors
    /// As [`BackupEngine::open`].
    pub fn open_posix(dir: impl AsRef<Path>) -> Result<BackupEngine> {
        BackupEngine::open(Arc::new(PosixFs), dir)
    }

    /// Opens (creating if missing) the backup directory `dir` through `fs`, locks it,
    /// and removes what an interrupted create, delete or purge left behind: files no
    /// metadata names.
    ///
    /// # Errors
    /// `Locked` if another engine has the directory open; I/O errors. A metadata file
    /// that does not decode does not fail the open (its files are kept, and
    /// [`BackupEngine::list`] reports it).
    pub fn open(fs: Arc<dyn FileSystem>, dir: impl AsRef<Path>) -> Result<BackupEngine> {
        let dir = dir.as_ref().to_path_buf();
        for sub in [META, SHARED, PRIVATE] {
            fs.create_dir_all(&dir.join(sub))?;
        }
        // The directories' entries are durable before anything is stored in them.
        fs.sync_dir(&dir)?;
        fs.sync_dir(filename::parent_dir(&dir))?;
        let lock = fs.lock(&dir.join("LOCK"))?;
        let engine = BackupEngine {
            fs,
            dir,
            _lock: lock,
            rate_limit: None,
            progress: None,
        };
        engine.collect_garbage()?;
        Ok(engine)
    }

    /// Limits the bytes per second that `create` and `restore` write (RocksDB's
    /// `backup_rate_limit` and `restore_rate_limit`), so that a backup taken beside a
    /// busy database does not take its disk's bandwidth; `None` (the default) or 0:
    /// unlimited. Checked after each 1 MiB written: the copy sleeps until its bytes
    /// so far are due.
    pub fn set_rate_limit(&mut self, bytes_per_second: Option<u64>) {
        self.rate_limit = bytes_per_second.filter(|&b| b > 0);
    }

    /// Calls `progress(done, total)` after each file `create`, `verify` or `restore`
    /// handles (copied, found already stored, or checked): the bytes of the files
    /// handled so far and of all the operation's files; `done` reaches `total` when
    /// the operation succeeds. Runs on the caller's thread.
    pub fn set_progress(&mut self, progress: Option<Progress>) {
        self.progress = progress;
    }

    /// A pacer for one operation over files of `total` bytes.
    fn pacer(&self, total: u64) -> Pacer<'_> {
        Pacer {
            limit: self.rate_limit,
            started: std::time::Instant::now(),
            written: 0,
            done: 0,
            total,
            progress: self.progress.as_deref(),
        }
    }

    /// Backs up `db`: a consistent cut of it, taken while writers run (every write
    /// acknowledged before the call is in it). Tables already stored by an earlier
    /// backup are shared, not copied.
    ///
    /// # Errors
    /// As [`Db::checkpoint`] (a read-only or poisoned database); `Corruption` if a
    /// table changed while it was copied; I/O errors. After an error the backup
    /// exists only if the failure came after its metadata file was renamed into place
    /// (the directory fsync), and then it is whole; otherwise what the attempt stored
    /// is removed by the next open, delete or purge.
    pub fn create(&mut self, db: &Db) -> Result<BackupInfo> {
        let db_fs = db.inner().fs.as_ref();
        let scratch = self.dir.join(SCRATCH);
        clear_dir(db_fs, &scratch)?;
        let id = self.ids()?.last().map_or(1, |newest| newest + 1);
        let created = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let sequence = db.latest_sequence();
        let made = db.checkpoint(&scratch).and_then(|_| {
            let (files, copied) = self.store(db_fs, &scratch, id)?;
            let meta = BackupMeta {
                id,
                created,
                sequence,
                copied,
                files,
            };
            // Last: the backup exists once this file does (module docs, crash argument).
            write_file_atomic(
                self.fs.as_ref(),
                &self.dir.join(META),
                &id.to_string(),
                &meta.encode(),
            )?;
            Ok(BackupInfo::of(&meta))
        });
        // Best effort, whatever happened: the backup no longer needs the scratch
        // checkpoint, and the next create or open empties it anyway.
        let _ = clear_dir(db_fs, &scratch);
        made
    }

    /// Step 2 of a create: stores every file of the checkpoint in `scratch` (read
    /// through `db_fs`) as backup `id`'s, durably. Returns the entries, in name
    /// order, and the bytes copied.
    fn store(
        &self,
        db_fs: &dyn FileSystem,
        scratch: &Path,
        id: u64,
    ) -> Result<(Vec<FileEntry>, u64)> {
        let fs = self.fs.as_ref();
        let mut names = db_fs.list(scratch)?;
        names.sort_unstable();
        let mut total = 0;
        for name in &names {
            total += db_fs.file_size(&scratch.join(name))?;
        }
        let mut pacer = self.pacer(total);
        let (mut files, mut copied) = (Vec::new(), 0);
        for name in names {
            let shared = match filename::parse(&name) {
                Some(FileType::Table(_)) => true,
                Some(FileType::Current | FileType::Manifest(_) | FileType::Wal(_)) => false,
                Some(FileType::Options) => false,
                Some(FileType::Lock | FileType::Temp) | None => continue,
            };
            let from = scratch.join(&name);
            let entry = if shared {
                let (size, crc32c) = copy(db_fs, &from, None, &mut pacer)?;
                let entry = FileEntry {
                    name,
                    shared,
                    size,
                    crc32c,
                };
                let to = self.dir.join(entry.stored_path(id));
                // A stored copy of another size was damaged since (a shared name is
                // only ever made by renaming a whole copy): copy it again, which
                // repairs the earlier backups naming it too. Its bytes are not re-read
                // here; `verify` does that.
                let whole = fs.exists(&to) && fs.file_size(&to)? == size;
                if !whole {
                    let partial = to.with_extension(COPYING);
                    let got = copy(db_fs, &from, Some((fs, &partial)), &mut pacer)?;
                    check_file(&from, &entry, got)?;
                    fs.rename(&partial, &to)?;
                    copied += size;
                }
                entry
            } else {
                let mut entry = FileEntry {
                    name,
                    shared,
                    size: 0,
                    crc32c: 0,
                };
                let to = self.dir.join(entry.stored_path(id));
                (entry.size, entry.crc32c) = copy(db_fs, &from, Some((fs, &to)), &mut pacer)?;
                copied += entry.size;
                entry
            };
            pacer.handled(entry.size);
            files.push(entry);
        }
        fs.sync_dir(&self.dir.join(SHARED))?;
        fs.sync_dir(&self.dir.join(PRIVATE))?;
        Ok((files, copied))
    }

    /// Every backup, oldest first.
    ///
    /// # Errors
    /// `Corruption` naming a metadata file that does not decode (delete that backup
    /// to go on); I/O errors.
    pub fn list(&self) -> Result<Vec<BackupInfo>> {
        self.ids()?
            .into_iter()
            .map(|id| Ok(BackupInfo::of(&self.load(id)?)))
            .collect()
    }

    /// Re-reads every file of backup `id` and checks its size and crc32c against
    /// what was recorded when it was made.
    ///
    /// # Errors
    /// `InvalidArgument` naming `id` if there is no such backup; `Corruption` naming
    /// the first file that is missing, has another size or another checksum (or the
    /// metadata file, if it does not decode); I/O errors.
    pub fn verify(&self, id: u64) -> Result<()> {
        let meta = self.load_known(id)?;
        let mut pacer = self.pacer(meta.files.iter().map(|f| f.size).sum());
        for f in &meta.files {
            let path = self.dir.join(f.stored_path(id));
            if !self.fs.exists(&path) {
                return Err(Error::Corruption {
                    file: path,
                    offset: 0,
                    reason: format!("missing: backup {id} holds this file"),
                });
            }
            check_file(&path, f, copy(self.fs.as_ref(), &path, None, &mut pacer)?)?;
            pacer.handled(f.size);
        }
        Ok(())
    }

    /// Restores backup `id` into `target`, which must be absent or an empty
    /// directory: afterwards it opens to exactly the backed-up state. Every file is
    /// checked against its recorded size and crc32c as it is copied.
    ///
    /// # Errors
    /// `InvalidArgument` naming `id` if there is no such backup, or naming `target`
    /// if it holds a database or anything else (nothing is changed then);
    /// `Corruption` naming a backup file that fails its check; I/O errors. After an
    /// error past the target check, `target` holds no `CURRENT`, so no open takes it
    /// for a database; empty it before restoring into it again.
    pub fn restore(&self, id: u64, target: impl AsRef<Path>) -> Result<()> {
        let target = target.as_ref();
        let fs = self.fs.as_ref();
        let meta = self.load_known(id)?;
        check_restore_target(fs, target)?;
        fs.create_dir_all(target)?;
        fs.sync_dir(filename::parent_dir(target))?;
        let mut pacer = self.pacer(meta.files.iter().map(|f| f.size).sum());
        let mut current = None;
        for f in &meta.files {
            let from = self.dir.join(f.stored_path(id));
            if f.name == CURRENT {
                current = Some((f, from));
                continue;
            }
            let got = copy(fs, &from, Some((fs, &target.join(&f.name))), &mut pacer)?;
            check_file(&from, f, got)?;
            pacer.handled(f.size);
        }
        fs.sync_dir(target)?;
        // `decode` refuses metadata without `CURRENT`.
        let Some((f, from)) = current else {
            return Err(Error::Internal(format!("backup {id} has no CURRENT")));
        };
        let bytes = read_to_vec(fs, &from)?;
        check_file(&from, f, (bytes.len() as u64, crc32c::crc32c(&bytes)))?;
        // Last and atomic: the target is a database once every file is durable.
        write_file_atomic(fs, target, CURRENT, &bytes)?;
        pacer.handled(f.size);
        Ok(())
    }

    /// Deletes backup `id`, then every stored file no remaining backup names.
    ///
    /// # Errors
    /// `InvalidArgument` naming `id` if there is no such backup; I/O errors.
    pub fn delete(&mut self, id: u64) -> Result<()> {
        if !self.ids()?.contains(&id) {
            return Err(self.unknown(id));
        }
        self.forget(&[id])
    }

    /// Deletes every backup but the newest `keep`, then every stored file no
    /// remaining backup names. Returns the ids deleted, oldest first.
    ///
    /// # Errors
    /// I/O errors.
    pub fn purge(&mut self, keep: usize) -> Result<Vec<u64>> {
        let ids = self.ids()?;
        let doomed = ids
            .get(..ids.len().saturating_sub(keep))
            .unwrap_or_default();
        self.forget(doomed)?;
        Ok(doomed.to_vec())
    }

    /// Removes the metadata of `ids`, durably, and only then the files they alone
    /// named (module docs, crash argument).
    fn forget(&self, ids: &[u64]) -> Result<()> {
        let meta_dir = self.dir.join(META);
        for id in ids {
            self.fs.remove(&meta_dir.join(id.to_string()))?;
        }
        if !ids.is_empty() {
            self.fs.sync_dir(&meta_dir)?;
        }
        self.collect_garbage()
    }

    /// Removes what no metadata file names: the scratch checkpoint, metadata temp
    /// files, private files of backups without metadata, shared tables no backup
    /// names. If a metadata file does not decode, the files it may name are kept
    /// (its private files, every shared table).
    ///
    /// Removals are not synced: one a crash undoes leaves a file that is garbage
    /// again, removed by the next collection.
    fn collect_garbage(&self) -> Result<()> {
        let fs = self.fs.as_ref();
        clear_dir(fs, &self.dir.join(SCRATCH))?;
        let meta_dir = self.dir.join(META);
        for name in fs.list(&meta_dir)? {
            if name.ends_with(WRITING) {
                fs.remove(&meta_dir.join(name))?;
            }
        }
        let mut named = BTreeSet::new();
        let mut undecodable = BTreeSet::new();
        let ids = self.ids()?;
        for &id in &ids {
            match self.load(id) {
                Ok(meta) => named.extend(meta.files.iter().map(|f| f.stored_path(id))),
                Err(Error::Corruption { .. }) => {
                    undecodable.insert(id);
                }
                Err(e) => return Err(e),
            }
        }
        let private_dir = self.dir.join(PRIVATE);
        for name in fs.list(&private_dir)? {
            let keep = match private_owner(&name) {
                Some(id) if undecodable.contains(&id) => true,
                Some(id) if ids.contains(&id) => named.contains(&Path::new(PRIVATE).join(&name)),
                _ => false,
            };
            if !keep {
                fs.remove(&private_dir.join(name))?;
            }
        }
        let shared_dir = self.dir.join(SHARED);
        for name in fs.list(&shared_dir)? {
            let partial = Path::new(&name).extension() == Some(COPYING.as_ref());
            let keep = !partial
                && (!undecodable.is_empty() || named.contains(&Path::new(SHARED).join(&name)));
            if !keep {
                fs.remove(&shared_dir.join(name))?;
            }
        }
        Ok(())
    }

    /// Ids of every metadata file, ascending (decodable or not).
    fn ids(&self) -> Result<Vec<u64>> {
        let mut ids: Vec<u64> = self
            .fs
            .list(&self.dir.join(META))?
            .iter()
            // Only the canonical spelling (no `+5`, no `05`): `load` opens `meta/<id>`.
            .filter_map(|name| name.parse().ok().filter(|id: &u64| id.to_string() == *name))
            .collect();
        ids.sort_unstable();
        Ok(ids)
    }

    /// The metadata of backup `id`, which must exist.
    fn load(&self, id: u64) -> Result<BackupMeta> {
        let path = self.dir.join(META).join(id.to_string());
        let meta = BackupMeta::decode(&read_to_vec(self.fs.as_ref(), &path)?, &path)?;
        if meta.id != id {
            return Err(Error::Corruption {
                file: path,
                offset: 0,
                reason: format!("backup metadata of backup {} under the name {id}", meta.id),
            });
        }
        Ok(meta)
    }

    /// The metadata of backup `id`, or `InvalidArgument` naming it if there is none.
    fn load_known(&self, id: u64) -> Result<BackupMeta> {
        if !self.fs.exists(&self.dir.join(META).join(id.to_string())) {
            return Err(self.unknown(id));
        }
        self.load(id)
    }

    fn unknown(&self, id: u64) -> Error {
        Error::InvalidArgument(format!(
            "no backup with backup_id={id} in backup_dir=`{}`",
            self.dir.display()
        ))
    }
}

/// Refuses a restore target that exists and is not an empty directory, naming it.
fn check_restore_target(fs: &dyn FileSystem, target: &Path) -> Result<()> {
    if !fs.exists(target) {
        return Ok(());
    }
    let names = fs.list(target)?;
    let what = if names.iter().any(|n| n == CURRENT) {
        "holds a database".to_owned()
    } else if let Some(first) = names.iter().min() {
        format!("is not empty (holds `{first}`)")
    } else {
        return Ok(());
    };
    Err(Error::InvalidArgument(format!(
        "restore target {what}: path=`{}`",
        target.display()
    )))
}

/// Removes every file in `dir`, if it exists.
fn clear_dir(fs: &dyn FileSystem, dir: &Path) -> Result<()> {
    if !fs.exists(dir) {
        return Ok(());
    }
    for name in fs.list(dir)? {
        fs.remove(&dir.join(name))?;
    }
    Ok(())
}

/// Reads the whole file `from` through `from_fs`, writing it, if `to` is given, to a
/// new file there and syncing it. Returns the size and crc32c of the bytes read.
fn copy(
    from_fs: &dyn FileSystem,
    from: &Path,
    to: Option<(&dyn FileSystem, &Path)>,
    pacer: &mut Pacer<'_>,
) -> Result<(u64, u32)> {
    const CHUNK: u64 = 1 << 20;
    let file = from_fs.open_random(from)?;
    let mut out = to.map(|(fs, path)| fs.create(path)).transpose()?;
    let (len, mut offset, mut crc) = (file.size(), 0, 0);
    while offset < len {
        let n = (len - offset).min(CHUNK);
        let chunk = file.read_vec(offset, usize::try_from(n).unwrap_or(usize::MAX))?;
        crc = crc32c::crc32c_append(crc, &chunk);
        if let Some(out) = out.as_mut() {
            out.append(&chunk)?;
            pacer.wrote(n);
        }
        offset += n;
    }
    if let Some(mut out) = out {
        out.sync()?;
    }
    Ok((len, crc))
}

/// One operation's rate limit and progress (see [`BackupEngine::set_rate_limit`] and
/// [`BackupEngine::set_progress`]).
struct Pacer<'a> {
    limit: Option<u64>,
    started: std::time::Instant,
    written: u64,
    done: u64,
    total: u64,
    progress: Option<&'a (dyn Fn(u64, u64) + Send + Sync)>,
}

impl Pacer<'_> {
    /// `n` more bytes were written: sleeps until they are due under the limit.
    fn wrote(&mut self, n: u64) {
        self.written += n;
        let Some(limit) = self.limit else {
            return;
        };
        let due_nanos = u128::from(self.written) * 1_000_000_000 / u128::from(limit);
        let due = std::time::Duration::from_nanos(u64::try_from(due_nanos).unwrap_or(u64::MAX));
        if let Some(early) = due.checked_sub(self.started.elapsed()) {
            std::thread::sleep(early);
        }
    }

    /// A file of `size` bytes was handled.
    fn handled(&mut self, size: u64) {
        self.done += size;
        if let Some(progress) = self.progress {
            progress(self.done, self.total);
        }
    }
}

/// Checks that the file at `path` read as `got` (size, crc32c) is what `entry`
/// records.
///
/// # Errors
/// `Corruption` naming `path`.
fn check_file(path: &Path, entry: &FileEntry, got: (u64, u32)) -> Result<()> {
    let reason = if got.0 != entry.size {
        format!("size {} bytes, the backup recorded {}", got.0, entry.size)
    } else if got.1 != entry.crc32c {
        format!(
            "crc32c {:08x}, the backup recorded {:08x}",
            got.1, entry.crc32c
        )
    } else {
        return Ok(());
    };
    Err(Error::Corruption {
        file: path.to_path_buf(),
        offset: 0,
        reason,
    })
}
