//! Damaged tables: every flipped byte and every truncation is reported as corruption
//! (with the file and the bad block's offset), never a panic or wrong data.

use super::*;
use crate::iter::InternalIterator;
use crate::key::KIND_SEEK;
use crate::sst::footer::{Footer, FOOTER_LEN};

fn sample() -> (Entries, Vec<u8>) {
    let entries: Vec<_> = (0..200u32)
        .map(|i| {
            let k = ikey(
                format!("key{i:05}").as_bytes(),
                u64::from(i) + 1,
                ValueKind::Put,
            );
            (
                k,
                format!("value-{i}-{}", "x".repeat((i % 7) as usize)).into_bytes(),
            )
        })
        .collect();
    let (bytes, _) = build(&entries, &small_opts(Compression::Lz4));
    (entries, bytes)
}

fn footer_of(bytes: &[u8]) -> Footer {
    let at = bytes.len() - FOOTER_LEN;
    Footer::decode(&bytes[at..], bytes.len() as u64).expect("footer")
}

fn assert_corruption_at(e: &Error, want_offset: u64) {
    match e {
        Error::Corruption { file, offset, .. } => {
            assert_eq!(file, Path::new("/mem/000007.sst"));
            assert_eq!(*offset, want_offset, "{e}");
        }
        other => panic!("expected corruption at {want_offset}, got {other:?}"),
    }
}

#[test]
fn flipped_byte_in_each_block_kind_is_corruption_at_that_block() {
    let (entries, bytes) = sample();
    let footer = footer_of(&bytes);
    let footer_offset = (bytes.len() - FOOTER_LEN) as u64;
    let filter = footer.filter.expect("filter");
    let kinds = [
        ("filter", filter.offset, filter.offset),
        ("index", footer.index.offset, footer.index.offset),
        (
            "properties",
            footer.properties.offset,
            footer.properties.offset,
        ),
        ("footer", footer_offset + 3, footer_offset),
        ("footer magic", footer_offset + 60, footer_offset),
    ];
    for (what, at, reported) in kinds {
        let mut bad = bytes.clone();
        bad[at as usize + 1] ^= 0x40;
        let e = open(bad, None, Arc::default(), false).expect_err(what);
        assert!(e.is_corruption(), "{what}: {e}");
        assert_corruption_at(&e, reported);
    }

    // A data block: open succeeds (data is read lazily) unless paranoid; every read of
    // the block fails.
    let mut bad = bytes.clone();
    bad[10] ^= 0x40;
    let e = open(bad.clone(), None, Arc::default(), true).expect_err("paranoid open");
    assert_corruption_at(&e, 0);
    let t = open(bad, None, Arc::default(), false).expect("lazy open");
    assert_corruption_at(&t.verify_checksums().expect_err("verify"), 0);
    let first = &entries[0].0;
    let lookup = ikey(crate::key::user_key(first), 1, KIND_SEEK);
    assert_corruption_at(&t.get(&lookup, |_, _| ()).expect_err("get"), 0);
    let mut it = t.iter();
    it.seek_to_first();
    assert!(!it.valid());
    assert_corruption_at(&it.status().expect_err("status"), 0);
    it.seek_to_last();
    assert!(!it.valid(), "errors are sticky");
    assert!(it.status().is_err());
    // Keys in other blocks are still served by get.
    let last = &entries[199].0;
    let lookup = ikey(crate::key::user_key(last), 200, KIND_SEEK);
    assert!(t.get(&lookup, |_, _| ()).expect("other block").is_some());
}

#[test]
fn every_flipped_byte_is_detected() {
    let (_, bytes) = sample();
    for i in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[i] ^= 1 << (i % 8);
        match open(bad, None, Arc::default(), true) {
            Err(e) => assert!(e.is_corruption(), "byte {i}: {e}"),
            Ok(_) => panic!("byte {i}: damage not detected"),
        }
    }
}

#[test]
fn every_truncation_is_corruption() {
    let (_, bytes) = sample();
    for cut in 0..bytes.len() {
        let e = open(bytes[..cut].to_vec(), None, Arc::default(), false).expect_err("truncated");
        assert!(e.is_corruption(), "cut {cut}: {e}");
    }
}

#[test]
fn garbage_files_never_panic() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    let (_, bytes) = sample();
    let footer = bytes.len() - FOOTER_LEN;
    for _ in 0..300 {
        let mut bad = bytes.clone();
        // Random damage outside the footer, then re-seal nothing: readers must cope.
        for _ in 0..rng.random_range(1..20) {
            let i = rng.random_range(0..footer);
            bad[i] = rng.random();
        }
        if let Ok(t) = open(bad, None, Arc::default(), false) {
            let _ = t.verify_checksums();
            let mut it = t.iter();
            it.seek_to_first();
            while it.valid() {
                it.next();
            }
            it.seek_to_last();
            while it.valid() {
                it.prev();
            }
        }
    }
}

/// A key whose trailer names no value kind, in a block with a valid checksum (a
/// crafted or mis-written file): the iterator reports corruption naming the table and
/// the block, so compaction and the read path never see a malformed key.
#[test]
fn malformed_key_with_valid_checksum_is_corruption_naming_the_table() {
    let entries: Entries = vec![(ikey(b"k", 5, ValueKind::Put), b"v".to_vec())];
    let opts = TableOptions {
        compression: Compression::None,
        ..small_opts(Compression::None)
    };
    let (mut bytes, _) = build(&entries, &opts);
    // Rebuild data block 0 (at offset 0, the same length) with kind byte 0x7f.
    let mut bad_key = entries[0].0.clone();
    let kind_at = bad_key.len() - 8;
    bad_key[kind_at] = 0x7f;
    let mut block = crate::sst::block::BlockBuilder::new(opts.block_restart_interval);
    block.add(&bad_key, b"v").expect("add");
    let mut sealed = Vec::new();
    crate::sst::compression::seal_block(block.finish(), Compression::None, &mut sealed);
    bytes[..sealed.len()].copy_from_slice(&sealed);
    let table = open(bytes, None, Arc::new(Statistics::default()), false).expect("open");
    let mut it = table.iter();
    it.seek_to_first();
    assert!(!it.valid());
    let err = it.status().expect_err("malformed key");
    let text = err.to_string();
    assert!(err.is_corruption(), "{text}");
    assert!(
        text.contains("000007.sst") && text.contains("malformed internal key"),
        "{text}"
    );
}
