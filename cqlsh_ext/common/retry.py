"""The one retry policy for requests that retrying cannot make worse (reads, and the idempotent
writes of COMPRESSION TRIAL): overload, throttling, timeouts, a node restarting. Backoff doubles from
BASE up to CAP seconds with full jitter (AWS's "exponential backoff and jitter": retries spread out
instead of arriving together), and after ATTEMPTS retries of one request the error stands: never a
loop forever. Which errors are worth it is the scanning layer's (scanning.scan.retry_reason)."""

from __future__ import annotations

import random

#: Retries of one request at most.
ATTEMPTS = 8
#: The first retry waits up to BASE seconds, each next one twice as long, never more than CAP.
BASE, CAP = 0.1, 4.0


def exhausted(attempts: int) -> bool:
    """Whether a request retried `attempts` times already is given up on."""
    return attempts >= ATTEMPTS


def delay(attempt: int) -> float:
    """Seconds to wait before retry number `attempt` (1 for the first): full jitter."""
    return random.uniform(0, min(CAP, BASE * 2 ** attempt))


__all__ = ["ATTEMPTS", "BASE", "CAP", "delay", "exhausted"]
