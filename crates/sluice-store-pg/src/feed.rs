//! Live tail across servers: servers sharing one database tell each other which logs they
//! committed, through PostgreSQL's `LISTEN`/`NOTIFY` on the channel `sluice_logs`.
//!
//! A notification carries ids, not logs (a payload holds under 8,000 bytes; a log may hold
//! 10,000 characters of message alone): `<server> <workspace> <oldest ts> <newest ts>
//! <id>,<id>,...`, several per batch when its ids do not fit one. A server that has a tail of
//! that workspace reads the logs back from the blocks of their span of time, and hands them
//! to its tails; the others only parse a line. Why `NOTIFY` rather than Redis
//! pub/sub: every PostgreSQL deployment has it, with nothing more to run, and a notification
//! is sent when its statement commits, after the logs' own commit, so a tail never hears of a
//! log that is not stored (docs/PERFORMANCE.md, issue 26, measures its cost).
//!
//! Only what another server watches is announced. A server with a live tail of a workspace
//! open keeps a row of `tail_watches` for it ([`PgStore::watch_workspaces`]: before the tail's
//! stream starts, and again while it stays open, each lapsing [`sluice_store::WATCH_SECONDS`]
//! after), and the announcer reads, after the batches' commit, which of their workspaces some
//! other server watches, and notifies only those: a single read of a small table when nobody
//! tails, where every batch's ids went through PostgreSQL's notification queue and back to
//! every server for nothing (about 5 % of ingest's CPU: docs/PERFORMANCE.md, issue 24). A
//! batch committed before a watch's row is read is one the tail, which opened after it, does
//! not show anyway.

use std::time::Duration;

use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use sluice_model::{Log, LogId, WorkspaceId};
use sluice_store::{Announced, Deliver, StoreError, Watched};
use uuid::Uuid;

use crate::PgStore;
use crate::error::from_diesel;

/// The channel servers announce on.
const CHANNEL: &str = "sluice_logs";

/// The most bytes of ids one notification carries (PostgreSQL's limit is 8,000 bytes).
const MAX_IDS_BYTES: usize = 7_500;

/// How long a listener waits before connecting again after losing its connection.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// The database's clock in Unix milliseconds, in SQL: what a watch lapses by, so the servers'
/// own clocks never meet.
macro_rules! now_ms {
    () => {
        "(extract(epoch FROM clock_timestamp()) * 1000)::int8"
    };
}

/// How long a watch holds, in milliseconds.
const WATCH_MS: i64 = sluice_store::WATCH_SECONDS as i64 * 1_000;

/// How long housekeeping keeps a lapsed watch's row (a server that stopped without a word).
const LAPSED_KEPT_MS: i64 = 3_600_000;

/// A workspace some other server watches, as read back.
#[derive(QueryableByName)]
struct WatchedRow {
    #[diesel(sql_type = SqlUuid)]
    workspace_id: Uuid,
}

/// The distinct ids of `workspaces`, in order.
fn distinct_ids<'a>(workspaces: impl IntoIterator<Item = &'a WorkspaceId>) -> Vec<Uuid> {
    let mut ids: Vec<Uuid> = workspaces.into_iter().map(|workspace| *workspace.as_uuid()).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The notifications that announce `batches` from `server`.
fn payloads<'a>(server: &str, batches: impl IntoIterator<Item = &'a Announced>) -> Vec<String> {
    let mut payloads = Vec::new();
    for batch in batches {
        for part in batch.logs.chunks(MAX_IDS_BYTES / 37) {
            let oldest = part.iter().map(|(_, ts)| *ts).min().unwrap_or(0);
            let newest = part.iter().map(|(_, ts)| *ts).max().unwrap_or(0);
            let ids: Vec<String> = part.iter().map(|(id, _)| id.to_string()).collect();
            payloads.push(format!("{server} {} {oldest} {newest} {}", batch.workspace, ids.join(",")));
        }
    }
    payloads
}

/// One notification read back: whose, which workspace, the time span and the ids.
struct Notice {
    server: String,
    workspace: WorkspaceId,
    span: (i64, i64),
    ids: Vec<Uuid>,
}

fn parse(payload: &str) -> Option<Notice> {
    let mut words = payload.split(' ');
    let server = words.next()?.to_owned();
    let workspace = words.next()?.parse().ok()?;
    let span = (words.next()?.parse().ok()?, words.next()?.parse().ok()?);
    let ids = words.next()?.split(',').map(|id| id.parse::<LogId>().map(|id| *id.as_uuid())).collect::<Result<_, _>>();
    Some(Notice { server, workspace, span, ids: ids.ok()? })
}

impl PgStore {
    /// Sends the notifications of those of `batches` whose workspace another server watches
    /// now, one statement for all; reads who watches first, one statement (module docs).
    pub(crate) async fn notify(&self, batches: &[Announced]) -> Result<(), StoreError> {
        if batches.is_empty() {
            return Ok(());
        }
        let workspaces = distinct_ids(batches.iter().map(|batch| &batch.workspace));
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            let watched: Vec<WatchedRow> = diesel::sql_query(concat!(
                "SELECT DISTINCT workspace_id FROM tail_watches \
                 WHERE workspace_id = ANY($1) AND server <> $2 AND expires_at > ",
                now_ms!()
            ))
            .bind::<Array<SqlUuid>, _>(&workspaces)
            .bind::<Text, _>(&self.server)
            .load(&mut connection)
            .await
            .map_err(from_diesel)?;
            let watched: Vec<Uuid> = watched.into_iter().map(|row| row.workspace_id).collect();
            let payloads =
                payloads(&self.server, batches.iter().filter(|batch| watched.contains(batch.workspace.as_uuid())));
            if payloads.is_empty() {
                return Ok(());
            }
            diesel::sql_query(format!("SELECT pg_notify('{CHANNEL}', p)::text AS p FROM unnest($1::text[]) AS p"))
                .bind::<Array<Text>, _>(&payloads)
                .execute(&mut connection)
                .await
                .map_err(from_diesel)?;
            Ok(())
        })
        .await
    }

    /// Says that this server watches `workspaces` (it has a live tail of each open), for
    /// [`WATCH_MS`] from now by the database's clock: one statement, committed when it returns.
    pub(crate) async fn watch_workspaces(&self, workspaces: &[WorkspaceId]) -> Result<(), StoreError> {
        // An upsert may not touch a row twice.
        let ids = distinct_ids(workspaces);
        if ids.is_empty() {
            return Ok(());
        }
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            diesel::sql_query(concat!(
                "INSERT INTO tail_watches (workspace_id, server, expires_at) \
                 SELECT workspace, $2, ",
                now_ms!(),
                " + $3 FROM unnest($1::uuid[]) AS workspace \
                 ON CONFLICT (workspace_id, server) DO UPDATE SET expires_at = excluded.expires_at"
            ))
            .bind::<Array<SqlUuid>, _>(&ids)
            .bind::<Text, _>(&self.server)
            .bind::<BigInt, _>(WATCH_MS)
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
            Ok(())
        })
        .await
    }

    /// Deletes the watches lapsed for an hour: those of servers that stopped (housekeeping).
    pub(crate) async fn forget_lapsed_watches(&self, connection: &mut AsyncPgConnection) -> Result<(), StoreError> {
        diesel::sql_query(concat!("DELETE FROM tail_watches WHERE expires_at < ", now_ms!(), " - $1"))
            .bind::<BigInt, _>(LAPSED_KEPT_MS)
            .execute(connection)
            .await
            .map_err(from_diesel)?;
        Ok(())
    }

    /// Starts the listener: a connection of its own that `LISTEN`s, again after any loss,
    /// until `stop`.
    pub(crate) fn listen(&self, watched: Watched, deliver: Deliver, mut stop: tokio::sync::watch::Receiver<bool>) {
        let store = self.clone();
        tokio::spawn(async move {
            loop {
                if *stop.borrow() {
                    return;
                }
                tokio::select! {
                    ended = store.listen_once(&watched, &deliver) => {
                        if let Err(error) = ended {
                            tracing::warn!(%error, "live tail: lost the other servers' notifications; reconnecting");
                        }
                    }
                    _ = stop.changed() => return,
                }
                tokio::select! {
                    () = tokio::time::sleep(RECONNECT_AFTER) => {}
                    _ = stop.changed() => return,
                }
            }
        });
    }

    /// One listening connection, until it fails.
    async fn listen_once(&self, watched: &Watched, deliver: &Deliver) -> Result<(), StoreError> {
        let (client, connection) = self
            .config
            .connect(tokio_postgres::NoTls)
            .await
            .map_err(|error| StoreError::Unavailable(error.to_string()))?;
        let mut listener = AsyncPgConnection::try_from_client_and_connection(client, connection)
            .await
            .map_err(|error| StoreError::Unavailable(error.to_string()))?;
        diesel::sql_query(format!("LISTEN {CHANNEL}")).execute(&mut listener).await.map_err(from_diesel)?;
        let mut notifications = std::pin::pin!(listener.notifications_stream());
        loop {
            let next = std::future::poll_fn(|context| notifications.as_mut().poll_next(context)).await;
            let Some(notification) = next else {
                return Err(StoreError::Unavailable("the listening connection closed".into()));
            };
            let notification = notification.map_err(from_diesel)?;
            let Some(notice) = parse(&notification.payload) else { continue };
            if notice.server == self.server || !watched(notice.workspace) {
                continue;
            }
            match self.logs_by_id(&notice).await {
                Ok(logs) => deliver(notice.workspace, logs),
                Err(error) => tracing::warn!(%error, "live tail: cannot read another server's logs"),
            }
        }
    }

    /// The logs a notice names, in its order: those of its span in the workspace's blocks (the
    /// newest, just written) that it names.
    async fn logs_by_id(&self, notice: &Notice) -> Result<Vec<Log>, StoreError> {
        let filter =
            sluice_store::LogFilter { from: Some(notice.span.0), to: Some(notice.span.1), ..Default::default() };
        let matcher = sluice_blocks::Matcher::new(&filter, None);
        let named: std::collections::HashMap<Uuid, usize> =
            notice.ids.iter().enumerate().map(|(at, id)| (*id, at)).collect();
        let mut logs: Vec<Log> = self
            .matching(notice.workspace, &matcher, filter.from, filter.to, MAX_SPAN_LOGS)
            .await?
            .into_iter()
            .filter(|log| named.contains_key(log.id.as_uuid()))
            .collect();
        logs.sort_by_key(|log| named.get(log.id.as_uuid()).copied());
        Ok(logs)
    }
}

/// The most logs a notice's span is read for: far more than one group commits.
const MAX_SPAN_LOGS: usize = 1_000_000;

use futures_core::Stream as _;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_fit_a_notification_and_read_back() {
        let workspace = WorkspaceId::generate();
        let logs: Vec<(LogId, i64)> = (0..500).map(|n| (LogId::generate(), 1_000 + n)).collect();
        let payloads = payloads("s1", &[Announced { workspace, logs: logs.clone() }]);
        assert!(payloads.len() > 1 && payloads.iter().all(|payload| payload.len() < 8_000));
        let notices: Vec<Notice> = payloads.iter().filter_map(|payload| parse(payload)).collect();
        let ids: Vec<Uuid> = notices.iter().flat_map(|notice| notice.ids.clone()).collect();
        assert_eq!(ids, logs.iter().map(|(id, _)| *id.as_uuid()).collect::<Vec<_>>());
        assert_eq!((notices[0].server.as_str(), notices[0].workspace, notices[0].span.0), ("s1", workspace, 1_000));
        assert!(parse("s1 not-a-workspace 1 2 x").is_none());
    }
}
