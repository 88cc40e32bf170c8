-- Live tail across servers (sluice-store-pg's `feed`): which servers have a live tail of a
-- workspace open, and until when (Unix ms by the database's clock). A server announces a
-- committed batch (`NOTIFY`, the logs' ids) only when another server watches its workspace,
-- which it reads after the batch's commit; a server with a tail open says so before the tail's
-- stream starts and again every 20 s, a row lapsing a minute after the last time
-- (docs/PERFORMANCE.md, issue 24: announcing every batch to nobody was about 5 % of ingest's
-- CPU). Housekeeping deletes the rows long lapsed.
CREATE TABLE tail_watches (
    workspace_id UUID NOT NULL,
    server TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, server)
);
