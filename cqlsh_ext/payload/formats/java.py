"""Java serialization streams, as a reading a column setting can name (`<codec>>java`).

Auto-detection does not go through here: a stream's 4-byte magic makes it a layer of the
decoding walk (payload.unwrap), which reads it with payload.formats.javastream. Naming it only adds a clear
reason when a column's values are not streams.
"""

from __future__ import annotations

from typing import Any

from cqlsh_ext.payload import javaser
from cqlsh_ext.payload.formats import PayloadFormat
from cqlsh_ext.payload.formats.tree import PayloadError

#: Read without importing this module (codecs.base.read_declarations): its place in detection and
#: dispatch (lower first; auto-detection tries it only when FORMAT.auto), its place in name lists
#: and help, and what an argument after a colon names (payload.spec).
DECLARES = {"detection": 80, "listed": 80}


def _maybe(data: bytes) -> bool:
    return data.startswith(javaser.MAGIC)


def decode(data: bytes) -> Any:
    if not _maybe(data):
        raise PayloadError("java: no serialization stream magic (0xaced0005)")
    from cqlsh_ext.payload.formats import javastream

    try:
        return javastream.read_tree(data)
    except javaser.JavaStreamError as err:
        raise PayloadError(f"java: {err}") from None


FORMAT = PayloadFormat("java", False, _maybe, decode)
