//! Installing versions, collecting obsolete files, and reporting statistics.
//!
//! # Why a file is safe to delete
//! A table file may be deleted only when no version that a reader could still hold
//! names it (DESIGN invariant 4). Every installed version is recorded as a `Weak` in
//! `DbState::live_versions`; readers and iterators hold the version (through their
//! super-version) by `Arc`, so a version whose `Weak` cannot be upgraded is
//! unreachable. The live set is the union of the files of every reachable version,
//! plus `pending_outputs` (files being written, in no version yet). Files are only
//! considered if their number is below `next_file_number` as sampled together with that
//! set, so a file created after the sample can never be mistaken for garbage.
//!
//! A WAL may be deleted once every memtable whose writes it holds is flushed and the
//! MANIFEST says so (its number is below `min_log_to_keep`).

use super::write::install_super_version;
use super::{poison, DbInner};
use crate::compaction::picker;
use crate::env::WritableFile;
use crate::error::{Error, Result};
use crate::filename::{self, FileType};
use crate::stats::{DbStats, LevelStats};
use crate::version::edit::VersionEdit;
use crate::version::manifest::Manifest;
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Applies `edit` to the current version, makes it durable in the MANIFEST, and
/// installs the result. Requires: `manifest` lock NOT held by the caller; the `state`
/// lock not held.
///
/// # Errors
/// A MANIFEST write/sync failure poisons the database. An edit that does not apply
/// (deleting a missing file) is reported as corruption: it means broken bookkeeping.
pub(crate) fn log_and_apply(inner: &DbInner, mut edit: VersionEdit) -> Result<()> {
    let mut manifest = inner.manifest.lock();
    let (base, next_file, logged_log) = {
        let st = inner.state.lock();
        st.check_bg_error()?;
        (
            Arc::clone(&st.version),
            st.next_file_number,
            st.logged_log_number,
        )
    };
    let version = base.apply(&edit).map_err(|reason| {
        Error::corruption(filename::manifest_name(manifest.number()), 0, reason)
    })?;
    if cfg!(debug_assertions) {
        if let Err(reason) = version.check_invariants() {
            return Err(poison(
                inner,
                Error::corruption(filename::manifest_name(manifest.number()), 0, reason),
            ));
        }
    }
    edit.last_sequence = Some(inner.last_sequence.load(Ordering::Acquire));
    if manifest.size() >= inner.opts.max_manifest_file_size {
        // Roll over: a new MANIFEST holding the whole new version, then CURRENT swung
        // to it atomically; the old one is collected as obsolete.
        let number = {
            let mut st = inner.state.lock();
            st.new_file_number()
        };
        let mut snapshot = version.to_snapshot_edit();
        snapshot.log_number = Some(edit.log_number.unwrap_or(logged_log));
        snapshot.next_file_number = Some(number + 1);
        snapshot.last_sequence = edit.last_sequence;
        match Manifest::create(&inner.fs, &inner.dir, number, &snapshot) {
            Ok(m) => *manifest = m,
            Err(e) => return Err(poison(inner, e)),
        }
    } else {
        edit.next_file_number = Some(next_file);
        if let Err(e) = manifest.append(&edit) {
            return Err(poison(inner, e));
        }
    }
    let version = Arc::new(version);
    let mut st = inner.state.lock();
    if let Some(l) = edit.log_number {
        st.logged_log_number = l;
    }
    st.version = Arc::clone(&version);
    st.live_versions.push(Arc::downgrade(&version));
    st.pending_compaction_bytes = picker::pending_compaction_bytes(&version, &inner.opts);
    install_super_version(inner, &st);
    Ok(())
}

/// Allocates a table file number, records it as a pending output (so obsolete-file
/// collection leaves it alone until its version is installed), appends it to
/// `numbers`, and creates the file. The caller removes the numbers from
/// `pending_outputs` once the version naming them is installed (or the job failed).
pub(crate) fn new_output_file(
    inner: &DbInner,
    numbers: &mut Vec<u64>,
) -> Result<(u64, Box<dyn WritableFile>)> {
    let n = {
        let mut st = inner.state.lock();
        let n = st.new_file_number();
        st.pending_outputs.insert(n);
        n
    };
    numbers.push(n);
    Ok((n, inner.fs.create(&filename::table_file(&inner.dir, n))?))
}

/// Deletes table files no reachable version names, WALs already flushed, and old
/// MANIFESTs. Deletion failures are ignored (the file is retried next time).
pub(crate) fn delete_obsolete(inner: &DbInner) {
    let manifest_number = inner.manifest.lock().number();
    let (live, pending, next_file, min_log) = {
        let mut st = inner.state.lock();
        st.live_versions.retain(|w| w.strong_count() > 0);
        let mut live = HashSet::new();
        for v in st.live_versions.iter().filter_map(|w| w.upgrade()) {
            live.extend(v.live_files().map(|f| f.number));
        }
        live.extend(st.version.live_files().map(|f| f.number));
        (
            live,
            st.pending_outputs.clone(),
            st.next_file_number,
            st.min_log_to_keep(),
        )
    };
    let Ok(names) = inner.fs.list(&inner.dir) else {
        return;
    };
    for name in names {
        let delete = match filename::parse(&name) {
            Some(FileType::Table(n)) => {
                let dead = n < next_file && !live.contains(&n) && !pending.contains(&n);
                if dead {
                    inner.table_cache.evict(n);
                }
                dead
            }
            Some(FileType::Wal(n)) => n < min_log,
            Some(FileType::Manifest(n)) => n < manifest_number,
            _ => false,
        };
        if delete {
            let _ = inner.fs.remove(&inner.dir.join(&name));
        }
    }
}

/// Exact statistics with the per-level table.
pub(crate) fn stats(inner: &DbInner) -> DbStats {
    let st = inner.state.lock();
    let scores = picker::scores(&st.version, &inner.opts);
    let levels = (0..st.version.num_levels())
        .map(|l| {
            let mut s = st.level_stats.get(l).cloned().unwrap_or_default();
            s.files = st.version.files(l).len();
            s.size = st.version.level_bytes(l);
            s.score = scores.get(l).copied().unwrap_or(0.0);
            s
        })
        .collect::<Vec<LevelStats>>();
    DbStats {
        levels,
        counters: inner.stats.snapshot(),
        block_cache_usage: inner.block_cache.as_ref().map_or(0, |c| c.usage() as u64),
    }
}
