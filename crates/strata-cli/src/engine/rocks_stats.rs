//! Parsers for RocksDB's text statistics (`rocksdb.cfstats`, the statistics dump)
//! and for the event log in its `LOG` file.
//!
//! Kept outside the feature-gated adapter so they are unit-tested in every build.
#![cfg_attr(not(feature = "rocksdb"), allow(dead_code))]

use super::LevelReport;

/// `rocksdb.xxx COUNT : N` lines of the statistics dump (histogram lines skipped).
pub fn parse_tickers(s: &str) -> Vec<(String, u64)> {
    s.lines()
        .filter_map(|line| {
            let (name, rest) = line.split_once(" COUNT : ")?;
            Some((name.trim().to_string(), rest.trim().parse().ok()?))
        })
        .collect()
}

/// Per-level rows of the "Compaction Stats" table in `rocksdb.cfstats`, located by the
/// header's column names (the column set changes between RocksDB versions).
pub fn parse_compaction_stats(s: &str) -> Vec<LevelReport> {
    let mut header: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for line in s.lines() {
        let toks: Vec<&str> = line.split_whitespace().collect();
        match toks.first() {
            Some(&"Level") if header.is_empty() => header = toks,
            Some(level) if level.starts_with('L') && !header.is_empty() => {
                let Some(Ok(n)) = level.strip_prefix('L').map(str::parse::<usize>) else {
                    continue;
                };
                // The size column is two tokens ("56.16 MB"): rejoin it.
                let mut cols: Vec<String> = Vec::with_capacity(toks.len());
                for (i, t) in toks.iter().enumerate() {
                    if i == 3 && matches!(*t, "B" | "KB" | "MB" | "GB" | "TB") {
                        if let Some(last) = cols.last_mut() {
                            last.push(' ');
                            last.push_str(t);
                        }
                    } else {
                        cols.push((*t).to_string());
                    }
                }
                let col = |name: &str| {
                    header
                        .iter()
                        .position(|h| *h == name)
                        .and_then(|i| cols.get(i))
                        .map(String::as_str)
                };
                let gb = |name: &str| {
                    col(name)
                        .and_then(|v| v.parse::<f64>().ok())
                        .map_or(0, |g| (g * (1u64 << 30) as f64) as u64)
                };
                out.push(LevelReport {
                    level: n,
                    files: col("Files")
                        .and_then(|f| f.split('/').next())
                        .and_then(|f| f.parse().ok())
                        .unwrap_or(0),
                    size_bytes: col("Size").map_or(0, parse_size),
                    read_bytes: gb("Read(GB)"),
                    write_bytes: gb("Write(GB)"),
                    count: col("Comp(cnt)").and_then(|c| c.parse().ok()).unwrap_or(0),
                });
            }
            _ => {
                if !out.is_empty() && line.trim().is_empty() {
                    break;
                }
            }
        }
    }
    out
}

/// Table bytes written by flushes and by compactions, and read by compactions, as
/// RocksDB's event log states them (the `EVENT_LOG_v1` lines of `LOG`, always
/// written): exact without the statistics object, so the adapter can leave
/// statistics off, RocksDB's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventLogBytes {
    /// Sizes of the tables flushes created (`table_file_creation` of a job that
    /// `flush_started`).
    pub flush_written: u64,
    /// `total_output_size` of every `compaction_finished`.
    pub compaction_written: u64,
    /// `input_data_size` of every `compaction_started` (the inputs' file sizes; the
    /// ticker counts the bytes read, within a fraction of a percent of it).
    pub compaction_read: u64,
}

/// Sums the flush and compaction events of a `LOG`'s text. Lines that are not
/// events, or events that do not parse, are skipped.
pub fn parse_event_log(log: &str) -> EventLogBytes {
    let mut out = EventLogBytes::default();
    let mut flush_jobs = std::collections::HashSet::new();
    let field = |e: &serde_json::Value, name: &str| e.get(name).and_then(serde_json::Value::as_u64);
    for line in log.lines() {
        let Some((_, json)) = line.split_once("EVENT_LOG_v1 ") else {
            continue;
        };
        let Ok(e) = serde_json::from_str::<serde_json::Value>(json) else {
            continue;
        };
        let job = field(&e, "job");
        match e.get("event").and_then(serde_json::Value::as_str) {
            Some("flush_started") => {
                flush_jobs.extend(job);
            }
            // A flush's tables are created after its start is logged.
            Some("table_file_creation") if job.is_some_and(|j| flush_jobs.contains(&j)) => {
                out.flush_written += field(&e, "file_size").unwrap_or(0);
            }
            Some("compaction_finished") => {
                out.compaction_written += field(&e, "total_output_size").unwrap_or(0);
            }
            Some("compaction_started") => {
                out.compaction_read += field(&e, "input_data_size").unwrap_or(0);
            }
            _ => {}
        }
    }
    out
}

fn parse_size(s: &str) -> u64 {
    let (num, unit) = s.split_once(' ').unwrap_or((s, "B"));
    let mult: u64 = match unit {
        "KB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        "TB" => 1 << 40,
        _ => 1,
    };
    num.parse::<f64>().map_or(0, |n| (n * mult as f64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of a RocksDB 11.8 `LOG` (a flush, a compaction, a trivial move, other
    /// lines), shortened.
    #[test]
    fn sums_the_event_log() {
        let log = r#"2026/11/27-20:25:04.676 24257 [db/flush_job.cc:1012] [default] Flushing memtable
2026/11/27-20:25:04.676 24257 EVENT_LOG_v1 {"time_micros": 1, "job": 2, "event": "flush_started", "num_memtables": 1, "flush_reason": "Write Buffer Full"}
2026/11/27-20:25:04.681 24257 EVENT_LOG_v1 {"time_micros": 2, "cf_name": "default", "job": 2, "event": "table_file_creation", "file_number": 9, "file_size": 807957, "table_properties": {"data_size": 800000}}
2026/11/27-20:25:04.682 24257 EVENT_LOG_v1 {"time_micros": 3, "job": 2, "event": "flush_finished", "output_compression": "NoCompression", "lsm_state": [1, 0, 0, 0, 0, 0, 0]}
2026/11/27-20:25:04.734 24256 EVENT_LOG_v1 {"time_micros": 4, "job": 6, "event": "compaction_started", "cf_name": "default", "compaction_reason": "LevelL0FilesNum", "files_L0": [15, 13, 11, 9], "score": 1, "input_data_size": 3229559}
2026/11/27-20:25:04.740 24256 EVENT_LOG_v1 {"time_micros": 5, "cf_name": "default", "job": 6, "event": "table_file_creation", "file_number": 17, "file_size": 1052460}
2026/11/27-20:25:04.748 24256 (Original Log Time 2026/11/27-20:25:04.748210) EVENT_LOG_v1 {"time_micros": 6, "job": 6, "event": "compaction_finished", "output_level": 1, "num_output_files": 3, "total_output_size": 3052460}
2026/11/27-20:25:04.750 24256 EVENT_LOG_v1 {"time_micros": 7, "job": 7, "event": "trivial_move", "destination_level": 2, "files": 1}
2026/11/27-20:25:04.751 24256 EVENT_LOG_v1 {"time_micros": 8, "job": 8, "event": "table_file_deletion", "file_number": 9}
2026/11/27-20:25:04.752 24256 EVENT_LOG_v1 {"job": 9, "event": "flush_started"
"#;
        assert_eq!(
            parse_event_log(log),
            EventLogBytes {
                flush_written: 807957,
                compaction_written: 3052460,
                compaction_read: 3229559,
            }
        );
        assert_eq!(parse_event_log(""), EventLogBytes::default());
    }

    #[test]
    fn parses_compaction_stats_and_tickers() {
        let s = "\n** Compaction Stats [default] **\n\
Level    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) Wnew(GB) Moved(GB) W-Amp Rd(MB/s) Wr(MB/s) Comp(sec) CompMergeCPU(sec) Comp(cnt) Avg(sec) KeyIn KeyDrop\n\
--------------------------------------------\n\
  L0      2/0   56.00 MB   0.5      0.0     0.0      0.0       0.1      0.1       0.0   1.0      0.0    147.5      0.38              0.31         2    0.190       0      0\n\
  L1      4/0   98.50 KB   0.4      0.5     0.1      0.1       0.25      0.0       0.0   1.3    150.1    100.2      1.2   1.0   7  0.1 0 0\n\
 Sum      6/0  154.66 MB   0.0      0.5     0.1      0.1       0.35      0.1       0.0   1.3    150.1    100.2      1.2   1.0   9  0.1 0 0\n\n";
        let l = parse_compaction_stats(s);
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].files, 2);
        assert_eq!(l[0].size_bytes, 56 << 20);
        assert_eq!(l[0].count, 2);
        assert_eq!(l[1].read_bytes, 1 << 29);
        assert_eq!(l[1].write_bytes, 1 << 28);
        assert_eq!(l[1].count, 7);
        let t = parse_tickers(
            "rocksdb.block.cache.miss COUNT : 12\nrocksdb.db.get.micros P50 : 1.0 P95 : 2.0\n",
        );
        assert_eq!(t, vec![("rocksdb.block.cache.miss".to_string(), 12)]);
    }
}
