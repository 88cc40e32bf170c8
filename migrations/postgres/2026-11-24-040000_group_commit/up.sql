-- Group commit: one transaction holds many requests' batches, so a batch refused by its
-- workspace's quota can no longer be undone by rolling the transaction back. The quota check
-- now takes its own count back when it refuses: false means nothing was counted.
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
    IF quota IS NOT NULL AND total > quota THEN
        UPDATE usage_monthly SET logs = logs - n WHERE workspace_id = ws AND month = in_month;
        RETURN FALSE;
    END IF;
    RETURN TRUE;
END
$$;
