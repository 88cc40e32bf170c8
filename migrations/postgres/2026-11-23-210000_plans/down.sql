DROP FUNCTION sluice_count_usage(UUID, BIGINT, BIGINT);
ALTER TABLE workspaces DROP COLUMN retention_days;
ALTER TABLE workspaces DROP COLUMN monthly_quota;
ALTER TABLE workspaces DROP COLUMN rate_limit;
