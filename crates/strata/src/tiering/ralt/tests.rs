//! RALT end to end on the fault file system: hot keys found, ranges measured, limits
//! kept by eviction, state across a reopen, and a crash losing only the buffer.

use super::*;
use crate::env::FaultFs;

const DIR: &str = "/ralt";

fn key(i: u32) -> Vec<u8> {
    format!("user{i:08}").into_bytes()
}

/// A RALT for a 4 MiB fast tier: 64 KiB buffers, 1 KiB blocks.
fn options() -> RaltOptions {
    RaltOptions {
        buffer_bytes: 64 << 10,
        block_size: 1 << 10,
        table_size: 64 << 10,
        ..RaltOptions::new(4 << 20)
    }
}

fn open(fs: &Arc<FaultFs>, opts: RaltOptions) -> Ralt {
    Ralt::open(Arc::clone(fs) as Arc<dyn FileSystem>, Path::new(DIR), opts).expect("open")
}

/// Accesses keys 0..`n` once each, then the keys `hot` `rounds` more times each.
fn workload(ralt: &Ralt, n: u32, hot: &[u32], rounds: u32) {
    for i in 0..n {
        ralt.access(&key(i), 100);
        if i % 500 == 499 {
            ralt.settle().expect("settle");
        }
    }
    for _ in 0..rounds {
        for &i in hot {
            ralt.access(&key(i), 100);
        }
        ralt.settle().expect("settle");
    }
    ralt.settle().expect("settle");
}

#[test]
fn before_any_eviction_every_tracked_key_is_hot() {
    let fs = Arc::new(FaultFs::new());
    let ralt = open(&fs, options());
    for i in 0..100 {
        ralt.access(&key(i), 100);
    }
    assert!(!ralt.is_hot(&key(5)), "buffered accesses do not count");
    ralt.settle().expect("settle");
    assert!((0..100).all(|i| ralt.is_hot(&key(i))));
    assert!(!ralt.is_hot(&key(100)));
    // 100 keys of 12 + 100 bytes: the range estimate covers whole blocks, so it is at
    // least the truth and at most the table's hot bytes.
    let all = ralt.range_hot(&key(0), &key(99));
    assert_eq!(all, (100 * 112, 100));
    let part = ralt.range_hot(&key(10), &key(19));
    assert!((10 * 112..=all.0).contains(&part.0), "{part:?}");
    assert!((10..=100).contains(&part.1), "{part:?}");
    assert_eq!(ralt.range_hot(&key(200), &key(300)), (0, 0));
    let s = ralt.stats();
    assert_eq!((s.accesses, s.flushes, s.hot_bytes), (100, 1, 100 * 112));
    ralt.settle().expect("settle");
    drop(ralt);
}

/// A hot set of 200 keys among 20,000 read once, a fixed 1 MiB hot-set limit (9,000
/// keys' worth): after evictions the hot keys stay hot and cold keys only fill the
/// limit, the
/// hot bytes stay near the limit, the tree's files near the physical limit, and an
/// eviction comes only every few flushes (2β of the limit arrives between two).
#[test]
fn evictions_keep_the_hot_set_and_the_limits() {
    let fs = Arc::new(FaultFs::new());
    let opts = RaltOptions {
        auto_tune: false,
        hot_limit: 1 << 20,
        phys_limit: 2 << 20,
        ..options()
    };
    let ralt = open(&fs, opts);
    let hot: Vec<u32> = (0..20_000).step_by(100).collect();
    workload(&ralt, 20_000, &hot, 20);
    let s = ralt.stats();
    assert!(s.evictions > 0, "{s:?}");
    assert_eq!(s.accesses_dropped, 0, "{s:?}");
    assert!(s.evictions < s.flushes / 2, "{s:?}");
    assert!(hot.iter().all(|&i| ralt.is_hot(&key(i))), "{s:?}");
    let cold_hot = (0..20_000)
        .filter(|i| i % 100 != 0 && ralt.is_hot(&key(*i)))
        .count();
    // Hot keys fill the limit, no more: the cold ones among them hold what the 200
    // hot ones leave (each key 12 + 100 bytes), with β of slack and one buffer.
    assert!(
        cold_hot as u64 * 112 <= s.hot_limit * 11 / 10 + (64 << 10),
        "{cold_hot} cold keys hot: {s:?}"
    );
    assert!(s.hot_bytes <= s.hot_limit * 11 / 10 + (64 << 10), "{s:?}");
    assert!(s.phys_bytes <= s.phys_limit * 2, "{s:?}");
    ralt.settle().expect("settle");
    drop(ralt);
}

/// With auto-tuning, the limits follow Algorithm 1 from the stable records: keys read
/// again while tracked become stable and stay hot.
#[test]
fn auto_tuning_sets_limits_from_stable_records() {
    let fs = Arc::new(FaultFs::new());
    let opts = RaltOptions {
        hot_limit: 100 << 10,
        phys_limit: 256 << 10,
        ..options()
    };
    let ralt = open(&fs, opts);
    let hot: Vec<u32> = (0..30_000).step_by(150).collect();
    workload(&ralt, 30_000, &hot, 10);
    let s = ralt.stats();
    assert!(s.evictions > 0, "{s:?}");
    let t = Tuning::for_fd_size(4 << 20);
    assert!((t.min_hot..=t.max_hot).contains(&s.hot_limit), "{s:?}");
    assert!(hot.iter().all(|&i| ralt.is_hot(&key(i))), "{s:?}");
    ralt.settle().expect("settle");
    drop(ralt);
}

#[test]
fn a_clean_reopen_keeps_everything_and_a_crash_only_the_buffer() {
    let fs = Arc::new(FaultFs::new());
    let ralt = open(&fs, options());
    for i in 0..500 {
        ralt.access(&key(i), 10);
    }
    ralt.settle().expect("settle");
    drop(ralt);
    let ralt = open(&fs, options());
    assert!((0..500).all(|i| ralt.is_hot(&key(i))));
    let before = ralt.stats();
    assert_eq!(before.hot_bytes, 500 * 22);
    // Unflushed accesses are lost by a crash; the flushed tables are not.
    for i in 500..600 {
        ralt.access(&key(i), 10);
    }
    fs.crash();
    drop(ralt);
    let ralt = open(&fs, options());
    assert!((0..500).all(|i| ralt.is_hot(&key(i))));
    assert!(!ralt.is_hot(&key(550)));
    ralt.settle().expect("settle");
    drop(ralt);
}

/// A damaged list is `Corruption` naming it; RALT then opens empty in its place
/// (counted), for the hotness it recorded is all it can lose.
#[test]
fn a_damaged_list_is_corruption_naming_it_and_ralt_starts_over() {
    let fs = Arc::new(FaultFs::new());
    let ralt = open(&fs, options());
    ralt.access(b"k", 1);
    ralt.settle().expect("settle");
    drop(ralt);
    let path = Path::new(DIR).join(tree::LIST);
    let mut data = crate::env::read_to_vec(fs.as_ref(), &path).expect("read");
    data[20] ^= 1;
    crate::env::write_file_atomic(fs.as_ref(), Path::new(DIR), tree::LIST, &data).expect("write");
    let io = Arc::new(RaltIo::default());
    let err = load(fs.as_ref(), Path::new(DIR), &io).expect_err("damaged");
    assert_eq!(err.kind(), crate::ErrorKind::Corruption, "{err}");
    assert!(err.to_string().contains("TABLES"), "{err}");
    let ralt = open(&fs, options());
    assert_eq!(ralt.stats().resets, 1);
    assert!(!ralt.is_hot(b"k"));
    ralt.access(b"k", 1);
    ralt.settle().expect("settle");
    assert!(ralt.is_hot(b"k"));
    drop(ralt);
    let ralt = open(&fs, options());
    assert_eq!(ralt.stats().resets, 0, "the new list reads back");
    assert!(ralt.is_hot(b"k"));
}

/// A table whose data block is damaged fails the merge that meets it: RALT starts
/// over empty instead of failing every later merge, and keeps recording.
#[test]
fn a_damaged_table_met_by_a_merge_resets_ralt() {
    let fs = Arc::new(FaultFs::new());
    let ralt = open(&fs, options());
    for i in 0..600 {
        ralt.access(&key(i), 100);
    }
    ralt.settle().expect("settle");
    let table = ralt
        .shared
        .version
        .load()
        .tables()
        .map(|(_, t)| t.number)
        .next();
    let path = tree::table_path(Path::new(DIR), table.expect("a table"));
    fs.corrupt_byte(&path, 10, 0x40).expect("corrupt");
    // Enough buffers to trigger L0's merge, which reads the damaged block.
    for round in 0..L0_TRIGGER as u32 {
        for i in 0..600 {
            ralt.access(&key(1000 * (round + 1) + i), 100);
        }
        ralt.settle().ok();
    }
    ralt.settle().expect("settled after the reset");
    let s = ralt.stats();
    assert_eq!(s.resets, 1, "{s:?}");
    assert!(!ralt.is_hot(&key(0)), "the damaged table's keys are gone");
    ralt.access(&key(7), 100);
    ralt.settle().expect("settle");
    assert!(ralt.is_hot(&key(7)));
}
