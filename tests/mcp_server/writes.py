"""Write attempts in tricky spellings, for the gate's tests (test_gate.py, every one refused by the
gate alone) and the server's (test_server.py, every one refused by `cqlsh-ext mcp` and the table
unchanged). `{t}` is the table, `{ks}` its keyspace, `{dir}` a directory of the test's own."""

from __future__ import annotations

WRITES = [
    # plain writes, any case, any spacing
    "INSERT INTO {t} (id, data) VALUES (999, 0x00)",
    "insert into {t} (id, data) values (999, 0x00)",
    "  \n\t UpDaTe {t} SET data = 0x00 WHERE id = 1",
    "DELETE FROM {t} WHERE id = 1",
    "DELETE data FROM {t} WHERE id = 1",
    "INSERT INTO {t} JSON '{{\"id\": 999}}'",
    "UPDATE {t} SET data = encode('zstd', '{{\"a\": 1}}') WHERE id = 1",
    "BEGIN BATCH INSERT INTO {t} (id) VALUES (998); DELETE FROM {t} WHERE id = 1; APPLY BATCH",
    "BEGIN UNLOGGED BATCH DELETE FROM {t} WHERE id = 2 APPLY BATCH",
    # a read first, a write after it
    "SELECT * FROM {t}; DROP TABLE {t}",
    "SELECT * FROM {t};DELETE FROM {t} WHERE id = 1;",
    "SeLeCt * FROM {t}; dRoP TABLE {t}",
    "SELECT * FROM {t} WHERE id = 1 -- harmless\n; TRUNCATE {t}",
    "SELECT $$;$$ FROM {t}; DELETE FROM {t} WHERE id = 1",
    "SELECT ';' FROM {t}; UPDATE {t} SET data = 0x00 WHERE id = 1",
    "SELECT * FROM {t} /* ; */ ; TRUNCATE {t}",
    "SELECT * FROM {t}\u00a0; DROP TABLE {t}",
    "INSPECT SELECT data FROM {t}; DELETE FROM {t} WHERE id = 1",
    # a write dressed as a read by comments and quotes
    "/* SELECT */ TRUNCATE {t}",
    "-- SELECT\nDROP TABLE {t}",
    "// SELECT * FROM {t}\nDELETE FROM {t} WHERE id = 1",
    '"SELECT" * FROM {t}',
    "'SELECT' ; DELETE FROM {t} WHERE id = 1",
    "\ufeffDROP TABLE {t}",
    # unclosed quotes and comments that would swallow the end
    "SELECT * FROM {t} /* unclosed ; DROP TABLE {t}",
    "SELECT 'unclosed FROM {t}; DROP TABLE {t}",
    'SELECT "unclosed FROM {t}; DROP TABLE {t}',
    "SELECT $$unclosed FROM {t}; DROP TABLE {t}",
    # commands that end at their line in cqlsh: the next line is another statement
    "DESCRIBE TABLES\nDROP TABLE {t}",
    "DESCRIBE PAYLOAD {t}.data\nTRUNCATE {t}",
    "COMPRESSION STATS {t}\nDELETE FROM {t} WHERE id = 1",
    "COMPRESSION SETTINGS {t}\nDROP KEYSPACE {ks}",
    # DDL, TRUNCATE, roles and permissions
    "TRUNCATE {t}",
    "TRUNCATE TABLE {t}",
    "DROP TABLE {t}",
    "DROP KEYSPACE {ks}",
    "CREATE TABLE {ks}.made_by_mcp (id int PRIMARY KEY)",
    "CREATE TABLE IF NOT EXISTS {ks}.made_by_mcp (id int PRIMARY KEY)",
    "ALTER TABLE {t} ADD made_by_mcp int",
    "CREATE INDEX ON {t} (data)",
    "CREATE KEYSPACE made_by_mcp WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}",
    "GRANT SELECT ON {t} TO cassandra",
    "REVOKE SELECT ON {t} FROM cassandra",
    "CREATE ROLE made_by_mcp WITH PASSWORD = 'x' AND LOGIN = true",
    "ALTER ROLE cassandra WITH PASSWORD = 'changed'",
    # the shell's own writes and commands
    "COMPRESSION TRIAL {t}.data INTO {ks}",
    "COPY {t} FROM '{dir}/rows.csv'",
    "COPY {t} TO '{dir}/copy.csv'",
    "COPY (SELECT * FROM {t}) TO '{dir}/export.jsonl'",
    "CAPTURE '{dir}/capture.txt'",
    "SOURCE '{dir}/script.cql'",
    "USE {ks}",
    "CONSISTENCY ALL",
    "PAGING OFF",
    "TRACING ON",
    "EXPAND ON",
    "OUTPUT FORMAT CSV",
    "DECODE {t}.data AS zstd",
    "LOGIN cassandra cassandra",
    "EXIT",
    "COMPRESSION ADVISE {t}; DROP TABLE {t}",
    "COMPRESSION ADVISE {t} SAVE DICTIONARY '{dir}/stolen.dict'",
    "COMPRESSION ADVISE SELECT data FROM {t} save dictionary '{dir}/stolen.dict'",
]

#: Reads the gate lets through (their own tests check what they answer).
READS = [
    "SELECT * FROM {t}",
    "select data FROM {t} WHERE id = 1;",
    "SELECT ';' FROM {t}",
    "SELECT $$;$$ FROM {t};;",
    "SELECT * FROM {t} -- a comment at the end",
    "/* a comment first */ SELECT id FROM {t}",
    "SELECT data.status, count(*) FROM {t} GROUP BY data.status ALLOW FILTERING",
    "DESCRIBE TABLE {t}",
    "DESC KEYSPACES",
    "DESCRIBE PAYLOAD {t}.data SAMPLE 5",
    "COMPRESSION STATS {t}",
    "COMPRESSION SETTINGS {t}",
    "COMPRESSION ADVISE SAMPLE 10 {t}",
    "INSPECT SELECT data FROM {t} WHERE id = 1",
    "INSPECT JSON SELECT data FROM {t} WHERE id = 1",
]
