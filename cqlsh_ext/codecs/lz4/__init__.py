"""LZ4 family: frame (+ skippable frames, concatenation) and legacy frame (lz4.frame), lz4-java's
LZ4Block stream, raw blocks with a u32 LE / BE size prefix or none, and Hadoop Lz4Codec block
streams (lz4.block); the library binding they share is lz4._native.

The lz4 package is imported on the first decode, not at import time.
"""

from __future__ import annotations

from ..base import Container
from ._native import FRAME_MAGIC, LEGACY_MAGIC, LZ4BLOCK_MAGIC
from .block import Lz4Hadoop, Lz4JavaBlock, Lz4NoSize, Lz4SizedBE, Lz4SizedLE
from .frame import Lz4Frame, Lz4Legacy

#: Read without importing this module (common.declarations): the -d names it answers, each with its
#: place in name lists and help.
DECLARES = {"names": {"lz4": 20}, "trial": {"lz4": 2}, "headers": "LZ4 FLG/BD, LZ4Block blocks"}

__all__ = ["FORMATS", "FRAME_MAGIC", "LEGACY_MAGIC", "LZ4BLOCK_MAGIC"]

# One instance per format (formats are stateless), in the order registry.all_containers() lists them.
LZ4_FRAME = Lz4Frame()
LZ4_JAVA = Lz4JavaBlock()
LZ4_LE = Lz4SizedLE()

FORMATS: tuple[Container, ...] = (LZ4_FRAME, Lz4Legacy(), LZ4_JAVA, LZ4_LE, Lz4SizedBE(), Lz4Hadoop(),
                                  Lz4NoSize())
