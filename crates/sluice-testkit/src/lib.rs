//! Throwaway servers for sluice's tests and benchmarks: a PostgreSQL cluster made with the
//! system's `initdb` ([`cluster`]) and a `redis-server` ([`redis`]), each on a free loopback
//! port and stopped when dropped; and the real clients' captured requests ([`captures`]). `cargo xtask ci` starts one of each for a test run (unless
//! `SLUICE_TEST_PG` / `SLUICE_TEST_REDIS` name servers) and the outage test stops and resumes
//! a cluster of its own.
//!
//! Invariant: test and benchmark support only, standard library only; no production crate
//! depends on it (`cargo xtask ci` checks the server binary's dependencies).

pub mod captures;
pub mod cluster;
pub mod redis;
