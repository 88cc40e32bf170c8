DROP INDEX log_chunks_workspace;
CREATE INDEX log_chunks_workspace ON log_chunks (workspace_id, max_ts);
ALTER TABLE log_chunks DROP COLUMN facets;

DROP INDEX logs_chunk;
CREATE INDEX logs_chunk ON logs (workspace_id, chunk_id);

CREATE INDEX logs_user ON logs (workspace_id, user_id, ts, id) WHERE user_id IS NOT NULL;
CREATE INDEX logs_dataset ON logs (workspace_id, dataset, ts, id);
CREATE INDEX logs_environment ON logs (workspace_id, environment, ts, id);
CREATE INDEX logs_source ON logs (workspace_id, source, ts, id);
CREATE INDEX logs_level ON logs (workspace_id, level, ts, id);
