DROP TABLE log_chunks;
DROP SEQUENCE log_chunk_ids;
DROP INDEX logs_unchunked;
DROP INDEX logs_chunk;
ALTER TABLE logs DROP COLUMN chunk_id;
CREATE INDEX logs_search ON logs USING gin (workspace_id, search_text gin_trgm_ops);
