"""Result paging (cqlsh_ext.paging) on a stand-in for the driver's ResultSet: the next page is
requested while one is printed, empty pages are fetched past, and what is printed is unchanged.
The real driver and server are exercised by the display and Keyspaces tests."""

from __future__ import annotations

from typing import Any

from cqlsh_ext.paging import paged, prefetch_pages, skip_empty_pages


class Future:
    """The parts of the driver's ResponseFuture that paging uses, serving `pages` in order."""

    def __init__(self, pages: list[list[int]], log: list[str]) -> None:
        self.pages, self.log, self.next = pages, log, 1

    @property
    def has_more_pages(self) -> bool:
        return self.next < len(self.pages)

    def start_fetching_next_page(self) -> None:
        self.log.append(f"request {self.next}")

    def result(self) -> Any:
        page = Page(self.pages[self.next])
        self.log.append(f"receive {self.next}")
        self.next += 1
        return page


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


def test_wrapping_twice_changes_nothing():
    log: list[str] = []
    result = ResultSet([[1], [2]], log)
    assert prefetch_pages(prefetch_pages(result)) is result
    assert skip_empty_pages(skip_empty_pages(result)) is result
    assert log == ["request 1"]
