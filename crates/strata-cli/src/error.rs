//! The command's error type: every failure the binary reports as `error: ...`.
//!
//! Each variant renders as one lowercase line with ``key=`value` `` context; the cause is
//! attached as `source` (printed after a colon by `main`, never repeated in the message).

use std::path::PathBuf;

/// Result alias for the whole binary.
pub type Result<T, E = CliError> = std::result::Result<T, E>;

/// A failure of a `strata` subcommand.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The command line asks for something impossible (bad value, bad combination).
    #[error("{0}")]
    Usage(String),
    /// The storage engine refused an operation.
    #[error("strata engine")]
    Strata(#[from] strata::Error),
    /// RocksDB refused an operation.
    #[cfg(feature = "rocksdb")]
    #[error("rocksdb engine")]
    Rocks(#[from] rocksdb::Error),
    /// fjall refused an operation.
    #[cfg(feature = "fjall")]
    #[error("fjall engine")]
    Fjall(#[from] fjall::Error),
    /// A file operation of the command itself failed (results, input, db directory).
    #[error("io error: op=`{op}` path=`{}`", path.display())]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// Reading standard input or writing standard output failed.
    #[error("io error on `{0}`")]
    Stdio(&'static str, #[source] std::io::Error),
    /// A results file has a line that is not a JSON object of the expected shape.
    #[error("bad results line: path=`{}` line={line}", path.display())]
    BadRecord {
        /// The results file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// Serializing a result record failed.
    #[error("json encoding")]
    Json(#[from] serde_json::Error),
    /// Input to `ldb load` or a `--hex` argument is malformed.
    #[error("bad input: {0}")]
    BadInput(String),
    /// `ldb get` found no value for the key.
    #[error("key not found: `{0}`")]
    NotFound(String),
    /// Drawing the chart failed.
    #[error("plot: {0}")]
    Plot(String),
    /// `strata stress` found the database disagreeing with the expected state (a lost
    /// write, a resurrected delete, a wrong value). The message names the key.
    #[error("verification failed: {0}")]
    Mismatch(String),
    /// `ldb dump` or `ldb scan` printed every readable key but met keys it could not
    /// read (each named on standard error as it was met).
    #[error("{0} key(s) could not be read; each is named above")]
    Unreadable(u64),
    /// The metrics recorder could not be installed (`bench --prometheus`).
    #[cfg(feature = "prometheus")]
    #[error("metrics recorder: {0}")]
    Metrics(String),
    /// A worker thread panicked (a bug: the message is what it said).
    #[error("worker thread panicked: {0}")]
    WorkerPanic(String),
}

impl CliError {
    /// Builds a [`CliError::Io`].
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> CliError {
        CliError::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

/// Renders an error and its chain of causes on one line: `a: b: c`.
pub fn one_line(err: &(dyn std::error::Error + 'static)) -> String {
    let mut s = err.to_string();
    let mut cur = err.source();
    while let Some(e) = cur {
        let msg = e.to_string();
        if !msg.is_empty() && !s.ends_with(&msg) {
            s.push_str(": ");
            s.push_str(&msg);
        }
        cur = e.source();
    }
    s.replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_is_one_line() {
        let e = CliError::io(
            "open",
            "/x/y",
            std::io::Error::new(std::io::ErrorKind::NotFound, "no such\nfile"),
        );
        assert_eq!(
            one_line(&e),
            "io error: op=`open` path=`/x/y`: no such file"
        );
        let e = CliError::from(strata::Error::InvalidArgument(
            "num_levels must be in 3..=32".into(),
        ));
        assert_eq!(
            one_line(&e),
            "strata engine: invalid argument: num_levels must be in 3..=32"
        );
    }
}
