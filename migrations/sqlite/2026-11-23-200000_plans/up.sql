-- Plans enforced: each workspace's figures in force (its plan's unless set otherwise; NULL is
-- unlimited), and the logs it was sent per UTC month, counted in the insert transaction.
ALTER TABLE workspaces ADD COLUMN rate_limit INTEGER;
ALTER TABLE workspaces ADD COLUMN monthly_quota BIGINT;
ALTER TABLE workspaces ADD COLUMN retention_days INTEGER NOT NULL DEFAULT 90;
UPDATE workspaces SET
    rate_limit = CASE plan WHEN 'free' THEN 60 WHEN 'pro' THEN 600 END,
    monthly_quota = CASE plan WHEN 'free' THEN 10000 WHEN 'pro' THEN 1000000 END,
    retention_days = CASE plan WHEN 'free' THEN 7 WHEN 'pro' THEN 30 ELSE 90 END;

-- `month`: the Unix ms the UTC month starts at.
CREATE TABLE usage_monthly (
    workspace_id BLOB NOT NULL,
    month BIGINT NOT NULL,
    logs BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, month)
) WITHOUT ROWID;
