-- Full-text search: a contentless FTS5 table of trigrams over the folded (lower-cased, see
-- sluice_query::fold) text of the four searchable fields, one row per log, rowid = logs.seq.
-- Written by the store in the insert transaction, so a log is searchable once its insert
-- commits. Contentless keeps only the index (the text lives in `logs`); contentless_delete
-- lets retention remove rows. case_sensitive 1: the text is folded already, by the same
-- function that folds the query, so the index and the exact re-check agree on every character.
CREATE VIRTUAL TABLE logs_fts USING fts5(
    message, error_name, error_stack, data,
    content = '', contentless_delete = 1,
    tokenize = 'trigram case_sensitive 1'
);

-- Counters behind stats and summary: logs per (workspace, hour, source, environment, dataset,
-- level); `hour` is the Unix ms the UTC hour starts at. Kept in the transaction of each insert
-- and each retention delete, so a count never disagrees with the rows.
CREATE TABLE log_rollups (
    workspace_id BLOB NOT NULL,
    hour BIGINT NOT NULL,
    source TEXT NOT NULL,
    environment TEXT NOT NULL,
    dataset TEXT NOT NULL,
    level TEXT NOT NULL,
    count BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, hour, source, environment, dataset, level)
) WITHOUT ROWID;

-- The same counters per UTC day (`day` = Unix ms at midnight): stats over whole days (by day,
-- by source, the summary) read one row per day and combination instead of 24, which keeps a
-- 30-day query within a few milliseconds for a workspace with many sources.
CREATE TABLE log_rollups_daily (
    workspace_id BLOB NOT NULL,
    day BIGINT NOT NULL,
    source TEXT NOT NULL,
    environment TEXT NOT NULL,
    dataset TEXT NOT NULL,
    level TEXT NOT NULL,
    count BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, day, source, environment, dataset, level)
) WITHOUT ROWID;

-- Logs written before this migration: index and count them. SQLite's lower() folds ASCII
-- only, so in these older rows a non-ASCII capital is found by its exact case alone.
INSERT INTO logs_fts (rowid, message, error_name, error_stack, data)
    SELECT seq, lower(message), lower(error_name), lower(error_stack), lower(data) FROM logs;
INSERT INTO log_rollups (workspace_id, hour, source, environment, dataset, level, count)
    SELECT workspace_id, ts - (((ts % 3600000) + 3600000) % 3600000), source, environment, dataset, level, count(*)
    FROM logs GROUP BY 1, 2, 3, 4, 5, 6;
INSERT INTO log_rollups_daily (workspace_id, day, source, environment, dataset, level, count)
    SELECT workspace_id, ts - (((ts % 86400000) + 86400000) % 86400000), source, environment, dataset, level, count(*)
    FROM logs GROUP BY 1, 2, 3, 4, 5, 6;
