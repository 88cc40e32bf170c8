-- The search index moves from a pg_trgm GIN entry per trigram of every log to one row per
-- chunk: a run of up to a few hundred logs of one workspace written in one transaction, with
-- a Bloom filter of the distinct trigrams of their search text (`sluice_store_pg::chunks`).
-- Maintaining a GIN index, per log or per chunk, was most of the database's work per log;
-- a chunk's filter is one fixed-size value written with it. A search tests the filters of the
-- workspace's chunks (`get_bit`) and reads the logs of the chunks that may hold its needles by
-- `chunk_id`, checking each exactly.
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
    bloom BYTEA NOT NULL
);
-- Kept in the row, uncompressed: a search reads every filter of a workspace in place, where a
-- TOASTed value would be fetched and copied for every bit tested.
ALTER TABLE log_chunks ALTER COLUMN bloom SET STORAGE PLAIN;
CREATE INDEX log_chunks_workspace ON log_chunks (workspace_id, max_ts);
