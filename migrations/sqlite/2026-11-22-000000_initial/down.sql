DROP TABLE logs;
DROP TABLE api_keys;
DROP TABLE workspaces;
