-- Tenancy: workspaces own logs and keys. Ids are UUID v7.
-- Laid out to be distributed by workspace later (Citus-style): every table that holds a
-- workspace's rows leads its primary key and indexes with workspace_id. `workspaces` itself
-- and the key-hash lookup are small and global (a Citus reference table each).
CREATE TABLE workspaces (
    id UUID PRIMARY KEY,
    name TEXT NOT NULL,
    plan TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- Keys are kept only as the BLAKE3 hash of their text.
CREATE TABLE api_keys (
    workspace_id UUID NOT NULL REFERENCES workspaces (id),
    id UUID NOT NULL,
    hash BYTEA NOT NULL,
    name TEXT,
    env TEXT NOT NULL,
    scopes TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    revoked_at BIGINT,
    PRIMARY KEY (workspace_id, id)
);
CREATE INDEX api_keys_created ON api_keys (workspace_id, created_at);
-- A request names its key, not its workspace: the one global lookup, by hash.
CREATE UNIQUE INDEX api_keys_hash ON api_keys (hash);
