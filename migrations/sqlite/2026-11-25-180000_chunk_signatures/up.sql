-- Runs holding a digit, their starts and their long grams (`sluice_store::grams::signature_keys`)
-- leave the full-text index for Bloom-filter signatures (`sluice_store::signature`): those keys
-- are mostly found in one chunk only, and a term of its own cost FTS5 the most of anything it
-- wrote (the index's rounds held ingest to about 60 % of the trigram index's pace). The
-- full-text index keeps the trigrams of words.
-- Chunks written before hold the moved keys: every chunk is dropped here and the store indexes
-- the logs again when it opens (the unindexed tail, which searches read whole meanwhile).
DROP TABLE log_chunks_fts;
DELETE FROM log_chunks;
CREATE VIRTUAL TABLE log_chunks_fts USING fts5(
    keys,
    content = '', contentless_delete = 1, detail = none,
    tokenize = 'ascii'
);
INSERT INTO log_chunks_fts (log_chunks_fts, rank) VALUES ('automerge', 16);
INSERT INTO log_chunks_fts (log_chunks_fts, rank) VALUES ('crisismerge', 64);
INSERT INTO log_chunks_fts (log_chunks_fts, rank) VALUES ('hashsize', 33554432);
INSERT INTO log_chunks_fts (log_chunks_fts, rank) VALUES ('pgsz', 4050);

-- The signature of each chunk not yet in a block, as stored (folded), with a digest of it that
-- a search reads (before the signature, so without its overflow pages) to tell whether the
-- signature it keeps in memory is this one.
CREATE TABLE log_chunk_signatures (
    chunk_id INTEGER PRIMARY KEY NOT NULL,
    workspace_id BLOB NOT NULL,
    digest BIGINT NOT NULL,
    signature BLOB NOT NULL
);
CREATE INDEX log_chunk_signatures_workspace ON log_chunk_signatures (workspace_id, chunk_id);

-- Blocks of a workspace's signatures, bit-sliced: `id` is its first chunk's, `chunks` its
-- chunk ids by slot (8 bytes each, little-endian), `bits` its slices' positions. A block is
-- claimed (`claimed_at`, Unix ms) while its bands are written, a few transactions long, and
-- searched once that is cleared, with its signatures' removal.
CREATE TABLE log_blocks (
    id INTEGER PRIMARY KEY NOT NULL,
    workspace_id BLOB NOT NULL,
    bits INTEGER NOT NULL,
    chunks BLOB NOT NULL,
    claimed_at BIGINT
);
CREATE INDEX log_blocks_workspace ON log_blocks (workspace_id, id);

-- A block's slices, a band of positions a row, keyed block first so that sealing a block
-- appends its rows (a search looks each band it needs up in each block).
CREATE TABLE log_block_bands (
    workspace_id BLOB NOT NULL,
    block_id BIGINT NOT NULL,
    band INTEGER NOT NULL,
    slices BLOB NOT NULL,
    PRIMARY KEY (workspace_id, block_id, band)
) WITHOUT ROWID;
