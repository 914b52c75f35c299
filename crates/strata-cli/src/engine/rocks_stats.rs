//! Parsers for RocksDB's text statistics (`rocksdb.cfstats`, the statistics dump).
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
