//! Corruption: a flipped byte or a lost tail in any file of a database (an SSTable,
//! the WAL, the MANIFEST, `CURRENT`) is reported as [`ErrorKind::Corruption`] or is
//! harmless; it never yields a wrong value and never panics.
//!
//! What it protects (DESIGN invariants on checksums and recovery): every byte the
//! engine trusts is covered by a checksum or a structural check, and recovery accepts
//! damage only where it is a torn tail (the newest WAL, in the default tolerant mode).
//!
//! A database is built once in a [`FaultFs`] (flushes, compactions, a WAL tail). Each
//! case copies it, damages one random file at a random offset (seeded), reopens under
//! `catch_unwind` and reads every key by `get` and by a full scan. Each outcome must be
//! one of: open fails with `Corruption`; reads fail with `Corruption` (and the reads that
//! succeed return the right values); every read returns exactly the right values (the
//! byte was unused); or, for WAL damage, the state after a prefix of the writes no
//! shorter than what was flushed. With `paranoid_checks` every SSTable flip must be
//! caught at open or by the first scan. Seeds are printed on failure; replay one with
//! `STRATA_SEED=<n>`, run more with `STRATA_CORRUPTION_CASES=<n>` or `STRATA_LONG=1`.

mod common;

use common::{db_scan, key, on, tiny_options};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use strata::env::FaultFs;
use strata::{ErrorKind, Options, ReadOptions, WriteOptions};

const DIR: &str = "/db";

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

/// The pristine database and what it must read back.
struct Base {
    files: Vec<(PathBuf, Vec<u8>)>,
    /// State after the whole workload.
    expected: Map,
    /// States acceptable after damage to the WAL: prefixes from the last flush on.
    wal_prefixes: Vec<Map>,
    /// Every key the workload touched.
    keys: Vec<Vec<u8>>,
}

fn opts(paranoid: bool) -> Options {
    tiny_options()
        .with_paranoid_checks(paranoid)
        .with_block_cache_capacity(0)
}

fn build() -> Base {
    let fs = FaultFs::new();
    let db = on(&fs).open(DIR, opts(false)).expect("open");
    let mut model = Map::new();
    let wo = WriteOptions::default();
    let mut rng = StdRng::seed_from_u64(7);
    for n in 0..1500u32 {
        let k = key(rng.random_range(0..400));
        if rng.random_bool(0.1) {
            db.delete(&wo, &k).expect("delete");
            model.remove(&k);
        } else {
            let v = format!("value-{n}-{}", "x".repeat(rng.random_range(0..60))).into_bytes();
            db.put(&wo, &k, &v).expect("put");
            model.insert(k, v);
        }
        if n == 700 {
            db.flush().expect("flush");
        }
    }
    db.compact_range(None, None).expect("compact");
    db.wait_for_compactions().expect("idle");
    // A WAL tail: acknowledged (and synced by close), never flushed.
    let mut wal_prefixes = vec![model.clone()];
    for n in 0..15u32 {
        let k = key(n * 7);
        let v = format!("tail-{n}").into_bytes();
        db.put(&wo, &k, &v).expect("tail put");
        model.insert(k, v);
        wal_prefixes.push(model.clone());
    }
    db.close().expect("close");
    let files = fs
        .files()
        .into_iter()
        .filter_map(|p| fs.file_bytes(&p).map(|b| (p, b)))
        .collect();
    Base {
        files,
        expected: model,
        wal_prefixes,
        keys: (0..400).map(key).collect(),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Table,
    Wal,
    Manifest,
    Current,
}

fn target_of(p: &std::path::Path) -> Option<Target> {
    let name = p.file_name()?.to_str()?;
    if name.ends_with(".sst") {
        Some(Target::Table)
    } else if name.ends_with(".log") {
        Some(Target::Wal)
    } else if name.starts_with("MANIFEST-") {
        Some(Target::Manifest)
    } else if name == "CURRENT" {
        Some(Target::Current)
    } else {
        None
    }
}

/// What one case came to.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// `Db::open` failed with `Corruption`.
    OpenDetected,
    /// A read failed with `Corruption`; the other reads were right.
    ReadDetected,
    /// Every read returned the undamaged state: the byte was not in use.
    Harmless,
    /// WAL damage: the state after a shorter prefix of the WAL's writes.
    TailDropped,
}

/// The case's damage, for the report.
#[derive(Debug)]
#[expect(dead_code, reason = "fields are read through Debug in failure reports")]
struct Damage {
    file: PathBuf,
    target: Target,
    flip: Option<(u64, u8)>,
    truncate: Option<u64>,
}

fn damage(base: &Base, seed: u64, only: Option<Target>) -> (FaultFs, Damage) {
    let mut rng = StdRng::seed_from_u64(seed);
    let candidates: Vec<&(PathBuf, Vec<u8>)> = base
        .files
        .iter()
        .filter(|(p, b)| !b.is_empty() && target_of(p).is_some_and(|t| only.is_none_or(|o| o == t)))
        .collect();
    // Pick the kind of file first so the few non-table files get their share.
    let kinds = [
        Target::Table,
        Target::Wal,
        Target::Manifest,
        Target::Current,
    ];
    let kind = loop {
        let k = kinds[rng.random_range(0..kinds.len())];
        if candidates.iter().any(|(p, _)| target_of(p) == Some(k)) {
            break k;
        }
    };
    let of_kind: Vec<_> = candidates
        .into_iter()
        .filter(|(p, _)| target_of(p) == Some(kind))
        .collect();
    let (file, bytes) = of_kind[rng.random_range(0..of_kind.len())];
    let fs = FaultFs::new();
    for (p, b) in &base.files {
        fs.set_file_bytes(p, b);
    }
    let len = bytes.len() as u64;
    let mut d = Damage {
        file: file.clone(),
        target: kind,
        flip: None,
        truncate: None,
    };
    if only == Some(Target::Table) || rng.random_bool(0.7) {
        let off = rng.random_range(0..len);
        let xor = rng.random_range(1..=255u8);
        fs.corrupt_byte(file, off, xor).expect("flip");
        d.flip = Some((off, xor));
    } else {
        let to = rng.random_range(0..len);
        fs.truncate(file, to).expect("truncate");
        d.truncate = Some(to);
    }
    (fs, d)
}

/// Opens and reads everything; returns the outcome or what was wrong.
fn examine(base: &Base, fs: &FaultFs, d: &Damage, paranoid: bool) -> Result<Outcome, String> {
    let db = match on(fs).open(DIR, opts(paranoid)) {
        Ok(db) => db,
        Err(e) if e.kind() == ErrorKind::Corruption => return Ok(Outcome::OpenDetected),
        Err(e) => {
            return Err(format!(
                "open failed with {:?}, not corruption: {e}",
                e.kind()
            ))
        }
    };
    let mut detected = false;
    // The reference state: the undamaged one, or a WAL prefix the scan shows.
    let mut reference = &base.expected;
    match db_scan(&db, None, true, &None, &None, usize::MAX) {
        Ok(all) => {
            let got: Map = all.into_iter().collect();
            if got != base.expected {
                match base.wal_prefixes.iter().find(|m| **m == got) {
                    Some(m) if d.target == Target::Wal => reference = m,
                    _ => {
                        let wrong: Vec<String> = base
                            .keys
                            .iter()
                            .filter(|k| got.get(*k) != base.expected.get(*k))
                            .take(3)
                            .map(|k| {
                                format!(
                                    "{}: want {:?} got {:?}",
                                    String::from_utf8_lossy(k),
                                    base.expected.get(k).map(|v| String::from_utf8_lossy(v)),
                                    got.get(k).map(|v| String::from_utf8_lossy(v))
                                )
                            })
                            .collect();
                        return Err(format!("scan returned a wrong state: {wrong:?}"));
                    }
                }
            }
        }
        Err(e) if e.kind() == ErrorKind::Corruption => detected = true,
        Err(e) => return Err(format!("scan failed with {:?}: {e}", e.kind())),
    }
    if paranoid && d.target == Target::Table && !detected {
        return Err("paranoid checks missed a damaged table at open and first scan".into());
    }
    for k in &base.keys {
        match db.get(&ReadOptions::default(), k) {
            Ok(v) if v.as_ref() == reference.get(k) => {}
            Ok(v) => {
                return Err(format!(
                    "get {} returned {:?}, want {:?}",
                    String::from_utf8_lossy(k),
                    v.map(|v| String::from_utf8_lossy(&v).into_owned()),
                    reference.get(k).map(|v| String::from_utf8_lossy(v))
                ))
            }
            Err(e) if e.kind() == ErrorKind::Corruption => detected = true,
            Err(e) => return Err(format!("get failed with {:?}: {e}", e.kind())),
        }
    }
    if detected {
        if d.target == Target::Wal {
            return Err("WAL damage surfaced as a read error".into());
        }
        return Ok(Outcome::ReadDetected);
    }
    Ok(if std::ptr::eq(reference, &base.expected) {
        Outcome::Harmless
    } else {
        Outcome::TailDropped
    })
}

#[derive(Default, Debug)]
struct Counts {
    tried: u64,
    open_detected: u64,
    read_detected: u64,
    harmless: u64,
    tail_dropped: u64,
}

fn run(base: &Base, seeds: &[u64], only: Option<Target>, paranoid: bool) -> Counts {
    let mut counts = Counts::default();
    let mut failures = Vec::new();
    for &seed in seeds {
        let (fs, d) = damage(base, seed, only);
        let r = catch_unwind(AssertUnwindSafe(|| examine(base, &fs, &d, paranoid)));
        counts.tried += 1;
        match r {
            Ok(Ok(o)) => match o {
                Outcome::OpenDetected => counts.open_detected += 1,
                Outcome::ReadDetected => counts.read_detected += 1,
                Outcome::Harmless => counts.harmless += 1,
                Outcome::TailDropped => counts.tail_dropped += 1,
            },
            Ok(Err(why)) => failures.push(format!("seed {seed} {d:?}: {why}")),
            Err(_) => failures.push(format!("seed {seed} {d:?}: PANIC")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corruption cases failed (replay with STRATA_SEED=<seed>):\n{}",
        failures.len(),
        counts.tried,
        failures.join("\n")
    );
    counts
}

fn seeds(default: u64) -> Vec<u64> {
    if let Some(s) = std::env::var("STRATA_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return vec![s];
    }
    let n = if std::env::var("STRATA_LONG").is_ok_and(|v| v == "1") {
        default * 10
    } else {
        std::env::var("STRATA_CORRUPTION_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    (0..n).collect()
}

#[test]
fn random_damage_is_detected_or_harmless() {
    let base = build();
    let c = run(&base, &seeds(1500), None, false);
    println!(
        "corruption: tried {}, detected {} (at open {}, on read {}), harmless {}, \
         WAL tail dropped to a prefix {}, wrong answers 0, panics 0",
        c.tried,
        c.open_detected + c.read_detected,
        c.open_detected,
        c.read_detected,
        c.harmless,
        c.tail_dropped
    );
}

#[test]
fn paranoid_checks_catch_every_table_flip() {
    let base = build();
    let c = run(
        &base,
        &seeds(200)
            .into_iter()
            .map(|s| s + 1_000_000)
            .collect::<Vec<_>>(),
        Some(Target::Table),
        true,
    );
    println!(
        "corruption (paranoid, tables): tried {}, detected {} (at open {}, on first scan {}), \
         harmless {}",
        c.tried,
        c.open_detected + c.read_detected,
        c.open_detected,
        c.read_detected,
        c.harmless
    );
    assert_eq!(c.harmless, 0, "paranoid checks let damaged tables through");
}

/// Every truncation point of the MANIFEST (a stride of them unless `STRATA_LONG=1`):
/// a MANIFEST cut back to its first edits names a WAL deleted long ago and must not
/// open as an almost empty database (regression: it did, losing every flushed write).
#[test]
fn manifest_truncated_anywhere_is_detected_or_harmless() {
    let base = build();
    let (manifest, bytes) = base
        .files
        .iter()
        .find(|(p, _)| target_of(p) == Some(Target::Manifest))
        .expect("a MANIFEST");
    let stride = if std::env::var("STRATA_LONG").is_ok_and(|v| v == "1") {
        1
    } else {
        5
    };
    let mut counts = Counts::default();
    for to in (0..bytes.len() as u64).step_by(stride) {
        let fs = FaultFs::new();
        for (p, b) in &base.files {
            fs.set_file_bytes(p, b);
        }
        fs.truncate(manifest, to).expect("truncate");
        let d = Damage {
            file: manifest.clone(),
            target: Target::Manifest,
            flip: None,
            truncate: Some(to),
        };
        let r = catch_unwind(AssertUnwindSafe(|| examine(&base, &fs, &d, false)));
        counts.tried += 1;
        match r {
            Ok(Ok(Outcome::OpenDetected)) => counts.open_detected += 1,
            Ok(Ok(Outcome::ReadDetected)) => counts.read_detected += 1,
            Ok(Ok(Outcome::Harmless)) => counts.harmless += 1,
            Ok(Ok(Outcome::TailDropped)) => panic!("{d:?}: a MANIFEST is no WAL"),
            Ok(Err(why)) => panic!("{d:?}: {why}"),
            Err(_) => panic!("{d:?}: PANIC"),
        }
    }
    println!("corruption (MANIFEST truncations): {counts:?}");
}
