"""Snappy family: raw block, framing format, S2 (recognised only), xerial stream, Hadoop blocks.

cramjam is imported on the first decode, not at import time (shell start-up stays cheap).
"""

from __future__ import annotations

from ..base import Container
from ._raw import SnappyRaw, declared_length, raw_capped
from .framed import CHUNK_MAX, S2Framed, SnappyFramed
from .streams import SnappyHadoop, SnappyXerial

#: Read without importing this module (common.declarations): the -d names it answers,
#: each with its place in name lists and help.
DECLARES = {"names": {"snappy": 10}, "trial": {"snappy": 3},
            "headers": "xerial version, snappy framed chunks"}

__all__ = ["CHUNK_MAX", "FORMATS", "declared_length", "raw_capped"]

# One instance per format (formats are stateless), in the order registry.all_containers() lists them.
SNAPPY_RAW = SnappyRaw()
SNAPPY_FRAMED = SnappyFramed()
SNAPPY_XERIAL = SnappyXerial()
SNAPPY_HADOOP = SnappyHadoop()

FORMATS: tuple[Container, ...] = (SNAPPY_FRAMED, S2Framed(), SNAPPY_XERIAL, SNAPPY_RAW, SNAPPY_HADOOP)
