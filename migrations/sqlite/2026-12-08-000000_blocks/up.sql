-- Logs are kept in immutable blocks of compressed columns (`sluice_blocks`), laid out as
-- `sluice_store::blockstore` says: a block's head a row, its index a band of 1,984 bytes a row, its
-- granules a row each. The search index of chunks of row logs goes; `logs` stays until the
-- store has converted its rows into blocks (on the first open of this build), then stays empty.
DROP TABLE log_chunks_fts;
DROP TABLE log_chunks;
DROP TABLE log_chunk_keys;
DROP TABLE log_chunk_signatures;
DROP TABLE log_block_bands;
DROP TABLE log_blocks;

-- `id` is never reused (AUTOINCREMENT): reads keep decoded heads by it. `head` is last, so
-- reading the other columns never reads its overflow pages.
CREATE TABLE blocks (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    workspace_id BLOB NOT NULL,
    rows INTEGER NOT NULL,
    min_ts BIGINT NOT NULL,
    max_ts BIGINT NOT NULL,
    min_id BLOB NOT NULL,
    max_id BLOB NOT NULL,
    created_at BIGINT NOT NULL,
    head BLOB NOT NULL
);
-- Reads walk a workspace's blocks newest first; a get and a tail's replay find them by id;
-- the merger finds the small ones.
CREATE INDEX blocks_recent ON blocks (workspace_id, max_ts, id);
CREATE INDEX blocks_ids ON blocks (workspace_id, max_id, min_id);
CREATE INDEX blocks_small ON blocks (workspace_id, id) WHERE rows < 16384;

CREATE TABLE block_bands (
    workspace_id BLOB NOT NULL,
    block_id BIGINT NOT NULL,
    band INTEGER NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (workspace_id, block_id, band)
);

CREATE TABLE block_granules (
    workspace_id BLOB NOT NULL,
    block_id BIGINT NOT NULL,
    granule INTEGER NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (workspace_id, block_id, granule)
);
