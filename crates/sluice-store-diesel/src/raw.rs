//! Rows of the statements the stores write as SQL (`sql_query`): each column is typed in the
//! row, so one row reads the same statement's answer from either database.

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Binary, Integer, Nullable, Text};
use sluice_model::Log;
use sluice_store::StoreError;
use sluice_store::blockstore::BlockRef;
use sluice_store::flows::FlowColumns;
use sluice_store::rows::LogColumns;

use crate::{DbId, Id};

/// A block's key columns, as the walks over a workspace's blocks read them.
#[derive(QueryableByName)]
pub struct RefRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = BigInt)]
    max_ts: i64,
    #[diesel(sql_type = Id)]
    max_id: DbId,
}

impl From<RefRow> for BlockRef {
    fn from(row: RefRow) -> Self {
        BlockRef { id: row.id, max_ts: row.max_ts, max_id: row.max_id.into() }
    }
}

/// A block's id.
#[derive(QueryableByName)]
pub struct IdRow {
    /// `id`.
    #[diesel(sql_type = BigInt)]
    pub id: i64,
}

/// A block's head.
#[derive(QueryableByName)]
pub struct HeadRow {
    /// `id`.
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    /// `head`.
    #[diesel(sql_type = Binary)]
    pub head: Vec<u8>,
}

/// A band or granule of a block.
#[derive(QueryableByName)]
pub struct PartRow {
    #[diesel(sql_type = BigInt)]
    block: i64,
    #[diesel(sql_type = Integer)]
    part: i32,
    #[diesel(sql_type = Binary)]
    bytes: Vec<u8>,
}

impl PartRow {
    /// `(block, part, bytes)`, as `BlockSource` answers them.
    pub fn into_part(self) -> (i64, u32, Vec<u8>) {
        (self.block, u32::try_from(self.part).unwrap_or(u32::MAX), self.bytes)
    }
}

/// One summed rollup counter, as `level_counts` reads it.
#[derive(QueryableByName)]
pub struct CountRow {
    /// The hour (or day) the counts are of; 0 when the answer is not over time.
    #[diesel(sql_type = BigInt)]
    pub hour: i64,
    /// The source, or empty when the answer is not by source.
    #[diesel(sql_type = Text)]
    pub source: String,
    /// `level`.
    #[diesel(sql_type = Text)]
    pub level: String,
    /// The sum of the counters.
    #[diesel(sql_type = BigInt)]
    pub total: i64,
}

/// One row of `flows`.
#[derive(QueryableByName)]
pub struct FlowRow {
    /// `flow_id`, as stored.
    #[diesel(sql_type = Text)]
    pub flow_id: String,
    #[diesel(sql_type = Nullable<Text>)]
    name: Option<String>,
    #[diesel(sql_type = BigInt)]
    steps: i64,
    #[diesel(sql_type = BigInt)]
    debug: i64,
    #[diesel(sql_type = BigInt)]
    info: i64,
    #[diesel(sql_type = BigInt)]
    warn: i64,
    #[diesel(sql_type = BigInt)]
    error: i64,
    /// `first_ts`, NULL while the flow has no log.
    #[diesel(sql_type = Nullable<BigInt>)]
    pub first_ts: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    last_ts: Option<i64>,
    #[diesel(sql_type = BigInt)]
    active_ts: i64,
}

impl FlowRow {
    /// The row's columns, its text read back by `text` (the store's own decoding of what it
    /// keeps as text).
    pub fn columns(self, text: impl Fn(String) -> String) -> FlowColumns {
        let FlowRow { flow_id, name, steps, debug, info, warn, error, first_ts, last_ts, active_ts } = self;
        FlowColumns {
            flow_id: text(flow_id),
            name: name.map(text),
            steps,
            levels: [debug, info, warn, error],
            first_ts,
            last_ts,
            active_ts,
        }
    }
}

/// A source that a flow's logs came from.
#[derive(QueryableByName)]
pub struct SourceRow {
    /// `flow_id`, as stored.
    #[diesel(sql_type = Text)]
    pub flow_id: String,
    /// `source`, as stored.
    #[diesel(sql_type = Text)]
    pub source: String,
}

/// How many logs a flow's step has.
#[derive(QueryableByName)]
pub struct StepRow {
    /// `step_index`.
    #[diesel(sql_type = Integer)]
    pub step_index: i32,
    /// `logs`.
    #[diesel(sql_type = BigInt)]
    pub logs: i64,
}

/// The columns of `logs`, the table earlier builds kept logs in, as [`LegacyLogRow`] reads them.
pub const LEGACY_LOG_COLUMNS: &str = "id, ts, level, environment, source, dataset, message, version, user_id, \
     session_id, request_id, data, error_name, error_stack, tags, flow_id, step_index, country, ip_address";

/// A log as the rows of `logs` kept it, before blocks (read by the upgrade into blocks).
#[derive(QueryableByName)]
pub struct LegacyLogRow {
    /// `id`.
    #[diesel(sql_type = Id)]
    pub id: DbId,
    /// `ts`.
    #[diesel(sql_type = BigInt)]
    pub ts: i64,
    #[diesel(sql_type = Text)]
    level: String,
    #[diesel(sql_type = Text)]
    environment: String,
    #[diesel(sql_type = Text)]
    source: String,
    #[diesel(sql_type = Text)]
    dataset: String,
    #[diesel(sql_type = Text)]
    message: String,
    #[diesel(sql_type = Nullable<Text>)]
    version: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    user_id: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    session_id: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    request_id: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    data: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    error_name: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    error_stack: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    tags: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    flow_id: Option<String>,
    #[diesel(sql_type = Nullable<Integer>)]
    step_index: Option<i32>,
    #[diesel(sql_type = Nullable<Text>)]
    country: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    ip_address: Option<String>,
}

impl LegacyLogRow {
    /// The model's log, its free text read back by `text` (the store's own decoding of what it
    /// keeps as text; `data` and `tags` are JSON, which escapes what the decoding would change).
    pub fn into_log(self, text: impl Fn(String) -> String) -> Result<Log, StoreError> {
        Log::try_from(LogColumns {
            id: self.id.into(),
            ts: self.ts,
            level: self.level,
            environment: self.environment,
            source: text(self.source),
            dataset: text(self.dataset),
            message: text(self.message),
            version: self.version.map(&text),
            user_id: self.user_id.map(&text),
            session_id: self.session_id.map(&text),
            request_id: self.request_id.map(&text),
            data: self.data,
            error_name: self.error_name.map(&text),
            error_stack: self.error_stack.map(&text),
            tags: self.tags,
            flow_id: self.flow_id.map(&text),
            step_index: self.step_index,
            country: self.country.map(&text),
            ip_address: self.ip_address.map(&text),
        })
    }
}

/// A workspace's id.
#[derive(QueryableByName)]
pub struct WorkspaceRow {
    /// `id`.
    #[diesel(sql_type = Id)]
    pub id: DbId,
}

/// A sum or count, NULL for a sum over no rows.
#[derive(QueryableByName)]
pub struct Total {
    /// `total`.
    #[diesel(sql_type = Nullable<BigInt>)]
    pub total: Option<i64>,
}
