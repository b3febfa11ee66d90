"""DECOMPRESS: how blob values are displayed for the rest of the session."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cqlsh_ext.codecs.base import CODEC_NAMES
from cqlsh_ext.commands import shell_command, word_from_list
from cqlsh_ext.common.text import fill
from cqlsh_ext.settings import MODES, SettingError, parse_mode

if TYPE_CHECKING:
    from cqlsh_ext.upstream.protocol import Parsed, Shell

DECOMPRESS_GRAMMAR = r"""
<decompressCommand> ::= "DECOMPRESS" ( mode=<decompressMode> )?
                      ;
<decompressMode> ::= """ + " | ".join(f'"{m.upper()}"' for m in (*MODES, "off")) + r"""
                   ;
"""

_CODECS = fill(
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

""" + _CODECS + """

          COPY TO always exports the stored bytes, whatever the mode.
        """


def _usage(words: list[str]) -> str:
    return "DECOMPRESS [AUTO | NONE | <codec>]"


@word_from_list("DECOMPRESS")
def _mistyped(words: list[str]) -> str | None:
    """A mode mistyped is told the nearest one and the modes (parse_mode's line), as -d is."""
    if len(words) != 2:
        return None
    try:
        parse_mode(words[1])
    except SettingError as err:
        return str(err)
    return None


@shell_command("DECOMPRESS", "<decompressCommand>", DECOMPRESS_GRAMMAR, DECOMPRESS_HELP, usage=_usage)
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
    print(f"Decompression mode set to {display.mode.upper()}.")
