//! [`ReadPool`]: threads that read a batch's data blocks into the block cache at once
//! (`multi_get::read_ahead`), so that the device serves them side by side instead of
//! one after another.
//!
//! Why a pool and not a thread per read: starting a thread costs tens of microseconds
//! of the caller's time, as much as the device read it would hide; a parked worker
//! is woken in a few. Why threads and not `io_uring`: each read goes through the
//! file-system stack (`CountingFs`, `FaultFs`, `DeviceFs`) like any other, so it is
//! counted, injectable and modelled.
//!
//! Contract: a job owns what it reads (`Arc<Table>`), so no borrow outlives the
//! caller's wait. [`ReadPool::read_all`] returns once every block it was given has
//! been read (or failed: errors are dropped, the probes that follow read again and
//! report them); a job counts itself done when dropped, so a job that panics or is
//! dropped unrun (its worker gone) cannot leave the batch waiting. Workers start on
//! the first use and stop when the pool drops (the channel closes; each finishes its
//! job, and the drop joins them).

use crate::sst::footer::BlockHandle;
use crate::sst::Table;
use crate::stats::purpose::IoPurpose;
use parking_lot::{Condvar, Mutex};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

/// Workers: the most blocks read at once, the queue depth a batch offers the device.
pub(crate) const WORKERS: usize = 16;

/// One block to read into the cache, and its batch's count.
type Job = (Arc<Table>, BlockHandle, Done);

/// Blocks of one batch not yet read, and those read.
#[derive(Default)]
struct Pending {
    left: Mutex<usize>,
    done: Condvar,
    read: std::sync::atomic::AtomicU64,
}

/// A job's share of its batch's count, given back when the job ends, however it
/// ends: run, dropped unrun (a worker gone), or unwound by a panic in the file
/// system's read. So the batch never waits for a job that will not count.
struct Done(Arc<Pending>);

impl Drop for Done {
    fn drop(&mut self) {
        let mut left = self.0.left.lock();
        *left = left.saturating_sub(1);
        if *left == 0 {
            self.0.done.notify_all();
        }
    }
}

/// See the module docs.
#[derive(Default)]
pub(crate) struct ReadPool {
    started: OnceLock<Workers>,
}

struct Workers {
    jobs: Mutex<Option<Sender<Job>>>,
    threads: Vec<JoinHandle<()>>,
}

impl ReadPool {
    /// Reads every block of `blocks` into the block cache (as `Table::read_data_block`
    /// filling the cache), at most [`WORKERS`] at a time, and returns when all are
    /// done, with how many were read (the others failed; their probes read again).
    /// Blocks the pool cannot take (no worker could be started) are read here.
    pub fn read_all(&self, blocks: Vec<(Arc<Table>, BlockHandle)>) -> u64 {
        let pending = Arc::new(Pending {
            left: Mutex::new(blocks.len()),
            done: Condvar::new(),
            read: Default::default(),
        });
        let workers = self.started.get_or_init(Workers::start);
        for (table, handle) in blocks {
            let job = (table, handle, Done(Arc::clone(&pending)));
            let refused = match &*workers.jobs.lock() {
                Some(jobs) if !workers.threads.is_empty() => jobs.send(job).err().map(|e| e.0),
                _ => Some(job),
            };
            if let Some(job) = refused {
                run(job);
            }
        }
        let mut left = pending.left.lock();
        while *left > 0 {
            pending.done.wait(&mut left);
        }
        pending.read.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Workers {
    /// Starts the workers; as many as the system allows, up to [`WORKERS`].
    fn start() -> Workers {
        let (jobs, queue) = channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        let threads = (0..WORKERS)
            .filter_map(|i| {
                let queue = Arc::clone(&queue);
                std::thread::Builder::new()
                    .name(format!("strata-read-{i}"))
                    .spawn(move || work(&queue))
                    .ok()
            })
            .collect();
        Workers {
            jobs: Mutex::new(Some(jobs)),
            threads,
        }
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        // Closing the channel ends each worker's loop once the queue is empty.
        self.jobs.lock().take();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A worker: takes jobs until the channel closes.
fn work(queue: &Mutex<Receiver<Job>>) {
    let _purpose = IoPurpose::Get.enter();
    loop {
        // The lock is held only while waiting for the next job.
        let job = queue.lock().recv();
        match job {
            Ok(job) => run(job),
            Err(_) => return,
        }
    }
}

/// Reads one block into the cache; `done` counts it when dropped.
fn run((table, handle, done): Job) {
    if table.read_data_block(handle, true).is_ok() {
        done.0
            .read
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_batch_returns_at_once_and_starts_the_workers() {
        let pool = ReadPool::default();
        assert_eq!(pool.read_all(Vec::new()), 0);
        let workers = pool.started.get().expect("started");
        assert!(!workers.threads.is_empty());
        drop(pool);
    }
}
