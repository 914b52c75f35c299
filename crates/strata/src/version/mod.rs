//! Versions: the set of live tables, the edits between them, and the MANIFEST.
//!
//! - [`file_meta`]: what a version knows about one SSTable.
//! - [`edit`]: the delta between two versions and its MANIFEST encoding.
//! - [`version`](mod@version): one immutable snapshot of the live files, level by level.

pub mod edit;
pub mod file_meta;
#[expect(
    clippy::module_inception,
    reason = "version/version.rs holds the Version type; callers use version::Version"
)]
pub mod version;

pub use edit::VersionEdit;
pub use file_meta::{FileKind, FileMetaData};
pub use version::Version;
