//! Deleting files nothing needs any more.
//!
//! While the database is open, files are deleted only when they become unreferenced:
//! tables when their last `FileRef` drops (see `version::file_ref`), a WAL when the
//! flush of its memtable is durable, a MANIFEST when a newer one is named by
//! `CURRENT`. Their owners queue them in the version set's `ObsoleteFiles`;
//! [`delete_obsolete`], called by background threads after each job, deletes them. No
//! directory is listed while open.
//!
//! At open, [`remove_orphans`] lists the database directory and every data path once
//! and deletes what no durable state names: tables outside the recovered version
//! (outputs of a job that crashed), WALs below the MANIFEST's log number, MANIFESTs
//! other than the live one, and temporary files.

use super::DbInner;
use crate::filename::{self, FileType};
use crate::version::file_ref::Obsolete;
use std::collections::HashSet;

/// Deletes every queued obsolete file. Deletion failures are ignored (the file is an
/// orphan that the next open removes). While the database is poisoned nothing is
/// deleted: an edit whose durability is unknown may still name the files. The
/// `state` lock taken between the take and the deletions also orders each table's
/// deleted event after the completed event of the job that made it obsolete
/// (`db::events`).
///
/// Requires: the `state` lock not held.
pub(crate) fn delete_obsolete(inner: &DbInner) {
    // A reader (read-only, secondary) never deletes in the database's directories:
    // what it holds the writer owns (a secondary releases its own links,
    // `secondary::release`).
    if !inner.access.writes() {
        return;
    }
    let queue = inner.versions.obsolete();
    let _turn = queue.deleting();
    let mut files = queue.take();
    if files.is_empty() {
        return;
    }
    // WALs first and in ascending order (see `ObsoleteFiles::deleting`).
    files.sort_by_key(|f| match f {
        Obsolete::Wal(n) => (0, *n),
        _ => (1, 0),
    });
    if inner.state.lock().bg_error.is_some() {
        queue.restore(files);
        return;
    }
    let db_dir = inner.versions.db_dir();
    for file in files {
        let path = match file {
            Obsolete::Table { number, path_id } => {
                inner.table_cache.evict(number);
                match inner.versions.dir(path_id) {
                    Ok(dir) => filename::table_file(dir, number),
                    Err(_) => continue,
                }
            }
            Obsolete::Wal(n) => filename::wal_file(db_dir, n),
            Obsolete::Manifest(n) => db_dir.join(filename::manifest_name(n)),
        };
        let removed = inner.fs.remove(&path);
        if let Obsolete::Table { number, .. } = file {
            inner.events.table_deleted(number, &path, &removed);
        }
    }
}

/// Deletes files no durable state names (see the module docs). Requires: called by
/// open, after the first MANIFEST of this open is durable and before any job runs.
pub(crate) fn remove_orphans(inner: &DbInner) {
    let live: HashSet<u64> = inner
        .versions
        .families()
        .iter()
        .flat_map(|f| {
            let v = f.current();
            v.physical_tables().map(|f| f.number).collect::<Vec<_>>()
        })
        .collect();
    let manifest = inner.versions.manifest_number();
    let log_number = inner.versions.log_number();
    for dir in inner.versions.dirs().distinct() {
        let Ok(mut names) = inner.fs.list(dir) else {
            continue;
        };
        // WALs in ascending order: a read-only open racing this one finds the WALs it
        // needs either all there or missing from the oldest on (§7.6).
        names.sort_by_key(|name| match filename::parse(name) {
            Some(FileType::Wal(n)) => (0, n),
            _ => (1, 0),
        });
        for name in names {
            let orphan = match filename::parse(&name) {
                Some(FileType::Table(n)) => !live.contains(&n),
                Some(FileType::Wal(n)) => n < log_number,
                Some(FileType::Manifest(n)) => n != manifest,
                Some(FileType::Temp) => true,
                _ => false,
            };
            if orphan {
                let _ = inner.fs.remove(&dir.join(&name));
            }
        }
    }
}
