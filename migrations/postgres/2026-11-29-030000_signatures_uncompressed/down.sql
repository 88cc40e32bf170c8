ALTER TABLE log_chunk_signatures ALTER COLUMN signature SET STORAGE EXTENDED;
