ALTER TABLE log_blocks DROP COLUMN max_ts;
