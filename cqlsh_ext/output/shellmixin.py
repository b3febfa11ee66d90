"""Shell methods for machine-readable output and the OUTPUT command.

Mixed into cqlsh_ext.shell.ExtShell ahead of cqlsh's Shell. With the table and vertical formats
every method hands over to cqlsh unchanged; with json and csv a result set is written by
cqlsh_ext.output.writers instead of cqlsh's table printer: all pages, no "(N rows)" footer, warnings
on stderr, so stdout stays parseable.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from cqlsh_ext.output import MACHINE_FORMATS
from cqlsh_ext.settings import OUTPUT_FORMATS, SettingError, parse_output_format

OUTPUT_RULES = r"""
<outputCommand> ::= "OUTPUT" ( "FORMAT" fmt=<outputFormatName> | "RAW" raw=( "ON" | "OFF" ) )?
                  ;
<outputFormatName> ::= """ + " | ".join(f'"{f.upper()}"' for f in OUTPUT_FORMATS) + r"""
                     ;
"""
OUTPUT_WORDS = ("output",)
OUTPUT_ALTERNATIVES = ("<outputCommand>",)


class OutputShellMixin:
    # Provided by cqlsh's Shell / ExtShell; declared for type checkers.
    display_settings: Any
    expand_enabled: bool
    query_out: Any

    def apply_output_format(self) -> None:
        """Start-up: `vertical` is cqlsh's EXPAND ON."""
        if self.display_settings.output_format == "vertical":
            self.expand_enabled = True

    @property
    def machine_format(self) -> str | None:
        fmt = self.display_settings.output_format
        return fmt if fmt in MACHINE_FORMATS else None

    def _write_machine(self, result: Any, fmt: str, all_pages: bool) -> None:
        from cqlsh_ext.output.values import ValueEncoder, column_types
        from cqlsh_ext.output.writers import make_writer

        names = list(result.column_names or [])
        if not names:
            return
        writer = make_writer(fmt, self.query_out, names, column_types(result),
                             ValueEncoder(self.display_settings))
        while True:
            writer.write_rows(result.current_rows)
            if not (all_pages and result.has_more_pages):
                break
            result.fetch_next_page()
        writer.finish()

    def print_result(self, result: Any, table_meta: Any) -> None:
        fmt = self.machine_format
        if fmt is None:
            return super().print_result(result, table_meta)  # type: ignore[misc]
        self.decoding_errors: list[Any] = []
        self._write_machine(result, fmt, all_pages=True)

    def print_static_result(self, result: Any, table_meta: Any, with_header: bool, tty: bool,
                            row_count_offset: int = 0) -> None:
        fmt = self.machine_format
        if fmt is None:
            return super().print_static_result(  # type: ignore[misc]
                result, table_meta, with_header, tty, row_count_offset)
        # Reached directly for the result of a conditional (IF ...) write: one page.
        self._write_machine(result, fmt, all_pages=False)

    def check_build_versions(self) -> None:
        # cqlsh prints its "built against" warning on stdout; JSON/CSV readers must not see it.
        if self.machine_format is None:
            return super().check_build_versions()  # type: ignore[misc]
        with contextlib.redirect_stdout(sys.stderr):
            return super().check_build_versions()  # type: ignore[misc]

    def print_warnings(self, warnings: Any) -> None:
        if self.machine_format is None or not warnings:
            return super().print_warnings(warnings)  # type: ignore[misc]
        for warning in warnings:
            print(f"Warning: {warning}", file=sys.stderr)

    def do_output(self, parsed: Any) -> None:
        """
        OUTPUT [cqlsh-ext]

          Shows or sets how query results are printed.

        OUTPUT

          Shows the current format.

        OUTPUT FORMAT TABLE | VERTICAL | JSON | CSV

          TABLE is cqlsh's table (EXPAND OFF), VERTICAL one block per row (EXPAND ON).
          JSON prints one JSON object per row (JSON Lines): numbers as numbers, timestamps in
          ISO-8601 (UTC), UUIDs as strings; a decoded blob is an object with its codec and
          payload, the payload embedded as JSON when it is JSON.
          CSV prints a header row per result and one line per row; decoded blobs as text.

        OUTPUT RAW ON | OFF

          JSON: adds the stored bytes ("raw": "0x...") to every decoded blob.
          CSV: prints blobs as stored (hex) instead of decoded.

          Same as --output-format and --raw-blobs on the command line, or output_format and
          raw_blobs in the [cqlsh_ext] section of cqlshrc.
        """
        settings = self.display_settings
        fmt = parsed.get_binding("fmt")
        raw = parsed.get_binding("raw")
        if fmt is not None:
            try:
                settings.output_format = parse_output_format(fmt)
            except SettingError as err:
                self.printerr(str(err))  # type: ignore[attr-defined]
                return
            if settings.output_format in ("table", "vertical"):
                self.expand_enabled = settings.output_format == "vertical"
            print(f"Output format set to {settings.output_format.upper()}.")
        elif raw is not None:
            settings.raw_blobs = raw.upper() == "ON"
            print(f"Raw blobs {'ON' if settings.raw_blobs else 'OFF'}.")
        else:
            print(f"Output format is {self.current_output_format().upper()}; "
                  f"raw blobs {'ON' if settings.raw_blobs else 'OFF'}.")

    def current_output_format(self) -> str:
        fmt = self.machine_format
        if fmt is not None:
            return fmt
        return "vertical" if self.expand_enabled else "table"
