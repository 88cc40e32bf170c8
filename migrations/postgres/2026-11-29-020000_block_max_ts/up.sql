-- The time of the newest log of a block's chunks, so a search for a rare needle narrows the
-- blocks newest first, only as far as its page reaches: a block may hold a chunk newer than
-- those of later blocks (logs sent late, or with times ahead), so block order is not enough.
-- NULL (unknown) is narrowed before every other block.
ALTER TABLE log_blocks ADD COLUMN max_ts BIGINT;
UPDATE log_blocks b SET max_ts = (
    SELECT max(c.max_ts) FROM log_chunks c WHERE c.workspace_id = b.workspace_id AND c.id = ANY(b.chunks)
);
