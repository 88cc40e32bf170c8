DROP TABLE device_codes;
DROP TABLE sessions;
DROP TABLE memberships;
DROP TABLE users;
