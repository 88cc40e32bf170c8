-- Written to and emptied in one transaction by the readiness check while the storage is full
-- (crates/sluice-store-sqlite/src/connection.rs, ROOM_PROBE): a write that needs new pages, so
-- its commit proves ingest would find room again.
CREATE TABLE room_probe (filler BLOB NOT NULL);
