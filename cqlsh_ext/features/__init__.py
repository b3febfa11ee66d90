"""The kernel every feature is declared through, below the feature packages and importing none of
them: what a feature is (`feature`: Feature, Argument, Statement, the registry), the shell's commands
and the statements' claims (`commands`), a statement's form (`forms`), the one reading of a call
against its declaration (`calling`), HELP's texts from the declarations (`help`), each answer's JSON
Schema (`output_schemas`), docs/features.md written from them (`reference`), which declared
statement a statement is (`statements`). The shell's door, its bounds on a statement, HELP,
completion, loop of scripts and the session's own commands (DECODE, DECOMPRESS, OUTPUT:
shell/declared.py) are cqlsh_ext.shell's.

Each feature package declares its features, statements and commands in its own module
(`cqlsh_ext/<package>/declared.py`), found through the entry point group `cqlsh_ext.features`: the
group of cqlsh-ext's own distribution (pyproject.toml, [project.entry-points."cqlsh_ext.features"])
is loaded when the registry is first read (`load`); another distribution's is a package's, loaded
when a front end first asks for every feature (`declared()`), and may declare read features only. A
declaration names its service, handlers, HELP texts and completers by module and name
(feature.Service, feature.Text): loading the registry imports no service."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cqlsh_ext.features.feature import DECLARED_IN, FEATURES, Feature

ENTRY_POINT_GROUP = "cqlsh_ext.features"
#: The distribution whose entry points of ENTRY_POINT_GROUP are cqlsh-ext's own declarations.
OWN_DISTRIBUTION = "cqlsh-ext"

#: The modules cqlsh-ext's own entry points name (its declaration modules), once loaded.
_own_modules: list[str] = []
_loading: list[bool] = []
_plugins_loaded = False


class PluginError(Exception):
    """An entry point of ENTRY_POINT_GROUP that did not load; str() is the one line."""


def load() -> None:
    """cqlsh-ext's own declaration modules imported, once (the entry points of ENTRY_POINT_GROUP
    its own distribution declares, in their names' order): every feature and command
    they register is cqlsh-ext's own."""
    if _loading:
        return
    _loading.append(True)
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        entries = distribution(OWN_DISTRIBUTION).entry_points.select(group=ENTRY_POINT_GROUP)
    except PackageNotFoundError:
        _loading.clear()
        raise PluginError(f"{OWN_DISTRIBUTION}'s own features are declared in its package metadata (the "
                          f"entry points {ENTRY_POINT_GROUP}): install it (bin/setup, pip install)") from None
    for entry in sorted(entries, key=lambda e: e.name):
        _own_modules.append(entry.module)
        entry.load()  # one being imported already (it started this load) goes on after


def own() -> tuple[str, ...]:
    """The names of cqlsh-ext's own features: its read features, its write features, then those only
    the shell serves, each kind in the registry's order."""
    load()
    features = [feature for name, feature in FEATURES.items() if DECLARED_IN.get(name) in _own_modules]
    return tuple(f.name for f in features if f.writes is None and not f.shell_only) + \
        tuple(f.name for f in features if f.writes is not None and not f.shell_only) + \
        tuple(f.name for f in features if f.shell_only)


def declared(plugins: bool = True) -> dict[str, Feature]:
    """Every feature, by name: cqlsh-ext's own, then the read features of the packages that declare
    some (`plugins`: their entry points loaded once, when first called; a package's write feature is
    refused: writes are cqlsh-ext's own, journaled and undoable)."""
    global _plugins_loaded
    names = own()
    if not plugins:
        return {name: FEATURES[name] for name in names}
    if not _plugins_loaded:
        _plugins_loaded = True
        _load_plugins(names)
    return {**{name: FEATURES[name] for name in names},
            **{name: feature for name, feature in FEATURES.items() if name not in names}}


def _load_plugins(names: tuple[str, ...]) -> None:
    """The packages' entry points of ENTRY_POINT_GROUP (every distribution's but cqlsh-ext's)
    imported, in their names' order; one that fails or declares a write feature said in one line."""
    from importlib.metadata import entry_points

    for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if entry.dist is not None and _normal(entry.dist.name) == OWN_DISTRIBUTION:
            continue
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


def _normal(name: str) -> str:
    """A distribution's name as PEP 503 compares them."""
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


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


__all__ = ["ENTRY_POINT_GROUP", "OWN_DISTRIBUTION", "PluginError", "declared", "load", "own",
           "read_features", "service_of"]
