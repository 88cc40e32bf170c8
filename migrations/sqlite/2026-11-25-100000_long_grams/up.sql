-- The search index looks a needle up by what makes it rare (`sluice_store::grams`): besides its
-- trigrams, a chunk's document holds its runs (letters and digits between separators) whole
-- and the winnowed six-grams of its long runs, so a rare identifier, whose trigrams every chunk
-- holds, is found by keys few chunks hold. The document becomes one column of a `detail=none`
-- table: a key costs a chunk about two bytes instead of four or five (no column lists); a
-- search's fields are checked exactly, as every candidate is.
-- Chunks written before hold none of the new keys: every chunk is dropped here and the store
-- indexes the logs again when it opens (the unindexed tail, which searches read whole
-- meanwhile, so nothing stored is missed).
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

-- A search whose needle many chunks may hold walks the workspace's chunks newest first (by
-- their last log's time) and asks the index a step of them at a time.
CREATE INDEX log_chunks_recent ON log_chunks (workspace_id, max_ts, id);
