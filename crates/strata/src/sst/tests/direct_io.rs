//! Tables read and written with direct I/O (`O_DIRECT`) on a real file system, against
//! buffered I/O: for block sizes 512 B … 64 KiB and several value sizes, every data
//! block, the meta blocks and the footer (the file's last, partial, block) read the
//! same bytes both ways, a table opened on a direct file iterates exactly its entries,
//! and a table written through a direct writer is byte for byte the buffered one.
//! Skipped with a printed note where the temp directory refuses `O_DIRECT`
//! (`env::direct_io_tempdir`).

use super::*;
use crate::env::{direct_io_tempdir, FileOptions, FileSystem, PosixFs};
use crate::iter::InternalIterator;
use crate::sst::footer::FOOTER_LEN;
use rand::{RngCore, SeedableRng};

const BLOCK_SIZES: [usize; 8] = [512, 1000, 1024, 2048, 4096, 8192, 16384, 65536];
const VALUE_SIZES: [usize; 4] = [1, 100, 1000, 9000];

fn direct() -> FileOptions {
    FileOptions::default().with_direct(true)
}

/// Sorted entries: `n` keys with `value_len`-byte random (incompressible) values.
fn entries(n: usize, value_len: usize, seed: u64) -> Entries {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let mut v = vec![0u8; value_len];
            rng.fill_bytes(&mut v);
            (ikey(format!("key{i:08}").as_bytes(), 1, ValueKind::Put), v)
        })
        .collect()
}

fn table_opts(block_size: usize, c: Compression) -> TableOptions {
    TableOptions {
        block_size,
        block_restart_interval: 16,
        bloom_bits_per_key: 10,
        compression: c,
        column_group: 0,
    }
}

/// Writes a table of `es` to `path` through `PosixFs` with `file_opts`.
fn write_table(path: &Path, es: &Entries, opts: &TableOptions, file_opts: FileOptions) {
    let file = PosixFs.create_with(path, file_opts).expect("create");
    let mut b = TableBuilder::new(file, opts.clone());
    for (k, v) in es {
        b.add(k, v).expect("add");
    }
    let p = b.finish().expect("finish");
    assert_eq!(p.file_size, std::fs::metadata(path).expect("stat").len());
}

/// Every (offset, len) worth comparing in the table at `path`: each data block with its
/// trailer (from the index), the footer, the whole file, and the last 100 bytes.
fn regions(path: &Path) -> Vec<(u64, usize)> {
    let file = PosixFs.open_random(path).expect("open");
    let size = file.size();
    let t =
        Table::open(file, 1, None, Arc::new(Statistics::default()), false, false).expect("table");
    let mut out = Vec::new();
    let mut index = crate::sst::block_iter::BlockIter::new(t.index_block().expect("held index"));
    index.seek_to_first();
    while index.valid() {
        let h = t.index_handle(index.value()).expect("handle");
        let end = h.end().expect("end");
        out.push((h.offset, (end - h.offset) as usize));
        index.next();
    }
    assert!(!out.is_empty());
    out.push((size - FOOTER_LEN as u64, FOOTER_LEN));
    out.push((0, size as usize));
    out.push((size.saturating_sub(100), size.min(100) as usize));
    out
}

#[test]
fn direct_reads_of_every_block_match_buffered_for_every_block_size() {
    let Some(dir) = direct_io_tempdir() else {
        return;
    };
    let mut tables = 0;
    let mut unaligned_tails = 0;
    let mut blocks = 0;
    for (i, &bs) in BLOCK_SIZES.iter().enumerate() {
        for (j, &vl) in VALUE_SIZES.iter().enumerate() {
            let c = if (i + j) % 2 == 0 {
                Compression::None
            } else {
                Compression::Lz4
            };
            // Enough entries for several blocks, few enough to stay quick.
            let n = ((bs * 6) / (vl + 16)).clamp(5, 3000);
            let es = entries(n, vl, (i * 10 + j) as u64);
            let path = dir.path().join(format!("{bs}-{vl}.sst"));
            write_table(&path, &es, &table_opts(bs, c), FileOptions::default());
            let buffered = PosixFs.open_random(&path).expect("open");
            let direct = PosixFs
                .open_random_with(&path, direct())
                .expect("open direct");
            if buffered.size() % 4096 != 0 {
                unaligned_tails += 1;
            }
            for (off, len) in regions(&path) {
                let want = buffered.read_vec(off, len).expect("buffered read");
                let got = direct.read_vec(off, len).expect("direct read");
                assert!(
                    got == want,
                    "block size {bs} value {vl}: {off}+{len} differs"
                );
                blocks += 1;
            }
            // The whole table through the direct file: entries and checksums.
            let t = Arc::new(
                Table::open(
                    direct,
                    1,
                    None,
                    Arc::new(Statistics::default()),
                    false,
                    true,
                )
                .expect("open table direct"),
            );
            t.verify_checksums().expect("checksums");
            let mut it = t.iter();
            it.seek_to_first();
            let mut k = 0;
            while it.valid() {
                assert_eq!((it.key(), it.value()), (&es[k].0[..], &es[k].1[..]));
                k += 1;
                it.next();
            }
            it.status().expect("status");
            assert_eq!(k, es.len(), "block size {bs} value {vl}");
            tables += 1;
        }
    }
    println!(
        "{tables} tables, {blocks} regions compared, {unaligned_tails} with a partial last page"
    );
    assert!(
        unaligned_tails > tables / 2,
        "the tail case must be exercised"
    );
}

#[test]
fn table_written_with_direct_io_is_byte_identical_to_buffered() {
    let Some(dir) = direct_io_tempdir() else {
        return;
    };
    for (i, (bs, vl, n)) in [
        (512, 10, 50),
        (4096, 100, 3000),
        (65536, 9000, 400),
        (1024, 1, 1),
    ]
    .into_iter()
    .enumerate()
    {
        let es = entries(n, vl, 100 + i as u64);
        let opts = table_opts(bs, Compression::None);
        let a = dir.path().join(format!("buffered-{i}.sst"));
        let b = dir.path().join(format!("direct-{i}.sst"));
        write_table(&a, &es, &opts, FileOptions::default());
        write_table(&b, &es, &opts, direct());
        let (a, b) = (
            std::fs::read(a).expect("read"),
            std::fs::read(b).expect("read"),
        );
        assert!(
            a == b,
            "table {i}: direct ({} B) != buffered ({} B)",
            b.len(),
            a.len()
        );
    }
}
