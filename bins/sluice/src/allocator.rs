//! The server's allocator and the one option it sets on it.
//!
//! mimalloc keeps memory it has freed for a while before handing it back to the kernel (its
//! *purge delay*: 1 s in mimalloc 3). Under sustained ingest, each request's parse buffers are
//! freed and allocated again within that second, so the kept pages stack up: in a 30-s JSON run
//! on SQLite the server's peak RSS was 135 MB with the default delay and 93 MB with 10 ms, for
//! a few % of throughput (docs/PERFORMANCE.md, issue 7). 10 ms is mimalloc 2's default.
//! `MIMALLOC_PURGE_DELAY` in the environment still wins: an operator can trade memory back.

/// mimalloc instead of the system allocator: ingest allocates many small strings per entry,
/// and glibc's malloc spent a third of the parsers' time on them (see docs/PERFORMANCE.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How long freed memory is kept before it is returned to the kernel, in milliseconds.
pub const PURGE_DELAY_MS: i64 = 10;

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

#[allow(unsafe_code)]
fn set_purge_delay(milliseconds: i64) {
    // SAFETY: `mi_option_set` takes an option number and a value, both plain integers, and
    // stores the value in mimalloc's option table; the number is in range (checked by the test
    // below), and `tune` runs before other threads could read the table concurrently.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, milliseconds as _) }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
