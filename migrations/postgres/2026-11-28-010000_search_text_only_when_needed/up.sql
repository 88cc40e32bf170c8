-- A log's folded search text is stored only where it differs from what PostgreSQL folds
-- itself: a log whose searchable fields are all ASCII leaves it NULL, and a search's
-- candidate filter folds those fields in the statement (`lower(... COLLATE "C")` is ASCII's
-- lowercase, as `sluice_query::fold` is for ASCII text). The column held a second copy of the
-- message on every row: 271 of 670 bytes a row at 10M loghub logs, the pages a search reads
-- and the WAL every insert writes (docs/PERFORMANCE.md, issue 24).
ALTER TABLE logs ALTER COLUMN search_text DROP NOT NULL;
