//! Reading logs back: a workspace's logs under a filter or a search, newest first, a page at
//! a time, one log by its id, and a live tail's replay, each read from the workspace's blocks
//! (`sluice_store::blockstore`) inside one read transaction, so a merge committing meanwhile
//! is seen whole or not at all.

use async_trait::async_trait;
use diesel::prelude::*;
use sluice_model::{Log, LogId, WorkspaceId};
use sluice_store::blockstore::{HeadCache, Reader, now};
use sluice_store::{LogPage, LogReads, PageRead, StoreError};

use crate::blocks::SqliteBlocks;
use crate::connection::SqliteStore;
use crate::error::from_diesel;

/// Runs `read` over `workspace`'s blocks in one read transaction.
pub(crate) fn read_blocks<R>(
    connection: &mut SqliteConnection,
    cache: &HeadCache,
    workspace: &WorkspaceId,
    read: impl FnOnce(&mut Reader<'_, SqliteBlocks<'_>>) -> Result<R, StoreError>,
) -> Result<R, StoreError> {
    let mut outcome = None;
    connection
        .transaction(|connection| {
            let mut source = SqliteBlocks::new(connection, workspace);
            outcome = Some(read(&mut Reader::new(&mut source, cache, *workspace)));
            Ok::<_, diesel::result::Error>(())
        })
        .map_err(from_diesel)?;
    outcome.unwrap_or_else(|| Err(StoreError::Backend("a read did not run".into())))
}

#[async_trait]
impl LogReads for SqliteStore {
    async fn read_page(&self, workspace: WorkspaceId, read: PageRead<'_>) -> Result<LogPage, StoreError> {
        let (filter, search, page) = (read.filter.clone(), read.search.cloned(), read.page);
        let heads = self.heads.clone();
        self.with_connection(move |connection| {
            let matcher = sluice_blocks::Matcher::new(&filter, search.as_ref());
            read_blocks(connection, &heads, &workspace, |reader| {
                now(reader.page(&matcher, filter.from, filter.to, page))
            })
        })
        .await
    }

    async fn get_log(&self, workspace: WorkspaceId, id: LogId) -> Result<Option<Log>, StoreError> {
        let heads = self.heads.clone();
        self.with_connection(move |connection| {
            read_blocks(connection, &heads, &workspace, |reader| now(reader.get(id)))
        })
        .await
    }

    async fn logs_after(&self, workspace: WorkspaceId, after: LogId, limit: u32) -> Result<Vec<Log>, StoreError> {
        let heads = self.heads.clone();
        self.with_connection(move |connection| {
            read_blocks(connection, &heads, &workspace, |reader| now(reader.after(after, limit)))
        })
        .await
    }
}
