"""OUTPUT: how query results are printed for the rest of the session (its declaration, with its
grammar: shell/declared.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cqlsh_ext.settings import SettingError, parse_output_format
from cqlsh_ext.settings.output_formats import for_layout

if TYPE_CHECKING:
    from cqlsh_ext.settings.shell import Shell
    from cqlsh_ext.upstream.protocol import Parsed

OUTPUT_HELP = """
        OUTPUT [cqlsh-ext]

          Shows or sets how query results are printed.

        OUTPUT

          Shows the current format.

        OUTPUT FORMAT TABLE | VERTICAL | JSON | CSV

          TABLE is cqlsh's table (EXPAND OFF), VERTICAL one block per row
          (EXPAND ON).
          JSON prints one JSON object per row (JSON Lines): numbers as numbers,
          timestamps in ISO-8601 (UTC), UUIDs as strings; a decoded blob is an
          object with its codec and payload, the payload embedded as JSON when
          it is JSON.
          CSV prints a header row per result and one line per row; decoded
          blobs as text.

        OUTPUT RAW ON | OFF

          JSON: adds the stored bytes ("raw": "0x...") to every decoded blob.
          CSV: prints blobs as stored (hex) instead of decoded.

        OUTPUT CELLS CUT | WRAP

          Interactive shell: a table wider than the screen keeps narrow columns
          whole and cuts the wide ones to fit, ending them with … (CUT), or
          continues them on further lines (WRAP). When even that cannot fit,
          rows are shown vertically (EXPAND ON shows every result that way).

          Same as --output-format, --raw-blobs and --cells on the command
          line, or output_format, raw_blobs and cells in the [cqlsh_ext]
          section of cqlshrc.
        """


def current_format(shell: Shell) -> str:
    """table | vertical | json | csv: what the next result will look like (EXPAND is vertical)."""
    fmt = shell.settings.display.output_format
    return fmt.name if fmt.machine else for_layout(shell.expand_enabled).name


def do_output(shell: Shell, parsed: Parsed) -> None:
    display = shell.settings.display
    fmt = parsed.get_binding("fmt")
    raw = parsed.get_binding("raw")
    cells = parsed.get_binding("cells")
    if cells is not None:
        display.cells = cells.lower()
        print(f"Cells that do not fit are {'wrapped' if display.cells == 'wrap' else 'cut'}.")
    elif fmt is not None:
        try:
            display.output_format = parse_output_format(fmt)
        except SettingError as err:
            shell.printerr(str(err))
            return
        expand = display.output_format.expand
        if expand is not None:
            shell.expand_enabled = expand
        print(f"Output format set to {display.output_format.name.upper()}.")
    elif raw is not None:
        display.raw_blobs = raw.upper() == "ON"
        print(f"Raw blobs {'ON' if display.raw_blobs else 'OFF'}.")
    else:
        print(f"Output format is {current_format(shell).upper()}; "
              f"raw blobs {'ON' if display.raw_blobs else 'OFF'}; cells {display.cells.upper()}.")
