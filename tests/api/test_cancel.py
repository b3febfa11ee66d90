"""Cancel from anywhere, on the real server: `answer.close()` from another thread while to_arrow(),
to_pandas(), to_polars() or a loop over records() reads (at a count of batches or rows, the reader
held there until close() returned, or not), a RecordBatchReader closed or dropped half-read, an
iterator dropped; over the server's pages, a scan by token ranges and a statement read as written.
Each reading ends cleanly: nothing raised in either thread, fewer rows than the table's, each one
of the table's rows once, and the notes say `stopped` (output closed) with `exact` False; so does
MCP's answer cut at its call's limit."""

from __future__ import annotations

import gc
import gzip
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cassandra.concurrent import execute_concurrent_with_args
from mcp_server.harness import McpServer, write_credentials
from waiting import DEADLINE

import cqlsh_ext
from cqlsh_ext.render.arrow_batches import ArrowBatches

pytestmark = pytest.mark.server

pytest.importorskip("pyarrow")

#: Rows in the table (pk: 100 partitions), and rows a page and a batch.
ROWS, PAGE = 24_000, 500
READINGS = {
    "server pages": "SELECT pk, ck, data.n FROM {t}",
    "scan": "SELECT pk, ck, data.n FROM {t} WHERE data.n >= 0 ALLOW FILTERING",
    "as written": "SELECT pk, ck FROM {t}",
}


@pytest.fixture(scope="module")
def table(cassandra) -> str:
    ks = cassandra.create_keyspace("cancel")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE t (pk int, ck int, data blob, PRIMARY KEY (pk, ck))")
    insert = session.prepare("INSERT INTO t (pk, ck, data) VALUES (?, ?, ?)")
    rows = [(ck % 100, ck, gzip.compress(json.dumps({"n": ck}).encode())) for ck in range(ROWS)]
    execute_concurrent_with_args(session, insert, rows, concurrency=64, raise_on_first_error=True)
    session.shutdown()
    return f"{ks}.t"


class CloseAt:
    """close() from a thread of its own once the reader has `tick`ed `at` times (a batch converted,
    a row taken); `hold`: the reader waits there until close() has returned (close() then lands
    between two batches), else only until the closing thread is about to call close() (it then
    lands wherever the reader is, most often inside its next page's read; a reader that did not
    wait at all could read the whole table before a loaded machine ran the closing thread).
    What either thread raised is kept in `raised`."""

    def __init__(self, answer: cqlsh_ext.QueryAnswer, at: int, hold: bool) -> None:
        self.answer, self.at, self.hold = answer, at, hold
        self.count = 0
        self.reached, self.closing, self.closed = threading.Event(), threading.Event(), threading.Event()
        self.raised: list[str] = []
        self.thread = threading.Thread(target=self._close)
        self.thread.start()

    def _close(self) -> None:
        try:
            assert self.reached.wait(DEADLINE), "the reader never reached its count"
            self.closing.set()
            self.answer.close()
        except BaseException as err:  # noqa: BLE001 - what the closing thread raised is the finding
            self.raised.append(f"close(): {err!r}")
        finally:
            self.closed.set()

    def tick(self) -> None:
        self.count += 1
        if self.count == self.at:
            self.reached.set()
            if self.hold:
                assert self.closed.wait(DEADLINE), "close() never returned"
            else:
                assert self.closing.wait(DEADLINE), "the closing thread never ran"

    def read(self, reader: Callable[[], Any]) -> Any:
        """reader() in this thread (what it returned, or None and what it raised), the closer joined."""
        try:
            got = reader()
        except BaseException as err:  # noqa: BLE001
            self.raised.append(f"reader: {err!r}")
            got = None
        self.reached.set()  # (a reader that ended first lets the closer go)
        self.thread.join(DEADLINE)
        return got


@pytest.fixture
def ticking(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[CloseAt]]:
    """Each Arrow batch converted ticks the CloseAt in force (the last one listed)."""
    current: list[CloseAt] = []
    convert = ArrowBatches.convert

    def counted(self: ArrowBatches, batch: Any) -> Any:
        made = convert(self, batch)
        if current:
            current[-1].tick()
        return made

    monkeypatch.setattr(ArrowBatches, "convert", counted)
    yield current


def keys_of(rows: list[dict[str, Any]]) -> list[tuple[int, int]]:
    return [(row["pk"], row["ck"]) for row in rows]


def batch_keys(batches: list[Any]) -> list[tuple[int, int]]:
    return [key for b in batches for key in zip(b.column("pk").to_pylist(), b.column("ck").to_pylist(),
                                                strict=True)]


def assert_cut(answer: cqlsh_ext.QueryAnswer, keys: list[tuple[int, int]], raised: list[str],
               how: str) -> None:
    """Nothing raised; fewer rows than the table's, each a row of it, once; the notes say cut."""
    assert raised == [], how
    assert 0 < len(keys) < ROWS, (how, len(keys))
    assert len(set(keys)) == len(keys) and all(ck % 100 == pk and 0 <= ck < ROWS for pk, ck in keys), how
    notes = answer.notes
    assert notes["stopped"] == "output closed" and notes["exact"] is False, (how, notes)


def test_close_from_another_thread_during_to_arrow_20_times(db, table: str, ticking: list[CloseAt]) -> None:
    runs = 0
    for name, statement in READINGS.items():
        for at in range(1, 8):
            if runs == 20:
                break
            runs += 1
            answer = db.query(statement.format(t=table), page_size=PAGE)
            closer = CloseAt(answer, at, hold=runs % 2 == 0)
            ticking.append(closer)
            got = closer.read(answer.to_arrow)
            keys = list(zip(got.column("pk").to_pylist(), got.column("ck").to_pylist(), strict=True)) \
                if got is not None else []
            assert_cut(answer, keys, closer.raised, f"{name}, closed at batch {at}")
            assert len(keys) >= at * PAGE or name == "scan"  # (a scan's batches are its matches, fewer)
    assert runs == 20
    # The connection reads on at once, whole.
    assert sum(1 for _ in db.query(READINGS["as written"].format(t=table), page_size=5000)) == ROWS


@pytest.mark.parametrize("collect", ["to_pandas", "to_polars"])
def test_close_from_another_thread_during_to_pandas_and_to_polars(db, table: str, ticking: list[CloseAt],
                                                                 collect: str) -> None:
    for run, (name, statement) in enumerate(READINGS.items()):
        answer = db.query(statement.format(t=table), page_size=PAGE)
        closer = CloseAt(answer, 2, hold=run % 2 == 0)
        ticking.append(closer)
        frame = closer.read(getattr(answer, collect))
        keys = list(zip(list(frame["pk"]), list(frame["ck"]), strict=True)) if frame is not None else []
        assert_cut(answer, [(int(pk), int(ck)) for pk, ck in keys], closer.raised, f"{collect}, {name}")


def test_close_from_another_thread_while_records_are_taken(db, table: str) -> None:
    for run, (name, statement) in enumerate(READINGS.items()):
        for hold in (False, True):
            answer = db.query(statement.format(t=table), page_size=PAGE)
            closer = CloseAt(answer, PAGE + 7 * (run + 1), hold=hold)
            rows: list[dict[str, Any]] = []

            def take(answer: cqlsh_ext.QueryAnswer = answer, closer: CloseAt = closer,
                     rows: list[dict[str, Any]] = rows) -> None:
                for row in answer.records():
                    rows.append(row)
                    closer.tick()

            closer.read(take)
            assert_cut(answer, keys_of(rows), closer.raised, f"records(), {name}, held {hold}")
            if hold:  # closed between two rows: none given after it
                assert len(rows) == closer.at


@pytest.mark.parametrize("name", list(READINGS))
def test_a_reader_closed_or_dropped_half_read_ends_the_reading(db, table: str, name: str) -> None:
    statement = READINGS[name].format(t=table)
    for ending in ("close()", "with", "dropped", "iterator dropped"):
        answer = db.query(statement, page_size=PAGE)
        if ending == "iterator dropped":
            rows = iter(answer)
            taken = [next(rows) for _ in range(PAGE + 3)]
            del rows
            keys = keys_of(taken)
        elif ending == "with":
            with answer.to_reader() as reader:
                batches = [reader.read_next_batch() for _ in range(2)]
            keys = batch_keys(batches)
        else:
            reader = answer.to_reader()
            batches = [reader.read_next_batch() for _ in range(2)]
            if ending == "close()":
                reader.close()
            else:
                del reader
            keys = batch_keys(batches)
        gc.collect()
        assert_cut(answer, keys, [], f"{name}, {ending}")


def test_mcp_s_answer_cut_at_its_limit_says_stopped_and_not_exact(cassandra, table: str,
                                                                  tmp_path: Path) -> None:
    write_credentials(tmp_path, cassandra.username, cassandra.password)
    with McpServer([cassandra.host, str(cassandra.port)], tmp_path) as server:
        answer = server.call("query", statement=READINGS["scan"].format(t=table), limit=3).data
    assert answer["count"] == 3 and answer["cut"].startswith("at the limit of 3 rows")
    assert answer["reading"]["stopped"] == "output closed" and answer["reading"]["exact"] is False
    assert answer["notes"][-1].endswith("stopped at the call's limit of 3 rows")
