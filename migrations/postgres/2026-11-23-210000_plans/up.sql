-- Plans enforced: each workspace's figures in force (its plan's unless set otherwise; NULL is
-- unlimited). Monthly usage is counted in `usage_monthly` since the logs migration.
ALTER TABLE workspaces ADD COLUMN rate_limit INTEGER;
ALTER TABLE workspaces ADD COLUMN monthly_quota BIGINT;
ALTER TABLE workspaces ADD COLUMN retention_days INTEGER NOT NULL DEFAULT 90;
UPDATE workspaces SET
    rate_limit = CASE plan WHEN 'free' THEN 60 WHEN 'pro' THEN 600 END,
    monthly_quota = CASE plan WHEN 'free' THEN 10000 WHEN 'pro' THEN 1000000 END,
    retention_days = CASE plan WHEN 'free' THEN 7 WHEN 'pro' THEN 30 ELSE 90 END;

-- The quota check of an insert, in one round trip with plans cached by the session: counts
-- `n` logs in the workspace's usage of `in_month` and tells whether the total stays within its
-- quota (NULL, or no workspace row: no quota). On false the caller rolls its transaction back,
-- count included; the upsert's row lock orders concurrent batches.
CREATE FUNCTION sluice_count_usage(ws UUID, in_month BIGINT, n BIGINT) RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
DECLARE
    quota BIGINT;
    total BIGINT;
BEGIN
    SELECT monthly_quota INTO quota FROM workspaces WHERE id = ws;
    INSERT INTO usage_monthly AS u (workspace_id, month, logs) VALUES (ws, in_month, n)
        ON CONFLICT (workspace_id, month) DO UPDATE SET logs = u.logs + excluded.logs
        RETURNING logs INTO total;
    RETURN quota IS NULL OR total <= quota;
END
$$;
