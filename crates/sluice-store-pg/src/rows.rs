//! Rows as PostgreSQL holds them (ids as UUIDs, text encoded: [`crate::text`]), and their
//! conversion to and from the model's types, through `sluice_store::rows` for what both
//! stores share.

use std::borrow::Cow;

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable};
use sluice_model::{ApiKeyRecord, JsonObject, KeyId, Limits, Log, LogId, Plan, Workspace, WorkspaceId};
use sluice_query::fold;
use sluice_store::page::SearchableRow;
use sluice_store::rows::{LogColumns, PlanColumns, parse_column, step_index_column, tags_column};
use sluice_store::{NewApiKey, Search, StoreError};
use uuid::Uuid;

use crate::schema::{api_keys, logs, workspaces};
use crate::text::{decode, decode_option, decoded, encode, encode_option, encode_owned};

/// The search text, with the fields' concatenation between `$before` and `$after`.
macro_rules! search_text_sql {
    ($before:literal, $after:literal) => {
        concat!(
            "COALESCE(logs.search_text, ",
            $before,
            "concat_ws(E'\\n', logs.message, logs.error_name, logs.error_stack, logs.data)",
            $after,
            ")"
        )
    };
}

/// A row's search text: stored, or else the fields as stored, one per line, folded by the
/// statement: `lower(... COLLATE "C")` folds ASCII letters only whatever the database's
/// locale, which is [`sluice_query::fold`] of ASCII text ([`NewLogRow::stored_search_text`]).
pub(crate) const SEARCH_TEXT_SQL: &str = search_text_sql!("lower(", " COLLATE \"C\")");

/// A row's search text as [`SEARCH_TEXT_SQL`] has it but not folded where it is not stored:
/// the fields as stored, one per line. Its ASCII characters other than letters are the same
/// and in the same places as in the folded text (`lower(... COLLATE "C")` changes only ASCII
/// letters), so a run of them in a needle is in this text wherever the needle is in that one.
pub(crate) const UNFOLDED_TEXT_SQL: &str = search_text_sql!("", "");

/// The folded text of a log's searchable fields, one per line, for the index and the search's
/// candidate filter, and whether every field is ASCII (then [`SEARCH_TEXT_SQL`] folds the same
/// from the stored fields). Only a candidate filter: the exact check reads the fields
/// themselves, so text spanning two lines can only add candidates, never lose one.
fn search_text(log: &Log) -> (String, bool) {
    let entry = &log.entry;
    let mut text = fold(&entry.message);
    let mut ascii = entry.message.is_ascii();
    for field in
        [entry.error_name.as_deref(), entry.error_stack.as_deref(), entry.data.as_ref().map(JsonObject::as_str)]
            .into_iter()
            .flatten()
    {
        text.push('\n');
        text.push_str(&fold(field));
        ascii &= field.is_ascii();
    }
    (text, ascii)
}

/// A log as inserted ([`insert_rows`]): borrowed from the model where the types allow.
pub(crate) struct NewLogRow<'a> {
    workspace_id: Uuid,
    ts: i64,
    id: Uuid,
    level: &'a str,
    environment: &'a str,
    source: Cow<'a, str>,
    dataset: Cow<'a, str>,
    message: Cow<'a, str>,
    version: Option<Cow<'a, str>>,
    user_id: Option<Cow<'a, str>>,
    session_id: Option<Cow<'a, str>>,
    request_id: Option<Cow<'a, str>>,
    // JSON text: a raw U+0000 cannot occur in it, so it is stored as it is.
    data: Option<&'a str>,
    error_name: Option<Cow<'a, str>>,
    error_stack: Option<Cow<'a, str>>,
    tags: Option<String>,
    flow_id: Option<Cow<'a, str>>,
    step_index: Option<i32>,
    country: Option<Cow<'a, str>>,
    ip_address: Option<Cow<'a, str>>,
    search_text: String,
    /// Whether every searchable field is ASCII: then the search text is what the statements
    /// fold themselves, and is not stored.
    ascii: bool,
    /// The search index's chunk ([`crate::chunks`]), set once the chunks are numbered.
    pub(crate) chunk_id: i64,
}

impl<'a> NewLogRow<'a> {
    /// The row of `log`, its text encoded as PostgreSQL can hold it ([`crate::text`]).
    pub(crate) fn new(workspace: &WorkspaceId, log: &'a Log) -> Self {
        let entry = &log.entry;
        let (search_text, ascii) = search_text(log);
        Self {
            workspace_id: *workspace.as_uuid(),
            ts: entry.timestamp,
            id: *log.id.as_uuid(),
            level: entry.level.as_str(),
            environment: entry.environment.as_str(),
            source: encode(&entry.source),
            dataset: encode(&entry.dataset),
            message: encode(&entry.message),
            version: encode_option(entry.version.as_deref()),
            user_id: encode_option(entry.user_id.as_deref()),
            session_id: encode_option(entry.session_id.as_deref()),
            request_id: encode_option(entry.request_id.as_deref()),
            data: entry.data.as_ref().map(JsonObject::as_str),
            error_name: encode_option(entry.error_name.as_deref()),
            error_stack: encode_option(entry.error_stack.as_deref()),
            tags: tags_column(entry),
            flow_id: encode_option(entry.flow_id.as_deref()),
            step_index: step_index_column(entry),
            country: encode_option(log.country.as_deref()),
            ip_address: encode_option(log.ip_address.as_deref()),
            search_text: encode_owned(search_text),
            ascii,
            chunk_id: 0,
        }
    }

    /// What the search index takes of the row: its workspace, time, id, search text and facets.
    pub(crate) fn indexed(&self) -> (Uuid, i64, Uuid, &str, crate::chunks::Facets<'_>) {
        let facets = crate::chunks::Facets {
            level: self.level,
            environment: self.environment,
            source: &self.source,
            dataset: &self.dataset,
            user_id: self.user_id.as_deref(),
        };
        (self.workspace_id, self.ts, self.id, &self.search_text, facets)
    }
}

impl NewLogRow<'_> {
    /// About the bytes the row takes in an insert statement: its text, and 8 a column for the
    /// rest (lengths, numbers, ids).
    fn size(&self) -> usize {
        let optional = [
            &self.version,
            &self.user_id,
            &self.session_id,
            &self.request_id,
            &self.error_name,
            &self.error_stack,
            &self.flow_id,
            &self.country,
            &self.ip_address,
        ]
        .into_iter()
        .flatten()
        .map(|text| text.len())
        .sum::<usize>();
        let text = self.level.len()
            + self.environment.len()
            + self.source.len()
            + self.dataset.len()
            + self.message.len()
            + self.data.map_or(0, str::len)
            + self.tags.as_ref().map_or(0, String::len)
            + self.stored_search_text().map_or(0, str::len);
        text + optional + 8 * 22 + 32
    }

    /// The search text as stored: none when the statements fold the same from the fields
    /// ([`SEARCH_TEXT_SQL`]): every field ASCII, whose folding is ASCII's lowercase.
    fn stored_search_text(&self) -> Option<&str> {
        (!self.ascii).then_some(self.search_text.as_str())
    }
}

/// Inserts `rows` with one array per column, unnested by the server: one short statement of
/// 22 parameters whatever the number of rows, where a multi-row `VALUES` list is a statement
/// of 22 parameters a row for the server to parse and plan.
///
/// A group of thousands of rows goes in several such statements of at most [`INSERT_BYTES`]
/// each: a pooled connection keeps its send buffer at the size of the largest statement it
/// ever sent (measured with the seal's bands: `crate::signatures`), so a group of large
/// entries (5,000 of 10 KB: 50 MB) in one statement would leave as much behind on each
/// connection that wrote one.
pub(crate) async fn insert_rows(
    connection: &mut diesel_async::AsyncPgConnection,
    rows: &[NewLogRow<'_>],
) -> QueryResult<usize> {
    let mut inserted = 0;
    let mut rest = rows;
    while !rest.is_empty() {
        let mut bytes = 0;
        let run = rest
            .iter()
            .take_while(|row| {
                bytes += row.size();
                bytes <= INSERT_BYTES
            })
            .count()
            .max(1);
        let (statement, after) = rest.split_at(run);
        inserted += insert_statement(connection, statement).await?;
        rest = after;
    }
    Ok(inserted)
}

/// The most bytes of row data one insert statement carries (one row larger than this goes
/// alone).
pub(crate) const INSERT_BYTES: usize = 1 << 20;

async fn insert_statement(
    connection: &mut diesel_async::AsyncPgConnection,
    rows: &[NewLogRow<'_>],
) -> QueryResult<usize> {
    use diesel::sql_types::{Array, BigInt, Integer, Nullable, Text, Uuid as SqlUuid};

    const INSERT: &str = "INSERT INTO logs (workspace_id, ts, id, level, environment, source, dataset, message, \
        version, user_id, session_id, request_id, data, error_name, error_stack, tags, flow_id, step_index, \
        country, ip_address, search_text, chunk_id) \
        SELECT * FROM unnest($1::uuid[], $2::int8[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], \
        $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], \
        $16::text[], $17::text[], $18::int4[], $19::text[], $20::text[], $21::text[], $22::int8[])";
    fn column<'r, T>(rows: &'r [NewLogRow<'_>], field: impl Fn(&'r NewLogRow<'_>) -> T) -> Vec<T> {
        rows.iter().map(field).collect()
    }
    let insert = diesel::sql_query(INSERT)
        .bind::<Array<SqlUuid>, _>(column(rows, |row| row.workspace_id))
        .bind::<Array<BigInt>, _>(column(rows, |row| row.ts))
        .bind::<Array<SqlUuid>, _>(column(rows, |row| row.id))
        .bind::<Array<Text>, _>(column(rows, |row| row.level))
        .bind::<Array<Text>, _>(column(rows, |row| row.environment))
        .bind::<Array<Text>, _>(column(rows, |row| &*row.source))
        .bind::<Array<Text>, _>(column(rows, |row| &*row.dataset))
        .bind::<Array<Text>, _>(column(rows, |row| &*row.message))
        .bind::<Array<Nullable<Text>>, _>(column(rows, |row| row.version.as_deref()))
        .bind::<Array<Nullable<Text>>, _>(column(rows, |row| row.user_id.as_deref()))
        .bind::<Array<Nullable<Text>>, _>(column(rows, |row| row.session_id.as_deref()))
        .bind::<Array<Nullable<Text>>, _>(column(rows, |row| row.request_id.as_deref()))
        .bind::<Array<Nullable<Text>>, _>(column(rows, |row| row.data))
        .bind::<Array<Nullable<Text>>, _>(column(rows, |row| row.error_name.as_deref()))
        .bind::<Array<Nullable<Text>>, _>(column(rows, |row| row.error_stack.as_deref()))
        .bind::<Array<Nullable<Text>>, _>(column(rows, |row| row.tags.as_deref()))
        .bind::<Array<Nullable<Text>>, _>(column(rows, |row| row.flow_id.as_deref()))
        .bind::<Array<Nullable<Integer>>, _>(column(rows, |row| row.step_index))
        .bind::<Array<Nullable<Text>>, _>(column(rows, |row| row.country.as_deref()))
        .bind::<Array<Nullable<Text>>, _>(column(rows, |row| row.ip_address.as_deref()))
        .bind::<Array<Nullable<Text>>, _>(column(rows, |row| row.stored_search_text()))
        .bind::<Array<BigInt>, _>(column(rows, |row| row.chunk_id));
    diesel_async::RunQueryDsl::execute(insert, connection).await
}

/// A log as read back.
#[derive(Queryable, QueryableByName, Selectable)]
#[diesel(table_name = logs, check_for_backend(diesel::pg::Pg))]
pub(crate) struct LogRow {
    pub(crate) id: Uuid,
    pub(crate) ts: i64,
    level: String,
    environment: String,
    source: String,
    dataset: String,
    message: String,
    version: Option<String>,
    user_id: Option<String>,
    session_id: Option<String>,
    request_id: Option<String>,
    data: Option<String>,
    error_name: Option<String>,
    error_stack: Option<String>,
    tags: Option<String>,
    flow_id: Option<String>,
    step_index: Option<i32>,
    country: Option<String>,
    ip_address: Option<String>,
}

impl sluice_store::page::KeyedRow for LogRow {
    type Id = Uuid;
    fn ts(&self) -> i64 {
        self.ts
    }
    fn id(&self) -> &Uuid {
        &self.id
    }
}

impl SearchableRow for LogRow {
    /// The exact check of a search on this row (on the text as sent).
    fn matches(&self, search: &Search) -> bool {
        let error_name = self.error_name.as_deref().map(decoded);
        let error_stack = self.error_stack.as_deref().map(decoded);
        search.matches(&decoded(&self.message), error_name.as_deref(), error_stack.as_deref(), self.data.as_deref())
    }
}

impl TryFrom<LogRow> for Log {
    type Error = StoreError;

    /// The row's columns, text decoded as it was sent (`data` is JSON text, stored as it is),
    /// read as the model's log.
    fn try_from(row: LogRow) -> Result<Self, StoreError> {
        Log::try_from(LogColumns {
            id: LogId::from_uuid(row.id),
            ts: row.ts,
            level: row.level,
            environment: row.environment,
            source: decode(row.source),
            dataset: decode(row.dataset),
            message: decode(row.message),
            version: decode_option(row.version),
            user_id: decode_option(row.user_id),
            session_id: decode_option(row.session_id),
            request_id: decode_option(row.request_id),
            data: row.data,
            error_name: decode_option(row.error_name),
            error_stack: decode_option(row.error_stack),
            tags: row.tags,
            flow_id: decode_option(row.flow_id),
            step_index: row.step_index,
            country: decode_option(row.country),
            ip_address: decode_option(row.ip_address),
        })
    }
}

/// A workspace row, both ways.
#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = workspaces, check_for_backend(diesel::pg::Pg))]
pub(crate) struct WorkspaceRow {
    id: Uuid,
    name: String,
    plan: String,
    created_at: i64,
    rate_limit: Option<i32>,
    monthly_quota: Option<i64>,
    retention_days: i32,
}

impl From<&Workspace> for WorkspaceRow {
    fn from(workspace: &Workspace) -> Self {
        let columns = PlanColumns::new(workspace.plan, &workspace.limits);
        Self {
            id: *workspace.id.as_uuid(),
            name: workspace.name.clone(),
            plan: columns.plan.to_owned(),
            created_at: workspace.created_at,
            rate_limit: columns.rate_limit,
            monthly_quota: columns.monthly_quota,
            retention_days: columns.retention_days,
        }
    }
}

/// A workspace's plan and figures, as `set_plan` writes them (`None` writes NULL: unlimited).
#[derive(AsChangeset)]
#[diesel(table_name = workspaces, treat_none_as_null = true)]
pub(crate) struct PlanChange {
    plan: &'static str,
    rate_limit: Option<i32>,
    monthly_quota: Option<i64>,
    retention_days: i32,
}

impl PlanChange {
    /// The change to `plan` with `limits` in force ([`PlanColumns::new`]).
    pub(crate) fn new(plan: Plan, limits: &Limits) -> Self {
        let PlanColumns { plan, rate_limit, monthly_quota, retention_days } = PlanColumns::new(plan, limits);
        PlanChange { plan, rate_limit, monthly_quota, retention_days }
    }
}

impl TryFrom<WorkspaceRow> for Workspace {
    type Error = StoreError;

    fn try_from(row: WorkspaceRow) -> Result<Self, StoreError> {
        Ok(Workspace {
            id: WorkspaceId::from_uuid(row.id),
            name: row.name,
            plan: parse_column(&row.plan, "workspace plan")?,
            limits: PlanColumns::limits(row.rate_limit, row.monthly_quota, row.retention_days),
            created_at: row.created_at,
        })
    }
}

/// A key row as read back (the hash stays in the database).
#[derive(Queryable, Selectable)]
#[diesel(table_name = api_keys, check_for_backend(diesel::pg::Pg))]
pub(crate) struct KeyRow {
    workspace_id: Uuid,
    id: Uuid,
    name: Option<String>,
    env: String,
    scopes: String,
    created_at: i64,
    expires_at: Option<i64>,
    revoked_at: Option<i64>,
}

impl TryFrom<KeyRow> for ApiKeyRecord {
    type Error = StoreError;

    fn try_from(row: KeyRow) -> Result<Self, StoreError> {
        Ok(ApiKeyRecord {
            id: KeyId::from_uuid(row.id),
            workspace_id: WorkspaceId::from_uuid(row.workspace_id),
            name: row.name,
            env: parse_column(&row.env, "key env")?,
            scopes: parse_column(&row.scopes, "key scopes")?,
            created_at: row.created_at,
            expires_at: row.expires_at,
            revoked_at: row.revoked_at,
        })
    }
}

/// A key row as inserted.
#[derive(Insertable)]
#[diesel(table_name = api_keys, treat_none_as_default_value = false)]
pub(crate) struct NewKeyRow {
    workspace_id: Uuid,
    id: Uuid,
    hash: Vec<u8>,
    name: Option<String>,
    env: String,
    scopes: String,
    created_at: i64,
    expires_at: Option<i64>,
    revoked_at: Option<i64>,
}

impl From<&NewApiKey> for NewKeyRow {
    fn from(key: &NewApiKey) -> Self {
        let record = &key.record;
        Self {
            workspace_id: *record.workspace_id.as_uuid(),
            id: *record.id.as_uuid(),
            hash: key.hash.to_vec(),
            name: record.name.clone(),
            env: record.env.as_str().to_owned(),
            scopes: record.scopes.to_string(),
            created_at: record.created_at,
            expires_at: record.expires_at,
            revoked_at: record.revoked_at,
        }
    }
}

/// A sum, NULL over no rows, as a raw query reads it.
#[derive(QueryableByName)]
pub(crate) struct Total {
    #[diesel(sql_type = Nullable<BigInt>)]
    pub(crate) total: Option<i64>,
}
