//! Tests of the backup metadata encoding: frozen fixture, round trips, hostile input.

use super::*;
use crate::coding::fixture_hex::{hex, unhex};
use crate::error::ErrorKind;
use proptest::prelude::*;

fn entry(name: &str, shared: bool, size: u64, crc32c: u32) -> FileEntry {
    FileEntry {
        name: name.into(),
        shared,
        size,
        crc32c,
    }
}

/// The metadata pinned by [`FIXTURE_V1`].
fn fixture_meta() -> BackupMeta {
    BackupMeta {
        id: 3,
        created: 1_700_000_000,
        sequence: 1234,
        copied: 300,
        files: vec![
            entry("000007.log", false, 40, 0x0102_0304),
            entry("000009.sst", true, 4096, 0xdead_beef),
            entry("CURRENT", false, 16, 0xcafe_f00d),
            entry("MANIFEST-000010", false, 200, 7),
            entry("OPTIONS", false, 900, 8),
        ],
    }
}

/// Format version 1 encoding of [`fixture_meta`]. Frozen: never edit this constant; a
/// format change adds a new fixture instead.
const FIXTURE_V1: &str = concat!(
    "535452415441424b", // magic "STRATABK"
    "01",               // format version
    "03",               // id
    "80e2cfaa06",       // created
    "d209",             // sequence
    "ac02",             // copied
    "05",               // count
    "00 0a 3030303030372e6c6f67 28 04030201",
    "01 0a 3030303030392e737374 8020 efbeadde",
    "00 07 43555252454e54 10 0df0feca",
    "00 0f 4d414e49464553542d303030303130 c801 07000000",
    "00 07 4f5054494f4e53 8407 08000000",
    "8f7d8a9c", // masked crc32c of the bytes above
);

fn decode(data: &[u8]) -> Result<BackupMeta> {
    BackupMeta::decode(data, Path::new("meta/3"))
}

/// Re-seals `body` (everything but the checksum) with a correct checksum, so a test
/// reaches the field checks behind it.
fn seal(mut body: Vec<u8>) -> Vec<u8> {
    let crc = mask_crc(crc32c::crc32c(&body));
    put_fixed32(&mut body, crc);
    body
}

#[test]
fn frozen_fixture_v1() {
    let enc = fixture_meta().encode();
    assert_eq!(enc, unhex(FIXTURE_V1), "encoding changed: {}", hex(&enc));
    assert_eq!(decode(&unhex(FIXTURE_V1)).unwrap(), fixture_meta());
}

#[test]
fn stored_paths_name_shared_tables_by_number_size_and_crc() {
    let m = fixture_meta();
    let paths: Vec<_> = m.files.iter().map(|f| f.stored_path(m.id)).collect();
    assert_eq!(paths[1], Path::new("shared/000009-4096-deadbeef.sst"));
    assert_eq!(paths[2], Path::new("private/3-CURRENT"));
    assert_eq!(private_owner("3-MANIFEST-000010"), Some(3));
    assert_eq!(private_owner("junk"), None);
}

#[test]
fn every_flipped_byte_and_every_truncation_is_corruption_naming_the_file() {
    let good = fixture_meta().encode();
    for i in 0..good.len() {
        let mut bad = good.clone();
        bad[i] ^= 0x40;
        let e = decode(&bad).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption, "byte {i}: {e}");
        assert!(e.to_string().contains("meta/3"), "{e}");
        let e = decode(&good[..i]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption, "length {i}: {e}");
    }
}

#[test]
fn hostile_fields_behind_a_valid_checksum_are_refused_by_name() {
    let body = |files: Vec<FileEntry>, version: u32, trailing: &[u8]| {
        let m = BackupMeta {
            files,
            ..fixture_meta()
        };
        let mut enc = m.encode();
        enc.truncate(enc.len() - 4);
        if version != FORMAT_VERSION {
            enc[MAGIC.len()] = u8::try_from(version).unwrap();
        }
        enc.extend_from_slice(trailing);
        seal(enc)
    };
    let current = || entry("CURRENT", false, 16, 1);
    let cases = [
        (
            body(fixture_meta().files, 2, b""),
            "unknown format version 2",
        ),
        (body(fixture_meta().files, 1, b"x"), "trailing bytes"),
        (
            body(vec![entry("000009.sst", true, 1, 1)], 1, b""),
            "no CURRENT",
        ),
        (body(vec![current(), current()], 1, b""), "listed twice"),
        (
            body(vec![current(), entry("../000001.log", false, 1, 1)], 1, b""),
            "not a backed-up file name: `../000001.log`",
        ),
        (
            body(vec![current(), entry("000001.sst", false, 1, 1)], 1, b""),
            "not a backed-up file name",
        ),
        (
            body(vec![current(), entry("LOCK", false, 1, 1)], 1, b""),
            "not a backed-up file name",
        ),
    ];
    for (bytes, want) in cases {
        let e = decode(&bytes).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
        assert!(e.to_string().contains(want), "{e}, wanted {want}");
    }
}

proptest! {
    #[test]
    fn round_trip(
        id in any::<u64>(),
        header in any::<[u64; 3]>(),
        tables in proptest::collection::btree_map(any::<u32>(), (any::<u64>(), any::<u32>()), 0..20),
    ) {
        let mut files: Vec<FileEntry> = tables
            .iter()
            .map(|(n, (size, crc))| entry(&format!("{n:06}.sst"), true, *size, *crc))
            .collect();
        files.push(entry("CURRENT", false, 16, 1));
        let m = BackupMeta { id, created: header[0], sequence: header[1], copied: header[2], files };
        prop_assert_eq!(decode(&m.encode()).unwrap(), m);
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = decode(&data);
        let _ = decode(&seal(data));
    }
}
