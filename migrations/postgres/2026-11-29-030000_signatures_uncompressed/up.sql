-- A chunk's signature is a Bloom filter, random bits that do not compress: stored out of line
-- as it is, without PostgreSQL trying to compress each one first (pglz_compress was about 1 %
-- of the machine under the search benchmark's ingest, `perf record -a`: docs/PERFORMANCE.md,
-- issue 24). Applies to signatures written from now on.
ALTER TABLE log_chunk_signatures ALTER COLUMN signature SET STORAGE EXTERNAL;
