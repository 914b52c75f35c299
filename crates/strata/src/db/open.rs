//! Opening a database: lock, MANIFEST replay, WAL replay, and a fresh MANIFEST + WAL.
//!
//! Recovery order:
//! 1. Take the `LOCK` file.
//! 2. Replay the MANIFEST named by `CURRENT` into a version (or create an empty
//!    database); check the options against it and the previous `OPTIONS` file
//!    ([`options_file::check_compatible`]) before anything is written.
//! 3. Replay every WAL numbered `>= log_number`, oldest first, into memtables; each
//!    memtable that fills (and the last one) is written to an L0 table. The WAL
//!    recovery mode decides what a damaged record means (see
//!    [`WalRecoveryMode`]).
//! 4. Write a new MANIFEST holding the whole version (with the recovered tables and
//!    the new WAL number), fsync it and swing `CURRENT` to it atomically. Only then are
//!    the replayed WALs obsolete. Then record the options in `OPTIONS`.
//! 5. Delete obsolete files; start background threads.
//!
//! A crash at any point repeats the recovery from the same durable state: the old
//! WALs and MANIFEST stay until step 4 has made the new ones durable.

use super::builder::Components;
use super::state::{DbState, MemWithLog};
use super::write::WriteQueue;
use super::{DbInner, SuperVersion};
use crate::cache::{BlockCache, TableCache};
use crate::compaction::gc::VersionGc;
use crate::compaction::job::write_tables;
use crate::compaction::partitioner::FixedSize;
use crate::compaction::picker;
use crate::env::FileSystem;
use crate::error::{Error, Result};
use crate::filename::{self, FileType};
use crate::memtable::MemTable;
use crate::options::{Options, WalRecoveryMode};
use crate::options_file;
use crate::snapshot::SnapshotList;
use crate::sst::TableOptions;
use crate::stats::{LevelStats, Statistics};
use crate::version::edit::VersionEdit;
use crate::version::manifest::{self, Manifest};
use crate::version::{FileMetaData, Version};
use crate::wal::{LogError, LogReader, LogWriter};
use crate::WriteBatch;
use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex};
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// Opens the database in `dir` with `components`. Requires: `opts` validated.
pub(crate) fn open(dir: &Path, opts: Options, components: Components) -> Result<DbInner> {
    let Components { fs, block_cache } = components;
    fs.create_dir_all(dir)?;
    let lock = fs.lock(&dir.join("LOCK"))?;
    let recovered = manifest::recover(fs.as_ref(), dir, opts.num_levels)?;
    // Refuse options the existing database cannot be opened with before writing.
    if let Some(r) = &recovered {
        let stored = options_file::load(fs.as_ref(), dir)?;
        options_file::check_compatible(stored.as_ref(), &opts, r.deepest_level)?;
    }
    let (mut version, mut next_file, mut last_seq, log_number) = match recovered {
        Some(r) => {
            if opts.error_if_exists {
                return Err(Error::InvalidArgument(format!(
                    "database already exists: path=`{}`",
                    dir.display()
                )));
            }
            // A MANIFEST that lost its tail describes an older version whose tables
            // may since have been deleted: refuse it now rather than fail reads later.
            let manifest = dir.join(filename::manifest_name(r.manifest_number));
            for f in r.version.live_files() {
                let table = filename::table_file(dir, f.number);
                if !fs.exists(&table) {
                    return Err(Error::corruption(
                        &manifest,
                        0,
                        format!("MANIFEST names a missing table: file=`{}`", table.display()),
                    ));
                }
            }
            // The WAL the MANIFEST names is created durably before any MANIFEST names it
            // and deleted only after a newer one is named: if it is gone, the MANIFEST
            // lost edits (a flushed memtable would silently vanish).
            let wal = filename::wal_file(dir, r.log_number);
            if !fs.exists(&wal) {
                return Err(Error::corruption(
                    &manifest,
                    0,
                    format!("MANIFEST names a missing WAL: file=`{}`", wal.display()),
                ));
            }
            (r.version, r.next_file_number, r.last_sequence, r.log_number)
        }
        None => {
            if !opts.create_if_missing {
                return Err(Error::InvalidArgument(format!(
                    "database does not exist and create_if_missing is false: path=`{}`",
                    dir.display()
                )));
            }
            (Version::new(opts.num_levels), 2, 0, 0)
        }
    };

    let stats = Arc::new(Statistics::default());
    let block_cache = match block_cache {
        Some(shared) => Some(Arc::new(shared.share())),
        None => (opts.block_cache_capacity > 0)
            .then(|| Arc::new(BlockCache::new(opts.block_cache_capacity))),
    };
    let table_cache = Arc::new(TableCache::new(
        Arc::clone(&fs),
        vec![dir.to_path_buf()],
        opts.max_open_files,
        block_cache.clone(),
        Arc::clone(&stats),
        opts.paranoid_checks,
    ));

    // Replay WALs into L0 tables.
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
        next_file = next_file.max(max + 1);
    }
    let mut new_tables = Vec::new();
    let mut replay = Replay {
        fs: fs.as_ref(),
        dir,
        opts: &opts,
        next_file: &mut next_file,
        last_seq: &mut last_seq,
        mem: Arc::new(MemTable::new()),
        tables: &mut new_tables,
    };
    // The tail that a crash may tear is the newest log holding records: empty logs
    // after it are legal (a crash after a memtable switch created the next WAL but
    // before the old one was synced, or during a recovery, after its new WAL).
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

    // New WAL and MANIFEST holding everything recovered.
    let new_log = next_file;
    next_file += 1;
    let manifest_number = next_file;
    next_file += 1;
    let wal = fs.create(&filename::wal_file(dir, new_log))?;
    let mut edit = VersionEdit::default();
    for f in new_tables {
        edit.new_files.push((0, f));
    }
    version = version
        .apply(&edit)
        .map_err(|reason| Error::corruption(filename::manifest_name(manifest_number), 0, reason))?;
    let mut snapshot = version.to_snapshot_edit();
    snapshot.log_number = Some(new_log);
    snapshot.next_file_number = Some(next_file);
    snapshot.last_sequence = Some(last_seq);
    fs.sync_dir(dir)?;
    let manifest = Manifest::create(&fs, dir, manifest_number, &snapshot)?;
    options_file::store(fs.as_ref(), dir, &opts)?;

    let version = Arc::new(version);
    let mem = Arc::new(MemTable::new());
    let state = DbState {
        mem: MemWithLog {
            mem: Arc::clone(&mem),
            log_number: new_log,
        },
        imm: Vec::new(),
        version: Arc::clone(&version),
        live_versions: vec![Arc::downgrade(&version)],
        logged_log_number: new_log,
        next_file_number: next_file,
        pending_outputs: HashSet::new(),
        busy: Default::default(),
        flush_running: false,
        compactions_running: 0,
        bg_error: None,
        shutting_down: false,
        level_stats: vec![LevelStats::default(); opts.num_levels],
        pending_compaction_bytes: picker::pending_compaction_bytes(&version, &opts),
        manual_waiting: 0,
    };
    let inner = DbInner {
        dir: dir.to_path_buf(),
        fs,
        state: Mutex::new(state),
        bg_cv: Condvar::new(),
        done_cv: Condvar::new(),
        manifest: Mutex::new(manifest),
        super_version: ArcSwap::from_pointee(SuperVersion {
            mem,
            imm: Vec::new(),
            version,
        }),
        last_sequence: AtomicU64::new(last_seq),
        snapshots: Arc::new(SnapshotList::default()),
        table_cache,
        block_cache,
        stats,
        writes: WriteQueue::new(LogWriter::new(wal)),
        opts,
        _lock: lock,
    };
    super::files::delete_obsolete(&inner);
    remove_temp_files(&inner);
    Ok(inner)
}

fn remove_temp_files(inner: &DbInner) {
    if let Ok(names) = inner.fs.list(&inner.dir) {
        for n in names {
            if filename::parse(&n) == Some(FileType::Temp) {
                let _ = inner.fs.remove(&inner.dir.join(n));
            }
        }
    }
}

#[derive(PartialEq, Eq)]
enum Stop {
    Continue,
    Halt,
}

/// WAL replay state.
struct Replay<'a> {
    fs: &'a dyn FileSystem,
    dir: &'a Path,
    opts: &'a Options,
    next_file: &'a mut u64,
    last_seq: &'a mut u64,
    mem: Arc<MemTable>,
    tables: &'a mut Vec<FileMetaData>,
}

impl Replay<'_> {
    /// Replays one WAL. `last`: no later log holds records, so this log's tail is the
    /// one a crash may have torn.
    fn log(&mut self, number: u64, last: bool) -> Result<Stop> {
        let path = filename::wal_file(self.dir, number);
        let mut reader = LogReader::new(self.fs.open_sequential(&path)?);
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
        let mut max_seq = *self.last_seq;
        // Cannot fail: `from_data` validated the batch when it was read.
        let _ = batch.iterate(|seq, kind, key, value| {
            mem.add(seq, kind, key, value);
            max_seq = max_seq.max(seq);
        });
        *self.last_seq = max_seq;
        if self.mem.approximate_memory_usage() >= self.opts.write_buffer_size {
            self.flush_mem()?;
        }
        Ok(())
    }

    /// Writes the replay memtable to an L0 table (fsynced) and starts a new one.
    fn flush_mem(&mut self) -> Result<()> {
        if self.mem.is_empty() {
            return Ok(());
        }
        let mem = std::mem::replace(&mut self.mem, Arc::new(MemTable::new()));
        let mut iter = mem.iter();
        // No snapshots exist during recovery: keep only the newest version of each key.
        let mut gc = VersionGc::new(Vec::new(), false);
        let mut one_file = FixedSize { target: u64::MAX };
        let (fs, dir) = (self.fs, self.dir);
        let next_file = &mut *self.next_file;
        let mut new_file = || {
            let n = *next_file;
            *next_file += 1;
            Ok((n, fs.create(&filename::table_file(dir, n))?))
        };
        let outputs = write_tables(
            &mut iter,
            &mut gc,
            &mut one_file,
            &mut new_file,
            &TableOptions::for_level(self.opts, 0),
        )?;
        self.tables.extend(outputs);
        Ok(())
    }
}
