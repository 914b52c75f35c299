//! Schemas: the `--schema` form, the frozen record, strict decoding.

use super::*;

#[test]
fn the_schema_form_parses_and_the_record_is_frozen() {
    let s = Schema::parse("id:u64, a:i32, b:i64?, c:f64, d:fixed3, e:bytes?").unwrap();
    assert_eq!(s.key_name(), "id");
    assert_eq!(s.key_type(), KeyType::U64);
    let types: Vec<_> = s.columns().iter().map(|c| (c.ty, c.nullable)).collect();
    assert_eq!(
        types,
        vec![
            (ColumnType::I32, false),
            (ColumnType::I64, true),
            (ColumnType::F64, false),
            (ColumnType::Fixed(3), false),
            (ColumnType::Bytes, true),
        ]
    );
    assert_eq!(s.column("d").unwrap(), 3);
    assert!(s.column("id").is_err(), "the key is not a column");
    // version 1, key u64 "id", 5 columns: a i32, b i64 nullable, c f64, d fixed 3,
    // e bytes nullable.
    const RECORD_V1: &str = concat!(
        "0100", "026964", "05", "016100", "00", "016201", "01", "016302", "00", "01640303", "00",
        "016504", "01"
    );
    let enc = s.encode();
    let hex: String = enc.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, RECORD_V1, "encoding changed");
    assert_eq!(Schema::decode(&enc).unwrap(), s);
    for n in 0..enc.len() {
        assert!(Schema::decode(&enc[..n]).is_err(), "prefix {n}");
    }
    let mut trailing = enc.clone();
    trailing.push(0);
    assert!(Schema::decode(&trailing).is_err());
}

#[test]
fn bad_schemas_are_refused_by_name() {
    for (text, what) in [
        ("id:u64", "at least one column"),
        ("id:i32,a:i32", "a key is"),
        ("id:u64,a:int", "a column is"),
        ("id:u64,a", "no `:type`"),
        ("id:u64,a:i32,a:i64", "used twice"),
        ("id:u64,id:i32", "used twice"),
        ("id:u64,a:fixed0", "width of 0"),
        ("id:u64,:i32", "empty"),
    ] {
        let err = Schema::parse(text).unwrap_err();
        assert!(err.to_string().contains(what), "{text}: {err}");
    }
}

#[test]
fn keys_keep_their_order_and_values_their_column() {
    let s = Schema::parse("id:u64,a:fixed2?").unwrap();
    let (lo, hi) = (
        s.encode_key(&Value::U64(9)).unwrap(),
        s.encode_key(&Value::U64(256)).unwrap(),
    );
    assert!(lo < hi, "u64 keys sort numerically as bytes");
    assert_eq!(s.decode_key(&hi).unwrap(), Value::U64(256));
    assert!(s.encode_key(&Value::Bytes(b"x".to_vec())).is_err());
    assert!(s.check_value(0, &Value::Bytes(vec![1, 2])).is_ok());
    assert!(s.check_value(0, &Value::Null).is_ok());
    assert!(s.check_value(0, &Value::Bytes(vec![1])).is_err());
    assert!(s.check_value(1, &Value::Null).is_err());
}

#[test]
fn keys_values_and_projections_parse_from_text() {
    let s = Schema::parse("id:u64,a:i32,b:i64?,c:f64,d:fixed2,e:bytes?").unwrap();
    assert_eq!(s.parse_key("42").unwrap(), Value::U64(42));
    assert!(s
        .parse_key("x")
        .unwrap_err()
        .to_string()
        .contains("key `id`"));
    assert_eq!(s.parse_value(0, "-7").unwrap(), Value::I32(-7));
    assert_eq!(s.parse_value(1, "NULL").unwrap(), Value::Null);
    assert_eq!(s.parse_value(2, "2.5").unwrap(), Value::F64(2.5));
    assert_eq!(
        s.parse_value(3, "xy").unwrap(),
        Value::Bytes(b"xy".to_vec())
    );
    for (c, text) in [(0, "3000000000"), (0, "NULL"), (3, "xyz"), (2, "one")] {
        let err = s.parse_value(c, text).unwrap_err().to_string();
        assert!(err.contains(&s.columns()[c].name), "{c} {text}: {err}");
    }
    assert_eq!(s.projection("b..d").unwrap(), vec![1, 2, 3]);
    assert_eq!(s.projection("e, a").unwrap(), vec![4, 0]);
    assert!(s.projection("d..b").is_err());
    assert!(s.projection("zz").unwrap_err().to_string().contains("zz"));
}

/// Every row a schema admits fits in one value: fields of fixed size are counted at
/// their largest, and what is left of the value limit is shared by the bytes columns,
/// so parts written one column at a time never unite into a row that cannot be read.
#[test]
fn a_whole_row_always_fits_in_one_value() {
    let limit = crate::limits::MAX_VALUE_LEN;
    let s = Schema::parse("id:u64,a:i32,b:bytes,c:bytes?,d:fixed10").unwrap();
    // 7 + (6 + 4) + 2 × (6 + 5) + (6 + 10) of fixed encoding; two bytes columns share
    // the rest.
    assert_eq!(s.bytes_limit(), (limit - 55) / 2);
    let at = Value::Bytes(vec![0; s.bytes_limit()]);
    assert!(s.check_value(1, &at).is_ok());
    let over = Value::Bytes(vec![0; s.bytes_limit() + 1]);
    let err = s.check_value(2, &over).unwrap_err().to_string();
    assert!(err.contains("column `c`") && err.contains("limit"), "{err}");
    // Fixed columns alone over the limit: the schema is refused.
    let wide: Vec<String> = (0..3000).map(|i| format!("f{i}:fixed65535")).collect();
    let err = Schema::parse(&format!("id:u64,{}", wide.join(","))).unwrap_err();
    assert!(err.to_string().contains("over the value limit"), "{err}");
    // No bytes column: nothing to share.
    assert!(Schema::parse("id:u64,a:i32").is_ok());
}
