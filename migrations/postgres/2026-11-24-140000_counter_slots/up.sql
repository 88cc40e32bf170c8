-- Counters in slots. Every insert transaction adds to its workspace's counters (the rollups of
-- the hours, days and sources its logs fall in, and the month's usage), and held their row
-- locks until its commit, so concurrent writers of one workspace committed one after the
-- other, each waiting for the last one's WAL flush: under sustained ingest that queue, not
-- the work, made the latency tail (docs/PERFORMANCE.md, issue 7). Now each counter is a few
-- rows, one per slot: a writer takes a slot no other writer of its process holds and adds to
-- that slot's rows only; reads sum the slots. Retention subtracts in slot 0 and removes a
-- counter's rows once their sum is 0.
--
-- Usage under a quota stays exact: a workspace with a quota counts in slot 0 only, whose row
-- lock orders its checks, and compares the sum of all slots with the quota.
ALTER TABLE log_rollups ADD COLUMN slot SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE log_rollups DROP CONSTRAINT log_rollups_pkey;
ALTER TABLE log_rollups ADD PRIMARY KEY (workspace_id, hour, source, environment, dataset, level, slot);

ALTER TABLE log_rollups_daily ADD COLUMN slot SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE log_rollups_daily DROP CONSTRAINT log_rollups_daily_pkey;
ALTER TABLE log_rollups_daily ADD PRIMARY KEY (workspace_id, day, source, environment, dataset, level, slot);

ALTER TABLE log_rollups_daily_sources ADD COLUMN slot SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE log_rollups_daily_sources DROP CONSTRAINT log_rollups_daily_sources_pkey;
ALTER TABLE log_rollups_daily_sources ADD PRIMARY KEY (workspace_id, day, source, level, slot);

ALTER TABLE usage_monthly ADD COLUMN slot SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE usage_monthly DROP CONSTRAINT usage_monthly_pkey;
ALTER TABLE usage_monthly ADD PRIMARY KEY (workspace_id, month, slot);

DROP FUNCTION sluice_count_usage(UUID, BIGINT, BIGINT);
CREATE FUNCTION sluice_count_usage(ws UUID, in_month BIGINT, n BIGINT, in_slot SMALLINT) RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
DECLARE
    quota BIGINT;
    total BIGINT;
BEGIN
    SELECT monthly_quota INTO quota FROM workspaces WHERE id = ws;
    IF quota IS NULL THEN
        INSERT INTO usage_monthly AS u (workspace_id, month, slot, logs) VALUES (ws, in_month, in_slot, n)
            ON CONFLICT (workspace_id, month, slot) DO UPDATE SET logs = u.logs + excluded.logs;
        RETURN TRUE;
    END IF;
    INSERT INTO usage_monthly AS u (workspace_id, month, slot, logs) VALUES (ws, in_month, 0, n)
        ON CONFLICT (workspace_id, month, slot) DO UPDATE SET logs = u.logs + excluded.logs;
    SELECT sum(logs) INTO total FROM usage_monthly WHERE workspace_id = ws AND month = in_month;
    IF total > quota THEN
        UPDATE usage_monthly SET logs = logs - n WHERE workspace_id = ws AND month = in_month AND slot = 0;
        RETURN FALSE;
    END IF;
    RETURN TRUE;
END
$$;
