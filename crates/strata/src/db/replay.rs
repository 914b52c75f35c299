//! WAL replay at open: rebuilds memtables from the write-ahead logs and writes them to
//! L0 tables through recovery-flush plans.
//!
//! Every WAL numbered `>= log_number` (the MANIFEST's oldest needed log) is replayed,
//! oldest first, into a memtable; whenever the memtable fills, and once at the end, it
//! is flushed by the executor like any flush. The edits are not logged one by one:
//! [`replay_wals`] returns them as one edit, which open puts into the first MANIFEST of
//! this open, so a crash during replay leaves the old MANIFEST and the WALs in charge
//! and the next open replays the same logs again (the half-written tables are
//! orphans).
//!
//! What a damaged record means depends on [`WalRecoveryMode`]; the tail a crash may
//! have torn is that of the newest log holding records (empty newer logs are legal: a
//! crash after a switch created the next WAL, or after a recovery created its WAL).

use crate::cache::TableCache;
use crate::compaction::executor::{self, JobContext};
use crate::compaction::{Plan, Reason};
use crate::env::FileSystem;
use crate::error::Result;
use crate::filename::{self, FileType};
use crate::memtable::MemTable;
use crate::options::{Options, WalRecoveryMode};
use crate::version::edit::VersionEdit;
use crate::version::file_ref::FileRef;
use crate::version::VersionSet;
use crate::wal::{LogError, LogReader};
use crate::batch::WriteBatchInternal;
use crate::WriteBatch;
use std::path::Path;
use std::sync::Arc;

/// What replay produced: the tables written (as one edit adding them to L0, and their
/// references).
pub(crate) struct Replayed {
    /// Adds every table written by the replay to L0.
    pub edit: VersionEdit,
    /// References of those tables (pending outputs until the edit is installed).
    pub refs: Vec<Arc<FileRef>>,
}

/// Replays every WAL in `dir` numbered `>= log_number` (see the module docs). WAL
/// numbers found are marked used in `versions`, and its last sequence is raised to the
/// highest replayed.
///
/// Requires: the database is not shared yet (this publishes sequence numbers).
///
/// # Errors
/// `Corruption` naming the WAL and offset for damage the recovery mode does not
/// tolerate; I/O errors; errors writing the tables.
pub(crate) fn replay_wals(
    fs: &dyn FileSystem,
    dir: &Path,
    opts: &Options,
    versions: &VersionSet,
    table_cache: &TableCache,
    log_number: u64,
    l0_path: u32,
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
    if let Some(&max) = logs.last() {
        versions.mark_file_number_used(max);
    }
    let mut replay = Replay {
        dir,
        opts,
        l0_path,
        ctx: JobContext {
            fs,
            versions,
            table_cache,
            // No snapshot exists during recovery: keep only the newest version of each
            // key.
            snapshots: Vec::new(),
            merge_operator: opts.merge_operator.as_deref(),
        },
        mem: Arc::new(MemTable::new()),
        out: Replayed {
            edit: VersionEdit::default(),
            refs: Vec::new(),
        },
    };
    let tail = logs
        .iter()
        .rposition(|&n| {
            fs.file_size(&filename::wal_file(dir, n))
                .map_or(true, |s| s > 0)
        })
        .unwrap_or(0);
    for (i, &log) in logs.iter().enumerate() {
        if replay.log(log, i >= tail)? == Stop::Halt {
            break;
        }
    }
    replay.flush_mem()?;
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
    opts: &'a Options,
    /// The data path recovery flushes write (placement's answer for L0).
    l0_path: u32,
    ctx: JobContext<'a>,
    mem: Arc<MemTable>,
    out: Replayed,
}

impl Replay<'_> {
    /// Replays one WAL. `last`: no later log holds records, so this log's tail is the
    /// one a crash may have torn.
    fn log(&mut self, number: u64, last: bool) -> Result<Stop> {
        let path = filename::wal_file(self.dir, number);
        let mut reader = LogReader::new(self.ctx.fs.open_sequential(&path)?);
        let mut buf = Vec::new();
        loop {
            let err = match reader.read_record(&mut buf) {
                Ok(None) => return Ok(Stop::Continue),
                Ok(Some(offset)) => match WriteBatch::from_data(std::mem::take(&mut buf)) {
                    Ok(batch) => {
                        self.apply(&batch)?;
                        continue;
                    }
                    Err(e) => LogError::Corrupt {
                        offset,
                        reason: e.0,
                    },
                },
                Err(e) => e,
            };
            return self.damaged(&path, err, &mut reader, last);
        }
    }

    /// Decides what a damaged record means under the recovery mode.
    fn damaged(
        &mut self,
        path: &Path,
        err: LogError,
        reader: &mut LogReader,
        last: bool,
    ) -> Result<Stop> {
        if let LogError::Io(e) = err {
            return Err(e);
        }
        match self.opts.wal_recovery_mode {
            WalRecoveryMode::AbsoluteConsistency => Err(err.into_error(path.to_path_buf())),
            WalRecoveryMode::PointInTime => Ok(Stop::Halt),
            WalRecoveryMode::TolerateCorruptedTailRecords => {
                if !last {
                    return Err(err.into_error(path.to_path_buf()));
                }
                // A tail is torn only if nothing valid follows the damage.
                let mut buf = Vec::new();
                loop {
                    match reader.read_record(&mut buf) {
                        Ok(None) => return Ok(Stop::Halt),
                        Ok(Some(_)) => return Err(err.into_error(path.to_path_buf())),
                        Err(LogError::Io(e)) => return Err(e),
                        Err(_) => continue,
                    }
                }
            }
        }
    }

    fn apply(&mut self, batch: &WriteBatch) -> Result<()> {
        let mem = Arc::clone(&self.mem);
        let mut max_seq = self.ctx.versions.last_sequence();
        // Cannot fail: `from_data` validated the batch when it was read.
        let _ = batch.iterate(|seq, kind, key, value| {
            mem.add(seq, kind, key, value);
            max_seq = max_seq.max(seq);
        });
        self.ctx.versions.set_last_sequence(max_seq);
        if self.mem.approximate_memory_usage() >= self.opts.write_buffer_size {
            self.flush_mem()?;
        }
        Ok(())
    }

    /// Writes the replay memtable to an L0 table (a recovery-flush plan) and starts a
    /// new one.
    fn flush_mem(&mut self) -> Result<()> {
        if self.mem.is_empty() {
            return Ok(());
        }
        let mem = std::mem::replace(&mut self.mem, Arc::new(MemTable::new()));
        let plan = Plan::flush(self.opts, mem, self.l0_path, None, Reason::RecoveryFlush);
        let outcome = executor::execute(&plan, &self.ctx)?;
        self.out.edit.new_files.extend(outcome.edit.new_files);
        self.out.refs.extend(outcome.refs);
        Ok(())
    }
}
