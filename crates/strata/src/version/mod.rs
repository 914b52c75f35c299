//! Versions: the set of live tables, the edits between them, and the MANIFEST.

pub mod file_meta;

pub use file_meta::{FileKind, FileMetaData};
