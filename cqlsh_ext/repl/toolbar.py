"""The bottom toolbar: where the shell is connected and how it will run and show statements."""

from __future__ import annotations

from typing import Any

import cassandra


def toolbar_items(shell: Any) -> list[tuple[str, str]]:
    """(label, value) pairs, read from the shell on every redraw so they follow its commands."""
    settings = shell.display_settings
    consistency = cassandra.ConsistencyLevel.value_to_name.get(shell.consistency_level, "?")
    paging = str(shell.page_size) if shell.use_paging else "off"
    items = [
        ("host", f"{shell.hostname}:{shell.port}"),
        ("keyspace", shell.current_keyspace or "-"),
        ("consistency", consistency),
        ("decompress", settings.mode),
        ("paging", paging),
        ("output", shell.current_output_format()),
    ]
    if shell.tracing_enabled:
        items.append(("tracing", "on"))
    return items


def toolbar_fragments(shell: Any, pending: bool) -> list[tuple[str, str]]:
    """Styled text for prompt_toolkit; `pending`: the input is an unfinished statement."""
    out: list[tuple[str, str]] = []
    for label, value in toolbar_items(shell):
        out.append(("class:bottom-toolbar", f" {label} "))
        out.append(("class:bottom-toolbar.key", value))
        out.append(("class:bottom-toolbar", " "))
    if pending:
        out.append(("class:bottom-toolbar.warn", "  end the statement with ;  (Ctrl-C: clear)"))
    else:
        out.append(("class:bottom-toolbar", "  HELP KEYS: key bindings"))
    return out
