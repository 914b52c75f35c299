//! Parts and the row operator: frozen bytes, strict decoding, and the merge laws the
//! engine relies on (the operator contract of `merge`): a partial merge is equivalent
//! to its operands under every base, and full merges resolve rows as SQL would.

use super::*;
use crate::coding::fixture_hex::hex;
use crate::merge::MergeOperator;
use crate::table::operator::RowOperator;
use crate::table::schema::{Column, KeyType};
use proptest::prelude::*;
use std::sync::Arc;

fn schema() -> Schema {
    Schema::parse("id:u64,a:i32,b:i64?,c:f64,d:fixed3,e:bytes?").unwrap()
}

/// An insert of every column and an update of two, pinned byte for byte.
#[test]
fn the_part_format_is_frozen() {
    let s = schema();
    let insert = Part {
        insert: true,
        cells: vec![
            (0, Value::I32(-2)),
            (1, Value::Null),
            (2, Value::F64(1.5)),
            (3, Value::Bytes(b"xyz".to_vec())),
            (4, Value::Bytes(b"hi".to_vec())),
        ],
    };
    // version 1, INSERT, 5 cells; a: -2; b: null; c: 1.5; d: "xyz"; e: len 2 "hi".
    const INSERT_V1: &str = concat!(
        "010105",
        "0000feffffff",
        "0101",
        "0200000000000000f83f",
        "030078797a",
        "0400026869"
    );
    let enc = insert.encode(&s);
    assert_eq!(hex(&enc), INSERT_V1, "encoding changed");
    assert_eq!(Part::decode(&s, &enc).unwrap(), insert);
    let update = Part {
        insert: false,
        cells: vec![(1, Value::I64(7)), (4, Value::Null)],
    };
    let enc = update.encode(&s);
    // version 1, no flag, 2 cells; b: 7; e: null.
    assert_eq!(hex(&enc), "010002010007000000000000000401");
    assert_eq!(Part::decode(&s, &enc).unwrap(), update);
}

#[test]
fn decoding_refuses_what_the_schema_does_not_allow() {
    let s = schema();
    let ok = Part {
        insert: false,
        cells: vec![(0, Value::I32(1))],
    }
    .encode(&s);
    let mut cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![], "empty"),
        (vec![2, 0, 0], "version 2"),
        (vec![1, 2, 0], "flags"),
        (vec![1, 0, 1, 9, 0], "column 9"),
        (vec![1, 0, 1, 0, 1], "null in column `a`"),
        (vec![1, 0, 2, 1, 1, 1, 1], "out of order"),
        (vec![1, 0, 1, 0, 0, 1], "truncated i32"),
    ];
    let mut trailing = ok.clone();
    trailing.push(0);
    cases.push((trailing, "after the last cell"));
    for (bytes, what) in cases {
        let err = Part::decode(&s, &bytes).unwrap_err();
        assert!(
            err.contains(what.split(' ').next().unwrap()),
            "{what}: {err}"
        );
    }
    // Every prefix of a valid part is refused, never a panic.
    for n in 0..ok.len() {
        assert!(Part::decode(&s, &ok[..n]).is_err());
    }
}

fn value_for(ty: ColumnType, nullable: bool) -> BoxedStrategy<Value> {
    let v = match ty {
        ColumnType::I32 => any::<i32>().prop_map(Value::I32).boxed(),
        ColumnType::I64 => any::<i64>().prop_map(Value::I64).boxed(),
        ColumnType::F64 => (-1e6f64..1e6).prop_map(Value::F64).boxed(),
        ColumnType::Fixed(n) => proptest::collection::vec(any::<u8>(), usize::from(n))
            .prop_map(Value::Bytes)
            .boxed(),
        ColumnType::Bytes => proptest::collection::vec(any::<u8>(), 0..5)
            .prop_map(Value::Bytes)
            .boxed(),
    };
    if nullable {
        prop_oneof![1 => Just(Value::Null), 3 => v].boxed()
    } else {
        v
    }
}

/// A random part of `schema`: an insert (every column) or an update of a subset.
fn part(schema: &Schema) -> BoxedStrategy<Part> {
    let cells: Vec<BoxedStrategy<Option<Value>>> = schema
        .columns()
        .iter()
        .map(|c| proptest::option::of(value_for(c.ty, c.nullable)).boxed())
        .collect();
    let full: Vec<BoxedStrategy<Value>> = schema
        .columns()
        .iter()
        .map(|c| value_for(c.ty, c.nullable))
        .collect();
    prop_oneof![
        full.prop_map(|vals| Part {
            insert: true,
            cells: (0u32..).zip(vals).collect(),
        }),
        cells.prop_map(|vals| Part {
            insert: false,
            cells: (0u32..)
                .zip(vals)
                .filter_map(|(c, v)| v.map(|v| (c, v)))
                .collect(),
        }),
    ]
    .boxed()
}

/// The row a history resolves to, by the definition: the newest insert's values, with
/// every later update's cells over it; no row without an insert.
fn model(history: &[Part], columns: usize) -> Option<Vec<Value>> {
    let start = history.iter().rposition(|p| p.insert)?;
    let mut row = history
        .get(start)?
        .project(&(0..columns).collect::<Vec<_>>());
    for p in history.iter().skip(start + 1) {
        for (c, v) in &p.cells {
            *row.get_mut(*c as usize).unwrap() = v.clone();
        }
    }
    Some(row)
}

proptest! {
    /// Encode/decode round-trips; full merges resolve to the model's row; a partial
    /// merge of any consecutive operands resolves identically under every base.
    #[test]
    fn the_row_operator_resolves_histories_as_the_model(
        history in proptest::collection::vec(part(&schema()), 1..6),
        base in proptest::option::of(part(&schema())),
        cut in (0usize..6, 0usize..6),
    ) {
        let s = Arc::new(schema());
        let op = RowOperator::new(Arc::clone(&s));
        let enc: Vec<Vec<u8>> = history.iter().map(|p| p.encode(&s)).collect();
        for (p, e) in history.iter().zip(&enc) {
            prop_assert_eq!(&Part::decode(&s, e).unwrap(), p);
            prop_assert!(op.check_operand(b"k", e).is_ok());
        }
        // A base that is a `Put` holds an insert (tables write whole rows as `Put`s).
        let base = base.filter(|b| b.insert);
        let base_enc = base.as_ref().map(|b| b.encode(&s));
        let ops: Vec<&[u8]> = enc.iter().map(Vec::as_slice).collect();
        let full = op.full_merge(b"k", base_enc.as_deref(), &ops).unwrap();
        let resolved = Part::decode(&s, &full).unwrap();
        let mut whole: Vec<Part> = base.iter().cloned().collect();
        whole.extend(history.iter().cloned());
        let columns = s.columns().len();
        let expect = model(&whole, columns);
        prop_assert_eq!(
            resolved.exists().then(|| resolved.project(&(0..columns).collect::<Vec<_>>())),
            expect
        );
        if !resolved.exists() {
            prop_assert_eq!(resolved, Part::ghost());
        }
        // Partial merge of ops[i..j] in place of those operands.
        let (i, j) = (cut.0.min(ops.len()), cut.1.min(ops.len()));
        let (i, j) = (i.min(j), i.max(j));
        if j - i >= 2 {
            let p = op.partial_merge(b"k", &ops[i..j]).unwrap();
            let mut folded: Vec<&[u8]> = ops[..i].to_vec();
            folded.push(&p);
            folded.extend_from_slice(&ops[j..]);
            prop_assert_eq!(op.full_merge(b"k", base_enc.as_deref(), &folded).unwrap(), full);
        }
    }
}

#[test]
fn a_ghost_stays_a_ghost_until_an_insert() {
    let s = Arc::new(
        Schema::new(
            "k",
            KeyType::U64,
            vec![Column {
                name: "a".into(),
                ty: ColumnType::I32,
                nullable: false,
            }],
        )
        .unwrap(),
    );
    let op = RowOperator::new(Arc::clone(&s));
    let update = Part {
        insert: false,
        cells: vec![(0, Value::I32(5))],
    }
    .encode(&s);
    let ghost = op.full_merge(b"k", None, &[&update]).unwrap();
    assert_eq!(Part::decode(&s, &ghost).unwrap(), Part::ghost());
    let again = op.full_merge(b"k", Some(&ghost), &[&update]).unwrap();
    assert_eq!(again, ghost);
    let insert = Part {
        insert: true,
        cells: vec![(0, Value::I32(1))],
    }
    .encode(&s);
    let row = op
        .full_merge(b"k", Some(&ghost), &[&insert, &update])
        .unwrap();
    assert_eq!(
        Part::decode(&s, &row).unwrap().project(&[0]),
        vec![Value::I32(5)]
    );
}
