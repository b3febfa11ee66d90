"""The bottom toolbar: where the shell is connected and how it will run and show statements."""

from __future__ import annotations

from typing import TYPE_CHECKING

import cassandra

if TYPE_CHECKING:
    from cqlsh_ext.settings.shell import Shell


def toolbar_items(shell: Shell) -> list[tuple[str, str]]:
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


#: Short labels, used before anything is left out: the host's value needs none.
_SHORT = {"host": "", "keyspace": "ks:", "consistency": "cl:", "decompress": "dec:", "paging": "page:",
          "output": "out:", "tracing": "trace:"}
#: Left out in this order when even short labels do not fit: the keyspace first (the prompt shows
#: it), then the host (long, and the same all session); what changes how statements run goes last.
_LEAST_NEEDED = ("keyspace", "host", "tracing", "output", "paging", "decompress", "consistency")
_PENDING = ("  end the statement with ;  (Ctrl-C: clear)", "  end with ;")
_IDLE = ("  HELP KEYS: key bindings", "")
#: What is open (the character that closes it) -> what the toolbar calls it.
_OPENED = {"'": "a string", '"': "a quoted name", "$$": "a $$ string", "*/": "a comment"}


def toolbar_fragments(shell: Shell, pending: bool, width: int = 0,
                      opened: str | None = None) -> list[tuple[str, str]]:
    """Styled text for prompt_toolkit; `pending`: the input is an unfinished statement; `opened`:
    what closes a string (or name, comment) the input leaves open. With a terminal `width`, the
    hint and labels are shortened first, then the least needed items are left out, until it fits."""
    items = toolbar_items(shell)
    if opened:
        hints = (f"  {_OPENED.get(opened, 'a string')} is open: close it with {opened}  (Ctrl-C: clear)",
                 f"  close it with {opened}")
    else:
        hints = _PENDING if pending else _IDLE
    style = "class:bottom-toolbar.warn" if pending or opened else "class:bottom-toolbar"
    tries = [(items, short, hint) for short in (False, True) for hint in hints]
    for gone in _LEAST_NEEDED:
        items = [(label, value) for label, value in items if label != gone]
        tries.append((items, True, hints[1]))
    for shown, short, hint in tries:
        if not width or _length(shown, short) + len(hint) <= width:
            break
    out: list[tuple[str, str]] = []
    for label, value in shown:
        if short:
            out.append(("class:bottom-toolbar", f" {_SHORT.get(label, label + ':')}"))
            out.append(("class:bottom-toolbar.key", value))
        else:
            out.append(("class:bottom-toolbar", f" {label} "))
            out.append(("class:bottom-toolbar.key", value))
            out.append(("class:bottom-toolbar", " "))
    out.append((style, hint))
    return out


def _length(items: list[tuple[str, str]], short: bool) -> int:
    if short:
        return sum(1 + len(_SHORT.get(label, label + ":")) + len(value) for label, value in items)
    return sum(len(label) + len(value) + 3 for label, value in items)
