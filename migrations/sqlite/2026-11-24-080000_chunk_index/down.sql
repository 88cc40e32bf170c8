DROP TABLE log_chunks_fts;
DROP TABLE log_chunks;
CREATE VIRTUAL TABLE logs_fts USING fts5(
    message, error_name, error_stack, data,
    content = '', contentless_delete = 1,
    tokenize = 'trigram case_sensitive 1'
);
INSERT INTO logs_fts (logs_fts, rank) VALUES ('hashsize', 16777216);
INSERT INTO logs_fts (logs_fts, rank) VALUES ('automerge', 16);
INSERT INTO logs_fts (logs_fts, rank) VALUES ('crisismerge', 64);
INSERT INTO logs_fts (rowid, message, error_name, error_stack, data)
    SELECT seq, lower(message), lower(error_name), lower(error_stack), lower(data) FROM logs;
