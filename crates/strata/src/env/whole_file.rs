//! Whole-file helpers over any [`FileSystem`]: read a small file, and replace one
//! atomically and durably. The engine uses them for `CURRENT` and `OPTIONS`; they are
//! not part of the file-system seam a user implements.

use super::FileSystem;
use crate::error::{Error, IoOp, Result};
use std::path::{Path, PathBuf};

/// Reads a whole file through `fs` (small files only: CURRENT, OPTIONS).
pub fn read_to_vec(fs: &dyn FileSystem, path: &Path) -> Result<Vec<u8>> {
    let mut f = fs.open_sequential(path)?;
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(buf.get(..n).unwrap_or_default());
    }
}

/// Writes `data` to `path` atomically and durably: write a temp file, fsync it, rename it
/// over `path`, fsync the directory. Used for CURRENT and OPTIONS.
pub fn write_file_atomic(fs: &dyn FileSystem, dir: &Path, name: &str, data: &[u8]) -> Result<()> {
    let tmp: PathBuf = dir.join(format!("{name}.dbtmp"));
    let written = fs.create(&tmp).and_then(|mut f| {
        f.append(data)?;
        f.sync()
    });
    if let Err(e) = written {
        // A full disk leaves a partial temp file: give its space back (best effort;
        // the next write of `name` replaces it anyway).
        let _ = fs.remove(&tmp);
        return Err(e);
    }
    fs.rename(&tmp, &dir.join(name))?;
    // Past the rename `name` may already be the new file: whatever fails now leaves
    // that in doubt, so it is reported as the directory fsync it is part of, never
    // as a retryable open (a caller would undo work `name` already points at).
    fs.sync_dir(dir).map_err(|e| match e {
        Error::Io {
            op: IoOp::OpenDir,
            path,
            source,
        } => Error::Io {
            op: IoOp::FsyncDir,
            path,
            source,
        },
        other => other,
    })
}
