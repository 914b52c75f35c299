//! Settled rates: a fill has not finished its work while it leaves compaction debt
//! behind, so a fill followed at once by a wait for compactions (`bench`'s
//! `waitforcompaction`, `ycsb`'s load with `--settle_load`) also yields
//! `<fill>_settled`: the fill's keys over the fill's time plus the wait's, with the L0
//! the fill left (`Record::debt_at_fill_end`) and the bytes the process wrote over
//! both (`Record::process_write_bytes`).

use crate::bench::report;
use crate::engine::EngineStats;
use crate::results::{self, Debt, Record};
use crate::runner::OpStats;

/// A fill whose compaction debt is not yet paid: what the wait right after it needs
/// to state the settled rate.
pub struct Unsettled {
    /// The settled result's name.
    name: String,
    stats: OpStats,
    seconds: f64,
    debt: Debt,
    /// The fill's peak RSS (the wait's is measured apart).
    peak_rss_kb: Option<u64>,
    /// The process's write counter when the fill began
    /// (`results::process_write_bytes`).
    written_before: Option<u64>,
}

/// A fill's settled result. Its latencies are the fill's (the wait has none per key);
/// its engine figures (write amplification) are the ones after the wait. An engine's
/// wait has its own floor (fjall's adapter waits for three quiet polls, 60 ms), which
/// matters only for fills of under a few seconds.
pub struct Settled {
    /// `<fill>_settled`.
    pub name: String,
    /// The fill's operations.
    pub stats: OpStats,
    /// Fill and wait, seconds.
    pub seconds: f64,
    debt: Debt,
    peak_rss_kb: Option<u64>,
    /// Bytes the process wrote during the fill and the wait.
    written: Option<u64>,
    note: String,
}

impl Unsettled {
    /// The fill `name` just returned: `stats` and `seconds` are its own, `engine` the
    /// engine's figures now, `written_before` the process's write counter when it
    /// began.
    pub fn after(
        name: &str,
        stats: &OpStats,
        seconds: f64,
        engine: &EngineStats,
        written_before: Option<u64>,
    ) -> Unsettled {
        let l0 = engine.levels.iter().find(|l| l.level == 0);
        Unsettled {
            name: format!("{name}_settled"),
            stats: stats.clone(),
            seconds,
            peak_rss_kb: results::peak_rss_kb(),
            written_before,
            debt: Debt {
                l0_files: l0.map_or(0, |l| l.files),
                l0_bytes: l0.map_or(0, |l| l.size_bytes),
                live_table_bytes: engine.live_table_bytes,
            },
        }
    }

    /// The settled result, called as the wait returns, which took `wait_seconds`. Its
    /// bytes written run from the fill's start to now, so the background writes
    /// between the fill's end and the wait's start (reporting) count too.
    pub fn settled_by(self, wait_seconds: f64) -> Settled {
        let note = format!(
            "(fill {:.3} s + debt {:.3} s; at the fill's end L0 held {} files, {:.1} MiB)",
            self.seconds,
            wait_seconds,
            self.debt.l0_files,
            self.debt.l0_bytes as f64 / f64::from(1u32 << 20)
        );
        Settled {
            name: self.name,
            stats: self.stats,
            seconds: self.seconds + wait_seconds,
            debt: self.debt,
            peak_rss_kb: self.peak_rss_kb,
            written: written_since(self.written_before),
            note,
        }
    }
}

impl Settled {
    /// Prints db_bench's line for the settled result and its process write
    /// amplification.
    pub fn print(&self) {
        println!(
            "{}",
            report::summary_line(
                &self.name,
                &self.stats,
                self.seconds,
                None,
                Some(&self.note)
            )
        );
        if let Some(a) = write_amplification(self.written, self.stats.bytes) {
            println!("process_write_amplification (settled): {a:.2}");
        }
    }

    /// Adds what only the settled result knows to `rec`, a record built from its
    /// name, operations and seconds with the engine's figures after the wait.
    pub fn complete(&self, rec: &mut Record) {
        rec.process_write_bytes = self.written;
        rec.process_write_amplification = write_amplification(self.written, self.stats.bytes);
        rec.debt_at_fill_end = Some(self.debt);
        // Over the fill and the wait both.
        rec.peak_rss_kb = rec.peak_rss_kb.max(self.peak_rss_kb);
    }
}

/// Bytes the process wrote over the key and value bytes a fill wrote.
pub fn write_amplification(written: Option<u64>, user_bytes: u64) -> Option<f64> {
    written
        .filter(|_| user_bytes > 0)
        .map(|w| w as f64 / user_bytes as f64)
}

/// Bytes the process wrote since `before` (a `results::process_write_bytes`).
pub fn written_since(before: Option<u64>) -> Option<u64> {
    before
        .zip(results::process_write_bytes())
        .map(|(before, after)| after.saturating_sub(before))
}
