"""Facts about network addresses that more than one part relies on."""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """`localhost` or a loopback address (127.0.0.0/8, ::1); any other name is no promise, whatever
    it resolves to."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
