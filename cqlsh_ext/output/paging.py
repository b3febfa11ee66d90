"""Result paging: how cqlsh-ext walks the pages of a result that cqlsh prints.

Both wrappers replace `fetch_next_page` on the driver's ResultSet, so cqlsh's own printing loop
(and ours in cqlsh_ext.repl) runs unchanged on top of them; `paged` applies both. `one_page`
gathers a paged result's rows into its first page (PAGING OFF).

- `prefetch_pages`: stock cqlsh asks the server for page N+1 only after page N is printed, so
  every page costs a full round trip on top of formatting. The request for the next page starts
  as soon as a page arrives; printing and the server's work then overlap. What is printed and in
  which order does not change, only when the bytes arrive.
- `skip_empty_pages`: Amazon Keyspaces returns empty pages that still have more data; stock cqlsh
  then shows an empty table or a bare `---MORE---` prompt. Such pages are fetched past: the
  first page shown is the first with rows, and every `---MORE---` follows rows. A run of empty
  pages at the very end can still cost one prompt (nobody can know they are empty before
  fetching them).
"""

from __future__ import annotations

from typing import Any

#: The attribute of a ResultSet walked here that holds the paging state its current page was asked
#: with (None: the statement's first page), kept by prefetch_pages as pages are fetched: where a
#: reading cut inside that page goes on from (output.row_limit). The first page's is set by whoever
#: asked for it with one.
PAGE_STATE = "_cqlsh_ext_page_state"


def paged(result: Any) -> Any:
    """`result` with both wrappers: prefetching underneath, empty pages skipped on top."""
    return skip_empty_pages(prefetch_pages(result))


class _PrefetchingFuture:
    """The ResultSet's view of its ResponseFuture while a page is requested ahead.

    The driver's ResultSet asks `response_future.has_more_pages` whether to go on (its property,
    iteration and list mode). Once the page requested ahead has arrived, the real future says
    "no more" if it was the last one, although that page was never handed out: it would be lost
    (a 60-row result printed as 50). Here a page received but not yet taken counts as more.
    Everything else is the real future's.
    """

    def __init__(self, future: Any) -> None:
        self._future = future
        self.pending = False
        #: The paging state the page requested ahead was asked with.
        self.asked_with: bytes | None = None

    @property
    def has_more_pages(self) -> bool:
        return self.pending or bool(self._future.has_more_pages)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._future, name)


def prefetch_pages(result: Any) -> Any:
    """Make `result.fetch_next_page()` return a page requested in the background; returns result."""
    future = getattr(result, "response_future", None)
    if (
        future is None
        or not hasattr(result, "fetch_next_page")
        or getattr(result, "_cqlsh_ext_prefetch", False)
    ):
        return result
    view = _PrefetchingFuture(future)

    def start() -> None:
        # has_more_pages stays true while a request is in flight: it reads the last paging state.
        if future.has_more_pages:
            view.asked_with = getattr(result, "paging_state", None)  # the page asked for now is asked with it
            future.start_fetching_next_page()
            view.pending = True

    def fetch_next_page() -> None:
        if not view.pending:
            result._current_rows = []
            return
        view.pending = False
        page = future.result()  # raises what a synchronous fetch would raise
        result._current_rows = page._current_rows
        setattr(result, PAGE_STATE, view.asked_with)
        start()

    start()
    result.response_future = view
    result.fetch_next_page = fetch_next_page
    result._cqlsh_ext_prefetch = True
    return result


def settle(result: Any) -> None:
    """A result whose reading ends before its last page (output.row_limit: --max-rows): the page
    requested ahead, if any, waited for, so that its future is final (cqlsh reads its warnings
    after the rows, which the driver gives only then) and no answer is left in flight."""
    view = getattr(result, "response_future", None)
    if isinstance(view, _PrefetchingFuture) and view.pending:
        view.pending = False
        try:
            view._future.result()
        except Exception:  # noqa: BLE001 - a page nobody reads: its error is no one's
            pass


def skip_empty_pages(result: Any) -> Any:
    """Fetch past empty pages now and on every later fetch_next_page(); returns result."""
    fetch = getattr(result, "fetch_next_page", None)
    if fetch is None or not hasattr(result, "has_more_pages") or getattr(result, "_cqlsh_ext_skips", False):
        return result

    def fetch_non_empty() -> None:
        fetch()
        while not result.current_rows and result.has_more_pages:
            fetch()

    while not result.current_rows and result.has_more_pages:
        fetch()
    result.fetch_next_page = fetch_non_empty
    result._cqlsh_ext_skips = True
    return result


#: PAGING OFF: the rows a page of a SELECT is read in (ResultPipeline.read_in_pages), the driver's
#: default fetch size.
UNPAGED_READ_ROWS = 5000


def one_page(result: Any) -> Any:
    """Every page of `result` (wrapped by `paged`: the next page asked for as one arrives) gathered
    into its first, the result then without more pages: what cqlsh prints of a result it asked for
    in one page (PAGING OFF). Returns result."""
    if not getattr(result, "has_more_pages", False):
        return result
    rows = list(result.current_rows)
    while result.has_more_pages:
        result.fetch_next_page()
        rows.extend(result.current_rows)
    result._current_rows = rows
    return result
