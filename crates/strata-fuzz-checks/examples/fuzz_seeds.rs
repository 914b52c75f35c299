//! Writes the seed corpus of every fuzz target, made by the engine, to
//! `fuzz/corpus/<target>/seed-<name>` (or under the directory given as the argument).
//!
//! Run with `cargo run -p strata-fuzz-checks --example fuzz_seeds`. Existing files are
//! overwritten, never deleted, so inputs saved from fuzzing stay.

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let root = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus"));
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for (target, name, bytes) in strata_fuzz_checks::seeds::all() {
        // Every seed must pass its own check before it is committed.
        strata_fuzz_checks::check(target, &bytes);
        let dir = root.join(target);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(format!("seed-{name}")), &bytes)?;
        *counts.entry(target).or_default() += 1;
    }
    for (target, n) in counts {
        println!("{target}: {n} seeds");
    }
    Ok(())
}
