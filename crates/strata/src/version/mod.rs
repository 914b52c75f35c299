//! Versions: the set of live tables, the edits between them, and the MANIFEST.
//!
//! - [`file_meta`]: what a version knows about one SSTable.
//! - [`edit`]: the delta between two versions and its MANIFEST encoding.
//! - [`manifest`]: the durable log of edits, `CURRENT`, and recovery.
//! - [`version`](mod@version): one immutable snapshot of the live files, level by level.
//! - [`run`]: the files of one column group in one level.
//! - [`virtual_table`]: tables whose entries are slices of other tables, and what keeps
//!   those alive.
//! - `set`: the version set, owner of the MANIFEST, the current version, file numbers
//!   and the file references (`file_ref`) that decide when a file may be deleted.

pub mod edit;
pub(crate) mod family;
pub mod file_meta;
pub(crate) mod file_ref;
pub mod manifest;
pub mod run;
pub(crate) mod set;
#[expect(
    clippy::module_inception,
    reason = "version/version.rs holds the Version type; callers use version::Version"
)]
pub mod version;
pub mod virtual_table;

pub use edit::VersionEdit;
pub use family::DEFAULT_FAMILY_NAME;
pub(crate) use family::{FamilyVersion, DEFAULT_FAMILY_ID};
pub use file_meta::{FileKind, FileMetaData};
pub use run::Run;
pub(crate) use set::VersionSet;
pub use version::Version;
