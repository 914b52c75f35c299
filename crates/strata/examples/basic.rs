//! A tour of the API: open, write, batch, snapshot, iterate both ways, flush, compact.
//! Run with `cargo run -p strata --example basic`.

use strata::{Db, Options, ReadOptions, WriteBatch, WriteOptions};

fn main() -> strata::Result<()> {
    let dir = std::env::temp_dir().join(format!("strata-example-{}", std::process::id()));
    let db = Db::open(&dir, Options::default())?;
    let wo = WriteOptions::default();

    db.put(&wo, b"apple", b"red")?;
    db.put(&wo, b"banana", b"yellow")?;
    let snapshot = db.snapshot();

    let mut batch = WriteBatch::new();
    batch.put(b"cherry", b"dark red");
    batch.delete(b"apple");
    db.write(&WriteOptions::default().with_sync(true), batch)?;

    let now = ReadOptions::default();
    let then = ReadOptions::default().with_snapshot(snapshot);
    println!("apple now: {:?}", db.get(&now, b"apple")?);
    println!(
        "apple at snapshot: {:?}",
        db.get(&then, b"apple")?.map(String::from_utf8)
    );

    let mut it = db.iter(&now)?;
    it.seek_to_last();
    while it.valid() {
        println!(
            "{} = {}",
            String::from_utf8_lossy(it.key()),
            String::from_utf8_lossy(it.value())
        );
        it.prev();
    }
    it.status()?;
    drop(it);

    db.flush()?;
    db.compact_range(None, None)?;
    println!("{}", db.stats().level_table());
    db.close()?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
