//! Errors: one detailed enum, plus a small [`ErrorKind`] that tells the caller what to do.
//!
//! Every fallible function in the engine returns [`Result`]. Corruption always names the
//! file and the byte offset where it was found.
//!
//! Severity of a background error (a flush or compaction):
//! - *retryable* ([`Error::is_retryable`]): a file could not be opened or created, so
//!   nothing was written; the job is abandoned, counted (`background_retries`) and
//!   retried after an exponential backoff;
//! - *fatal*: a write or fsync failed, data is corrupt, or the engine broke an
//!   invariant ([`Error::Internal`]). The database is *poisoned*: every later write
//!   returns [`ErrorKind::Poisoned`] carrying the original cause, because a failed
//!   fsync cannot be retried as if it had succeeded (Linux may already have dropped the
//!   dirty pages).
//! - *no space* ([`ErrorKind::NoSpace`]): `ENOSPC` or `EDQUOT` while writing or
//!   creating a file. The write that met it is undone (a log record is cut off, a job's
//!   outputs are collected), the database refuses writes with [`Error::NoSpace`] and
//!   resumes by itself once space is free (docs/ARCHITECTURE.md §7.8). A failed fsync
//!   stays fatal whatever its cause.

use std::path::PathBuf;
use std::sync::Arc;

/// Result alias used throughout the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A detailed engine error. Match on [`Error::kind`] to decide what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file-system operation failed.
    #[error("io error: op=`{op}` path=`{}`", path.display())]
    Io {
        /// The operation that failed.
        op: IoOp,
        /// The file or directory it was applied to.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// Stored data failed a checksum or could not be decoded.
    #[error("corruption: file=`{}` offset={offset}: {reason}", file.display())]
    Corruption {
        /// The file holding the bad bytes.
        file: PathBuf,
        /// Byte offset of the bad record or block within `file`.
        offset: u64,
        /// What was wrong.
        reason: String,
    },
    /// The caller passed something the engine cannot accept (bad option, bad key range).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A previous background write or fsync failed; the database accepts no more writes.
    #[error("database is poisoned by an earlier background error")]
    Poisoned(#[source] Arc<Error>),
    /// The disk (or the quota) was full when the engine last wrote: the database
    /// refuses writes until space is free. Nothing acknowledged was lost and reads
    /// keep working; it resumes by itself (or at once on [`crate::Db::resume`]).
    #[error("no space left for the database: writes resume by themselves once space is freed")]
    NoSpace(#[source] Arc<Error>),
    /// The database directory is locked by another process or handle.
    #[error("database is locked: path=`{}`", .0.display())]
    Locked(PathBuf),
    /// The engine broke one of its own invariants (a bug, not bad input or bad data):
    /// for example an edit naming a file its version does not hold.
    #[error("internal error: {0}")]
    Internal(String),
    /// An optimistic transaction could not commit: a key it wrote or read with
    /// [`crate::Transaction::get_for_update`] has a version committed after the
    /// transaction's snapshot (docs/ARCHITECTURE.md §16). Nothing was written.
    #[error(
        "transaction conflict: key=`{}` snapshot=`{snapshot}` committed=`{committed}`",
        key.escape_ascii()
    )]
    Conflict {
        /// The first conflicting key found (keys are checked in ascending order).
        key: Vec<u8>,
        /// The transaction's snapshot sequence number.
        snapshot: crate::key::SequenceNumber,
        /// The sequence number of the newer version found.
        committed: crate::key::SequenceNumber,
    },
    /// The configured merge operator refused a key's merge operands.
    #[error("merge failed: operator=`{operator}` key=`{}`: {reason}", key.escape_ascii())]
    MergeFailed {
        /// The operator's name.
        operator: String,
        /// The user key whose chain could not be merged.
        key: Vec<u8>,
        /// The operator's reason.
        reason: String,
    },
}

/// The file-system operation of an [`Error::Io`]. Displayed as the short names the
/// messages have always used (`write`, `fsync`, `open-dir`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IoOp {
    /// Opening an existing file.
    Open,
    /// Creating (or truncating) a file.
    Create,
    /// Reading a file.
    Read,
    /// Appending to a file.
    Write,
    /// Making a file's bytes durable.
    Fsync,
    /// Making a directory's entries durable.
    FsyncDir,
    /// Opening a directory (to sync it).
    OpenDir,
    /// Listing a directory.
    ReadDir,
    /// Asking a file's size or the file system's properties.
    Stat,
    /// Renaming a file.
    Rename,
    /// Removing a file.
    Remove,
    /// Creating a directory.
    Mkdir,
    /// Locking the database directory.
    Lock,
    /// Truncating a file.
    Truncate,
    /// Giving a file a second name (a hard link).
    Link,
    /// Starting a thread.
    Spawn,
    /// Damage injected by a test file system.
    Corrupt,
}

impl IoOp {
    /// The operation's short name.
    pub fn name(self) -> &'static str {
        match self {
            IoOp::Open => "open",
            IoOp::Create => "create",
            IoOp::Read => "read",
            IoOp::Write => "write",
            IoOp::Fsync => "fsync",
            IoOp::FsyncDir => "fsync-dir",
            IoOp::OpenDir => "open-dir",
            IoOp::ReadDir => "readdir",
            IoOp::Stat => "stat",
            IoOp::Rename => "rename",
            IoOp::Remove => "remove",
            IoOp::Mkdir => "mkdir",
            IoOp::Lock => "lock",
            IoOp::Truncate => "truncate",
            IoOp::Link => "link",
            IoOp::Spawn => "spawn",
            IoOp::Corrupt => "corrupt",
        }
    }

    /// True iff a failure of this operation leaves nothing durable in doubt: it
    /// changed no file's bytes and no directory entry a version names (opening,
    /// creating a file nothing names yet, reading, listing, asking sizes). A failed
    /// write, fsync, rename or removal may have changed what is on disk, or not.
    fn leaves_nothing_in_doubt(self) -> bool {
        matches!(
            self,
            IoOp::Open | IoOp::Create | IoOp::Read | IoOp::ReadDir | IoOp::OpenDir | IoOp::Stat
        )
    }
}

impl IoOp {
    /// True iff this operation takes space on the disk, so a full disk fails it
    /// (`ENOSPC`) without touching anything else: an append, a create, a new
    /// directory or link. An fsync is not one of them: a failed fsync is fatal
    /// whatever its cause.
    fn fills_space(self) -> bool {
        matches!(self, IoOp::Write | IoOp::Create | IoOp::Mkdir | IoOp::Link)
    }
}

/// True iff `e` says the disk or the caller's quota is full (`ENOSPC`, `EDQUOT`).
fn is_no_space(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    )
}

impl std::fmt::Display for IoOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What the caller should do about an [`Error`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An I/O error: the operation may succeed if retried after the cause is fixed.
    Io,
    /// Data on disk is damaged; restore from a backup; `strata ldb verify` names the damaged file and offset.
    Corruption,
    /// Fix the input and call again.
    InvalidArgument,
    /// The database must be closed and reopened (after fixing the disk).
    Poisoned,
    /// The disk or quota was full when a file was written or created: free space.
    /// From a database's write, flush or compaction ([`Error::NoSpace`]), the
    /// database refuses writes until then and resumes by itself
    /// ([`crate::Db::resume`] tries at once); reads keep working and nothing
    /// acknowledged is lost. (A full disk met by an fsync is not this kind: it
    /// poisons.)
    NoSpace,
    /// Another handle holds the database; close it first.
    Locked,
    /// The merge operator refused a key's operands: the operands or the operator
    /// are wrong for this key (overwrite the key with a `put` to reset it).
    MergeFailed,
    /// A bug in the engine: report it with the message; reopening may recover.
    Internal,
    /// A transaction lost a race with a concurrent write to one of its keys and wrote
    /// nothing: run the whole transaction again (begin, read, write, commit), since its
    /// reads may now give other answers. The database is healthy.
    Conflict,
}

impl Error {
    /// The coarse kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Io { op, source, .. } if is_no_space(source) && op.fills_space() => {
                ErrorKind::NoSpace
            }
            Error::Io { .. } => ErrorKind::Io,
            Error::NoSpace(_) => ErrorKind::NoSpace,
            Error::Corruption { .. } => ErrorKind::Corruption,
            Error::InvalidArgument(_) => ErrorKind::InvalidArgument,
            Error::Poisoned(_) => ErrorKind::Poisoned,
            Error::Locked(_) => ErrorKind::Locked,
            Error::Internal(_) => ErrorKind::Internal,
            Error::Conflict { .. } => ErrorKind::Conflict,
            Error::MergeFailed { .. } => ErrorKind::MergeFailed,
        }
    }

    /// True iff a background job that failed with this error may simply be abandoned
    /// and retried later: an I/O error of an operation that leaves nothing durable in
    /// doubt ([`IoOp`]: an open or create of a file, a read, a directory listing, a
    /// `stat`; for example `EMFILE`, `ENOMEM`, `ENOSPC` on create, or `EIO` reading a
    /// compaction input, after which the job's outputs are collected and its inputs
    /// compacted again). A failed write, fsync, rename or removal is never retryable:
    /// after it the durable state is unknown, so the database is poisoned. Corruption
    /// (a block that fails its checksum) and internal errors are never retryable
    /// either. Decided from the error's kind and operation, never from its text.
    ///
    /// A full disk (`ENOSPC`, `EDQUOT`) while writing or creating a file is retryable
    /// too: a table nothing names yet is collected, and the logs (WAL, MANIFEST) cut a
    /// record that failed mid-append back off (`wal::LogWriter::add_records`), so
    /// what is durable is what was before; a log whose cut failed returns the cut's
    /// error instead. [`Error::NoSpace`] (the refusal while the disk is full) is
    /// retryable: nothing was written.
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Io { op, source, .. } => {
                op.leaves_nothing_in_doubt() || (is_no_space(source) && op.fills_space())
            }
            Error::NoSpace(_) => true,
            _ => false,
        }
    }

    /// True iff this is a full disk or quota met by a write that left nothing in
    /// doubt (see [`Error::is_retryable`]), or the refusal while the disk is full:
    /// the database then refuses writes until space is free, instead of poisoning.
    pub fn is_no_space(&self) -> bool {
        match self {
            Error::Io { op, source, .. } => is_no_space(source) && op.fills_space(),
            Error::NoSpace(_) => true,
            _ => false,
        }
    }

    /// True iff this error, or the cause of a poisoned database, is corruption.
    pub fn is_corruption(&self) -> bool {
        match self {
            Error::Corruption { .. } => true,
            Error::Poisoned(cause) | Error::NoSpace(cause) => cause.is_corruption(),
            _ => false,
        }
    }

    /// Builds an [`Error::Io`].
    pub fn io(op: IoOp, path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// Builds an [`Error::MergeFailed`].
    pub(crate) fn merge_failed(operator: &str, key: &[u8], reason: impl Into<String>) -> Error {
        Error::MergeFailed {
            operator: operator.to_string(),
            key: key.to_vec(),
            reason: reason.into(),
        }
    }

    /// Builds an [`Error::Corruption`].
    pub fn corruption(file: impl Into<PathBuf>, offset: u64, reason: impl Into<String>) -> Error {
        Error::Corruption {
            file: file.into(),
            offset,
            reason: reason.into(),
        }
    }

    /// A copy of this error suitable for reporting to several callers (the poison cause is
    /// shared; other errors are re-described without their OS source object).
    pub(crate) fn duplicate(&self) -> Error {
        match self {
            Error::Io { op, path, source } => Error::Io {
                op: *op,
                path: path.clone(),
                source: std::io::Error::new(source.kind(), source.to_string()),
            },
            Error::Corruption {
                file,
                offset,
                reason,
            } => Error::Corruption {
                file: file.clone(),
                offset: *offset,
                reason: reason.clone(),
            },
            Error::InvalidArgument(s) => Error::InvalidArgument(s.clone()),
            Error::Poisoned(c) => Error::Poisoned(Arc::clone(c)),
            Error::NoSpace(c) => Error::NoSpace(Arc::clone(c)),
            Error::Locked(p) => Error::Locked(p.clone()),
            Error::Internal(s) => Error::Internal(s.clone()),
            Error::Conflict {
                key,
                snapshot,
                committed,
            } => Error::Conflict {
                key: key.clone(),
                snapshot: *snapshot,
                committed: *committed,
            },
            Error::MergeFailed {
                operator,
                key,
                reason,
            } => Error::MergeFailed {
                operator: operator.clone(),
                key: key.clone(),
                reason: reason.clone(),
            },
        }
    }
}
