"""This process' memory as the kernel counts it (standard library only)."""

from __future__ import annotations

__all__ = ["address_space"]


def address_space() -> int:
    """This process' current virtual size (VmSize), in bytes; 0 when unknown. A worker's
    address-space limit (RLIMIT_AS) is set from it: insight.isolate's forked children and the
    plugins' worker (payload.formats._outside)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0
