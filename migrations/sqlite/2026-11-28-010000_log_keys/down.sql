DROP TABLE log_chunk_keys;
