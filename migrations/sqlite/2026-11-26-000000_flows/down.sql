DROP INDEX logs_flow_steps;
DROP TABLE flow_scopes;
DROP TABLE flow_steps;
DROP TABLE flows;
