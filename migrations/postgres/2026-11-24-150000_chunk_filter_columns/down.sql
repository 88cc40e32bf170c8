DROP INDEX log_chunks_workspace;
CREATE INDEX log_chunks_workspace ON log_chunks (workspace_id, max_ts, id);
DROP INDEX logs_chunk;
CREATE INDEX logs_chunk ON logs (workspace_id, chunk_id, user_id);
