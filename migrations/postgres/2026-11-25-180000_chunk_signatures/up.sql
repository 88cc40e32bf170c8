-- A chunk's trigram Bloom filter, tested in place for every chunk of the workspace, gives way
-- to signatures (`sluice_store::signature`): a Bloom filter of the chunk's run trigrams and of
-- the runs holding a digit, their starts and long grams (what makes an identifier rare),
-- gathered per workspace into blocks of 256 chunks stored bit-sliced, so a search reads a
-- few short rows per block instead of every chunk's filter.
-- Chunks written before are signed by the store when it connects (`signed`).
-- `digest` tells a search whether the signature it keeps in memory is this one, without
-- reading (detoasting) the signature.
CREATE TABLE log_chunk_signatures (
    workspace_id UUID NOT NULL,
    chunk_id BIGINT NOT NULL,
    digest BIGINT NOT NULL,
    signature BYTEA NOT NULL,
    PRIMARY KEY (workspace_id, chunk_id)
);

CREATE TABLE log_blocks (
    workspace_id UUID NOT NULL,
    id BIGINT NOT NULL,
    bits INTEGER NOT NULL,
    chunks BIGINT[] NOT NULL,
    PRIMARY KEY (workspace_id, id)
);

-- Keyed block first, so that sealing a block appends its rows.
CREATE TABLE log_block_bands (
    workspace_id UUID NOT NULL,
    block_id BIGINT NOT NULL,
    band INTEGER NOT NULL,
    slices BYTEA NOT NULL,
    PRIMARY KEY (workspace_id, block_id, band)
);
-- Kept in the row, uncompressed (random bits do not compress): a search reads a slice of
-- each in place.
ALTER TABLE log_block_bands ALTER COLUMN slices SET STORAGE PLAIN;

ALTER TABLE log_chunks ADD COLUMN signed BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX log_chunks_unsigned ON log_chunks (workspace_id, id) WHERE NOT signed;
