"""Every place cqlsh-ext touches cqlsh's internals, in one module.

cqlsh-ext extends the official PyPI `cqlsh` (pinned to 6.2.2, module `cqlshlib`) without copying it.
The seams below were verified against that version (see shared/docs/cqlsh-seams.md); anything that
reaches into `cqlshlib` beyond its public-ish surface goes through here, so an upgrade of the pin
has one file to re-check (tests/test_seams.py pins the assumptions).

1. Import: `cqlshlib.cqlshmain` parses `sys.argv` at import time (`--help` would exit) and derives
   `CONFIG_FILE` from `--cqlshrc`. `import_cqlshmain` imports it with argv reduced to the program name
   and the `--cqlshrc` option, so stock behaviour for the config file is kept.
2. Shell class: `cqlshmain.main()` (and `SOURCE`, `LOGIN`) look the class up as the module global
   `Shell`. `install_shell_class` rebinds that global to our subclass, so cqlsh's own `main()` runs
   unchanged: option handling, timezone, history, exit codes.
3. Display: cqlsh binds a formatter per CQL type name from `formatting._formatters` when it builds a
   `CqlType`, and recurses into collections, tuples and UDTs through the same registry.
   `blob_formatter_swapped` swaps the `blob` entry only while a result is being formatted, so nested
   blobs are decoded for display while COPY TO (which formats through the same registry in worker
   processes) keeps the raw bytes. Top-level blob cells also take a shortcut in
   `Shell.myformat_value` (the seam cqlsh-seams.md calls primary), using `value_colormap`.
4. Commands: a statement is a shell command when the Shell has `do_<word>` and the statement parses
   under `cqlshCommand`. `register_special_commands` appends our rules to
   `cqlshhandling.cqlsh_extra_syntax_rules` before cqlsh's `setup_cqlruleset()` reads them, with
   `<specialCommand>` re-derived from the installed version's own rule text plus our alternatives.
5. Text formatting helpers (`color_text`, `unicode_controlchars_re`, `_show_control_chars`) are
   reused so decoded text is escaped and coloured exactly as cqlsh formats text.
6. Connections (only with --keyspaces / --certfile): cqlsh builds every `Cluster` itself (the shell
   in `Shell.__init__`, `LOGIN`, COPY's worker processes in `copyutil`) from
   `ssl_options=ssl_settings(host, CONFIG_FILE)`, which cannot carry an `SSLContext`.
   `install_connection_hook` rebinds the `Cluster` name in `cqlshmain` and `copyutil` to a factory
   that lets us adjust the keyword arguments (adds `ssl_context`), and `ssl_settings` in
   `sslhandling` and `copyutil` (cqlsh's exits without a certfile). Never installed for plain
   connections.
7. Shell methods overridden by name (cqlsh_ext.shell and its mixins), each handing over to cqlsh
   when our feature is off: `print_static_result`, `myformat_value`,
   `print_formatted_result_vertically` (multi-line values only), `print_result` (paging wrappers;
   the interactive front end prints pages without `---MORE---`), `check_build_versions` and
   `print_warnings` (to stderr in JSON/CSV output), `cmdloop` (the prompt_toolkit loop),
   `do_describe`/`do_copy` (Keyspaces). The interactive loop also sets the module global
   `cqlshmain.readline` to None so cqlsh neither reads nor writes its readline history there.
   tests/test_seams.py checks that each name still exists with the expected signature.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

CQLSH_VERSION_PIN = "6.2"


def import_cqlshmain(cqlshrc: str | None) -> ModuleType:
    """Import cqlshlib.cqlshmain without letting it act on our command line (seam 1)."""
    if "cqlshlib.cqlshmain" in sys.modules:
        return sys.modules["cqlshlib.cqlshmain"]
    saved = sys.argv
    sys.argv = [saved[0] if saved else "cqlsh-ext"] + (["--cqlshrc", cqlshrc] if cqlshrc else [])
    try:
        from cqlshlib import cqlshmain
    finally:
        sys.argv = saved
    if not cqlshmain.version.startswith(CQLSH_VERSION_PIN):
        raise RuntimeError(f"cqlsh-ext needs cqlsh {CQLSH_VERSION_PIN}.x, found {cqlshmain.version}")
    return cqlshmain


def install_shell_class(cqlshmain: ModuleType, shell_class: type) -> None:
    """Make cqlsh's main(), SOURCE and LOGIN construct our Shell subclass (seam 2)."""
    cqlshmain.Shell = shell_class


@contextmanager
def blob_formatter_swapped(formatter: Callable[..., Any]) -> Iterator[None]:
    """Use `formatter` for CQL blobs while the block runs; COPY is never inside it (seam 3)."""
    from cqlshlib import formatting

    registry = formatting._formatters
    saved = registry["blob"]
    registry["blob"] = formatter
    try:
        yield
    finally:
        registry["blob"] = saved


def value_colormap(color: bool) -> Any:
    """The colour map cqlsh's format_by_type hands a value formatter (seam 3)."""
    from cqlshlib import formatting

    return formatting.default_colormap if color else formatting.empty_colormap


def register_special_commands(rules: str, words: tuple[str, ...], alternatives: tuple[str, ...]) -> None:
    """Add shell commands to cqlsh's grammar before setup_cqlruleset() runs (seam 4).

    `rules` defines the new rule names, `alternatives` are those names (e.g. '<decompressCommand>')
    appended to `<specialCommand>`, `words` may end with a newline instead of ';'.
    """
    from cqlshlib import cqlshhandling

    base = cqlshhandling.cqlsh_special_cmd_command_syntax_rules
    head, sep, _ = base.rpartition(";")
    if not sep or "<specialCommand>" not in head:
        raise RuntimeError("cqlsh's <specialCommand> rule has an unexpected shape")
    pad = "\n                   "
    special = head.rstrip() + "".join(f"{pad}| {alt}" for alt in alternatives) + f"{pad};\n"
    cqlshhandling.cqlsh_extra_syntax_rules += special + rules
    cqlshhandling.my_commands_ending_with_newline += words


def text_formatting() -> tuple[Callable[..., Any], Any, Callable[..., str]]:
    """cqlsh's own text escaping and colouring helpers (seam 5)."""
    from cqlshlib import formatting

    return formatting.color_text, formatting.unicode_controlchars_re, formatting._show_control_chars


def install_connection_hook(adjust: Callable[[dict[str, Any]], dict[str, Any]],
                            ssl_settings: Callable[..., dict[str, Any]]) -> None:
    """Let `adjust` rewrite the kwargs of every Cluster cqlsh creates; replace ssl_settings (seam 6)."""
    from cassandra.cluster import Cluster
    from cqlshlib import copyutil, sslhandling

    def cluster(*args: Any, **kwargs: Any) -> Cluster:
        return Cluster(*args, **adjust(kwargs))

    # A COPY worker started with spawn has copyutil but must not import cqlshmain (seam 1).
    cqlshmain = sys.modules.get("cqlshlib.cqlshmain")
    for module in (m for m in (cqlshmain, copyutil) if m is not None):
        if getattr(module, "Cluster", None) is not Cluster:
            raise RuntimeError(f"{module.__name__}.Cluster is not cassandra.cluster.Cluster")
        module.Cluster = cluster  # type: ignore[attr-defined]
    sslhandling.ssl_settings = ssl_settings
    copyutil.ssl_settings = ssl_settings  # type: ignore[attr-defined]
