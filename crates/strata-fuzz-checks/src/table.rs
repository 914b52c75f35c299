//! The `sst` target: a whole table file through `Table::open` and every read path.

use crate::reference;
use std::path::Path;
use std::sync::Arc;
use strata::env::{FaultFs, FileSystem};
use strata::iter::InternalIterator;
use strata::key::{self, LookupKey, MAX_SEQUENCE};
use strata::sst::Table;
use strata::stats::Statistics;
use strata::BlockCache;

/// Most entries one scan collects (a fuzzed index may list one block many times).
const MAX_SCAN: usize = 1 << 16;
/// Most keys looked up per table.
const MAX_GETS: usize = 16;

const PATH: &str = "/fuzz/000001.sst";

/// Opens `data` as a table file and reads it every way the engine does; then again
/// with its checksums fixed up.
pub fn check_sst(data: &[u8]) {
    run_table(data);
    if let Some(fixed) = crate::fixup::table(data) {
        run_table(&fixed);
    }
}

/// `(entries, scan stopped early, status ok)`.
type Scan = (Vec<(Vec<u8>, Vec<u8>)>, bool, bool);

fn scan(it: &mut dyn InternalIterator, forward: bool) -> Scan {
    let mut out = Vec::new();
    if forward {
        it.seek_to_first();
    } else {
        it.seek_to_last();
    }
    while it.valid() && out.len() < MAX_SCAN {
        out.push((it.key().to_vec(), it.value().to_vec()));
        if forward {
            it.next();
        } else {
            it.prev();
        }
    }
    let capped = it.valid();
    if !forward {
        out.reverse();
    }
    (out, capped, it.status().is_ok())
}

fn run_table(data: &[u8]) {
    let fs = FaultFs::new();
    fs.set_file_bytes(PATH, data);
    let file = fs
        .open_random(Path::new(PATH))
        .expect("in-memory file opens");
    let stats = Arc::new(Statistics::default());
    let cache = Arc::new(BlockCache::new(1 << 20));
    // Half the inputs keep the index block and filter in the block cache instead.
    let cache_meta = data.first().is_some_and(|b| b & 1 == 1);
    let Ok(table) = Table::open(file, 1, Some(cache), stats, cache_meta, false) else {
        return;
    };
    let table = Arc::new(table);
    let props = table.properties();
    assert_eq!(props.file_size, data.len() as u64, "file size property");

    let (forward, f_capped, f_ok) = scan(&mut table.iter(), true);
    let (backward, b_capped, b_ok) = scan(&mut table.iter(), false);
    let verified = table.verify_checksums();

    let complete = f_ok && b_ok && !f_capped && !b_capped;
    if complete && verified.is_ok() {
        if let Some(r) = reference::parse_table(data).filter(|r| r.handles_ascending()) {
            assert_eq!(forward, r.pairs(), "table scan vs reference");
            if r.aligned() {
                assert_eq!(backward, forward, "backward scan vs forward");
            }
        }
    }

    // Seeks and point lookups on keys the table holds and on their neighbours.
    let step = forward.len().div_ceil(MAX_GETS).max(1);
    let mut it = table.iter();
    for (k, _) in forward.iter().step_by(step) {
        it.seek(k);
        if it.valid() {
            it.prev();
        }
        it.seek_for_prev(k);
        if it.valid() {
            it.next();
        }
        let user_key = key::user_key(k);
        for seq in [MAX_SEQUENCE, key::sequence(k), 0] {
            let lookup = LookupKey::new(user_key, seq);
            let found = table.get(lookup.internal_key(), |ik, v| (ik.to_vec(), v.to_vec()));
            if let Ok(Some((ik, _))) = found {
                assert_eq!(
                    key::user_key(&ik),
                    user_key,
                    "get returned another user key"
                );
            }
        }
        let _ = table.may_contain(user_key);
    }
    let _ = table.get(LookupKey::new(b"", 0).internal_key(), |_, _| ());
}
