"""Result paging: fetch the next page while the current one is formatted.

Stock cqlsh asks the server for page N+1 only after page N is printed, so every page costs a
full round trip on top of formatting. `prefetch_pages` starts the request for the next page as
soon as a page arrives; printing the page and the server's work then overlap. What is printed
and in which order does not change: only when the bytes arrive.
"""

from __future__ import annotations

from typing import Any


def prefetch_pages(result: Any) -> Any:
    """Make `result.fetch_next_page()` return a page requested in the background; returns result."""
    future = getattr(result, "response_future", None)
    if (
        future is None
        or not hasattr(result, "fetch_next_page")
        or getattr(result, "_cqlsh_ext_prefetch", False)
    ):
        return result
    pending = False

    def start() -> None:
        nonlocal pending
        # has_more_pages stays true while a request is in flight: it reads the last paging state.
        if future.has_more_pages:
            future.start_fetching_next_page()
            pending = True

    def fetch_next_page() -> None:
        nonlocal pending
        if not pending:
            result._current_rows = []
            return
        pending = False
        page = future.result()  # raises what a synchronous fetch would raise
        result._current_rows = page._current_rows
        start()

    start()
    result.fetch_next_page = fetch_next_page
    result._cqlsh_ext_prefetch = True
    return result
