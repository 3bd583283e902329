//! The threads a large minute closes on: the calling thread and helpers from one pool kept
//! up for the life of the process, taking a minute's jobs (see [`super::split`]) one at a
//! time until none is left.
//!
//! The caller works from the first moment: a helper asleep between minutes wakes a while
//! after it is called, and the caller does not wait for that. Jobs are
//! taken one at a time from a shared counter, so a thread the machine slows down (a shared
//! host) takes fewer. At the end the caller spins on the helpers' last jobs rather than
//! sleeping: a sleeping thread, too, wakes a while after it is released.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Threads this process may run at once.
pub(crate) static THREADS: LazyLock<usize> =
    LazyLock::new(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get));

/// The pool of helpers, and the process that built it.
static POOL: Mutex<Option<(u32, Arc<rayon::ThreadPool>)>> = Mutex::new(None);

/// How long the caller spins on the helpers' last blocks before it sleeps until they end: a
/// few blocks' time of the worst minute; longer means a helper stalled (or panicked).
const SPIN_FOR: Duration = Duration::from_micros(500);

/// This process's pool of `THREADS - 1` helpers (their threads stay up between minutes),
/// built on first use, and built again in a child forked after it: a fork copies the pool
/// but not its threads, and the child would wait forever on work no thread takes. `None`
/// when no thread can be started.
pub(crate) fn pool() -> Option<Arc<rayon::ThreadPool>> {
    let pid = std::process::id();
    let mut held = POOL.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((owner, pool)) = held.as_ref() {
        if *owner == pid {
            return Some(Arc::clone(pool));
        }
    }
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads((*THREADS).saturating_sub(1).max(1))
            .thread_name(|i| format!("spine-close-{i}"))
            .build()
            .ok()?,
    );
    // A parent's pool in a forked child has no threads to stop: leave it, never drop it.
    if let Some(parents) = held.replace((pid, Arc::clone(&pool))) {
        std::mem::forget(parents);
    }
    Some(pool)
}

/// Run `work` on every job of `jobs`, each exactly once, on the calling thread and `helpers`
/// threads of `pool` (see the module docs). Returns once every job ran.
pub(super) fn run_all<J: Send>(
    pool: &rayon::ThreadPool,
    helpers: usize,
    jobs: &[Mutex<J>],
    work: impl Fn(&mut J) + Sync,
) {
    let (next, done) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let drain = || {
        while let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
            work(&mut job.lock().unwrap_or_else(PoisonError::into_inner));
            done.fetch_add(1, Ordering::Release);
        }
    };
    pool.in_place_scope(|scope| {
        for _ in 0..helpers {
            scope.spawn(|_| drain());
        }
        drain();
        let start = Instant::now();
        while done.load(Ordering::Acquire) < jobs.len() && start.elapsed() < SPIN_FOR {
            std::hint::spin_loop();
        }
        // The scope's end waits for whatever is left (a helper that never started finds no
        // job and returns at once).
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_runs_once() {
        let Some(pool) = pool() else {
            unreachable!("no thread could be started")
        };
        for helpers in 0..3 {
            let jobs: Vec<Mutex<u32>> = (0..50).map(|_| Mutex::new(0)).collect();
            run_all(&pool, helpers, &jobs, |runs| *runs += 1);
            let runs: Vec<u32> = jobs
                .into_iter()
                .map(|j| j.into_inner().unwrap_or_else(PoisonError::into_inner))
                .collect();
            assert_eq!(runs, vec![1; 50], "{helpers} helpers");
        }
    }
}
