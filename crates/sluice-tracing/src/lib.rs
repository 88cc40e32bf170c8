//! A [`tracing_subscriber::Layer`] that ships a Rust service's events to sluice.
//!
//! Each event becomes an entry: its level (`trace` and `debug` as `debug`), its `message`
//! field as the message (else its name), its other fields in `data`, its target in
//! `data.target`, and the current span's name and fields (its parents' too, the nearest
//! winning) in `data.span`. Entries wait in a bounded buffer and a background task sends them
//! with [`sluice_client`] in batches of up to 100, at least every second; an event that finds
//! the buffer full is dropped and counted ([`Shipper::dropped`]), so logging never blocks and
//! never grows the service's memory. [`Shipper::shutdown`] sends what is left.
//!
//! ```no_run
//! use tracing_subscriber::prelude::*;
//!
//! # async fn run() -> Result<(), sluice_client::Error> {
//! let client = sluice_client::Client::new("http://127.0.0.1:8080")?.with_token("slc_live_...");
//! let (layer, shipper) = sluice_tracing::layer(client, sluice_tracing::Options::new("checkout", "production"));
//! tracing_subscriber::registry().with(layer).init();
//! tracing::info!(order = 42, "order paid");
//! shipper.shutdown().await; // before the process exits
//! # Ok(()) }
//! ```
//!
//! Invariant: recording an event never waits and never allocates past the buffer's bound;
//! the shipper's own HTTP work is never shipped (its task is marked, its events skipped).

mod fields;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use crate::fields::{Fields, SpanFields};

/// How the layer ships.
#[derive(Debug, Clone)]
pub struct Options {
    /// Every entry's `source`.
    pub source: String,
    /// Every entry's `environment`: `production`, `staging` or `development`.
    pub environment: String,
    /// The most entries waiting to be sent; past it, events are dropped and counted.
    pub buffer: usize,
    /// How long an entry may wait for a batch to fill.
    pub interval: Duration,
}

impl Options {
    /// A buffer of 10,000 entries, sent at least every second.
    pub fn new(source: impl Into<String>, environment: impl Into<String>) -> Self {
        Options {
            source: source.into(),
            environment: environment.into(),
            buffer: 10_000,
            interval: Duration::from_secs(1),
        }
    }
}

/// The layer: records events into the shipper's buffer.
#[derive(Debug)]
pub struct SluiceLayer {
    entries: mpsc::Sender<Value>,
    counters: Arc<Counters>,
    source: String,
    environment: String,
}

#[derive(Debug, Default)]
struct Counters {
    dropped: AtomicU64,
    sent: AtomicU64,
}

/// The background task that sends the buffer; ask it to flush, or to send what is left and
/// stop, before the process exits.
#[derive(Debug)]
pub struct Shipper {
    commands: mpsc::Sender<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
    counters: Arc<Counters>,
}

tokio::task_local! {
    /// Set on the shipper's own task: what its HTTP client logs is not shipped.
    static SHIPPING: ();
}

/// The layer and its shipper, sending through `client`; starts the shipper on the current
/// Tokio runtime.
pub fn layer(client: sluice_client::Client, options: Options) -> (SluiceLayer, Shipper) {
    let (entries, receiver) = mpsc::channel(options.buffer.max(1));
    let (commands, command_receiver) = mpsc::channel(4);
    let counters = Arc::new(Counters::default());
    let task =
        tokio::spawn(SHIPPING.scope((), ship(client, receiver, command_receiver, counters.clone(), options.interval)));
    let layer =
        SluiceLayer { entries, counters: counters.clone(), source: options.source, environment: options.environment };
    (layer, Shipper { commands, task, counters })
}

/// Sends batches until every layer is gone and the buffer is empty.
async fn ship(
    client: sluice_client::Client,
    mut entries: mpsc::Receiver<Value>,
    mut commands: mpsc::Receiver<oneshot::Sender<()>>,
    counters: Arc<Counters>,
    interval: Duration,
) {
    let mut batch = Vec::with_capacity(sluice_client::BATCH);
    loop {
        tokio::select! {
            received = entries.recv_many(&mut batch, sluice_client::BATCH) => {
                if received == 0 {
                    return;
                }
                // Give a batch that is not full a moment to fill.
                if batch.len() < sluice_client::BATCH {
                    let _ = tokio::time::timeout(interval, async {
                        while batch.len() < sluice_client::BATCH {
                            let room = sluice_client::BATCH - batch.len();
                            if entries.recv_many(&mut batch, room).await == 0 {
                                break;
                            }
                        }
                    })
                    .await;
                }
                send(&client, &mut batch, &counters).await;
            }
            Some(done) = commands.recv() => {
                while let Ok(entry) = entries.try_recv() {
                    batch.push(entry);
                    if batch.len() == sluice_client::BATCH {
                        send(&client, &mut batch, &counters).await;
                    }
                }
                send(&client, &mut batch, &counters).await;
                let _ = done.send(());
            }
        }
    }
}

/// Sends a batch (the client retries as the server asks); a batch still refused is counted as
/// dropped, and said once on stderr.
async fn send(client: &sluice_client::Client, batch: &mut Vec<Value>, counters: &Counters) {
    if batch.is_empty() {
        return;
    }
    let count = batch.len() as u64;
    match client.ingest(batch).await {
        Ok(_) => {
            counters.sent.fetch_add(count, Ordering::Relaxed);
        }
        Err(error) => {
            counters.dropped.fetch_add(count, Ordering::Relaxed);
            eprintln!("sluice-tracing: {count} events not shipped: {error}");
        }
    }
    batch.clear();
}

impl Shipper {
    /// Sends everything recorded so far; returns once the server has it (or it was dropped).
    pub async fn flush(&self) {
        let (done, answered) = oneshot::channel();
        if self.commands.send(done).await.is_ok() {
            let _ = answered.await;
        }
    }

    /// Sends what is left and stops the task. Events recorded after it are dropped.
    pub async fn shutdown(self) {
        self.flush().await;
        self.task.abort();
        let _ = self.task.await;
    }

    /// Events dropped so far: the buffer was full, or the server refused them after retries.
    pub fn dropped(&self) -> u64 {
        self.counters.dropped.load(Ordering::Relaxed)
    }

    /// Events the server has accepted so far.
    pub fn sent(&self) -> u64 {
        self.counters.sent.load(Ordering::Relaxed)
    }
}

impl SluiceLayer {
    /// Events dropped so far (as [`Shipper::dropped`]).
    pub fn dropped(&self) -> u64 {
        self.counters.dropped.load(Ordering::Relaxed)
    }
}

fn level(level: &Level) -> &'static str {
    match *level {
        Level::ERROR => "error",
        Level::WARN => "warn",
        Level::INFO => "info",
        _ => "debug",
    }
}

#[expect(
    clippy::disallowed_methods,
    reason = "embedded in other services, which inject no clock: events are stamped when recorded"
)]
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
}

impl<S: Subscriber + for<'span> LookupSpan<'span>> tracing_subscriber::Layer<S> for SluiceLayer {
    fn on_new_span(&self, attributes: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            let mut fields = Fields::default();
            attributes.record(&mut fields);
            span.extensions_mut().insert(SpanFields(fields.map));
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            let mut extensions = span.extensions_mut();
            if let Some(SpanFields(map)) = extensions.get_mut::<SpanFields>() {
                let mut fields = Fields { map: std::mem::take(map), message: None };
                values.record(&mut fields);
                *map = fields.map;
            }
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        if SHIPPING.try_with(|()| ()).is_ok() {
            return;
        }
        let metadata = event.metadata();
        let mut fields = Fields::default();
        event.record(&mut fields);
        let mut data = fields.map;
        data.insert("target".into(), json!(metadata.target()));
        if let Some(scope) = ctx.event_scope(event) {
            let mut span = Map::new();
            let mut name = None;
            // Outermost first, so the nearest span's fields win.
            for current in scope.from_root() {
                name = Some(current.name());
                if let Some(SpanFields(map)) = current.extensions().get::<SpanFields>() {
                    span.extend(map.clone());
                }
            }
            if let Some(name) = name {
                span.insert("name".into(), json!(name));
                data.insert("span".into(), Value::Object(span));
            }
        }
        let message =
            fields.message.filter(|message| !message.is_empty()).unwrap_or_else(|| metadata.name().to_owned());
        let entry = json!({
            "level": level(metadata.level()),
            "message": message.chars().take(10_000).collect::<String>(),
            "source": self.source,
            "environment": self.environment,
            "timestamp": now_ms(),
            "data": data,
        });
        if self.entries.try_send(entry).is_err() {
            self.counters.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}
