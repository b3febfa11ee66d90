"""The features, each declared once below every front end (the shell reads STATS, ADVISE and
SETTINGS from them; its other reports' grammar is still cqlsh's): `feature` (what a declaration
holds, the registry), `reads` and `write_features` (the declarations), `clauses` (the readers of the
shell's clauses with a grammar of their own), `arguments` (name arguments read as every front end
reads them), `output_schemas` (each answer's JSON Schema), `reference` (docs/features.md's table,
written from the declarations).
MCP builds its tools from `declared()`'s read features (mcp_server/tools.py); the Python API hands
its requests to `service_of()` and reads names with `arguments`.

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


def own() -> tuple[str, ...]:
    """The names of cqlsh-ext's own features: its read features (reads.py), its write features
    (write_features.py), then those only the shell serves (shell_features.py)."""
    from cqlsh_ext.features import reads, shell_features, write_features

    return reads.OWN + write_features.OWN + shell_features.OWN


def declared(plugins: bool = True) -> dict[str, Feature]:
    """Every feature, by name: cqlsh-ext's own (reads.py, write_features.py), then the read features of the
    packages that declare some (`plugins`: their entry points loaded once, when first called; a
    package's write feature is refused: writes are cqlsh-ext's own, journaled and undoable)."""
    global _plugins_loaded
    names = own()
    if not plugins:
        return {name: FEATURES[name] for name in names}
    if not _plugins_loaded:
        _plugins_loaded = True
        from importlib.metadata import entry_points

        for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            try:
                entry.load()
            except Exception as err:  # a plugin's own bug: said in one line, naming it
                raise PluginError(f"the read feature plugin {entry.name} ({entry.value}) did not load: "
                                  f"{type(err).__name__}: {err}") from None
            writing = [name for name, feature in FEATURES.items()
                       if feature.writes is not None and name not in names]
            for name in writing:
                del FEATURES[name]
            if writing:
                raise PluginError(f"the read feature plugin {entry.name} ({entry.value}) declares "
                                  f"{', '.join(writing)}, which writes: only cqlsh-ext's own features "
                                  "write (journaled, undoable)")
    return FEATURES


def read_features(plugins: bool = True) -> dict[str, Feature]:
    """declared()'s read features: what MCP serves as its tools (none the shell's alone)."""
    return {name: feature for name, feature in declared(plugins).items()
            if feature.writes is None and not feature.shell_only}


def service_of(name: str) -> Callable[..., Any]:
    """The service the feature `name` declares: the one function its request is handed to, whichever
    front end built the request (MCP's tools, the Python API's methods)."""
    feature = declared(plugins=False).get(name) or declared()[name]
    if feature.service is None:
        raise LookupError(f"{name} declares no service: its front end answers it with its own reading")
    return feature.service


__all__ = ["ENTRY_POINT_GROUP", "PluginError", "declared", "own", "read_features", "service_of"]
