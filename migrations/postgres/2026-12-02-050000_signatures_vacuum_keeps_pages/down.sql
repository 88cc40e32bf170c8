ALTER TABLE log_chunk_signatures RESET (vacuum_truncate, toast.vacuum_truncate);
