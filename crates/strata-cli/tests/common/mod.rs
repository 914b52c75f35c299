// Not a test file on its own: helpers shared by the integration tests (`mod common;`).
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Runs the `strata` binary with `args` (and stdin `input`), returning its output.
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
    child.wait_with_output().expect("wait strata")
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

/// `--db=DIR` for a path.
pub fn db_flag(dir: &Path) -> String {
    format!("--db={}", dir.display())
}
