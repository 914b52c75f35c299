//! Protects: `strata bench --prometheus=ADDR` (docs/ARCHITECTURE.md §10.2, §12.2).
//! While a fill and a read run, the endpoint answers HTTP with Prometheus' text
//! holding the engine's named metrics, and the write counter grows between two
//! scrapes during the fill, the get counter between two during the read. A
//! non-loopback address is refused before anything is opened or bound, and so is
//! `--prometheus` in a build without the `prometheus` feature.

mod common;

use common::{db_flag, fails_with};

/// The endpoint itself: only in a build with the `prometheus` feature (benchmark
/// builds leave the metrics out, since they cost every operation).
#[cfg(feature = "prometheus")]
mod serving {
    use super::*;
    use std::collections::BTreeMap;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{SocketAddr, TcpStream};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    /// The longest the test waits for what it expects before failing.
    const PATIENCE: Duration = Duration::from_secs(120);

    /// One scrape: each sample line `name{labels} value` as its series and value.
    fn scrape(addr: SocketAddr) -> BTreeMap<String, f64> {
        let mut stream = TcpStream::connect(addr)
            .unwrap_or_else(|e| panic!("the endpoint is gone (did the run end?): {e}"));
        stream
            .write_all(b"GET /metrics HTTP/1.0\r\nHost: strata\r\n\r\n")
            .expect("request");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("response");
        let (head, body) = response.split_once("\r\n\r\n").expect("head and body");
        assert!(head.starts_with("HTTP/1.0 200 OK"), "{head}");
        assert!(
            head.contains("Content-Type: text/plain; version=0.0.4"),
            "{head}"
        );
        body.lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .map(|l| {
                let (series, value) = l.rsplit_once(' ').expect("sample line");
                (series.to_owned(), value.parse().expect("sample value"))
            })
            .collect()
    }

    /// Scrapes every 50 ms until `done` accepts a scrape; returns that scrape.
    fn scrape_until(
        addr: SocketAddr,
        what: &str,
        done: impl Fn(&BTreeMap<String, f64>) -> bool,
    ) -> BTreeMap<String, f64> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let s = scrape(addr);
            if done(&s) {
                return s;
            }
            assert!(Instant::now() < deadline, "never saw {what}: {s:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn value(s: &BTreeMap<String, f64>, series: &str) -> f64 {
        s.get(series).copied().unwrap_or(0.0)
    }

    #[test]
    fn the_endpoint_serves_growing_counters_while_a_benchmark_runs() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
            .args([
                "bench",
                &db_flag(&tmp.path().join("db")),
                "--prometheus=127.0.0.1:0",
                "--benchmarks=fillrandom,readrandom",
                "--num=200000",
                // Each benchmark runs this long: time for several scrapes in each.
                "--duration=3",
                "--write_buffer_size=65536",
                "--no_json",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn strata");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut first = String::new();
        stdout.read_line(&mut first).expect("first line");
        let addr: SocketAddr = first
            .trim()
            .strip_prefix("Prometheus: http://")
            .and_then(|a| a.strip_suffix("/metrics"))
            .unwrap_or_else(|| panic!("first line: {first:?}"))
            .parse()
            .expect("bound address");
        // The rest of stdout, read so the benchmark never blocks on a full pipe.
        let rest = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stdout.read_to_string(&mut s);
            s
        });

        // Every series carries the database's `db` label: its path, as opened.
        let db = tmp.path().join("db").display().to_string();
        let series = |name: &str, rest: &str| format!("{name}{{db=\"{db}\"{rest}}}");
        let writes = &series("strata_writes_total", ",cf=\"default\"");
        let gets = &series("strata_gets_total", ",cf=\"default\"");
        let w1 = scrape_until(addr, "writes", |s| value(s, writes) > 0.0);
        let w2 = scrape_until(addr, "more writes", |s| {
            value(s, writes) > value(&w1, writes)
        });
        assert!(
            value(
                &w2,
                &series("strata_bytes_written_total", ",cf=\"default\"")
            ) > 0.0
        );
        let g1 = scrape_until(addr, "gets", |s| value(s, gets) > 0.0);
        let g2 = scrape_until(addr, "more gets", |s| value(s, gets) > value(&g1, gets));
        assert!(value(&g2, writes) >= value(&w2, writes));
        // The published counters trail by at most the publisher's period (1 s).
        let g2 = scrape_until(addr, "published gets", |s| {
            value(s, &series("strata_db_gets_total", "")) > 0.0
        });
        // The other kinds: job counters, published counters and gauges, histograms.
        for name in [
            series("strata_flushes_total", ",cf=\"default\""),
            series("strata_db_writes_total", ""),
        ] {
            assert!(value(&g2, &name) > 0.0, "{name}: {g2:?}");
        }
        let open = |name: &str, rest: &str| format!("{name}{{db=\"{db}\"{rest}");
        for prefix in [
            series("strata_memtable_bytes", ",cf=\"default\""),
            series("strata_level_files", ",cf=\"default\",level=\"0\""),
            series("strata_block_cache_usage_bytes", ""),
            open("strata_get_seconds_bucket", ",cf=\"default\",le="),
            series("strata_write_seconds_count", ""),
            open("strata_path_read_bytes_total", ",path="),
        ] {
            assert!(
                g2.keys().any(|k| k.starts_with(&prefix)),
                "{prefix} missing: {g2:?}"
            );
        }

        let status = child.wait().expect("wait");
        let mut err = String::new();
        child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut err)
            .expect("stderr");
        assert!(status.success(), "{err}");
        let out = rest.join().expect("stdout reader");
        assert!(out.contains("readrandom   :"), "{out}");
        // The endpoint stops with the run.
        assert!(
            TcpStream::connect(addr).is_err(),
            "still listening on {addr}"
        );
    }
}

/// Runs a `bench` with `--prometheus=ADDR` that must be refused before the database
/// is created; returns the error.
fn refused(addr: &str) -> String {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("db");
    let err = fails_with(
        &[
            "bench",
            &db_flag(&db),
            &format!("--prometheus={addr}"),
            "--benchmarks=fillseq",
            "--num=10",
        ],
        None,
    );
    assert!(!db.exists(), "the database was created");
    err
}

#[test]
fn a_non_loopback_address_is_refused() {
    let err = refused("0.0.0.0:9464");
    assert!(err.contains("is not a loopback address"), "{err}");
}

#[cfg(not(feature = "prometheus"))]
#[test]
fn without_the_feature_the_flag_is_refused() {
    let err = refused("127.0.0.1:0");
    assert!(err.contains("--features prometheus"), "{err}");
}
