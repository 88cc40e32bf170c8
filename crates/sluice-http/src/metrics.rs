//! `GET /metrics`: what operators scrape (DECISIONS, "Operability"), in the OpenMetrics text
//! format Prometheus reads, from the Prometheus project's `prometheus-client`. Every name
//! starts `sluice_`; no label names a workspace, so the series stay few however many tenants.
//!
//! Counted as it happens: requests by route pattern and status, their latency, logs and bytes
//! ingested by format, rejections by reason ([`Rejection`], which [`crate::ApiError`] leaves on
//! its response), group commits' sizes and waits (the committer's observer). Read at scrape
//! time: the connection pool, open tails, the write queue, the rate limiter's fail-opens.

use std::sync::Arc;
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{HttpResponse, web};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use sluice_store::group::GroupCommit;

use crate::AppState;

/// Why a request was refused: left on the response by [`crate::ApiError`] and counted by
/// [`track`] as `sluice_rejections_total{reason}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rejection(pub &'static str);

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FormatLabel {
    format: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteStatus {
    route: String,
    status: u16,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabel {
    route: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabel {
    reason: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabel {
    state: &'static str,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// Request latency buckets: 0.5 ms to about 16 s, doubling.
fn latency_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.000_5, 2.0, 16))
}

/// The service's metrics. Cheap to share (`Arc` inside `AppState`).
pub struct Metrics {
    registry: Registry,
    ingested_logs: Family<FormatLabel, Counter>,
    ingested_bytes: Family<FormatLabel, Counter>,
    requests: Family<RouteStatus, Counter>,
    latency: HistogramFamily<RouteLabel>,
    rejections: Family<ReasonLabel, Counter>,
    group_logs: Histogram,
    group_batches: Histogram,
    group_wait: Histogram,
    group_write: Histogram,
    pool: Family<StateLabel, Gauge>,
    pool_max: Gauge,
    pool_waiting: Gauge,
    write_queue: Gauge,
    tails_open: Gauge,
    limiter_fail_opens: Counter,
    /// Held while a scrape brings the fail-open counter up to the limiter's total, so two
    /// scrapes at once cannot both add the same difference.
    scraping: std::sync::Mutex<()>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        let mut metrics = Metrics {
            registry: Registry::with_prefix("sluice"),
            ingested_logs: Family::default(),
            ingested_bytes: Family::default(),
            requests: Family::default(),
            latency: Family::new_with_constructor(latency_buckets),
            rejections: Family::default(),
            group_logs: Histogram::new(exponential_buckets(1.0, 2.0, 14)),
            group_batches: Histogram::new(exponential_buckets(1.0, 2.0, 10)),
            group_wait: Histogram::new(exponential_buckets(0.000_1, 2.0, 16)),
            group_write: Histogram::new(exponential_buckets(0.000_1, 2.0, 16)),
            pool: Family::default(),
            pool_max: Gauge::default(),
            pool_waiting: Gauge::default(),
            write_queue: Gauge::default(),
            tails_open: Gauge::default(),
            limiter_fail_opens: Counter::default(),
            scraping: std::sync::Mutex::new(()),
        };
        let registry = &mut metrics.registry;
        registry.register("ingested_logs", "Logs stored, by body format", metrics.ingested_logs.clone());
        registry.register(
            "ingested_bytes",
            "Request body bytes (decompressed) of stored batches, by format",
            metrics.ingested_bytes.clone(),
        );
        registry.register("http_requests", "HTTP requests answered, by route and status", metrics.requests.clone());
        registry.register(
            "http_request_duration_seconds",
            "Time from a request's head to its answer, by route",
            metrics.latency.clone(),
        );
        registry.register("rejections", "Requests (and OTLP records) refused, by reason", metrics.rejections.clone());
        registry.register("group_commit_logs", "Logs written per group commit", metrics.group_logs.clone());
        registry.register("group_commit_batches", "Requests' batches per group commit", metrics.group_batches.clone());
        registry.register(
            "group_commit_wait_seconds",
            "How long a group's oldest batch waited in the write queue",
            metrics.group_wait.clone(),
        );
        registry.register(
            "group_commit_write_seconds",
            "How long the store took to write a group",
            metrics.group_write.clone(),
        );
        registry.register("db_pool_connections", "Database connections open, by state", metrics.pool.clone());
        registry.register("db_pool_max_connections", "The most connections the pool opens", metrics.pool_max.clone());
        registry.register("db_pool_waiting", "Calls waiting for a database connection", metrics.pool_waiting.clone());
        registry.register("write_queue_logs", "Logs queued or being written", metrics.write_queue.clone());
        registry.register("tails_open", "Live tails open on this server", metrics.tails_open.clone());
        registry.register(
            "rate_limiter_fail_opens",
            "Rate-limit checks admitted because the shared limiter could not be reached",
            metrics.limiter_fail_opens.clone(),
        );
        metrics
    }
}

impl Metrics {
    /// A stored batch of `logs` logs from a body of `bytes` bytes in `format`.
    pub fn ingested(&self, format: &'static str, logs: usize, bytes: usize) {
        let label = FormatLabel { format };
        self.ingested_logs.get_or_create(&label).inc_by(logs as u64);
        self.ingested_bytes.get_or_create(&label).inc_by(bytes as u64);
    }

    /// One answered request: its route pattern, status and latency.
    pub fn request(&self, route: String, status: u16, seconds: f64) {
        self.latency.get_or_create(&RouteLabel { route: route.clone() }).observe(seconds);
        self.requests.get_or_create(&RouteStatus { route, status }).inc();
    }

    /// `count` refusals for `reason` (OTLP records left out of a partial success).
    pub fn rejected(&self, reason: &'static str, count: u64) {
        self.rejections.get_or_create(&ReasonLabel { reason }).inc_by(count);
    }

    /// One group commit, as the committer observed it.
    pub fn committed(&self, group: &GroupCommit) {
        self.group_logs.observe(group.logs as f64);
        self.group_batches.observe(group.batches as f64);
        self.group_wait.observe(group.waited.as_secs_f64());
        self.group_write.observe(group.took.as_secs_f64());
    }

    /// The text a scrape gets, after reading the gauges of `state`.
    fn encode(&self, state: &AppState) -> Result<String, std::fmt::Error> {
        if let Some(pool) = state.store.pool_status() {
            let gauge = |value: usize| i64::try_from(value).unwrap_or(i64::MAX);
            self.pool.get_or_create(&StateLabel { state: "idle" }).set(gauge(pool.idle));
            self.pool.get_or_create(&StateLabel { state: "in_use" }).set(gauge(pool.open.saturating_sub(pool.idle)));
            self.pool_max.set(gauge(pool.max));
            self.pool_waiting.set(gauge(pool.waiting));
        }
        self.write_queue.set(i64::try_from(state.writer.queued_logs()).unwrap_or(i64::MAX));
        self.tails_open.set(i64::try_from(state.tails.open_total()).unwrap_or(i64::MAX));
        // The limiter keeps its own total: the counter catches up to it, one scrape at a time.
        let scraping = self.scraping.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let failures = state.limiter.failures();
        self.limiter_fail_opens.inc_by(failures.saturating_sub(self.limiter_fail_opens.get()));
        drop(scraping);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)?;
        Ok(text)
    }
}

/// Has the committer of `state` tell `metrics` of each group it writes.
pub(crate) fn observe_commits(state: &AppState) {
    let metrics = state.metrics.clone();
    state.writer.observe(Arc::new(move |group: &GroupCommit| metrics.committed(group)));
}

/// Counts every request the app answers: by route pattern (never the path itself, whose ids
/// would make a series each) and status, its latency, and its rejection reason if any.
pub async fn track(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let metrics = request.app_data::<web::Data<AppState>>().map(|state| state.metrics.clone());
    let response = next.call(request).await?;
    if let Some(metrics) = metrics {
        let route = response.request().match_pattern().unwrap_or_else(|| "unmatched".to_owned());
        metrics.request(route, response.status().as_u16(), started.elapsed().as_secs_f64());
        if let Some(Rejection(reason)) = response.response().extensions().get::<Rejection>().copied() {
            metrics.rejected(reason, 1);
        }
    }
    Ok(response)
}

/// `GET /metrics` (no key).
#[utoipa::path(get, path = "/metrics", tag = "health", summary = "Prometheus metrics (OpenMetrics text)", security(()),
    responses((status = 200, description = "The metrics", content_type = "application/openmetrics-text")))]
pub(crate) async fn scrape(state: web::Data<AppState>) -> HttpResponse {
    match state.metrics.encode(&state) {
        Ok(text) => {
            HttpResponse::Ok().content_type("application/openmetrics-text; version=1.0.0; charset=utf-8").body(text)
        }
        Err(_) => HttpResponse::InternalServerError().finish(),
    }
}
