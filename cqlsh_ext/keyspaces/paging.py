"""Empty result pages that still have more data (Amazon Keyspaces returns them).

Stock cqlsh prints a page, then asks `---MORE---` whenever the server says more pages follow, so
an empty page shows an empty table or a bare `---MORE---` prompt with nothing above it.
`skip_empty_pages` makes the result set skip such pages as it fetches them: the first page shown
is the first one with rows, and every `---MORE---` follows rows. A run of empty pages at the very
end can still cost one prompt (nobody can know they are empty before fetching them).
"""

from __future__ import annotations

from typing import Any


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
