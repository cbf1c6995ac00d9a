-- SPDX-License-Identifier: MIT
-- script.sql - a deterministic SQL script run by the stock sqlite3 shell
-- (shell.sh) and by Python's sqlite3 module (python.py), once through the
-- VFS "lpc" and once through "unix": the two outputs must be byte-identical.
-- Every statement that returns rows has an ORDER BY or is an aggregate.
PRAGMA page_size = 1024;
PRAGMA cache_size = 16;
CREATE TABLE acct(id INTEGER PRIMARY KEY, owner TEXT, balance INT, note BLOB);
CREATE TABLE hist(id INTEGER PRIMARY KEY, acct INT, delta INT, at INT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
INSERT INTO acct SELECT i, printf('owner-%05d', (i * 7919) % 3001), (i * 104729) % 10007,
	zeroblob((i * 37) % 900) FROM n;
SELECT count(*), sum(balance), sum(length(note)), min(owner), max(owner) FROM acct;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
INSERT INTO hist(acct, delta, at) SELECT 1 + (i * 31) % 3000, (i * 13) % 200 - 100, i FROM n;
UPDATE acct SET balance = balance + (SELECT total(delta) FROM hist WHERE hist.acct = acct.id);
COMMIT;
SELECT count(*), sum(balance) FROM acct;
BEGIN;
DELETE FROM acct WHERE id % 5 = 0;
UPDATE acct SET note = zeroblob(3000) WHERE id % 11 = 1;
ROLLBACK;
SELECT count(*), sum(length(note)) FROM acct;
CREATE INDEX acct_owner ON acct(owner);
SELECT id, owner, balance FROM acct WHERE owner BETWEEN 'owner-01000' AND 'owner-01010' ORDER BY owner, id;
DELETE FROM acct WHERE id % 7 = 3;
UPDATE acct SET note = CAST(printf('%.*c', 2500, 'x') AS BLOB) WHERE id % 13 = 0;
SELECT count(*), sum(length(note)), sum(balance) FROM acct;
PRAGMA integrity_check;
VACUUM;
PRAGMA integrity_check;
PRAGMA journal_mode = WAL;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
INSERT INTO hist(acct, delta, at) SELECT 1 + (i * 17) % 3000, i % 50, 5000 + i FROM n;
CREATE TABLE big(id INTEGER PRIMARY KEY, data BLOB);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)
INSERT INTO big SELECT i, zeroblob(20000 + i * 1000) FROM n;
UPDATE big SET data = CAST(printf('%.*c', 30000, char(65 + id % 26)) AS BLOB) WHERE id % 3 = 0;
SELECT id, length(data), hex(substr(data, 1000, 4)) FROM big ORDER BY id;
PRAGMA wal_checkpoint(TRUNCATE);
SELECT acct, count(*), sum(delta) FROM hist GROUP BY acct HAVING count(*) > 4 ORDER BY acct LIMIT 20;
PRAGMA integrity_check;
PRAGMA journal_mode = DELETE;
PRAGMA page_size = 8192;
VACUUM;
PRAGMA page_size;
SELECT count(*), sum(balance), sum(length(note)) FROM acct;
SELECT count(*), sum(length(data)) FROM big;
DROP TABLE big;
PRAGMA integrity_check;
SELECT name FROM sqlite_master ORDER BY name;
