-- A chunk's signature waits in `log_chunk_signatures` only until its block is sealed: written
-- with every insert, deleted a block at a time by the seals, vacuumed. Logged, each one was
-- written twice (its pages and the WAL of them, the full pages after each checkpoint), for rows
-- that live minutes, and the process that wrote a signature keeps it in memory anyway
-- (docs/PERFORMANCE.md, issue 24). Unlogged, PostgreSQL empties the table when it recovers from
-- a crash, and a promoted standby or a base backup holds it empty: the store then signs the
-- chunks in neither a block nor this table again from their logs (`lost::sign_again`: at
-- connect, at housekeeping, and started by the first search that notices), and searches walk
-- every chunk, reading those whole, until it has.
-- Both know by `log_chunk_signatures_intact`, unlogged too, whose one row goes with them.
ALTER TABLE log_chunk_signatures SET UNLOGGED;
CREATE UNLOGGED TABLE log_chunk_signatures_intact (intact BOOLEAN PRIMARY KEY);
INSERT INTO log_chunk_signatures_intact (intact) VALUES (true);
