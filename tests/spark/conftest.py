"""A table written by real producers, and `cqlsh-ext spark` and the shell run on it.

Spark starts cost 10-40 s on a 2-core machine (30-70 s under a loaded CI run): a module runs
`cqlsh-ext spark` once with all its statements (-f FILE) and its tests read that one run's output;
a statement a shared run can serve goes in that run's file rather than a run of its own: `runs`
(no options: test_describe_payload's reports, the dictionaries' values read without them) or
`read_only_run` (--read-only, the dictionaries named). `runs` does it on both Sparks:
pyspark 3.5 with the Cassandra connector (.venv's) and pyspark 4 through cqlsh-ext's own data
source (spark/datasource.py), pyspark 4 from .cache/spark4-site, which bin/setup --spark fills and
the run puts first on its PYTHONPATH.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import cramjam
import lz4.frame
import pytest
import zstandard
from conftest import REPO_ROOT
from dictionary_values import Made, make
from shell_runner import CQLSH_EXT, isolated_env

STATUSES = ("NEW", "PAID", "SHIPPED", "CANCELLED")
CODECS = ("snappy", "zstd", "gzip", "lz4", "plain")


def order(i: int) -> dict:
    """The record behind row i: what the tests' expected answers are computed from."""
    return {
        "order": i,
        "status": STATUSES[i % len(STATUSES)],
        "amount": (i * 37) % 500,
        "customer": {"tier": "gold" if i % 5 == 0 else "silver", "name": f"customer {i % 11}"},
        "note": "x" * (i % 200),
    }


def stored(i: int) -> bytes | None:
    """Row i's blob: a JSON order under one of the producers, none (null) or random bytes."""
    if i % 17 == 0:
        return None
    if i % 23 == 0:
        return os.urandom(40) if i % 2 else bytes(range(7, 47))
    payload = json.dumps(order(i)).encode()
    codec = CODECS[i % len(CODECS)]
    if codec == "snappy":
        return bytes(cramjam.snappy.compress_raw(payload))
    if codec == "zstd":
        return zstandard.ZstdCompressor().compress(payload)
    if codec == "gzip":
        return gzip.compress(payload, mtime=0)
    if codec == "lz4":
        return lz4.frame.compress(payload)
    return payload


@dataclass
class Table:
    keyspace: str
    name: str
    values: dict[int, bytes | None]

    @property
    def qualified(self) -> str:
        return f"{self.keyspace}.{self.name}"


def make_table(cassandra, rows: int) -> Table:
    ks = cassandra.create_keyspace("spark")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE orders (id int PRIMARY KEY, data blob, extra map<text, blob>)")
    insert = session.prepare("INSERT INTO orders (id, data, extra) VALUES (?, ?, ?)")
    values = {i: stored(i) for i in range(rows)}
    for i, value in values.items():
        extra = {"z": zstandard.ZstdCompressor().compress(b"extra " * i)} if i % 3 == 0 else None
        session.execute(insert, (i, value, extra))
    session.shutdown()
    return Table(ks, "orders", values)


#: Where bin/setup --spark installs pyspark 4 (pip --target), beside .venv's pyspark 3.5.
SPARK4_SITE = REPO_ROOT / ".cache" / "spark4-site"
#: The Sparks `runs` runs on: pyspark 3.5 (.venv's, the connector) and pyspark 4 (SPARK4_SITE).
SPARKS = ("3.5", "4")


def spark4_site() -> Path:
    if not (SPARK4_SITE / "pyspark").is_dir():
        pytest.fail(f"pyspark 4 is not in {SPARK4_SITE}: bin/setup --spark installs it", pytrace=False)
    return SPARK4_SITE


def spark_env(home: Path, spark: str = "3.5") -> dict[str, str]:
    env = isolated_env(home)
    # The jars bin/setup --spark fetched (isolated_env drops CQLSH_* variables).
    env["CQLSH_EXT_SPARK_CACHE"] = str(REPO_ROOT / ".cache" / "spark")
    if spark == "4":  # pyspark 4 found before .venv's 3.5, by the program and its Python workers
        env["PYTHONPATH"] = os.pathsep.join([str(spark4_site()), *filter(None, [env.get("PYTHONPATH")])])
    return env


def run_spark(cassandra, home: Path, args: list[str], timeout: float = 600,
              env: dict[str, str] | None = None, spark: str = "3.5") -> subprocess.CompletedProcess:
    # cqlsh's own warning about -p on the command line is not what the tests look at.
    return subprocess.run([CQLSH_EXT, "spark", *args, *cassandra.cqlsh_args,
                           "--insecure-password-without-warning"], cwd=home,
                          env={**spark_env(home, spark), **(env or {})}, capture_output=True, text=True,
                          timeout=timeout)


def run_shell(cassandra, home: Path, statement: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CQLSH_EXT, *cassandra.cqlsh_args, *flags, "-e", statement], cwd=home,
                          env=isolated_env(home), capture_output=True, text=True, timeout=300)


def json_lines(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


#: The payload queries both run, with what the generator says they answer (test_queries.py).
QUERIES = {
    "groups": "SELECT data.status, count(*), sum(data.amount), min(data.customer.name) FROM {t} "
              "GROUP BY data.status ALLOW FILTERING CONFIRM",
    "filter": "SELECT data.order, data.amount FROM {t} WHERE data.customer.tier = 'gold' "
              "AND data.amount > 200 ALLOW FILTERING CONFIRM",
    "like": "SELECT count(*) FROM {t} WHERE data LIKE '%\"status\": \"PAID\"%' ALLOW FILTERING CONFIRM",
    "nested": "SELECT id, extra['z'] FROM {t} WHERE extra['z'] IS NOT NULL ALLOW FILTERING CONFIRM",
    "undecodable": "SELECT id FROM {t} WHERE data IS UNDECODABLE ALLOW FILTERING CONFIRM",
    "typed": "SELECT id, d, v, tm, du, ip, l, m, data.status FROM {k}.typed WHERE data.status = 'PAID' "
             "ALLOW FILTERING CONFIRM",
}

#: The `typed` table's rows (id -> d, v, tm, du, ip, l, m, its blob's status): CQL values the
#: connector and Spark hold otherwise than the driver (test_queries.py), written by the driver.
TYPED_ROWS = {
    1: ("123456789012345678901234567890.123456789012345678901", 10 ** 40, 36000123456789,
        (1, 2, 3000000123), "::1", [], {}, "PAID"),
    2: ("12.5", -5, 0, (-1, -2, -3000), "10.0.0.1", [1, 2], {"a": 1}, "PAID"),
    3: (None, None, None, None, None, None, None, "PAID"),
    4: ("1", 1, 1, (0, 0, 1), "::2", [3], {"b": 2}, "NEW"),
}


def make_typed_table(cassandra, keyspace: str) -> None:
    from decimal import Decimal

    from cassandra.util import Duration, Time

    session = cassandra.session(keyspace)
    session.execute("CREATE TABLE typed (id int PRIMARY KEY, d decimal, v varint, tm time, du duration, "
                    "ip inet, l list<int>, m map<text, int>, data blob)")
    insert = session.prepare("INSERT INTO typed (id, d, v, tm, du, ip, l, m, data) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
    for i, (d, v, tm, du, ip, items, mapping, status) in TYPED_ROWS.items():
        document = json.dumps({"status": status}).encode()
        session.execute(insert, (i, None if d is None else Decimal(d), v, None if tm is None else Time(tm),
                                 du and Duration(*du), ip, items, mapping, document))
    session.shutdown()


#: The DESCRIBE PAYLOAD both run (the shell: every row, ALL), its WHERE's payload conditions the evaluator's.
DESCRIBE = "DESCRIBE PAYLOAD {t}.data WHERE data.status = 'PAID'"
#: More DESCRIBE PAYLOAD `runs` runs (after DESCRIBE), each compared with the shell's ALL read in one
#: stream and by worker processes (test_describe_payload.py).
DESCRIBES = ("DESCRIBE PAYLOAD {t}.data", "DESCRIBE PAYLOAD {t}.extra",
             "DESCRIBE PAYLOAD {t}.data WHERE data.status = 'PAID' AND data.customer.tier = 'silver'")


@dataclass
class DictionaryTable:
    """A table of values written with dictionaries (30 zstd with a trained one, 30 zlib with a
    preset one) and the dictionaries' files; `runs` reads it without them (test_dictionaries.py)."""

    qualified: str
    made: Made


def make_dictionary_table(cassandra, home: Path) -> DictionaryTable:
    (home / "dictionaries").mkdir()
    made = make(home / "dictionaries")
    ks = cassandra.create_keyspace("spark_dicts")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE orders (id int PRIMARY KEY, data blob)")
    insert = session.prepare("INSERT INTO orders (id, data) VALUES (?, ?)")
    for n in range(30):
        session.execute(insert, (n, made.zstd_values[n]))
        session.execute(insert, (100 + n, made.zlib_values[n]))
    session.shutdown()
    return DictionaryTable(f"{ks}.orders", made)


@dataclass
class ShellRuns:
    """The table, the statements file and the shell's runs of them."""

    table: Table
    home: Path
    statements: Path
    shell_stats: subprocess.CompletedProcess
    shell_queries: dict[str, subprocess.CompletedProcess]
    shell_describe: subprocess.CompletedProcess
    dictionaries: DictionaryTable


@dataclass
class Runs:
    table: Table
    spark: subprocess.CompletedProcess
    shell_stats: subprocess.CompletedProcess
    shell_queries: dict[str, subprocess.CompletedProcess]
    shell_describe: subprocess.CompletedProcess
    events: Path
    dictionaries: DictionaryTable
    #: Which Spark ran (SPARKS).
    version: str = "3.5"


@pytest.fixture(scope="session", params=SPARKS, ids=[f"spark{v}" for v in SPARKS])
def runs(request, cassandra, shell_runs) -> Runs:
    """One `cqlsh-ext spark` run of every statement the tests look at (-f, local[2], Spark's event
    log on), on each Spark, and the shell's runs of the same statements."""
    version = request.param
    events = shell_runs.home / f"events-{version}"
    events.mkdir()
    # The event log one plain file, as Spark 3.5 writes it (Spark 4's default: rolled, zstd).
    logged = ["--conf", "spark.eventLog.enabled=true", "--conf", f"spark.eventLog.dir={events}",
              "--conf", "spark.eventLog.rolling.enabled=false", "--conf", "spark.eventLog.compress=false"]
    spark = run_spark(cassandra, shell_runs.home, ["--master", "local[2]", "--output-format", "json", *logged,
                                                   "-f", str(shell_runs.statements)], spark=version)
    assert spark.returncode == 0, spark.stderr
    return Runs(shell_runs.table, spark, shell_runs.shell_stats, shell_runs.shell_queries,
                shell_runs.shell_describe, events, shell_runs.dictionaries, version)


@pytest.fixture(scope="session")
def shell_runs(cassandra, tmp_path_factory) -> ShellRuns:
    """One table, the statements `runs` runs, and the shell's runs of the same statements."""
    home = tmp_path_factory.mktemp("spark")
    table = make_table(cassandra, 400)
    statements = home / "statements.cql"
    select = f"SELECT data, extra FROM {table.qualified}"
    # Blobs in a UDT, a tuple, a map and a list: the demo's nested_blobs.
    from cqlsh_ext.demo.cli import load

    demo = cassandra.create_keyspace("spark_demo")
    session = cassandra.session()
    load(session, demo, 10)
    session.shutdown()
    nested = f"COMPRESSION STATS JSON {demo}.nested_blobs"
    stats = [f"COMPRESSION STATS JSON {select}", f"COMPRESSION STATS JSON DECODE ALL {table.qualified}",
             nested]
    make_typed_table(cassandra, table.keyspace)
    queries = {name: text.format(t=table.qualified, k=table.keyspace) for name, text in QUERIES.items()}
    describe = [f"{text.format(t=table.qualified)} JSON" for text in (DESCRIBE, *DESCRIBES)]
    dictionaries = make_dictionary_table(cassandra, home)
    without_dictionaries = f"COMPRESSION STATS JSON {dictionaries.qualified}"
    statements.write_text("".join(f"{s};\n" for s in [*stats, *queries.values(), *describe,
                                                        without_dictionaries]))
    # At the level the connector reads at (LOCAL_ONE): read units are priced at the reads' level, so
    # the shell's reports and Spark's are the same to the last figure.
    shell_stats = run_shell(cassandra, home, f"CONSISTENCY LOCAL_ONE; {stats[0]}; "
                            f"COMPRESSION STATS JSON PARALLEL 2 {select}; {stats[1]}; {nested}")
    assert shell_stats.returncode == 0, shell_stats.stderr
    shell_queries = {name: run_shell(cassandra, home, text, "--output-format", "json")
                     for name, text in queries.items()}
    for proc in shell_queries.values():
        assert proc.returncode == 0, proc.stderr
    shell_describe = run_shell(cassandra, home, f"{DESCRIBE.format(t=table.qualified)} ALL JSON")
    assert shell_describe.returncode == 0, shell_describe.stderr
    return ShellRuns(table, home, statements, shell_stats, shell_queries, shell_describe, dictionaries)


#: What `read_only_run` runs: on the dictionaries' table its statements (test_dictionaries.py), on
#: `runs`' table a payload SELECT the read-only rule allows (test_read_only.py).
DICTIONARY_STATEMENTS = ("COMPRESSION STATS JSON {d}",
                         "SELECT count(*) FROM {d} WHERE data.status = 'PAID' ALLOW FILTERING CONFIRM")
READ_ONLY_SELECT = "SELECT id, data.amount FROM {t} WHERE data.status = 'PAID' ALLOW FILTERING CONFIRM"


@pytest.fixture(scope="session")
def read_only_run(cassandra, shell_runs) -> subprocess.CompletedProcess:
    """One `cqlsh-ext spark --read-only` run with the dictionaries named (two modules' runs until
    then: a Spark start saved): DICTIONARY_STATEMENTS, then READ_ONLY_SELECT."""
    made = shell_runs.dictionaries.made
    home = shell_runs.home / "read-only"
    home.mkdir()
    statements = home / "statements.cql"
    statements.write_text("".join(f"{text};\n" for text in (
        *(s.format(d=shell_runs.dictionaries.qualified) for s in DICTIONARY_STATEMENTS),
        READ_ONLY_SELECT.format(t=shell_runs.table.qualified))))
    named = ["--dictionary", str(made.zstd_file), "--dictionary", str(made.zlib_file)]
    spark = run_spark(cassandra, home, ["--read-only", "--master", "local[2]", "--output-format", "json",
                                        *named, "-f", str(statements)])
    assert spark.returncode == 0, spark.stderr
    return spark
