//! Read-only opens ([`crate::Db::open_read_only`], docs/ARCHITECTURE.md §7.6): the
//! pieces of `open` that differ when nothing may be written.
//!
//! A read-only handle sees the database as of its open: the version the MANIFEST
//! described then, plus the WALs' writes replayed into memtables it keeps. It takes no
//! `LOCK`, creates, renames and deletes nothing, and starts no background thread, so
//! it works on a read-only medium, beside the writer, and in any number of processes.
//! Every write, flush, compaction and family change is refused ([`refused`]).
//!
//! Beside a live writer two things can move under it:
//! - during the open, the writer may roll the MANIFEST, release WALs or delete tables
//!   between the reads the open makes ([`until_stable`] opens again while the
//!   database keeps changing; replay checks that no WAL went missing between the
//!   MANIFEST it read and the logs it found);
//! - after the open, a compaction of the writer deletes tables this handle still
//!   reads. On Linux a deleted file stays readable through a descriptor already open,
//!   so [`pin_tables`] opens every table at open, within the table cache's pin budget
//!   (half of `max_open_files`); a table beyond it, or a parent of a virtual table, is
//!   opened at its first read and may by then be gone (an `Io` error naming it, never
//!   a wrong answer).

use super::family::FamilyState;
use super::state::MemWithLog;
use super::DbInner;
use crate::env::{FileSystem, WritableFile};
use crate::error::{Error, Result};
use crate::memtable::MemTable;
use crate::version::manifest::CURRENT;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long opens are tried while the database changes under them. A writer flushing
/// every few hundred writes (the tests' 4 KiB memtables) moved under up to a dozen
/// tries in a row, and a slow (debug, loaded) open under more than 32: a count of
/// tries is a bet on the open's speed against the writer's, a time budget is not. An
/// open is retried only when it failed and the database changed; a writer that keeps
/// the database moving for this long gets the last try's error.
const RETRY_FOR: Duration = Duration::from_secs(30);

/// Runs `open` (a read-only open of the database in `dir`) until it succeeds, or
/// fails while the database did not change: a failure because a file the MANIFEST
/// named is gone (a table compacted away, a WAL released after a flush, a MANIFEST
/// rolled over) while `CURRENT` or the MANIFEST moved on means a writer moved on, and
/// the open starts again from the newer state, for up to [`RETRY_FOR`].
///
/// # Errors
/// `open`'s error once the database did not change during it, or after the last try.
pub(super) fn until_stable<T>(
    fs: &dyn FileSystem,
    dir: &Path,
    mut open: impl FnMut() -> Result<T>,
) -> Result<T> {
    let start = Instant::now();
    loop {
        let before = fingerprint(fs, dir);
        match open() {
            Ok(opened) => return Ok(opened),
            Err(_) if start.elapsed() < RETRY_FOR && fingerprint(fs, dir) != before => {}
            Err(e) => return Err(e),
        }
    }
}

/// What changes when a writer moves on: `CURRENT`'s contents and the size of the
/// MANIFEST it names (`None` if either cannot be read). Every table or WAL deletion
/// follows a MANIFEST record that made it obsolete.
fn fingerprint(fs: &dyn FileSystem, dir: &Path) -> Option<(Vec<u8>, u64)> {
    let current = fs.open_random(&dir.join(CURRENT)).ok()?;
    let text = current
        .read_vec(0, usize::try_from(current.size()).ok()?)
        .ok()?;
    let name = std::str::from_utf8(&text).ok()?.trim_end();
    let size = fs.file_size(&dir.join(name)).ok()?;
    Some((text, size))
}

/// The error every write, flush, compaction and family change of a read-only handle
/// returns.
pub(super) fn refused(dir: &Path) -> Error {
    Error::InvalidArgument(format!(
        "the database was opened read-only (Db::open_read_only): writes, flushes, \
         compactions and column family changes are refused: path=`{}`",
        dir.display()
    ))
}

/// The WAL of a read-only handle: it refuses every append (writes are refused before
/// they reach it; this keeps any path that did from writing) and has nothing to sync.
pub(super) fn no_wal(dir: &Path) -> Box<dyn WritableFile> {
    Box::new(NoWal {
        dir: dir.to_path_buf(),
    })
}

struct NoWal {
    dir: PathBuf,
}

impl WritableFile for NoWal {
    fn append(&mut self, _data: &[u8]) -> Result<()> {
        Err(refused(&self.dir))
    }

    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        Ok(())
    }

    fn len(&self) -> u64 {
        0
    }
}

/// Gives `state`'s family the memtables replay kept for it (`memtables`: every
/// family's, oldest first) as immutable memtables, and publishes them to readers.
pub(super) fn adopt_memtables(
    state: &mut FamilyState,
    memtables: &[(u32, Arc<MemTable>)],
    log_number: u64,
) {
    let id = state.family.id();
    let mut any = false;
    for (_, mem) in memtables.iter().filter(|(f, _)| *f == id) {
        state.imm.push(MemWithLog {
            mem: Arc::clone(mem),
            log_number,
        });
        any = true;
    }
    if any {
        state.install_super_version(&state.family.versions.current());
    }
}

/// Opens every real table of every family's current version into its file's pin,
/// within the table cache's pin budget (see the module docs).
///
/// # Errors
/// The first table that cannot be opened (missing, damaged), naming it.
pub(super) fn pin_tables(inner: &DbInner) -> Result<()> {
    let st = inner.state.lock();
    for f in st.families.values() {
        let version = f.family.versions.current();
        for run in (0..version.num_levels()).flat_map(|l| version.runs(l)) {
            for (i, meta) in run.files().iter().enumerate() {
                if let Some(file) = run.file_ref(i) {
                    inner.table_cache.get_pinned(meta, Some(file))?;
                }
            }
        }
    }
    Ok(())
}
