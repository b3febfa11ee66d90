"""The cqlsh Shell, extended: blob display and the DECOMPRESS command.

Only the methods listed here differ from stock cqlsh 6.2; with `-d none` none of them changes what
is printed. How each hook attaches to cqlsh is documented in cqlsh_ext.seams. The interactive front
end (cqlsh_ext.repl) and the machine-readable output (cqlsh_ext.output) come in as mixins; with
--classic and the table format they hand every call to cqlsh unchanged.
"""

from __future__ import annotations

import shutil
import sys
from typing import Any

from cqlsh_ext import gc_pause, seams
from cqlsh_ext.insight.commands import (
    COMPRESSION_HELP,
    INSIGHT_ALTERNATIVES,
    INSIGHT_RULES,
    INSIGHT_WORDS,
    INSPECT_HELP,
)
from cqlsh_ext.output.shellmixin import OUTPUT_ALTERNATIVES, OUTPUT_RULES, OUTPUT_WORDS, OutputShellMixin
from cqlsh_ext.paging import paged
from cqlsh_ext.repl.shellmixin import ReplShellMixin
from cqlsh_ext.settings import MODES, NONE, DisplaySettings, SettingError, parse_mode

cqlshmain = seams.import_cqlshmain(None)

DECOMPRESS_RULES = r"""
<decompressCommand> ::= "DECOMPRESS" ( mode=<decompressMode> )?
                      ;
<decompressMode> ::= """ + " | ".join(f'"{m.upper()}"' for m in (*MODES, "off")) + r"""
                   ;
"""


def register_commands() -> None:
    """Teach cqlsh's grammar our commands; must run before cqlshmain.main() sets up the rule set."""
    # One call for all commands: each call re-derives <specialCommand> from cqlsh's own rule.
    seams.register_special_commands(DECOMPRESS_RULES + OUTPUT_RULES + INSIGHT_RULES,
                                    ("decompress", *OUTPUT_WORDS, *INSIGHT_WORDS),
                                    ("<decompressCommand>", *OUTPUT_ALTERNATIVES, *INSIGHT_ALTERNATIVES))


def _major(release: str) -> int:
    """4 for '4.1.3', 3 for '3.11.2'; a release that does not start with a number counts as new."""
    head = release.split(".", 1)[0]
    return int(head) if head.isdigit() else 99


def _holds_blob(cqltype: Any) -> bool:
    """Whether a driver column type is, or contains (collections, tuples, UDTs), a blob."""
    return getattr(cqltype, "typename", None) == "blob" or any(
        _holds_blob(sub) for sub in getattr(cqltype, "subtypes", ()) or ())


# Mixins first: the interactive front end (cqlsh_ext.repl) and machine-readable output
# (cqlsh_ext.output) wrap cqlsh's methods; each hands over to cqlsh when not in use.
class ExtShell(ReplShellMixin, OutputShellMixin, cqlshmain.Shell):  # type: ignore[misc,name-defined]
    #: Shared by the main shell and the sub-shells cqlsh creates for SOURCE and LOGIN.
    display_settings: DisplaySettings = DisplaySettings()
    #: --keyspaces / --sigv4 / --certfile (cqlsh_ext.keyspaces.wiring.KeyspacesSetup); None: plain cqlsh.
    keyspaces_setup: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.keyspaces_setup is None:
            super().__init__(*args, **kwargs)
        else:  # SigV4 provider and TLS context swapped in, one-line connection errors, LOCAL_QUORUM
            from cqlsh_ext.keyspaces import wiring

            with wiring.connecting(self.keyspaces_setup, args, kwargs):
                super().__init__(*args, **kwargs)
            wiring.configure(self.keyspaces_setup, self)
        self.apply_output_format()
        if not self.repl_mode:  # the interactive loop resumes it once its prompt is built
            gc_pause.resume()

    def cmdloop(self, intro: Any = None) -> None:
        # prompt_toolkit for a person at a terminal; cqlsh's own loop (untouched) for -e, -f,
        # pipes, SOURCE and --classic. Imported here so scripts never load prompt_toolkit.
        if self.repl_mode:
            from cqlsh_ext.repl.app import run

            run(self)
        else:
            super().cmdloop(intro)

    def _interactive(self) -> bool:
        return bool(self.tty) and sys.stdout.isatty() and self.shunted_query_out is None

    def print_static_result(self, result: Any, table_meta: Any, with_header: bool, tty: bool,
                            row_count_offset: int = 0) -> None:
        settings = self.display_settings
        if settings.mode == NONE or not any(_holds_blob(t) for t in result.column_types or ()):
            return super().print_static_result(result, table_meta, with_header, tty, row_count_offset)
        from cqlsh_ext.display import BlobDisplay  # loads the codec layer on the first blob only

        interactive = self._interactive()
        room = 0
        if interactive and result.column_names:
            room = shutil.get_terminal_size().columns - max(len(name) for name in result.column_names) - 5
        formatter = BlobDisplay(settings, interactive, self.expand_enabled, room)
        # CqlType binds its formatter when built inside the call, so nested blobs are covered too.
        self._blob_display = formatter
        try:
            with seams.blob_formatter_swapped(formatter):
                return super().print_static_result(result, table_meta, with_header, tty, row_count_offset)
        finally:
            self._blob_display = None

    _blob_display: Any = None

    def myformat_value(self, val: Any, cqltype: Any = None, **kwargs: Any) -> Any:
        # A top-level blob cell goes straight to the blob formatter: the same call cqlsh's
        # format_value chain would end in, without building a DateTimeFormat per cell.
        display = self._blob_display
        if display is not None and type(val) is bytes and cqltype is not None and cqltype.type_name == "blob":
            return display(val, seams.value_colormap(self.color))
        return super().myformat_value(val, cqltype, **kwargs)

    def print_formatted_result_vertically(self, formatted_names: list[Any], formatted_values: list[Any],
                                          row_count_offset: int) -> None:
        if not any("\n" in value.strval for row in formatted_values for value in row):
            return super().print_formatted_result_vertically(formatted_names, formatted_values,
                                                             row_count_offset)
        # Multi-line values (indented JSON under EXPAND ON): continuation lines align under the value.
        max_col_width = max(n.displaywidth for n in formatted_names)
        max_val_width = max(v.displaywidth for row in formatted_values for v in row)
        indent = "\n" + " " * (max_col_width + 4)
        for i, row in enumerate(formatted_values):
            self.writeresult(f"@ Row {row_count_offset + i + 1}")
            self.writeresult(f"-{'-' * max_col_width}-+-{'-' * max_val_width}-")
            for name, value in zip(formatted_names, row, strict=True):
                column = name.ljust(max_col_width, color=self.color)
                shown = value.ljust(value.displaywidth, color=self.color).replace("\n", indent)
                self.writeresult(" " + " | ".join([column, shown]))
            self.writeresult("")

    # ------------------------------------------------ compression insight (cqlsh_ext.insight)

    def do_inspect(self, parsed: Any) -> None:
        from cqlsh_ext.insight import commands  # loads the report modules on first use only

        commands.do_inspect(self, parsed)

    do_inspect.__doc__ = INSPECT_HELP  # HELP INSPECT

    def do_compression(self, parsed: Any) -> None:
        from cqlsh_ext.insight import commands

        commands.do_compression(self, parsed)

    do_compression.__doc__ = COMPRESSION_HELP  # HELP COMPRESSION

    def do_decompress(self, parsed: Any) -> None:
        """
        DECOMPRESS [cqlsh-ext]

          Shows or sets how blob values are displayed.

        DECOMPRESS

          Shows the current mode.

        DECOMPRESS AUTO

          Detects the compression format of every blob and shows its content (the default).

        DECOMPRESS OFF

          Shows blobs as hex, exactly as cqlsh does.

        DECOMPRESS <codec>

          Decodes every blob with one codec: snappy, lz4, zstd, gzip, zlib, deflate, bzip2,
          xz or brotli. Values that do not decode show their hex and the reason.

          COPY TO always exports the stored bytes, whatever the mode.
        """
        mode = parsed.get_binding("mode")
        if mode is None:
            print(f"Decompression mode is {self.display_settings.mode.upper()}.")
            return
        try:
            new_mode = parse_mode(mode)
        except SettingError as err:
            self.printerr(str(err))
            return
        self.display_settings.mode = new_mode
        print(f"Decompression mode set to {new_mode.upper()}.")

    def print_result(self, result: Any, table_meta: Any) -> None:
        # Next page fetched while this one prints; empty pages (Keyspaces) skipped: cqlsh_ext.paging.
        return super().print_result(paged(result), table_meta)

    # ------------------------------------------------ Amazon Keyspaces behaviour (cqlsh_ext.keyspaces)

    def do_describe(self, parsed: Any) -> None:
        if _major(self.connection_versions["build"]) >= 4:  # the test stock cqlsh makes
            return super().do_describe(parsed)
        # A 3.x server (Amazon Keyspaces reports 3.11.2) has no server-side DESCRIBE.
        from cqlsh_ext.keyspaces.describe import describe

        describe(self, parsed)

    do_describe.__doc__ = cqlshmain.Shell.do_describe.__doc__
    do_desc = do_describe

    def do_copy(self, parsed: Any) -> None:
        if self.keyspaces_setup is None:
            return super().do_copy(parsed)
        from cqlsh_ext.keyspaces import wiring

        with wiring.copy_consistency(self, parsed):  # COPY FROM writes at LOCAL_QUORUM on Keyspaces
            return super().do_copy(parsed)

    do_copy.__doc__ = cqlshmain.Shell.do_copy.__doc__
