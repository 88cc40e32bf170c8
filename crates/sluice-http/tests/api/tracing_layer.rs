//! `sluice-tracing` shipping a program's events to the real server: each event an entry with
//! its level, message, fields, target and span; a full buffer drops and counts; a flush sends
//! what is left.

use serde_json::json;
use sluice_client::Client;
use sluice_tracing::Options;
use tracing_subscriber::prelude::*;

use crate::common::start;

#[actix_web::test]
async fn events_become_entries_with_their_fields_target_and_span() {
    let server = start().await;
    let client = Client::new(&server.base).expect("client").with_token(server.key.clone());
    let (layer, shipper) = sluice_tracing::layer(client.clone(), Options::new("billing", "staging"));
    tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
        let outer = tracing::info_span!("request", path = "/pay", order = 7);
        let _outer = outer.enter();
        let inner = tracing::debug_span!("charge", order = 42, provider = "acme");
        let _inner = inner.enter();
        tracing::info!(amount_cents = 1999, paid = true, "order paid");
        tracing::trace!("very detailed");
        tracing::error!(error = "card declined");
    });
    shipper.flush().await;
    assert_eq!((shipper.sent(), shipper.dropped()), (3, 0));
    let page = client.list(&[("source", "billing")]).await.expect("list");
    let paid = page.logs.iter().find(|log| log.entry.message == "order paid").expect("the paid event");
    assert_eq!((paid.entry.level.as_str(), paid.entry.environment.as_str()), ("info", "staging"));
    let data = serde_json::to_value(&paid.entry.data).expect("data");
    assert_eq!((&data["amount_cents"], &data["paid"]), (&json!(1999), &json!(true)));
    assert_eq!(data["target"], json!(module_path!()));
    // The nearest span's name, and its fields over its parents'.
    assert_eq!(data["span"], json!({"name": "charge", "order": 42, "provider": "acme", "path": "/pay"}));
    let levels: Vec<&str> = page.logs.iter().map(|log| log.entry.level.as_str()).collect();
    assert!(levels.contains(&"debug") && levels.contains(&"error"), "{levels:?}");
    // An event without a message is named after its place in the code.
    assert!(page.logs.iter().any(|log| log.entry.level.as_str() == "error" && log.entry.message.starts_with("event ")));
    shipper.shutdown().await;
    server.stop().await;
}

#[actix_web::test]
async fn a_full_buffer_drops_what_does_not_fit_and_counts_it() {
    let server = start().await;
    let client = Client::new(&server.base).expect("client").with_token(server.key.clone());
    let options = Options { buffer: 10, ..Options::new("burst", "development") };
    let (layer, shipper) = sluice_tracing::layer(client.clone(), options);
    // 100 events without yielding to the runtime: the shipper cannot drain meanwhile, so the
    // buffer holds 10 and the other 90 are counted, never waited for.
    tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
        for n in 0..100 {
            tracing::info!(n, "burst");
        }
    });
    assert_eq!(shipper.dropped(), 90);
    shipper.flush().await;
    assert_eq!(shipper.sent(), 10);
    let page = client.list(&[("source", "burst"), ("limit", "100")]).await.expect("list");
    assert_eq!(page.logs.len(), 10);
    shipper.shutdown().await;
    server.stop().await;
}
