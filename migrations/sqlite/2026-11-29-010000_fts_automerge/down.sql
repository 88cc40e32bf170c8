INSERT INTO log_chunks_fts (log_chunks_fts, rank) VALUES ('automerge', 16);
INSERT INTO log_chunks_fts (log_chunks_fts, rank) VALUES ('crisismerge', 64);
