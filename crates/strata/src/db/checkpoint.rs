//! Checkpoints ([`crate::Db::checkpoint`], docs/ARCHITECTURE.md §7.7): a consistent,
//! openable copy of the database, made of hard links to its tables.
//!
//! The cut. With the WAL lock held, no write can reach a WAL: every WAL is synced,
//! the current one's size is the end of the last record appended, and under the
//! version set's writer lock (so no flush or compaction installs meanwhile) the
//! checkpoint's MANIFEST is written with every family's current version and log
//! number, and every WAL those log numbers need is opened. The checkpoint is the
//! state of those versions plus those WALs' records up to that size: exactly the
//! writes appended before the cut, which includes every write acknowledged before the
//! call. Writers wait for the WAL fsyncs, a flush or compaction install in progress,
//! and the MANIFEST (write, fsync, directory fsync, `CURRENT`): the metadata steps.
//!
//! After the cut, without locks: every table the versions name is hard-linked into
//! the checkpoint (copied where linking fails: another file system, or a file system
//! without links), the opened WALs are copied up to the cut, `OPTIONS` is written, and
//! the directory is synced. `CURRENT` is written last (atomically, with its directory
//! fsync): until then the directory is not a database (an open without
//! `create_if_missing` refuses it), and once it exists every file it leads to is
//! durable. So a crash at any step leaves either no database or the whole checkpoint.
//! The held versions keep their tables from being deleted and the open WAL handles
//! keep theirs readable, whatever the database does meanwhile. A checkpoint
//! interrupted by a crash leaves a directory without `CURRENT`, which a later
//! checkpoint to the same target refuses as not empty.

use super::{write, DbInner};
use crate::env::{FileSystem, RandomAccessFile};
use crate::error::{Error, Result};
use crate::filename::{self, FileType};
use crate::options_file;
use crate::version::manifest;
use std::path::Path;
use std::sync::Arc;

/// What [`crate::Db::checkpoint`] made.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CheckpointInfo {
    /// Table files given a second name in the checkpoint (no bytes copied).
    pub tables_linked: u64,
    /// Table files copied (linking failed), and their bytes.
    pub tables_copied: u64,
    /// Bytes of the copied table files.
    pub table_bytes_copied: u64,
    /// WAL files copied, and their bytes (the unflushed writes).
    pub wals_copied: u64,
    /// Bytes of the copied WALs.
    pub wal_bytes_copied: u64,
}

/// A WAL the checkpoint needs: its number, an open handle (readable even if the
/// database deletes the file meanwhile) and the bytes before the cut.
struct WalCut {
    number: u64,
    file: Arc<dyn RandomAccessFile>,
    len: u64,
}

/// Makes the checkpoint of `inner` in `dir` (see the module docs).
///
/// # Errors
/// `InvalidArgument` if `dir` exists and is not an empty directory (an interrupted
/// checkpoint's included), or for a read-only handle; I/O errors (the database is
/// unaffected; `dir` may remain without `CURRENT`, which is no database).
pub(super) fn create(inner: &DbInner, dir: &Path) -> Result<CheckpointInfo> {
    inner.check_writable()?;
    // A poisoned database may hold edits whose durability is unknown: no copy of it.
    inner.state.lock().check_bg_error()?;
    let fs = inner.fs.as_ref();
    if fs.exists(dir) && !fs.list(dir)?.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "checkpoint directory is not empty: path=`{}`",
            dir.display()
        )));
    }
    fs.create_dir_all(dir)?;
    // The directory's own entry, durable before `CURRENT` makes it a database.
    fs.sync_dir(filename::parent_dir(dir))?;
    // Held across the cut, so the families the checkpoint's MANIFEST holds are the
    // ones whose options it records (taken before the WAL and version-set locks, in
    // the order `create_family` takes them).
    let recorded = inner.family_options.lock();
    let families = recorded.clone();
    let (manifest, versions, wals) = write::with_wal_cut(inner, |current, current_len| {
        inner.versions.write_manifest_into(dir, |versions| {
            let oldest = versions.iter().map(|(_, _, log)| *log).min().unwrap_or(0);
            open_wals(fs, &inner.dir, oldest, (current, current_len))
        })
    })?;
    drop(recorded);
    let mut info = CheckpointInfo::default();
    for table in versions.iter().flat_map(|(_, v, _)| v.physical_tables()) {
        let from = filename::table_file(inner.versions.dir(table.path_id)?, table.number);
        let to = filename::table_file(dir, table.number);
        if fs.link(&from, &to).is_ok() {
            info.tables_linked += 1;
        } else {
            let file = fs.open_random(&from)?;
            copy(fs, file.as_ref(), table.size, &to)?;
            info.tables_copied += 1;
            info.table_bytes_copied += table.size;
        }
    }
    for wal in &wals {
        copy(
            fs,
            wal.file.as_ref(),
            wal.len,
            &filename::wal_file(dir, wal.number),
        )?;
        info.wals_copied += 1;
        info.wal_bytes_copied += wal.len;
    }
    // All tables now sit in the checkpoint's own directory: it opens without data paths.
    let mut opts = inner.opts.clone();
    opts.db_paths.clear();
    options_file::store(fs, dir, &opts, &families)?;
    fs.sync_dir(dir)?;
    drop(versions);
    // Last: every file `CURRENT` leads to is durable.
    manifest::set_current(fs, dir, manifest)?;
    Ok(info)
}

/// Opens every WAL in `db_dir` from `oldest` to `current.0` (the WAL taking writes,
/// cut at `current.1` bytes); the others are whole (a closed WAL is never appended to
/// again). A WAL file above the current one is an empty leftover of a failed switch
/// and is skipped. Requires: no write can reach a WAL, and no version install can
/// release one (the caller holds the WAL lock and the version set's writer lock).
fn open_wals(
    fs: &dyn FileSystem,
    db_dir: &Path,
    oldest: u64,
    current: (u64, u64),
) -> Result<Vec<WalCut>> {
    let mut numbers: Vec<u64> = fs
        .list(db_dir)?
        .iter()
        .filter_map(|n| match filename::parse(n) {
            Some(FileType::Wal(n)) if (oldest..=current.0).contains(&n) => Some(n),
            _ => None,
        })
        .collect();
    numbers.sort_unstable();
    numbers
        .into_iter()
        .map(|number| {
            let file = fs.open_random(&filename::wal_file(db_dir, number))?;
            let len = if number == current.0 {
                current.1
            } else {
                file.size()
            };
            Ok(WalCut { number, file, len })
        })
        .collect()
}

/// Copies the first `len` bytes of `from` into a new file `to` and syncs it.
fn copy(fs: &dyn FileSystem, from: &dyn RandomAccessFile, len: u64, to: &Path) -> Result<()> {
    const CHUNK: u64 = 1 << 20;
    let mut out = fs.create(to)?;
    let mut offset = 0;
    while offset < len {
        let n = (len - offset).min(CHUNK);
        let chunk = from.read_vec(offset, usize::try_from(n).unwrap_or(usize::MAX))?;
        out.append(&chunk)?;
        offset += n;
    }
    out.sync()
}
