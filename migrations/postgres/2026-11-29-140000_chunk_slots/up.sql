-- Each chunk keeps, slot by slot, its logs' ids and a small Bloom filter of each log's
-- signature keys (`sluice_store::log_keys`): a search reads by id, through `logs_id`, the few
-- logs of a chunk that may hold a rare needle, not the chunk's 256. NULL for chunks written
-- before: those are read whole. Random bits and ids that do not compress: stored out of line
-- as they are.
ALTER TABLE log_chunks ADD COLUMN slots BYTEA;
ALTER TABLE log_chunks ALTER COLUMN slots SET STORAGE EXTERNAL;
