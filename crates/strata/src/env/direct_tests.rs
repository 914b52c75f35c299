//! Direct-I/O files of `PosixFs` against buffered ones, on a real file system: every
//! read at unaligned offsets and lengths, across alignment boundaries and into the
//! partial last block, returns the bytes a buffered read returns; a file written with
//! direct I/O is byte for byte the buffered one; a file system that refuses `O_DIRECT`
//! is `InvalidArgument` naming the path.

use super::direct::{dio_alignment, FALLBACK_ALIGN};
use super::*;
use crate::error::{Error, IoOp};
use rand::{Rng, RngCore, SeedableRng};
use std::path::PathBuf;

fn direct() -> FileOptions {
    FileOptions::default().with_direct(true)
}

/// Writes `data` to `path` buffered (plain `std::fs`).
fn write_plain(path: &Path, data: &[u8]) {
    std::fs::write(path, data).expect("write");
}

fn random_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut v = vec![0u8; len];
    rng.fill_bytes(&mut v);
    v
}

#[test]
fn alignment_is_a_power_of_two_at_least_512() {
    let Some(dir) = direct_io_tempdir() else {
        return;
    };
    let path = dir.path().join("f");
    write_plain(&path, b"abc");
    let a = dio_alignment(&std::fs::File::open(&path).expect("open"));
    println!(
        "direct-I/O alignment of {}: {a} (fallback {FALLBACK_ALIGN})",
        path.display()
    );
    assert!(a.is_power_of_two() && (512..=65536).contains(&a), "{a}");
}

/// A file of 3 pages + 1234 bytes (not a multiple of 4096, nor of 512): reads at
/// offsets around every 512-byte boundary, of lengths that stay inside a block, cross
/// one or several boundaries, and end exactly at or inside the last partial block.
#[test]
fn direct_reads_at_unaligned_offsets_and_lengths_match_buffered() {
    let Some(dir) = direct_io_tempdir() else {
        return;
    };
    let len = 3 * 4096 + 1234;
    let data = random_bytes(1, len);
    let path = dir.path().join("data");
    write_plain(&path, &data);
    let buffered = PosixFs.open_random(&path).expect("open");
    let direct = PosixFs
        .open_random_with(&path, direct())
        .expect("open direct");
    assert_eq!(direct.size(), len as u64);
    let mut offsets: Vec<usize> = (0..=len / 512)
        .flat_map(|b| {
            [
                b * 512,
                (b * 512).saturating_sub(1),
                b * 512 + 1,
                b * 512 + 300,
            ]
        })
        .filter(|&o| o < len)
        .collect();
    offsets.sort_unstable();
    offsets.dedup();
    let lens = [1, 7, 511, 512, 513, 1000, 4095, 4096, 4097, 8192, 9000, len];
    let mut checked = 0;
    for &off in &offsets {
        for &n in lens.iter().chain([&(len - off)]) {
            if off + n > len {
                continue;
            }
            let want = &data[off..off + n];
            let o = off as u64;
            assert_eq!(
                buffered.read_vec(o, n).expect("buffered"),
                want,
                "buffered {off}+{n}"
            );
            assert_eq!(
                direct.read_vec(o, n).expect("direct"),
                want,
                "direct {off}+{n}"
            );
            let mut buf = vec![0u8; n];
            direct.read_exact_at(o, &mut buf).expect("direct exact");
            assert_eq!(buf, want, "direct read_exact_at {off}+{n}");
            checked += 1;
        }
    }
    assert!(checked > 500, "{checked}");
    // Empty reads, and reads past the end, behave as buffered ones.
    assert_eq!(
        direct.read_vec(len as u64, 0).expect("empty"),
        Vec::<u8>::new()
    );
    for (o, n) in [(len - 1, 2), (len, 1), (len + 5000, 10), (0, len + 1)] {
        let e = direct.read_vec(o as u64, n).expect_err("past end");
        assert!(matches!(e, Error::Io { op: IoOp::Read, .. }), "{e}");
        assert!(buffered.read_vec(o as u64, n).is_err());
    }
}

/// Random files of lengths around block multiples, random reads: direct = buffered.
#[test]
fn direct_random_reads_match_buffered_for_many_file_lengths() {
    let Some(dir) = direct_io_tempdir() else {
        return;
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for (i, len) in [1usize, 511, 512, 513, 4095, 4096, 4097, 65536 + 17, 200_000]
        .into_iter()
        .enumerate()
    {
        let data = random_bytes(i as u64 + 10, len);
        let path = dir.path().join(format!("f{i}"));
        write_plain(&path, &data);
        let direct = PosixFs
            .open_random_with(&path, direct())
            .expect("open direct");
        for _ in 0..200 {
            let off = rng.random_range(0..len);
            let n = rng.random_range(0..=len - off);
            let got = direct.read_vec(off as u64, n).expect("read");
            assert_eq!(got, &data[off..off + n], "len {len} read {off}+{n}");
        }
    }
}

/// Appends of random sizes (many smaller than a block, some larger than the 1 MiB
/// buffer), with `flush` and `sync` in between, give the same file as a buffered
/// writer; a sync in the middle leaves a file of exactly the appended length.
#[test]
fn direct_writes_are_byte_identical_to_buffered() {
    let Some(dir) = direct_io_tempdir() else {
        return;
    };
    let data = random_bytes(3, 3 * (1 << 20) + 12345);
    let mut rng = rand::rngs::StdRng::seed_from_u64(4);
    let mut cuts = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let n = match rng.random_range(0..10) {
            0 => rng.random_range(0..(1 << 21)),
            1..=3 => rng.random_range(0..5000),
            _ => rng.random_range(0..300),
        }
        .min(data.len() - at);
        cuts.push((at, n, rng.random_range(0..8)));
        at += n;
    }
    let paths: Vec<PathBuf> = ["buffered", "direct"]
        .iter()
        .map(|n| dir.path().join(n))
        .collect();
    for (path, opts) in paths.iter().zip([FileOptions::default(), direct()]) {
        let mut f = PosixFs.create_with(path, opts).expect("create");
        for &(at, n, action) in &cuts {
            f.append(&data[at..at + n]).expect("append");
            assert_eq!(f.len(), (at + n) as u64);
            match action {
                0 => f.flush().expect("flush"),
                1 => {
                    f.sync().expect("sync");
                    let on_disk = std::fs::read(path).expect("read");
                    assert_eq!(on_disk, &data[..at + n], "after a sync at {}", at + n);
                }
                _ => {}
            }
        }
        f.sync().expect("sync");
    }
    let buffered = std::fs::read(&paths[0]).expect("read");
    let direct = std::fs::read(&paths[1]).expect("read");
    assert_eq!(buffered.len(), data.len());
    assert!(buffered == data, "buffered file differs from the data");
    assert!(
        direct == buffered,
        "direct file differs from the buffered one"
    );
}

/// A direct writer dropped without `sync` still leaves the bytes (padded tail cut back
/// to the real length), as the buffered writer's best-effort flush on drop does.
#[test]
fn direct_writer_dropped_without_sync_leaves_exact_length() {
    let Some(dir) = direct_io_tempdir() else {
        return;
    };
    let path = dir.path().join("f");
    let data = random_bytes(5, 10_000);
    let mut f = PosixFs.create_with(&path, direct()).expect("create");
    f.append(&data).expect("append");
    drop(f);
    assert_eq!(std::fs::read(&path).expect("read"), data);
}

/// procfs refuses `O_DIRECT` with `EINVAL`: `InvalidArgument` naming the path, no
/// fallback to buffered I/O.
#[test]
fn refused_o_direct_is_invalid_argument_naming_the_path() {
    let path = Path::new("/proc/self/stat");
    if !path.exists() {
        eprintln!("SKIPPED: no /proc");
        return;
    }
    let e = PosixFs
        .open_random_with(path, direct())
        .err()
        .expect("refused");
    assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("/proc/self/stat") && msg.contains("O_DIRECT"),
        "{msg}"
    );
    // The buffered open of the same file works: the refusal is about direct I/O.
    assert!(PosixFs.open_random(path).is_ok());
}
