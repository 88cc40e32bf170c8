UPDATE logs SET search_text = lower(concat_ws(E'\n', message, error_name, error_stack, data) COLLATE "C")
WHERE search_text IS NULL;
ALTER TABLE logs ALTER COLUMN search_text SET NOT NULL;
