//! Protects: the `tracing` spans of flush and compaction jobs (docs/ARCHITECTURE.md
//! §10.1): a flush enters a `flush` span and a manual compaction a `compaction` span,
//! each with the fields `cf_id`, `reason`, `output_level` and `inputs`. A small
//! subscriber of this file's own records every span created; it is the process's
//! global one (the jobs run on the background threads), so this file holds one test.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use strata::{Db, Options, WriteOptions};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A span as created: its name and its fields, each formatted with `Debug`.
type SpanRecord = (&'static str, Vec<(&'static str, String)>);

#[derive(Default)]
struct Spans {
    seen: Mutex<Vec<SpanRecord>>,
    last_id: AtomicU64,
}

struct Fields(Vec<(&'static str, String)>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name(), format!("{value:?}")));
    }
}

struct Recorder(Arc<Spans>);

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut fields = Fields(Vec::new());
        span.record(&mut fields);
        self.0
            .seen
            .lock()
            .unwrap()
            .push((span.metadata().name(), fields.0));
        Id::from_u64(self.0.last_id.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, _: &Event<'_>) {}

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

fn field<'a>(span: &'a SpanRecord, name: &str) -> &'a str {
    span.1
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("span {} has no field {name}: {:?}", span.0, span.1))
}

#[test]
fn flush_and_compaction_jobs_enter_their_spans_with_their_fields() {
    let spans = Arc::new(Spans::default());
    tracing::subscriber::set_global_default(Recorder(Arc::clone(&spans))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let wo = WriteOptions::default();
    for round in 0..2u32 {
        for i in 0..20u32 {
            db.put(&wo, format!("k{i:02}").as_bytes(), &round.to_le_bytes())
                .unwrap();
        }
        db.flush().unwrap();
    }
    db.compact_range(None, None).unwrap();
    db.close().unwrap();

    let seen = spans.seen.lock().unwrap().clone();
    let names = ["cf_id", "reason", "output_level", "inputs"];
    let flushes: Vec<&SpanRecord> = seen.iter().filter(|s| s.0 == "flush").collect();
    assert_eq!(flushes.len(), 2, "{seen:?}");
    for f in &flushes {
        let fields: Vec<&str> = f.1.iter().map(|(n, _)| *n).collect();
        assert_eq!(fields, names, "{f:?}");
        assert_eq!(field(f, "cf_id"), "0");
        assert_eq!(field(f, "reason"), "Flush");
        assert_eq!(field(f, "output_level"), "Some(0)");
        // A flush reads a memtable, no input file.
        assert_eq!(field(f, "inputs"), "0");
    }
    let compactions: Vec<&SpanRecord> = seen.iter().filter(|s| s.0 == "compaction").collect();
    assert!(!compactions.is_empty(), "{seen:?}");
    let manual = compactions
        .iter()
        .find(|c| field(c, "reason") == "Manual")
        .unwrap_or_else(|| panic!("no manual compaction span: {seen:?}"));
    let fields: Vec<&str> = manual.1.iter().map(|(n, _)| *n).collect();
    assert_eq!(fields, names, "{manual:?}");
    assert_eq!(field(manual, "cf_id"), "0");
    // Both L0 tables are its inputs, and it writes below L0.
    assert_eq!(field(manual, "inputs"), "2", "{manual:?}");
    assert!(
        field(manual, "output_level").starts_with("Some("),
        "{manual:?}"
    );
    assert_ne!(field(manual, "output_level"), "Some(0)", "{manual:?}");
}
