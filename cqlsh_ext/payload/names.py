"""The payload readings' names and help, from the format modules' declarations (payload/formats/
<name>.py, `DECLARES`), read without importing them: standard library and codecs.base only, so
option parsing and help texts at start-up load neither payload.formats nor payload.spec."""

from __future__ import annotations

import os
from typing import Any

from cqlsh_ext.codecs.base import CODEC_EXAMPLES
from cqlsh_ext.common.declarations import read_declarations

#: Readings that are no payload format module: the bytes as text, as hex, or as JSON text (text
#: that must be a JSON object or array: what a chain picked by a sibling column often names).
BUILTIN_READINGS = ("text", "hex", "json")
#: cqlshrc's section of external-command decoders (payload.formats._outside).
COMMAND_SECTION = "formats"


def format_declarations() -> dict[str, dict[str, Any]]:
    """{payload format name: its module's DECLARES}, read without importing payload.formats."""
    return read_declarations(os.path.join(os.path.dirname(__file__), "formats"), "cqlsh_ext.payload.formats")


_DECLARED = format_declarations()


def payload_names() -> tuple[str, ...]:
    """The payload formats in the order their declarations list them (the `listed` priority)."""
    return tuple(sorted(_DECLARED, key=lambda name: (_DECLARED[name]["listed"], name)))


#: Every payload reading a spec may end with: the formats, then text and hex.
PAYLOAD_NAMES = (*payload_names(), *BUILTIN_READINGS)
#: Readings that take an argument after a colon (a schema file): the help each declares.
ARGUMENT_NAMES = {name: str(d["argument"]) for name, d in _DECLARED.items() if "argument" in d}
#: Where the file starts in such an argument: after this separator, or the whole argument when None.
FILE_AFTER: dict[str, str | None] = {
    name: d.get("file_after") for name, d in _DECLARED.items() if "argument" in d
}


#: {magic: format name} for the formats whose streams are a layer of the decoding walk (a format
#: declares `"stream": <magic>`; its FORMAT.stream reads them: payload.formats.StreamLayer).
STREAM_MAGICS: dict[bytes, str] = {d["stream"]: name for name, d in _DECLARED.items() if "stream" in d}
#: (kind, leading bytes) a format declares (`"binary_kind"`): INSPECT names a payload it shows as
#: binary by them.
BINARY_KINDS: tuple[tuple[str, bytes], ...] = tuple(
    d["binary_kind"] for name, d in sorted(_DECLARED.items(), key=lambda item: item[1]["listed"])
    if "binary_kind" in d
)
#: The formats help texts show in examples, in their declared "example" order.
FORMAT_EXAMPLES = tuple(sorted((n for n in _DECLARED if "example" in _DECLARED[n]),
                               key=lambda n: _DECLARED[n]["example"]))
#: A spec as help texts show it: the first example codec holding the first example format.
EXAMPLE_SPEC = f"{CODEC_EXAMPLES[0]}>{FORMAT_EXAMPLES[0]}"


def title(name: str) -> str:
    """How help prose names a reading: its declared "title", else its name."""
    return str(_DECLARED.get(name, {}).get("title", name))


def payload_help() -> list[str]:
    """The payload readings for help texts, each with its declared note: 'name (note)'."""
    notes = {name: f"{name} ({d['help']})" if "help" in d else name for name, d in _DECLARED.items()}
    return [notes.get(name, name) for name in PAYLOAD_NAMES]


def argument_help() -> list[str]:
    """What the readings that take an argument read, one sentence each (their declared help)."""
    return [str(d["argument_help"]) for d in _DECLARED.values() if "argument_help" in d]
