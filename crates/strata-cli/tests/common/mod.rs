// Not a test file on its own: helpers shared by the integration tests (`mod common;`).
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Longest a single `strata` run may take before the test kills it and fails: a hung
/// engine must fail CI, not stall it. (fjall 3.1.13 deadlocked here twice, every thread
/// blocked sending to its full worker queue; `engine_fjall.rs` now runs it with larger
/// memtables.)
const RUN_LIMIT: std::time::Duration = std::time::Duration::from_secs(600);

/// Runs the `strata` binary with `args` (and stdin `input`), returning its output.
/// Panics if the run takes longer than [`RUN_LIMIT`] (the process is killed first).
pub fn strata(args: &[&str], input: Option<&str>) -> Output {
    use std::io::Write;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
    cmd.args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn strata");
    if let Some(stdin) = child.stdin.as_mut() {
        stdin
            .write_all(input.unwrap_or("").as_bytes())
            .expect("write stdin");
    }
    drop(child.stdin.take());
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(RUN_LIMIT) {
        Ok(out) => out.expect("wait strata"),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("strata {args:?} did not finish within {RUN_LIMIT:?}: killed (hung?)");
        }
    }
}

/// Stderr of a run that must fail (given stdin `input`) with one `error: ` line.
pub fn fails_with(args: &[&str], input: Option<&str>) -> String {
    let out = strata(args, input);
    assert!(!out.status.success(), "strata {args:?} succeeded");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.starts_with("error: ") && err.lines().count() == 1,
        "{args:?}: {err}"
    );
    err
}

/// Stdout of a run that must succeed.
pub fn ok(args: &[&str], input: Option<&str>) -> String {
    let out = strata(args, input);
    assert!(
        out.status.success(),
        "strata {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

/// Runs `strata experiment <name>` with `flags` in `dir` (scratch database
/// `dir/scratch`, JSON lines `dir/<name>.jsonl`, charts `dir/charts`), which must
/// succeed; returns stdout and the JSON lines.
pub fn experiment(dir: &Path, name: &str, flags: &[&str]) -> (String, Vec<serde_json::Value>) {
    let json = dir.join(format!("{name}.jsonl"));
    let mut args = vec![
        "experiment".to_string(),
        name.to_string(),
        db_flag(&dir.join("scratch")),
        format!("--json={}", json.display()),
        format!("--charts={}", dir.join("charts").display()),
    ];
    args.extend(flags.iter().map(|f| f.to_string()));
    let stdout = ok(&args.iter().map(String::as_str).collect::<Vec<_>>(), None);
    let rows = json_rows(&std::fs::read_to_string(&json).expect("json lines"));
    (stdout, rows)
}

/// The records of a JSON-lines text, each line one; panics on a line that is not JSON.
pub fn json_rows(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// The `name` of each record (empty where missing).
pub fn names(rows: &[serde_json::Value]) -> Vec<&str> {
    rows.iter()
        .map(|r| r["name"].as_str().unwrap_or(""))
        .collect()
}

/// Runs `strata bench` with `flags` on the database `dir/db`, appending JSON records to
/// `dir/bench.jsonl`; returns stdout and the records.
pub fn bench_with_json(dir: &Path, flags: &[&str]) -> (String, String) {
    let json = dir.join("bench.jsonl");
    let mut args = vec![
        "bench".to_string(),
        db_flag(&dir.join("db")),
        format!("--json={}", json.display()),
    ];
    args.extend(flags.iter().map(|f| f.to_string()));
    let out = ok(&args.iter().map(String::as_str).collect::<Vec<_>>(), None);
    (out, std::fs::read_to_string(&json).expect("json records"))
}

/// The number after `name=` among the words of `line`; panics naming both if absent.
pub fn field(line: &str, name: &str) -> u64 {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{name}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name}= in {line}"))
}

/// `--db=DIR` for a path.
pub fn db_flag(dir: &Path) -> String {
    format!("--db={}", dir.display())
}

/// Asserts that the `readrandom` line of a bench run over `fillrandom` found about
/// 1 - 1/e of the keys (uniform random fill with repeats: 63.2%).
pub fn assert_readrandom_found_63_percent(out: &str) {
    let line = out
        .lines()
        .find(|l| l.starts_with("readrandom"))
        .expect("readrandom line");
    let (found, of) = line
        .split("(found ")
        .nth(1)
        .and_then(|s| s.trim_end_matches(')').split_once(" of "))
        .and_then(|(a, b)| Some((a.parse::<f64>().ok()?, b.parse::<f64>().ok()?)))
        .expect("found X of Y");
    assert!((found / of - 0.632).abs() < 0.02, "{line}");
}

/// Every `bench` benchmark, in an order each can run in, on a tree small enough that
/// 20,000 keys flush and compact: the flags after `--engine`/`--db`.
pub const EVERY_BENCHMARK_SMALL_TREE: &[&str] = &[
    "--num=20000",
    "--benchmarks=fillseq,fillrandom,overwrite,readrandom,readseq,readreverse,seekrandom,readwhilewriting,readrandomwriterandom,deleterandom,flush,compact,waitforcompaction,stats",
    "--write_buffer_size=65536",
    "--target_file_size_base=65536",
    "--max_bytes_for_level_base=262144",
    "--threads=2",
];
