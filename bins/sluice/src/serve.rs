//! `sluice serve`: first-start bootstrap, then the HTTP server until SIGTERM or SIGINT, after
//! which in-flight requests finish (up to 30 seconds) before the process exits.

use std::sync::Arc;

use actix_web::{App, HttpServer};
use anyhow::Context;
use sluice_http::AppState;
use sluice_model::{ApiKeyRecord, KeyEnv, KeyId, Plan, Scopes, Workspace, WorkspaceId};
use sluice_store::{NewApiKey, Store};

use crate::cli::ServeOptions;

/// On an empty database, creates workspace `default` (enterprise, so a local trial is not rate
/// limited) and one key, and prints the key once on stdout.
async fn bootstrap(store: &dyn Store) -> anyhow::Result<()> {
    let now = sluice_http::unix_now_ms();
    let workspace =
        Workspace { id: WorkspaceId::generate(), name: "default".into(), plan: Plan::Enterprise, created_at: now };
    let generated = sluice_auth::generate_key(KeyEnv::Live).context("the OS random number generator failed")?;
    let record = ApiKeyRecord {
        id: KeyId::generate(),
        workspace_id: workspace.id,
        name: Some("bootstrap".into()),
        env: KeyEnv::Live,
        scopes: Scopes::ALL,
        created_at: now,
        expires_at: None,
        revoked_at: None,
    };
    if store.bootstrap(&workspace, &NewApiKey { record, hash: generated.hash }).await? {
        println!(
            "First start: created workspace \"default\" ({}) and an API key. It is shown only this once:\n\n    {}\n",
            workspace.id, generated.text
        );
    }
    Ok(())
}

/// Runs the server until a shutdown signal.
pub(crate) async fn run(store: Arc<dyn Store>, options: ServeOptions) -> anyhow::Result<()> {
    bootstrap(store.as_ref()).await?;
    // Housekeeping (PostgreSQL's coming partitions) every hour; a failure is logged and
    // tried again next hour (inserts make a missing partition themselves meanwhile).
    let housekeeping = store.clone();
    actix_web::rt::spawn(async move {
        let mut hourly = actix_web::rt::time::interval(std::time::Duration::from_secs(3600));
        loop {
            hourly.tick().await;
            if let Err(error) = housekeeping.maintain().await {
                tracing::warn!(%error, "housekeeping failed; retrying in an hour");
            }
        }
    });
    let state = AppState::new(store);
    let server = HttpServer::new(move || App::new().configure(sluice_http::configure(state.clone())))
        .shutdown_timeout(30)
        .bind(&options.listen)
        .with_context(|| format!("cannot listen on {}", options.listen))?;
    for address in server.addrs() {
        tracing::info!(listen.address = %address, "sluice is listening");
    }
    server.run().await.context("the server stopped with an error")?;
    tracing::info!("sluice stopped");
    Ok(())
}
