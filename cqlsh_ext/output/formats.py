"""The output formats, one declaration each: how a result is written in that format.

    table, vertical   cqlsh's own layouts (EXPAND OFF / ON), with decoded blob cells
                      (output.pipeline, output.table)
    json, csv         a machine format: its RowWriter (output.writers) writes every page

Loaded at start-up (the OUTPUT command, the shell): no writer module is imported here, a machine
format names its writer class in output.writers, loaded with the first such result. The names
users may give are settings.OUTPUT_FORMATS (tests/output/test_formats.py: the same list).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FORMATS", "OutputFormat", "for_layout", "get"]


@dataclass(frozen=True)
class OutputFormat:
    name: str
    #: A cqlsh layout: whether it is EXPAND ON (vertical); None for a machine format.
    expand: bool | None = None
    #: A machine format's RowWriter class in cqlsh_ext.output.writers.
    writer: str | None = None

    @property
    def machine(self) -> bool:
        return self.writer is not None


FORMATS: dict[str, OutputFormat] = {fmt.name: fmt for fmt in (
    OutputFormat("table", expand=False),
    OutputFormat("vertical", expand=True),
    OutputFormat("json", writer="JsonLinesWriter"),
    OutputFormat("csv", writer="CsvWriter"),
)}


def get(name: str) -> OutputFormat:
    return FORMATS[name]


def for_layout(expand: bool) -> OutputFormat:
    """The cqlsh layout EXPAND ON/OFF gives."""
    return next(fmt for fmt in FORMATS.values() if fmt.expand is expand)
