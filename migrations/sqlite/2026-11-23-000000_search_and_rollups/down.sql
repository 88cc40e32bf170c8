DROP TABLE log_rollups_daily;
DROP TABLE log_rollups;
DROP TABLE logs_fts;
