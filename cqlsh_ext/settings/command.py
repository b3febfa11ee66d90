"""The shell's commands of the session's display settings: DECODE (what a column holds) and DECOMPRESS
(how blob values are displayed), each a handler `(shell, parsed)` of cqlsh's parse of the grammar
their declaration holds (shell/declared.py), which names these handlers and HELP texts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cqlsh_ext.codecs.base import CODEC_NAMES
from cqlsh_ext.common.text import fill
from cqlsh_ext.payload.names import EXAMPLE_SPEC, argument_help, payload_help, title
from cqlsh_ext.settings import NONE, SettingError, parse_column_spec, parse_mode, parse_place

if TYPE_CHECKING:
    from cqlsh_ext.settings.shell import Shell
    from cqlsh_ext.upstream.protocol import Parsed

_STEPS = "\n".join(
    fill(text)
    for text in (
        f"Shows that column's blobs as {title(EXAMPLE_SPEC.split('>')[0])} holding "
        f"{title(EXAMPLE_SPEC.split('>')[1])}. Steps: "
        f"{', '.join(CODEC_NAMES)}, then one of {', '.join(payload_help())}, or auto (detect the rest).",
        "A codec name reads every container labelled with it (<codec>, <codec>/<container>) and no "
        "other codec's; a step may name one of them (<codec>/<container>) and a level (<codec>:N), "
        "which encode() writes (HELP ENCODE) and decoding ignores.",
        *argument_help(),
    )
)

DECODE_HELP = """
        DECODE [cqlsh-ext]

          Tells cqlsh-ext what a blob column holds when it cannot be detected,
          for this session: the codecs from the outside in, then the payload
          format.

        DECODE

          Lists the column settings in force.

        DECODE 'keyspace.table.column' AS '""" + EXAMPLE_SPEC + """'

""" + _STEPS + """
          A blob inside a collection or UDT: 'ks.t.col.item', 'ks.t.col.key',
          'ks.t.col.value', 'ks.t.col.<field>'; a setting on the column covers
          the blobs inside it.
          A value the setting does not fit shows its hex and why.

        DECODE 'keyspace.table.column' BY content_encoding AS
               'zstd -> zstd>json, gz -> gzip>json'

          Each row's chain is picked by another column of the row: the value
          of content_encoding names it. A row whose content_encoding names
          no chain of the list (or is null) shows its hex and says so; a
          query must read content_encoding too. Same as the setting
          'by content_encoding: zstd -> zstd>json, gz -> gzip>json'.

        DECODE 'keyspace.table.column' AUTO

          Drops the setting: the column is detected again.

          Same as --decode COLUMN=SPEC, or lines in the [cqlsh_ext.decode]
          section of cqlshrc.
        """


def _unquote(shell: Shell, text: str) -> str:
    return str(shell.cql_unprotect_value(text))


def do_decode(shell: Shell, parsed: Parsed) -> None:
    columns = shell.settings.display.columns
    place_text = parsed.get_binding("place")
    if place_text is None:
        if not columns:
            print("No column settings: every blob is detected.")
        for place, spec in sorted(columns.items()):
            print(f"{place} AS {spec}")
        return
    try:
        place = parse_place(_unquote(shell, place_text))
        if parsed.get_binding("auto") is not None:
            columns.pop(place, None)
            print(f"{place}: detected automatically.")
            return
        spec_text = _unquote(shell, parsed.get_binding("spec"))
        sibling = parsed.get_binding("sibling")
        if sibling is not None:  # BY COLUMN AS 'VALUE -> CHAIN, ...'
            spec_text = f"by {sibling}: {spec_text}"
        spec = parse_column_spec(spec_text)
    except SettingError as err:
        shell.printerr(f"DECODE: {err}")
        return
    columns[place] = spec
    print(f"{place} AS {spec}")

_ONE_CODEC = fill(
    f"Decodes every blob with one codec: {', '.join(CODEC_NAMES[:-1])} or {CODEC_NAMES[-1]}, in any "
    "container labelled with its name (<codec>, <codec>/<container>). Values that do not decode show "
    "their hex and the reason.",
)

DECOMPRESS_HELP = """
        DECOMPRESS [cqlsh-ext]

          Shows or sets how blob values are displayed.

        DECOMPRESS

          Shows the current mode.

        DECOMPRESS AUTO

          Detects the compression format of every blob and shows its content
          (the default).

        DECOMPRESS NONE

          Shows blobs as hex, exactly as cqlsh does (OFF is the same).

        DECOMPRESS <codec>

""" + _ONE_CODEC + """

          COPY TO always exports the stored bytes, whatever the mode.
        """


def decompress_usage(words: list[str]) -> str:
    return "DECOMPRESS [AUTO | NONE | <codec>]"


def decompress_mistyped(words: list[str]) -> str | None:
    """A mode mistyped is told the nearest one and the modes (parse_mode's line), as -d is."""
    if len(words) != 2:
        return None
    try:
        parse_mode(words[1])
    except SettingError as err:
        return str(err)
    return None


def do_decompress(shell: Shell, parsed: Parsed) -> None:
    display = shell.settings.display
    mode = parsed.get_binding("mode")
    if mode is None:
        print(f"Decompression mode is {display.mode.upper()}.")
        return
    try:
        display.mode = parse_mode(mode)
    except SettingError as err:
        shell.printerr(str(err))
        return
    from cqlsh_ext.upstream.time_values import read_as_stock

    read_as_stock(display.mode == NONE)  # stock cqlsh's output, its timestamps included
    print(f"Decompression mode set to {display.mode.upper()}.")
