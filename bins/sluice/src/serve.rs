//! `sluice serve`: first-start bootstrap, then the HTTP server until SIGTERM or SIGINT, after
//! which in-flight requests finish (up to 30 seconds) before the process exits.

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use actix_web::HttpServer;
use anyhow::Context;
use sluice_http::AppState;
use sluice_http::origin::{OriginResolver, open_country_database, parse_trusted_proxies};
use sluice_limits::RedisLimiter;
use sluice_model::{KeyEnv, Plan, Role, Scopes, Workspace};
use sluice_store::Store;
use sluice_store::accounts::MemberChange;

use crate::cli::ServeOptions;

/// The email of the admin a first start creates.
pub(crate) const FIRST_ADMIN: &str = "admin@localhost";

/// On an empty database, creates workspace `default` (enterprise, so a local trial is not rate
/// limited), one key, and the admin user `admin@localhost` as its owner, and prints the key and
/// the admin's password once on stdout.
async fn bootstrap(store: &dyn Store, now: i64) -> anyhow::Result<()> {
    let workspace = Workspace::new("default", Plan::Enterprise, now);
    let (text, key) =
        sluice_auth::mint_key(workspace.id, KeyEnv::Live, Some("bootstrap".into()), Scopes::ALL, None, now)
            .context("the OS random number generator failed")?;
    if !store.bootstrap(&workspace, &key).await? {
        return Ok(());
    }
    // Written, not printed: a stdout nobody reads any more (a closed pipe) must not stop the
    // server (`println!` panics on it).
    let mut stdout = std::io::stdout();
    let _ = writeln!(
        stdout,
        "First start: created workspace \"default\" ({}) and an API key. It is shown only this once:\n\n    {}\n",
        workspace.id, text
    );
    let (admin, password) =
        crate::accounts::create_user(store, FIRST_ADMIN, Some("Administrator".into()), true, None, now).await?;
    store.change_member(workspace.id, admin.id, MemberChange::Set(Role::Owner), false, now).await?;
    let _ = writeln!(
        stdout,
        "Sign in (dashboard, or `sluice login`) as {FIRST_ADMIN} with this password, shown only this once:\n\n    {}\n",
        password.unwrap_or_default()
    );
    let _ = stdout.flush();
    Ok(())
}

/// `http://` and the listen address, when people can reach it at that address: not for an
/// unspecified one (`0.0.0.0`, `[::]`) or port 0, where the request's own host is used instead.
fn listen_url(listen: &str) -> Option<String> {
    let address: std::net::SocketAddr = listen.parse().ok()?;
    (!address.ip().is_unspecified() && address.port() != 0).then(|| format!("http://{address}"))
}

/// Runs the server until a shutdown signal.
pub(crate) async fn run(
    store: Arc<dyn Store>,
    #[cfg_attr(not(feature = "bench"), expect(unused_variables, reason = "only the bench stand-ins open it again"))]
    database_url: &str,
    options: ServeOptions,
) -> anyhow::Result<()> {
    let mut state = AppState::new(store.clone());
    // The write queue's bounds (docs/API.md: 503 when overloaded).
    let mut group = store.group_options();
    group.max_queued_logs = options.write_queue_logs;
    group.max_wait = Duration::from_millis(options.write_queue_wait_ms);
    state.writer = sluice_store::group::GroupCommitter::start(Arc::new(store.clone()), group);
    state.body_timeout = Duration::from_millis(options.body_timeout_ms);
    state.max_header_bytes = options.max_header_bytes;
    state.public_url = options.public_url.clone().or_else(|| listen_url(&options.listen));
    bootstrap(store.as_ref(), state.clock.now_ms()).await?;
    let trusted = parse_trusted_proxies(&options.trusted_proxies)?;
    let countries = options.geoip_db.as_deref().map(open_country_database).transpose()?;
    state.origins = Arc::new(OriginResolver::new(trusted, countries));
    #[cfg(feature = "bench")]
    crate::bench::replace_writer(&mut state, database_url, &options.bench).await?;
    if let Some(url) = &options.redis_url {
        let timeout = Duration::from_millis(options.redis_timeout_ms);
        let limiter = RedisLimiter::new(url, timeout).context("SLUICE_REDIS_URL is not a Redis URL")?;
        state.limiter = Arc::new(limiter);
    }
    // Housekeeping (PostgreSQL's coming partitions) every hour; a failure is logged and
    // tried again next hour (inserts make a missing partition themselves meanwhile).
    let housekeeping = store.clone();
    let housekeeping_task = actix_web::rt::spawn(async move {
        let mut hourly = actix_web::rt::time::interval(Duration::from_secs(3600));
        loop {
            hourly.tick().await;
            if let Err(error) = housekeeping.maintain().await {
                tracing::warn!(%error, "housekeeping failed; retrying in an hour");
            }
        }
    });
    // Retention: a sweep at start, then every interval; a failure is logged and the next
    // sweep does the work.
    let retention = store.clone();
    let clock = state.clock.clone();
    let interval = options.retention_interval;
    let retention_task = actix_web::rt::spawn(async move {
        let mut every = actix_web::rt::time::interval(interval);
        loop {
            every.tick().await;
            match sluice_store::retention::sweep(retention.as_ref(), clock.now_ms()).await {
                Ok(deleted) => tracing::info!(deleted, "retention sweep"),
                Err(error) => tracing::warn!(%error, "retention sweep failed; the next one retries"),
            }
        }
    });
    // Live tails never end by themselves: at SIGTERM or SIGINT they are ended at once (each
    // stream finishes), so the graceful stop does not wait its 30 s for them.
    let tails = state.tails.clone();
    let tail_closer = actix_web::rt::spawn(async move {
        use actix_web::rt::signal::unix::{SignalKind, signal};
        match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
            (Ok(mut terminate), Ok(mut interrupt)) => {
                tokio::select! {
                    _ = terminate.recv() => {}
                    _ = interrupt.recv() => {}
                }
                tails.close();
            }
            _ => tracing::warn!("cannot watch for shutdown signals; live tails end only with their clients"),
        }
    });
    let listen = options.listen.clone();
    let writer = state.writer.clone();
    let server = HttpServer::new(move || sluice_http::app(state.clone()))
        .client_request_timeout(Duration::from_millis(options.header_timeout_ms))
        .keep_alive(Duration::from_secs(options.keep_alive_secs))
        .max_connections(options.max_connections)
        .shutdown_timeout(30)
        .bind(&listen)
        .with_context(|| format!("cannot listen on {listen}"))?;
    for address in server.addrs() {
        tracing::info!(listen.address = %address, "sluice is listening");
    }
    let served = server.run().await;
    // Requests have finished; write what they queued, and stop the writers and the periodic
    // tasks while the runtime still runs: the store they hold must be dropped inside it (its
    // pools hand connections to blocking threads as they close).
    writer.shutdown().await;
    for task in [housekeeping_task, retention_task, tail_closer] {
        task.abort();
        let _ = task.await;
    }
    served.context("the server stopped with an error")?;
    tracing::info!("sluice stopped");
    Ok(())
}
