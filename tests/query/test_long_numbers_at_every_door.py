"""Numbers at their edges, at every door (docs/queries.md, "Numbers"): a document's integer of any
length within the value's budget is an integer (its paths found, compared exactly, exported as
written), a number literal past the doubles or with 100,001 digits has one answer or one refusal
on every door, and an IN list of 60,000 literals against integers of thousands of digits costs
what it costs against small ones (the work does not grow with the literals times the digits).

The oracle is the documents as the test wrote them: their text, their numbers as Python reads
them once its int-string limit is lifted here (the tests' own process), and which row holds what."""

from __future__ import annotations

import gzip
import json
import os
import re
import resource
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from shell_runner import CQLSH_EXT, api, ext, isolated_env


def long(k: int = 0) -> str:
    """An integer of 5,001 digits, past Python's 4,300 (plus k, k < 9), as text: this test's process
    keeps Python's limit, which other tests of it count on."""
    return "12345678901234567890" * 250 + str(1 + k)


#: An integer under Python's limit.
UNDER = int("7" * 4000)
#: ck -> the document; `f` holds the floats, `n` the integers, `s` a string beside them.
DOCUMENTS = {
    0: f'{{"n": {long()}, "s": "ok", "f": 1.5}}',
    1: f'{{"n": {long(1)}, "s": "ok", "f": 2.5}}',
    2: f'{{"n": -{long()}, "s": "ok", "f": -Infinity}}',
    3: f'{{"n": {UNDER}, "s": "ok", "f": Infinity}}',
    4: '{"n": 12, "s": "ok", "f": 0.5}',
}
#: A number literal past what a payload condition compares, and the one line that says so.
TOO_LONG = "9" * 100_001
REFUSED = "a number of 100,001 digits: a payload condition compares numbers of at most 100,000 digits"


@contextmanager
def whole() -> Iterator[None]:
    """Python's int-string limit lifted while the test reads integers of 5,001 digits (an MCP
    client's JSON), then put back."""
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(before)


@pytest.fixture(scope="module")
def table(cassandra) -> str:  # type: ignore[no-untyped-def]
    """ks.docs: DOCUMENTS, as text and gzip (pk 0 and 1, the same ck)."""
    ks = cassandra.create_keyspace("long_numbers")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE docs (pk int, ck int, data blob, big varint, PRIMARY KEY (pk, ck))")
    insert = session.prepare("INSERT INTO docs (pk, ck, data) VALUES (?, ?, ?)")
    for ck, text in DOCUMENTS.items():
        session.execute(insert, (0, ck, text.encode()))
        session.execute(insert, (1, ck, gzip.compress(text.encode(), mtime=0)))
    session.execute(f"UPDATE docs SET big = {long()} WHERE pk = 0 AND ck = 0")  # a varint of 5,001 digits
    session.shutdown()
    return f"{ks}.docs"


def _cks(rows: list[dict[str, Any]]) -> list[int]:
    return sorted(row["ck"] for row in rows)


def _shell_rows(cassandra, home: Path, statement: str) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    run = ext(cassandra, home, "--output-format", "json", "-e", statement)
    assert run.returncode == 0, run.stderr
    return [json.loads(line) for line in run.stdout.splitlines() if line.strip()]


def _shell_error(cassandra, home: Path, statement: str) -> str:  # type: ignore[no-untyped-def]
    run = ext(cassandra, home, "-e", statement)
    said = [line for line in run.stderr.splitlines() if line.strip() and not line.startswith(
        ("Warning: Using a password", "Recommendation: use the credentials"))]
    assert run.returncode != 0 and len(said) == 1, run.stderr
    return said[0]


@pytest.fixture(scope="module")
def mcp_servers(cassandra, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:  # type: ignore[no-untyped-def]
    """The MCP server on stdio and on HTTP (a client of it), each as `call(tool, **arguments)`:
    started once for the module's tests (a pair a test until then), as a client keeps its server."""
    from contextlib import ExitStack

    from tests.mcp_server.harness import HttpMcpServer, McpServer, write_credentials

    home = tmp_path_factory.mktemp("mcp")
    write_credentials(home, cassandra.username, cassandra.password)
    with ExitStack() as stack:
        stdio = stack.enter_context(McpServer([cassandra.host, str(cassandra.port)], home))
        http = stack.enter_context(HttpMcpServer([cassandra.host, str(cassandra.port)], home))
        yield {"stdio": stdio, "http": stack.enter_context(http.client())}


# ------------------------------------------------------------------ integers of any length


def test_an_integer_past_pythons_digits_is_an_integer_at_every_door(cassandra, table: str, tmp_path: Path,
                                                                     mcp_servers: dict[str, Any]) -> None:
    """Its paths are found, it compares exactly, nothing calls it undecodable, and each file
    writes it as the document does: the shell, its exports, the API, MCP on both transports."""
    asked = {f"SELECT ck FROM {table} WHERE data.s = 'ok' ALLOW FILTERING": [0, 0, 1, 1, 2, 2, 3, 3, 4, 4],
             f"SELECT ck FROM {table} WHERE data.n IS NULL ALLOW FILTERING": [],
             f"SELECT ck FROM {table} WHERE data.n = {long()} ALLOW FILTERING": [0, 0],
             f"SELECT ck FROM {table} WHERE data.n > {long()} ALLOW FILTERING": [1, 1],
             f"SELECT ck FROM {table} WHERE data.n < -{long(-1)} ALLOW FILTERING": [2, 2],
             f"SELECT ck FROM {table} WHERE data.n IN (12, {long(1)}, 1.5) ALLOW FILTERING": [1, 1, 4, 4],
             f"SELECT ck FROM {table} WHERE data IS UNDECODABLE ALLOW FILTERING": []}
    for statement, want in asked.items():
        assert _cks(_shell_rows(cassandra, tmp_path, statement)) == want, statement
    proc = api(cassandra, tmp_path, "import json\n"
               "for statement in json.loads(argv[0]):\n"
               "    print(json.dumps(sorted(row['ck'] for row in db.query(statement))))\n",
               json.dumps(list(asked)))
    assert [json.loads(line) for line in proc.stdout.splitlines()] == list(asked.values()), proc.stderr
    with whole():
        for name, server in mcp_servers.items():
            for statement, want in asked.items():
                assert _cks(server.call("query", statement=statement, limit=100).data["rows"]) == want, \
                    (name, statement)
            # An integer past 4,300 digits (a document's, a varint's) as the string of its digits,
            # said in values_cut: the SDK's client (pydantic-core's parser) refuses the whole
            # message holding such a number, as Python's json refuses the text.
            answer = server.call("query", statement=f"SELECT ck, data.n, big FROM {table} WHERE pk = 0",
                                 max_bytes=1 << 20).data
            got = {row["ck"]: (row["data.n"], row["big"]) for row in answer["rows"]}
            numbers = {ck: json.loads(text)["n"] for ck, text in DOCUMENTS.items()}
            assert got == {ck: (str(n) if len(str(n).lstrip("-")) > 4300 else n, long() if ck == 0 else None)
                           for ck, n in numbers.items()}, name
            said = ("sent as a string of them (the MCP client's JSON parser refuses a number of more "
                    "than 4,300 digits)")
            assert answer["values_cut"] == [f"rows[0].data.n: an integer of 5,001 digits {said}",
                                            f"rows[0].big: an integer of 5,001 digits {said}",
                                            f"rows[1].data.n: an integer of 5,001 digits {said}",
                                            f"rows[2].data.n: an integer of 5,001 digits {said}"], name
    # As written: the API's column of these integers is JSON text (no Arrow number holds them:
    # docs/api.md), the document's digits; the files' text holds the document's digits.
    written = {ck: re.search(r'"n": (-?[0-9]+)', text).group(1)  # type: ignore[union-attr]
               for ck, text in DOCUMENTS.items()}
    proc = api(cassandra, tmp_path, "import json\n"
               "print(json.dumps({row['ck']: row['data.n'] for row in db.query(argv[0])}))\n",
               f"SELECT ck, data.n FROM {table} WHERE pk = 1 AND ck IN (0, 1, 2, 3)")
    answered = {int(ck): n for ck, n in json.loads(proc.stdout).items()}
    assert answered == {ck: written[ck] for ck in range(4)}, proc.stderr
    select = f"SELECT ck, data.n FROM {table} WHERE pk = 1"
    for ending in ("jsonl", "csv", "parquet"):
        target = tmp_path / f"long.{ending}"
        run = ext(cassandra, tmp_path, "-e", f"COPY ({select}) TO '{target}'")
        assert run.returncode == 0, run.stderr
        assert _written(target) == written, ending


def _written(target: Path) -> dict[int, str]:
    """ck -> the digits a file wrote for data.n, as text."""
    if target.suffix == ".jsonl":
        return {int(m.group(1)): m.group(2) for m in
                re.finditer(r'\{"ck": (\d+), "data\.n": (-?[0-9]+)\}', target.read_text())}
    if target.suffix == ".csv":
        lines = target.read_text().splitlines()
        assert lines[0] == "ck,data.n"
        return {int(line.split(",")[0]): line.split(",")[1] for line in lines[1:]}
    import pyarrow.parquet as pq

    read = pq.read_table(target).to_pylist()
    return {row["ck"]: row["data.n"] for row in read}  # the JSON text of each value (a marked string)


# ------------------------------------------------------------------ literals past the numbers


def test_a_literal_past_the_doubles_or_the_digits_has_one_answer_or_one_refusal(
        cassandra, table: str, tmp_path: Path, mcp_servers: dict[str, Any]) -> None:
    """`= -1e999999999` is the number it says: among the floats it is -Infinity, among the integers
    none; a literal of 100,001 digits is refused in one line: the shell, the API (written and
    bound), MCP on both transports, the same; the polars source as polars compares."""
    where = f"SELECT ck FROM {table} WHERE"
    answered = {f"{where} data.f = -1e999999999 ALLOW FILTERING": [2, 2],
                f"{where} data.n = -1e999999999 ALLOW FILTERING": [],
                f"{where} data.f >= 1e9999999999 ALLOW FILTERING": [3, 3],
                f"{where} data.n < 1e999999999999 ALLOW FILTERING": [0, 0, 1, 1, 2, 2, 3, 3, 4, 4],
                f"{where} data.n > -1e-999999999 ALLOW FILTERING": [0, 0, 1, 1, 3, 3, 4, 4]}
    refused = f"{where} data.n = {TOO_LONG} ALLOW FILTERING"
    for statement, want in answered.items():
        assert _cks(_shell_rows(cassandra, tmp_path, statement)) == want, statement
    assert _shell_error(cassandra, tmp_path, refused) == f"payload query: {REFUSED}"
    proc = api(cassandra, tmp_path, "import json\n"
               "from decimal import Decimal\n"
               "for statement in json.loads(argv[0]):\n"
               "    print(json.dumps(sorted(row['ck'] for row in db.query(statement))))\n"
               "bound = argv[1].replace('-1e999999999', '?')\n"
               "print(json.dumps(sorted(row['ck'] for row in db.query(bound, [Decimal('-1e999999999')]))))\n"
               "marked = argv[2].replace(argv[3], '?')\n"
               "for statement, params in ((argv[2], None), (marked, [int(argv[3])])):\n"
               "    try:\n"
               "        db.query(statement, params)\n"
               "    except cqlsh_ext.Error as err:\n"
               "        print(err)\n",
               json.dumps(list(answered)), list(answered)[0], refused, TOO_LONG,
               env={"PYTHONINTMAXSTRDIGITS": "0"})
    lines = proc.stdout.splitlines()
    found = len(answered) + 1
    assert [json.loads(line) for line in lines[:found]] == [*answered.values(), [2, 2]], proc.stderr
    assert lines[found:] == [f"payload query: {REFUSED}", f"parameter 1 (data.n =): {REFUSED}"]
    for name, server in mcp_servers.items():
        for statement, want in answered.items():
            assert _cks(server.call("query", statement=statement, limit=100).data["rows"]) == want, \
                (name, statement)
        assert server.call("query", statement=refused).error == f"payload query: {REFUSED}", name
    _polars_alike(cassandra, table, tmp_path)


def _polars_alike(cassandra, table: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import polars as pl

    import cqlsh_ext

    rc = tmp_path / "cqlshrc"
    rc.write_text("")
    with cqlsh_ext.connect(cassandra.host, cassandra.port, username=cassandra.username,
                           password=cassandra.password, cqlshrc=str(rc)) as db:
        source = cqlsh_ext.scan(db, f"SELECT ck, data.f FROM {table}")
        f = pl.col("data.f")
        for predicate, want in ((f == float("-inf"), [2, 2]), (f > 1e308, [3, 3]), (f < -1e308, [2, 2])):
            assert sorted(source.filter(predicate).collect()["ck"].to_list()) == want, str(predicate)


# ------------------------------------------------------------------ the work does not grow


#: The CPU seconds a child may spend at most (RLIMIT_CPU): ten times what either size takes here.
CPU_LIMIT = 60


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT, CPU_LIMIT))


@pytest.fixture(scope="module")
def sized(cassandra) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Two tables of 8 documents each: `long` holds integers of 4,000 and 5,000 digits, `short` the
    same documents with two-digit integers."""
    ks = cassandra.create_keyspace("in_lists")
    session = cassandra.session(ks)
    for name, numbers in (("long", [str(UNDER - k) for k in range(4)] + [long(k) for k in range(4)]),
                          ("short", [str(n) for n in range(10, 18)])):
        session.execute(f"CREATE TABLE {name} (id int PRIMARY KEY, data blob)")
        for key, number in enumerate(numbers):
            session.execute(f"INSERT INTO {name} (id, data) VALUES (%s, %s)",
                            (key, f'{{"n": {number}, "s": "ok"}}'.encode()))
    session.shutdown()
    return {"long": f"{ks}.long", "short": f"{ks}.short"}


def _in_list(table: str, count: int, literal: str | None = None) -> str:
    literals = [literal or f"{k}.5" for k in range(count)]
    return f"SELECT id FROM {table} WHERE data.n IN ({','.join(literals)}) ALLOW FILTERING"


def _shell_cpu(cassandra, home: Path, statement: str) -> float:  # type: ignore[no-untyped-def]
    """The CPU seconds (user and system, its workers included) of a shell that runs `statement`."""
    script = home / "in.cql"
    script.write_text(statement + ";\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([CQLSH_EXT, *cassandra.cqlsh_args, "-f", str(script)], capture_output=True,
                          text=True, env=isolated_env(home), preexec_fn=_limited, timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert proc.returncode == 0 and "(0 rows)" in proc.stdout, proc.stderr[-500:]
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _api_cpu(cassandra, home: Path, statement: str) -> float:  # type: ignore[no-untyped-def]
    """The CPU seconds the API's process spends on `statement` (its query alone)."""
    script = home / "in.cql"
    script.write_text(statement)
    proc = api(cassandra, home, "import pathlib, resource, time\n"
               f"resource.setrlimit(resource.RLIMIT_CPU, ({CPU_LIMIT}, {CPU_LIMIT}))\n"
               "statement = pathlib.Path(argv[0]).read_text()\n"
               "started = time.process_time()\n"
               "assert list(db.query(statement)) == []\n"
               "print(time.process_time() - started)\n", str(script), timeout=600)
    assert proc.returncode == 0, proc.stderr[-500:]
    return float(proc.stdout)


def _process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def test_an_in_list_against_long_integers_costs_what_it_costs_against_short_ones(
        cassandra, sized: dict[str, str], tmp_path: Path) -> None:
    """60,000 decimal literals (MCP: 2,000, within the 4,096 tokens it parses) against integers of
    4,000 and 5,000 digits, in a child process of each door: its CPU within three times (and 3 s)
    of the same list against two-digit integers, where before it grew with the literals times the
    digits (the shell's 20,000 took 12.9 s on one such row)."""
    for door, cpu in (("shell", _shell_cpu), ("API", _api_cpu)):
        short, long = (cpu(cassandra, tmp_path, _in_list(sized[size], 60_000)) for size in ("short", "long"))
        assert long <= 3 * short + 3, (door, short, long)
    from tests.mcp_server.harness import McpServer, server_pid, server_pids, write_credentials

    write_credentials(tmp_path / "mcp", cassandra.username, cassandra.password)
    running = frozenset(server_pids())  # the module's own servers (mcp_servers), when they run
    with McpServer([cassandra.host, str(cassandra.port)], tmp_path / "mcp") as server:
        pid = server_pid(besides=running)
        spent = {}
        for size in ("short", "long"):
            before = _process_cpu(pid)
            answer = server.call("query", statement=_in_list(sized[size], 2_000), timeout=600)
            spent[size] = _process_cpu(pid) - before
            assert answer.data["rows"] == [], answer
        assert spent["long"] <= 3 * spent["short"] + 3, spent


def test_the_decimal_literals_of_an_in_list_meet_a_long_integer_exactly(cassandra, sized: dict[str, str],
                                                                        tmp_path: Path) -> None:
    """Made a set, an IN list still says what each literal says: an integral decimal equals the
    integer it is (`7...7.000` and `1.2...1E+0`), a fraction next to it does not."""
    statement = (f"SELECT id FROM {sized['long']} WHERE data.n IN ({UNDER - 1}.000, {Decimal(long(2)):E}, "
                 f"{UNDER}.5, 0.5) ALLOW FILTERING")
    assert sorted(row["id"] for row in _shell_rows(cassandra, tmp_path, statement)) == [1, 6]
