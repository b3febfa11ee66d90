"""What the insight commands read of a value: the value engine's view (payload.view) measured in
COMPRESSION STATS' terms, so that INSPECT, STATS, ADVISE and SETTINGS count a value alike.

STATS reads no payload under a container: the engine's measure_rows() answers it a page at a
time. INSPECT, ADVISE and SETTINGS read a sample's views and measure each with measured() (the engine's
measure(): status, chain, size, exact, reason); what ADVISE re-compresses and SETTINGS sizes is a
view's data, the bytes under the layers peeled.
"""

from __future__ import annotations

from cqlsh_ext.payload.engine import measure as measured
from cqlsh_ext.payload.measures import COMPRESSED, FROM_HEADER, STORED
from cqlsh_ext.payload.view import FAILED

__all__ = ["COMPRESSED", "FAILED", "FROM_HEADER", "STORED", "effective_mode", "measured", "ratio"]


def effective_mode(mode: str) -> str:
    """The shell's DECOMPRESS mode for measuring: 'none' (display off) still measures with auto."""
    return "auto" if mode in ("none", "off") else mode


def ratio(size: int, stored: int) -> float:
    return size / stored if stored else 1.0
