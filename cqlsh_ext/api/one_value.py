"""One stored value decoded, outside any table: `cqlsh_ext.decode(value)`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cqlsh_ext.api.errors import Error

__all__ = ["DecodedValue", "decode"]


@dataclass(frozen=True)
class DecodedValue:
    """What a value holds: its `payload` (a record as dicts and lists, a text as str; None when it
    did not decode), its `label` (the chain and the format: 'zstd>json'), its `kind` (text, record,
    binary, unknown, failed), the `note` (why it did not decode, a cut, an object's class) and the
    `confidence` (confident, likely, guessed: how sure the reading is; None when it did not decode)."""

    payload: Any
    label: str | None
    kind: str | None
    note: str | None
    confidence: str | None = None

    @property
    def decoded(self) -> bool:
        return self.payload is not None


def decode(value: bytes, codec: str = "auto") -> DecodedValue:
    """`value` decoded as the shell decodes a blob (`codec`: -d's mode: auto, none, or a codec)."""
    from cqlsh_ext.output.spellings import blob_reading
    from cqlsh_ext.settings import DisplaySettings, SettingError
    from cqlsh_ext.settings.values import parse_mode

    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise Error(f"decode takes bytes, not {type(value).__name__}")
    try:
        settings = DisplaySettings(mode=parse_mode(codec))
    except SettingError as err:
        raise Error(str(err)) from None
    payload, label, kind, note, _stored, sure = blob_reading(settings).blob_parts(bytes(value), None)
    return DecodedValue(payload, label, kind, note, sure)
