//! Shared test kit: small-file options, a random operation generator and an in-memory
//! model with history, so that property, metamorphic and crash tests drive the engine
//! the same way.
#![allow(dead_code)]

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use strata::env::FaultFs;
use strata::merge::{Append, MergeError};
use strata::{
    CfHandle, CfOptions, Db, DbBuilder, ErrorKind, MergeOperator, Options, ReadOptions, Snapshot,
    Transaction, TransactionOptions, WriteBatch, WriteOptions,
};

/// The merge operator of the random workloads: append with `,`. Order-sensitive, so a
/// chain folded or resolved in the wrong order shows.
pub fn append_operator() -> Arc<dyn MergeOperator> {
    Arc::new(Append::new(b","))
}

/// [`append_operator`]'s meaning without the associative fast path: no partial merge,
/// so compaction must keep operands it cannot fold into a base.
#[derive(Debug)]
pub struct AppendNoPartial;

impl MergeOperator for AppendNoPartial {
    fn name(&self) -> &str {
        "test.append-no-partial"
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError> {
        let mut parts: Vec<&[u8]> = existing.into_iter().collect();
        parts.extend_from_slice(operands);
        Ok(parts.join(&b","[..]))
    }
}

/// The model of [`append_operator`]: `key`'s value after a merge of `operand`.
pub fn model_merge(map: &mut ModelMap, key: &[u8], operand: &[u8]) {
    let v = match map.get(key) {
        Some(old) => [old.as_slice(), b",", operand].concat(),
        None => operand.to_vec(),
    };
    map.insert(key.to_vec(), v);
}

/// Options that make flushes and compactions happen every few operations, with
/// [`append_operator`] as the merge operator.
pub fn tiny_options() -> Options {
    Options::default()
        .with_merge_operator(Some(append_operator()))
        .with_write_buffer_size(4096)
        .with_target_file_size_base(2048)
        .with_max_bytes_for_level_base(8192)
        .with_max_bytes_for_level_multiplier(4.0)
        .with_level0_file_num_compaction_trigger(2)
        .with_level0_slowdown_writes_trigger(8)
        .with_level0_stop_writes_trigger(12)
        .with_num_levels(4)
        .with_every_level(|l| l.with_block_size(256).with_block_restart_interval(4))
        .with_block_cache_capacity(64 << 10)
        .with_max_open_files(64)
        .with_max_manifest_file_size(16 << 10)
}

/// [`tiny_options`] with three data paths, `/db-fast`, `/db-mid` and `/db-slow`, sized
/// by `ByLevel` placement to hold L0, L1, and L2 with everything deeper (L1's target is
/// 8 KiB, and L0 counts as large as L1). Absolute paths: for the fault file system.
pub fn three_data_paths() -> Options {
    paths_under(Path::new("/"), tiny_options())
}

/// `opts` with the three data paths of [`three_data_paths`] as `root/db-fast`,
/// `root/db-mid` and `root/db-slow`.
pub fn paths_under(root: &Path, opts: Options) -> Options {
    opts.with_db_paths(vec![
        strata::DbPath::new(root.join("db-fast"), 8 << 10),
        strata::DbPath::new(root.join("db-mid"), 8 << 10),
        strata::DbPath::new(root.join("db-slow"), 0),
    ])
}

/// A temporary directory (under `$TMPDIR`, else `/tmp`) whose file system accepts
/// direct I/O, or `None` after printing why `test` is skipped. `STRATA_REQUIRE_DIRECT_IO=1`
/// turns the skip into a failure.
pub fn direct_io_tempdir(test: &str) -> Option<tempfile::TempDir> {
    use strata::env::{FileOptions, FileSystem, PosixFs};
    let dir = tempfile::tempdir().expect("tempdir");
    let probe = dir.path().join("probe");
    let result = PosixFs
        .create_with(&probe, FileOptions::default().with_direct(true))
        .and_then(|mut f| {
            f.append(b"x")?;
            f.sync()
        });
    match result {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            Some(dir)
        }
        Err(e) if std::env::var("STRATA_REQUIRE_DIRECT_IO").is_ok_and(|v| v == "1") => {
            panic!("{test}: O_DIRECT refused in {}: {e}", dir.path().display())
        }
        Err(e) => {
            eprintln!(
                "SKIPPED {test}: O_DIRECT refused in {} ({e}); set TMPDIR to a disk that supports it",
                dir.path().display()
            );
            None
        }
    }
}

/// A builder whose databases live on `fs` (clones of a `FaultFs` share one file
/// system, so a test keeps its handle to crash or inspect it).
pub fn on(fs: &FaultFs) -> DbBuilder {
    Db::builder().file_system(Arc::new(fs.clone()))
}

/// One step of a random workload.
#[derive(Clone, Debug)]
pub enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    /// A merge operand for the key ([`append_operator`]).
    Merge(Vec<u8>, Vec<u8>),
    /// Delete every key in `[start, end)`.
    DeleteRange(Vec<u8>, Vec<u8>),
    Batch(Vec<Update>),
    TakeSnapshot,
    ReleaseSnapshot(usize),
    /// A get, now or at a live snapshot counted from the newest (an index past the
    /// oldest reads now).
    Get(Vec<u8>, Option<usize>),
    /// A scan, now or at a live snapshot counted from the newest, as [`Op::Get`].
    Scan {
        forward: bool,
        from: Option<Vec<u8>>,
        to: Option<Vec<u8>>,
        snapshot: Option<usize>,
        limit: usize,
    },
    Flush,
    CompactRange(Option<Vec<u8>>, Option<Vec<u8>>),
    Reopen,
    /// An optimistic transaction: its steps, then a commit (or a rollback).
    Txn {
        steps: Vec<TxnStep>,
        commit: bool,
    },
    /// A put, delete, merge, range delete, get or scan in column family `cf<n>`
    /// ([`family_name`]); skipped while that family does not exist.
    InCf(u8, Box<Op>),
    /// Creates family `cf<n>` unless it exists.
    CreateCf(u8),
    /// Drops family `cf<n>` if it exists.
    DropCf(u8),
}

/// The name of the random workloads' column family `n`.
pub fn family_name(n: u8) -> String {
    format!("cf{n}")
}

/// One step while a transaction is open.
#[derive(Clone, Debug)]
pub enum TxnStep {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    Get(Vec<u8>),
    GetForUpdate(Vec<u8>),
    Scan {
        forward: bool,
        from: Option<Vec<u8>>,
        to: Option<Vec<u8>>,
        limit: usize,
    },
    /// A plain write to the database (not the transaction) while it is open: the
    /// commit must fail iff the transaction wrote the key or read it for update.
    OutsidePut(Vec<u8>, Vec<u8>),
    /// A flush while it is open, so that outside writes are in a table at the commit.
    Flush,
}

/// One update of a batch.
#[derive(Clone, Debug)]
pub enum Update {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    Merge(Vec<u8>, Vec<u8>),
    DeleteRange(Vec<u8>, Vec<u8>),
    /// An update of column family `cf<n>` (left out while it does not exist).
    InCf(u8, Box<Update>),
}

/// The model of a range deletion.
pub fn model_delete_range(map: &mut ModelMap, start: &[u8], end: &[u8]) {
    if start < end {
        map.retain(|k, _| !(start <= k.as_slice() && k.as_slice() < end));
    }
}

pub fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// The keys one seed's random workload draws from: how many there are, how long, and
/// what bytes they hold all depend on the seed, so that more seeds explore new keys
/// (new filter hashes, new prefix-compression and block-boundary shapes), not only new
/// orders of the same few.
#[derive(Clone, Debug)]
pub struct KeyUniverse {
    /// Sorted and distinct, so index ranges are key ranges.
    keys: Vec<Vec<u8>>,
    /// The share of written keys, in percent, drawn from a few hot keys: overwrites,
    /// merge chains and tombstones pile up there even in a large universe.
    hot_percent: u32,
    /// Indices of the hot keys.
    hot: Vec<usize>,
    shape: KeyShape,
}

impl std::fmt::Display for KeyUniverse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (len, shape, hot) = (self.keys.len(), self.shape, self.hot_percent);
        write!(f, "{len} {shape:?} keys, {hot}% of writes to hot keys")
    }
}

/// The shapes a [`KeyUniverse`]'s keys take.
#[derive(Clone, Copy, Debug)]
enum KeyShape {
    /// `key00042`: the fixed-width decimal keys of [`key`].
    Decimal,
    /// 0 to 24 arbitrary bytes (the empty key and `0x00`/`0xff` bytes included).
    Binary,
    /// One of a few long shared prefixes, then a varied suffix: long restart runs and
    /// keys that differ only near their end.
    SharedPrefix,
    /// 40 to 300 bytes: few entries per block, large index entries.
    Long,
}

impl KeyUniverse {
    /// The universe of `seed`: its size ranges from a few dozen keys, where collisions
    /// and overwrites dominate, to tens of thousands, where filters and many files
    /// matter.
    pub fn for_seed(seed: u64) -> Self {
        let mut rng = StdRng::seed_from_u64(seed ^ 0x6b65_7973_7061_6365);
        let size = match rng.random_range(0..6u32) {
            0 => rng.random_range(12..64usize),
            1 => rng.random_range(64..400),
            2 => rng.random_range(400..3_000),
            3 => rng.random_range(3_000..20_000),
            _ => rng.random_range(20_000..60_000),
        };
        let shape = match rng.random_range(0..4u32) {
            0 => KeyShape::Decimal,
            1 => KeyShape::Binary,
            2 => KeyShape::SharedPrefix,
            _ => KeyShape::Long,
        };
        Self::generate(&mut rng, size, shape)
    }

    fn generate(rng: &mut StdRng, size: usize, shape: KeyShape) -> Self {
        let prefixes: Vec<Vec<u8>> = (0..rng.random_range(1..5))
            .map(|p| {
                let mut v = format!("tenant/{p:02}/").into_bytes();
                v.extend((0..rng.random_range(8..40)).map(|_| rng.random_range(b'a'..=b'z')));
                v
            })
            .collect();
        let mut set = BTreeSet::new();
        // Short shapes cannot always reach `size` distinct keys; stop trying after a
        // while rather than loop.
        let mut attempts = 0;
        while set.len() < size && attempts < size * 20 {
            attempts += 1;
            let k = match shape {
                KeyShape::Decimal => key(set.len() as u32),
                KeyShape::Binary => {
                    let len = rng.random_range(0..=24usize);
                    (0..len).map(|_| rng.random::<u8>()).collect()
                }
                KeyShape::SharedPrefix => {
                    let mut k = prefixes[rng.random_range(0..prefixes.len())].clone();
                    let len = rng.random_range(1..=12usize);
                    k.extend((0..len).map(|_| rng.random_range(b'0'..=b'z')));
                    k
                }
                KeyShape::Long => {
                    let len = rng.random_range(40..=300usize);
                    (0..len).map(|_| rng.random_range(b' '..=b'~')).collect()
                }
            };
            set.insert(k);
        }
        let keys: Vec<Vec<u8>> = set.into_iter().collect();
        let hot = (0..keys.len().min(rng.random_range(8..40)))
            .map(|_| rng.random_range(0..keys.len()))
            .collect();
        let hot_percent = match keys.len() {
            0..=400 => 0,
            _ => rng.random_range(10..60),
        };
        Self {
            keys,
            hot_percent,
            hot,
            shape,
        }
    }

    /// A key index: one of the hot keys now and then, else any.
    fn pick_index(&self, rng: &mut StdRng) -> usize {
        match rng.random_range(0..100) < self.hot_percent {
            true => self.hot[rng.random_range(0..self.hot.len())],
            false => rng.random_range(0..self.keys.len()),
        }
    }
}

/// Draws keys of a [`KeyUniverse`] for one workload, remembering what it drew so that
/// reads mostly ask for keys the workload has written (in a universe of tens of
/// thousands, a uniform get would almost always miss).
struct KeyDraw<'a> {
    universe: &'a KeyUniverse,
    drawn: Vec<usize>,
    /// The keys on either side of the newest snapshot: the last written before it and
    /// the first written after it. A read at the snapshot must see the first and not
    /// the second, so an off-by-one in visibility shows on them.
    edge: Vec<usize>,
    /// Whether the first write after the newest snapshot is still to come.
    edge_open: bool,
}

impl KeyDraw<'_> {
    /// A key to write.
    fn write(&mut self, rng: &mut StdRng) -> Vec<u8> {
        let i = self.universe.pick_index(rng);
        self.drawn.push(i);
        if std::mem::take(&mut self.edge_open) {
            self.edge.push(i);
        }
        self.universe.keys[i].clone()
    }

    /// Notes that the workload takes a snapshot here.
    fn snapshot(&mut self) {
        self.edge = self.drawn.last().copied().into_iter().collect();
        self.edge_open = true;
    }

    /// A key to read at a snapshot, and the snapshot counted from the newest: half of
    /// the time, a key at the newest snapshot's edge, read there.
    fn read_at_snapshot(&self, rng: &mut StdRng) -> Op {
        let (i, snapshot) = match self.edge.is_empty() || rng.random_bool(0.5) {
            true => (self.read_index(rng), snapshot_index(rng)),
            false => (self.edge[rng.random_range(0..self.edge.len())], 0),
        };
        Op::Get(self.universe.keys[i].clone(), Some(snapshot))
    }

    /// The index of a key to read (or bound a scan with): one written before, mostly,
    /// and often one of the last few, which the newest snapshot may just miss.
    fn read_index(&self, rng: &mut StdRng) -> usize {
        let n = self.drawn.len();
        match rng.random_range(0..10u32) {
            _ if n == 0 => self.universe.pick_index(rng),
            0..=2 => self.universe.pick_index(rng),
            3..=5 => self.drawn[rng.random_range(n.saturating_sub(4)..n)],
            _ => self.drawn[rng.random_range(0..n)],
        }
    }

    fn read(&self, rng: &mut StdRng) -> Vec<u8> {
        self.universe.keys[self.read_index(rng)].clone()
    }

    /// A random range of at most `span` keys of the universe, as `[start, end)`,
    /// starting at a key drawn before, mostly. `end` may be past the last key.
    fn range(&self, rng: &mut StdRng, span: usize) -> (Vec<u8>, Vec<u8>) {
        let a = self.read_index(rng);
        let b = a + rng.random_range(0..=span);
        let end = match self.universe.keys.get(b) {
            Some(k) => k.clone(),
            // Past the last key: the last key with a byte appended sorts after it.
            None => [
                self.universe.keys[self.universe.keys.len() - 1].as_slice(),
                b"\xff",
            ]
            .concat(),
        };
        (self.universe.keys[a].clone(), end)
    }
}

/// A random workload of `n` operations over `universe` (usually
/// [`KeyUniverse::for_seed`] of the same seed), from `seed`.
pub fn random_ops(seed: u64, n: usize, universe: &KeyUniverse, allow_reopen: bool) -> Vec<Op> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut keys = KeyDraw {
        universe,
        drawn: Vec::new(),
        edge: Vec::new(),
        edge_open: false,
    };
    let mut ops = Vec::with_capacity(n);
    let value = |rng: &mut StdRng, i: usize| -> Vec<u8> {
        let len = rng.random_range(0..200usize);
        let mut v = format!("v{i}-").into_bytes();
        v.extend((0..len).map(|_| rng.random_range(b'a'..=b'z')));
        v
    };
    for i in 0..n {
        let op = match rng.random_range(0..100u32) {
            0..=27 => Op::Put(keys.write(&mut rng), value(&mut rng, i)),
            28..=31 => random_txn(&mut rng, i, &mut keys, &value),
            32..=40 => Op::Merge(keys.write(&mut rng), format!("m{i}").into_bytes()),
            41..=46 => Op::Delete(keys.write(&mut rng)),
            47..=49 => {
                let (a, b) = keys.range(&mut rng, 12);
                Op::DeleteRange(a, b)
            }
            50..=57 => {
                let m = rng.random_range(1..8usize);
                Op::Batch(
                    (0..m)
                        .map(|_| {
                            let k = keys.write(&mut rng);
                            let u = match rng.random_range(0..20u32) {
                                0..=11 => Update::Put(k, value(&mut rng, i)),
                                12..=15 => Update::Merge(k, format!("b{i}").into_bytes()),
                                16..=18 => Update::Delete(k),
                                _ => {
                                    let (a, b) = keys.range(&mut rng, 6);
                                    Update::DeleteRange(a, b)
                                }
                            };
                            // A batch spans families now and then.
                            match rng.random_range(0..6u32) {
                                0 => Update::InCf(rng.random_range(1..=2), Box::new(u)),
                                _ => u,
                            }
                        })
                        .collect(),
                )
            }
            58..=61 => {
                keys.snapshot();
                Op::TakeSnapshot
            }
            62..=64 => Op::ReleaseSnapshot(rng.random_range(0..8)),
            65..=82 => match rng.random_bool(0.3) {
                true => keys.read_at_snapshot(&mut rng),
                false => Op::Get(keys.read(&mut rng), None),
            },
            83..=92 => {
                let a = rng.random_bool(0.5).then(|| keys.read(&mut rng));
                let b = rng.random_bool(0.5).then(|| keys.read(&mut rng));
                Op::Scan {
                    forward: rng.random_bool(0.5),
                    from: a,
                    to: b,
                    snapshot: rng.random_bool(0.3).then(|| snapshot_index(&mut rng)),
                    limit: rng.random_range(1..50),
                }
            }
            93..=95 => Op::Flush,
            96..=97 => {
                let a = rng.random_bool(0.5).then(|| keys.read(&mut rng));
                Op::CompactRange(a, None)
            }
            _ if allow_reopen => Op::Reopen,
            _ => Op::Flush,
        };
        // Column families: one of two families is created or dropped now and then,
        // and a sixth of the single-key operations go to one of them.
        let op = match (rng.random_range(0..120u32), op) {
            (0..=1, _) => Op::CreateCf(rng.random_range(1..=2)),
            (2, _) => Op::DropCf(rng.random_range(1..=2)),
            (
                3..=22,
                op @ (Op::Put(..)
                | Op::Delete(_)
                | Op::Merge(..)
                | Op::DeleteRange(..)
                | Op::Get(..)
                | Op::Scan { .. }),
            ) => Op::InCf(rng.random_range(1..=2), Box::new(op)),
            (_, op) => op,
        };
        ops.push(op);
    }
    ops
}

/// The snapshot a read is at, counted from the newest: mostly the newest few.
fn snapshot_index(rng: &mut StdRng) -> usize {
    rng.random_range(0..8).min(rng.random_range(0..8))
}

/// A transaction of one to eight steps; an outside write hits a key the transaction
/// touched half of the time, so conflicts are common.
fn random_txn(
    rng: &mut StdRng,
    i: usize,
    keys: &mut KeyDraw<'_>,
    value: &impl Fn(&mut StdRng, usize) -> Vec<u8>,
) -> Op {
    let mut touched: Vec<Vec<u8>> = Vec::new();
    let mut steps = Vec::new();
    for _ in 0..rng.random_range(1..=8) {
        let k = keys.write(rng);
        let step = match rng.random_range(0..100u32) {
            0..=29 => TxnStep::Put(k.clone(), value(rng, i)),
            30..=39 => TxnStep::Delete(k.clone()),
            40..=54 => TxnStep::Get(k.clone()),
            55..=69 => TxnStep::GetForUpdate(k.clone()),
            70..=79 => TxnStep::Scan {
                forward: rng.random_bool(0.5),
                from: rng.random_bool(0.5).then(|| keys.read(rng)),
                to: rng.random_bool(0.5).then(|| keys.read(rng)),
                limit: rng.random_range(1..30),
            },
            80..=91 => {
                let k = match touched.is_empty() || rng.random_bool(0.5) {
                    true => k.clone(),
                    false => touched[rng.random_range(0..touched.len())].clone(),
                };
                TxnStep::OutsidePut(k, value(rng, i))
            }
            _ => TxnStep::Flush,
        };
        touched.push(k);
        steps.push(step);
    }
    Op::Txn {
        steps,
        commit: rng.random_bool(0.8),
    }
}

/// The model's state: user key to value.
pub type ModelMap = BTreeMap<Vec<u8>, Vec<u8>>;

/// The model: the current map (the default family's) and each live column family's,
/// plus a copy of them per live snapshot.
#[derive(Default)]
pub struct Model {
    pub map: ModelMap,
    pub families: BTreeMap<u8, ModelMap>,
    pub snapshots: Vec<ModelSnapshot>,
}

/// A snapshot and the model as it saw it.
pub struct ModelSnapshot {
    pub snapshot: Snapshot,
    pub map: Arc<ModelMap>,
    /// Each family's map at the snapshot (a family created after it is empty there).
    pub families: BTreeMap<u8, Arc<ModelMap>>,
}

/// What a read observed: comparable between engines and the model.
#[derive(Debug, PartialEq, Eq, Clone)]
pub enum Observed {
    Get(Option<Vec<u8>>),
    Scan(Vec<(Vec<u8>, Vec<u8>)>),
    /// Whether a transaction committed (`false`: a conflict).
    Commit(bool),
}

/// Reads the expected answer of a scan from a map.
pub fn model_scan(
    map: &BTreeMap<Vec<u8>, Vec<u8>>,
    forward: bool,
    from: &Option<Vec<u8>>,
    to: &Option<Vec<u8>>,
    limit: usize,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let in_range =
        |k: &Vec<u8>| from.as_ref().is_none_or(|f| k >= f) && to.as_ref().is_none_or(|t| k < t);
    let it = map.iter().filter(|(k, _)| in_range(k));
    let v: Vec<_> = if forward {
        it.take(limit)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    } else {
        it.rev()
            .take(limit)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    v
}

/// Reads up to `limit` entries from a user iterator (a `DbIterator` or a
/// `BaseDeltaIterator`: they share no trait) from one end, then checks its status.
macro_rules! collect_scan {
    ($it:ident, $forward:expr, $limit:expr) => {{
        if $forward {
            $it.seek_to_first();
        } else {
            $it.seek_to_last();
        }
        let mut out = Vec::new();
        while $it.valid() && out.len() < $limit {
            out.push(($it.key().to_vec(), $it.value().to_vec()));
            if $forward {
                $it.next();
            } else {
                $it.prev();
            }
        }
        $it.status().map(|()| out)
    }};
}

/// What a scan reads: the database (at a snapshot, or now) or a transaction's view.
pub enum Source<'a> {
    Db(&'a Db, Option<Snapshot>),
    /// A column family (at a snapshot, or now).
    Family(&'a Db, &'a CfHandle, Option<Snapshot>),
    Txn(&'a Transaction<'a>),
}

/// Every entry of family `cf` of `db` now, in key order; the reverse scan must give
/// the same entries (it panics otherwise, and on a read error).
pub fn family_contents(db: &Db, cf: &CfHandle) -> Vec<(Vec<u8>, Vec<u8>)> {
    let all = |forward| {
        scan(
            Source::Family(db, cf, None),
            forward,
            &None,
            &None,
            usize::MAX,
        )
        .unwrap_or_else(|e| panic!("scan of family {}: {e}", cf.name()))
    };
    let forward = all(true);
    let mut reverse = all(false);
    reverse.reverse();
    assert_eq!(forward, reverse, "forward and reverse scans disagree");
    forward
}

/// Runs a scan of `source` with bounds given as ReadOptions.
pub fn scan(
    source: Source<'_>,
    forward: bool,
    from: &Option<Vec<u8>>,
    to: &Option<Vec<u8>>,
    limit: usize,
) -> strata::Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let ro = ReadOptions::default()
        .with_lower_bound(from.clone())
        .with_upper_bound(to.clone());
    match source {
        Source::Db(db, snapshot) => {
            let mut it = db.iter(&ro.with_snapshot(snapshot))?;
            collect_scan!(it, forward, limit)
        }
        Source::Family(db, cf, snapshot) => {
            let mut it = db.iter_cf(&ro.with_snapshot(snapshot), cf)?;
            collect_scan!(it, forward, limit)
        }
        Source::Txn(txn) => {
            let mut it = txn.iter(&ro)?;
            collect_scan!(it, forward, limit)
        }
    }
}

/// Bytes of the live tables, all levels.
pub fn table_bytes(db: &Db) -> u64 {
    db.stats().levels.iter().map(|l| l.size).sum()
}

/// Runs a scan on the engine with bounds given as ReadOptions.
pub fn db_scan(
    db: &strata::Db,
    snapshot: Option<Snapshot>,
    forward: bool,
    from: &Option<Vec<u8>>,
    to: &Option<Vec<u8>>,
    limit: usize,
) -> strata::Result<Vec<(Vec<u8>, Vec<u8>)>> {
    scan(Source::Db(db, snapshot), forward, from, to, limit)
}

/// Runs one [`Op::Txn`] on `db`, keeping `model` in step: the transaction sees the
/// model as of its begin plus its own writes; the commit must fail exactly when an
/// outside write hit a key it wrote or read for update, and then changes nothing.
fn run_txn(
    db: &Db,
    model: &mut Model,
    steps: &[TxnStep],
    commit: bool,
    check_model: bool,
    seen: &mut Vec<Observed>,
    at: &dyn Fn() -> String,
) {
    let wo = WriteOptions::default();
    let ro = ReadOptions::default();
    let mut txn = db.transaction(&TransactionOptions::default());
    let mut view = model.map.clone();
    let mut own: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::new();
    let (mut checked, mut outside) = (BTreeSet::new(), BTreeSet::new());
    for (i, step) in steps.iter().enumerate() {
        let at = || format!("{} txn step {i} {step:?}", at());
        match step {
            TxnStep::Put(k, v) => {
                txn.put(k, v).unwrap_or_else(|e| panic!("{}: {e}", at()));
                view.insert(k.clone(), v.clone());
                own.push((k.clone(), Some(v.clone())));
                checked.insert(k.clone());
            }
            TxnStep::Delete(k) => {
                txn.delete(k).unwrap_or_else(|e| panic!("{}: {e}", at()));
                view.remove(k);
                own.push((k.clone(), None));
                checked.insert(k.clone());
            }
            TxnStep::Get(k) | TxnStep::GetForUpdate(k) => {
                let got = if let TxnStep::GetForUpdate(_) = step {
                    checked.insert(k.clone());
                    txn.get_for_update(&ro, k)
                } else {
                    txn.get(&ro, k)
                };
                let got = got.unwrap_or_else(|e| panic!("{}: {e}", at()));
                if check_model {
                    assert_eq!(got.as_ref(), view.get(k), "{}: model", at());
                }
                seen.push(Observed::Get(got));
            }
            TxnStep::Scan {
                forward,
                from,
                to,
                limit,
            } => {
                let got = scan(Source::Txn(&txn), *forward, from, to, *limit)
                    .unwrap_or_else(|e| panic!("{}: {e}", at()));
                if check_model {
                    let want = model_scan(&view, *forward, from, to, *limit);
                    assert_eq!(got, want, "{}: model", at());
                }
                seen.push(Observed::Scan(got));
            }
            TxnStep::OutsidePut(k, v) => {
                db.put(&wo, k, v)
                    .unwrap_or_else(|e| panic!("{}: {e}", at()));
                model.map.insert(k.clone(), v.clone());
                outside.insert(k.clone());
            }
            TxnStep::Flush => db.flush().unwrap_or_else(|e| panic!("{}: {e}", at())),
        }
    }
    if !commit {
        txn.rollback();
        return;
    }
    let conflict = checked.intersection(&outside).next().is_some();
    let result = txn.commit(&wo);
    seen.push(Observed::Commit(result.is_ok()));
    match result {
        Ok(()) => {
            assert!(!conflict, "{}: a conflict was missed", at());
            for (k, v) in own {
                match v {
                    Some(v) => model.map.insert(k, v),
                    None => model.map.remove(&k),
                };
            }
        }
        Err(e) if e.kind() == ErrorKind::Conflict => {
            assert!(conflict, "{}: a false conflict: {e}", at());
        }
        Err(e) => panic!("{}: {e}", at()),
    }
}

/// Runs `ops` against a database opened by `builder` in `dir` with `opts`, keeping
/// `model` in step.
/// Returns the open database and every read's observation, in order; with
/// `check_model`, asserts each observation against the model (with history for
/// snapshot reads). `ctx` prefixes failure messages (seed, option set).
pub fn run_ops(
    builder: &DbBuilder,
    dir: &Path,
    opts: &Options,
    ops: &[Op],
    check_model: bool,
    ctx: &str,
) -> (Db, Model, Vec<Observed>) {
    run_ops_with_families(
        builder,
        dir,
        opts,
        &opts.cf_options(),
        ops,
        check_model,
        ctx,
    )
}

/// [`run_ops`] whose column families are created, and reopened, with `family`.
pub fn run_ops_with_families(
    builder: &DbBuilder,
    dir: &Path,
    opts: &Options,
    family: &CfOptions,
    ops: &[Op],
    check_model: bool,
    ctx: &str,
) -> (Db, Model, Vec<Observed>) {
    // Every live family is listed with its options (they are not persisted).
    let open = |live: &BTreeMap<u8, ModelMap>| {
        let names: Vec<String> = live.keys().map(|&n| family_name(n)).collect();
        let listed: Vec<(&str, CfOptions)> =
            names.iter().map(|n| (n.as_str(), family.clone())).collect();
        builder.open_cf(dir, opts.clone(), &listed)
    };
    let mut db = Some(open(&BTreeMap::new()).unwrap_or_else(|e| panic!("{ctx}: open: {e}")));
    let mut model = Model::default();
    let mut seen = Vec::new();
    let wo = WriteOptions::default();
    for (step, op) in ops.iter().enumerate() {
        let at = || format!("{ctx} step {step} op {op:?}");
        let d = db.as_ref().expect("db is open between steps");
        match op {
            Op::Put(..)
            | Op::Delete(_)
            | Op::Merge(..)
            | Op::DeleteRange(..)
            | Op::Get(..)
            | Op::Scan { .. } => {
                let snapshots = &model.snapshots;
                let tree = Tree::Default;
                let map = &mut model.map;
                run_in_tree(d, tree, map, snapshots, op, check_model, &mut seen, &at);
            }
            Op::Batch(items) => {
                let mut b = WriteBatch::new();
                for item in items {
                    batch_update(d, &mut b, &mut model, item);
                }
                d.write(&wo, b).unwrap_or_else(|e| panic!("{}: {e}", at()));
            }
            Op::TakeSnapshot => {
                if model.snapshots.len() < 8 {
                    model.snapshots.push(ModelSnapshot {
                        snapshot: d.snapshot(),
                        map: Arc::new(model.map.clone()),
                        families: model
                            .families
                            .iter()
                            .map(|(&n, m)| (n, Arc::new(m.clone())))
                            .collect(),
                    });
                }
            }
            Op::ReleaseSnapshot(i) => {
                if *i < model.snapshots.len() {
                    model.snapshots.remove(*i);
                }
            }
            Op::Flush => d.flush().unwrap_or_else(|e| panic!("{}: {e}", at())),
            Op::CompactRange(a, b) => d
                .compact_range(a.as_deref(), b.as_deref())
                .unwrap_or_else(|e| panic!("{}: {e}", at())),
            Op::Reopen => {
                model.snapshots.clear();
                db.take()
                    .expect("db is open")
                    .close()
                    .unwrap_or_else(|e| panic!("{}: {e}", at()));
                db = Some(open(&model.families).unwrap_or_else(|e| panic!("{}: {e}", at())));
            }
            Op::Txn { steps, commit } => {
                run_txn(d, &mut model, steps, *commit, check_model, &mut seen, &at);
            }
            Op::CreateCf(n) => {
                if !model.families.contains_key(n) {
                    let cf = d
                        .create_cf(&family_name(*n), family.clone())
                        .unwrap_or_else(|e| panic!("{}: {e}", at()));
                    assert_eq!(cf.name(), family_name(*n));
                    model.families.insert(*n, ModelMap::new());
                    // The new family holds nothing at any older snapshot.
                    for s in &mut model.snapshots {
                        s.families.insert(*n, Arc::new(ModelMap::new()));
                    }
                }
            }
            Op::DropCf(n) => {
                if model.families.remove(n).is_some() {
                    let cf = d.cf(&family_name(*n)).expect("live family");
                    d.drop_cf(&cf).unwrap_or_else(|e| panic!("{}: {e}", at()));
                }
            }
            Op::InCf(n, op) => {
                if let Some(map) = model.families.get_mut(n) {
                    let cf = d.cf(&family_name(*n)).expect("live family");
                    let snapshots = &model.snapshots;
                    let tree = Tree::Family(&cf, *n);
                    run_in_tree(d, tree, map, snapshots, op, check_model, &mut seen, &at);
                }
            }
        }
    }
    (db.expect("db is open at the end"), model, seen)
}

/// The tree a single-key operation of the workload runs in: the default family
/// through the API without `_cf` (so both APIs are exercised), or a column family.
#[derive(Clone, Copy)]
enum Tree<'a> {
    Default,
    /// The family and its model number.
    Family(&'a CfHandle, u8),
}

impl Tree<'_> {
    /// The tree's model map at snapshot `s` (a family created after it is empty).
    fn at(self, s: &ModelSnapshot) -> Arc<ModelMap> {
        match self {
            Tree::Default => Arc::clone(&s.map),
            Tree::Family(_, n) => s.families.get(&n).cloned().unwrap_or_default(),
        }
    }

    fn write(self, d: &Db, op: &Op) -> strata::Result<()> {
        let wo = WriteOptions::default();
        match (self, op) {
            (Tree::Default, Op::Put(k, v)) => d.put(&wo, k, v),
            (Tree::Default, Op::Delete(k)) => d.delete(&wo, k),
            (Tree::Default, Op::Merge(k, v)) => d.merge(&wo, k, v),
            (Tree::Default, Op::DeleteRange(a, b)) => d.delete_range(&wo, a, b),
            (Tree::Family(cf, _), Op::Put(k, v)) => d.put_cf(&wo, cf, k, v),
            (Tree::Family(cf, _), Op::Delete(k)) => d.delete_cf(&wo, cf, k),
            (Tree::Family(cf, _), Op::Merge(k, v)) => d.merge_cf(&wo, cf, k, v),
            (Tree::Family(cf, _), Op::DeleteRange(a, b)) => d.delete_range_cf(&wo, cf, a, b),
            (_, other) => panic!("not a write of one tree: {other:?}"),
        }
    }

    fn get(self, d: &Db, ro: &ReadOptions, k: &[u8]) -> strata::Result<Option<Vec<u8>>> {
        match self {
            Tree::Default => d.get(ro, k),
            Tree::Family(cf, _) => d.get_cf(ro, cf, k),
        }
    }

    /// What a scan of this tree at `snapshot` reads.
    fn source<'a>(self, d: &'a Db, snapshot: Option<Snapshot>) -> Source<'a>
    where
        Self: 'a,
    {
        match self {
            Tree::Default => Source::Db(d, snapshot),
            Tree::Family(cf, _) => Source::Family(d, cf, snapshot),
        }
    }
}

/// Runs one single-key operation (a put, delete, merge, range delete, get or scan) in
/// `tree`, whose model map is `map`.
#[expect(clippy::too_many_arguments, reason = "the pieces of one step")]
fn run_in_tree(
    d: &Db,
    tree: Tree<'_>,
    map: &mut ModelMap,
    snapshots: &[ModelSnapshot],
    op: &Op,
    check_model: bool,
    seen: &mut Vec<Observed>,
    at: &dyn Fn() -> String,
) {
    let at_snapshot = |i: &Option<usize>| {
        i.and_then(|i| snapshots.iter().rev().nth(i))
            .map(|s| (s.snapshot.clone(), tree.at(s)))
    };
    match op {
        Op::Get(k, snap) => {
            let (ro, expected) = match at_snapshot(snap) {
                Some((s, m)) => (ReadOptions::default().with_snapshot(s), m.get(k).cloned()),
                None => (ReadOptions::default(), map.get(k).cloned()),
            };
            let got = tree
                .get(d, &ro, k)
                .unwrap_or_else(|e| panic!("{}: {e}", at()));
            if check_model {
                assert_eq!(got, expected, "{}: model", at());
            }
            seen.push(Observed::Get(got));
        }
        Op::Scan {
            forward,
            from,
            to,
            snapshot,
            limit,
        } => {
            let (snap, want) = match at_snapshot(snapshot) {
                Some((s, m)) => (Some(s), model_scan(&m, *forward, from, to, *limit)),
                None => (None, model_scan(map, *forward, from, to, *limit)),
            };
            let got = scan(tree.source(d, snap), *forward, from, to, *limit)
                .unwrap_or_else(|e| panic!("{}: {e}", at()));
            if check_model {
                assert_eq!(got, want, "{}: model", at());
            }
            seen.push(Observed::Scan(got));
        }
        op => {
            tree.write(d, op)
                .unwrap_or_else(|e| panic!("{}: {e}", at()));
            model_write(map, op);
        }
    }
}

/// Applies a put, delete, merge or range delete to a model map (other ops: nothing).
fn model_write(map: &mut ModelMap, op: &Op) {
    match op {
        Op::Put(k, v) => {
            map.insert(k.clone(), v.clone());
        }
        Op::Delete(k) => {
            map.remove(k);
        }
        Op::Merge(k, v) => model_merge(map, k, v),
        Op::DeleteRange(a, b) => model_delete_range(map, a, b),
        _ => {}
    }
}

/// Adds `u` to `b` and applies it to the model, in the default family or (for
/// [`Update::InCf`]) in a live family; an update of a family that does not exist is
/// left out.
fn batch_update(d: &Db, b: &mut WriteBatch, model: &mut Model, u: &Update) {
    let (cf, map, u) = match u {
        Update::InCf(n, u) => match model.families.get_mut(n) {
            Some(map) => (d.cf(&family_name(*n)), map, &**u),
            None => return,
        },
        u => (None, &mut model.map, u),
    };
    match (u, &cf) {
        (Update::Put(k, v), None) => b.put(k, v),
        (Update::Put(k, v), Some(cf)) => b.put_cf(cf, k, v),
        (Update::Delete(k), None) => b.delete(k),
        (Update::Delete(k), Some(cf)) => b.delete_cf(cf, k),
        (Update::Merge(k, v), None) => b.merge(k, v),
        (Update::Merge(k, v), Some(cf)) => b.merge_cf(cf, k, v),
        (Update::DeleteRange(s, e), None) => b.delete_range(s, e),
        (Update::DeleteRange(s, e), Some(cf)) => b.delete_range_cf(cf, s, e),
        (Update::InCf(..), _) => return,
    }
    let op = match u {
        Update::Put(k, v) => Op::Put(k.clone(), v.clone()),
        Update::Delete(k) => Op::Delete(k.clone()),
        Update::Merge(k, v) => Op::Merge(k.clone(), v.clone()),
        Update::DeleteRange(s, e) => Op::DeleteRange(s.clone(), e.clone()),
        Update::InCf(..) => return,
    };
    model_write(map, &op);
}
