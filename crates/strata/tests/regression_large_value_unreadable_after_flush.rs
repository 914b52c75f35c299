//! Regression (issue 9, item 1): an acknowledged write that flush made unreadable.
//!
//! With `Compression::Lz4`, `put` of a 300 MiB value returned `Ok`, `get` returned it,
//! `flush()` returned `Ok`, and afterwards `get` failed with `Corruption … raw length
//! too large` while the WAL that held the value was already deleted: the table writer
//! compressed a block whose raw length the reader refuses (`MAX_BLOCK_LEN`).
//!
//! What this protects (`strata::limits`): for every compression type, a key or value
//! at its limit and one byte under is accepted, survives `flush`, `compact_range` and
//! reopen, and reads back byte for byte; one byte over is `InvalidArgument` and nothing
//! is written (no WAL byte, `latest_sequence` unchanged, absent after reopen). A batch
//! over `MAX_BATCH_LEN` is refused the same way, and a batch of maximal values is
//! framed, replayed from the WAL and flushed. Values are built once and shared.

use std::path::Path;
use std::sync::OnceLock;
use strata::{
    Compression, Db, Error, ErrorKind, Options, ReadOptions, WriteBatch, WriteOptions,
    MAX_BATCH_LEN, MAX_KEY_LEN, MAX_VALUE_LEN,
};

/// `len` compressible bytes: a 4 KiB pseudo-random chunk repeated (LZ4 and zstd both
/// compress it, which is the path that failed).
fn pattern(len: usize, seed: u8) -> Vec<u8> {
    let chunk: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 ^ seed)
        .collect();
    let mut v = Vec::with_capacity(len);
    while v.len() < len {
        let n = (len - v.len()).min(chunk.len());
        v.extend_from_slice(&chunk[..n]);
    }
    v
}

/// `MAX_VALUE_LEN + 1` bytes; its prefixes are the at-, under- and over-limit values.
fn big_value() -> &'static [u8] {
    static V: OnceLock<Vec<u8>> = OnceLock::new();
    V.get_or_init(|| pattern(MAX_VALUE_LEN + 1, 0x5a))
}

/// `MAX_KEY_LEN + 1` bytes; its prefixes are the at-, under- and over-limit keys.
fn big_key() -> &'static [u8] {
    static K: OnceLock<Vec<u8>> = OnceLock::new();
    K.get_or_init(|| pattern(MAX_KEY_LEN + 1, 0xa5))
}

fn open(dir: &Path, compression: Compression) -> Db {
    let opts = Options::default().with_every_level(|l| l.with_compression(compression));
    Db::open(dir, opts).unwrap_or_else(|e| panic!("{compression:?}: open: {e}"))
}

/// Bytes of every WAL file in `dir`.
fn wal_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .expect("read_dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .map(|e| e.metadata().map_or(0, |m| m.len()))
        .sum()
}

/// `get(key)` returns exactly `want` (compared without printing megabytes).
fn expect_value(db: &Db, key: &[u8], want: &[u8], ctx: &str) {
    let got = db
        .get(&ReadOptions::default(), key)
        .unwrap_or_else(|e| panic!("{ctx}: get of a {}-byte key: {e}", key.len()));
    let got = got.unwrap_or_else(|| panic!("{ctx}: {}-byte key missing", key.len()));
    assert!(
        got == want,
        "{ctx}: value of the {}-byte key: {} bytes, want {}",
        key.len(),
        got.len(),
        want.len()
    );
}

fn expect_absent(db: &Db, key: &[u8], ctx: &str) {
    let got = db
        .get(&ReadOptions::default(), key)
        .unwrap_or_else(|e| panic!("{ctx}: get: {e}"));
    assert!(got.is_none(), "{ctx}: a refused write is present");
}

/// `r` is `InvalidArgument` naming `what`, the length and the limit.
fn expect_refused(r: Result<(), Error>, what: &str, len: usize, max: usize, ctx: &str) {
    let e = r.expect_err(ctx);
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{ctx}: {e}");
    let want = format!("{what} too large: len=`{len}` max=`{max}`");
    assert!(e.to_string().contains(&want), "{ctx}: `{e}` lacks `{want}`");
}

/// The boundary scenario for one compression type.
fn boundaries(compression: Compression) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");
    let ctx = format!("{compression:?}");
    let wo = WriteOptions::default();
    let (value, key) = (big_value(), big_key());
    // (key, value) accepted: value at the limit, one under; key at the limit, one under.
    let accepted: [(&[u8], &[u8]); 4] = [
        (b"value-at", &value[..MAX_VALUE_LEN]),
        (b"value-under", &value[..MAX_VALUE_LEN - 1]),
        (&key[..MAX_KEY_LEN], b"key-at"),
        (&key[..MAX_KEY_LEN - 1], b"key-under"),
    ];

    let db = open(&dir, compression);
    // One over: refused before the WAL, nothing visible.
    let (seq, wal) = (db.latest_sequence(), wal_bytes(&dir));
    expect_refused(
        db.put(&wo, b"value-over", value),
        "value",
        MAX_VALUE_LEN + 1,
        MAX_VALUE_LEN,
        &ctx,
    );
    expect_refused(
        db.put(&wo, key, b"key-over"),
        "key",
        MAX_KEY_LEN + 1,
        MAX_KEY_LEN,
        &ctx,
    );
    expect_refused(
        db.delete(&wo, key),
        "key",
        MAX_KEY_LEN + 1,
        MAX_KEY_LEN,
        &ctx,
    );
    assert_eq!(
        db.latest_sequence(),
        seq,
        "{ctx}: a refused write took a sequence"
    );
    assert_eq!(
        wal_bytes(&dir),
        wal,
        "{ctx}: a refused write reached the WAL"
    );
    expect_absent(&db, b"value-over", &ctx);
    expect_absent(&db, key, &ctx);

    for (k, v) in accepted {
        db.put(&wo, k, v)
            .unwrap_or_else(|e| panic!("{ctx}: put {}/{} bytes: {e}", k.len(), v.len()));
        expect_value(&db, k, v, &format!("{ctx} before flush"));
    }
    db.flush().unwrap_or_else(|e| panic!("{ctx}: flush: {e}"));
    for (k, v) in accepted {
        expect_value(&db, k, v, &format!("{ctx} after flush"));
    }
    db.compact_range(None, None)
        .unwrap_or_else(|e| panic!("{ctx}: compact_range: {e}"));
    for (k, v) in accepted {
        expect_value(&db, k, v, &format!("{ctx} after compact_range"));
    }
    let seq = db.latest_sequence();
    db.close().unwrap_or_else(|e| panic!("{ctx}: close: {e}"));

    let db = open(&dir, compression);
    assert_eq!(db.latest_sequence(), seq, "{ctx}: sequence after reopen");
    for (k, v) in accepted {
        expect_value(&db, k, v, &format!("{ctx} after reopen"));
    }
    expect_absent(&db, b"value-over", &format!("{ctx} after reopen"));
    expect_absent(&db, key, &format!("{ctx} after reopen"));
    let checked = db.verify_checksums().expect("verify_checksums");
    assert!(checked > 0);
    db.close().expect("close");
}

#[test]
fn limits_hold_through_flush_compaction_and_reopen_without_compression() {
    boundaries(Compression::None);
}

#[test]
fn limits_hold_through_flush_compaction_and_reopen_with_lz4() {
    boundaries(Compression::Lz4);
}

#[test]
fn limits_hold_through_flush_compaction_and_reopen_with_zstd() {
    boundaries(Compression::Zstd);
}

/// The reported case: a 300 MiB value with LZ4 is refused up front instead of being
/// acknowledged and lost at flush.
#[test]
fn lz4_value_of_300_mib_is_refused_before_the_wal() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");
    let value = vec![b'x'; 300 << 20];
    let db = open(&dir, Compression::Lz4);
    db.put(&WriteOptions::default().with_sync(true), b"small", b"kept")
        .expect("put");
    let (seq, wal) = (db.latest_sequence(), wal_bytes(&dir));
    expect_refused(
        db.put(&WriteOptions::default().with_sync(true), b"big", &value),
        "value",
        300 << 20,
        MAX_VALUE_LEN,
        "300 MiB",
    );
    assert_eq!(db.latest_sequence(), seq);
    assert_eq!(
        wal_bytes(&dir),
        wal,
        "nothing of the refused write is logged"
    );
    db.flush().expect("flush");
    expect_absent(&db, b"big", "after flush");
    expect_value(&db, b"small", b"kept", "after flush");
    db.close().expect("close");
    let db = open(&dir, Compression::Lz4);
    expect_absent(&db, b"big", "after reopen");
    expect_value(&db, b"small", b"kept", "after reopen");
    db.close().expect("close");
}

/// A batch of maximal values is framed as one WAL record, replayed whole after a
/// reopen (no flush before it) and flushed readable; one more value makes the batch
/// too large, and it is refused as a whole.
#[test]
fn batch_limit_is_enforced_and_a_maximal_batch_replays() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");
    let at = &big_value()[..MAX_VALUE_LEN];
    let db = open(&dir, Compression::Lz4);
    let wo = WriteOptions::default().with_sync(true);

    let mut over = WriteBatch::new();
    for i in 0..4u8 {
        over.put(&[b'o', i], at);
    }
    // A put record here is kind (1 byte), key length (1), key (2), value length (the
    // varint of 2^27: 4) and the value; the header is 12 bytes. Three fit, and the
    // error names the length the fourth would have made.
    let record = 1 + 1 + 2 + 4 + MAX_VALUE_LEN;
    assert_eq!(
        over.approximate_size(),
        12 + 3 * record,
        "the fourth was not added"
    );
    let len = 12 + 4 * record;
    let (seq, wal) = (db.latest_sequence(), wal_bytes(&dir));
    expect_refused(db.write(&wo, over), "batch", len, MAX_BATCH_LEN, "batch");
    assert_eq!(db.latest_sequence(), seq);
    assert_eq!(
        wal_bytes(&dir),
        wal,
        "nothing of the refused batch is logged"
    );
    for i in 0..4u8 {
        expect_absent(&db, &[b'o', i], "refused batch");
    }

    let mut fits = WriteBatch::new();
    for i in 0..3u8 {
        fits.put(&[b'b', i], at);
    }
    fits.put(b"tail", b"t");
    assert!(fits.approximate_size() <= MAX_BATCH_LEN);
    db.write(&wo, fits).expect("a batch within the limit");
    drop(db); // No flush: reopen replays the one large WAL record.
    let db = open(&dir, Compression::Lz4);
    for i in 0..3u8 {
        expect_value(&db, &[b'b', i], at, "replayed");
    }
    expect_value(&db, b"tail", b"t", "replayed");
    for i in 0..4u8 {
        expect_absent(&db, &[b'o', i], "refused batch after reopen");
    }
    db.flush().expect("flush");
    db.compact_range(None, None).expect("compact");
    expect_value(&db, &[b'b', 2], at, "after compaction");
    db.close().expect("close");
}
