-- Flows (docs/API.md, "Flows"): the logs sharing a flow_id, summed as they arrive, in the
-- transaction of each insert and each retention delete, like the stats rollups, so listing
-- flows reads a page of `flows` and never the logs.
--
-- One row a flow: logs per level, the first and last log's time, distinct steps, and for a
-- flow made by POST /v1/flows its name and creation time. `active_ts` is what the list orders
-- and filters by: the last log's time, or the creation time while the flow has no log. A row
-- whose logs all went and that was never created goes with them.
CREATE TABLE flows (
    workspace_id BLOB NOT NULL,
    flow_id TEXT NOT NULL,
    name TEXT,
    created_at BIGINT,
    steps BIGINT NOT NULL DEFAULT 0,
    debug BIGINT NOT NULL DEFAULT 0,
    info BIGINT NOT NULL DEFAULT 0,
    warn BIGINT NOT NULL DEFAULT 0,
    error BIGINT NOT NULL DEFAULT 0,
    first_ts BIGINT,
    last_ts BIGINT,
    active_ts BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, flow_id)
) WITHOUT ROWID;
CREATE INDEX flows_active ON flows (workspace_id, active_ts DESC, flow_id DESC);

-- Logs per step of a flow: `steps`, `missingSteps` and `duplicateSteps` without the logs.
CREATE TABLE flow_steps (
    workspace_id BLOB NOT NULL,
    flow_id TEXT NOT NULL,
    step_index INTEGER NOT NULL,
    logs BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, flow_id, step_index)
) WITHOUT ROWID;

-- Logs per source and environment of a flow: its `sources`, and the list's filters on them.
CREATE TABLE flow_scopes (
    workspace_id BLOB NOT NULL,
    flow_id TEXT NOT NULL,
    source TEXT NOT NULL,
    environment TEXT NOT NULL,
    logs BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, flow_id, source, environment)
) WITHOUT ROWID;

-- A timeline in its order (step, then time, then id) read from the index, not sorted.
CREATE INDEX logs_flow_steps ON logs (workspace_id, flow_id, step_index, ts, id) WHERE flow_id IS NOT NULL;

-- The flows of the logs stored before this migration.
INSERT INTO flows (workspace_id, flow_id, steps, debug, info, warn, error, first_ts, last_ts, active_ts)
SELECT workspace_id, flow_id, COUNT(DISTINCT step_index),
       SUM(level = 'debug'), SUM(level = 'info'), SUM(level = 'warn'), SUM(level = 'error'),
       MIN(ts), MAX(ts), MAX(ts)
FROM logs WHERE flow_id IS NOT NULL GROUP BY workspace_id, flow_id;
INSERT INTO flow_steps (workspace_id, flow_id, step_index, logs)
SELECT workspace_id, flow_id, step_index, COUNT(*) FROM logs
WHERE flow_id IS NOT NULL AND step_index IS NOT NULL GROUP BY workspace_id, flow_id, step_index;
INSERT INTO flow_scopes (workspace_id, flow_id, source, environment, logs)
SELECT workspace_id, flow_id, source, environment, COUNT(*) FROM logs
WHERE flow_id IS NOT NULL GROUP BY workspace_id, flow_id, source, environment;
