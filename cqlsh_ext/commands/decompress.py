"""DECOMPRESS: how blob values are displayed for the rest of the session."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cqlsh_ext.codecs.base import CODEC_NAMES
from cqlsh_ext.commands import shell_command
from cqlsh_ext.settings import MODES, SettingError, parse_mode

if TYPE_CHECKING:
    from cqlsh_ext.cqlsh.protocol import Parsed, Shell

DECOMPRESS_GRAMMAR = r"""
<decompressCommand> ::= "DECOMPRESS" ( mode=<decompressMode> )?
                      ;
<decompressMode> ::= """ + " | ".join(f'"{m.upper()}"' for m in (*MODES, "off")) + r"""
                   ;
"""

def fill(text: str, width: int = 98, indent: int = 10) -> str:
    """`text` wrapped at spaces into indented lines of at most `width` characters (a long word
    stays whole): help text built from declared names. textwrap would cost start-up time."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and indent + len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n".join(" " * indent + one for one in lines)


_CODECS = fill(
    f"Decodes every blob with one codec: {', '.join(CODEC_NAMES[:-1])} or {CODEC_NAMES[-1]}. Values that "
    "do not decode show their hex and the reason.",
    width=92,
)

DECOMPRESS_HELP = """
        DECOMPRESS [cqlsh-ext]

          Shows or sets how blob values are displayed.

        DECOMPRESS

          Shows the current mode.

        DECOMPRESS AUTO

          Detects the compression format of every blob and shows its content (the default).

        DECOMPRESS OFF

          Shows blobs as hex, exactly as cqlsh does.

        DECOMPRESS <codec>

""" + _CODECS + """

          COPY TO always exports the stored bytes, whatever the mode.
        """


@shell_command("DECOMPRESS", "<decompressCommand>", DECOMPRESS_GRAMMAR, DECOMPRESS_HELP)
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
