-- Accounts: people who sign in, their roles in workspaces, their sessions, and the device
-- codes the command-line client signs in with. Secrets are kept only as hashes: passwords as
-- Argon2id PHC strings, session tokens and device codes as BLAKE3.
CREATE TABLE users (
    id BLOB PRIMARY KEY NOT NULL,
    email TEXT NOT NULL,
    -- The email as compared: lower case, so two spellings of one address are one user.
    email_key TEXT NOT NULL,
    name TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    admin BOOLEAN NOT NULL,
    created_at BIGINT NOT NULL
) WITHOUT ROWID;
CREATE UNIQUE INDEX users_email ON users (email_key);

CREATE TABLE memberships (
    workspace_id BLOB NOT NULL REFERENCES workspaces (id),
    user_id BLOB NOT NULL REFERENCES users (id),
    role TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
) WITHOUT ROWID;
CREATE INDEX memberships_user ON memberships (user_id);

CREATE TABLE sessions (
    id BLOB PRIMARY KEY NOT NULL,
    user_id BLOB NOT NULL REFERENCES users (id),
    hash BLOB NOT NULL,
    client TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    last_used_at BIGINT NOT NULL,
    revoked_at BIGINT
) WITHOUT ROWID;
CREATE UNIQUE INDEX sessions_hash ON sessions (hash);
CREATE INDEX sessions_user ON sessions (user_id, created_at);

-- state: pending, approved (user_id says by whom), denied, used.
CREATE TABLE device_codes (
    hash BLOB PRIMARY KEY NOT NULL,
    user_code TEXT NOT NULL,
    client_id TEXT NOT NULL,
    scope TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    interval_s INTEGER NOT NULL,
    last_poll_at BIGINT,
    state TEXT NOT NULL,
    user_id BLOB REFERENCES users (id)
) WITHOUT ROWID;
CREATE INDEX device_codes_user_code ON device_codes (user_code, expires_at);
