-- Filters by level, environment, source, dataset and user move from a B-tree entry per log in
-- each of five indexes to the chunks of the search index: each chunk gets a small Bloom filter
-- of the values its logs hold in those fields (`sluice_store_pg::chunks::Facets`), and the
-- chunk index carries the user id, so a user's logs in a chunk are found without reading the
-- chunk's other logs. A filtered list reads the chunks whose facets may hold the value, newest
-- first, and their logs. Under sustained ingest the five indexes were most of the database's
-- work per log: dropping them took the 40k logs/s offered load from a p99 of seconds to tens
-- of milliseconds (docs/PERFORMANCE.md, issue 7).
DROP INDEX logs_level;
DROP INDEX logs_source;
DROP INDEX logs_environment;
DROP INDEX logs_dataset;
DROP INDEX logs_user;

DROP INDEX logs_chunk;
CREATE INDEX logs_chunk ON logs (workspace_id, chunk_id, user_id);

-- Chunks written before this migration get a filter of every bit set: a candidate for any
-- value, so no filter misses their logs. New chunks always write their own.
ALTER TABLE log_chunks ADD COLUMN facets BYTEA NOT NULL DEFAULT decode(repeat('ff', 512), 'hex');
ALTER TABLE log_chunks ALTER COLUMN facets DROP DEFAULT;
ALTER TABLE log_chunks ALTER COLUMN facets SET STORAGE PLAIN;

-- Chunks are read newest first, a step at a time: keyset paging on (max_ts, id).
DROP INDEX log_chunks_workspace;
CREATE INDEX log_chunks_workspace ON log_chunks (workspace_id, max_ts, id);
