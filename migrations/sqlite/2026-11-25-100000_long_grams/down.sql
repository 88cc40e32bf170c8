-- The previous index: trigrams per field. Its chunks are dropped; the store indexes the logs
-- again when it opens.
DROP INDEX log_chunks_recent;
DROP TABLE log_chunks_fts;
DELETE FROM log_chunks;
CREATE VIRTUAL TABLE log_chunks_fts USING fts5(
    message, error_name, error_stack, data,
    content = '', contentless_delete = 1, detail = column,
    tokenize = 'ascii'
);
INSERT INTO log_chunks_fts (log_chunks_fts, rank) VALUES ('automerge', 16);
INSERT INTO log_chunks_fts (log_chunks_fts, rank) VALUES ('crisismerge', 64);
