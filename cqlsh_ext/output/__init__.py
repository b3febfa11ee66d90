"""Machine-readable query output: JSON Lines and CSV (`--output-format`, `OUTPUT FORMAT`).

- values.py: one CQL value -> JSON text or CSV text, typed by the driver's column types;
- writers.py: a result set -> JSON Lines or CSV rows;
- shellmixin.py: the Shell methods that route results to a writer, and the OUTPUT command.

`table` and `vertical` are cqlsh's own layouts (vertical is EXPAND ON); nothing here runs for them.
"""

from cqlsh_ext.settings import OUTPUT_FORMATS

MACHINE_FORMATS = ("json", "csv")

__all__ = ["MACHINE_FORMATS", "OUTPUT_FORMATS"]
