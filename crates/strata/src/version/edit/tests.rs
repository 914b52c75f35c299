//! Tests of the version-edit encoding: frozen fixture, round trips, hostile input.

use super::*;
use crate::coding::fixture_hex::{hex, unhex};
use crate::key::{make_internal_key, user_key, ValueKind};
use proptest::prelude::*;

fn file(number: u64, kind: FileKind) -> FileMetaData {
    FileMetaData {
        number,
        path_id: 1,
        size: 4096,
        smallest: make_internal_key(b"apple", 10, ValueKind::Put),
        largest: make_internal_key(b"pear", 3, ValueKind::Delete),
        smallest_seqno: 3,
        largest_seqno: 10,
        num_entries: 100,
        num_deletions: 7,
        column_group: 2,
        kind,
        num_range_deletions: 0,
        creation_time: 0,
    }
}

/// The edit pinned by [`FIXTURE_V1`].
fn fixture_edit() -> VersionEdit {
    VersionEdit {
        log_number: Some(7),
        next_file_number: Some(300),
        last_sequence: Some(1 << 40),
        deleted_files: vec![(2, 300), (0, 5)],
        new_files: vec![
            (1, file(12, FileKind::Real)),
            (
                3,
                file(
                    13,
                    FileKind::Virtual {
                        slices: whole_range_slices(&[9, 130], b"apple", b"pear", 4096),
                    },
                ),
            ),
        ],
        ..Default::default()
    }
}

/// Format version 1 encoding of [`fixture_edit`]. Frozen: never edit this constant; a
/// format change adds a new fixture instead.
/// Spaces separate fields for the reader and are ignored.
const FIXTURE_V1: &str = concat!(
    "01 07 02 ac02 03 808080808020 04 02 ac02 04 00 05",
    "05 01 36 0101 0c 0201 01 0302 8020 040d 6170706c65 010a000000000000",
    "050c 70656172 0003000000000000 0601 03 0701 0a 0801 64 0901 07 0a01 02",
    "05 03 3c 0101 0d 0201 01 0302 8020 040d 6170706c65 010a000000000000",
    "050c 70656172 0003000000000000 0601 03 0701 0a 0801 64 0901 07 0a01 02",
    "0b04 02 09 8201",
);

#[test]
fn frozen_fixture_v1() {
    let mut enc = Vec::new();
    fixture_edit().encode(&mut enc);
    assert_eq!(enc, unhex(FIXTURE_V1), "encoding changed: {}", hex(&enc));
    let bytes = unhex(FIXTURE_V1);
    assert_eq!(VersionEdit::decode(&bytes), Ok(fixture_edit()));
}

#[test]
fn worked_example_from_module_docs() {
    let mut enc = Vec::new();
    VersionEdit {
        log_number: Some(7),
        deleted_files: vec![(2, 300)],
        ..Default::default()
    }
    .encode(&mut enc);
    assert_eq!(enc, [0x01, 0x07, 0x04, 0x02, 0xac, 0x02]);
}

#[test]
fn empty_edit_is_empty_bytes() {
    let mut enc = Vec::new();
    VersionEdit::default().encode(&mut enc);
    assert!(enc.is_empty());
    assert_eq!(VersionEdit::decode(&[]), Ok(VersionEdit::default()));
}

#[test]
fn rejects_tag_zero_unknown_tags_and_repeats() {
    assert!(VersionEdit::decode(&[0]).is_err());
    assert!(VersionEdit::decode(&[0x3f, 0]).is_err());
    assert!(VersionEdit::decode(&[1, 1, 1, 2]).is_err());
}

#[test]
fn skips_safe_to_ignore_tags_and_sub_tags() {
    let mut enc = Vec::new();
    fixture_edit().encode(&mut enc);
    // A future top-level field marked safe to ignore.
    put_varint64(&mut enc, TAG_SAFE_TO_IGNORE | 9);
    put_length_prefixed(&mut enc, b"future");
    assert_eq!(VersionEdit::decode(&enc), Ok(fixture_edit()));

    // A future new-file sub-field marked safe to ignore, and one that is not.
    let f = file(44, FileKind::Real);
    for (sub_tag, ok) in [(SUB_TAG_SAFE_TO_IGNORE | 1, true), (14, false)] {
        let mut body = Vec::new();
        encode_new_file(&mut body, &f);
        put_varint32(&mut body, sub_tag);
        put_length_prefixed(&mut body, b"xyz");
        let mut enc = Vec::new();
        put_varint64(&mut enc, tag::NEW_FILE);
        put_varint32(&mut enc, 4);
        put_length_prefixed(&mut enc, &body);
        let got = VersionEdit::decode(&enc);
        if ok {
            assert_eq!(got.map(|e| e.new_files), Ok(vec![(4, f.clone())]));
        } else {
            assert_eq!(got, Err("unknown new_file sub-tag"));
        }
    }
}

#[test]
fn rejects_new_file_missing_a_field_or_with_a_bad_key() {
    let f = file(44, FileKind::Real);
    let mut body = Vec::new();
    encode_new_file(&mut body, &f);
    // Drop the last sub-field (column_group: tag 10, len 1, value 2).
    let short = &body[..body.len() - 3];
    let mut enc = Vec::new();
    put_varint64(&mut enc, tag::NEW_FILE);
    put_varint32(&mut enc, 1);
    put_length_prefixed(&mut enc, short);
    assert_eq!(
        VersionEdit::decode(&enc),
        Err("new_file lacks column_group")
    );

    let mut bad = f.clone();
    bad.smallest = b"short".to_vec();
    let mut enc = Vec::new();
    VersionEdit {
        new_files: vec![(1, bad)],
        ..Default::default()
    }
    .encode(&mut enc);
    assert_eq!(
        VersionEdit::decode(&enc),
        Err("bad internal key in new_file")
    );
}

#[test]
fn every_truncation_is_an_error_or_a_prefix_edit() {
    let mut enc = Vec::new();
    fixture_edit().encode(&mut enc);
    for cut in 0..enc.len() {
        // A cut at a field boundary decodes to a prefix; anywhere else it is an error.
        if let Ok(e) = VersionEdit::decode(&enc[..cut]) {
            assert!(e.new_files.len() <= 2 && e.deleted_files.len() <= 2);
        }
    }
}

fn arb_ikey() -> impl Strategy<Value = Vec<u8>> {
    (
        proptest::collection::vec(any::<u8>(), 0..12),
        0..=crate::key::MAX_SEQUENCE,
        0u8..3,
    )
        .prop_map(|(k, seq, kind)| {
            make_internal_key(&k, seq, ValueKind::from_u8(kind).unwrap_or(ValueKind::Put))
        })
}

fn arb_file() -> impl Strategy<Value = FileMetaData> {
    (
        (
            any::<u64>(),
            any::<u32>(),
            any::<u64>(),
            arb_ikey(),
            arb_ikey(),
        ),
        (any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>()),
        any::<u32>(),
        proptest::option::of((
            proptest::collection::vec(
                (
                    any::<u64>(),
                    proptest::collection::vec(any::<u8>(), 0..6),
                    proptest::collection::vec(any::<u8>(), 0..6),
                    any::<u64>(),
                ),
                0..4,
            ),
            any::<bool>(),
        )),
    )
        .prop_map(
            |((number, path_id, size, smallest, largest), (sa, la, ne, nd), cg, slices)| {
                let kind = match slices {
                    // Slices over the whole table (written without sub-tag 13).
                    Some((s, true)) => {
                        let parents: Vec<u64> = s.iter().map(|s| s.0).collect();
                        let (lo, hi) = (user_key(&smallest), user_key(&largest));
                        FileKind::Virtual {
                            slices: whole_range_slices(&parents, lo, hi, size),
                        }
                    }
                    Some((s, false)) => FileKind::Virtual {
                        slices: s
                            .into_iter()
                            .map(|(parent, smallest, largest, bytes)| Slice {
                                parent,
                                smallest,
                                largest,
                                bytes,
                            })
                            .collect(),
                    },
                    None => FileKind::Real,
                };
                FileMetaData {
                    number,
                    path_id,
                    size,
                    smallest,
                    largest,
                    smallest_seqno: sa,
                    largest_seqno: la,
                    num_entries: ne,
                    num_deletions: nd,
                    column_group: cg,
                    kind,
                    // Exercised: the new sub-tag (absent when 0) round-trips.
                    num_range_deletions: nd % 3,
                    // Absent when 0, as any value otherwise.
                    creation_time: if ne % 2 == 0 { 0 } else { la },
                }
            },
        )
}

fn arb_edit() -> impl Strategy<Value = VersionEdit> {
    (
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u64>()),
        proptest::collection::vec((0usize..40, any::<u64>()), 0..5),
        proptest::collection::vec((0usize..40, arb_file()), 0..5),
        proptest::collection::vec(arb_file(), 0..3),
        (
            0u32..4,
            proptest::option::of("[a-z]{0,6}"),
            any::<bool>(),
            proptest::option::of(any::<u32>()),
            proptest::collection::btree_map(
                any::<u32>(),
                proptest::collection::vec(any::<u8>(), 0..16),
                0..3,
            ),
        ),
    )
        .prop_map(
            |(l, n, s, deleted_files, new_files, parents, (cf, add, drop, max, records))| {
                VersionEdit {
                    log_number: l,
                    next_file_number: n,
                    last_sequence: s,
                    deleted_files,
                    new_files,
                    // Parents are ordinary tables.
                    new_parents: parents
                        .into_iter()
                        .map(|p| FileMetaData {
                            kind: FileKind::Real,
                            ..p
                        })
                        .collect(),
                    column_family: cf,
                    add_column_family: add,
                    drop_column_family: drop,
                    max_column_family: max,
                    records: records.into_iter().collect(),
                }
            },
        )
}

/// Format version 2 encoding of an edit adding family 3 named `logs` with its log
/// number, and of one dropping it. Frozen.
const FIXTURE_V2_ADD: &str = "06 03 07 04 6c6f6773 09 03 01 07";
const FIXTURE_V2_DROP: &str = "06 03 08";

#[test]
fn frozen_fixture_v2_column_families() {
    let add = VersionEdit {
        column_family: 3,
        add_column_family: Some("logs".into()),
        max_column_family: Some(3),
        log_number: Some(7),
        ..Default::default()
    };
    let drop = VersionEdit {
        column_family: 3,
        drop_column_family: true,
        ..Default::default()
    };
    for (edit, fixture) in [(add, FIXTURE_V2_ADD), (drop, FIXTURE_V2_DROP)] {
        let mut enc = Vec::new();
        edit.encode(&mut enc);
        assert_eq!(enc, unhex(fixture), "encoding changed: {}", hex(&enc));
        assert_eq!(VersionEdit::decode(&enc), Ok(edit));
    }
    // Family 0 is implied, never written; a name must be UTF-8.
    assert!(VersionEdit::decode(&unhex("06 00")).is_err());
    assert!(VersionEdit::decode(&unhex("07 01 ff")).is_err());
    assert!(VersionEdit::decode(&unhex("08 08")).is_err());
}

/// The edit pinned by [`FIXTURE_V3_VIRTUAL`]: a compaction of L1 file 12 and L2
/// virtual table 19 (over parent 9, which an older edit sent) that writes no data.
/// Parent 12 is sent now. Virtual table 20 reads `[apple, kiwi]` of 12, then `[banana,
/// kiwi]` of 9; table 21 reads `[lime, pear]` of 12, then `[lime, orange]` of 9. Their
/// slices are not their whole ranges, so sub-tag 13 is written.
fn fixture_v3_edit() -> VersionEdit {
    let slice = |parent, lo: &str, hi: &str, bytes| Slice {
        parent,
        smallest: lo.as_bytes().to_vec(),
        largest: hi.as_bytes().to_vec(),
        bytes,
    };
    let table = |number, lo: &str, hi: &str, slices: Vec<Slice>| FileMetaData {
        number,
        path_id: 0,
        size: slices.iter().map(|s| s.bytes).sum(),
        smallest: make_internal_key(lo.as_bytes(), 10, ValueKind::Put),
        largest: make_internal_key(hi.as_bytes(), 3, ValueKind::Put),
        smallest_seqno: 3,
        largest_seqno: 10,
        num_entries: 40,
        num_deletions: 0,
        column_group: 0,
        kind: FileKind::Virtual { slices },
        num_range_deletions: 0,
        creation_time: 0,
    };
    VersionEdit {
        deleted_files: vec![(1, 12), (2, 19)],
        new_files: vec![
            (
                2,
                table(
                    20,
                    "apple",
                    "kiwi",
                    vec![
                        slice(12, "apple", "kiwi", 700),
                        slice(9, "banana", "kiwi", 300),
                    ],
                ),
            ),
            (
                2,
                table(
                    21,
                    "lime",
                    "pear",
                    vec![
                        slice(12, "lime", "pear", 500),
                        slice(9, "lime", "orange", 200),
                    ],
                ),
            ),
        ],
        new_parents: vec![FileMetaData {
            path_id: 0,
            ..file(12, FileKind::Real)
        }],
        ..Default::default()
    }
}

/// Format version 3 encoding of [`fixture_v3_edit`]. Frozen.
const FIXTURE_V3_VIRTUAL: &str = concat!(
    "04010c040213",
    "0502580101140201000302e807040d6170706c65010a000000000000050c6b69",
    "7769010300000000000006010307010a0801280901000a01000b03020c090d1b",
    "056170706c65046b697769bc050662616e616e61046b697769ac02",
    "0502560101150201000302bc05040c6c696d65010a000000000000050c706561",
    "72010300000000000006010307010a0801280901000a01000b03020c090d1a04",
    "6c696d650470656172f403046c696d65066f72616e6765c801",
    "0a3601010c02010003028020040d6170706c65010a000000000000050c706561",
    "72000300000000000006010307010a0801640901070a0102",
);

#[test]
fn frozen_fixture_v3_virtual_tables() {
    let mut enc = Vec::new();
    fixture_v3_edit().encode(&mut enc);
    assert_eq!(
        enc,
        unhex(FIXTURE_V3_VIRTUAL),
        "encoding changed: {}",
        hex(&enc)
    );
    assert_eq!(VersionEdit::decode(&enc), Ok(fixture_v3_edit()));
}

#[test]
fn virtual_parent_and_slices_are_checked() {
    // A parent must be an ordinary table.
    let mut virtual_parent = file(5, FileKind::Real);
    virtual_parent.kind = FileKind::Virtual {
        slices: whole_range_slices(&[4], b"apple", b"pear", 4096),
    };
    let mut enc = Vec::new();
    VersionEdit {
        new_parents: vec![virtual_parent],
        ..Default::default()
    }
    .encode(&mut enc);
    assert_eq!(
        VersionEdit::decode(&enc),
        Err("a virtual_parent is itself virtual")
    );

    // Slice ranges without parents, fewer ranges than parents, and trailing bytes.
    let f = file(44, FileKind::Real);
    let mut slices = Vec::new();
    put_length_prefixed(&mut slices, b"a");
    put_length_prefixed(&mut slices, b"b");
    put_varint64(&mut slices, 9);
    for (parents, extra, want) in [
        (None, &b""[..], "virtual slices without virtual parents"),
        (Some(&[1u64, 2][..]), &b""[..], "truncated virtual slice"),
        (
            Some(&[1u64][..]),
            &b"\x00"[..],
            "trailing bytes in virtual slices",
        ),
    ] {
        let mut body = Vec::new();
        encode_new_file(&mut body, &f);
        if let Some(parents) = parents {
            let mut list = Vec::new();
            put_varint64(&mut list, parents.len() as u64);
            parents.iter().for_each(|&p| put_varint64(&mut list, p));
            put_sub(&mut body, sub::VIRTUAL_PARENTS, &list);
        }
        put_sub(
            &mut body,
            sub::VIRTUAL_SLICES,
            &[slices.as_slice(), extra].concat(),
        );
        let mut enc = Vec::new();
        put_varint64(&mut enc, tag::NEW_FILE);
        put_varint32(&mut enc, 1);
        put_length_prefixed(&mut enc, &body);
        assert_eq!(VersionEdit::decode(&enc), Err(want));
    }
}

proptest! {
    #[test]
    fn round_trip(edit in arb_edit()) {
        let mut enc = Vec::new();
        edit.encode(&mut enc);
        prop_assert_eq!(VersionEdit::decode(&enc), Ok(edit.clone()));
        let mut again = Vec::new();
        edit.encode(&mut again);
        prop_assert_eq!(enc, again);
    }

    #[test]
    fn decode_random_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = VersionEdit::decode(&bytes);
    }

    #[test]
    fn decode_mutated_edit_never_panics(edit in arb_edit(), pos in any::<usize>(), xor in 1u8..) {
        let mut enc = Vec::new();
        edit.encode(&mut enc);
        if !enc.is_empty() {
            let i = pos % enc.len();
            enc[i] ^= xor;
        }
        if let Ok(e) = VersionEdit::decode(&enc) {
            // Whatever decodes must re-encode to something that decodes the same.
            let mut re = Vec::new();
            e.encode(&mut re);
            prop_assert_eq!(VersionEdit::decode(&re), Ok(e));
        }
    }
}

/// Format version 4: an edit of family 2 setting records 1 (`schema`) and 7 (empty).
/// Frozen.
const FIXTURE_V4_RECORDS: &str = "06 02 0b 01 06 736368656d61 0b 07 00";

#[test]
fn frozen_fixture_v4_family_records() {
    let edit = VersionEdit {
        column_family: 2,
        records: vec![(1, b"schema".to_vec()), (7, Vec::new())],
        ..Default::default()
    };
    let mut enc = Vec::new();
    edit.encode(&mut enc);
    assert_eq!(
        enc,
        unhex(FIXTURE_V4_RECORDS),
        "encoding changed: {}",
        hex(&enc)
    );
    assert_eq!(VersionEdit::decode(&enc), Ok(edit));
    // One key once per edit; a truncated value is refused.
    assert_eq!(
        VersionEdit::decode(&unhex("0b 01 00 0b 01 00")),
        Err("repeated family_record key")
    );
    assert!(VersionEdit::decode(&unhex("0b 01 05 6162")).is_err());
}

/// Sub-tag 78 (14 | safe to ignore): a table's creation time, written only when known.
/// Frozen: the new-file body of [`file`] 44 with creation time 1,764,000,000.
const FIXTURE_CREATION_TIME_SUB_FIELD: &str = "4e 05 80 82 92 c9 06";

#[test]
fn frozen_fixture_creation_time() {
    let mut f = file(44, FileKind::Real);
    let mut without = Vec::new();
    encode_new_file(&mut without, &f);
    f.creation_time = 1_764_000_000;
    let mut with = Vec::new();
    encode_new_file(&mut with, &f);
    let tail = with
        .strip_prefix(without.as_slice())
        .expect("appended after the rest");
    assert_eq!(
        tail,
        unhex(FIXTURE_CREATION_TIME_SUB_FIELD).as_slice(),
        "encoding changed: {}",
        hex(tail)
    );
    assert_eq!(decode_new_file(&with), Ok(f.clone()));
    // Unknown before it existed: absent, and 0 again after a round trip.
    let mut old = f.clone();
    old.creation_time = 0;
    assert_eq!(decode_new_file(&without), Ok(old));
}
