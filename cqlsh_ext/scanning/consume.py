"""The scan-and-consume loop every scanning command shares (INSPECT, COMPRESSION STATS, ADVISE,
SETTINGS, a STATS worker process): read a Scanner's pages into a consumer until the scan ends, the
consumer has enough, or Ctrl-C.

    pages = consume(scanner, start, take)

`start(names, types)` sees the first page's columns and may refuse the result (False: the caller
says why, e.g. no blob column); `take(names, types, rows)` gets every page and returns False when it
needs no more. Ctrl-C marks the scanner interrupted; the generator is closed when the reading stops
(closing()), so the scan's own Ctrl-C handler goes then, not when the generator is collected.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import closing
from typing import Any

from cqlsh_ext.scanning.scan import Scanner

__all__ = ["consume"]

Start = Callable[[Sequence[str], Sequence[Any]], bool]
Take = Callable[[Sequence[str], Sequence[Any], list[Any]], "bool | None"]


def consume(scanner: Scanner, start: Start | None, take: Take) -> int | None:
    """The pages read, or None when `start` refused the result."""
    read = 0
    try:
        with closing(scanner.pages()) as pages:
            for names, types, rows in pages:
                if read == 0 and start is not None and not start(names, types):
                    return None
                read += 1
                if take(names, types, rows) is False:
                    break
    except KeyboardInterrupt:
        scanner.interrupted = True
    return read
