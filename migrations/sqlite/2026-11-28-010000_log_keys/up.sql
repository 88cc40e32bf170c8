-- Per-log key filters (`sluice_store::log_keys`): for each chunk, a small Bloom filter of each
-- of its logs' signature keys in `seq` order, so a search for a rare needle reads only the
-- logs of an allowed chunk that may hold it, by `seq`, instead of all of its up to 256. A
-- table of its own: in `log_chunks`, a row of several kilobytes spilled to overflow pages and
-- spread the chunks' rows, which every walk by recency reads, over ten times the pages.
-- Chunks written before have none: their logs are read whole, as before.
CREATE TABLE log_chunk_keys (
    chunk_id INTEGER PRIMARY KEY NOT NULL,
    log_keys BLOB NOT NULL
);
