"""The output formats, one declaration each: what `--output-format` and `OUTPUT FORMAT` accept.

    table, vertical   cqlsh's own layouts (EXPAND OFF / ON), with decoded blob cells
    json, csv         a machine format: a row writer in cqlsh_ext.output.writers writes every page

The declaration sits in the settings layer, below the output layer, because the settings parse and
list these names; how each machine format is written is its writer's business, registered under the
same name (`output.writers.row_writer`; tests/output/test_formats.py holds the two together).
Adding an output format: one `OutputFormat` here, and for a machine format its writer class.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["DECLARED", "OutputFormat", "for_layout", "output_format"]


class OutputFormat(NamedTuple):
    """One way a result can be printed. (A NamedTuple, not a dataclass: cheaper to create at start-up.)"""

    name: str
    #: A cqlsh layout: whether it is EXPAND ON (vertical); None for a machine format.
    expand: bool | None = None
    #: A note after the name in help texts.
    help: str = ""
    #: Reports (INSPECT, COMPRESSION) are written as one JSON object instead of text.
    reports_as_json: bool = False

    @property
    def machine(self) -> bool:
        """Written by a row writer (cqlsh_ext.output.writers) rather than a cqlsh layout."""
        return self.expand is None


#: Every output format, the default first.
DECLARED: tuple[OutputFormat, ...] = (
    OutputFormat("table", expand=False),
    OutputFormat("vertical", expand=True, help="EXPAND ON"),
    OutputFormat("json", help="one JSON object per row", reports_as_json=True),
    OutputFormat("csv"),
)
_BY_NAME = {fmt.name: fmt for fmt in DECLARED}


def output_format(name: str) -> OutputFormat:
    """The declaration of a format name the settings accepted."""
    return _BY_NAME[name]


def for_layout(expand: bool) -> OutputFormat:
    """The cqlsh layout EXPAND ON/OFF gives."""
    return next(fmt for fmt in DECLARED if fmt.expand is expand)
