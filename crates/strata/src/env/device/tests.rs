//! The device model's delays under a manual clock (no real sleeps): single I/Os,
//! bandwidth-capped sequences, IOPS-capped bursts, queue-depth waits, large I/Os; the
//! wrapper's charging of reads, write-backs and syncs; forwarding of direct I/O with
//! byte-identical reads; and the string forms of a model.

use super::clock::ManualClock;
use super::model::{Direction, Io, Schedule, BURST};
use super::*;
use crate::env::{FaultFs, FileOptions, PosixFs};
use crate::error::Error;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

fn read(bytes: u64) -> Io {
    Io {
        dir: Direction::Read,
        bytes,
        sequential: false,
    }
}

/// 100 µs, 1 MiB/s (1 KiB transfers in 1/1024 s), 10,000 IOPS.
fn slow_model() -> DeviceModel {
    DeviceModel::from_figures(100.0, 1.0, 10_000.0).unwrap()
}

#[test]
fn one_read_takes_access_plus_transfer() {
    let m = slow_model();
    let mut s = Schedule::default();
    let done = s.admit(&m, us(0), read(4 * KIB));
    // 4 KiB at 1 MiB/s = 1/256 s.
    assert_eq!(done, us(100) + Duration::from_secs_f64(4.0 / 1024.0));
}

#[test]
fn sequential_io_pays_no_access_latency() {
    let m = slow_model();
    let mut s = Schedule::default();
    let io = Io {
        sequential: true,
        ..read(KIB)
    };
    assert_eq!(
        s.admit(&m, us(0), io),
        Duration::from_secs_f64(1.0 / 1024.0)
    );
}

#[test]
fn back_to_back_streams_run_at_the_bandwidth_cap() {
    // 100 MiB/s and no access latency: 1 MiB every 10 ms, from one thread or from eight.
    let m = DeviceModel::from_figures(0.0, 100.0, 1e9).unwrap();
    let mut s = Schedule::default();
    let mut now = Duration::ZERO;
    for _ in 0..10 {
        now = s.admit(&m, now, read(MIB));
    }
    assert_eq!(now, Duration::from_millis(100));

    // Eight at once: each starts 10 ms after the previous, less the bucket's credit.
    let mut s = Schedule::default();
    let last = (0..8).map(|_| s.admit(&m, us(0), read(MIB))).max();
    assert_eq!(last, Some(Duration::from_millis(80) - BURST));
}

#[test]
fn a_burst_is_paced_by_the_iops_cap() {
    // 1,000 IOPS: of ten reads arriving together, two start at once (the bucket holds
    // 1 ms of credit), then one per millisecond.
    let m = DeviceModel::from_figures(50.0, 1e6, 1_000.0).unwrap();
    let mut s = Schedule::default();
    let starts: Vec<u64> = (0..10)
        .map(|_| (s.admit(&m, us(0), read(0)) - us(50)).as_millis() as u64)
        .collect();
    assert_eq!(starts, [0, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
    // After an idle second the credit is back, but no more than 1 ms of it.
    let later: Vec<u64> = (0..3)
        .map(|_| (s.admit(&m, us(1_000_000), read(0)) - us(50)).as_millis() as u64)
        .collect();
    assert_eq!(later, [1_000, 1_000, 1_001]);
}

#[test]
fn an_io_larger_than_max_io_counts_as_several() {
    // 1,000 IOPS, 256 KiB per I/O: a 1 MiB read is four, so the next read waits 4 ms
    // (less the bucket's credit).
    let m = DeviceModel::from_figures(0.0, 1e6, 1_000.0)
        .unwrap()
        .with_max_io(256 * KIB);
    let mut s = Schedule::default();
    s.admit(&m, us(0), read(MIB));
    let next = s.admit(&m, us(0), read(0));
    assert_eq!(next, Duration::from_millis(4) - BURST);
}

#[test]
fn queue_depth_holds_the_extra_ios_until_a_slot_frees() {
    // Two slots, 1 ms each, no caps in the way: five reads at once finish at 1,1,2,2,3 ms.
    let m = DeviceModel::from_figures(1_000.0, 1e6, 1e9)
        .unwrap()
        .with_queue_depth(2);
    let mut s = Schedule::default();
    let done: Vec<u64> = (0..5)
        .map(|_| s.admit(&m, us(0), read(0)).as_micros() as u64)
        .collect();
    assert_eq!(done, [1_000, 1_000, 2_000, 2_000, 3_000]);
    // A read arriving after every slot freed starts at once.
    assert_eq!(s.admit(&m, us(10_000), read(0)), us(11_000));
}

#[test]
fn sixteen_threads_on_gp3_get_the_provisioned_iops() {
    // The paper's Table 1 line: 16 threads of random 16 KiB reads, 10,000 IOPS. Each
    // "thread" issues its next read when its previous one completes.
    let m = DeviceModel::gp3();
    let mut s = Schedule::default();
    let mut next: Vec<Duration> = vec![Duration::ZERO; 16];
    let mut ios = 0u64;
    let horizon = Duration::from_secs(1);
    loop {
        let (i, t) = next
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|(_, t)| *t)
            .unwrap();
        if t >= horizon {
            break;
        }
        next[i] = s.admit(&m, t, read(16 * KIB));
        ios += 1;
    }
    assert!((10_000..=10_020).contains(&ios), "{ios}");
}

/// A `DeviceFs` over an in-memory file system with one device at `/dev0`, on a manual
/// clock.
fn device_fs(model: DeviceModel) -> (DeviceFs, Arc<ManualClock>, Arc<FaultFs>) {
    let clock = Arc::new(ManualClock::default());
    let inner = Arc::new(FaultFs::new());
    inner.create_dir_all(Path::new("/dev0")).unwrap();
    let fs = DeviceFs::with_clock(Arc::clone(&inner) as Arc<dyn FileSystem>, clock.clone())
        .with_device("/dev0", model);
    (fs, clock, inner)
}

#[test]
fn writes_are_charged_when_they_leave_the_buffer_and_sync_pays_the_access() {
    // 100 µs access, 1 MiB/s, I/Os of 1 MiB.
    let (fs, clock, _) = device_fs(slow_model());
    let mut f = fs.create(Path::new("/dev0/f")).unwrap();
    let chunk = vec![7u8; 400 * KIB as usize];
    f.append(&chunk).unwrap();
    f.append(&chunk).unwrap();
    assert_eq!(clock.now(), Duration::ZERO, "800 KiB stay below one I/O");
    f.append(&chunk).unwrap();
    // 1 MiB written back, sequential: 1 s at 1 MiB/s.
    assert_eq!(clock.now(), Duration::from_secs(1));
    f.sync().unwrap();
    // The other 176 KiB, then the sync's access latency.
    let rest = Duration::from_secs_f64(176.0 / 1024.0);
    assert_eq!(clock.now(), Duration::from_secs(1) + rest + us(100));
    let st = fs.stats(Path::new("/dev0")).unwrap();
    assert_eq!((st.writes, st.bytes_written, st.syncs), (2, 1200 * KIB, 1));
    assert_eq!(st.delay, clock.now());
}

#[test]
fn reads_pay_the_model_and_sequential_ones_skip_the_access() {
    let (fs, clock, inner) = device_fs(slow_model());
    inner.set_file_bytes("/dev0/f", &[1u8; 8192]);
    let f = fs.open_random(Path::new("/dev0/f")).unwrap();
    let kib = Duration::from_secs_f64(1.0 / 1024.0);
    f.read_vec(0, 1024).unwrap();
    assert_eq!(clock.now(), us(100) + kib);
    f.read_vec(1024, 1024).unwrap();
    assert_eq!(clock.now(), us(100) + kib * 2, "sequential: transfer only");
    let mut buf = [0u8; 1024];
    f.read_exact_at(4096, &mut buf).unwrap();
    assert_eq!(clock.now(), us(200) + kib * 3);
    let st = fs.stats(Path::new("/dev0")).unwrap();
    assert_eq!((st.reads, st.bytes_read), (3, 3 * KIB));

    let mut seq = fs.open_sequential(Path::new("/dev0/f")).unwrap();
    let before = clock.now();
    assert_eq!(seq.read(&mut buf).unwrap(), 1024);
    assert_eq!(seq.read(&mut buf).unwrap(), 1024);
    assert_eq!(clock.now() - before, us(100) + kib * 2);
}

#[test]
fn files_outside_every_device_are_not_delayed() {
    let (fs, clock, inner) = device_fs(slow_model());
    inner.create_dir_all(Path::new("/dev0-not")).unwrap();
    for path in ["/dev0-not/f", "/other"] {
        let mut w = fs.create(Path::new(path)).unwrap();
        w.append(&[1u8; 2 * MIB as usize]).unwrap();
        w.sync().unwrap();
        fs.open_random(Path::new(path))
            .unwrap()
            .read_vec(0, 4096)
            .unwrap();
    }
    assert_eq!(clock.now(), Duration::ZERO);
    assert_eq!(fs.stats(Path::new("/dev0")), Some(DeviceStats::default()));
    assert_eq!(fs.stats(Path::new("/dev0-not")), None);
}

#[test]
fn the_longest_registered_prefix_wins() {
    let clock = Arc::new(ManualClock::default());
    let inner = Arc::new(FaultFs::new());
    inner.create_dir_all(Path::new("/a/b")).unwrap();
    let fs = DeviceFs::with_clock(inner, clock.clone())
        .with_device("/a", DeviceModel::hdd())
        .with_device("/a/b", DeviceModel::nvme());
    let mut w = fs.create(Path::new("/a/b/f")).unwrap();
    w.sync().unwrap();
    assert_eq!(clock.now(), us(85));
    assert_eq!(fs.stats(Path::new("/a/b")).map(|s| s.syncs), Some(1));
    assert_eq!(fs.stats(Path::new("/a")).map(|s| s.syncs), Some(0));
}

#[test]
fn direct_io_is_forwarded_to_the_inner_file_system() {
    let (fs, _, inner) = device_fs(slow_model());
    let direct = FileOptions::default().with_direct(true);
    fs.create_with(Path::new("/dev0/t"), direct).unwrap();
    fs.create(Path::new("/dev0/u")).unwrap();
    fs.open_random_with(Path::new("/dev0/u"), direct).unwrap();
    fs.open_random(Path::new("/dev0/t")).unwrap();
    let want = [PathBuf::from("/dev0/t"), PathBuf::from("/dev0/u")];
    assert_eq!(inner.direct_paths(), want);
    inner.set_direct_io_supported(false);
    let err = fs.open_random_with(Path::new("/dev0/t"), direct).err();
    assert!(matches!(err, Some(Error::InvalidArgument(_))), "{err:?}");
}

#[test]
fn direct_reads_through_the_device_are_the_inner_bytes() {
    let Some(dir) = crate::env::direct_io_tempdir() else {
        return;
    };
    let clock = Arc::new(ManualClock::default());
    let fs = DeviceFs::with_clock(Arc::new(PosixFs), clock.clone())
        .with_device(dir.path(), DeviceModel::nvme());
    let path = dir.path().join("t");
    let data: Vec<u8> = (0..20_011u32).map(|i| (i * 31 % 251) as u8).collect();
    let direct = FileOptions::default().with_direct(true);
    let mut w = fs.create_with(&path, direct).unwrap();
    w.append(&data).unwrap();
    w.sync().unwrap();
    let f = fs.open_random_with(&path, direct).unwrap();
    for (off, len) in [
        (0, 20_011),
        (1, 511),
        (4095, 4098),
        (16_384, 3_627),
        (20_010, 1),
    ] {
        let got = f.read_vec(off as u64, len).unwrap();
        assert_eq!(got, data[off..off + len], "offset {off} len {len}");
    }
    let st = fs.stats(dir.path()).unwrap();
    assert_eq!((st.reads, st.syncs), (5, 1));
    assert!(clock.now() > Duration::ZERO);
}

#[test]
fn presets_and_figures_parse() {
    for name in DeviceModel::PRESETS {
        let m: DeviceModel = name.parse().unwrap();
        assert_eq!(m, DeviceModel::preset(name).unwrap());
        assert_eq!(m.to_string(), name);
    }
    let m: DeviceModel = " 85, 3052.5 ,490000".parse().unwrap();
    assert_eq!(m.access_latency(), us(85));
    assert_eq!((m.read_mib_per_s(), m.write_mib_per_s()), (3052.5, 3052.5));
    assert_eq!(m.iops(), 490_000.0);
    assert_eq!(m.to_string().parse::<DeviceModel>().unwrap(), m);
}

#[test]
fn bad_model_strings_are_clear_errors() {
    for (input, says) in [
        ("", "unknown preset ``"),
        ("ssd", "unknown preset `ssd`"),
        ("1,2", "want three figures"),
        ("1,2,3,4", "got 4"),
        ("a,1,1", "`a` is not a number"),
        ("-1,1,1", "latency_us=`-1`"),
        ("1,0,1", "mib_per_s=`0`"),
        ("1,1,inf", "iops=`inf`"),
        ("1,NaN,1", "mib_per_s=`NaN`"),
    ] {
        match input.parse::<DeviceModel>() {
            Err(Error::InvalidArgument(msg)) => assert!(msg.contains(says), "{input}: {msg}"),
            other => panic!("{input}: {other:?}"),
        }
    }
}
