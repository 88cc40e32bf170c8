-- The search index's write settings, measured with `cargo xtask bench ingest` (docs/PERFORMANCE.md):
-- FTS5 writes its pending terms out as a new segment whenever they pass `hashsize` (1 MB by
-- default, which a few hundred logs' trigrams pass), and merges segments whenever `automerge`
-- (4) of one level exist. A group commit of a few thousand logs now makes one segment, and
-- merges take 16 segments at a time: 9.7k -> 12.9k logs/s through HTTP. Merging stays on, so
-- searches probe a bounded number of segments.
INSERT INTO logs_fts (logs_fts, rank) VALUES ('hashsize', 16777216);
INSERT INTO logs_fts (logs_fts, rank) VALUES ('automerge', 16);
INSERT INTO logs_fts (logs_fts, rank) VALUES ('crisismerge', 64);
