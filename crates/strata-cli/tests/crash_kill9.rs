//! Protects: no acknowledged write is lost when the process is killed with SIGKILL
//! (`kill -9`), under varying engine options; `strata stress --verify_only` checks it.
//!
//! Each cycle starts `strata stress` on the same database (tiny memtables and files so
//! flushes and compactions run during the short window), waits until its workers run,
//! lets it work for a few hundred milliseconds, kills it with SIGKILL
//! (`Child::kill`), then runs `strata stress --verify_only`, which must report every key
//! right and settle the writes left in flight. The database has three column families
//! (`--column_families=3`): writes land in all of them, batches span them, and every
//! family is verified. A short version of `scripts/crash-test.sh`.

mod common;

use common::{db_flag, field, ok};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Option sets the cycles rotate through.
const OPTION_SETS: &[&[&str]] = &[
    &["--compression_type=none"],
    &[
        "--compression_type=lz4",
        "--compaction_output_partitioning=aligned",
    ],
    &[
        "--compression_type=zstd",
        "--snapshot_filter=false",
        "--bloom_bits=0",
    ],
    &[
        "--sync=true",
        "--compaction_pri=oldest_smallest_seq_first",
        "--cache_size=0",
    ],
    &["--max_background_jobs=3", "--block_size=256"],
];

#[test]
fn kill9_loses_no_acknowledged_write() {
    let start = Instant::now();
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = db_flag(&tmp.path().join("db"));
    let cycles = 4;
    let mut last_acked = 0;
    for cycle in 0..cycles {
        let mut args: Vec<String> = vec![
            "stress".into(),
            db.clone(),
            format!("--seed={}", 1000 + cycle),
            "--max_key=2000".into(),
            "--column_families=3".into(),
            "--threads=4".into(),
            "--duration=60".into(),
            "--ops_per_thread=0".into(),
            "--write_buffer_size=16384".into(),
            "--target_file_size_base=8192".into(),
            "--max_bytes_for_level_base=65536".into(),
            "--level0_file_num_compaction_trigger=2".into(),
            "--flush_one_in=500".into(),
            "--compact_range_one_in=1000".into(),
        ];
        if cycle > 0 {
            args.push("--use_existing_db".into());
        }
        args.extend(
            OPTION_SETS[cycle as usize % OPTION_SETS.len()]
                .iter()
                .map(|s| s.to_string()),
        );
        let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn strata stress");
        // Wait for "stress: ..." and "verify before run: ..." (workers start next).
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        for _ in 0..2 {
            let line = lines.next().expect("a line").expect("utf-8");
            assert!(!line.contains("error"), "{line}");
        }
        std::thread::sleep(Duration::from_millis(250 + 100 * cycle));
        child.kill().expect("SIGKILL");
        let status = child.wait().expect("wait");
        assert!(
            !status.success(),
            "cycle {cycle}: stress ended before it was killed"
        );

        let out = ok(&["stress", &db, "--verify_only"], None);
        let line = out.lines().last().expect("a line");
        // 2000 keys in each of 3 families.
        assert!(
            line.starts_with("verify: ok keys=6000 families=3 "),
            "{line}"
        );
        let acked = field(line, "acked_writes_total");
        println!(
            "cycle {cycle}: acked writes {} (total {acked}), present {}, in flight new {}, old {}",
            acked - last_acked,
            field(line, "present"),
            field(line, "in_flight_new"),
            field(line, "in_flight_old"),
        );
        assert!(
            acked > last_acked,
            "cycle {cycle} acknowledged nothing: {line}"
        );
        last_acked = acked;
    }
    assert!(last_acked > 0, "no cycle acknowledged a write");
    println!(
        "kill -9: {cycles} cycles, {last_acked} acknowledged writes, all verified, {:.1}s",
        start.elapsed().as_secs_f64()
    );
}
