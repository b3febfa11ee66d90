"""HELP ENCODE, and the chain steps the interactive shell completes inside `encode('`.

The names come from the codec and payload format modules' declarations (read without importing
them); the container labels from codecs.registry, loaded only when a completion asks for them.
"""

from __future__ import annotations

import re

from cqlsh_ext.codecs.base import CODEC_EXAMPLES, CODEC_NAMES
from cqlsh_ext.common.text import fill
from cqlsh_ext.payload.names import EXAMPLE_SPEC, PAYLOAD_NAMES, payload_help
from cqlsh_ext.payload.spec import AUTO_STEP

#: Examples built from the declared names: the help texts' example codec and spec.
_CODEC = CODEC_EXAMPLES[0]

ENCODE_HELP = f"""
        encode() [cqlsh-ext]

          Writes a blob value as its producer writes it, in INSERT, UPDATE and
          BATCH, wherever a blob goes (a column, a list or set item, a map key
          or value, a tuple element, a UDT field, a WHERE on a blob key):

          INSERT INTO ks.t (id, data) VALUES (1, encode('{_CODEC}', 'some text'));
          UPDATE ks.t SET m['k'] = encode('{EXAMPLE_SPEC}', '{{"a": 1}}')
              WHERE id = 5;

          The first argument is a chain as in DECODE, from the stored bytes
          inwards; the second the text itself, JSON for a record format, or a
          blob literal 0x... to compress as it is. encode('...') with one
          argument takes the chain from the column's DECODE setting.

""" + "\n".join(fill(text) for text in (
    f"Codecs: {', '.join(CODEC_NAMES)}; a bare name writes its most common producer's container, "
    "another container is named as values are labelled (<codec>/<container>), a level after a colon "
    "(<codec>:N), and for zstd and zlib a dictionary of the store (<codec>:dict=ID or <codec>:N,dict=ID: "
    "--dictionary FILE, or ADVISE's SAVE DICTIONARY).",
    f"Then one of {', '.join(payload_help())}.",
    "Each value is decoded again as the display would and compared with the input before anything is "
    "sent; a chain that cannot be written faithfully is refused in one line and nothing of the "
    "statement is sent. One line per value says what was stored. The matrix of what is written: "
    "cqlsh-ext docs payloads.",
)) + "\n"

#: The open chain argument of an encode( call before the cursor.
_OPEN_CHAIN = re.compile(r"\bencode\s*\(\s*'([^']*)$", re.IGNORECASE)


def chain_steps() -> list[str]:
    """Every step a chain may name: codecs, their containers as labelled, then the readings."""
    from cqlsh_ext.codecs import registry

    labels = [f.label for f in registry.all_containers() if f.label not in CODEC_NAMES]
    return [*CODEC_NAMES, *labels, *PAYLOAD_NAMES, AUTO_STEP]


def chain_completions(text_before_cursor: str) -> tuple[str, list[str]] | None:
    """(the step being typed, the steps it may become) when the cursor is in encode('...'s chain;
    None elsewhere."""
    found = _OPEN_CHAIN.search(text_before_cursor)
    if found is None:
        return None
    partial = found.group(1).rsplit(">", 1)[-1]
    if ":" in partial:  # a level or a file name: nothing to offer
        return partial, []
    wanted = partial.lower()
    return partial, [step for step in chain_steps() if step.lower().startswith(wanted)]
