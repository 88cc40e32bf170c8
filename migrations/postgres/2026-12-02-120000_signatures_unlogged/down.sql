DROP TABLE log_chunk_signatures_intact;
ALTER TABLE log_chunk_signatures SET LOGGED;
