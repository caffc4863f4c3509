-- DO NOT MERGE — validation seed.
CREATE TABLE users (id INT PRIMARY KEY, email TEXT, password TEXT);
-- SEED 1 [BLOCKER] (core/hardcoded-secret) an admin password in a migration
INSERT INTO users VALUES (1, 'admin@example.com', 'Winter2025!');
