"""`cqlsh-ext sample-config`: print a commented [cqlsh_ext] cqlshrc section to start from.

The text is made from the settings' declarations (cqlsh_ext.settings.SETTINGS), as is docs/options.md's
table (options_table, written by tools/options_table.py and checked by
tests/test_settings.py): a new setting appears in both without being written down twice.
"""

from __future__ import annotations

import sys
import textwrap

from cqlsh_ext.settings import CONFIG_SECTION, SETTINGS, Key

#: Comment lines are wrapped to this width, `; ` included.
WIDTH = 96

HEADER = f"""\
; The [{CONFIG_SECTION}] section of cqlshrc (~/.cassandra/cqlshrc, or --cqlshrc FILE).
; cqlsh ignores this section, so one file serves cqlsh and cqlsh-ext. Flags on the command
; line win over these lines. Remove the ';' in front of a setting to use it.
"""


def _doc(key: Key) -> str:
    return key.doc() if callable(key.doc) else key.doc


def _comment(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent="; ", subsequent_indent="; ", break_long_words=False,
                         break_on_hyphens=False)


def sample() -> str:
    """The commented cqlshrc text: every [cqlsh_ext] key with its value, then each section."""
    lines = [HEADER, f"[{CONFIG_SECTION}]"]
    sections: list[Key] = []
    for key in SETTINGS:
        if key.section is not None:
            sections.append(key)
            continue
        if key.flag_only:  # a run's own flag, never a cqlshrc key
            continue
        lines += [*_comment(_doc(key)), f";{key.name} = {key.example or key.default}", ""]
    for key in sections:
        lines += [*_comment(_doc(key)), f"[{key.section}]"]
        lines += [f"; {line}" for line in key.example.splitlines()]
    return "\n".join(lines) + "\n"


def _code(text: str) -> str:
    return f"`{text}`".replace("|", "\\|")  # a | inside a table cell ends the cell


def options_table() -> list[str]:
    """docs/options.md's options table: one row per setting, in declaration order."""
    rows = ["| flag | cqlshrc `[cqlsh_ext]` | default | meaning |", "|---|---|---|---|"]
    for key in SETTINGS:
        flags = [_code(flag) for flag in key.flags]
        if flags and key.takes != "switch":
            value = f"[{key.metavar}]" if key.takes == "optional" else key.metavar
            flags[-1] = _code(f"{key.flags[-1]} {value}")
        where = f"section `[{key.section}]`" if key.section else "(none: the flag only)" if key.flag_only \
            else f"`{key.name}`"
        default = key.unset if key.default is None or key.flag_only else _code(key.default)
        rows.append(f"| {', '.join(flags)} | {where} | {default} | {key.summary} |".replace("|  |", "| |"))
    return rows


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print("usage: cqlsh-ext sample-config  (append it to ~/.cassandra/cqlshrc and edit)")
        return 0
    sys.stdout.write(sample())
    return 0
