//! The HTTP API end to end: a real server on loopback, a real SQLite file, a real client.
//! One test binary with a module per concern, so the suite links once.

mod accounts;
mod adversarial;
mod auth;
mod client;
mod common;
mod dashboard;
mod device;
mod flows;
mod ingest;
mod limits;
mod metrics;
mod openapi;
mod outage;
mod overload;
mod plans;
mod read;
mod routes;
mod search;
mod shippers;
mod stats;
mod storage_full;
mod tail;
mod tenants;
mod tracing_layer;
