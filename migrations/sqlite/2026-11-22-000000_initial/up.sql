-- Tenancy: workspaces own logs and keys. Ids are UUID v7 as 16-byte blobs.
CREATE TABLE workspaces (
    id BLOB PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    plan TEXT NOT NULL,
    created_at BIGINT NOT NULL
) WITHOUT ROWID;

-- Keys are kept only as the BLAKE3 hash of their text.
CREATE TABLE api_keys (
    id BLOB PRIMARY KEY NOT NULL,
    workspace_id BLOB NOT NULL REFERENCES workspaces (id),
    hash BLOB NOT NULL,
    name TEXT,
    env TEXT NOT NULL,
    scopes TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    revoked_at BIGINT
) WITHOUT ROWID;
CREATE UNIQUE INDEX api_keys_hash ON api_keys (hash);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at);

-- Logs. `seq` is the rowid, so a later full-text index can point at rows by integer.
-- Every read is "one workspace, newest first", so each index leads with workspace_id and ends
-- with (ts, id): a filtered newest page is a short backwards walk of one index.
CREATE TABLE logs (
    seq INTEGER PRIMARY KEY NOT NULL,
    workspace_id BLOB NOT NULL,
    id BLOB NOT NULL,
    ts BIGINT NOT NULL,
    level TEXT NOT NULL,
    environment TEXT NOT NULL,
    source TEXT NOT NULL,
    dataset TEXT NOT NULL,
    message TEXT NOT NULL,
    version TEXT,
    user_id TEXT,
    session_id TEXT,
    request_id TEXT,
    data TEXT,
    error_name TEXT,
    error_stack TEXT,
    tags TEXT,
    flow_id TEXT,
    step_index INTEGER,
    country TEXT,
    ip_address TEXT
);
CREATE UNIQUE INDEX logs_id ON logs (id);
CREATE INDEX logs_recent ON logs (workspace_id, ts, id);
CREATE INDEX logs_level ON logs (workspace_id, level, ts, id);
CREATE INDEX logs_source ON logs (workspace_id, source, ts, id);
CREATE INDEX logs_environment ON logs (workspace_id, environment, ts, id);
CREATE INDEX logs_dataset ON logs (workspace_id, dataset, ts, id);
CREATE INDEX logs_user ON logs (workspace_id, user_id, ts, id) WHERE user_id IS NOT NULL;
CREATE INDEX logs_session ON logs (workspace_id, session_id, ts, id) WHERE session_id IS NOT NULL;
CREATE INDEX logs_flow ON logs (workspace_id, flow_id, ts, id) WHERE flow_id IS NOT NULL;
