DROP FUNCTION sluice_count_usage(UUID, BIGINT, BIGINT, SMALLINT);
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
    IF quota IS NOT NULL AND total > quota THEN
        UPDATE usage_monthly SET logs = logs - n WHERE workspace_id = ws AND month = in_month;
        RETURN FALSE;
    END IF;
    RETURN TRUE;
END
$$;

-- Folds every slot into one row per counter.
CREATE TEMPORARY TABLE folded AS
    SELECT workspace_id, month, sum(logs) AS logs FROM usage_monthly GROUP BY workspace_id, month;
DELETE FROM usage_monthly;
ALTER TABLE usage_monthly DROP CONSTRAINT usage_monthly_pkey;
ALTER TABLE usage_monthly DROP COLUMN slot;
INSERT INTO usage_monthly SELECT workspace_id, month, logs FROM folded;
ALTER TABLE usage_monthly ADD PRIMARY KEY (workspace_id, month);
DROP TABLE folded;

CREATE TEMPORARY TABLE folded AS
    SELECT workspace_id, day, source, level, sum(count) AS count FROM log_rollups_daily_sources
    GROUP BY workspace_id, day, source, level;
DELETE FROM log_rollups_daily_sources;
ALTER TABLE log_rollups_daily_sources DROP CONSTRAINT log_rollups_daily_sources_pkey;
ALTER TABLE log_rollups_daily_sources DROP COLUMN slot;
INSERT INTO log_rollups_daily_sources SELECT * FROM folded WHERE count <> 0;
ALTER TABLE log_rollups_daily_sources ADD PRIMARY KEY (workspace_id, day, source, level);
DROP TABLE folded;

CREATE TEMPORARY TABLE folded AS
    SELECT workspace_id, day, source, environment, dataset, level, sum(count) AS count FROM log_rollups_daily
    GROUP BY workspace_id, day, source, environment, dataset, level;
DELETE FROM log_rollups_daily;
ALTER TABLE log_rollups_daily DROP CONSTRAINT log_rollups_daily_pkey;
ALTER TABLE log_rollups_daily DROP COLUMN slot;
INSERT INTO log_rollups_daily SELECT * FROM folded WHERE count <> 0;
ALTER TABLE log_rollups_daily ADD PRIMARY KEY (workspace_id, day, source, environment, dataset, level);
DROP TABLE folded;

CREATE TEMPORARY TABLE folded AS
    SELECT workspace_id, hour, source, environment, dataset, level, sum(count) AS count FROM log_rollups
    GROUP BY workspace_id, hour, source, environment, dataset, level;
DELETE FROM log_rollups;
ALTER TABLE log_rollups DROP CONSTRAINT log_rollups_pkey;
ALTER TABLE log_rollups DROP COLUMN slot;
INSERT INTO log_rollups SELECT * FROM folded WHERE count <> 0;
ALTER TABLE log_rollups ADD PRIMARY KEY (workspace_id, hour, source, environment, dataset, level);
DROP TABLE folded;
