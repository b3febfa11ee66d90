"""The bottom toolbar: where the shell is connected and how it will run and show statements."""

from __future__ import annotations

from typing import Any

import cassandra


def toolbar_items(shell: Any) -> list[tuple[str, str]]:
    """(label, value) pairs, read from the shell on every redraw so they follow its commands."""
    from cqlsh_ext.output.command import current_format

    settings = shell.settings.display
    consistency = cassandra.ConsistencyLevel.value_to_name.get(shell.consistency_level, "?")
    paging = str(shell.page_size) if shell.use_paging else "off"
    items = [
        ("host", f"{shell.hostname}:{shell.port}"),
        ("keyspace", shell.current_keyspace or "-"),
        ("consistency", consistency),
        ("decompress", settings.mode),
        ("paging", paging),
        ("output", current_format(shell)),
    ]
    if shell.tracing_enabled:
        items.append(("tracing", "on"))
    return items


#: Dropped first when the toolbar is wider than the terminal (the hint at its end is kept).
_LEAST_NEEDED = ("output", "paging", "decompress", "consistency", "host")
_PENDING = "  end the statement with ;  (Ctrl-C: clear)"
_IDLE = "  HELP KEYS: key bindings"


def toolbar_fragments(shell: Any, pending: bool, width: int = 0) -> list[tuple[str, str]]:
    """Styled text for prompt_toolkit; `pending`: the input is an unfinished statement. With a
    terminal `width`, the least needed items are left out until the toolbar fits."""
    items = toolbar_items(shell)
    hint = ("class:bottom-toolbar.warn", _PENDING) if pending else ("class:bottom-toolbar", _IDLE)
    for gone in _LEAST_NEEDED:
        if not width or _length(items) + len(hint[1]) <= width:
            break
        items = [(label, value) for label, value in items if label != gone]
    out: list[tuple[str, str]] = []
    for label, value in items:
        out.append(("class:bottom-toolbar", f" {label} "))
        out.append(("class:bottom-toolbar.key", value))
        out.append(("class:bottom-toolbar", " "))
    out.append(hint)
    return out


def _length(items: list[tuple[str, str]]) -> int:
    return sum(len(label) + len(value) + 3 for label, value in items)
