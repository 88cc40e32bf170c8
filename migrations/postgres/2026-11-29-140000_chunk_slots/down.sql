ALTER TABLE log_chunks DROP COLUMN slots;
