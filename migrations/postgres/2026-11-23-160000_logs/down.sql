DROP TABLE usage_monthly;
DROP TABLE log_rollups_daily_sources;
DROP TABLE log_rollups_daily;
DROP TABLE log_rollups;
DROP TABLE logs;
