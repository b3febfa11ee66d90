"""The read-only gate of `cqlsh-ext mcp`, alone (no server): every write attempt of writes.py
refused in one line, every read let through with its kind; the tools' name arguments cannot carry
a statement; an answer takes rows up to the limit and the byte cap, measured on the JSON sent."""

from __future__ import annotations

import json

import pytest

from cqlsh_ext.mcp_server import gate
from cqlsh_ext.mcp_server.answers import BYTES, LIMIT, Taken, cut_text
from cqlsh_ext.mcp_server.tools import Invalid, names

from .writes import READS, WRITES

FIELDS = {"t": "ks.orders", "ks": "ks", "dir": "/tmp/nowhere"}


@pytest.fixture(scope="module", autouse=True)
def cqlsh_rules() -> None:
    """cqlsh's rule set with our commands, as cqlsh's main() sets it up before the shell runs."""
    from cqlsh_ext.upstream import seams

    cqlshmain = seams.import_cqlshmain(None)
    if cqlshmain.cqlruleset is None:
        from cqlshlib import cql3handling

        from cqlsh_ext import shell

        shell.register_commands()
        cqlshmain.setup_cqlruleset(cql3handling)


@pytest.mark.parametrize("attempt", WRITES)
def test_a_write_attempt_is_refused_in_one_line(attempt: str) -> None:
    with pytest.raises(gate.Refused) as refused:
        gate.check(attempt.format(**FIELDS))
    line = str(refused.value)
    # A write is refused as one; what is no statement at all is said to be a syntax error.
    assert line.startswith(("refused: ", "syntax error")) and "\n" not in line, line


@pytest.mark.parametrize("read", READS)
def test_a_read_passes_and_is_run_alone(read: str) -> None:
    text = read.format(**FIELDS)
    checked = gate.check(text)
    # The shell is handed cqlsh's tokens of exactly one statement: the one typed.
    words = [str(token[1]).upper() for token in checked.tokens if token[0] != "endtoken"]
    assert words[0] == checked.kind.split()[0] or (words[0] == "DESC" and checked.kind == gate.DESCRIBE)
    assert checked.tokens[-1][0] == "endtoken"


def test_kinds_read_as_written() -> None:
    kinds = {read: gate.check(read.format(**FIELDS)).kind for read in READS}
    assert kinds["DESCRIBE PAYLOAD {t}.data SAMPLE 5"] == gate.DESCRIBE_PAYLOAD
    assert kinds["DESC KEYSPACES"] == gate.DESCRIBE
    assert kinds["COMPRESSION ADVISE SAMPLE 10 {t}"] == "COMPRESSION ADVISE"
    assert kinds["INSPECT JSON SELECT data FROM {t} WHERE id = 1"] == gate.INSPECT
    assert {kinds[r] for r in READS[:7]} == {gate.SELECT}


def test_a_tool_taking_selects_refuses_other_reads() -> None:
    with pytest.raises(gate.Refused, match="this tool takes one SELECT, not DESCRIBE"):
        gate.check("DESCRIBE TABLES", {gate.SELECT})
    with pytest.raises(gate.Refused, match="no statement"):
        gate.check("  -- nothing but a comment", {gate.SELECT})


@pytest.mark.parametrize("given", ["ks.t; DROP TABLE ks.t", "ks.t\nDROP TABLE ks.t", "ks.t WHERE 1 = 1",
                                   "ks.'t'", "ks..t", "ks.t.", ".t", "ks.t.c", "ks t", 7])
def test_a_table_argument_is_names_only(given: object) -> None:
    with pytest.raises(Invalid):
        names(given, (1, 2), "table")


def test_names_are_spelt_as_the_schema_spells_them() -> None:
    assert names('Shop."Orders"', (2,), "table") == ["shop", "Orders"]
    assert names('ks.t."Data; DROP TABLE x"', (3,), "column") == ["ks", "t", "Data; DROP TABLE x"]
    assert names("ks", (1,), "keyspace") == ["ks"]


def _rows(n: int, width: int = 10) -> list[dict[str, object]]:
    return [{"n": i, "pad": "x" * width} for i in range(n)]


def test_an_answer_is_cut_at_the_limit_and_says_so() -> None:
    taken = Taken(limit=3, max_bytes=1 << 20)
    assert all(taken.take(row) for row in _rows(3))  # exactly the limit: not cut
    assert taken.cut is None and len(taken.items) == 3
    assert not taken.take({"n": 3})
    assert taken.cut == LIMIT and len(taken.items) == 3
    assert cut_text(taken, "rows").startswith("at the limit of 3 rows")


def test_an_answer_is_cut_at_the_byte_cap_before_the_row_that_would_pass_it() -> None:
    taken = Taken(limit=None, max_bytes=1024)
    rows = _rows(100, width=100)
    kept = 0
    while taken.take(rows[kept]):
        kept += 1
    sizes = [len(json.dumps(row, ensure_ascii=False).encode()) + 1 for row in rows]
    assert taken.cut == BYTES and taken.items == rows[:kept] and 0 < kept < 100
    assert taken.size == sum(sizes[:kept]) <= 1024 < sum(sizes[:kept + 1])
    # A single row larger than the cap: none taken, and the answer says why.
    alone = Taken(limit=None, max_bytes=1024)
    assert not alone.take({"pad": "x" * 2000})
    assert alone.items == []
    assert cut_text(alone, "rows").startswith("the first of the rows alone is more than")
