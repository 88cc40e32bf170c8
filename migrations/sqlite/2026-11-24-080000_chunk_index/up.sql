-- The search index moves from one document per log to one per chunk: up to a few hundred
-- consecutive logs of one workspace, written together. A chunk's document holds each
-- distinct trigram of its folded text once, as a hex token (`sluice_query::trigram_codes`),
-- so the index costs per distinct trigram of a chunk instead of per character of every log.
-- The store fills it when it opens (the logs already stored) and in every insert after.
DROP TABLE logs_fts;

CREATE TABLE log_chunks (
    id INTEGER PRIMARY KEY NOT NULL, -- the seq of the chunk's first log
    last_seq BIGINT NOT NULL,
    workspace_id BLOB NOT NULL,
    min_ts BIGINT NOT NULL,
    max_ts BIGINT NOT NULL
);
CREATE INDEX log_chunks_workspace ON log_chunks (workspace_id, min_ts);

CREATE VIRTUAL TABLE log_chunks_fts USING fts5(
    message, error_name, error_stack, data,
    content = '', contentless_delete = 1, detail = column,
    tokenize = 'ascii'
);
INSERT INTO log_chunks_fts (log_chunks_fts, rank) VALUES ('automerge', 16);
INSERT INTO log_chunks_fts (log_chunks_fts, rank) VALUES ('crisismerge', 64);
