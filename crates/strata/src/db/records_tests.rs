//! Family records (`DbInner::set_records`; `version::edit`, format version 4): set in
//! one MANIFEST edit, kept by every later version of the family beside its files,
//! carried by MANIFEST roll-overs, recovery and checkpoints, and gone with the family.

use super::*;
use crate::options::{CfOptions, Options, WriteOptions};

fn record(cf: &CfHandle, key: u32) -> Option<Vec<u8>> {
    cf.family.versions.current().record(key).map(<[u8]>::to_vec)
}

#[test]
fn records_are_durable_move_with_their_family_and_go_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = tempfile::tempdir().unwrap();
    let checkpoint = checkpoint.path().join("cp");
    // A small MANIFEST limit: the writes below roll it over, and each new MANIFEST
    // starts with the snapshot edit that must carry the records.
    let opts = || Options::default().with_max_manifest_file_size(1024);
    let db = Db::open(dir.path(), opts()).unwrap();
    let cf = db.create_cf("t", CfOptions::default()).unwrap();
    db.inner
        .set_records(
            &cf.family,
            vec![(1001, b"schema v1".to_vec()), (1002, b"layout".to_vec())],
        )
        .unwrap();
    assert_eq!(record(&cf, 1001).as_deref(), Some(&b"schema v1"[..]));
    // Files come and go beside the records; a later edit replaces one key only.
    let wo = WriteOptions::default();
    for round in 0..20u32 {
        for i in 0..50u32 {
            db.put_cf(
                &wo,
                &cf,
                format!("k{i:03}").as_bytes(),
                &round.to_le_bytes(),
            )
            .unwrap();
        }
        db.flush_cf(&cf).unwrap();
    }
    db.wait_for_compactions().unwrap();
    db.inner
        .set_records(&cf.family, vec![(1002, b"layout 2".to_vec())])
        .unwrap();
    assert_eq!(record(&cf, 1001).as_deref(), Some(&b"schema v1"[..]));
    assert_eq!(record(&cf, 1002).as_deref(), Some(&b"layout 2"[..]));
    assert_eq!(
        db.inner.default.versions.current().record(1001),
        None,
        "the family's own"
    );
    // A key twice in one edit is refused before anything is written (a MANIFEST
    // holding it would not decode), by the call and by `Version::apply`.
    let twice = vec![(1004, b"a".to_vec()), (1004, b"b".to_vec())];
    let err = db.inner.set_records(&cf.family, twice.clone());
    assert!(matches!(err, Err(Error::InvalidArgument(_))), "{err:?}");
    let edit = crate::version::VersionEdit {
        records: twice,
        ..Default::default()
    };
    let err = cf
        .family
        .versions
        .current()
        .apply(&edit)
        .expect_err("twice");
    assert!(err.contains("set twice"), "{err}");
    assert_eq!(record(&cf, 1004), None);
    let huge = vec![(1005, vec![0; crate::limits::MAX_VALUE_LEN + 1])];
    let err = db.inner.set_records(&cf.family, huge);
    assert!(matches!(err, Err(Error::InvalidArgument(_))), "{err:?}");
    assert_eq!(record(&cf, 1005), None);
    db.checkpoint(&checkpoint).unwrap();
    drop(cf);
    db.close().unwrap();

    for path in [dir.path(), checkpoint.as_path()] {
        let db = Db::open(path, opts()).unwrap();
        let cf = db.cf("t").expect("family");
        assert_eq!(
            record(&cf, 1001).as_deref(),
            Some(&b"schema v1"[..]),
            "{path:?}"
        );
        assert_eq!(
            record(&cf, 1002).as_deref(),
            Some(&b"layout 2"[..]),
            "{path:?}"
        );
        let got = db.get_cf(&ReadOptions::default(), &cf, b"k007").unwrap();
        assert_eq!(got, Some(19u32.to_le_bytes().to_vec()));
        db.close().unwrap();
    }

    let db = Db::open(dir.path(), opts()).unwrap();
    let cf = db.cf("t").expect("family");
    db.drop_cf(&cf).unwrap();
    let err = db.inner.set_records(&cf.family, vec![(3, Vec::new())]);
    assert!(matches!(err, Err(Error::InvalidArgument(_))), "{err:?}");
    db.close().unwrap();
    let db = Db::open_read_only(dir.path(), opts()).unwrap();
    let err = db
        .inner
        .set_records(&db.inner.default, vec![(3, Vec::new())]);
    assert!(
        matches!(err, Err(Error::InvalidArgument(_))),
        "read-only: {err:?}"
    );
}
