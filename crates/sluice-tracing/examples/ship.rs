//! Ships this program's `tracing` events to a sluice server.
//!
//! ```sh
//! SLUICE_SERVER=http://127.0.0.1:8080 SLUICE_API_KEY=slc_live_... cargo run -p sluice-tracing --example ship
//! ```

use tracing_subscriber::prelude::*;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), sluice_client::Error> {
    let server = std::env::var("SLUICE_SERVER").unwrap_or_else(|_| "http://127.0.0.1:8080".into());
    let key = std::env::var("SLUICE_API_KEY")
        .map_err(|_| sluice_client::Error::Usage("set SLUICE_API_KEY to an ingest key".into()))?;
    let client = sluice_client::Client::new(&server)?.with_token(key);
    let (layer, shipper) = sluice_tracing::layer(client, sluice_tracing::Options::new("ship-example", "development"));
    tracing_subscriber::registry().with(layer).init();

    let span = tracing::info_span!("checkout", order = 42, customer = "c-7");
    let _entered = span.enter();
    tracing::info!(amount_cents = 1999, "order paid");
    tracing::warn!(retries = 2, "payment provider slow");
    tracing::error!(error = "card declined", "payment failed");
    drop(_entered);

    shipper.flush().await;
    println!("sent {} events to {server} ({} dropped)", shipper.sent(), shipper.dropped());
    shipper.shutdown().await;
    Ok(())
}
