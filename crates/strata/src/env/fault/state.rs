//! The mutable model behind [`super::FaultFs`]: inodes with a durable prefix, a current
//! and a durable namespace, the directory set, locks, fault rules and counters.
//!
//! Every field is read and written only while holding the one `parking_lot::Mutex` that
//! wraps [`State`]; no method here does real I/O, so holding it is always cheap.
//!
//! Invariants (checked by the tests in `tests.rs`):
//! 1. For every inode, `durable_len <= data.len()`, and the bytes that survive a
//!    power loss are exactly `data[..durable_len]`: only appends change a file's bytes
//!    (test-only corruption helpers change both views at once).
//! 2. Every inode is referenced by the current namespace, the durable namespace or an
//!    open handle of the current epoch; [`State::gc`] drops the others.
//! 3. Handles carry the epoch they were opened in; any use after a crash (epoch bump)
//!    fails without touching the state.

use super::rules::{CrashMode, FailedSyncMode, FaultKinds, FaultRule, SplitMix64};
use crate::error::{Error, IoOp, Result};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};

/// Identifies one file's bytes independently of the names pointing at it.
pub(super) type InodeId = u64;

/// One file's bytes.
#[derive(Debug, Default)]
pub(super) struct Inode {
    /// Current content, as reads see it (the page cache).
    pub(super) data: Vec<u8>,
    /// Length of the prefix of `data` that survives a power loss (invariant 1).
    pub(super) durable_len: usize,
    /// Open handles of the current epoch (writers, readers).
    pub(super) open: usize,
}

/// The whole simulated file system.
#[derive(Debug, Default)]
pub(super) struct State {
    /// Bumped by every crash; handles of older epochs are stale.
    pub(super) epoch: u64,
    next_inode: InodeId,
    pub(super) inodes: BTreeMap<InodeId, Inode>,
    /// Directory entries as the running process sees them.
    pub(super) current: BTreeMap<PathBuf, InodeId>,
    /// Directory entries as of the last successful `sync_dir` of each directory.
    pub(super) durable: BTreeMap<PathBuf, InodeId>,
    /// Created directories (durable on creation; the root and `""` always exist).
    pub(super) dirs: BTreeSet<PathBuf>,
    /// Held locks: path to the id of the live lock handle.
    pub(super) locks: HashMap<PathBuf, u64>,
    next_lock: u64,
    rules: Vec<FaultRule>,
    pub(super) op_count: u64,
    pub(super) faults_injected: u64,
    pub(super) failed_sync_mode: FailedSyncMode,
    /// The last `trace_capacity` operations, oldest first (off while 0): what a failing
    /// crash-loop cycle prints to show the order in which threads touched the disk.
    pub(super) trace: std::collections::VecDeque<String>,
    pub(super) trace_capacity: usize,
    /// Refuse direct I/O, as a file system without `O_DIRECT` does (tmpfs before Linux
    /// 6.6).
    pub(super) refuse_direct: bool,
    /// Paths ever created or opened with direct I/O.
    pub(super) direct_paths: BTreeSet<PathBuf>,
    /// The most bytes all files together may hold (`FaultFs::set_quota`): an append
    /// past it keeps what fits and fails with `ENOSPC`.
    pub(super) quota: Option<u64>,
}

/// Normalizes `p` (drops `.` components, repeated and trailing separators).
pub(super) fn norm(p: &Path) -> PathBuf {
    p.components().collect()
}

/// The directory holding `p` (`""` for a bare relative name).
pub(super) fn parent_of(p: &Path) -> PathBuf {
    p.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// An [`Error::Io`] with an `io::Error` of `kind`.
pub(super) fn io_err(op: IoOp, path: &Path, kind: io::ErrorKind, msg: &str) -> Error {
    Error::io(op, path, io::Error::new(kind, msg.to_string()))
}

/// The error of an injected fault.
fn injected(op: IoOp, path: &Path) -> Error {
    Error::io(op, path, io::Error::other("injected fault"))
}

/// The error of a full disk: an injected one (`FaultRule::no_space`) says so, to tell
/// it from a quota.
pub(super) fn no_space(op: IoOp, path: &Path, injected: bool) -> Error {
    let msg = if injected {
        "injected fault: no space left on device"
    } else {
        "no space left on device (quota)"
    };
    io_err(op, path, io::ErrorKind::StorageFull, msg)
}

/// True iff `e` is a full disk (injected or a quota).
pub(super) fn is_full(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.kind() == io::ErrorKind::StorageFull)
}

fn not_found(op: IoOp, path: &Path) -> Error {
    io_err(
        op,
        path,
        io::ErrorKind::NotFound,
        "no such file or directory",
    )
}

impl State {
    /// Counts one operation of `kind` and fails it iff an installed rule fires.
    ///
    /// Every rule matching the operation counts it, even when an earlier rule fires.
    ///
    /// # Errors
    /// `Error::Io` with source `"injected fault"` when a rule fires.
    pub(super) fn check(
        &mut self,
        kind: FaultKinds,
        op: IoOp,
        path: &Path,
        other: Option<&Path>,
    ) -> Result<()> {
        self.op_count += 1;
        let mut fire = false;
        let mut full = false;
        for rule in self.rules.iter_mut().filter(|r| !r.spent) {
            if !rule.kinds.intersects(kind) {
                continue;
            }
            if let Some(frag) = &rule.path_contains {
                let hit = |p: &Path| p.to_string_lossy().contains(frag.as_str());
                if !hit(path) && !other.is_some_and(hit) {
                    continue;
                }
            }
            rule.seen += 1;
            if rule.seen > rule.skip {
                fire = true;
                full |= rule.no_space;
                rule.spent = !rule.sticky;
            }
        }
        self.rules.retain(|r| !r.spent);
        if self.trace_capacity > 0 && kind != FaultKinds::READ {
            if self.trace.len() == self.trace_capacity {
                self.trace.pop_front();
            }
            let thread = std::thread::current();
            self.trace.push_back(format!(
                "#{} {} {}{}{} [{}]",
                self.op_count,
                op,
                path.display(),
                other
                    .map(|o| format!(" -> {}", o.display()))
                    .unwrap_or_default(),
                if fire { " FAILED" } else { "" },
                thread.name().unwrap_or("?"),
            ));
        }
        if fire {
            self.faults_injected += 1;
            return Err(if full {
                no_space(op, path, true)
            } else {
                injected(op, path)
            });
        }
        Ok(())
    }

    /// Bytes every file holds now (each inode once, linked or open).
    pub(super) fn used_bytes(&self) -> u64 {
        self.inodes.values().map(|i| i.data.len() as u64).sum()
    }

    /// How many of `want` more bytes the quota leaves room for.
    pub(super) fn room(&self, want: usize) -> usize {
        match self.quota {
            None => want,
            Some(q) => {
                let free = q.saturating_sub(self.used_bytes());
                want.min(usize::try_from(free).unwrap_or(usize::MAX))
            }
        }
    }

    /// Installs a rule; it counts matches from now on.
    pub(super) fn inject(&mut self, mut rule: FaultRule) {
        rule.seen = 0;
        rule.spent = false;
        self.rules.push(rule);
    }

    /// Removes every rule.
    pub(super) fn clear_faults(&mut self) {
        self.rules.clear();
    }

    /// Fails iff `epoch` is not the current one (the handle predates a crash).
    pub(super) fn live(&self, epoch: u64, op: IoOp, path: &Path) -> Result<()> {
        if epoch == self.epoch {
            Ok(())
        } else {
            Err(Error::io(
                op,
                path,
                io::Error::other("stale handle: the file system crashed since it was opened"),
            ))
        }
    }

    /// The inode of a live handle.
    pub(super) fn inode_mut(&mut self, id: InodeId, op: IoOp, path: &Path) -> Result<&mut Inode> {
        self.inodes
            .get_mut(&id)
            .ok_or_else(|| io_err(op, path, io::ErrorKind::NotFound, "inode vanished"))
    }

    /// True iff directory `dir` exists.
    pub(super) fn dir_exists(&self, dir: &Path) -> bool {
        dir.parent().is_none() || self.dirs.contains(dir)
    }

    fn require_parent(&self, op: IoOp, path: &Path) -> Result<()> {
        if self.dirs.contains(path) {
            return Err(io_err(
                op,
                path,
                io::ErrorKind::IsADirectory,
                "is a directory",
            ));
        }
        if self.dir_exists(&parent_of(path)) {
            Ok(())
        } else {
            Err(not_found(op, path))
        }
    }

    fn new_inode(&mut self, open: usize) -> InodeId {
        self.next_inode += 1;
        let id = self.next_inode;
        self.inodes.insert(
            id,
            Inode {
                open,
                ..Inode::default()
            },
        );
        id
    }

    /// Links a new empty inode at `path` (replacing any entry) and opens it for writing.
    pub(super) fn create(&mut self, path: &Path) -> Result<InodeId> {
        self.require_parent(IoOp::Create, path)?;
        let id = self.new_inode(1);
        self.current.insert(path.to_path_buf(), id);
        self.gc();
        Ok(id)
    }

    /// Opens the inode at `path` for reading; returns it and its size now.
    pub(super) fn open(&mut self, path: &Path) -> Result<(InodeId, u64)> {
        let id = *self
            .current
            .get(path)
            .ok_or_else(|| not_found(IoOp::Open, path))?;
        let inode = self.inode_mut(id, IoOp::Open, path)?;
        inode.open += 1;
        Ok((id, inode.data.len() as u64))
    }

    /// Links a new empty inode at `path` with no handle open.
    pub(super) fn create_unopened(&mut self, path: &Path) -> InodeId {
        let id = self.new_inode(0);
        self.current.insert(path.to_path_buf(), id);
        id
    }

    /// The inode of the file at `path` now.
    pub(super) fn file_inode_mut(&mut self, path: &Path, op: IoOp) -> Result<&mut Inode> {
        let id = *self.current.get(path).ok_or_else(|| not_found(op, path))?;
        self.inode_mut(id, op, path)
    }

    /// Closes one handle of `id` opened in `epoch` (no-op for stale handles).
    pub(super) fn release(&mut self, id: InodeId, epoch: u64) {
        if epoch != self.epoch {
            return;
        }
        if let Some(inode) = self.inodes.get_mut(&id) {
            inode.open = inode.open.saturating_sub(1);
        }
        self.gc();
    }

    /// Moves the entry `from` to `to`, replacing `to`.
    pub(super) fn rename(&mut self, from: &Path, to: &Path) -> Result<()> {
        if !self.current.contains_key(from) {
            return Err(not_found(IoOp::Rename, from));
        }
        self.require_parent(IoOp::Rename, to)?;
        if let Some(id) = self.current.remove(from) {
            self.current.insert(to.to_path_buf(), id);
        }
        self.gc();
        Ok(())
    }

    /// Unlinks `path`.
    pub(super) fn remove(&mut self, path: &Path) -> Result<()> {
        self.current
            .remove(path)
            .ok_or_else(|| not_found(IoOp::Remove, path))?;
        self.gc();
        Ok(())
    }

    /// Sorted names of the files and directories directly inside `dir`.
    pub(super) fn list(&self, dir: &Path) -> Result<Vec<String>> {
        if !self.dir_exists(dir) {
            return Err(not_found(IoOp::ReadDir, dir));
        }
        let children = self.current.keys().chain(self.dirs.iter());
        let names: BTreeSet<String> = children
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        Ok(names.into_iter().collect())
    }

    /// Creates `dir` and its missing ancestors.
    pub(super) fn create_dir_all(&mut self, dir: &Path) -> Result<()> {
        let mut todo = Vec::new();
        let mut cur = Some(dir);
        while let Some(d) = cur {
            if d.parent().is_none() || self.dirs.contains(d) {
                break;
            }
            if self.current.contains_key(d) {
                return Err(io_err(
                    IoOp::Mkdir,
                    d,
                    io::ErrorKind::AlreadyExists,
                    "is a file",
                ));
            }
            todo.push(d.to_path_buf());
            cur = d.parent();
        }
        self.dirs.extend(todo);
        Ok(())
    }

    /// Makes every entry directly inside `dir` durable as it is now.
    pub(super) fn sync_dir(&mut self, dir: &Path) -> Result<()> {
        if !self.dir_exists(dir) {
            return Err(not_found(IoOp::OpenDir, dir));
        }
        let inside = |p: &&PathBuf| p.parent() == Some(dir);
        let gone: Vec<PathBuf> = self
            .durable
            .keys()
            .filter(inside)
            .filter(|p| !self.current.contains_key(*p))
            .cloned()
            .collect();
        for p in gone {
            self.durable.remove(&p);
        }
        for (p, id) in self.current.iter().filter(|(p, _)| inside(p)) {
            self.durable.insert(p.clone(), *id);
        }
        self.gc();
        Ok(())
    }

    /// Size of the file at `path` now.
    pub(super) fn file_size(&self, path: &Path) -> Result<u64> {
        let id = self
            .current
            .get(path)
            .ok_or_else(|| not_found(IoOp::Stat, path))?;
        let len = self.inodes.get(id).map_or(0, |i| i.data.len());
        Ok(len as u64)
    }

    /// Takes the lock on `path`, creating an empty file there if missing.
    ///
    /// # Errors
    /// `Error::Locked` iff a live lock handle holds `path`.
    pub(super) fn lock(&mut self, path: &Path) -> Result<u64> {
        if self.locks.contains_key(path) {
            return Err(Error::Locked(path.to_path_buf()));
        }
        if !self.current.contains_key(path) {
            self.require_parent(IoOp::Create, path)?;
            self.create_unopened(path);
        }
        self.next_lock += 1;
        self.locks.insert(path.to_path_buf(), self.next_lock);
        Ok(self.next_lock)
    }

    /// Releases lock `id` on `path` taken in `epoch` (no-op if a crash already did).
    pub(super) fn unlock(&mut self, path: &Path, id: u64, epoch: u64) {
        if epoch == self.epoch && self.locks.get(path) == Some(&id) {
            self.locks.remove(path);
        }
    }

    /// Applies a failed sync's consequence to the unsynced bytes of `id`.
    pub(super) fn on_failed_sync(&mut self, id: InodeId) {
        if self.failed_sync_mode == FailedSyncMode::ZeroDirty {
            if let Some(inode) = self.inodes.get_mut(&id) {
                let from = inode.durable_len.min(inode.data.len());
                if let Some(dirty) = inode.data.get_mut(from..) {
                    dirty.fill(0);
                }
            }
        }
    }

    /// Simulates a crash: see [`CrashMode`].
    pub(super) fn crash(&mut self, mode: CrashMode) {
        self.epoch += 1;
        self.locks.clear();
        if mode == CrashMode::KeepAll {
            self.durable = self.current.clone();
        } else {
            self.current = self.durable.clone();
        }
        for inode in self.inodes.values_mut() {
            inode.open = 0;
        }
        self.gc();
        let mut rng = match mode {
            CrashMode::KeepRandomPrefix { seed } | CrashMode::GarbleUnsynced { seed } => {
                SplitMix64::new(seed)
            }
            _ => SplitMix64::new(0),
        };
        for inode in self.inodes.values_mut() {
            let durable = inode.durable_len.min(inode.data.len());
            let unsynced = inode.data.len() - durable;
            match mode {
                CrashMode::DropUnsynced => inode.data.truncate(durable),
                CrashMode::KeepRandomPrefix { .. } => {
                    inode.data.truncate(durable + rng.up_to(unsynced));
                }
                CrashMode::GarbleUnsynced { .. } => {
                    let keep = durable + rng.up_to(unsynced);
                    inode.data.truncate(keep);
                    if keep > durable {
                        let start = durable + rng.up_to(keep - durable - 1);
                        let end = start + 1 + rng.up_to(keep - start - 1);
                        if let Some(torn) = inode.data.get_mut(start..end) {
                            for b in torn {
                                // `| 1` guarantees every garbled byte changes.
                                *b ^= (rng.next_u64() as u8) | 1;
                            }
                        }
                    }
                }
                CrashMode::KeepAll => {}
            }
            inode.durable_len = inode.data.len();
        }
    }

    /// Drops inodes no name and no live handle refers to (invariant 2).
    pub(super) fn gc(&mut self) {
        let linked: HashSet<InodeId> = self
            .current
            .values()
            .chain(self.durable.values())
            .copied()
            .collect();
        self.inodes
            .retain(|id, inode| inode.open > 0 || linked.contains(id));
    }
}
