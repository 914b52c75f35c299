//! The six measurements of `strata device-bench`, each through the engine's own
//! `FileSystem` with direct I/O (buffered with `--buffered`): a sequential write that lays out the test file, random
//! reads of 4 KiB and 16 KiB at queue depth 1 and 16, and a sequential read.
//!
//! Queue depth `n` is `n` threads, each with one read outstanding (a synchronous
//! `pread` per I/O): fio's `--ioengine=psync --numjobs=n --thread`, the way the HotRAP
//! paper states its "16 threads rand 16K read IOPS".

use crate::error::{CliError, Result};
use crate::runner::{run_parallel, OpStats};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use strata::env::{FileOptions, FileSystem, RandomAccessFile};

/// Bytes of one sequential I/O.
pub const SEQ_IO: u64 = 1 << 20;

/// What one measurement does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Appends of [`SEQ_IO`] bytes from one thread, then a sync.
    SeqWrite,
    /// Reads of [`SEQ_IO`] bytes front to back from one thread (wrapping at the end).
    SeqRead,
    /// Reads of `block_size` bytes at uniformly random aligned offsets.
    RandRead,
}

/// One line of the report.
#[derive(Clone, Copy, Debug)]
pub struct Test {
    /// The line's name in the table and the JSON (`randread-4k-qd16`).
    pub name: &'static str,
    /// What it does.
    pub pattern: Pattern,
    /// Bytes per I/O.
    pub block_size: u64,
    /// Threads, each with one I/O outstanding.
    pub queue_depth: usize,
}

/// Every line, in the order they run (the write first: it creates the file the reads
/// read).
pub const TESTS: [Test; 6] = [
    Test {
        name: "seqwrite-1m",
        pattern: Pattern::SeqWrite,
        block_size: SEQ_IO,
        queue_depth: 1,
    },
    Test {
        name: "randread-4k-qd1",
        pattern: Pattern::RandRead,
        block_size: 4096,
        queue_depth: 1,
    },
    Test {
        name: "randread-4k-qd16",
        pattern: Pattern::RandRead,
        block_size: 4096,
        queue_depth: 16,
    },
    Test {
        name: "randread-16k-qd1",
        pattern: Pattern::RandRead,
        block_size: 16384,
        queue_depth: 1,
    },
    Test {
        name: "randread-16k-qd16",
        pattern: Pattern::RandRead,
        block_size: 16384,
        queue_depth: 16,
    },
    Test {
        name: "seqread-1m",
        pattern: Pattern::SeqRead,
        block_size: SEQ_IO,
        queue_depth: 1,
    },
];

/// What a measurement saw: per-I/O latencies and the wall time of the whole run.
#[derive(Debug)]
pub struct Measured {
    /// Per-I/O latency and bytes, all threads merged.
    pub stats: OpStats,
    /// Time measured: for reads, wall time from the first I/O to the last completion;
    /// for the write, the appends plus the final sync.
    pub elapsed: Duration,
}

/// Writes `size` bytes (rounded down to whole [`SEQ_IO`]s, at least one) to `file` with
/// direct I/O and syncs it. Every MiB is fresh random bytes (fio's `--refill_buffers`):
/// this machine's virtual disk read back zeros 1.6 times as fast as random bytes in one
/// fio trial, which would flatter the read lines. The random fill is outside the
/// measured time: `elapsed` is the appends plus, with direct I/O, the final sync. With
/// buffered I/O that sync is the page cache writing the whole file back to this disk,
/// work a device model never sees (it charged the bytes as they were appended), so it
/// runs untimed: `--buffered` measures the model without the disk under it.
///
/// # Errors
/// The file system's error (e.g. `InvalidArgument` if the directory refuses
/// `O_DIRECT`).
pub fn seq_write(
    fs: &dyn FileSystem,
    file: &Path,
    opts: FileOptions,
    size: u64,
) -> Result<Measured> {
    let ios = (size / SEQ_IO).max(1);
    let (mut results, _) = run_parallel("seqwrite-1m", 1, Some(ios), |_, progress| {
        let mut rng = SmallRng::seed_from_u64(0x5eed);
        let mut chunk = vec![0u8; SEQ_IO as usize];
        let mut w = fs.create_with(file, opts)?;
        let mut stats = OpStats::default();
        let mut busy = Duration::ZERO;
        for _ in 0..ios {
            rng.fill(chunk.as_mut_slice());
            let start = Instant::now();
            w.append(&chunk)?;
            busy += start.elapsed();
            stats.record(start, chunk.len());
            progress.add(1);
        }
        let start = Instant::now();
        w.sync()?;
        if opts.direct {
            busy += start.elapsed();
        }
        Ok(Measured {
            stats,
            elapsed: busy,
        })
    })?;
    results
        .pop()
        .ok_or_else(|| CliError::WorkerPanic("no writer result".into()))
}

/// Runs a read `test` on `file`, opened as `opts` says, for `duration`.
///
/// # Errors
/// The file system's error, or a usage error if the file is smaller than one I/O.
pub fn read(
    fs: &dyn FileSystem,
    file: &Path,
    opts: FileOptions,
    test: &Test,
    duration: Duration,
) -> Result<Measured> {
    let f: Arc<dyn RandomAccessFile> = fs.open_random_with(file, opts)?;
    let blocks = f.size() / test.block_size;
    if blocks == 0 {
        return Err(CliError::Usage(format!(
            "--size=`{}` is smaller than one {}-byte read",
            f.size(),
            test.block_size
        )));
    }
    let deadline = Instant::now() + duration;
    let (results, elapsed) = run_parallel(test.name, test.queue_depth, None, |tid, progress| {
        let mut rng = SmallRng::seed_from_u64(0x5eed + tid as u64);
        let mut stats = OpStats::default();
        let len = test.block_size as usize;
        let mut i = 0u64;
        // The deadline is checked before every I/O: a slow model's I/O takes
        // milliseconds, so checking every few dozen would overrun short runs.
        while Instant::now() < deadline {
            let block = match test.pattern {
                Pattern::RandRead => rng.random_range(0..blocks),
                Pattern::SeqRead | Pattern::SeqWrite => i % blocks,
            };
            let start = Instant::now();
            f.read_vec(block * test.block_size, len)?;
            stats.record(start, len);
            progress.add(1);
            i += 1;
        }
        Ok(stats)
    })?;
    let mut stats = OpStats::default();
    for r in &results {
        stats.merge(r);
    }
    Ok(Measured { stats, elapsed })
}
