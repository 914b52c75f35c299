//! A crash-simulating, fault-injecting, in-memory [`FileSystem`] for tests.
//!
//! Role: integration tests and the crash loop build a [`FaultFs`], keep
//! one clone, and hand another to the engine as its `Arc<dyn FileSystem>`. The test then
//! injects failures ([`FaultFs::inject`]), simulates power loss ([`FaultFs::crash`]),
//! damages bytes ([`FaultFs::corrupt_byte`]) and reopens the database on the same
//! `FaultFs` to check what recovery makes of it. It plays the part of RocksDB's
//! `FaultInjectionTestFS` and Pebble's `errorfs` plus `MemFS.CrashClone`.
//!
//! # What it must model
//!
//! The engine's durability argument rests on two promises of the [`FileSystem`] contract:
//! appended bytes are durable only after `WritableFile::sync` returns `Ok`, and a
//! directory entry (create, rename, remove) is durable only after `sync_dir` of its
//! directory returns `Ok`. A real disk on a quiet test machine almost never shows what
//! happens when those promises were *not* obtained, because the page cache is written
//! back long before anyone pulls the plug. So a bug such as "the MANIFEST is renamed
//! into place but the directory is never synced" passes every test on `PosixFs`. This
//! file system makes the weakest legal outcome the one that happens:
//!
//! - Each file is an inode: a byte vector plus the length of its durable prefix. A
//!   successful `sync` moves the durable mark to the end; a crash cuts the file back to
//!   it (or, with [`CrashMode::KeepRandomPrefix`] / [`CrashMode::GarbleUnsynced`], keeps a
//!   random part of the unsynced tail, possibly garbled: a torn write).
//! - Names are two maps from path to inode: *current* (what the process sees) and
//!   *durable* (what the disk holds). `sync_dir(d)` copies the current entries of `d`
//!   into the durable map. A crash replaces the current map by the durable one, so an
//!   unsynced create vanishes, an unsynced rename is undone and an unsynced remove
//!   reappears, with the old inode's durable bytes.
//! - `create` on an existing path links a *new* inode; until the directory is synced a
//!   crash brings the old file back. Removing or renaming over an open file keeps its
//!   inode readable through the open handles, as POSIX does.
//! - A crash is a reboot: every handle opened before it fails from then on (each handle
//!   carries the epoch it was opened in and the crash bumps the epoch), and every lock is
//!   released.
//!
//! # Invariants
//!
//! 1. A failed `sync` or `sync_dir` never makes anything durable, and a later crash
//!    treats the bytes as unsynced. The engine must not retry a failed fsync as if it
//!    could succeed: Linux may drop the dirty pages on failure, so the retry "succeeds"
//!    on data that is gone. [`FailedSyncMode::ZeroDirty`] models that: the dirty bytes
//!    read back as zeros, and a later successful sync makes the zeros durable.
//! 2. An injected fault has no side effect other than the error (and invariant 1's
//!    optional page loss): a failed append writes nothing, a failed rename renames
//!    nothing. Partial effects are modelled by crashing instead.
//! 3. Synced bytes of a durably linked file are never lost or changed by a crash; only
//!    the explicit corruption helpers change them.
//! 4. Everything is deterministic: the same sequence of calls with the same seeds gives
//!    the same bytes, the same operation counts and the same faults.
//!
//! A full disk is the one fault with a side effect (invariant 2's exception): a byte
//! quota ([`FaultFs::set_quota`]) or a [`FaultRule::no_space`] rule fails an append
//! with `ENOSPC` after keeping the bytes that fit, a short write, which the engine must
//! cut back off (`WritableFile::truncate`).
//!
//! # Fault injection and counting
//!
//! Each fallible operation has one [`FaultKinds`] kind and is counted by
//! [`FaultFs::op_count`] (test helpers are not). A [`FaultRule`] fails the operation of
//! its kinds that comes after `skip` matching ones, once or for good. The crash loop
//! runs a scenario once to learn its operation count `n`, then for each `k < n` replays
//! it on a fresh `FaultFs` with `FaultRule::sticky(FaultKinds::ALL, k)` (the disk dies
//! at operation `k`, so nothing after it reaches the disk), calls [`FaultFs::crash`],
//! [`FaultFs::clear_faults`], reopens and checks the recovered state.
//!
//! # Direct I/O
//!
//! [`FileOptions::direct`] is honoured as a flag, not as a different data path: a
//! direct writer's bytes are durable only after `sync`, exactly as a buffered one's
//! (the contract does not distinguish them), and reads see the same bytes. What the
//! model adds is the refusal: after [`FaultFs::set_direct_io_supported`]`(false)` a
//! direct create or open fails with `InvalidArgument` naming the path and creates
//! nothing, as `O_DIRECT` on a file system without it does. [`FaultFs::direct_paths`]
//! lists every path opened with direct I/O, so tests can check which files the engine
//! asked for it.
//!
//! # Simplifications
//!
//! Directories are durable as soon as `create_dir_all` returns and cannot be removed.
//! Reads see the current bytes (the page cache), never the durable ones. A file's
//! `sync` does not make its directory entry durable (ext4 often does; the contract does
//! not promise it). Rename makes the source's removal and the target's entry durable
//! independently, per directory synced.
//!
//! # Concurrency
//!
//! [`FaultFs`] is a cheap `Clone` handle; all clones share one state behind one
//! `parking_lot::Mutex`, taken by every operation and never held across a call into
//! user code. Handles may be used from any thread.
//!
//! # See also
//!
//! The tests in `env/fault/tests.rs` pin each behaviour above; `docs/ARCHITECTURE.md`
//! for the durability argument this file system tests.

mod handles;
mod rules;
mod state;
#[cfg(test)]
mod tests;

pub use rules::{CrashMode, FailedSyncMode, FaultKinds, FaultRule};

use super::{
    direct_io_refused, FileLock, FileOptions, FileSystem, RandomAccessFile, SequentialFile,
    WritableFile,
};
use crate::error::{Error, IoOp, Result};
use handles::{FaultLock, FaultRandom, FaultSequential, FaultWritable, HandleCore};
use parking_lot::Mutex;
use state::{norm, parent_of, State};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An in-memory [`FileSystem`] that simulates power loss and injects I/O faults.
///
/// See the module documentation for the model. Clones share state.
#[derive(Clone, Default)]
pub struct FaultFs {
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for FaultFs {
    /// A summary, not the file contents (which may be megabytes).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.state.lock();
        f.debug_struct("FaultFs")
            .field("files", &st.current.len())
            .field("dirs", &st.dirs.len())
            .field("crashes", &st.epoch)
            .field("op_count", &st.op_count)
            .field("faults_injected", &st.faults_injected)
            .finish_non_exhaustive()
    }
}

impl FaultFs {
    /// An empty file system: no files, no directories besides the root, no rules.
    pub fn new() -> FaultFs {
        FaultFs::default()
    }

    /// Simulates a power loss with [`CrashMode::DropUnsynced`].
    pub fn crash(&self) {
        self.crash_with(CrashMode::DropUnsynced);
    }

    /// Simulates a crash with `mode`: files and directory entries revert to what was
    /// durable (see [`CrashMode`]), every handle opened before the call fails from now
    /// on, and every lock is released. Afterwards everything present is durable.
    ///
    /// Installed fault rules stay installed; call [`FaultFs::clear_faults`] to reopen on
    /// a healthy disk.
    pub fn crash_with(&self, mode: CrashMode) {
        self.state.lock().crash(mode);
    }

    /// Installs `rule`; its matching operations are counted from now on.
    pub fn inject(&self, rule: FaultRule) {
        self.state.lock().inject(rule);
    }

    /// Fails (once) the first operation of `kinds` after `op_count` matching operations
    /// from now succeeded: shorthand for `inject(FaultRule::once(kinds, op_count))`.
    pub fn fail_after(&self, op_count: u64, kinds: FaultKinds) {
        self.inject(FaultRule::once(kinds, op_count));
    }

    /// Removes every fault rule.
    pub fn clear_faults(&self) {
        self.state.lock().clear_faults();
    }

    /// Sets what a failed sync does to the file's unsynced bytes. Default:
    /// [`FailedSyncMode::KeepDirty`].
    pub fn set_failed_sync_mode(&self, mode: FailedSyncMode) {
        self.state.lock().failed_sync_mode = mode;
    }

    /// Whether direct I/O ([`FileOptions::direct`]) is accepted. Default: true. With
    /// `false`, a direct create or open fails with `InvalidArgument` (after counting
    /// the operation and running its fault check) and has no other effect.
    pub fn set_direct_io_supported(&self, supported: bool) {
        self.state.lock().refuse_direct = !supported;
    }

    /// Limits the bytes all files together may hold (`None`: no limit, the default).
    /// An append past the limit keeps the bytes that fit and fails with `ENOSPC`
    /// (`io::ErrorKind::StorageFull`), as on a full disk; raising the limit (or
    /// removing files) makes room again. Creates, renames and removals are not
    /// limited.
    pub fn set_quota(&self, bytes: Option<u64>) {
        self.state.lock().quota = bytes;
    }

    /// Bytes all files hold now, counted as the quota counts them: each file's
    /// current bytes, files removed but still open included.
    pub fn used_bytes(&self) -> u64 {
        self.state.lock().used_bytes()
    }

    /// Every path created or opened with direct I/O so far, sorted.
    pub fn direct_paths(&self) -> Vec<PathBuf> {
        self.state.lock().direct_paths.iter().cloned().collect()
    }

    /// Fallible operations seen so far (including failed ones), over all kinds.
    pub fn op_count(&self) -> u64 {
        self.state.lock().op_count
    }

    /// Records the last `capacity` operations other than reads (0: stop recording), for
    /// [`FaultFs::trace`].
    pub fn set_trace(&self, capacity: usize) {
        let mut st = self.state.lock();
        st.trace_capacity = capacity;
        st.trace.clear();
    }

    /// The recorded operations, oldest first: operation index, kind, path, whether the
    /// fault fired, and the calling thread's name.
    pub fn trace(&self) -> Vec<String> {
        self.state.lock().trace.iter().cloned().collect()
    }

    /// Faults injected so far.
    pub fn faults_injected(&self) -> u64 {
        self.state.lock().faults_injected
    }

    /// Number of crashes simulated so far (the epoch of handles opened now).
    pub fn crash_count(&self) -> u64 {
        self.state.lock().epoch
    }

    /// The current bytes of the file at `path` (what a read sees), or `None` if no file
    /// is there.
    pub fn file_bytes(&self, path: impl AsRef<Path>) -> Option<Vec<u8>> {
        let st = self.state.lock();
        let id = st.current.get(&norm(path.as_ref()))?;
        st.inodes.get(id).map(|i| i.data.clone())
    }

    /// The bytes a power loss ([`CrashMode::DropUnsynced`]) would leave at `path`, or
    /// `None` if no file would be there.
    pub fn durable_file_bytes(&self, path: impl AsRef<Path>) -> Option<Vec<u8>> {
        let st = self.state.lock();
        let id = st.durable.get(&norm(path.as_ref()))?;
        let inode = st.inodes.get(id)?;
        inode.data.get(..inode.durable_len).map(<[u8]>::to_vec)
    }

    /// Paths of every file that exists now, sorted.
    pub fn files(&self) -> Vec<PathBuf> {
        self.state.lock().current.keys().cloned().collect()
    }

    /// Replaces the file at `path` with `bytes`, durably (content and directory entry),
    /// creating it and its parent directories if missing. Open handles of an existing
    /// file see the new bytes.
    pub fn set_file_bytes(&self, path: impl AsRef<Path>, bytes: &[u8]) {
        let path = norm(path.as_ref());
        let mut st = self.state.lock();
        // Creating parents cannot fail unless an ancestor is a file; then the entry is
        // still set, as an orphan the engine will not list.
        let _ = st.create_dir_all(&parent_of(&path));
        let id = match st.current.get(&path) {
            Some(id) => *id,
            None => st.create_unopened(&path),
        };
        if let Some(inode) = st.inodes.get_mut(&id) {
            inode.data = bytes.to_vec();
            inode.durable_len = bytes.len();
        }
        st.durable.insert(path, id);
        st.gc();
    }

    /// XORs the byte at `offset` of the file at `path` with `xor`, in both the current
    /// and the durable view (bit rot on the medium).
    ///
    /// # Errors
    /// `Error::Io` (not found) if no file is at `path`; `Error::InvalidArgument` if
    /// `offset` is past its end.
    pub fn corrupt_byte(&self, path: impl AsRef<Path>, offset: u64, xor: u8) -> Result<()> {
        let path = norm(path.as_ref());
        let mut st = self.state.lock();
        let inode = st.file_inode_mut(&path, IoOp::Corrupt)?;
        let byte = usize::try_from(offset)
            .ok()
            .and_then(|o| inode.data.get_mut(o))
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "corrupt offset past end: path=`{}` offset={offset}",
                    path.display()
                ))
            })?;
        *byte ^= xor;
        Ok(())
    }

    /// Shortens the file at `path` to `len` bytes, durably (a lost tail on the medium).
    /// A `len` at or past the end leaves the file unchanged.
    ///
    /// # Errors
    /// `Error::Io` (not found) if no file is at `path`.
    pub fn truncate(&self, path: impl AsRef<Path>, len: u64) -> Result<()> {
        let path = norm(path.as_ref());
        let mut st = self.state.lock();
        let inode = st.file_inode_mut(&path, IoOp::Truncate)?;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        inode.data.truncate(len);
        inode.durable_len = inode.durable_len.min(inode.data.len());
        Ok(())
    }
}

/// Builds a handle for inode `id`; call with the state unlocked (its drop locks it).
fn core(fs: &FaultFs, id: state::InodeId, epoch: u64, path: PathBuf) -> HandleCore {
    HandleCore {
        state: Arc::clone(&fs.state),
        id,
        epoch,
        path,
    }
}

/// After the fault check of a create or open: refuses direct I/O if the file system
/// is set to, else records the path. Nothing for buffered I/O.
fn direct_gate(st: &mut State, path: &Path, opts: FileOptions) -> Result<()> {
    if !opts.direct {
        return Ok(());
    }
    if st.refuse_direct {
        return Err(direct_io_refused(path, "Invalid argument (os error 22)"));
    }
    st.direct_paths.insert(path.to_path_buf());
    Ok(())
}

impl FileSystem for FaultFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.create_with(path, FileOptions::default())
    }

    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.open_random_with(path, FileOptions::default())
    }

    fn create_with(&self, path: &Path, opts: FileOptions) -> Result<Box<dyn WritableFile>> {
        let path = norm(path);
        let (id, epoch) = {
            let mut st = self.state.lock();
            st.check(FaultKinds::CREATE, IoOp::Create, &path, None)?;
            direct_gate(&mut st, &path, opts)?;
            (st.create(&path)?, st.epoch)
        };
        Ok(Box::new(FaultWritable {
            core: core(self, id, epoch, path),
            len: 0,
        }))
    }

    fn open_random_with(
        &self,
        path: &Path,
        opts: FileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        let path = norm(path);
        let (id, epoch, size) = {
            let mut st = self.state.lock();
            st.check(FaultKinds::OPEN, IoOp::Open, &path, None)?;
            direct_gate(&mut st, &path, opts)?;
            let (id, size) = st.open(&path)?;
            (id, st.epoch, size)
        };
        Ok(Arc::new(FaultRandom {
            core: core(self, id, epoch, path),
            size,
        }))
    }

    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        let path = norm(path);
        let (id, epoch) = {
            let mut st = self.state.lock();
            st.check(FaultKinds::OPEN, IoOp::Open, &path, None)?;
            (st.open(&path)?.0, st.epoch)
        };
        Ok(Box::new(FaultSequential {
            core: core(self, id, epoch, path),
            pos: 0,
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let (from, to) = (norm(from), norm(to));
        let mut st = self.state.lock();
        st.check(FaultKinds::RENAME, IoOp::Rename, &from, Some(&to))?;
        st.rename(&from, &to)
    }

    fn remove(&self, path: &Path) -> Result<()> {
        let path = norm(path);
        let mut st = self.state.lock();
        st.check(FaultKinds::REMOVE, IoOp::Remove, &path, None)?;
        st.remove(&path)
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let dir = norm(dir);
        let mut st = self.state.lock();
        st.check(FaultKinds::LIST, IoOp::ReadDir, &dir, None)?;
        st.list(&dir)
    }

    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        let dir = norm(dir);
        let mut st = self.state.lock();
        st.check(FaultKinds::MKDIR, IoOp::Mkdir, &dir, None)?;
        st.create_dir_all(&dir)
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let dir = norm(dir);
        let mut st = self.state.lock();
        st.check(FaultKinds::SYNC_DIR, IoOp::FsyncDir, &dir, None)?;
        st.sync_dir(&dir)
    }

    fn exists(&self, path: &Path) -> bool {
        let path = norm(path);
        let st = self.state.lock();
        st.current.contains_key(&path) || st.dir_exists(&path)
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        let path = norm(path);
        let mut st = self.state.lock();
        st.check(FaultKinds::STAT, IoOp::Stat, &path, None)?;
        st.file_size(&path)
    }

    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let path = norm(path);
        let (id, epoch) = {
            let mut st = self.state.lock();
            st.check(FaultKinds::LOCK, IoOp::Lock, &path, None)?;
            (st.lock(&path)?, st.epoch)
        };
        Ok(Box::new(FaultLock {
            state: Arc::clone(&self.state),
            path,
            id,
            epoch,
        }))
    }
    /// What the quota leaves (`None` without a quota: an in-memory file system has
    /// no bound of its own).
    fn available_space(&self, _dir: &Path) -> Result<Option<u64>> {
        let st = self.state.lock();
        Ok(st.quota.map(|q| q.saturating_sub(st.used_bytes())))
    }
}
