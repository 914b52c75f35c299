//! `strata backup`: incremental backups of a Strata database (`strata::backup`),
//! like RocksDB's `ldb backup` / `restore` and its BackupEngine.
//!
//! ```text
//! strata backup --backup_dir=DIR [--rate_limit=BYTES_PER_SEC] create --db=DIR [engine flags]
//! strata backup --backup_dir=DIR list
//! strata backup --backup_dir=DIR verify [--backup_id=N]      (every backup if absent)
//! strata backup --backup_dir=DIR restore [--backup_id=N] --to=DIR   (newest if absent)
//! strata backup --backup_dir=DIR purge --keep=N
//! strata backup --backup_dir=DIR delete --backup_id=N
//! ```
//! `--backup_dir` and `--json` may come before or after the command. `create` opens
//! the database for writing (it takes its lock, as `ldb checkpoint` does) and never
//! creates one. Output is one line per backup or action, ``key=value`` pairs; `list`
//! prints a table:
//!
//! ```text
//! id  timestamp   sequence  files    bytes  copied
//!  1  1764250000     40000     27  4262886  4262886
//!  2  1764250100     40400     28  4305689    45636
//! ```
//! With `--json`, every line is a JSON object instead (`list` and `create`: `id`,
//! `timestamp` in seconds since the Unix epoch, `sequence`, `files`, `bytes`,
//! `copied`). A failure (a damaged file, an unknown id, a bad restore target) exits
//! with status 1 and one line naming it.

use crate::engine::options::EngineFlags;
use crate::error::{CliError, Result};
use crate::ldb::{open_strata, write_stdout};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use strata::backup::{BackupEngine, BackupInfo};

/// `strata backup`.
#[derive(Args, Clone, Debug)]
pub struct BackupArgs {
    /// The backup directory (created if missing).
    #[arg(long = "backup_dir", global = true)]
    pub backup_dir: Option<PathBuf>,
    /// Print JSON lines instead of text.
    #[arg(long = "json", global = true, default_value_t = false)]
    pub json: bool,
    /// Bytes per second `create` and `restore` may write (0: unlimited; RocksDB's
    /// backup and restore rate limits).
    #[arg(long = "rate_limit", global = true, default_value_t = 0)]
    pub rate_limit: u64,
    /// What to do.
    #[command(subcommand)]
    pub command: BackupCommand,
}

/// The `backup` commands.
#[derive(Subcommand, Clone, Debug)]
pub enum BackupCommand {
    /// Back up the database `--db` (tables an earlier backup stored are shared).
    #[command(mut_arg("use_existing_db", |a| a.hide(true)))]
    #[command(mut_arg("num_column_families", |a| a.hide(true)))]
    Create {
        /// Engine options (`--db` names the database).
        #[command(flatten)]
        engine: Box<EngineFlags>,
    },
    /// List the backups, oldest first.
    List,
    /// Re-read every file of a backup (of each, without --backup_id) and check its
    /// size and checksum.
    Verify {
        /// The backup to verify.
        #[arg(long = "backup_id")]
        backup_id: Option<u64>,
    },
    /// Restore a backup (the newest, without --backup_id) into an empty or absent
    /// directory.
    Restore {
        /// The backup to restore.
        #[arg(long = "backup_id")]
        backup_id: Option<u64>,
        /// Where to restore it.
        #[arg(long = "to")]
        to: PathBuf,
    },
    /// Delete every backup but the newest N, and the files only they held.
    Purge {
        /// How many backups to keep.
        #[arg(long = "keep")]
        keep: usize,
    },
    /// Delete one backup, and the files only it held.
    Delete {
        /// The backup to delete.
        #[arg(long = "backup_id")]
        backup_id: u64,
    },
}

/// One backup as `list` and `create` print it.
#[derive(Serialize)]
struct Row {
    id: u64,
    timestamp: u64,
    sequence: u64,
    files: u64,
    bytes: u64,
    copied: u64,
}

impl From<&BackupInfo> for Row {
    fn from(b: &BackupInfo) -> Row {
        Row {
            id: b.id,
            timestamp: b.timestamp,
            sequence: b.sequence,
            files: b.files,
            bytes: b.size,
            copied: b.copied,
        }
    }
}

/// Runs `strata backup`.
///
/// # Errors
/// [`CliError::Usage`] without `--backup_dir`, or for an empty directory on `restore`
/// without an id; the engine's errors (named by the engine); standard output errors.
pub fn run(args: &BackupArgs) -> Result<()> {
    let dir = args
        .backup_dir
        .as_ref()
        .ok_or_else(|| CliError::Usage("backup: --backup_dir=DIR is required".into()))?;
    let mut engine = BackupEngine::open_posix(dir)?;
    engine.set_rate_limit(Some(args.rate_limit));
    // A bar of the bytes handled on standard error (drawn only on a terminal).
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let shown = bar.clone();
    engine.set_progress(Some(Arc::new(move |done, total| {
        shown.set_length(total);
        shown.set_position(done);
    })));
    let json = args.json;
    let out = match &args.command {
        BackupCommand::Create { engine: flags } => {
            let mut flags = flags.as_ref().clone();
            // A backup of a database that is not there must not make an empty one.
            flags.create_if_missing = false;
            let db = open_strata(&flags, "backup create")?;
            let made = engine.create(&db);
            db.close()?;
            let row = Row::from(&made?);
            if json {
                vec![serde_json::to_string(&row)?]
            } else {
                vec![format!(
                    "backup: id={} files={} bytes={} copied={} sequence={}",
                    row.id, row.files, row.bytes, row.copied, row.sequence
                )]
            }
        }
        BackupCommand::List => list(&engine.list()?, json)?,
        BackupCommand::Verify { backup_id } => {
            let ids = match backup_id {
                Some(id) => vec![*id],
                None => engine.list()?.iter().map(|b| b.id).collect(),
            };
            let mut out = Vec::new();
            for id in ids {
                engine.verify(id)?;
                out.push(if json {
                    serde_json::json!({ "id": id, "verified": true }).to_string()
                } else {
                    format!("verify: ok backup_id={id}")
                });
            }
            out
        }
        BackupCommand::Restore { backup_id, to } => {
            let id = match backup_id {
                Some(id) => *id,
                None => engine.list()?.last().map(|b| b.id).ok_or_else(|| {
                    CliError::Usage(format!(
                        "backup restore: no backups in backup_dir=`{}`",
                        dir.display()
                    ))
                })?,
            };
            engine.restore(id, to)?;
            vec![if json {
                serde_json::json!({ "id": id, "restored_to": to }).to_string()
            } else {
                format!("restore: backup_id={id} to={}", to.display())
            }]
        }
        BackupCommand::Purge { keep } => {
            let deleted = engine.purge(*keep)?;
            vec![if json {
                serde_json::json!({ "deleted": deleted }).to_string()
            } else {
                let ids: Vec<String> = deleted.iter().map(u64::to_string).collect();
                format!("purge: kept={keep} deleted={}", ids.join(","))
            }]
        }
        BackupCommand::Delete { backup_id } => {
            engine.delete(*backup_id)?;
            vec![if json {
                serde_json::json!({ "deleted": [backup_id] }).to_string()
            } else {
                format!("delete: backup_id={backup_id}")
            }]
        }
    };
    bar.finish_and_clear();
    let text: String = out.iter().map(|l| format!("{l}\n")).collect();
    write_stdout(text.as_bytes())
}

/// The lines of `list`: a right-aligned table, or one JSON object per backup.
fn list(backups: &[BackupInfo], json: bool) -> Result<Vec<String>> {
    if json {
        return backups
            .iter()
            .map(|b| Ok(serde_json::to_string(&Row::from(b))?))
            .collect();
    }
    const HEADER: [&str; 6] = ["id", "timestamp", "sequence", "files", "bytes", "copied"];
    let rows: Vec<[String; 6]> = backups
        .iter()
        .map(|b| [b.id, b.timestamp, b.sequence, b.files, b.size, b.copied].map(|v| v.to_string()))
        .collect();
    let widths: Vec<usize> = (0..HEADER.len())
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i).map(String::len))
                .chain(HEADER.get(i).map(|h| h.len()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:>w$}"))
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut out = vec![line(HEADER.to_vec())];
    out.extend(
        rows.iter()
            .map(|r| line(r.iter().map(String::as_str).collect())),
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse, Command};

    fn backup(args: &[&str]) -> BackupArgs {
        let argv = ["strata", "backup"].iter().chain(args).copied();
        match parse(argv).unwrap().command {
            Command::Backup(a) => *a,
            other => panic!("{other:?}"),
        }
    }

    fn run_ok(args: &[&str]) {
        run(&backup(args)).unwrap_or_else(|e| panic!("{args:?}: {e}"));
    }

    #[test]
    fn create_list_verify_restore_purge_through_the_command_line() {
        let tmp = tempfile::tempdir().unwrap();
        let db_dir = tmp.path().join("db");
        let db = strata::Db::open(&db_dir, strata::Options::default()).unwrap();
        db.put(&strata::WriteOptions::default(), b"k", b"v")
            .unwrap();
        db.close().unwrap();
        let bk = format!("--backup_dir={}", tmp.path().join("bk").display());
        let db_flag = format!("--db={}", db_dir.display());
        run_ok(&[&bk, "create", &db_flag]);
        run_ok(&["create", &db_flag, &bk, "--json", "--rate_limit=1048576"]);
        assert_eq!(backup(&[&bk, "--rate_limit=4096", "list"]).rate_limit, 4096);
        run_ok(&[&bk, "list"]);
        run_ok(&[&bk, "verify"]);
        let to = tmp.path().join("restored");
        run_ok(&[&bk, "restore", &format!("--to={}", to.display())]);
        let r = strata::Db::open(&to, strata::Options::default()).unwrap();
        assert_eq!(
            r.get(&strata::ReadOptions::default(), b"k").unwrap(),
            Some(b"v".to_vec())
        );
        r.close().unwrap();
        run_ok(&[&bk, "purge", "--keep=1"]);
        let engine = BackupEngine::open_posix(tmp.path().join("bk")).unwrap();
        let ids: Vec<u64> = engine.list().unwrap().iter().map(|b| b.id).collect();
        assert_eq!(ids, [2]);
        drop(engine);

        // Bad input names the thing.
        let e = run(&backup(&[&bk, "verify", "--backup_id=9"])).unwrap_err();
        assert!(one(&e).contains("backup_id=9"), "{}", one(&e));
        let e = run(&backup(&["list"])).unwrap_err();
        assert!(e.to_string().contains("--backup_dir"), "{e}");
        let missing = format!("--db={}", tmp.path().join("nope").display());
        assert!(run(&backup(&[&bk, "create", &missing])).is_err());
        assert!(!tmp.path().join("nope").exists());
    }

    /// The error and its sources on one line, as `main` prints it.
    fn one(e: &CliError) -> String {
        crate::error::one_line(e)
    }
    #[test]
    fn list_prints_an_aligned_table() {
        let tmp = tempfile::tempdir().unwrap();
        let db = strata::Db::open(tmp.path().join("db"), strata::Options::default()).unwrap();
        let mut engine = BackupEngine::open_posix(tmp.path().join("bk")).unwrap();
        let info = engine.create(&db).unwrap();
        db.close().unwrap();
        let lines = list(std::slice::from_ref(&info), false).unwrap();
        assert_eq!(lines.len(), 2);
        let header: Vec<&str> = lines[0].split_whitespace().collect();
        assert_eq!(
            header,
            ["id", "timestamp", "sequence", "files", "bytes", "copied"]
        );
        assert_eq!(lines[0].len(), lines[1].len(), "{lines:?}");
        let json = list(&[info], true).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json[0]).unwrap();
        assert_eq!(v["id"], 1);
    }
}
