"""A stored row larger than the answer's cap, even with every value cut as hard as a first row is cut
(issue 105): `query` answers it cut inside (its values shown cut, said in `values_cut` and
`truncated`), and its cursor moves past it, every row answered once, instead of an answer of 0 rows
whose cursor names the same row forever. Against the real Cassandra, through the SDK's client over
stdio."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytestmark = pytest.mark.server

#: Rows of each table; a row of the narrow table has NARROW columns of CHARS characters (~30 KB
#: whole; each value cut to the hardest of the usual cuts, 100 characters, it still does not fit the
#: default cap of 10,000 bytes beside its columns' names); the wide table's WIDE columns' names alone
#: fill an answer capped at WIDE_CAP.
ROWS, NARROW, CHARS, WIDE, WIDE_CAP = 4, 30, 1000, 200, 24_000


def _table(cassandra, name: str, columns: int) -> str:  # type: ignore[no-untyped-def]
    """ks.`name`: ROWS rows (k = 0 ..) in one partition, each of `columns` text columns of CHARS
    characters ("k:cN:xxx...")."""
    ks = cassandra.create_keyspace("mcp_over_cap")
    session = cassandra.session(ks)
    names = [f"c{i}" for i in range(columns)]
    session.execute(f"CREATE TABLE {name} (p int, k int, {', '.join(f'{c} text' for c in names)}, "
                    "PRIMARY KEY (p, k))")
    insert = session.prepare(f"INSERT INTO {name} (p, k, {', '.join(names)}) VALUES (0, ?, "
                             f"{', '.join('?' for _ in names)})")
    for k in range(ROWS):
        session.execute(insert, (k, *(f"{k}:{c}:" + "x" * CHARS for c in names)))
    session.shutdown()
    return f"{ks}.{name}"


@pytest.fixture(scope="module")
def narrow(cassandra) -> Iterator[str]:  # type: ignore[no-untyped-def]
    yield _table(cassandra, "narrow", NARROW)


@pytest.fixture(scope="module")
def wide(cassandra) -> Iterator[str]:  # type: ignore[no-untyped-def]
    yield _table(cassandra, "wide", WIDE)


def _walk(server, statement: str, **arguments: object) -> list[dict[str, object]]:  # type: ignore[no-untyped-def]
    """Every answer of `statement`, each cut answer's cursor followed; a walk of more answers than
    the table has rows (and one more) fails: a cursor that does not move on."""
    answers = [server.call("query", statement=statement, **arguments).data]
    cursors: list[str] = []
    while "cursor" in answers[-1]:
        cursor = answers[-1]["cursor"]
        assert cursor not in cursors and len(answers) <= ROWS, answers[-1]["cut"]
        cursors.append(cursor)
        answers.append(server.call("query", statement=statement, cursor=cursor, **arguments).data)
    return answers


def test_a_row_larger_than_the_cap_is_answered_cut_and_the_cursor_moves_past(serve, narrow: str) -> None:
    server = serve()
    seen: list[int] = []
    for answer in _walk(server, f"SELECT * FROM {narrow} WHERE p = 0"):
        assert answer["count"] == len(answer["rows"]) >= 1, answer["cut"]
        for row in answer["rows"]:
            seen.append(row["k"])
            shown = row["c7"]
            assert shown.startswith(f"{row['k']}:c7:x") and shown.endswith("…") and len(shown) < 100
        assert "value_size" in answer["truncated"]
        assert ("max_bytes" in answer["truncated"]) == ("cursor" in answer)
        assert any(cut.startswith("rows[0].c") and f"of {CHARS + 5:,} characters" in cut
                   for cut in answer["values_cut"]), answer["values_cut"]
    assert seen == list(range(ROWS))


def test_a_row_whose_names_alone_fill_the_cap_is_left_out_said_and_passed(serve, wide: str) -> None:
    server = serve()
    answers = _walk(server, f"SELECT * FROM {wide} WHERE p = 0", max_bytes=WIDE_CAP)
    assert [answer["count"] for answer in answers] == [0] * len(answers)
    assert len(answers) == ROWS + 1 and "cursor" not in answers[-1]
    for answer in answers[:-1]:
        assert "max_bytes" in answer["truncated"]
        assert str(answer["cut"]).startswith(f"the first of the rows alone is more than {WIDE_CAP:,} bytes, "
                                             "the answer's cap, even with every value cut: it is left out, "
                                             "and the cursor continues after it")
