//! File, reader and lock handles of [`super::FaultFs`].
//!
//! A handle holds the shared state, the inode it reads or writes and the epoch it was
//! opened in. Every method locks the state, fails if the epoch is stale (a crash
//! happened since the open), runs the fault check for its kind, then acts on the inode.
//! Dropping a handle of the current epoch closes it, which may free an unlinked inode.

use super::rules::FaultKinds;
use super::state::{io_err, is_full, no_space, InodeId, State};
use crate::env::{FileLock, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::{IoOp, Result};
use parking_lot::Mutex;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What every handle needs to reach its inode.
pub(super) struct HandleCore {
    pub(super) state: Arc<Mutex<State>>,
    pub(super) id: InodeId,
    pub(super) epoch: u64,
    pub(super) path: PathBuf,
}

impl Drop for HandleCore {
    fn drop(&mut self) {
        self.state.lock().release(self.id, self.epoch);
    }
}

/// An append-only writer. Appends go straight to the inode (there is no user-space
/// buffer), so `flush` only counts and can only fail by injection.
pub(super) struct FaultWritable {
    pub(super) core: HandleCore,
    /// Bytes appended through this handle; written only by its owner.
    pub(super) len: u64,
}

impl WritableFile for FaultWritable {
    /// A full disk (an injected `no_space` rule, or the quota) keeps the bytes that
    /// fit (half of them for an injected one) and fails with `ENOSPC`: a short write.
    fn append(&mut self, data: &[u8]) -> Result<()> {
        let c = &self.core;
        let mut st = c.state.lock();
        st.live(c.epoch, IoOp::Write, &c.path)?;
        let (kept, result) = match st.check(FaultKinds::WRITE, IoOp::Write, &c.path, None) {
            Err(e) if is_full(&e) => (data.len() / 2, Err(e)),
            Err(e) => return Err(e),
            Ok(()) => {
                let room = st.room(data.len());
                if room < data.len() {
                    (room, Err(no_space(IoOp::Write, &c.path, false)))
                } else {
                    (data.len(), Ok(()))
                }
            }
        };
        st.inode_mut(c.id, IoOp::Write, &c.path)?
            .data
            .extend_from_slice(data.get(..kept).unwrap_or_default());
        self.len += kept as u64;
        result
    }

    fn flush(&mut self) -> Result<()> {
        let c = &self.core;
        let mut st = c.state.lock();
        st.live(c.epoch, IoOp::Write, &c.path)?;
        st.check(FaultKinds::FLUSH, IoOp::Write, &c.path, None)
    }

    fn sync(&mut self) -> Result<()> {
        let c = &self.core;
        let mut st = c.state.lock();
        st.live(c.epoch, IoOp::Fsync, &c.path)?;
        if let Err(e) = st.check(FaultKinds::SYNC, IoOp::Fsync, &c.path, None) {
            st.on_failed_sync(c.id);
            return Err(e);
        }
        let inode = st.inode_mut(c.id, IoOp::Fsync, &c.path)?;
        inode.durable_len = inode.data.len();
        Ok(())
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn truncate(&mut self, len: u64) -> Result<()> {
        let c = &self.core;
        let mut st = c.state.lock();
        st.live(c.epoch, IoOp::Truncate, &c.path)?;
        st.check(FaultKinds::TRUNCATE, IoOp::Truncate, &c.path, None)?;
        let inode = st.inode_mut(c.id, IoOp::Truncate, &c.path)?;
        inode
            .data
            .truncate(usize::try_from(len).unwrap_or(usize::MAX));
        inode.durable_len = inode.durable_len.min(inode.data.len());
        self.len = inode.data.len() as u64;
        Ok(())
    }
}

/// A positional reader; reads see the current (possibly unsynced) bytes, like reads
/// served by the page cache.
pub(super) struct FaultRandom {
    pub(super) core: HandleCore,
    pub(super) size: u64,
}

impl RandomAccessFile for FaultRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let c = &self.core;
        let mut st = c.state.lock();
        st.live(c.epoch, IoOp::Read, &c.path)?;
        st.check(FaultKinds::READ, IoOp::Read, &c.path, None)?;
        let inode = st.inode_mut(c.id, IoOp::Read, &c.path)?;
        let src = usize::try_from(offset)
            .ok()
            .and_then(|start| Some((start, start.checked_add(buf.len())?)))
            .and_then(|(start, end)| inode.data.get(start..end))
            .ok_or_else(|| {
                io_err(
                    IoOp::Read,
                    &c.path,
                    io::ErrorKind::UnexpectedEof,
                    "read past end of file",
                )
            })?;
        buf.copy_from_slice(src);
        Ok(())
    }

    fn size(&self) -> u64 {
        self.size
    }

    fn path(&self) -> &Path {
        &self.core.path
    }
}

/// A front-to-back reader.
pub(super) struct FaultSequential {
    pub(super) core: HandleCore,
    /// Offset of the next read; written only by the owner.
    pub(super) pos: usize,
}

impl SequentialFile for FaultSequential {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let c = &self.core;
        let mut st = c.state.lock();
        st.live(c.epoch, IoOp::Read, &c.path)?;
        st.check(FaultKinds::READ, IoOp::Read, &c.path, None)?;
        let inode = st.inode_mut(c.id, IoOp::Read, &c.path)?;
        let rest = inode.data.get(self.pos..).unwrap_or_default();
        let n = rest.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), rest.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.pos += n;
        Ok(n)
    }
}

/// A held lock; dropping it releases the lock unless a crash already did.
pub(super) struct FaultLock {
    pub(super) state: Arc<Mutex<State>>,
    pub(super) path: PathBuf,
    pub(super) id: u64,
    pub(super) epoch: u64,
}

impl FileLock for FaultLock {}

impl Drop for FaultLock {
    fn drop(&mut self) {
        self.state.lock().unlock(&self.path, self.id, self.epoch);
    }
}
