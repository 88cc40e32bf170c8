CREATE OR REPLACE FUNCTION sluice_count_usage(ws UUID, in_month BIGINT, n BIGINT) RETURNS BOOLEAN
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
