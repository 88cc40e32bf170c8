DROP TABLE log_rollups_daily_sources;
