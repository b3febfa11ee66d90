"""Result paging (cqlsh_ext.output.paging) on a stand-in for the driver's ResultSet: the next page is
requested while one is printed, empty pages are fetched past, and what is printed is unchanged;
then the same on the real driver and server; and PAGING OFF, whose SELECT is read in pages and
printed as the one page stock cqlsh prints."""

from __future__ import annotations

import io
import time
from typing import Any

import pytest

from cqlsh_ext.output.paging import UNPAGED_READ_ROWS, one_page, paged, prefetch_pages, skip_empty_pages


class Future:
    """The parts of the driver's ResponseFuture that paging uses, serving `pages` in order.

    Like the driver's, has_more_pages reads the paging state of the last response received;
    here every response arrives the moment it is requested (the fastest server), so a page
    requested ahead moves it on before that page is handed out."""

    def __init__(self, pages: list[list[int]], log: list[str]) -> None:
        self.pages, self.log, self.requested = pages, log, 0

    @property
    def has_more_pages(self) -> bool:
        return self.requested < len(self.pages) - 1

    def start_fetching_next_page(self) -> None:
        self.requested += 1
        self.log.append(f"request {self.requested}")

    def result(self) -> Any:
        self.log.append(f"receive {self.requested}")
        return Page(self.pages[self.requested])


class Page:
    def __init__(self, rows: list[int]) -> None:
        self._current_rows = rows


class ResultSet:
    def __init__(self, pages: list[list[int]], log: list[str]) -> None:
        self.response_future = Future(pages, log)
        self._current_rows = pages[0]
        self.log = log

    @property
    def current_rows(self) -> list[int]:
        return self._current_rows

    @property
    def has_more_pages(self) -> bool:
        return self.response_future.has_more_pages

    def fetch_next_page(self) -> None:  # the synchronous fetch prefetching replaces
        raise AssertionError("not replaced")


def printed(result: ResultSet) -> list[list[int]]:
    """What cqlsh's printing loop would print, page by page."""
    out = [list(result.current_rows)]
    while result.has_more_pages:
        result.fetch_next_page()
        out.append(list(result.current_rows))
    return out


def test_the_next_page_is_requested_before_the_current_one_is_printed():
    log: list[str] = []
    result = prefetch_pages(ResultSet([[1, 2], [3], [4, 5]], log))
    assert log == ["request 1"]  # asked for at once, while page 0 prints
    result.fetch_next_page()
    assert log == ["request 1", "receive 1", "request 2"]
    assert result.current_rows == [3]


def test_prefetching_prints_the_same_rows_in_the_same_order():
    pages = [[1, 2], [3], [], [4, 5], [6]]
    assert printed(prefetch_pages(ResultSet(pages, []))) == pages


def test_empty_pages_are_fetched_past():
    pages = [[], [], [1], [], [2, 3], []]
    result = paged(ResultSet(pages, []))
    shown = printed(result)
    assert shown[0] == [1]  # the first page shown has rows
    assert [row for page in shown for row in page] == [1, 2, 3]
    assert all(page for page in shown[:-1])  # no empty page between rows


def test_one_page_gathers_every_page_in_order():
    pages = [[1, 2], [], [3], [4, 5]]
    result = one_page(paged(ResultSet(pages, [])))
    assert printed(result) == [[1, 2, 3, 4, 5]]
    single = ResultSet([[7]], [])
    assert one_page(single) is single and printed(single) == [[7]]


def test_wrapping_twice_changes_nothing():
    log: list[str] = []
    result = ResultSet([[1], [2]], log)
    assert prefetch_pages(prefetch_pages(result)) is result
    assert skip_empty_pages(skip_empty_pages(result)) is result
    assert log == ["request 1"]


@pytest.mark.server
def test_on_the_real_driver_no_page_is_lost_when_the_last_arrives_early(cassandra):
    # A reader slower than the server: every page requested ahead has arrived (and the driver's
    # paging state is spent) before the previous one is printed. All 60 rows are still shown,
    # by cqlsh's page loop and by iterating the result.
    from cassandra.query import SimpleStatement

    ks = cassandra.create_keyspace("paging")
    session = cassandra.session()
    session.execute(f"CREATE TABLE {ks}.t (id int PRIMARY KEY)")
    for i in range(60):
        session.execute(f"INSERT INTO {ks}.t (id) VALUES ({i})")
    query = SimpleStatement(f"SELECT id FROM {ks}.t", fetch_size=25)

    result = paged(session.execute(query))
    shown = [[row.id for row in result.current_rows]]
    while True:
        time.sleep(0.3)  # "printing": the page asked for ahead comes in meanwhile
        if not result.has_more_pages:
            break
        result.fetch_next_page()
        shown.append([row.id for row in result.current_rows])
    assert [len(page) for page in shown] == [25, 25, 10]
    assert sorted(i for page in shown for i in page) == list(range(60))

    result = paged(session.execute(query))
    time.sleep(0.3)
    assert sorted(row.id for row in result) == list(range(60))
    session.shutdown()


@pytest.mark.server
def test_paging_off_reads_a_select_in_pages_and_prints_stock_cqlsh_s_one_table(cassandra, tmp_path):
    # More rows than a page read, one of them with a note longer than every other: printed page
    # by page, the other pages' notes would be padded narrower; as one page (stock cqlsh's one
    # answer) every row is padded to it. The bytes are stock cqlsh's.
    from cassandra.concurrent import execute_concurrent_with_args
    from shell_runner import CQLSH_EXT, STOCK_CQLSH, in_process_shell, run, without_patch_warning

    ks = cassandra.create_keyspace("paging_off")
    session = cassandra.session()
    session.execute(f"CREATE TABLE {ks}.t (id int PRIMARY KEY, note text, data blob)")
    rows = UNPAGED_READ_ROWS + 300
    insert = session.prepare(f"INSERT INTO {ks}.t (id, note, data) VALUES (?, ?, ?)")
    execute_concurrent_with_args(session, insert, [(i, "n" * (60 if i == 4321 else 1 + i % 5), b"\x01\x02")
                                                   for i in range(rows)])
    session.shutdown()
    statement = f"PAGING OFF; SELECT id, note FROM {ks}.t"
    ours = run(CQLSH_EXT, [*cassandra.cqlsh_args, "-e", statement], tmp_path, timeout=300)
    stock = run(STOCK_CQLSH, [*cassandra.cqlsh_args, "-e", statement], tmp_path, timeout=300)
    assert ours.returncode == stock.returncode == 0, ours.stderr
    assert ours.stdout == without_patch_warning(stock.stdout)
    assert f"({rows} rows)" in ours.stdout and ours.stdout.count(" id ") == 1

    # ...read in pages (the statement cqlsh sends asks for them), also with a blob decoded.
    with in_process_shell(cassandra, ks) as sh:
        sent: list[int | None] = []
        execute_async = sh.session.execute_async

        def spy(statement, *args, **kwargs):
            sent.append(statement.fetch_size)
            return execute_async(statement, *args, **kwargs)

        sh.session.execute_async = spy
        sh.query_out = io.StringIO()
        sh.onecmd("PAGING OFF;")
        sh.onecmd("SELECT id, note, data FROM t;")
        lines = sh.query_out.getvalue().splitlines()
    assert sent == [UNPAGED_READ_ROWS]
    widths = {line.index(" | ", line.index(" | ") + 1) for line in lines if line.count(" | ") == 2}
    assert len(widths) == 1  # one table: every row's note padded to the longest
    assert f"({rows} rows)" in lines
