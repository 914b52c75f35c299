//! Fault vocabulary of [`super::FaultFs`]: operation kinds, fault rules, crash and
//! failed-sync modes, and the tiny deterministic PRNG behind the seeded modes.
//!
//! Everything here is plain data; the matching and counting happen in `state.rs` under
//! the file system's one mutex.

use std::fmt;
use std::ops::{BitOr, BitOrAssign};

/// A set of operation kinds, used to say which operations a [`FaultRule`] matches.
///
/// Every fallible operation of [`super::FaultFs`] has exactly one kind; combine kinds
/// with `|`. Test helpers (`corrupt_byte`, `set_file_bytes`, ...) have no kind: they are
/// never counted and never fail by injection.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FaultKinds(u32);

impl FaultKinds {
    /// No kind: a rule with this set never fires.
    pub const NONE: FaultKinds = FaultKinds(0);
    /// `FileSystem::create` (a new or truncated file).
    pub const CREATE: FaultKinds = FaultKinds(1 << 0);
    /// `open_random` and `open_sequential`.
    pub const OPEN: FaultKinds = FaultKinds(1 << 1);
    /// `RandomAccessFile::read_exact_at` and `SequentialFile::read`.
    pub const READ: FaultKinds = FaultKinds(1 << 2);
    /// `WritableFile::append`.
    pub const WRITE: FaultKinds = FaultKinds(1 << 3);
    /// `WritableFile::flush`.
    pub const FLUSH: FaultKinds = FaultKinds(1 << 4);
    /// `WritableFile::sync` (fdatasync).
    pub const SYNC: FaultKinds = FaultKinds(1 << 5);
    /// `FileSystem::rename`.
    pub const RENAME: FaultKinds = FaultKinds(1 << 6);
    /// `FileSystem::remove`.
    pub const REMOVE: FaultKinds = FaultKinds(1 << 7);
    /// `FileSystem::sync_dir`.
    pub const SYNC_DIR: FaultKinds = FaultKinds(1 << 8);
    /// `FileSystem::list`.
    pub const LIST: FaultKinds = FaultKinds(1 << 9);
    /// `FileSystem::create_dir_all`.
    pub const MKDIR: FaultKinds = FaultKinds(1 << 10);
    /// `FileSystem::file_size`.
    pub const STAT: FaultKinds = FaultKinds(1 << 11);
    /// `FileSystem::lock`.
    pub const LOCK: FaultKinds = FaultKinds(1 << 12);
    /// `WritableFile::truncate`.
    pub const TRUNCATE: FaultKinds = FaultKinds(1 << 13);
    /// The operations a full disk fails: create, write (append) and flush.
    pub const FILLING: FaultKinds = FaultKinds(Self::CREATE.0 | Self::WRITE.0 | Self::FLUSH.0);
    /// Every operation that changes what is (or may become) on disk: create, write,
    /// flush, sync, rename, remove, sync-dir, mkdir, truncate.
    pub const MUTATING: FaultKinds = FaultKinds(
        Self::CREATE.0
            | Self::WRITE.0
            | Self::FLUSH.0
            | Self::SYNC.0
            | Self::RENAME.0
            | Self::REMOVE.0
            | Self::SYNC_DIR.0
            | Self::MKDIR.0
            | Self::TRUNCATE.0,
    );
    /// Every kind.
    pub const ALL: FaultKinds = FaultKinds((1 << 14) - 1);

    /// True iff every kind in `other` is in `self`.
    pub const fn contains(self, other: FaultKinds) -> bool {
        self.0 & other.0 == other.0
    }

    /// True iff `self` and `other` share at least one kind.
    pub const fn intersects(self, other: FaultKinds) -> bool {
        self.0 & other.0 != 0
    }

    /// True iff the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl BitOr for FaultKinds {
    type Output = FaultKinds;
    fn bitor(self, rhs: FaultKinds) -> FaultKinds {
        FaultKinds(self.0 | rhs.0)
    }
}

impl BitOrAssign for FaultKinds {
    fn bitor_assign(&mut self, rhs: FaultKinds) {
        self.0 |= rhs.0;
    }
}

impl fmt::Debug for FaultKinds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: [(FaultKinds, &str); 14] = [
            (FaultKinds::CREATE, "CREATE"),
            (FaultKinds::OPEN, "OPEN"),
            (FaultKinds::READ, "READ"),
            (FaultKinds::WRITE, "WRITE"),
            (FaultKinds::FLUSH, "FLUSH"),
            (FaultKinds::SYNC, "SYNC"),
            (FaultKinds::RENAME, "RENAME"),
            (FaultKinds::REMOVE, "REMOVE"),
            (FaultKinds::SYNC_DIR, "SYNC_DIR"),
            (FaultKinds::LIST, "LIST"),
            (FaultKinds::MKDIR, "MKDIR"),
            (FaultKinds::STAT, "STAT"),
            (FaultKinds::LOCK, "LOCK"),
            (FaultKinds::TRUNCATE, "TRUNCATE"),
        ];
        let mut set = f.debug_set();
        for (kind, name) in NAMES {
            if self.contains(kind) {
                set.entry(&format_args!("{name}"));
            }
        }
        set.finish()
    }
}

/// One fault to inject: fail the matching operation that comes after `skip` matching
/// operations succeeded, either once or from then on (sticky).
///
/// Matching operations are counted from the moment the rule is installed with
/// [`super::FaultFs::inject`], so a test can count a scenario's operations once with
/// [`super::FaultFs::op_count`] and then replay it failing at every index in turn.
/// An injected failure surfaces as `Error::Io { source: io::Error::other("injected
/// fault"), .. }` and has no effect on the file system (a failed append writes nothing,
/// a failed sync makes nothing durable, a failed rename renames nothing); see
/// [`FaultRule::no_space`] for the full-disk variant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultRule {
    pub(super) kinds: FaultKinds,
    pub(super) skip: u64,
    pub(super) sticky: bool,
    pub(super) path_contains: Option<String>,
    /// The failure is a full disk (`ENOSPC`) rather than an I/O error.
    pub(super) no_space: bool,
    /// Matching operations seen since installation. Written under the state mutex.
    pub(super) seen: u64,
    /// True once a once-only rule has fired.
    pub(super) spent: bool,
}

impl FaultRule {
    /// Fails exactly one operation: the first one of `kinds` after `skip` matching
    /// operations succeeded (`skip == 0` fails the very next match).
    pub fn once(kinds: FaultKinds, skip: u64) -> FaultRule {
        FaultRule {
            kinds,
            skip,
            sticky: false,
            path_contains: None,
            no_space: false,
            seen: 0,
            spent: false,
        }
    }

    /// Fails every operation of `kinds` after the first `skip` matching ones succeeded:
    /// a device that died.
    pub fn sticky(kinds: FaultKinds, skip: u64) -> FaultRule {
        FaultRule {
            sticky: true,
            ..FaultRule::once(kinds, skip)
        }
    }

    /// Restricts the rule to operations whose path contains `fragment` (for example
    /// `".log"` or `"MANIFEST"`); operations on other paths are neither counted nor
    /// failed by this rule. For `rename`, either path may match.
    pub fn on_path(mut self, fragment: impl Into<String>) -> FaultRule {
        self.path_contains = Some(fragment.into());
        self
    }

    /// Makes the failure a full disk: the error is `ENOSPC` (`io::ErrorKind::StorageFull`,
    /// still saying "injected fault"), and a failed append keeps the first half of its
    /// bytes, as a short write to a disk that filled up does (the one exception to
    /// "no side effect"; the engine must cut the bytes back off). Use with
    /// [`FaultKinds::FILLING`].
    pub fn no_space(mut self) -> FaultRule {
        self.no_space = true;
        self
    }

    /// The kinds this rule matches.
    pub fn kinds(&self) -> FaultKinds {
        self.kinds
    }

    /// True iff the rule keeps failing after its first failure.
    pub fn is_sticky(&self) -> bool {
        self.sticky
    }
}

/// What a simulated power loss does to bytes that were written but not yet synced.
///
/// In every mode except [`CrashMode::KeepAll`], directory entries revert to their state
/// at the last successful `sync_dir` of their directory, and synced bytes always survive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CrashMode {
    /// Every unsynced byte is lost: each file reverts to its last synced content.
    DropUnsynced,
    /// Each file keeps a random prefix (possibly empty, possibly all) of its unsynced
    /// bytes, as if the device wrote back part of the dirty page cache in order. The
    /// choice is a deterministic function of `seed` and the file-system history.
    KeepRandomPrefix {
        /// Seed of the deterministic generator.
        seed: u64,
    },
    /// Like [`CrashMode::KeepRandomPrefix`], then overwrites a random non-empty range of
    /// each kept unsynced tail with random bytes: a torn write whose sectors landed out
    /// of order. Synced bytes are never garbled.
    GarbleUnsynced {
        /// Seed of the deterministic generator.
        seed: u64,
    },
    /// A process crash, not a power loss: the operating system survived, so every
    /// appended byte and every directory change is kept. Handles still go stale and
    /// locks are released.
    KeepAll,
}

/// What a failed `sync` does to the file's unsynced bytes.
///
/// A failed sync never makes anything durable. The question is what the page cache holds
/// afterwards: after a failed `fsync` Linux may mark the dirty pages clean and drop them,
/// so a later read (or a later successful `fsync`) sees something other than what was
/// written. This is why the engine must never retry a failed sync as if it could succeed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FailedSyncMode {
    /// The unsynced bytes stay in the file, still unsynced (a retry could persist them).
    #[default]
    KeepDirty,
    /// The unsynced bytes are replaced by zeros (the file length is unchanged), as when
    /// the kernel dropped the dirty pages and the blocks were never written. A later
    /// successful sync makes the zeros durable.
    ZeroDirty,
}

/// SplitMix64: a tiny, fast, deterministic generator for the seeded crash modes.
#[derive(Clone, Debug)]
pub(super) struct SplitMix64(u64);

impl SplitMix64 {
    pub(super) fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub(super) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..=max`.
    pub(super) fn up_to(&mut self, max: usize) -> usize {
        let span = (max as u64).saturating_add(1);
        (self.next_u64() % span) as usize
    }
}
