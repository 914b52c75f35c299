//! Tables against an in-memory model: random inserts, partial updates and deletes,
//! through flushes, compactions, snapshots and plain reopens (the catalog, not the
//! caller, gives the family its row operator), and the API's refusals.

use super::*;
use crate::options::{CfOptions, Options};
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

pub(super) fn schema() -> Schema {
    Schema::parse("id:u64,a:i32,b:i64?,c:bytes,d:fixed2?").unwrap()
}

fn opts() -> Options {
    Options::default()
        .with_write_buffer_size(8 << 10)
        .with_level0_file_num_compaction_trigger(2)
        .with_max_bytes_for_level_base(32 << 10)
        .with_target_file_size_base(8 << 10)
}

pub(super) fn random_value(rng: &mut rand::rngs::StdRng, column: usize) -> Value {
    match column {
        0 => Value::I32(rng.random_range(-1000..1000)),
        1 if rng.random_bool(0.2) => Value::Null,
        1 => Value::I64(rng.random()),
        2 => Value::Bytes(vec![b'v'; rng.random_range(0..40)]),
        _ if rng.random_bool(0.3) => Value::Null,
        _ => Value::Bytes(vec![rng.random(), rng.random()]),
    }
}

type Model = BTreeMap<u64, Vec<Value>>;

/// Every key's row (all columns) and a few projections equal the model's.
fn check(t: &Table<'_>, ro: &ReadOptions, model: &Model, keys: u64, when: &str) {
    for k in 0..keys {
        let want = model.get(&k);
        let got = t.get(ro, &Value::U64(k), &[0, 1, 2, 3]).unwrap();
        assert_eq!(got.as_ref(), want, "{when}: key {k}");
        let got = t.get(ro, &Value::U64(k), &[3, 1]).unwrap();
        let want = want.map(|r| vec![r[3].clone(), r[1].clone()]);
        assert_eq!(got, want, "{when}: key {k}, projection [3, 1]");
    }
    // Scans: whole, forward; bounded, both ways; with a projection.
    let rows = |scan: Scan| -> Vec<(Value, Vec<Value>)> { scan.map(Result::unwrap).collect() };
    let all = rows(t.scan(ro, (None, None), &[0, 1, 2, 3], false).unwrap());
    let want: Vec<_> = model
        .iter()
        .map(|(k, r)| (Value::U64(*k), r.clone()))
        .collect();
    assert_eq!(all, want, "{when}: full scan");
    let (lo, hi) = (Value::U64(100), Value::U64(200));
    let mut got = rows(t.scan(ro, (Some(&lo), Some(&hi)), &[2, 0], true).unwrap());
    got.reverse();
    let want: Vec<_> = model
        .range(100..=200)
        .map(|(k, r)| (Value::U64(*k), vec![r[2].clone(), r[0].clone()]))
        .collect();
    assert_eq!(got, want, "{when}: reverse scan of [100, 200]");
    let got = rows(t.scan(ro, (Some(&lo), None), &[], false).unwrap());
    assert_eq!(
        got.len(),
        model.range(100..).count(),
        "{when}: scan from 100"
    );
}

#[test]
fn tables_answer_as_a_model_through_flushes_compactions_snapshots_and_reopens() {
    const KEYS: u64 = 300;
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(31);
    let mut model = Model::new();
    let wo = WriteOptions::default();
    let ro = ReadOptions::default();
    let db = Db::open(dir.path(), opts().with_create_if_missing(true)).unwrap();
    let t = Table::create(&db, "t", schema(), Layout::row()).unwrap();
    let mut held = None;
    for step in 0..6000u32 {
        let k = rng.random_range(0..KEYS);
        match rng.random_range(0..10) {
            0..=3 => {
                let row: Vec<Value> = (0..4).map(|c| random_value(&mut rng, c)).collect();
                t.insert(&wo, &Value::U64(k), &row).unwrap();
                model.insert(k, row);
            }
            4..=7 => {
                let mut set: Vec<(usize, Value)> = Vec::new();
                for c in 0..4 {
                    if rng.random_bool(0.4) {
                        set.push((c, random_value(&mut rng, c)));
                    }
                }
                if set.is_empty() {
                    set.push((2, random_value(&mut rng, 2)));
                }
                t.update(&wo, &Value::U64(k), &set).unwrap();
                // SQL's UPDATE: a key with no row stays without one.
                if let Some(row) = model.get_mut(&k) {
                    for (c, v) in set {
                        row[c] = v;
                    }
                }
            }
            8 => {
                t.delete(&wo, &Value::U64(k)).unwrap();
                model.remove(&k);
            }
            _ => {
                let end = k + rng.random_range(1..8);
                t.delete_range(&wo, &Value::U64(k), &Value::U64(end))
                    .unwrap();
                model.retain(|key, _| !(k..end).contains(key));
            }
        }
        if step == 2500 {
            held = Some((db.snapshot(), model.clone()));
        }
        if step % 1500 == 700 {
            db.compact_range_cf(&t.cf, None, None).unwrap();
        }
    }
    db.wait_for_compactions().unwrap();
    assert!(
        t.cf.family.versions.current().num_files() > 0,
        "the workload stayed in memory"
    );
    check(&t, &ro, &model, KEYS, "live");
    let (snap, old) = held.unwrap();
    let at = ReadOptions::default().with_snapshot(snap);
    check(&t, &at, &old, KEYS, "snapshot");
    drop(at);

    drop(t);
    db.close().unwrap();
    // A plain open: the catalog gives the family its operator.
    let db = Db::open(dir.path(), opts()).unwrap();
    let t = Table::open(&db, "t").unwrap();
    assert_eq!(t.schema(), &schema());
    assert_eq!(t.layout(), &Layout::row());
    check(&t, &ro, &model, KEYS, "reopened");
    db.compact_range_cf(&t.cf, None, None).unwrap();
    check(&t, &ro, &model, KEYS, "compacted after reopen");
}

#[test]
fn an_update_without_a_row_makes_none() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts().with_create_if_missing(true)).unwrap();
    let t = Table::create(&db, "t", schema(), Layout::row()).unwrap();
    let (wo, ro) = (WriteOptions::default(), ReadOptions::default());
    let k = Value::U64(7);
    t.update(&wo, &k, &[(0, Value::I32(1))]).unwrap();
    assert_eq!(t.get(&ro, &k, &[0]).unwrap(), None);
    db.flush_cf(&t.cf).unwrap();
    db.compact_range_cf(&t.cf, None, None).unwrap();
    assert_eq!(t.get(&ro, &k, &[0]).unwrap(), None);
    let row = vec![
        Value::I32(2),
        Value::Null,
        Value::Bytes(b"x".to_vec()),
        Value::Null,
    ];
    t.insert(&wo, &k, &row).unwrap();
    t.update(&wo, &k, &[(0, Value::I32(3))]).unwrap();
    assert_eq!(
        t.get(&ro, &k, &[0, 2]).unwrap(),
        Some(vec![Value::I32(3), Value::Bytes(b"x".to_vec())])
    );
    t.delete(&wo, &k).unwrap();
    t.update(&wo, &k, &[(0, Value::I32(4))]).unwrap();
    assert_eq!(t.get(&ro, &k, &[0]).unwrap(), None);
}

#[test]
fn bad_input_is_refused_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts().with_create_if_missing(true)).unwrap();
    let s = schema();
    // A layout for another width is refused by name, and creates nothing.
    let groups = Layout::parse("row;2,3", 5).unwrap();
    let err = Table::create(&db, "t", s.clone(), groups).unwrap_err();
    assert!(
        err.to_string().contains("column 4, the table has 4"),
        "{err}"
    );
    assert!(db.cf("t").is_none(), "nothing created");
    let t = Table::create(&db, "t", s.clone(), Layout::row()).unwrap();
    let err = Table::create(&db, "t", s.clone(), Layout::row()).unwrap_err();
    assert!(err.to_string().contains("exists"), "{err}");
    let (wo, ro) = (WriteOptions::default(), ReadOptions::default());
    let k = Value::U64(1);
    let bad_rows: Vec<Vec<Value>> = vec![
        vec![Value::I32(1)],
        vec![Value::Null, Value::Null, Value::Bytes(vec![]), Value::Null],
        vec![
            Value::I64(1),
            Value::Null,
            Value::Bytes(vec![]),
            Value::Null,
        ],
        vec![
            Value::I32(1),
            Value::Null,
            Value::Bytes(vec![]),
            Value::Bytes(vec![1]),
        ],
    ];
    for row in bad_rows {
        let err = t.insert(&wo, &k, &row).unwrap_err();
        assert_eq!(
            err.kind(),
            crate::ErrorKind::InvalidArgument,
            "{row:?}: {err}"
        );
    }
    for set in [
        vec![],
        vec![(9, Value::I32(1))],
        vec![(0, Value::I32(1)), (0, Value::I32(2))],
    ] {
        let err = t.update(&wo, &k, &set).unwrap_err();
        assert_eq!(
            err.kind(),
            crate::ErrorKind::InvalidArgument,
            "{set:?}: {err}"
        );
    }
    let err = t.get(&ro, &Value::Bytes(b"k".to_vec()), &[0]).unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument, "{err}");
    // A raw operand the row operator cannot read is refused before it is written.
    let err = db
        .merge_cf(&wo, &t.cf, &1u64.to_be_bytes(), b"junk")
        .unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument, "{err}");
    assert_eq!(t.get(&ro, &k, &[0]).unwrap(), None);
    // A family that is not a table.
    db.create_cf("plain", CfOptions::default()).unwrap();
    let err = Table::open(&db, "plain").unwrap_err();
    assert!(err.to_string().contains("not a table"), "{err}");
    assert!(Table::open(&db, "nope").is_err());
    // Dropped: gone for good.
    t.drop_table().unwrap();
    assert!(Table::open(&db, "t").is_err());
}

/// The row operator a table's kind installs is the kind's, never recorded as the
/// family's: opened with a list that gives the family another operator (as `strata`'s
/// engine lists every family with its flags), the table still reads with its own,
/// `OPTIONS` records no operator for it, and a later open listing yet another one is
/// not refused.
#[test]
fn a_table_family_records_no_operator() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let t = Table::create(&db, "t", schema(), Layout::parse("row", 4).unwrap()).unwrap();
    let row = vec![
        Value::I32(1),
        Value::Null,
        Value::Bytes(b"x".to_vec()),
        Value::Null,
    ];
    t.insert(&WriteOptions::default(), &Value::U64(7), &row)
        .unwrap();
    drop(t);
    db.close().unwrap();
    for op in [
        Arc::new(crate::merge::U64Add) as Arc<dyn crate::MergeOperator>,
        Arc::new(crate::merge::Max),
    ] {
        let listed = CfOptions::default().with_merge_operator(Some(op));
        let db = Db::open_cf(dir.path(), opts(), &[("t", listed)]).unwrap();
        let t = Table::open(&db, "t").unwrap();
        let got = t.get(&ReadOptions::default(), &Value::U64(7), &[0, 1, 2, 3]);
        assert_eq!(got.unwrap(), Some(row.clone()));
        drop(t);
        db.close().unwrap();
        let stored = crate::options_file::load(&crate::env::PosixFs, dir.path())
            .unwrap()
            .unwrap();
        let family = stored.families.get("t").unwrap();
        assert_eq!(family.merge_operator, None);
    }
}
