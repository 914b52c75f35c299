//! Recovery: a database dropped without close reopens with every acknowledged write; a
//! torn WAL tail is dropped (tolerant mode) or reported (absolute mode); a flipped byte
//! in an SSTable block is reported as corruption naming the file, never a wrong value.

mod common;

use common::{key, tiny_options};
use strata::{Db, ErrorKind, Options, ReadOptions, WalRecoveryMode, WriteOptions};

fn wal_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .expect("readdir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    v.sort();
    v
}

#[test]
fn drop_without_close_keeps_every_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = tiny_options();
    {
        let db = Db::open(dir.path(), opts.clone()).expect("open");
        for i in 0..2000u32 {
            db.put(
                &WriteOptions::default(),
                &key(i),
                format!("value-{i}").as_bytes(),
            )
            .expect("put");
        }
        for i in (0..2000u32).step_by(3) {
            db.delete(&WriteOptions::default(), &key(i))
                .expect("delete");
        }
        // Dropped here without close.
    }
    for _ in 0..2 {
        let db = Db::open(dir.path(), opts.clone()).expect("reopen");
        for i in 0..2000u32 {
            let want = (i % 3 != 0).then(|| format!("value-{i}").into_bytes());
            assert_eq!(
                db.get(&ReadOptions::default(), &key(i)).expect("get"),
                want,
                "key {i}"
            );
        }
    }
}

#[test]
fn torn_wal_tail_is_dropped_in_tolerant_mode_and_reported_in_absolute_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = Options::default().with_write_buffer_size(1 << 20);
    {
        let db = Db::open(dir.path(), opts.clone()).expect("open");
        for i in 0..100u32 {
            db.put(
                &WriteOptions::default().with_sync(true),
                &key(i),
                &[b'x'; 100],
            )
            .expect("put");
        }
    }
    let wal = wal_files(dir.path()).pop().expect("a wal");
    let len = std::fs::metadata(&wal).expect("stat").len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&wal)
        .expect("open wal");
    f.set_len(len - 50).expect("truncate");
    drop(f);

    let strict = opts
        .clone()
        .with_wal_recovery_mode(WalRecoveryMode::AbsoluteConsistency);
    let err = Db::open(dir.path(), strict).expect_err("absolute mode must refuse a torn tail");
    assert_eq!(err.kind(), ErrorKind::Corruption, "{err}");

    let db = Db::open(dir.path(), opts).expect("tolerant open");
    for i in 0..99u32 {
        assert!(
            db.get(&ReadOptions::default(), &key(i))
                .expect("get")
                .is_some(),
            "key {i}"
        );
    }
    assert_eq!(
        db.get(&ReadOptions::default(), &key(99)).expect("get"),
        None
    );
}

#[test]
fn corrupt_wal_middle_is_an_error_not_silent_loss() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = Options::default();
    {
        let db = Db::open(dir.path(), opts.clone()).expect("open");
        for i in 0..1000u32 {
            db.put(&WriteOptions::default(), &key(i), &[b'y'; 100])
                .expect("put");
        }
    }
    let wal = wal_files(dir.path()).pop().expect("a wal");
    let mut bytes = std::fs::read(&wal).expect("read");
    bytes[1000] ^= 0x55;
    std::fs::write(&wal, &bytes).expect("write");
    let err = Db::open(dir.path(), opts).expect_err("mid-log corruption must be reported");
    assert!(err.is_corruption(), "{err}");
    assert!(
        err.to_string().contains(".log"),
        "error names the file: {err}"
    );
}

#[test]
fn flipped_sstable_byte_is_corruption_on_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = Options::default().with_block_cache_capacity(0);
    {
        let db = Db::open(dir.path(), opts.clone()).expect("open");
        for i in 0..500u32 {
            db.put(&WriteOptions::default(), &key(i), &[b'z'; 100])
                .expect("put");
        }
        db.flush().expect("flush");
        db.close().expect("close");
    }
    let sst = std::fs::read_dir(dir.path())
        .expect("readdir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "sst"))
        .expect("an sst");
    let mut bytes = std::fs::read(&sst).expect("read");
    bytes[100] ^= 0x01; // inside the first data block
    std::fs::write(&sst, &bytes).expect("write");

    let db = Db::open(dir.path(), opts).expect("open succeeds: blocks are checked on read");
    let err = db
        .get(&ReadOptions::default(), &key(0))
        .expect_err("reading the damaged block must fail");
    assert!(err.is_corruption(), "{err}");
    assert!(
        err.to_string().contains(".sst"),
        "error names the file: {err}"
    );
    let err = db.verify_checksums().expect_err("verify finds it");
    assert!(err.is_corruption(), "{err}");
    // Keys in undamaged blocks still read correctly.
    assert!(db
        .get(&ReadOptions::default(), &key(499))
        .expect("other block")
        .is_some());
}

#[test]
fn reopen_after_many_flushes_and_compactions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = tiny_options();
    for round in 0..4u32 {
        let db = Db::open(dir.path(), opts.clone()).expect("open");
        for i in 0..1500u32 {
            db.put(
                &WriteOptions::default(),
                &key(i),
                format!("r{round}-{i}").as_bytes(),
            )
            .expect("put");
        }
        db.compact_range(None, None).expect("compact");
        for i in 0..1500u32 {
            assert_eq!(
                db.get(&ReadOptions::default(), &key(i)).expect("get"),
                Some(format!("r{round}-{i}").into_bytes())
            );
        }
        db.close().expect("close");
    }
}

#[test]
fn second_open_is_locked_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let _db = Db::open(dir.path(), Options::default()).expect("open");
    let err = Db::open(dir.path(), Options::default()).expect_err("second open");
    assert_eq!(err.kind(), ErrorKind::Locked);
}
