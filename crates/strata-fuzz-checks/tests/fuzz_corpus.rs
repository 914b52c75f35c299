//! Replays the fuzz corpus as ordinary tests: every file under `fuzz/corpus/<target>/`
//! (seeds and saved interesting inputs) and `fuzz/regressions/<target>/` (inputs that
//! once crashed a target) goes through the same check as the cargo-fuzz target. Needs
//! neither cargo-fuzz nor a nightly toolchain.

use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// Files directly under `dir`, sorted; none if it does not exist.
fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// Runs `target`'s check on every corpus and regression file; fails naming every input
/// that panicked. Returns how many corpus files were replayed.
fn replay(target: &str) -> usize {
    let corpus = files(&fuzz_dir().join("corpus").join(target));
    let regressions = files(&fuzz_dir().join("regressions").join(target));
    let mut failed = Vec::new();
    for path in corpus.iter().chain(&regressions) {
        let data = std::fs::read(path).expect("read corpus file");
        let r = std::panic::catch_unwind(|| strata_fuzz_checks::check(target, &data));
        if r.is_err() {
            failed.push(path.display().to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "{target}: inputs failing their check: {failed:#?}"
    );
    eprintln!(
        "{target}: replayed {} corpus and {} regression inputs",
        corpus.len(),
        regressions.len()
    );
    corpus.len()
}

macro_rules! target_tests {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            let n = replay(stringify!($name));
            assert!(n > 0, "fuzz/corpus/{} is empty: run the fuzz_seeds example", stringify!($name));
        }
    )*};
}

target_tests!(
    block,
    sst,
    wal,
    manifest,
    batch,
    options,
    catalog,
    backup_meta
);

#[test]
fn every_target_has_a_test() {
    assert_eq!(
        strata_fuzz_checks::TARGETS,
        [
            "block",
            "sst",
            "wal",
            "manifest",
            "batch",
            "options",
            "catalog",
            "backup_meta"
        ]
    );
}

/// The seeds the engine makes today pass their checks too (not only the committed ones).
#[test]
fn fresh_seeds_pass() {
    for (target, name, bytes) in strata_fuzz_checks::seeds::all() {
        assert!(
            bytes.len() < strata_fuzz_checks::seeds::MAX_SEED_LEN,
            "{name}"
        );
        strata_fuzz_checks::check(target, &bytes);
    }
}
