//! `ldb manifest_dump` and the MANIFEST half of `ldb verify` (Strata only).
//!
//! Both read the MANIFEST with `strata::version::manifest::recover`, the replay that
//! `Db::open` starts with and `Db::list_cfs` uses on its own: it reads `CURRENT` and
//! the MANIFEST it names and writes nothing. Opening the database instead would not
//! do: an open replays the WALs into new tables, starts a new WAL and a new MANIFEST,
//! rewrites `OPTIONS` and deletes orphans, so the dump would show (and cause) a state
//! that was not on disk before. The replay also runs `Version::check_invariants` on
//! every family (virtual tables' slices inside their tables and parents, slices of one
//! parent disjoint, every parent named): a version that breaks them is a corruption
//! error of the replay, so a dump or check never sees one.

use crate::engine::options::{EngineFlags, EngineKind};
use crate::error::{CliError, Result};
use crate::sst_dump::show;
use std::io::Write;
use std::path::PathBuf;
use strata::env::PosixFs;
use strata::filename::Dirs;
use strata::version::manifest::{self, RecoveredFamily, RecoveredManifest};
use strata::version::virtual_table::{garbage, referenced_bytes, table_space};
use strata::version::{FileKind, FileMetaData};

/// The MANIFEST of the Strata database in `flags.db`, replayed without writing.
/// `command` names the ldb command in the refusal for other engines.
///
/// # Errors
/// [`CliError::Usage`] for another engine or if `flags.db` holds no database; the
/// replay's corruption and I/O errors.
fn replay(flags: &EngineFlags, command: &str) -> Result<RecoveredManifest> {
    if flags.engine != EngineKind::Strata {
        return Err(CliError::Usage(format!(
            "'ldb {command}' works on strata databases only"
        )));
    }
    // Levels as deep as the files go (at least L0): the options' `num_levels` is not
    // needed to show what is there.
    manifest::recover(&PosixFs, &flags.db, &|_| 1)?.ok_or_else(|| {
        CliError::Usage(format!(
            "database does not exist: path=`{}`",
            flags.db.display()
        ))
    })
}

/// The table directories of `flags`, indexed by path id (as `Db::open` builds them).
///
/// # Errors
/// [`CliError::Usage`] for invalid options.
fn dirs(flags: &EngineFlags) -> Result<(Dirs, strata::Options)> {
    let opts = flags.strata_options()?;
    let dirs = Dirs::new(&flags.db, opts.db_paths.iter().map(|p| p.path.clone()));
    Ok((dirs, opts))
}

/// `ldb manifest_dump`: prints the current version of every column family (see
/// [`write_dump`]) to stdout.
///
/// # Errors
/// As [`replay`]; a failed write to stdout.
pub fn manifest_dump(flags: &EngineFlags, hex: bool) -> Result<()> {
    let m = replay(flags, "manifest_dump")?;
    let (dirs, _) = dirs(flags)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write_dump(&mut out, &m, &dirs.tables, hex)
        .and_then(|()| out.flush())
        .map_err(|e| CliError::Stdio("stdout", e))
}

/// What `ldb verify` checked in the MANIFEST.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// Parents of virtual tables, over every family.
    pub parents: usize,
    /// Slices of virtual tables, over every family.
    pub slices: usize,
}

/// The MANIFEST half of `ldb verify`: replays the MANIFEST (which checks the version
/// invariants, see the module docs) and checks with `strata::db::check_tables_exist`,
/// the check `Db::open` makes, that every table file the current version needs (real
/// level files and parents) exists in the directory of its data path. Writes nothing.
///
/// # Errors
/// As [`replay`]; the first missing table or out-of-range data path, naming the file.
pub fn check(flags: &EngineFlags) -> Result<Checked> {
    let m = replay(flags, "verify")?;
    let (dirs, opts) = dirs(flags)?;
    let path = flags
        .db
        .join(strata::filename::manifest_name(m.manifest_number));
    let mut checked = Checked::default();
    for f in &m.families {
        strata::db::check_tables_exist(&PosixFs, &dirs, &opts, &path, &f.version)?;
        checked.parents += f.version.parents().count();
        checked.slices += f
            .version
            .live_files()
            .map(|t| slices(t).len())
            .sum::<usize>();
    }
    Ok(checked)
}

/// The slices of `f`; empty for a real table.
fn slices(f: &FileMetaData) -> &[strata::version::virtual_table::Slice] {
    match &f.kind {
        FileKind::Real => &[],
        FileKind::Virtual { slices } => slices,
    }
}

/// Writes the dump of `m`: a header with the MANIFEST's counters and the data paths
/// `paths` (indexed by path id), then per family every level's files in read order,
/// each virtual table's slices in read order, the parents with their referenced bytes
/// and garbage, and the family's totals. Keys are user keys, shown as `sst-dump`
/// shows them (escaped ASCII in quotes, or `0x` hex).
///
/// # Errors
/// Write errors of `out`.
pub fn write_dump(
    out: &mut dyn Write,
    m: &RecoveredManifest,
    paths: &[PathBuf],
    hex: bool,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{}: next_file_number={} last_sequence={} max_column_family={}",
        strata::filename::manifest_name(m.manifest_number),
        m.next_file_number,
        m.last_sequence,
        m.max_column_family
    )?;
    for (id, p) in paths.iter().enumerate() {
        writeln!(out, "data path {id}: {}", p.display())?;
    }
    for f in &m.families {
        write_family(out, f, hex)?;
    }
    Ok(())
}

/// `['smallest' .. 'largest']` of user keys, as `sst-dump` shows keys.
fn range(lo: &[u8], hi: &[u8], hex: bool) -> String {
    format!("[{} .. {}]", show(lo, hex), show(hi, hex))
}

/// One table's line (and a virtual table's slices); the number of slices.
fn write_table(out: &mut dyn Write, t: &FileMetaData, hex: bool) -> std::io::Result<usize> {
    let kind = match t.kind {
        FileKind::Real => "real   ",
        FileKind::Virtual { .. } => "virtual",
    };
    write!(
        out,
        "    {kind} {:06} {} seq={}..{} size={}",
        t.number,
        range(t.smallest_user_key(), t.largest_user_key(), hex),
        t.smallest_seqno,
        t.largest_seqno,
        t.size
    )?;
    let FileKind::Virtual { slices } = &t.kind else {
        writeln!(out, " path={}", t.path_id)?;
        return Ok(0);
    };
    writeln!(out, " slices={}", slices.len())?;
    for (i, s) in slices.iter().enumerate() {
        writeln!(
            out,
            "      slice {} parent={:06} {} bytes={}",
            i + 1,
            s.parent,
            range(&s.smallest, &s.largest, hex),
            s.bytes
        )?;
    }
    Ok(slices.len())
}

fn write_family(out: &mut dyn Write, f: &RecoveredFamily, hex: bool) -> std::io::Result<()> {
    let v = &f.version;
    writeln!(
        out,
        "column family {} (id {}): log_number={}",
        f.name, f.id, f.log_number
    )?;
    let (mut files, mut virtual_files, mut n_slices) = (0usize, 0usize, 0usize);
    for level in 0..v.num_levels() {
        let level_files: Vec<_> = v.runs(level).flat_map(|r| r.files()).collect();
        let virt = level_files
            .iter()
            .filter(|t| t.kind != FileKind::Real)
            .count();
        writeln!(
            out,
            "  L{level}: files={} virtual={virt} bytes={}",
            level_files.len(),
            v.level_bytes(level)
        )?;
        for run in v.runs(level).filter(|r| !r.is_empty()) {
            if !run.is_row_run() {
                writeln!(
                    out,
                    "    run of column group {}: files={} bytes={}",
                    run.group(),
                    run.files().len(),
                    run.bytes()
                )?;
            }
            for t in run.files() {
                n_slices += write_table(out, t, hex)?;
            }
        }
        files += level_files.len();
        virtual_files += virt;
    }
    let referenced = referenced_bytes(v);
    writeln!(
        out,
        "  parents:\n    {:<8} {:>12} {:>12} {:>12} {:>4}  range",
        "parent", "size", "referenced", "garbage", "path"
    )?;
    for p in v.parents() {
        let r = referenced.get(&p.number).copied().unwrap_or(0);
        writeln!(
            out,
            "    {:06}   {:>12} {:>12} {:>12} {:>4}  {}",
            p.number,
            p.size,
            r,
            garbage(p, r),
            p.path_id,
            range(p.smallest_user_key(), p.largest_user_key(), hex)
        )?;
    }
    // The engine's own sums (`DbStats::space` of an open database), so the two agree.
    let space = table_space(v);
    writeln!(
        out,
        "    {:<8} {:>12} {:>12} {:>12}",
        "total", space.parent_bytes, space.referenced_bytes, space.garbage_bytes
    )?;
    writeln!(
        out,
        "  total: files={files} virtual={virtual_files} slices={n_slices} parents={} \
         tables_on_disk={} bytes_on_disk={} parent_bytes={} referenced={} garbage={}",
        space.parents,
        v.physical_tables().count(),
        space.live_table_bytes,
        space.parent_bytes,
        space.referenced_bytes,
        space.garbage_bytes
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata::version::{Version, VersionEdit};

    #[test]
    fn dump_lists_virtual_tables_their_slices_and_parent_garbage() {
        let mut e = VersionEdit::default();
        e.new_files
            .push((0, FileMetaData::for_test(20, "a", "z", 10, 12, 300)));
        e.new_files
            .push((1, FileMetaData::for_test(5, "a", "c", 1, 5, 200)));
        e.new_parents
            .push(FileMetaData::for_test(8, "d", "z", 1, 5, 1000));
        let mut nine = FileMetaData::for_test(9, "d", "z", 6, 9, 400);
        nine.path_id = 1;
        e.new_parents.push(nine);
        e.new_files.push((
            1,
            FileMetaData::virtual_for_test(11, "d", "h", &[(9, "d", "h", 150), (8, "d", "h", 200)]),
        ));
        e.new_files.push((
            1,
            FileMetaData::virtual_for_test(12, "i", "p", &[(8, "i", "p", 250)]),
        ));
        let version = Version::new(3).apply(&e).expect("apply");
        version.check_invariants().expect("invariants");
        let m = RecoveredManifest {
            families: vec![RecoveredFamily {
                id: 0,
                name: "default".into(),
                version,
                log_number: 21,
                deepest_level: Some(1),
            }],
            max_column_family: 0,
            next_file_number: 22,
            last_sequence: 12,
            manifest_number: 3,
            resume_at: 0,
        };
        let mut out = Vec::new();
        let paths = [PathBuf::from("/db"), PathBuf::from("/slow")];
        write_dump(&mut out, &m, &paths, false).expect("dump");
        let text = String::from_utf8(out).expect("utf-8");
        let expected = "\
MANIFEST-000003: next_file_number=22 last_sequence=12 max_column_family=0
data path 0: /db
data path 1: /slow
column family default (id 0): log_number=21
  L0: files=1 virtual=0 bytes=300
    real    000020 ['a' .. 'z'] seq=10..12 size=300 path=0
  L1: files=3 virtual=2 bytes=800
    real    000005 ['a' .. 'c'] seq=1..5 size=200 path=0
    virtual 000011 ['d' .. 'h'] seq=1..5 size=350 slices=2
      slice 1 parent=000009 ['d' .. 'h'] bytes=150
      slice 2 parent=000008 ['d' .. 'h'] bytes=200
    virtual 000012 ['i' .. 'p'] seq=1..5 size=250 slices=1
      slice 1 parent=000008 ['i' .. 'p'] bytes=250
  L2: files=0 virtual=0 bytes=0
  parents:
    parent           size   referenced      garbage path  range
    000008           1000          450          550    0  ['d' .. 'z']
    000009            400          150          250    1  ['d' .. 'z']
    total            1400          600          800
  total: files=4 virtual=2 slices=3 parents=2 tables_on_disk=4 bytes_on_disk=1900 \
parent_bytes=1400 referenced=600 garbage=800
";
        assert_eq!(text, expected, "{text}");
        let mut out = Vec::new();
        write_dump(&mut out, &m, &paths, true).expect("dump");
        let text = String::from_utf8(out).expect("utf-8");
        assert!(
            text.contains("slice 1 parent=000008 ['0x69' .. '0x70'] bytes=250"),
            "{text}"
        );
        // Slice bounds may be keys no entry has, e.g. `k` + 0x00 (the first key after
        // `k`): escaped, never raw bytes.
        assert_eq!(range(b"k\0", b"z", false), r"['k\x00' .. 'z']");
    }

    #[test]
    fn other_engines_are_refused_before_anything_is_read() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let flags = EngineFlags {
            engine: EngineKind::Fjall,
            db: tmp.path().join("db"),
            ..crate::engine::conformance::default_flags()
        };
        for (result, command) in [
            (manifest_dump(&flags, false).map(|_| ()), "manifest_dump"),
            (check(&flags).map(|_| ()), "verify"),
        ] {
            let Err(CliError::Usage(msg)) = result else {
                panic!("{command}: not a usage error");
            };
            assert!(msg.contains(command) && msg.contains("strata"), "{msg}");
        }
        assert!(!flags.db.exists());
    }
}
