//! `strata bench --prometheus=ADDR`: the engine's metrics (docs/ARCHITECTURE.md §10.2)
//! in Prometheus' text format over HTTP while the benchmarks run.
//!
//! The recorder and its text rendering are `metrics-exporter-prometheus`'s, installed
//! as the process's recorder before the database opens (a handle belongs to the
//! recorder installed when it is registered). The crate's own HTTP listener needs
//! tokio and hyper, so the endpoint is a thread of its own here: it answers every
//! connection with one HTTP/1.0 response holding the rendered text, whatever the
//! path, and runs the recorder's upkeep (draining histogram samples) between
//! connections. Loopback addresses only: the endpoint has no authentication.

use crate::error::{CliError, Result};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Histogram buckets, in seconds: powers of four from 1 µs to about a minute, which
/// spans a cached get and a large compaction.
const BUCKETS: [f64; 14] = [
    1e-6, 4e-6, 16e-6, 64e-6, 256e-6, 1.024e-3, 4.096e-3, 16.384e-3, 65.536e-3, 0.262, 1.049,
    4.194, 16.777, 67.109,
];

/// How often the endpoint drains histogram samples when nobody scrapes.
const UPKEEP_PERIOD: Duration = Duration::from_secs(5);

/// How long the endpoint sleeps when no connection is waiting.
const POLL: Duration = Duration::from_millis(20);

/// The longest a scraper may take to send its request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

/// The largest request head read (the rest is ignored).
const MAX_REQUEST: usize = 8 << 10;

/// A running endpoint; dropping it stops the thread.
pub struct Endpoint {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Endpoint {
    /// The address it listens on (the bound port, if `:0` was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Installs the Prometheus recorder as the process's recorder and serves its text on
/// `addr`, which must be a loopback address.
///
/// # Errors
/// A non-loopback `addr` ([`CliError::Usage`]), a recorder already installed or bad
/// buckets ([`CliError::Metrics`]), or the listener failing to bind.
pub fn serve(addr: SocketAddr) -> Result<Endpoint> {
    super::flags::check_loopback(addr)?;
    let handle = PrometheusBuilder::new()
        .set_buckets(&BUCKETS)
        .and_then(PrometheusBuilder::install_recorder)
        .map_err(|e| CliError::Metrics(e.to_string()))?;
    let where_ = addr.to_string();
    let listener = TcpListener::bind(addr).map_err(|e| CliError::io("listen", &where_, e))?;
    let addr = listener
        .local_addr()
        .map_err(|e| CliError::io("listen", &where_, e))?;
    // Non-blocking, so the thread can notice `stop` between connections.
    listener
        .set_nonblocking(true)
        .map_err(|e| CliError::io("listen", &where_, e))?;
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let thread = std::thread::Builder::new()
        .name("strata-prometheus".into())
        .spawn(move || accept_loop(&listener, &handle, &stopped))
        .map_err(|e| CliError::io("spawn", "strata-prometheus", e))?;
    Ok(Endpoint {
        addr,
        stop,
        thread: Some(thread),
    })
}

fn accept_loop(listener: &TcpListener, handle: &PrometheusHandle, stop: &AtomicBool) {
    let mut upkept = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            // A scraper that goes away mid-answer is its own business.
            Ok((stream, _)) => {
                let _ = answer(stream, handle);
            }
            Err(_) => std::thread::sleep(POLL),
        }
        if upkept.elapsed() >= UPKEEP_PERIOD {
            handle.run_upkeep();
            upkept = Instant::now();
        }
    }
}

/// Reads the request head (not looked at) and writes the rendered metrics.
fn answer(mut stream: TcpStream, handle: &PrometheusHandle) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_REQUEST {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(buf.get(..n).unwrap_or_default());
    }
    let body = handle.render();
    write!(
        stream,
        "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}
