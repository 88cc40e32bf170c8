-- The search index moves from a trigram GIN entry per character of every log to one row per
-- chunk: a run of up to a few hundred logs of one workspace written in one transaction, whose
-- `trigrams` hold each distinct trigram of its logs' search text once
-- (`sluice_query::trigram_codes`: three code points side by side). Logs repeat their words,
-- so a chunk has far fewer distinct trigrams than its logs have characters. A search finds
-- candidate chunks by their trigrams and reads their logs by `chunk_id`.
-- Logs stored before this migration have no chunk; the store indexes them when it connects.
DROP INDEX logs_search;

ALTER TABLE logs ADD COLUMN chunk_id BIGINT;
CREATE INDEX logs_chunk ON logs (workspace_id, chunk_id);
CREATE INDEX logs_unchunked ON logs (workspace_id, ts, id) WHERE chunk_id IS NULL;

CREATE SEQUENCE log_chunk_ids AS BIGINT;

CREATE TABLE log_chunks (
    id BIGINT PRIMARY KEY,
    workspace_id UUID NOT NULL,
    min_ts BIGINT NOT NULL,
    max_ts BIGINT NOT NULL,
    logs INTEGER NOT NULL,
    trigrams BIGINT[] NOT NULL
);
CREATE INDEX log_chunks_workspace ON log_chunks (workspace_id, max_ts);
CREATE INDEX log_chunks_trigrams ON log_chunks USING gin (trigrams);
