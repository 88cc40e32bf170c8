-- Waiting signatures are written with every insert and deleted a block at a time by the seals,
-- so `log_chunk_signatures` and its TOAST table empty and fill again all day. A vacuum that
-- found their last pages empty truncated them, which takes an ACCESS EXCLUSIVE lock that every
-- insert transaction (each writes signatures) then waits behind, and the next inserts extended
-- the files again a page at a time. Measured under PostgreSQL ingest at a slow hour: the
-- store's own `VACUUM` spent the 10 s of its statement timeout "truncating relation
-- pg_toast...", and was cancelled (docs/PERFORMANCE.md, issue 24). Kept, the empty pages are
-- reused by the next signatures. Applies to autovacuum and to the store's `VACUUM` alike.
ALTER TABLE log_chunk_signatures SET (vacuum_truncate = false, toast.vacuum_truncate = false);
