"""What the shell says beside its results (the results themselves: output.pipeline.ResultPipeline,
the shell's `results`): every message wrapped at words on a terminal with the name meant where one
was mistyped, cqlsh's build-version warning only where the protocol or grammar may differ. Plain
functions of what they read, handed it by the shell's methods (cqlsh_ext.shell.ext_shell.ExtShell)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from cqlsh_ext.common.text import message, screen_width

__all__ = ["major_minor", "said", "same_grammar"]


def major_minor(release: str) -> tuple[str, ...]:
    """('5', '0') for '5.0.6' and '5.0.6-SNAPSHOT'."""
    return tuple(release.split("-", 1)[0].split(".")[:2])


def same_grammar(server_release: str, built: str) -> bool:
    """True when the server's release and the one cqlsh was built against share their major.minor:
    only another major.minor can change the protocol or the grammar (cqlsh warns at any difference,
    5.0.0 against 5.0.6 too)."""
    return major_minor(server_release) == major_minor(built)


def said(text: str, conn: Any, keyspace: str | None, fitted: bool = True,
         statement: str | None = None, hidden: Callable[[str, str | None], bool] | None = None) -> str:
    """A message as the shell writes it: a name the server has not, or a word the grammar has not,
    with the one meant (output.meant; none before the connection is made; never one a read-only
    policy hides, `hidden`: agent.read_only.ReadOnly.hidden_in), wrapped at words for a terminal
    (common.text.message; `fitted` False: never, a program's JSON error), where the terminal would
    break it inside a word; a pipe or a file gets its one line."""
    if conn is not None:
        from cqlsh_ext.output.meant import columns_of, schema_of, with_meant
        from cqlsh_ext.upstream.seams import grammar_words

        metadata = getattr(conn, "metadata", None)
        keyspaces, tables = schema_of(metadata)
        columns = columns_of(metadata)
        if hidden is not None:
            keyspaces = {name: meta for name, meta in keyspaces.items() if not hidden(name, None)}
            tables = _shown(tables, hidden)
            columns = _shown_columns(columns, hidden)
        text = with_meant(text, tables, keyspaces, keyspace, grammar_words, statement, columns)
    return message(text, screen_width(sys.stderr)) if fitted else text


def _shown(tables: Callable[[str], list[str]],
           hidden: Callable[[str, str | None], bool]) -> Callable[[str], list[str]]:
    return lambda keyspace: [name for name in tables(keyspace) if not hidden(keyspace, name)]


def _shown_columns(columns: Callable[[str, str], list[str]],
                   hidden: Callable[[str, str | None], bool]) -> Callable[[str, str], list[str]]:
    return lambda keyspace, table: [] if hidden(keyspace, table) else columns(keyspace, table)
