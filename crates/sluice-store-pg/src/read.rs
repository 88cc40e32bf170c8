//! Reading logs back: a workspace's logs under a filter or a search, newest first, a page at
//! a time, one log by its id, and a live tail's replay, each read from the workspace's blocks
//! (`sluice_store::blockstore`) inside one repeatable-read transaction, so a merge or a
//! retention committing meanwhile is seen whole or not at all.

use async_trait::async_trait;
use diesel::result::Error as DieselError;
use diesel_async::AsyncPgConnection;
use sluice_blocks::Matcher;
use sluice_model::{Log, LogId, WorkspaceId};
use sluice_store::blockstore::{HeadCache, Reader};
use sluice_store::{LogPage, LogReads, Page, PageRead, StoreError};

use crate::PgStore;
use crate::error::from_diesel;
use crate::source::PgBlocks;

/// What a read of blocks failed on: the database, or what it read.
enum Failed {
    Database(DieselError),
    Store(StoreError),
}

impl From<DieselError> for Failed {
    fn from(error: DieselError) -> Self {
        Failed::Database(error)
    }
}

/// A read of one workspace's blocks ([`Reader`]'s reads).
pub(crate) enum Read<'a> {
    Page { matcher: &'a Matcher<'a>, from: Option<i64>, to: Option<i64>, page: Page },
    Get(LogId),
    After(LogId, u32),
    Matching { matcher: &'a Matcher<'a>, from: Option<i64>, to: Option<i64>, cap: usize },
}

/// What a [`Read`] answers.
pub(crate) enum Answer {
    Page(LogPage),
    Log(Option<Box<Log>>),
    Logs(Vec<Log>),
}

impl Read<'_> {
    /// This read through `source`.
    pub(crate) async fn run(
        self,
        source: &mut PgBlocks<'_>,
        heads: &HeadCache,
        workspace: WorkspaceId,
    ) -> Result<Answer, StoreError> {
        let mut reader = Reader::new(source, heads, workspace);
        Ok(match self {
            Read::Page { matcher, from, to, page } => Answer::Page(reader.page(matcher, from, to, page).await?),
            Read::Get(id) => Answer::Log(reader.get(id).await?.map(Box::new)),
            Read::After(after, limit) => Answer::Logs(reader.after(after, limit).await?),
            Read::Matching { matcher, from, to, cap } => Answer::Logs(reader.matching(matcher, from, to, cap).await?),
        })
    }
}

fn unexpected() -> StoreError {
    StoreError::Backend("a read of blocks answered another read".into())
}

impl PgStore {
    /// Runs `read` over `workspace`'s blocks in one repeatable-read, read-only transaction,
    /// within the call timeout.
    pub(crate) async fn read_blocks(&self, workspace: WorkspaceId, read: Read<'_>) -> Result<Answer, StoreError> {
        let heads = &self.heads;
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            let outcome = (*connection)
                .build_transaction()
                .repeatable_read()
                .read_only()
                .run::<_, Failed, _>(async move |connection: &mut AsyncPgConnection| {
                    let mut source = PgBlocks { connection, workspace: *workspace.as_uuid() };
                    read.run(&mut source, heads, workspace).await.map_err(Failed::Store)
                })
                .await;
            match outcome {
                Ok(answer) => Ok(answer),
                Err(Failed::Store(error)) => Err(error),
                Err(Failed::Database(error)) => Err(from_diesel(error)),
            }
        })
        .await
    }

    /// Every log `matcher` keeps in `from..=to`, at most `cap` of them.
    pub(crate) async fn matching(
        &self,
        workspace: WorkspaceId,
        matcher: &Matcher<'_>,
        from: Option<i64>,
        to: Option<i64>,
        cap: usize,
    ) -> Result<Vec<Log>, StoreError> {
        match self.read_blocks(workspace, Read::Matching { matcher, from, to, cap }).await? {
            Answer::Logs(logs) => Ok(logs),
            _ => Err(unexpected()),
        }
    }
}

#[async_trait]
impl LogReads for PgStore {
    async fn read_page(&self, workspace: WorkspaceId, read: PageRead<'_>) -> Result<LogPage, StoreError> {
        let PageRead { filter, search, page } = read;
        let matcher = Matcher::new(filter, search);
        let read = Read::Page { matcher: &matcher, from: filter.from, to: filter.to, page };
        match self.read_blocks(workspace, read).await? {
            Answer::Page(page) => Ok(page),
            _ => Err(unexpected()),
        }
    }

    async fn get_log(&self, workspace: WorkspaceId, id: LogId) -> Result<Option<Log>, StoreError> {
        match self.read_blocks(workspace, Read::Get(id)).await? {
            Answer::Log(log) => Ok(log.map(|log| *log)),
            _ => Err(unexpected()),
        }
    }

    async fn logs_after(&self, workspace: WorkspaceId, after: LogId, limit: u32) -> Result<Vec<Log>, StoreError> {
        match self.read_blocks(workspace, Read::After(after, limit)).await? {
            Answer::Logs(logs) => Ok(logs),
            _ => Err(unexpected()),
        }
    }
}
