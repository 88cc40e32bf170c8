-- A log is found by its workspace and id (GET /v1/logs/{id} names both), and every index of a
-- workspace-scoped table leads with workspace_id, as on PostgreSQL (logs_id there is the same).
DROP INDEX logs_id;
CREATE UNIQUE INDEX logs_id ON logs (workspace_id, id);
