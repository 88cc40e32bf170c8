//! The server's allocator, the one option it sets on it, and the thread that makes it purge.
//!
//! mimalloc keeps memory it has freed for a while before handing it back to the kernel (its
//! *purge delay*: 1 s in mimalloc 3). Under sustained ingest, each request's parse buffers are
//! freed and allocated again within that second, so the kept pages stack up: in a 30-s JSON run
//! on SQLite the server's peak RSS was 135 MB with the default delay and 93 MB with 10 ms, for
//! a few % of throughput (docs/PERFORMANCE.md, issue 7). 10 ms is mimalloc 2's default.
//! `MIMALLOC_PURGE_DELAY` in the environment still wins: an operator can trade memory back.
//!
//! mimalloc runs a delayed purge only from inside its own calls (a later free, or every
//! 10,000th allocation that misses its fast path), and only when a process-wide deadline says
//! one is due. That deadline can be lost: a purge pass that finds nothing to return clears it
//! after another thread, mid-pass, scheduled new work under its own arena's deadline
//! (`mi_arenas_try_purge` in mimalloc 3.3's `arena.c`). From then on no ordinary pass runs
//! until one that visits every arena does (a thread exiting, a forced collect), and RSS stays
//! at its highest since: the 10-minute PostgreSQL soak climbed to a plateau that way in 5 runs
//! of 16 (docs/PERFORMANCE.md, issue 25). The purger thread forces a pass every
//! [`PURGE_INTERVAL`]; a forced pass ignores both deadlines and resets the arenas', so the
//! next free schedules afresh. It also returns what was freed back to an arena (large buffers,
//! pages freed whole) when nothing follows, as on a server gone quiet.

use std::time::Duration;

/// mimalloc instead of the system allocator: ingest allocates many small strings per entry,
/// and glibc's malloc spent a third of the parsers' time on them (see docs/PERFORMANCE.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How long freed memory is kept before it is returned to the kernel, in milliseconds.
pub const PURGE_DELAY_MS: i64 = 10;

/// How often the purger thread makes mimalloc return what is free, and so about how long a
/// lost purge deadline keeps freed memory resident (a tick does nothing while another thread
/// is in a pass, as mimalloc lets one pass run at a time; the next tick makes up for it).
pub const PURGE_INTERVAL: Duration = Duration::from_secs(1);

/// `mi_option_purge_delay` in `mimalloc.h` (the 16th option, after the deprecated ones kept
/// for ABI). libmimalloc-sys does not name it; `purge_delay_is_the_option_we_set` checks it
/// against the library's default, so an upgrade that moves it fails the tests.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// The environment variables mimalloc reads the purge delay from (the second is its old name).
const ENVIRONMENT: [&str; 2] = ["MIMALLOC_PURGE_DELAY", "MIMALLOC_RESET_DELAY"];

/// Whether the environment sets the purge delay.
fn named_in_environment() -> bool {
    ENVIRONMENT.iter().any(|name| std::env::var_os(name).is_some())
}

/// Sets the purge delay, unless the environment names one. Call first thing in `main`, before
/// any other thread exists: mimalloc's options are plain globals, read without locks.
pub fn tune() {
    if !named_in_environment() {
        set_purge_delay(PURGE_DELAY_MS);
    }
}

/// Starts the purger thread, for a process that runs long (`serve`); a client command ends
/// before a lost deadline could cost it anything.
pub fn start_purger() {
    // Without the purger the server still runs; it only keeps more memory. A purge delay of 0
    // or below (from the environment) makes every pass a no-op, as mimalloc intends.
    if let Err(error) = spawn_purger(PURGE_INTERVAL) {
        eprintln!("warning: cannot start the allocator's purger thread: {error}");
    }
}

#[allow(unsafe_code)]
fn set_purge_delay(milliseconds: i64) {
    // SAFETY: `mi_option_set` takes an option number and a value, both plain integers, and
    // stores the value in mimalloc's option table; the number is in range (checked by the test
    // below), and `tune` runs before other threads could read the table concurrently.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, milliseconds as _) }
}

/// Starts a thread that forces a purge every `interval`, for the life of the process.
fn spawn_purger(interval: Duration) -> std::io::Result<()> {
    std::thread::Builder::new().name("sluice-allocator".into()).spawn(move || {
        // `mi_collect` acts through the calling thread's heap, and does nothing on a thread
        // that has not allocated yet: make this one's first.
        #[allow(unsafe_code)]
        // SAFETY: sets up mimalloc's state for the calling thread; no arguments.
        unsafe {
            libmimalloc_sys::mi_thread_init()
        };
        loop {
            std::thread::sleep(interval);
            purge();
        }
    })?;
    Ok(())
}

/// Returns to the kernel whatever mimalloc holds free, whatever its deadlines say.
#[allow(unsafe_code)]
fn purge() {
    // SAFETY: `mi_collect` takes a flag and may be called from any thread at any time. It
    // collects only the calling thread's own pages (none here), then tries mimalloc's purge
    // guard, a try-lock, and skips the pass if another thread holds it: it never waits.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    #[allow(unsafe_code)]
    fn purge_delay_is_the_option_we_set() {
        // The options around it default to 1 (deprecated eager-commit delay) and 0 (NUMA nodes);
        // only the purge delay defaults to mimalloc 3's 1000 ms. Test processes never call
        // `tune`, so unless the environment set it, the default is what is there.
        if !named_in_environment() {
            // SAFETY: reads one entry of mimalloc's option table; the number is in range.
            let value = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
            assert_eq!(value, 1000, "option 15 is not mimalloc's purge delay");
        }
    }

    /// Anonymous resident memory of this process, in bytes (Linux's `RssAnon`).
    fn resident_anonymous() -> usize {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|line| line.starts_with("RssAnon:")).unwrap();
        let kib: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        kib * 1024
    }

    /// Once a burst is freed and nothing in the process calls into mimalloc to run its delayed
    /// purge (as on a quiet server), only the purger returns it. This is the case a test can
    /// make on demand; the lost deadline is a race (docs/PERFORMANCE.md), ended by the same
    /// forced pass. Fails without `spawn_purger` (the memory stays resident for the 20 s):
    /// the test allocates little while it waits, and nextest gives it a process of its own.
    #[test]
    fn memory_a_burst_freed_goes_back_to_the_kernel_with_no_free_after_it() {
        if named_in_environment() {
            return; // a delay of 0 or below from the environment changes what is measured
        }
        const BURST: usize = 96 << 20;
        let before = resident_anonymous();
        // 1-MiB buffers, as a seal's: each its own span of an arena, freed to it whole.
        let burst: Vec<Vec<u8>> = (0..BURST >> 20).map(|_| vec![1u8; 1 << 20]).collect();
        assert!(resident_anonymous() >= before + BURST / 2, "the burst was not resident");
        drop(burst);
        spawn_purger(Duration::from_millis(50)).unwrap();
        // Waits on the observable state, with a bound far past the 50-ms interval.
        let deadline = Instant::now() + Duration::from_secs(20);
        while resident_anonymous() > before + BURST / 4 {
            assert!(
                Instant::now() < deadline,
                "{} MiB still resident 20 s after the burst was freed ({} MiB before it)",
                resident_anonymous() >> 20,
                before >> 20
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
