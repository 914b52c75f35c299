//! Protects: `strata stress --on_no_space=wait` rides out a real full disk and loses no
//! acknowledged write (docs/ARCHITECTURE.md §7.8).
//!
//! The database lives on a tmpfs of its own, sized 1 MiB above what an empty database
//! takes, so the stress fills it within a second; the test then grows the tmpfs while
//! the same process keeps writing. The run must report refusals (`no_space_refused`),
//! take writes again after the grow (a `no_space: resumed` line after it), finish, and
//! verify every key against the expected state, refused writes settled back.
//!
//! Mounting needs root (CAP_SYS_ADMIN); elsewhere the test prints SKIPPED and passes.
//! `scripts/crash-test.sh` with `CRASH_NO_SPACE` is the long version, with kills.

mod common;

use common::{field, ok};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A tmpfs mounted on a new directory, unmounted on drop.
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    fn mount(dir: &Path, kib: u64) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).expect("mkdir");
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir)
            .stderr(Stdio::null())
            .status()
            .ok()?;
        status.success().then(|| Tmpfs {
            dir: dir.to_path_buf(),
        })
    }

    fn resize(&self, kib: u64) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,size={kib}k")])
            .arg(&self.dir)
            .status()
            .expect("remount");
        assert!(status.success(), "remount to {kib} KiB");
    }

    /// KiB used on the tmpfs.
    fn used_kib(&self) -> u64 {
        let out = Command::new("df")
            .args(["-k", "--output=used"])
            .arg(&self.dir)
            .output()
            .expect("df");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .expect("df output")
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[test]
fn stress_rides_out_a_full_tmpfs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some(disk) = Tmpfs::mount(&tmp.path().join("disk"), 64 << 10) else {
        eprintln!("SKIPPED: cannot mount a tmpfs here (needs root)");
        return;
    };
    let db = disk.dir.join("db");
    let expected = tmp.path().join("db.expected");
    let db_flag = format!("--db={}", db.display());
    let expected_flag = format!("--expected_state={}", expected.display());
    let stress = |extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_strata"));
        c.arg("stress")
            .arg(&db_flag)
            .arg(&expected_flag)
            .args(extra);
        c
    };
    // An empty database, to size the disk from.
    ok(
        &[
            "stress",
            &db_flag,
            &expected_flag,
            "--threads=1",
            "--ops_per_thread=1",
            "--value_size=400",
        ],
        None,
    );
    disk.resize(disk.used_kib() + 1024);

    let mut child = stress(&[
        "--use_existing_db",
        "--seed=7",
        "--threads=4",
        "--duration=6",
        "--ops_per_thread=0",
        "--write_buffer_size=262144",
        "--target_file_size_base=131072",
        "--on_no_space=wait",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawn stress");
    let stdout = child.stdout.take().expect("stdout");
    let lines = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.0.send(line).is_err() {
                break;
            }
        }
    });
    // Wait for the disk to fill, leave it full a moment, grow it.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    let mut refused = false;
    while !refused && Instant::now() < deadline {
        if let Ok(line) = lines.1.recv_timeout(Duration::from_millis(100)) {
            refused |= line.starts_with("no_space: refused");
            seen.push(line);
        }
    }
    if !refused {
        let _ = child.kill();
        let out = child.wait_with_output().expect("stress");
        panic!(
            "the disk never filled: {seen:?} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::thread::sleep(Duration::from_millis(300));
    let grown_at = unix_ms();
    disk.resize(disk.used_kib() + (32 << 10));
    let out = child.wait_with_output().expect("stress");
    reader.join().expect("reader");
    seen.extend(lines.1.try_iter());
    assert!(
        out.status.success(),
        "stress failed: {}\n{seen:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = seen
        .iter()
        .rev()
        .find(|l| l.starts_with("stress: ok"))
        .expect("summary line");
    assert!(field(summary, "no_space_refused") > 0, "{summary}");
    assert!(
        seen.iter().any(|l| l.starts_with("verify after run: ok")),
        "{seen:?}"
    );
    let resumed_after_grow = seen
        .iter()
        .any(|l| l.starts_with("no_space: resumed") && field(l, "unix_ms") >= grown_at);
    assert!(
        resumed_after_grow,
        "no write was accepted after the disk grew: {seen:?}"
    );
    // And a fresh process finds every acknowledged write.
    ok(&["stress", &db_flag, &expected_flag, "--verify_only"], None);
}
