-- The chunk index's FTS5 segments merge once four wait on a level (FTS5's own default), not
-- sixteen. Each search asks the index for a step of chunks at a time, and each such query
-- seeks in every segment: at 9.3M logs the index had 31-32 segments, and a query of an
-- eight-trigram word took 1.5-2.7 ms whatever its range; merged into one, 0.1-0.2 ms
-- (docs/PERFORMANCE.md, issue 25's soak). Sixteen was chosen when the index held every log's
-- text; it now holds a chunk's keys, and merging the whole of it at 9.3M logs took 3.2 s.
INSERT INTO log_chunks_fts (log_chunks_fts, rank) VALUES ('automerge', 4);
INSERT INTO log_chunks_fts (log_chunks_fts, rank) VALUES ('crisismerge', 16);
