//! The OPTIONS file records each open's options and is read back by the next open.
//!
//! What it protects: the file round-trips (what open wrote, `options_file::load`
//! reads back exactly, per-level vector included); a damaged file stops the open with
//! `Corruption` naming the file and line instead of being silently ignored; the
//! `Debug` text that older builds wrote is skipped and replaced by the parseable form.

mod common;

use common::{key, on};
use std::path::Path;
use strata::env::{write_file_atomic, FaultFs};
use strata::options_file::{self, FILE_NAME};
use strata::{Compression, ErrorKind, LevelOptions, Options, ReadOptions, WriteOptions};

const DIR: &str = "/db";

fn custom() -> Options {
    Options::default()
        .with_num_levels(5)
        .with_write_buffer_size(1 << 20)
        .with_levels(vec![
            LevelOptions::default(),
            LevelOptions::default().with_compression(Compression::Lz4),
        ])
}

#[test]
fn options_file_is_read_back_at_open() {
    let fs = FaultFs::new();
    let dir = Path::new(DIR);
    let db = on(&fs).open(DIR, custom()).expect("open");
    db.put(&WriteOptions::default(), &key(1), b"v")
        .expect("put");
    db.close().expect("close");
    let stored = options_file::load(&fs, dir)
        .expect("load")
        .expect("present");
    assert_eq!(stored.options, custom());

    // Damage: the open refuses, naming the file and the line.
    write_file_atomic(
        &fs,
        dir,
        FILE_NAME,
        b"[Version]\nstrata_options_version=1\n???\n",
    )
    .expect("write");
    let err = on(&fs).open(DIR, custom()).expect_err("damaged OPTIONS");
    assert_eq!(err.kind(), ErrorKind::Corruption, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("/db/OPTIONS") && msg.contains("line=`3`"),
        "{msg}"
    );

    // An older build's Debug text is skipped; the open rewrites it in the v1 form.
    write_file_atomic(&fs, dir, FILE_NAME, b"Options {\n    num_levels: 7,\n}\n").expect("write");
    let db = on(&fs)
        .open(DIR, Options::default())
        .expect("legacy OPTIONS is no obstacle");
    assert_eq!(
        db.get(&ReadOptions::default(), &key(1)).expect("get"),
        Some(b"v".to_vec())
    );
    db.close().expect("close");
    let stored = options_file::load(&fs, dir)
        .expect("load")
        .expect("present");
    assert_eq!(stored.options, Options::default());
}
