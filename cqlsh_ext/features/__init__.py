"""The read features, each declared once below every front end (the shell's reports aside, whose
grammar is still cqlsh's): `feature` (what a declaration holds, the registry), `reads` (the
declarations), `arguments` (name arguments read as every front end reads them), `output_schemas`
(each answer's JSON Schema), `reference` (docs/features.md's table, written from the declarations).
MCP builds its tools from `FEATURES` (mcp_server/tools.py); the Python API reads names with
`arguments`."""

from __future__ import annotations

from cqlsh_ext.features.feature import FEATURES, Feature


def declared() -> dict[str, Feature]:
    """Every read feature, by name (its declarations read once, when first asked)."""
    import cqlsh_ext.features.reads  # noqa: F401  (registers them)

    return FEATURES


__all__ = ["declared"]
