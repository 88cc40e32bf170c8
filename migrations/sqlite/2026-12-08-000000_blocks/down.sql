DROP TABLE block_granules;
DROP TABLE block_bands;
DROP TABLE blocks;

CREATE TABLE log_chunks (
    id INTEGER PRIMARY KEY NOT NULL, -- the seq of the chunk's first log
    last_seq BIGINT NOT NULL,
    workspace_id BLOB NOT NULL,
    min_ts BIGINT NOT NULL,
    max_ts BIGINT NOT NULL
);
CREATE INDEX log_chunks_workspace ON log_chunks (workspace_id, min_ts);
CREATE INDEX log_chunks_recent ON log_chunks (workspace_id, max_ts, id);

CREATE VIRTUAL TABLE log_chunks_fts USING fts5(
    keys,
    content = '', contentless_delete = 1, detail = none,
    tokenize = 'ascii'
);
INSERT INTO log_chunks_fts (log_chunks_fts, rank) VALUES ('automerge', 4);
INSERT INTO log_chunks_fts (log_chunks_fts, rank) VALUES ('crisismerge', 16);
INSERT INTO log_chunks_fts (log_chunks_fts, rank) VALUES ('hashsize', 33554432);
INSERT INTO log_chunks_fts (log_chunks_fts, rank) VALUES ('pgsz', 4050);

CREATE TABLE log_chunk_signatures (
    chunk_id INTEGER PRIMARY KEY NOT NULL,
    workspace_id BLOB NOT NULL,
    digest BIGINT NOT NULL,
    signature BLOB NOT NULL
);
CREATE INDEX log_chunk_signatures_workspace ON log_chunk_signatures (workspace_id, chunk_id);

CREATE TABLE log_blocks (
    id INTEGER PRIMARY KEY NOT NULL,
    workspace_id BLOB NOT NULL,
    bits INTEGER NOT NULL,
    chunks BLOB NOT NULL,
    claimed_at BIGINT
);
CREATE INDEX log_blocks_workspace ON log_blocks (workspace_id, id);

CREATE TABLE log_block_bands (
    workspace_id BLOB NOT NULL,
    block_id BIGINT NOT NULL,
    band INTEGER NOT NULL,
    slices BLOB NOT NULL,
    PRIMARY KEY (workspace_id, block_id, band)
) WITHOUT ROWID;

CREATE TABLE log_chunk_keys (
    chunk_id INTEGER PRIMARY KEY NOT NULL,
    log_keys BLOB NOT NULL
);
