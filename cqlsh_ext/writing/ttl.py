"""A cell's moment of expiry, exact to the second across a read, a paced write, RESUME and UNDO.

The server keeps an expiring cell's moment of expiry in whole seconds of its own clock: the second
a write arrived plus its TTL. A read answers TTL() as that moment less the second the request
arrived. So the moment is the TTL read plus the wall-clock time the page's request was *sent*
(stamped by the scanner: scanning.scan.Scanner.page_sent; the scanner asks for the next page while
this one is worked on, so a time taken when the row is looked at can be seconds late), and it is
kept with its fraction (`expiry`): its whole seconds are the server's second of the read plus the
TTL, whatever the client's clock is off by. A write sends the whole seconds from its own second to
that one (`ttl_to_send`): the server adds them to the second the write arrives, and the cell
expires in the second it would have (one off only when a request crosses a second's edge on its
way to the server).
"""

from __future__ import annotations

import math
import time


def expiry(ttl: int | None, sent: float) -> float | None:
    """When a cell whose TTL read `ttl` by a request sent at `sent` (epoch seconds) expires; None
    for a cell without one."""
    return None if ttl is None else sent + ttl


def ttl_to_send(expires: float | None, now: float | None = None) -> int | None:
    """The TTL that makes a cell written now expire at `expires` (None: it never expires); 0 or
    less when that moment has passed."""
    if expires is None:
        return None
    return math.floor(expires) - math.floor(time.time() if now is None else now)
