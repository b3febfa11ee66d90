"""The output formats, one declaration each: how a result is written in that format.

    table, vertical   cqlsh's own layouts (EXPAND OFF / ON), with decoded blob cells
                      (output.pipeline, output.table)
    json, csv         a machine format: its RowWriter (output.writers) writes every page

Loaded at start-up (the OUTPUT command, the shell): no writer module is imported here, a machine
format names its writer class in output.writers, loaded with the first such result. DECLARES is
a literal that settings reads from this file without importing it (the output layer is above
settings): settings.OUTPUT_FORMATS, MACHINE_FORMATS and the texts naming the formats come from it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FORMATS", "OutputFormat", "for_layout", "get"]


#: {name: fields of OutputFormat}, the default first. Read by settings without an import
#: (codecs.base.read_declaration): a literal, near the top of the file.
DECLARES = {
    "table": {"expand": False},
    "vertical": {"expand": True, "help": "EXPAND ON"},
    "json": {"writer": "JsonLinesWriter", "help": "one JSON object per row"},
    "csv": {"writer": "CsvWriter"},
}


@dataclass(frozen=True)
class OutputFormat:
    name: str
    #: A cqlsh layout: whether it is EXPAND ON (vertical); None for a machine format.
    expand: bool | None = None
    #: A machine format's RowWriter class in cqlsh_ext.output.writers.
    writer: str | None = None
    #: A note after the name in help texts.
    help: str = ""

    @property
    def machine(self) -> bool:
        return self.writer is not None


FORMATS: dict[str, OutputFormat] = {
    name: OutputFormat(name, **fields) for name, fields in DECLARES.items()  # type: ignore[arg-type]
}


def get(name: str) -> OutputFormat:
    return FORMATS[name]


def for_layout(expand: bool) -> OutputFormat:
    """The cqlsh layout EXPAND ON/OFF gives."""
    return next(fmt for fmt in FORMATS.values() if fmt.expand is expand)
