//! The `wal` and `batch` targets: log files through `LogReader`, records through
//! `WriteBatch::from_data`.

use std::path::Path;
use strata::batch::WriteBatchInternal;
use strata::env::{FaultFs, FileSystem};
use strata::wal::{LogError, LogReader, LogWriter, BLOCK_SIZE, HEADER_SIZE};
use strata::WriteBatch;

const PATH: &str = "/fuzz/000001.log";
const REWRITTEN: &str = "/fuzz/000002.log";

/// Reads `data` as a log file to the end, checks every record as a write batch, and
/// checks that the records read, written again with `LogWriter`, read back exactly.
/// Then the same with every fragment checksum fixed up.
pub fn check_wal(data: &[u8]) {
    run_log(data);
    if let Some(fixed) = crate::fixup::log(data) {
        run_log(&fixed);
    }
}

fn run_log(data: &[u8]) {
    let fs = FaultFs::new();
    fs.create_dir_all(Path::new("/fuzz"))
        .expect("in-memory mkdir");
    let (records, _errors) = read_log(&fs, PATH, data);
    for r in &records {
        check_batch(r);
    }
    let mut w = LogWriter::new(fs.create(Path::new(REWRITTEN)).expect("in-memory create"));
    for r in &records {
        w.add_record(r).expect("in-memory append");
    }
    drop(w);
    let rewritten = fs.file_bytes(REWRITTEN).expect("rewritten log exists");
    let (again, errors) = read_log(&fs, REWRITTEN, &rewritten);
    assert_eq!(errors, 0, "a log written by LogWriter failed to read back");
    assert_eq!(again, records, "log round trip");
}

/// Every record of the log at `path` (set to `data`), and the number of errors met.
/// Asserts the reader makes progress: each call consumes a fragment header or the rest
/// of a block, so a file of `n` bytes needs at most about `n / 7` calls.
fn read_log(fs: &FaultFs, path: &str, data: &[u8]) -> (Vec<Vec<u8>>, usize) {
    fs.set_file_bytes(path, data);
    let file = fs
        .open_sequential(Path::new(path))
        .expect("in-memory file opens");
    let mut reader = LogReader::new(file);
    let bound = data.len() / HEADER_SIZE + data.len() / BLOCK_SIZE + 4;
    let (mut records, mut errors) = (Vec::new(), 0);
    let mut buf = Vec::new();
    for _ in 0..bound {
        match reader.read_record(&mut buf) {
            Ok(Some(offset)) => {
                assert!(offset < data.len() as u64, "record offset past the end");
                records.push(buf.clone());
            }
            Ok(None) => return (records, errors),
            Err(LogError::Io(e)) => panic!("in-memory read failed: {e}"),
            Err(e) => {
                assert!(e.offset() < data.len() as u64, "error offset past the end");
                errors += 1;
            }
        }
    }
    panic!(
        "log reader made no progress after {bound} calls on {} bytes",
        data.len()
    );
}

/// Decodes `data` as a serialized write batch; if it decodes, rebuilds it from its
/// updates and checks that the rebuilt batch holds the same updates.
pub fn check_batch(data: &[u8]) {
    let Ok(batch) = WriteBatch::from_data(data.to_vec()) else {
        return;
    };
    assert_eq!(batch.data(), data, "from_data keeps the bytes");
    let mut updates = Vec::new();
    batch
        .iterate_cf(|cf, seq, kind, k, v| updates.push((cf, seq, kind, k.to_vec(), v.to_vec())))
        .expect("a batch from_data accepted fails to iterate");
    assert_eq!(updates.len(), batch.len(), "update count");
    // Rebuilt with the builders' rules (every kind, every family, the limits).
    let mut rebuilt = WriteBatch::new();
    rebuilt.set_sequence(batch.sequence());
    for (cf, _, kind, k, v) in &updates {
        rebuilt.add_record(*cf, *kind, k, v);
    }
    // `from_data` and the builders apply the same size limits.
    assert_eq!(
        batch.limit_exceeded().map(|o| o.what),
        rebuilt.limit_exceeded().map(|o| o.what),
        "limit checks of from_data and the builders disagree"
    );
    if batch.limit_exceeded().is_some() {
        return; // The builders stopped adding at the violation.
    }
    let mut again = Vec::new();
    WriteBatch::from_data(rebuilt.data().to_vec())
        .expect("a rebuilt batch decodes")
        .iterate_cf(|cf, seq, kind, k, v| again.push((cf, seq, kind, k.to_vec(), v.to_vec())))
        .expect("a rebuilt batch iterates");
    assert_eq!(again, updates, "batch round trip");
}
