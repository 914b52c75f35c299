//! The engine's figures through the `metrics` facade (cargo feature `metrics`;
//! docs/ARCHITECTURE.md §10.2 lists every name, its type and its labels).
//!
//! Two kinds of emission, so that the read and write paths do as little as possible:
//! - **At the counting point**, through handles registered once and kept: a family's
//!   ([`FamilyMetrics`], registered when the family is opened or created) for its
//!   gets, writes, flushes and compactions, the database's ([`DbMetrics`], at open)
//!   for write latency, and a data path's for its read latency (`stats::path`). An
//!   update is the handle's own operation (an atomic add, or a lock-free push for a
//!   histogram, in the usual recorders): no name lookup, no lock of the engine's.
//! - **By the publisher** ([`publish_loop`], the thread `strata-metrics` of a
//!   read-write open), once per [`PUBLISH_PERIOD`], and once more at close
//!   ([`publish`]): gauges read from each family's read view and state, and every
//!   [`crate::StatisticsSnapshot`] counter and per-path counter set to its exact total
//!   (`Counter::absolute`). The counting points of those figures stay as they are; a
//!   scrape is at most one period behind them.
//!
//! A handle belongs to the recorder installed when it was registered: install the
//! recorder (globally, or as the local recorder of the thread that opens the database
//! and creates its families) before `Db::open`. One installed later sees nothing of a
//! database already open.

use super::family::Family;
use super::family_view::FamilyView;
use super::super_version::SuperVersion;
use super::DbInner;
use crate::error::Result;
use crate::stats::path::PathStats;
use crate::stats::StatisticsSnapshot;
use crate::version::virtual_table::table_space;
use metrics::{Counter, Gauge, Histogram};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the publisher refreshes the gauges and the counters it publishes.
pub(crate) const PUBLISH_PERIOD: Duration = Duration::from_secs(1);

/// The handles of one column family, labelled `db` with its database's label and `cf`
/// with its name.
pub(crate) struct FamilyMetrics {
    gets: Counter,
    get_hits: Counter,
    get_misses: Counter,
    get_seconds: Histogram,
    writes: Counter,
    bytes_written: Counter,
    flushes: Counter,
    flush_bytes_written: Counter,
    flush_seconds: Histogram,
    compactions: Counter,
    compaction_bytes_read: Counter,
    compaction_bytes_written: Counter,
    compaction_seconds: Histogram,
    memtable_bytes: Gauge,
    immutable_memtables: Gauge,
    live_table_bytes: Gauge,
    pending_compaction_bytes: Gauge,
    /// Per level, L0 first: its files and their bytes.
    levels: Vec<(Gauge, Gauge)>,
}

impl FamilyMetrics {
    /// Registers the handles of family `name` of the database labelled `db`, which
    /// has `num_levels` levels.
    pub fn new(db: &str, name: &str, num_levels: usize) -> FamilyMetrics {
        let labels = || [("db", db.to_owned()), ("cf", name.to_owned())];
        let counter = |n: &'static str| metrics::counter!(n, &labels());
        let gauge = |n: &'static str| metrics::gauge!(n, &labels());
        let histogram = |n: &'static str| metrics::histogram!(n, &labels());
        let level_gauge = |n: &'static str, level: usize| {
            let [db, cf] = labels();
            let labels = [db, cf, ("level", level.to_string())];
            metrics::gauge!(n, &labels)
        };
        FamilyMetrics {
            gets: counter("strata_gets_total"),
            get_hits: counter("strata_get_hits_total"),
            get_misses: counter("strata_get_misses_total"),
            get_seconds: histogram("strata_get_seconds"),
            writes: counter("strata_writes_total"),
            bytes_written: counter("strata_bytes_written_total"),
            flushes: counter("strata_flushes_total"),
            flush_bytes_written: counter("strata_flush_bytes_written_total"),
            flush_seconds: histogram("strata_flush_seconds"),
            compactions: counter("strata_compactions_total"),
            compaction_bytes_read: counter("strata_compaction_bytes_read_total"),
            compaction_bytes_written: counter("strata_compaction_bytes_written_total"),
            compaction_seconds: histogram("strata_compaction_seconds"),
            memtable_bytes: gauge("strata_memtable_bytes"),
            immutable_memtables: gauge("strata_immutable_memtables"),
            live_table_bytes: gauge("strata_live_table_bytes"),
            pending_compaction_bytes: gauge("strata_pending_compaction_bytes"),
            levels: (0..num_levels)
                .map(|l| {
                    (
                        level_gauge("strata_level_files", l),
                        level_gauge("strata_level_bytes", l),
                    )
                })
                .collect(),
        }
    }

    /// A point lookup that began at `started` answered `answer`: counts it, as a hit
    /// or a miss (an error is neither), and records its latency.
    #[inline]
    pub fn got(&self, answer: &Result<Option<Vec<u8>>>, started: Instant) {
        self.get_seconds.record(started.elapsed());
        self.got_many(std::slice::from_ref(answer));
    }

    /// Point lookups (a `multi_get`'s, untimed: the batch shares its work) answered
    /// `answers`: counts each, as a hit or a miss (an error is neither).
    pub fn got_many(&self, answers: &[Result<Option<Vec<u8>>>]) {
        let hits = answers.iter().filter(|a| matches!(a, Ok(Some(_)))).count() as u64;
        let misses = answers.iter().filter(|a| matches!(a, Ok(None))).count() as u64;
        self.gets.increment(answers.len() as u64);
        self.get_hits.increment(hits);
        self.get_misses.increment(misses);
    }

    /// An installed flush (`flush`) or compaction job read and wrote `bytes` (read,
    /// written) of tables and ran for `took` (its execution, as `compaction_micros`).
    pub fn job_installed(&self, flush: bool, (read, written): (u64, u64), took: Duration) {
        if flush {
            self.flushes.increment(1);
            self.flush_bytes_written.increment(written);
            self.flush_seconds.record(took);
        } else {
            self.compactions.increment(1);
            self.compaction_bytes_read.increment(read);
            self.compaction_bytes_written.increment(written);
            self.compaction_seconds.record(took);
        }
    }

    /// Sets the family's gauges from its read view `sv` and its compaction debt.
    fn publish(&self, sv: &SuperVersion, pending_compaction_bytes: u64) {
        self.memtable_bytes.set(sv.memtable_bytes() as f64);
        self.immutable_memtables.set(sv.imm.len() as f64);
        self.live_table_bytes
            .set(table_space(&sv.version).live_table_bytes as f64);
        self.pending_compaction_bytes
            .set(pending_compaction_bytes as f64);
        for (level, (files, bytes)) in self.levels.iter().enumerate() {
            files.set(sv.version.level_files(level) as f64);
            bytes.set(sv.version.level_bytes(level) as f64);
        }
    }
}

/// The committed records of one write group, per family, counted while the group is
/// inserted and added to the families' counters once it is published. The first
/// family is held inline: most groups write one family, and then the tally allocates
/// nothing.
#[derive(Default)]
pub(crate) struct WriteTally {
    /// (family id, records, key + value bytes) of the first family met.
    first: Option<(u32, u64, u64)>,
    /// The same for every other family met.
    rest: Vec<(u32, u64, u64)>,
}

impl WriteTally {
    /// One record of `bytes` key + value bytes for family `family`.
    #[inline]
    pub fn add(&mut self, family: u32, bytes: u64) {
        let bump = |e: &mut (u32, u64, u64)| {
            e.1 += 1;
            e.2 += bytes;
        };
        match &mut self.first {
            None => self.first = Some((family, 1, bytes)),
            Some(first) if first.0 == family => bump(first),
            Some(_) => match self.rest.iter_mut().find(|e| e.0 == family) {
                Some(e) => bump(e),
                None => self.rest.push((family, 1, bytes)),
            },
        }
    }

    /// Adds the tally to the counters of the families in `view` (a family dropped
    /// since the batch was checked is no longer there: its records stay in the
    /// database-wide `writes` only).
    pub fn publish(&self, view: &FamilyView) {
        for &(id, records, bytes) in self.first.iter().chain(&self.rest) {
            if let Some(f) = view.find(id) {
                f.metrics.writes.increment(records);
                f.metrics.bytes_written.increment(bytes);
            }
        }
    }
}

/// The database-wide handles, labelled `db`.
pub(crate) struct DbMetrics {
    write_seconds: Histogram,
    block_cache_usage: Gauge,
    /// `strata_db_<name>_total` for each counter of [`StatisticsSnapshot::pairs`], in
    /// its order.
    counters: Vec<Counter>,
    /// Per data path (by path id), labelled `path`: reads, bytes read, writes
    /// (appends), bytes written.
    paths: Vec<[Counter; 4]>,
}

impl DbMetrics {
    /// Registers the handles of the database labelled `db`, for the data paths of
    /// `paths` (by path id).
    pub fn new(db: &str, paths: &[Arc<PathStats>]) -> DbMetrics {
        let label = || ("db", db.to_owned());
        DbMetrics {
            write_seconds: metrics::histogram!("strata_write_seconds", &[label()]),
            block_cache_usage: metrics::gauge!("strata_block_cache_usage_bytes", &[label()]),
            counters: StatisticsSnapshot::default()
                .pairs()
                .into_iter()
                .map(|(name, _)| metrics::counter!(format!("strata_db_{name}_total"), &[label()]))
                .collect(),
            paths: paths
                .iter()
                .map(|p| {
                    let counter = |n: &'static str| {
                        let labels = [label(), ("path", p.dir().display().to_string())];
                        metrics::counter!(n, &labels)
                    };
                    [
                        counter("strata_path_reads_total"),
                        counter("strata_path_read_bytes_total"),
                        counter("strata_path_writes_total"),
                        counter("strata_path_written_bytes_total"),
                    ]
                })
                .collect(),
        }
    }

    /// A write call (a batch, not a forced switch) that began at `started` returned.
    #[inline]
    pub fn wrote(&self, started: Instant) {
        self.write_seconds.record(started.elapsed());
    }
}

/// Sets the published figures (see the module docs) from the database's state now.
pub(crate) fn publish(inner: &DbInner) {
    let m = &inner.metrics;
    for (counter, (_, value)) in m.counters.iter().zip(inner.stats.snapshot().pairs()) {
        counter.absolute(value);
    }
    for (counters, path) in m.paths.iter().zip(&inner.path_stats) {
        let s = path.snapshot();
        let [reads, read_bytes, writes, written_bytes] = counters;
        reads.absolute(s.reads);
        read_bytes.absolute(s.bytes_read);
        writes.absolute(s.writes);
        written_bytes.absolute(s.bytes_written);
    }
    m.block_cache_usage
        .set(inner.block_cache.as_ref().map_or(0, |c| c.usage()) as f64);
    // Taken under the lock, published after it: the gauges read the read views.
    let families: Vec<(Arc<Family>, u64)> = inner
        .state
        .lock()
        .families
        .values()
        .map(|f| (Arc::clone(&f.family), f.pending_compaction_bytes))
        .collect();
    for (family, pending) in families {
        family
            .metrics
            .publish(&family.super_version.load(), pending);
    }
}

/// The publisher thread: publishes at once, then every [`PUBLISH_PERIOD`] until the
/// database shuts down (`Db::close` publishes a last time once every job is done).
pub(crate) fn publish_loop(inner: &DbInner) {
    loop {
        publish(inner);
        let mut st = inner.state.lock();
        let deadline = Instant::now() + PUBLISH_PERIOD;
        while !st.shutting_down && !inner.bg_cv.wait_until(&mut st, deadline).timed_out() {}
        if st.shutting_down {
            return;
        }
    }
}
