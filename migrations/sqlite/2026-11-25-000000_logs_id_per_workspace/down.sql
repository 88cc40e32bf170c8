DROP INDEX logs_id;
CREATE UNIQUE INDEX logs_id ON logs (id);
