//! Names of the files in a database directory.
//!
//! ```text
//! CURRENT            name of the live MANIFEST (replaced atomically)
//! LOCK               advisory lock held while open
//! MANIFEST-000005    version-edit log
//! 000007.log         write-ahead log
//! 000009.sst         SSTable
//! OPTIONS            human-readable options of the last open
//! *.dbtmp            temporary file (removed at open)
//! ```
//!
//! With `Options::db_paths`, table files live in the data paths' directories
//! ([`Dirs::tables`]) and everything else in the database directory.

use std::path::{Path, PathBuf};

/// What a directory entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileType {
    /// `CURRENT`.
    Current,
    /// `LOCK`.
    Lock,
    /// `MANIFEST-<n>`.
    Manifest(u64),
    /// `<n>.log`.
    Wal(u64),
    /// `<n>.sst`.
    Table(u64),
    /// `*.dbtmp`.
    Temp,
    /// `OPTIONS`.
    Options,
}

/// Name (not path) of the file `Db::open` creates and removes to check that the file
/// system accepts direct I/O; a `.dbtmp` file, so a crash's leftover is removed at the
/// next open.
pub const DIRECT_IO_PROBE: &str = "DIRECT_IO_PROBE.dbtmp";

/// Name (not path) of the file a resume attempt writes and removes in each directory
/// to learn whether a full disk has space again (`db::no_space`); a `.dbtmp` file, so
/// a crash's leftover is removed at the next open.
pub const NO_SPACE_PROBE: &str = "NO_SPACE_PROBE.dbtmp";

/// Where a database's files live: the database directory (WALs, MANIFESTs,
/// `CURRENT`, `OPTIONS`, `LOCK`) and one directory per data path (tables), indexed by
/// path id. The two may share directories.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dirs {
    /// The database directory.
    pub db: PathBuf,
    /// `tables[path_id]` holds the tables of data path `path_id`; never empty.
    pub tables: Vec<PathBuf>,
}

impl Dirs {
    /// The directories of a database in `db` whose `Options::db_paths` are `paths`
    /// (empty: tables in `db` too).
    pub fn new(db: &Path, paths: impl IntoIterator<Item = PathBuf>) -> Dirs {
        let mut tables: Vec<PathBuf> = paths.into_iter().collect();
        if tables.is_empty() {
            tables.push(db.to_path_buf());
        }
        Dirs {
            db: db.to_path_buf(),
            tables,
        }
    }

    /// Every distinct directory: the database directory, then each table directory
    /// not already listed.
    pub fn distinct(&self) -> Vec<&Path> {
        let mut out: Vec<&Path> = vec![&self.db];
        for t in &self.tables {
            if !out.contains(&t.as_path()) {
                out.push(t);
            }
        }
        out
    }
}

/// Path of SSTable `number` in `dir`.
pub fn table_file(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:06}.sst"))
}

/// Path of write-ahead log `number` in `dir`.
pub fn wal_file(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:06}.log"))
}

/// Name (not path) of manifest `number`.
pub fn manifest_name(number: u64) -> String {
    format!("MANIFEST-{number:06}")
}

/// The directory holding `dir` (`.` for a bare relative name such as `cp`): the one
/// to sync after creating `dir`, so its entry is durable.
pub fn parent_dir(dir: &Path) -> &Path {
    match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Parses a directory entry's name; `None` for files that are not the engine's.
pub fn parse(name: &str) -> Option<FileType> {
    match name {
        "CURRENT" => return Some(FileType::Current),
        "LOCK" => return Some(FileType::Lock),
        "OPTIONS" => return Some(FileType::Options),
        _ => {}
    }
    if name.ends_with(".dbtmp") {
        return Some(FileType::Temp);
    }
    if let Some(n) = name.strip_prefix("MANIFEST-") {
        return n.parse().ok().map(FileType::Manifest);
    }
    if let Some(n) = name.strip_suffix(".log") {
        return n.parse().ok().map(FileType::Wal);
    }
    if let Some(n) = name.strip_suffix(".sst") {
        return n.parse().ok().map(FileType::Table);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let d = Path::new("/db");
        let t = table_file(d, 7);
        assert_eq!(
            parse(t.file_name().and_then(|s| s.to_str()).unwrap_or("")),
            Some(FileType::Table(7))
        );
        assert_eq!(parse(&manifest_name(12)), Some(FileType::Manifest(12)));
        assert_eq!(parse("000003.log"), Some(FileType::Wal(3)));
        assert_eq!(parse("CURRENT.dbtmp"), Some(FileType::Temp));
        assert_eq!(parse("junk"), None);
    }
}
