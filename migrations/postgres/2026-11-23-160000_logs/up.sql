-- Logs, their search index, the counters behind stats, and monthly usage.
--
-- Laid out for a database that will outgrow one machine: every primary key and index of a
-- workspace's rows leads with workspace_id (so the tables can be distributed by workspace,
-- Citus-style), and logs are range-partitioned by timestamp, so retention drops whole
-- partitions instead of deleting rows one by one.

-- Trigram search (pg_trgm) and uuid keys inside a GIN index (btree_gin). Both ship with
-- PostgreSQL (contrib) and are trusted: a database owner may create them.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- `ts` is the log's timestamp (Unix ms). Partitions are created by the server, one per UTC
-- day around the present and coarser ranges for timestamps far from it (sluice-store-pg's
-- `partitions` module); there is no default partition, so the newest-first reads can walk
-- the partitions in order and stop early.
-- `search_text` is the folded (sluice_query::fold) text of the four searchable fields, one
-- per line: the trigram index reads it, the exact check then reads the fields themselves.
CREATE TABLE logs (
    workspace_id UUID NOT NULL,
    ts BIGINT NOT NULL,
    id UUID NOT NULL,
    level TEXT NOT NULL,
    environment TEXT NOT NULL,
    source TEXT NOT NULL,
    dataset TEXT NOT NULL,
    message TEXT NOT NULL,
    version TEXT,
    user_id TEXT,
    session_id TEXT,
    request_id TEXT,
    data TEXT,
    error_name TEXT,
    error_stack TEXT,
    tags TEXT,
    flow_id TEXT,
    step_index INTEGER,
    country TEXT,
    ip_address TEXT,
    search_text TEXT NOT NULL,
    PRIMARY KEY (workspace_id, ts, id)
) PARTITION BY RANGE (ts);

-- Every read is "one workspace, newest first": each index ends with (ts, id).
CREATE INDEX logs_id ON logs (workspace_id, id);
CREATE INDEX logs_level ON logs (workspace_id, level, ts, id);
CREATE INDEX logs_source ON logs (workspace_id, source, ts, id);
CREATE INDEX logs_environment ON logs (workspace_id, environment, ts, id);
CREATE INDEX logs_dataset ON logs (workspace_id, dataset, ts, id);
CREATE INDEX logs_user ON logs (workspace_id, user_id, ts, id) WHERE user_id IS NOT NULL;
CREATE INDEX logs_session ON logs (workspace_id, session_id, ts, id) WHERE session_id IS NOT NULL;
CREATE INDEX logs_flow ON logs (workspace_id, flow_id, ts, id) WHERE flow_id IS NOT NULL;
CREATE INDEX logs_search ON logs USING gin (workspace_id, search_text gin_trgm_ops);

-- Counters behind stats and summary, as in the SQLite store: per UTC hour; per UTC day; per
-- UTC day without environment and dataset. `hour`/`day` are the Unix ms they start at. Kept
-- in the transaction of every insert and delete (and cleared with a dropped partition).
CREATE TABLE log_rollups (
    workspace_id UUID NOT NULL,
    hour BIGINT NOT NULL,
    source TEXT NOT NULL,
    environment TEXT NOT NULL,
    dataset TEXT NOT NULL,
    level TEXT NOT NULL,
    count BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, hour, source, environment, dataset, level)
);

CREATE TABLE log_rollups_daily (
    workspace_id UUID NOT NULL,
    day BIGINT NOT NULL,
    source TEXT NOT NULL,
    environment TEXT NOT NULL,
    dataset TEXT NOT NULL,
    level TEXT NOT NULL,
    count BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, day, source, environment, dataset, level)
);

CREATE TABLE log_rollups_daily_sources (
    workspace_id UUID NOT NULL,
    day BIGINT NOT NULL,
    source TEXT NOT NULL,
    level TEXT NOT NULL,
    count BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, day, source, level)
);

-- Logs accepted per workspace and UTC month (`month` = Unix ms the month starts at), counted
-- in the insert transaction: what monthly quotas read. Never decremented by retention.
CREATE TABLE usage_monthly (
    workspace_id UUID NOT NULL,
    month BIGINT NOT NULL,
    logs BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, month)
);
