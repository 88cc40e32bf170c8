-- Logs are kept in immutable blocks of compressed columns (`sluice_blocks`), laid out as
-- `sluice_store::blockstore` says: a block's head a row, its index a band of 1,984 bytes a row, its
-- granules a row each, every key leading with `workspace_id`. The search index of chunks of row
-- logs goes; `logs` stays until the store has converted its rows into blocks (on the first start
-- of this build), then stays empty.
DROP TABLE log_chunk_signatures_intact;
DROP TABLE log_chunk_signatures;
DROP TABLE log_block_bands;
DROP TABLE log_blocks;
DROP TABLE log_chunks;
DROP SEQUENCE log_chunk_ids;
DROP INDEX logs_chunk;
DROP INDEX logs_unchunked;

-- Block numbers are never reused: reads keep decoded heads by them.
CREATE SEQUENCE block_ids AS BIGINT;

CREATE TABLE blocks (
    workspace_id UUID NOT NULL,
    id BIGINT NOT NULL DEFAULT nextval('block_ids'),
    rows INTEGER NOT NULL,
    min_ts BIGINT NOT NULL,
    max_ts BIGINT NOT NULL,
    min_id UUID NOT NULL,
    max_id UUID NOT NULL,
    created_at BIGINT NOT NULL,
    head BYTEA NOT NULL,
    PRIMARY KEY (workspace_id, id)
);
-- Reads walk a workspace's blocks newest first; a get and a tail's replay find them by id; the
-- merger finds the small ones.
CREATE INDEX blocks_recent ON blocks (workspace_id, max_ts, id) INCLUDE (min_ts, max_id);
CREATE INDEX blocks_ids ON blocks (workspace_id, max_id, min_id);
CREATE INDEX blocks_small ON blocks (workspace_id, id) WHERE rows < 16384;

CREATE TABLE block_bands (
    workspace_id UUID NOT NULL,
    block_id BIGINT NOT NULL,
    band INTEGER NOT NULL,
    bytes BYTEA NOT NULL,
    PRIMARY KEY (workspace_id, block_id, band)
);

CREATE TABLE block_granules (
    workspace_id UUID NOT NULL,
    block_id BIGINT NOT NULL,
    granule INTEGER NOT NULL,
    bytes BYTEA NOT NULL,
    PRIMARY KEY (workspace_id, block_id, granule)
);

-- The bytes are compressed already (zstd) or Bloom bits: never compressed again, and a row up to
-- a page long stays in the table (a band is read with its key, not through TOAST).
ALTER TABLE blocks ALTER COLUMN head SET STORAGE EXTERNAL;
ALTER TABLE block_bands ALTER COLUMN bytes SET STORAGE EXTERNAL;
ALTER TABLE block_granules ALTER COLUMN bytes SET STORAGE EXTERNAL;
ALTER TABLE blocks SET (toast_tuple_target = 8160);
ALTER TABLE block_bands SET (toast_tuple_target = 8160);
ALTER TABLE block_granules SET (toast_tuple_target = 8160);
