//! Column-family options are recorded in `OPTIONS` (a `[CFOptions]` section per
//! family, issue 34 item 9) and given back at open.
//!
//! What it protects: a family reopened without its `CfOptions` runs with the ones it
//! was created with (merge operator included), not the database's; a different
//! operator is refused naming the family; an application's operator missing at open
//! keeps its recorded name and refuses new operands; a dropped family's section goes.

mod common;

use common::{on, AppendNoPartial};
use std::path::Path;
use std::sync::Arc;
use strata::env::{FaultFs, FileSystem};
use strata::merge::U64Add;
use strata::{CfOptions, ErrorKind, Options, ReadOptions, WriteOptions};

const DIR: &str = "/db";

fn options_text(fs: &FaultFs) -> String {
    let path = Path::new(DIR).join("OPTIONS");
    let file = fs.open_random(&path).expect("open OPTIONS");
    let buf = file.read_vec(0, file.size() as usize).expect("read");
    String::from_utf8(buf).expect("utf-8")
}

/// The text of family `name`'s `[CFOptions]` section, if the file has one.
fn section(fs: &FaultFs, name: &str) -> Option<String> {
    let text = options_text(fs);
    let body = text.split(&format!("[CFOptions \"{name}\"]\n")).nth(1)?;
    Some(body.split("\n[").next().unwrap_or(body).to_string())
}

fn u64_operand(n: u64) -> Vec<u8> {
    n.to_le_bytes().to_vec()
}

#[test]
fn a_family_reopened_without_its_options_gets_the_recorded_ones() {
    let fs = FaultFs::new();
    let db = on(&fs).open(DIR, Options::default()).expect("create");
    let counters = CfOptions::default()
        .with_merge_operator(Some(Arc::new(U64Add)))
        .with_write_buffer_size(64 << 10)
        .with_num_levels(5);
    let cf = db.create_cf("counters", counters).expect("create_cf");
    let w = WriteOptions::default();
    for n in 1..=10 {
        db.merge_cf(&w, &cf, b"hits", &u64_operand(n))
            .expect("merge");
    }
    db.flush_cf(&cf).expect("flush");
    db.merge_cf(&w, &cf, b"hits", &u64_operand(100))
        .expect("merge");
    drop(cf);
    db.close().expect("close");
    let recorded = section(&fs, "counters").expect("recorded at creation");
    for line in [
        "merge_operator=strata.u64_add",
        "write_buffer_size=65536",
        "num_levels=5",
    ] {
        assert!(recorded.contains(line), "{line} in {recorded}");
    }

    // Opened without listing it (and with database options that differ): the family
    // merges with its operator and keeps its options, which the new file records.
    let db_opts = Options::default()
        .with_write_buffer_size(1 << 20)
        .with_num_levels(7);
    let db = on(&fs).open(DIR, db_opts.clone()).expect("reopen");
    let cf = db.cf("counters").expect("family");
    db.merge_cf(&WriteOptions::default(), &cf, b"hits", &u64_operand(1000))
        .expect("merge with the recorded operator");
    let got = db
        .get_cf(&ReadOptions::default(), &cf, b"hits")
        .expect("get");
    assert_eq!(got, Some(u64_operand(55 + 100 + 1000)));
    drop(cf);
    db.close().expect("close");
    assert_eq!(section(&fs, "counters"), Some(recorded.clone()));

    // Listed with another operator: refused, naming the family and the option.
    let max = CfOptions::default().with_merge_operator(Some(Arc::new(strata::merge::Max)));
    let err = on(&fs)
        .open_cf(DIR, db_opts.clone(), &[("counters", max)])
        .expect_err("another operator");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("column family `counters`") && msg.contains("merge_operator=`strata.max`"),
        "{msg}"
    );
    // Listed without an operator but with other options: those apply, the operator is
    // the recorded one.
    let listed = CfOptions::default().with_write_buffer_size(32 << 10);
    let db = on(&fs)
        .open_cf(DIR, db_opts, &[("counters", listed)])
        .expect("listed without an operator");
    let cf = db.cf("counters").expect("family");
    let got = db
        .get_cf(&ReadOptions::default(), &cf, b"hits")
        .expect("get");
    assert_eq!(got, Some(u64_operand(1155)));
    drop(cf);
    db.close().expect("close");
    let now = section(&fs, "counters").expect("section");
    assert!(now.contains("write_buffer_size=32768"), "{now}");
    assert!(now.contains("merge_operator=strata.u64_add"), "{now}");
}

#[test]
fn an_application_operator_missing_at_open_keeps_its_name_and_refuses_operands() {
    let fs = FaultFs::new();
    let db = on(&fs).open(DIR, Options::default()).expect("create");
    let app = CfOptions::default().with_merge_operator(Some(Arc::new(AppendNoPartial)));
    let cf = db.create_cf("log", app.clone()).expect("create_cf");
    let w = WriteOptions::default();
    db.put_cf(&w, &cf, b"k", b"a").expect("put");
    db.merge_cf(&w, &cf, b"k", b"b").expect("merge");
    db.put_cf(&w, &cf, b"plain", b"v").expect("put");
    drop(cf);
    db.close().expect("close");

    let db = on(&fs)
        .open(DIR, Options::default())
        .expect("reopen without it");
    let cf = db.cf("log").expect("family");
    let err = db
        .merge_cf(&WriteOptions::default(), &cf, b"k", b"c")
        .expect_err("no operator to check the operand");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(err.to_string().contains("test.append-no-partial"), "{err}");
    let err = db
        .get_cf(&ReadOptions::default(), &cf, b"k")
        .expect_err("operands without their operator");
    assert!(err.to_string().contains("test.append-no-partial"), "{err}");
    assert_eq!(
        db.get_cf(&ReadOptions::default(), &cf, b"plain")
            .expect("get"),
        Some(b"v".to_vec())
    );
    drop(cf);
    db.close().expect("close");
    let recorded = section(&fs, "log").expect("section");
    assert!(
        recorded.contains("merge_operator=test.append-no-partial"),
        "{recorded}"
    );

    let db = on(&fs)
        .open_cf(DIR, Options::default(), &[("log", app)])
        .expect("reopen with it");
    let cf = db.cf("log").expect("family");
    let got = db.get_cf(&ReadOptions::default(), &cf, b"k").expect("get");
    assert_eq!(got, Some(b"a,b".to_vec()));
    drop(cf);
    db.close().expect("close");
}

#[test]
fn a_dropped_family_leaves_the_file_and_a_new_one_of_its_name_records_its_own() {
    let fs = FaultFs::new();
    let db = on(&fs).open(DIR, Options::default()).expect("create");
    let first = CfOptions::default().with_merge_operator(Some(Arc::new(U64Add)));
    let cf = db.create_cf("t", first).expect("create_cf");
    assert!(section(&fs, "t").is_some());
    let err = db
        .create_cf("t", CfOptions::default())
        .expect_err("taken name");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(
        section(&fs, "t").expect("kept").contains("strata.u64_add"),
        "a refused creation must not overwrite the family's section"
    );
    db.drop_cf(&cf).expect("drop");
    assert_eq!(section(&fs, "t"), None);
    let cf = db
        .create_cf("t", CfOptions::default().with_num_levels(3))
        .expect("create again");
    let now = section(&fs, "t").expect("recorded");
    assert!(
        now.contains("num_levels=3") && !now.contains("merge_operator"),
        "{now}"
    );
    drop(cf);
    db.close().expect("close");
    let db = on(&fs).open(DIR, Options::default()).expect("reopen");
    db.close().expect("close");
    assert_eq!(section(&fs, "t"), Some(now));
}
