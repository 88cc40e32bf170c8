-- The previous index: runs and long grams in the full-text index. Its chunks are dropped; the
-- store indexes the logs again when it opens.
DROP TABLE log_block_bands;
DROP TABLE log_blocks;
DROP TABLE log_chunk_signatures;
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
