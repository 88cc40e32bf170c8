-- Daily counters without environment and dataset: stats by day or by source and the summary
-- that filter on neither (the usual request) read one row per day, source and level, a sixth
-- of `log_rollups_daily`'s rows for a workspace with three environments and two datasets.
-- Kept in the same transactions as the other counters.
CREATE TABLE log_rollups_daily_sources (
    workspace_id BLOB NOT NULL,
    day BIGINT NOT NULL,
    source TEXT NOT NULL,
    level TEXT NOT NULL,
    count BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, day, source, level)
) WITHOUT ROWID;

INSERT INTO log_rollups_daily_sources (workspace_id, day, source, level, count)
    SELECT workspace_id, day, source, level, SUM(count) FROM log_rollups_daily GROUP BY 1, 2, 3, 4;
