//! Direct I/O at the engine level: `use_direct_reads` and
//! `use_direct_io_for_flush_and_compaction` reach the file system for table files only
//! (never WAL, MANIFEST, `CURRENT` or `OPTIONS`), a file system that refuses direct
//! I/O fails `Db::open` with `InvalidArgument` naming the path and the option (no
//! silent fallback, nothing left behind), and a database on a real disk with both
//! options on reads back everything across flushes, compactions and a reopen.

mod common;

use common::*;
use std::path::Path;
use strata::env::FaultFs;
use strata::{Db, ErrorKind, Options, ReadOptions, WriteOptions};

const DIR: &str = "/db";

fn fill(db: &Db, n: u32) {
    let wo = WriteOptions::default();
    for i in 0..n {
        db.put(
            &wo,
            &key(i),
            format!("value-{i}-{}", "x".repeat((i % 50) as usize)).as_bytes(),
        )
        .expect("put");
    }
}

fn check(db: &Db, n: u32) {
    let ro = ReadOptions::default();
    for i in 0..n {
        let got = db.get(&ro, &key(i)).expect("get");
        let want = format!("value-{i}-{}", "x".repeat((i % 50) as usize)).into_bytes();
        assert_eq!(got, Some(want), "key {i}");
    }
}

#[test]
fn refused_direct_io_fails_open_naming_path_and_option() {
    let cases = [
        (
            Options::default().with_use_direct_reads(true),
            "use_direct_reads",
        ),
        (
            Options::default().with_use_direct_io_for_flush_and_compaction(true),
            "use_direct_io_for_flush_and_compaction",
        ),
    ];
    for (opts, option) in cases {
        let fs = FaultFs::new();
        fs.set_direct_io_supported(false);
        let e = on(&fs)
            .open(Path::new(DIR), opts)
            .expect_err("open refused");
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        let msg = e.to_string();
        assert!(msg.contains(&format!("{option}=`true`")), "{msg}");
        assert!(msg.contains(DIR) && msg.contains("O_DIRECT"), "{msg}");
        // The probe left nothing behind, and no fallback happened.
        assert!(
            fs.files()
                .iter()
                .all(|p| !p.to_string_lossy().contains("DIRECT_IO_PROBE")),
            "{:?}",
            fs.files()
        );
        assert!(fs.direct_paths().is_empty());
        // The same file system opens the database without the option.
        let db = on(&fs)
            .open(Path::new(DIR), tiny_options())
            .expect("open buffered");
        fill(&db, 10);
        check(&db, 10);
    }
}

#[test]
fn only_table_files_are_opened_with_direct_io() {
    let fs = FaultFs::new();
    let opts = tiny_options()
        .with_use_direct_reads(true)
        .with_use_direct_io_for_flush_and_compaction(true);
    {
        let db = on(&fs).open(Path::new(DIR), opts.clone()).expect("open");
        fill(&db, 600);
        db.flush().expect("flush");
        db.compact_range(None, None).expect("compact");
        check(&db, 600);
    }
    let db = on(&fs).open(Path::new(DIR), opts).expect("reopen");
    check(&db, 600);
    let direct = fs.direct_paths();
    let names: Vec<String> = direct
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    assert!(
        names.iter().filter(|n| n.ends_with(".sst")).count() >= 2,
        "{names:?}"
    );
    assert!(
        names
            .iter()
            .all(|n| n.ends_with(".sst") || n == "DIRECT_IO_PROBE.dbtmp"),
        "only tables (and the open probe) use direct I/O: {names:?}"
    );
}

#[test]
fn posix_database_with_direct_io_reads_back_everything() {
    let Some(dir) = direct_io_tempdir("posix_database_with_direct_io_reads_back_everything") else {
        return;
    };
    let opts = tiny_options()
        .with_use_direct_reads(true)
        .with_use_direct_io_for_flush_and_compaction(true)
        .with_block_cache_capacity(0);
    {
        let db = Db::open(dir.path(), opts.clone()).expect("open");
        fill(&db, 2000);
        db.flush().expect("flush");
        db.compact_range(None, None).expect("compact");
        check(&db, 2000);
        assert!(db.stats().counters.blocks_read > 0);
    }
    // Reopen buffered: the tables written with direct I/O are ordinary tables.
    let db = Db::open(dir.path(), tiny_options()).expect("reopen buffered");
    check(&db, 2000);
    drop(db);
    let db = Db::open(dir.path(), opts).expect("reopen direct");
    check(&db, 2000);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("PROBE"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// True iff `/dev/shm` is mounted as tmpfs.
fn dev_shm_is_tmpfs() -> bool {
    std::fs::read_to_string("/proc/mounts").is_ok_and(|m| {
        m.lines().any(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.get(1) == Some(&"/dev/shm") && f.get(2) == Some(&"tmpfs")
        })
    })
}

/// tmpfs refused `O_DIRECT` (EINVAL at open) before Linux 6.6 and accepts it since.
/// The engine must agree with the kernel: refuse with `InvalidArgument` naming the
/// path and the option exactly when an independent `O_DIRECT` open is refused.
#[test]
fn database_on_tmpfs_with_direct_reads_matches_what_the_kernel_allows() {
    if !dev_shm_is_tmpfs() {
        eprintln!("SKIPPED: /dev/shm is not tmpfs");
        return;
    }
    let dir = tempfile::tempdir_in("/dev/shm").expect("tempdir in /dev/shm");
    let db_dir = dir.path().join("db");
    let kernel = {
        use std::os::unix::fs::OpenOptionsExt;
        let p = dir.path().join("independent-probe");
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_DIRECT)
            .open(&p)
    };
    let opts = Options::default().with_use_direct_reads(true);
    match (kernel, Db::open(&db_dir, opts)) {
        (Err(k), Err(e)) => {
            assert_eq!(k.raw_os_error(), Some(libc::EINVAL), "{k}");
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
            let msg = e.to_string();
            assert!(msg.contains("use_direct_reads"), "{msg}");
            assert!(msg.contains(&db_dir.display().to_string()), "{msg}");
        }
        (Ok(_), Ok(db)) => {
            eprintln!(
                "NOTE: tmpfs accepts O_DIRECT on this kernel (Linux >= 6.6); the refusal \
                 is covered by the FaultFs and /proc tests"
            );
            fill(&db, 100);
            db.flush().expect("flush");
            check(&db, 100);
        }
        (k, e) => panic!(
            "engine and kernel disagree: kernel O_DIRECT open {:?}, Db::open {:?}",
            k.map(|_| ()),
            e.map(|_| ())
        ),
    }
}
