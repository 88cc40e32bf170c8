-- Plans enforced: each workspace's figures in force (its plan's unless set otherwise; NULL is
-- unlimited). Monthly usage is counted in `usage_monthly` since the logs migration.
ALTER TABLE workspaces ADD COLUMN rate_limit INTEGER;
ALTER TABLE workspaces ADD COLUMN monthly_quota BIGINT;
ALTER TABLE workspaces ADD COLUMN retention_days INTEGER NOT NULL DEFAULT 90;
UPDATE workspaces SET
    rate_limit = CASE plan WHEN 'free' THEN 60 WHEN 'pro' THEN 600 END,
    monthly_quota = CASE plan WHEN 'free' THEN 10000 WHEN 'pro' THEN 1000000 END,
    retention_days = CASE plan WHEN 'free' THEN 7 WHEN 'pro' THEN 30 ELSE 90 END;
