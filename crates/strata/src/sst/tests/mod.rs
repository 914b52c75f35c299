//! Table-level tests: model round trips, corruption, and the frozen fixture.
//!
//! Tables are built into memory ([`MemWritable`]) and read back through
//! [`MemRandom`], so the tests exercise exactly the bytes the builder produced.

mod corruption;
#[cfg(target_os = "linux")]
mod direct_io;
mod fixture;
mod limits;
mod model;
mod offsets;

use super::*;
use crate::cache::BlockCache;
use crate::env::{RandomAccessFile, WritableFile};
use crate::error::{Error, IoOp, Result};
use crate::key::{make_internal_key, ValueKind};
use crate::stats::Statistics;
use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Sorted `(internal key, value)` pairs.
pub(super) type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// A writable file appending to a shared buffer.
pub(super) struct MemWritable(pub Arc<Mutex<Vec<u8>>>);

impl WritableFile for MemWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.0.lock().extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn len(&self) -> u64 {
        self.0.lock().len() as u64
    }
}

/// A random-access file over bytes in memory.
pub(super) struct MemRandom {
    pub data: Vec<u8>,
    pub path: PathBuf,
}

impl RandomAccessFile for MemRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        match self.data.get(start..start.saturating_add(buf.len())) {
            Some(src) => {
                buf.copy_from_slice(src);
                Ok(())
            }
            None => Err(Error::io(
                IoOp::Read,
                &self.path,
                std::io::Error::from(std::io::ErrorKind::UnexpectedEof),
            )),
        }
    }
    fn size(&self) -> u64 {
        self.data.len() as u64
    }
    fn path(&self) -> &Path {
        &self.path
    }
}

/// Builds a table from `entries` (must be sorted) and returns its bytes and properties.
pub(super) fn build(
    entries: &[(Vec<u8>, Vec<u8>)],
    opts: &TableOptions,
) -> (Vec<u8>, TableProperties) {
    build_with_range_dels(entries, opts, crate::range_del::Fragments::default())
}

/// [`build`] with range tombstones.
pub(super) fn build_with_range_dels(
    entries: &[(Vec<u8>, Vec<u8>)],
    opts: &TableOptions,
    range_dels: crate::range_del::Fragments,
) -> (Vec<u8>, TableProperties) {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let mut b = TableBuilder::new(Box::new(MemWritable(Arc::clone(&buf))), opts.clone());
    for (k, v) in entries {
        b.add(k, v).expect("add");
    }
    b.set_range_dels(range_dels);
    let props = b.finish().expect("finish");
    assert_eq!(props.num_entries, entries.len() as u64);
    let bytes = std::mem::take(&mut *buf.lock());
    assert_eq!(props.file_size, bytes.len() as u64);
    (bytes, props)
}

/// Opens table bytes as file 7.
pub(super) fn open(
    bytes: Vec<u8>,
    cache: Option<Arc<BlockCache>>,
    stats: Arc<Statistics>,
    paranoid: bool,
) -> Result<Arc<Table>> {
    open_with(bytes, cache, stats, false, paranoid)
}

/// [`open`], with the index block and filter in the block cache iff `cache_meta`.
pub(super) fn open_with(
    bytes: Vec<u8>,
    cache: Option<Arc<BlockCache>>,
    stats: Arc<Statistics>,
    cache_meta: bool,
    paranoid: bool,
) -> Result<Arc<Table>> {
    let file = Arc::new(MemRandom {
        data: bytes,
        path: PathBuf::from("/mem/000007.sst"),
    });
    Table::open(file, 7, cache, stats, cache_meta, paranoid).map(Arc::new)
}

pub(super) fn ikey(user_key: &[u8], seq: u64, kind: ValueKind) -> Vec<u8> {
    make_internal_key(user_key, seq, kind)
}

/// Small blocks, so a few hundred entries span many blocks.
pub(super) fn small_opts(c: Compression) -> TableOptions {
    TableOptions {
        block_size: 256,
        block_restart_interval: 4,
        bloom_bits_per_key: 10,
        compression: c,
        column_group: 0,
    }
}

#[test]
fn builder_rejects_out_of_order_and_malformed_keys() {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let mut b = TableBuilder::new(Box::new(MemWritable(buf)), small_opts(Compression::None));
    b.add(&ikey(b"b", 5, ValueKind::Put), b"v").expect("first");
    let e = b.add(&ikey(b"a", 5, ValueKind::Put), b"v");
    assert!(matches!(e, Err(Error::Internal(_))));
    let e = b.add(&ikey(b"b", 5, ValueKind::Put), b"v");
    assert!(matches!(e, Err(Error::Internal(_))), "duplicate key");
    let e = b.add(&ikey(b"b", 6, ValueKind::Put), b"v");
    assert!(
        matches!(e, Err(Error::Internal(_))),
        "newer seq sorts first"
    );
    let e = b.add(b"short", b"v");
    assert!(matches!(e, Err(Error::Internal(_))));
    b.add(&ikey(b"b", 4, ValueKind::Delete), b"")
        .expect("older version");
    let p = b.finish().expect("finish");
    assert_eq!((p.num_entries, p.num_deletions), (2, 1));
    assert_eq!((p.smallest_seqno, p.largest_seqno), (4, 5));
}

#[test]
fn empty_table_round_trips() {
    let (bytes, props) = build(&[], &small_opts(Compression::None));
    assert_eq!(props.num_entries, 0);
    let t = open(bytes, None, Arc::default(), true).expect("open");
    assert_eq!(t.properties(), &props);
    assert_eq!(
        t.get(&ikey(b"a", 9, ValueKind::Merge), |_, _| ())
            .expect("get"),
        None
    );
    let mut it = t.iter();
    crate::iter::InternalIterator::seek_to_first(&mut it);
    assert!(!crate::iter::InternalIterator::valid(&it));
    assert!(crate::iter::InternalIterator::status(&it).is_ok());
}

#[test]
fn worked_example_in_module_docs_is_exact() {
    let opts = TableOptions {
        block_size: 4096,
        block_restart_interval: 16,
        bloom_bits_per_key: 0,
        compression: Compression::None,
        column_group: 0,
    };
    let (bytes, _) = build(&[(ikey(b"a", 1, ValueKind::Put), b"x".to_vec())], &opts);
    let expect: &[u8] = &[
        0x00, 0x09, 0x01, 0x61, 0x01, 0x01, 0, 0, 0, 0, 0, 0, 0x78, 0, 0, 0, 0, 1, 0, 0, 0, 1,
    ];
    assert_eq!(&bytes[..22], expect);
    let crc = crate::coding::mask_crc(crc32c::crc32c(expect));
    assert_eq!(&bytes[22..26], &crc.to_le_bytes());
}

#[test]
fn shared_types_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Table>();
    send_sync::<BlockCache>();
    send_sync::<crate::cache::TableCache>();
    send::<TableIterator>();
    send::<TableBuilder>();
}
