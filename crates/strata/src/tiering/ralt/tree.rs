//! RALT's tree: versions of its levels, the merged scan over them, the table list on
//! disk, and leveled compaction.
//!
//! Levels: L0 holds whole flushed buffers, newest first, which may overlap; L1 and
//! deeper are sorted runs of disjoint tables, each level `ratio` times the one above
//! (L1's target is `ratio` buffers). Records of one key in several levels are combined
//! by [`Record::merge`] whenever they are read together (scans) or written together
//! (compactions, evictions); the newer one is always the one nearer L0.
//!
//! # The table list (`TABLES`, format version 1)
//! ```text
//! magic u32 "RALT" | version u32 (1) | accessed bytes u64 | hot threshold f64
//! | hot limit u64 | physical limit u64 | next table number u64 | tables u32
//! | (level u32 | number u64) × tables | crc32c of everything before u32 (masked)
//! ```
//! Written with `write_file_atomic` (temp file, fsync, rename, directory fsync) after
//! every change of the tree, and only after the tables it names are fsynced; so a
//! crash leaves the previous list or the new one, each naming whole tables. Tables it
//! does not name are removed at open.

use super::record::{Counting, Keyed, Record};
use super::table::{RaltIo, RaltTable, TableScan, TableWriter};
use crate::coding::{get_fixed32, get_fixed64, mask_crc, put_fixed32, put_fixed64, unmask_crc};
use crate::env::{read_to_vec, write_file_atomic, FileSystem};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The list's file name in RALT's directory.
pub const LIST: &str = "TABLES";
const LIST_MAGIC: u32 = 0x544C_4152;
const LIST_VERSION: u32 = 1;

/// One immutable state of the tree. Readers hold it through an `Arc`.
#[derive(Clone, Debug, Default)]
pub struct Version {
    /// `levels[0]`: L0, newest first; deeper: sorted by key, disjoint.
    pub levels: Vec<Vec<Arc<RaltTable>>>,
    /// The rank at or above which a record is hot (−∞ before the first eviction).
    pub hot_threshold: f64,
}

impl Version {
    /// An empty tree.
    pub fn empty() -> Version {
        Version {
            levels: vec![Vec::new()],
            hot_threshold: f64::NEG_INFINITY,
        }
    }

    /// Every table, newest level first (L0 newest first, then L1, L2, ...).
    pub fn tables(&self) -> impl Iterator<Item = (usize, &Arc<RaltTable>)> {
        self.levels
            .iter()
            .enumerate()
            .flat_map(|(l, ts)| ts.iter().map(move |t| (l, t)))
    }

    /// Bytes of every table file.
    pub fn file_bytes(&self) -> u64 {
        self.tables().map(|(_, t)| t.size).sum()
    }

    /// Hot bytes of the tree, estimated as `Ralt::range_hot` does: L0's tables are
    /// whole buffers repeating the same hot keys, so the largest stands for L0; a key
    /// hot in two deeper levels counts twice. The trigger of an eviction, which then
    /// counts each key once.
    pub fn hot_bytes(&self) -> u64 {
        let l0 = self
            .levels
            .first()
            .and_then(|ts| ts.iter().map(|t| t.hot_bytes).max())
            .unwrap_or(0);
        l0 + self
            .levels
            .iter()
            .skip(1)
            .flatten()
            .map(|t| t.hot_bytes)
            .sum::<u64>()
    }

    /// Bytes of level `level`'s tables.
    pub fn level_bytes(&self, level: usize) -> u64 {
        self.levels
            .get(level)
            .map_or(0, |ts| ts.iter().map(|t| t.size).sum())
    }

    /// The tables of `level` overlapping `[lo, hi]` (every L0 table that does).
    pub fn overlapping(&self, level: usize, lo: &[u8], hi: &[u8]) -> Vec<Arc<RaltTable>> {
        self.levels.get(level).map_or_else(Vec::new, |ts| {
            ts.iter()
                .filter(|t| t.first_key() <= hi && lo <= t.last_key())
                .cloned()
                .collect()
        })
    }
}

/// A scan of several tables merged by key, records of one key combined; `sources`
/// ordered newest first.
pub struct MergedScan {
    scans: Vec<TableScan>,
    counting: Counting,
}

impl MergedScan {
    /// A merged scan of `tables` (newest first) from the first key `>= lo`.
    ///
    /// # Errors
    /// `Corruption` or I/O errors reading the first blocks.
    pub fn new(tables: &[Arc<RaltTable>], lo: &[u8], counting: Counting) -> Result<MergedScan> {
        let scans = tables
            .iter()
            .map(|t| TableScan::new(Arc::clone(t), lo))
            .collect::<Result<Vec<_>>>()?;
        Ok(MergedScan { scans, counting })
    }

    /// The next key and its combined record, or `None` at the end.
    ///
    /// # Errors
    /// `Corruption` or I/O errors reading a block.
    pub fn next_record(&mut self) -> Result<Option<Keyed>> {
        let Some(key) = self
            .scans
            .iter()
            .filter_map(|s| s.peek().map(|(k, _)| k))
            .min()
            .cloned()
        else {
            return Ok(None);
        };
        let mut acc: Option<Record> = None;
        for s in &mut self.scans {
            if let Some((k, r)) = s.peek() {
                if *k == key {
                    // Sources are newest first: `acc` is newer than `r`.
                    let r = *r;
                    acc = Some(match acc {
                        None => r,
                        Some(newer) => Record::merge(&r, &newer, &self.counting),
                    });
                    s.advance()?;
                }
            }
        }
        Ok(acc.map(|r| (key, r)))
    }
}

/// Where new tables are written, and the settings they are written with.
pub struct Writer<'a> {
    /// The file system.
    pub fs: &'a dyn FileSystem,
    /// RALT's directory.
    pub dir: &'a Path,
    /// Byte counters.
    pub io: &'a Arc<RaltIo>,
    /// Data block size.
    pub block_size: usize,
    /// Bloom bits per hot key.
    pub bloom_bits: u32,
    /// Target table size.
    pub table_size: u64,
}

/// The path of table `number` in `dir`.
pub fn table_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:06}.ralt"))
}

/// Tables being written by one job, cut at the target size.
pub struct Outputs<'a, 'w> {
    writer: &'w Writer<'a>,
    next_number: &'w mut u64,
    current: Option<(u64, TableWriter)>,
    done: Vec<Arc<RaltTable>>,
}

impl<'a, 'w> Outputs<'a, 'w> {
    /// Outputs numbered from `next_number` on (advanced as tables are created).
    pub fn new(writer: &'w Writer<'a>, next_number: &'w mut u64) -> Self {
        Outputs {
            writer,
            next_number,
            current: None,
            done: Vec::new(),
        }
    }

    /// Adds a record (keys ascending across calls).
    ///
    /// # Errors
    /// I/O errors; `Internal` for keys out of order.
    pub fn add(&mut self, key: &[u8], record: &Record, hot: bool) -> Result<()> {
        if self.current.is_none() {
            let number = *self.next_number;
            *self.next_number += 1;
            let file = self
                .writer
                .fs
                .create(&table_path(self.writer.dir, number))?;
            let w = TableWriter::new(
                file,
                Arc::clone(self.writer.io),
                self.writer.block_size,
                self.writer.bloom_bits,
            );
            self.current = Some((number, w));
        }
        if let Some((_, w)) = self.current.as_mut() {
            w.add(key, record, hot)?;
            if w.estimated_size() >= self.writer.table_size {
                self.finish_table()?;
            }
        }
        Ok(())
    }

    fn finish_table(&mut self) -> Result<()> {
        let Some((number, w)) = self.current.take() else {
            return Ok(());
        };
        w.finish()?;
        let path = table_path(self.writer.dir, number);
        let file = self.writer.fs.open_random(&path)?;
        self.done.push(Arc::new(RaltTable::open(
            number,
            &path,
            file,
            Arc::clone(self.writer.io),
        )?));
        Ok(())
    }

    /// Finishes the last table, fsyncs the directory and returns the tables in key
    /// order.
    ///
    /// # Errors
    /// I/O errors.
    pub fn finish(mut self) -> Result<Vec<Arc<RaltTable>>> {
        self.finish_table()?;
        if !self.done.is_empty() {
            self.writer.fs.sync_dir(self.writer.dir)?;
        }
        Ok(self.done)
    }
}

/// A decoded table list: the state and each table's `(level, number)`.
pub type Listed = (Persisted, Vec<(usize, u64)>);

/// What the list records besides the tables.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Persisted {
    /// Bytes accessed since RALT was created (ticks and periods derive from it).
    pub accessed: u64,
    /// The hot threshold (a rank).
    pub hot_threshold: f64,
    /// The hot-set limit.
    pub hot_limit: u64,
    /// The physical limit.
    pub phys_limit: u64,
    /// The next table number.
    pub next_number: u64,
}

/// Encodes the list (module docs).
pub fn encode_list(state: &Persisted, version: &Version) -> Vec<u8> {
    let mut out = Vec::new();
    put_fixed32(&mut out, LIST_MAGIC);
    put_fixed32(&mut out, LIST_VERSION);
    put_fixed64(&mut out, state.accessed);
    put_fixed64(&mut out, state.hot_threshold.to_bits());
    put_fixed64(&mut out, state.hot_limit);
    put_fixed64(&mut out, state.phys_limit);
    put_fixed64(&mut out, state.next_number);
    let tables: Vec<(usize, u64)> = version.tables().map(|(l, t)| (l, t.number)).collect();
    put_fixed32(&mut out, u32::try_from(tables.len()).unwrap_or(u32::MAX));
    for (level, number) in tables {
        put_fixed32(&mut out, u32::try_from(level).unwrap_or(u32::MAX));
        put_fixed64(&mut out, number);
    }
    let crc = mask_crc(crc32c::crc32c(&out));
    put_fixed32(&mut out, crc);
    out
}

/// Decodes a list: the state and each table's `(level, number)` in list order.
///
/// # Errors
/// `Corruption` naming `path` and the offset.
pub fn decode_list(path: &Path, data: &[u8]) -> Result<Listed> {
    let corrupt = |offset: usize, reason: &str| Error::Corruption {
        file: path.to_path_buf(),
        offset: offset as u64,
        reason: format!("RALT table list: {reason}"),
    };
    let body_len = data
        .len()
        .checked_sub(4)
        .ok_or_else(|| corrupt(0, "truncated"))?;
    let body = data.get(..body_len).unwrap_or_default();
    if get_fixed32(data, body_len).map(unmask_crc) != Some(crc32c::crc32c(body)) {
        return Err(corrupt(body_len, "checksum mismatch"));
    }
    if get_fixed32(body, 0) != Some(LIST_MAGIC) {
        return Err(corrupt(0, "bad magic"));
    }
    match get_fixed32(body, 4) {
        Some(v) if (1..=LIST_VERSION).contains(&v) => {}
        v => return Err(corrupt(4, &format!("unsupported version {v:?}"))),
    }
    let f64_at = |at: usize| get_fixed64(body, at).ok_or_else(|| corrupt(at, "truncated"));
    let state = Persisted {
        accessed: f64_at(8)?,
        hot_threshold: f64::from_bits(f64_at(16)?),
        hot_limit: f64_at(24)?,
        phys_limit: f64_at(32)?,
        next_number: f64_at(40)?,
    };
    let n = get_fixed32(body, 48).ok_or_else(|| corrupt(48, "truncated"))? as usize;
    let mut tables = Vec::new();
    for i in 0..n {
        let at = 52 + i * 12;
        let level = get_fixed32(body, at).ok_or_else(|| corrupt(at, "truncated"))? as usize;
        let number = f64_at(at + 4)?;
        if level >= super::MAX_LEVELS || number >= state.next_number {
            return Err(corrupt(at, "bad table entry"));
        }
        tables.push((level, number));
    }
    if body.len() != 52 + n * 12 {
        return Err(corrupt(52 + n * 12, "trailing bytes"));
    }
    Ok((state, tables))
}

/// Writes the list for `state` and `version`.
///
/// # Errors
/// I/O errors.
pub fn store_list(
    fs: &dyn FileSystem,
    dir: &Path,
    io: &RaltIo,
    state: &Persisted,
    version: &Version,
) -> Result<()> {
    let data = encode_list(state, version);
    io.bytes_written
        .fetch_add(data.len() as u64, std::sync::atomic::Ordering::Relaxed);
    write_file_atomic(fs, dir, LIST, &data)
}

/// Reads the list in `dir`, if there is one.
///
/// # Errors
/// I/O errors; `Corruption` for a damaged list.
pub fn load_list(fs: &dyn FileSystem, dir: &Path) -> Result<Option<Listed>> {
    let path = dir.join(LIST);
    if !fs.exists(&path) {
        return Ok(None);
    }
    let data = read_to_vec(fs, &path)?;
    decode_list(&path, &data).map(Some)
}

/// A compaction of the tree: the input tables (newest first) and the output level.
#[derive(Debug)]
pub struct Compaction {
    /// Inputs, newest first.
    pub inputs: Vec<Arc<RaltTable>>,
    /// Where the output goes.
    pub output_level: usize,
}

/// The next compaction the tree needs, if any: all of L0 into L1 once L0 holds
/// `l0_trigger` tables; otherwise the first level over its target (`base ×
/// ratio^(level − 1)`) gives the table overlapping the fewest bytes of the next level.
pub fn pick(version: &Version, l0_trigger: usize, base: u64, ratio: u64) -> Option<Compaction> {
    let l0 = version.levels.first()?;
    if l0.len() >= l0_trigger {
        let lo = l0.iter().map(|t| t.first_key()).min()?.to_vec();
        let hi = l0.iter().map(|t| t.last_key()).max()?.to_vec();
        let mut inputs = l0.clone();
        inputs.extend(version.overlapping(1, &lo, &hi));
        return Some(Compaction {
            inputs,
            output_level: 1,
        });
    }
    let mut target = base;
    for level in 1..version.levels.len() {
        if level + 1 < super::MAX_LEVELS && version.level_bytes(level) > target {
            let tables = version.levels.get(level)?;
            let best = tables.iter().min_by_key(|t| {
                version
                    .overlapping(level + 1, t.first_key(), t.last_key())
                    .iter()
                    .map(|o| o.size)
                    .sum::<u64>()
            })?;
            let mut inputs = vec![Arc::clone(best)];
            inputs.extend(version.overlapping(level + 1, best.first_key(), best.last_key()));
            return Some(Compaction {
                inputs,
                output_level: level + 1,
            });
        }
        target = target.saturating_mul(ratio);
    }
    None
}

/// `version` with the `inputs` of `c` replaced by `outputs` (sorted) in its output
/// level.
pub fn apply(version: &Version, c: &Compaction, outputs: Vec<Arc<RaltTable>>) -> Version {
    let gone = |t: &Arc<RaltTable>| c.inputs.iter().any(|i| i.number == t.number);
    let mut levels: Vec<Vec<Arc<RaltTable>>> = version
        .levels
        .iter()
        .map(|ts| ts.iter().filter(|t| !gone(t)).cloned().collect())
        .collect();
    while levels.len() <= c.output_level {
        levels.push(Vec::new());
    }
    if let Some(out) = levels.get_mut(c.output_level) {
        out.extend(outputs);
        out.sort_by(|a, b| a.first_key().cmp(b.first_key()));
    }
    Version {
        levels,
        hot_threshold: version.hot_threshold,
    }
}
