//! WAL replay at open: rebuilds memtables from the write-ahead logs and writes them to
//! L0 tables through recovery-flush plans (or, for a read-only open, keeps them in
//! memory and writes nothing).
//!
//! Every WAL numbered `>= log_number` (the oldest log some family needs) is replayed,
//! oldest first, into one memtable per column family; a record of a family goes to
//! its memtable only if the WAL is at or above the family's own log number (older
//! WALs hold only what the family already flushed). A record of a dropped family
//! (an id at most the MANIFEST's `max_column_family` but not live) is skipped; an id
//! above it is corruption. Whenever a family's memtable fills, and once at the end,
//! it is flushed by the executor like any flush. The edits are not logged one by one:
//! [`replay_wals`] returns them, one per family, and open puts them into the first
//! MANIFEST of this open, so a crash during replay leaves the old MANIFEST and the
//! WALs in charge and the next open replays the same logs again (the half-written
//! tables are orphans).
//!
//! What a damaged record means depends on [`WalRecoveryMode`]. A crash may tear the
//! tail of any WAL, not only the newest: a switch does not fsync the WAL it closes
//! (`write::switch_wal`), so the page cache may have written the new WAL's records
//! back and not the old one's tail. Replay therefore checks that sequence numbers run
//! on without a gap from record to record, across WALs: at the first gap the writes
//! after it were never durable in order (a sync write fsyncs every older WAL before
//! its own), so replay stops there, as at a torn tail, and the database recovers a
//! prefix of its writes. Empty logs are legal anywhere (a crash after a switch created
//! the next WAL, or after a recovery created its WAL).

use crate::batch::WriteBatchInternal;
use crate::cache::TableCache;
use crate::compaction::executor::{self, JobContext};
use crate::compaction::{Plan, Reason};
use crate::env::FileSystem;
use crate::error::{Error, Result};
use crate::filename::{self, FileType};
use crate::memtable::MemTable;
use crate::options::{Options, WalRecoveryMode};
use crate::stats::purpose::IoPurpose;
use crate::version::edit::VersionEdit;
use crate::version::file_ref::FileRef;
use crate::version::VersionSet;
use crate::wal::{LogError, LogReader};
use crate::WriteBatch;
use std::path::Path;
use std::sync::Arc;

/// What replay produced: the tables written (per family, an edit adding them to L0,
/// and their references), or with [`ReplayInto::Memory`] the memtables.
pub(crate) struct Replayed {
    /// Per family id, an edit adding every table the replay wrote for it to L0.
    pub edits: Vec<(u32, VersionEdit)>,
    /// References of those tables (pending outputs until the edits are installed).
    pub refs: Vec<Arc<FileRef>>,
    /// With [`ReplayInto::Memory`]: each family's non-empty memtables, oldest first
    /// (a family's writes in sequence order across them).
    pub memtables: Vec<(u32, Arc<MemTable>)>,
}

/// Where replayed writes end up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReplayInto {
    /// L0 tables, through recovery-flush plans (an ordinary open).
    Tables,
    /// Memtables kept in memory, nothing written (a read-only open).
    Memory,
}

/// A column family as replay sees it.
pub(crate) struct ReplayFamily {
    /// The family's id.
    pub id: u32,
    /// Its options (memtable size, merge operator, table options).
    pub opts: Options,
    /// WALs below this hold nothing of the family that is not in a table.
    pub log_number: u64,
    /// The data path its L0 tables go to.
    pub l0_path: u32,
}

/// Replays every WAL in `dir` numbered `>= log_number` into `families` (see the
/// module docs). WAL numbers found are marked used in `versions`, and its last
/// sequence is raised to the highest replayed.
///
/// Requires: the database is not shared yet (this publishes sequence numbers);
/// `log_number` is the smallest of the families' log numbers.
///
/// # Errors
/// `Corruption` naming the WAL and offset for damage the recovery mode does not
/// tolerate or for a record of a family the MANIFEST never created; I/O errors;
/// errors writing the tables.
#[expect(
    clippy::too_many_arguments,
    reason = "the pieces of a database being opened"
)]
pub(crate) fn replay_wals(
    fs: &dyn FileSystem,
    dir: &Path,
    opts: &Options,
    versions: &VersionSet,
    table_cache: &TableCache,
    log_number: u64,
    families: Vec<ReplayFamily>,
    max_column_family: u32,
    into: ReplayInto,
) -> Result<Replayed> {
    let mut logs: Vec<u64> = fs
        .list(dir)?
        .iter()
        .filter_map(|n| match filename::parse(n) {
            Some(FileType::Wal(n)) if n >= log_number => Some(n),
            _ => None,
        })
        .collect();
    logs.sort_unstable();
    // A read-only open reads the MANIFEST, then lists the WALs, while a writer may
    // flush and release WALs in between. The oldest WAL the MANIFEST says a family
    // needs exists as long as that MANIFEST is current (a WAL is deleted only after a
    // newer record moved every family past it), so its absence means the writes in it
    // would be missing from the middle of the state: refuse, and the open is tried
    // again from the newer MANIFEST. An ordinary open holds the lock: nothing moves.
    if into == ReplayInto::Memory && logs.first() != Some(&log_number) {
        return Err(wal_gone(dir, log_number));
    }
    if let Some(&max) = logs.last() {
        versions.mark_file_number_used(max);
    }
    let mut replay = Replay {
        dir,
        opts,
        fs,
        versions,
        table_cache,
        families: families
            .into_iter()
            .map(|f| (f, Arc::new(MemTable::new())))
            .collect(),
        max_column_family,
        next_sequence: None,
        into,
        out: Replayed {
            edits: Vec::new(),
            refs: Vec::new(),
            memtables: Vec::new(),
        },
    };
    for &log in &logs {
        if replay.log(log)? == Stop::Halt {
            break;
        }
    }
    for i in 0..replay.families.len() {
        replay.flush_mem(i)?;
    }
    Ok(replay.out)
}

#[derive(PartialEq, Eq)]
enum Stop {
    Continue,
    Halt,
}

/// WAL replay state.
struct Replay<'a> {
    dir: &'a Path,
    /// The database's options (the recovery mode).
    opts: &'a Options,
    fs: &'a dyn FileSystem,
    versions: &'a VersionSet,
    table_cache: &'a TableCache,
    /// Each live family with the memtable it replays into.
    families: Vec<(ReplayFamily, Arc<MemTable>)>,
    max_column_family: u32,
    /// The sequence number the next record must start at (none before the first).
    next_sequence: Option<u64>,
    into: ReplayInto,
    out: Replayed,
}

impl Replay<'_> {
    /// Replays one WAL; `Halt` once a record is missing (see the module docs).
    fn log(&mut self, number: u64) -> Result<Stop> {
        let path = filename::wal_file(self.dir, number);
        let mut reader = LogReader::new(self.fs.open_sequential(&path)?);
        let mut buf = Vec::new();
        loop {
            let err = match reader.read_record(&mut buf) {
                Ok(None) => return Ok(Stop::Continue),
                Ok(Some(offset)) => match WriteBatch::from_data(std::mem::take(&mut buf)) {
                    Ok(batch) => {
                        let first = batch.sequence();
                        if self.next_sequence.is_some_and(|next| next != first) {
                            return self.gap(&path, offset, first);
                        }
                        self.next_sequence = Some(first + batch.len() as u64);
                        self.apply(&batch, number, &path, offset)?;
                        continue;
                    }
                    Err(e) => LogError::Corrupt {
                        offset,
                        reason: e.0,
                    },
                },
                Err(e) => e,
            };
            return self.damaged(&path, err, &mut reader);
        }
    }

    /// A record starting at `found` where the sequence should have run on: the writes
    /// between were lost with the unsynced tail of an earlier WAL. Every mode but
    /// absolute consistency recovers up to the gap.
    fn gap(&self, path: &Path, offset: u64, found: u64) -> Result<Stop> {
        if self.opts.wal_recovery_mode != WalRecoveryMode::AbsoluteConsistency {
            return Ok(Stop::Halt);
        }
        let expected = self.next_sequence.unwrap_or(found);
        Err(Error::corruption(
            path,
            offset,
            format!("WAL sequence gap: record starts at {found}, expected {expected}"),
        ))
    }

    /// Decides what a damaged record means under the recovery mode.
    fn damaged(&mut self, path: &Path, err: LogError, reader: &mut LogReader) -> Result<Stop> {
        if let LogError::Io(e) = err {
            return Err(e);
        }
        match self.opts.wal_recovery_mode {
            WalRecoveryMode::AbsoluteConsistency => Err(err.into_error(path.to_path_buf())),
            WalRecoveryMode::PointInTime => Ok(Stop::Halt),
            WalRecoveryMode::TolerateCorruptedTailRecords => {
                // A tail is torn only if nothing valid follows the damage. Replay goes
                // on with the next WAL only if its records continue the sequence, so
                // a tear that lost a write stops recovery there.
                let mut buf = Vec::new();
                loop {
                    match reader.read_record(&mut buf) {
                        Ok(None) => return Ok(Stop::Continue),
                        Ok(Some(_)) => return Err(err.into_error(path.to_path_buf())),
                        Err(LogError::Io(e)) => return Err(e),
                        Err(_) => continue,
                    }
                }
            }
        }
    }

    /// Applies the records of `batch` (read from WAL `wal` at `offset`) to the
    /// memtables of the families that need them.
    fn apply(&mut self, batch: &WriteBatch, wal: u64, path: &Path, offset: u64) -> Result<()> {
        let max_column_family = self.max_column_family;
        let families = &self.families;
        let inserted = insert_batch(batch, |family| {
            match families.iter().find(|(f, _)| f.id == family) {
                Some((f, mem)) if wal >= f.log_number => Route::Into(Arc::clone(mem)),
                Some(_) => Route::Skip,
                // A dropped family: its records go with it.
                None if family <= max_column_family => Route::Skip,
                None => Route::Unknown,
            }
        });
        let max_seq = match inserted {
            Ok(seq) => self.versions.last_sequence().max(seq),
            Err(family) => return Err(unknown_family(path, offset, family)),
        };
        self.versions.set_last_sequence(max_seq);
        let full: Vec<usize> = (self.families.iter().enumerate())
            .filter(|(_, (f, mem))| mem.approximate_memory_usage() >= f.opts.write_buffer_size)
            .map(|(i, _)| i)
            .collect();
        for i in full {
            self.flush_mem(i)?;
        }
        Ok(())
    }

    /// Writes family `i`'s replay memtable to an L0 table (a recovery-flush plan), or
    /// with [`ReplayInto::Memory`] keeps it, and starts a new one.
    fn flush_mem(&mut self, i: usize) -> Result<()> {
        let Some((f, mem)) = self.families.get_mut(i) else {
            return Ok(());
        };
        if mem.is_empty() {
            return Ok(());
        }
        let mem = std::mem::replace(mem, Arc::new(MemTable::new()));
        if self.into == ReplayInto::Memory {
            self.out.memtables.push((f.id, mem));
            return Ok(());
        }
        let plan = Plan::flush(&f.opts, mem, f.l0_path, None, Reason::RecoveryFlush);
        let ctx = JobContext {
            fs: self.fs,
            versions: self.versions,
            table_cache: self.table_cache,
            // No snapshot exists during recovery: keep only the newest version of each
            // key.
            snapshots: Vec::new(),
            merge_operator: f.opts.merge_operator.as_deref(),
            compaction_filter: f.opts.compaction_filter_factory.as_deref(),
            // A flush has no virtual input.
            version: None,
        };
        let outcome = {
            let _purpose = IoPurpose::Flush.enter();
            executor::execute(&plan, &ctx)?
        };
        let id = f.id;
        match self.out.edits.iter_mut().find(|(fid, _)| *fid == id) {
            Some((_, edit)) => edit.new_files.extend(outcome.edit.new_files),
            None => self.out.edits.push((id, outcome.edit)),
        }
        self.out.refs.extend(outcome.refs);
        Ok(())
    }
}

/// Where the entries of one column family in a WAL record go.
pub(crate) enum Route {
    /// Into this memtable.
    Into(Arc<MemTable>),
    /// Nowhere: the family already holds them in a table, or was dropped.
    Skip,
    /// A family the MANIFEST read so far does not know.
    Unknown,
}

/// Adds the entries of `batch` to the memtable `route` gives each family (asked once
/// per family the batch holds), all or nothing: if `route` calls a family unknown,
/// nothing is added and its id is the error. Returns the largest sequence number of
/// the batch (0 for an empty one).
pub(crate) fn insert_batch(
    batch: &WriteBatch,
    mut route: impl FnMut(u32) -> Route,
) -> std::result::Result<u64, u32> {
    let mut ids: Vec<u32> = Vec::new();
    // Cannot fail: `from_data` validated the batch when it was read.
    let _ = batch.iterate_cf(|family, _, _, _, _| {
        if !ids.contains(&family) {
            ids.push(family);
        }
    });
    let mut routes = Vec::with_capacity(ids.len());
    for id in ids {
        match route(id) {
            Route::Unknown => return Err(id),
            r => routes.push((id, r)),
        }
    }
    let mut max_seq = 0;
    let _ = batch.iterate_cf(|family, seq, kind, key, value| {
        max_seq = max_seq.max(seq);
        if let Some((_, Route::Into(mem))) = routes.iter().find(|(id, _)| *id == family) {
            mem.add(seq, kind, key, value);
        }
    });
    Ok(max_seq)
}

/// A WAL record naming a family id above the largest the MANIFEST ever gave.
pub(crate) fn unknown_family(path: &Path, offset: u64, family: u32) -> Error {
    Error::corruption(
        path,
        offset,
        format!("WAL record of a column family the MANIFEST never created: id=`{family}`"),
    )
}

/// The oldest WAL a MANIFEST a reader (read-only, secondary) read names is gone: a
/// writer flushed it and released it since, so the reader must start again from the
/// newer MANIFEST (see [`replay_wals`]).
pub(crate) fn wal_gone(dir: &Path, log_number: u64) -> Error {
    Error::corruption(
        filename::wal_file(dir, log_number),
        0,
        "the WAL the MANIFEST needs first is gone (a writer released it)",
    )
}
