"""The read features, each declared once below every front end (the shell's reports aside, whose
grammar is still cqlsh's): `feature` (what a declaration holds, the registry), `reads` (the
declarations), `arguments` (name arguments read as every front end reads them), `output_schemas`
(each answer's JSON Schema), `reference` (docs/features.md's table, written from the declarations).
MCP builds its tools from `declared()` (mcp_server/tools.py); the Python API reads names with
`arguments`.

A package of its own declares more read features through the entry point group
`cqlsh_ext.features` (its module calls `feature.register` when imported, as reads.py does): MCP
serves them with a generic adapter (the service called with a `feature.FeatureCall`), scoped by the
guard from what each declares it reads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cqlsh_ext.features.feature import FEATURES, Feature

ENTRY_POINT_GROUP = "cqlsh_ext.features"
_plugins_loaded = False


class PluginError(Exception):
    """An entry point of ENTRY_POINT_GROUP that did not load; str() is the one line."""


def declared(plugins: bool = True) -> dict[str, Feature]:
    """Every read feature, by name: cqlsh-ext's own (reads.py), then those of the packages that
    declare some (`plugins`: their entry points loaded once, when first call)."""
    global _plugins_loaded
    import cqlsh_ext.features.reads  # noqa: F401  (registers cqlsh-ext's own)

    if not plugins:
        from cqlsh_ext.features import reads

        return {name: feature for name, feature in FEATURES.items() if name in reads.OWN}
    if not _plugins_loaded:
        _plugins_loaded = True
        from importlib.metadata import entry_points

        for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            try:
                entry.load()
            except Exception as err:  # a plugin's own bug: said in one line, naming it
                raise PluginError(f"the read feature plugin {entry.name} ({entry.value}) did not load: "
                                  f"{type(err).__name__}: {err}") from None
    return FEATURES


def service_of(name: str) -> Callable[..., Any]:
    """The service the feature `name` declares: the one function its request is handed to, whichever
    front end built the request (MCP's tools, the Python API's methods)."""
    feature = declared(plugins=False).get(name) or declared()[name]
    if feature.service is None:
        raise LookupError(f"{name} declares no service: its front end answers it with its own reading")
    return feature.service


__all__ = ["ENTRY_POINT_GROUP", "PluginError", "declared", "service_of"]
