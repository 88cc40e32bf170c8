DROP INDEX log_chunks_unsigned;
ALTER TABLE log_chunks DROP COLUMN signed;
DROP TABLE log_block_bands;
DROP TABLE log_blocks;
DROP TABLE log_chunk_signatures;
