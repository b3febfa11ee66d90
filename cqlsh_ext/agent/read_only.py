"""--read-only: the shell runs what `cqlsh-ext mcp` runs and nothing else, by the same rules.

A statement is let through when it is a read as the MCP server's gate reads it (mcp_server/gate.py:
SELECT, DESCRIBE, COMPRESSION STATS, SETTINGS and ADVISE without SAVE DICTIONARY, INSPECT), a read
feature's statement (features: a package's too; never one that writes or COMPRESSION TRIAL), or a
command that changes the session alone (USE, CONSISTENCY, PAGING, OUTPUT, DECODE, SOURCE, whose
statements are each checked, ...); then it names no table the policy refuses (mcp_server/policy.py:
the tables of credentials and of other sessions' statements, the system tables it does not read,
those a policy file denies, and those whose values it redacts, which the shell cannot redact). Any
other statement is refused before it runs, in one line. Decided on the shell's lexer's tokens, as
the gate decides: no quoting, comment or case hides a word.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cqlsh_ext.mcp_server import gate
from cqlsh_ext.mcp_server.policy import Policy, qualified_tables, token_name

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed, Token
    from cqlsh_ext.features.feature import Feature

#: How a refusal names the switch, and who keeps to the policy.
READER = "cqlsh-ext --read-only"
#: The shell's commands that change only the session (what is printed and how, where it reads, who
#: it is), never what is stored: let through.
SESSION_WORDS = frozenset({"use", "consistency", "serial", "paging", "expand", "tracing", "show", "help",
                           "?", "exit", "quit", "clear", "cls", "decode", "decompress", "output", "source",
                           "login", "capture", "history"})
#: What a refusal says runs.
RUNS = f"{gate.ALLOWED}, and the session's commands (USE, CONSISTENCY, PAGING, OUTPUT, DECODE, ...)"


def load(path: str | None) -> ReadOnly:
    """The switch with the policy file at `path` (None: the built-in policy alone); raises
    mcp_server.policy.PolicyError. Its [tools] name MCP's tools, the read features."""
    from cqlsh_ext.features import PluginError, read_features
    from cqlsh_ext.mcp_server.policy import load as load_policy

    try:
        tools = read_features()
    except PluginError:  # a package's bug: said where its statement is run; its tools unnamed here
        tools = read_features(plugins=False)
    return ReadOnly(load_policy(path, tools, reader=READER))


@dataclass(frozen=True)
class ReadOnly:
    policy: Policy

    def refusal(self, statement: Lexed, feature: Feature | None, keyspace: str | None,
                tables_of: Callable[[str], Sequence[str]]) -> str | None:
        """Why `statement` (its first statement: the shell runs one at a time) is refused, one
        line, or None. `feature`: the declared feature it is a statement of; `keyspace`: the one in
        use; `tables_of(keyspace)`: the names of its tables, by which an unqualified name is
        known to be a table."""
        tokens = _first(statement.tokens)
        if not tokens:
            return None
        return _statement_refusal(tokens, feature) or self.policy.named_refusal(tokens) \
            or self._tables(tokens, keyspace, tables_of)

    def _tables(self, tokens: list[Token], keyspace: str | None,
                tables_of: Callable[[str], Sequence[str]]) -> str | None:
        """Why a table the statement names is refused: named keyspace.table, or by its name alone
        in the keyspace in use."""
        named = qualified_tables(tokens)
        if keyspace is not None:
            known = set(tables_of(keyspace))
            chained = {i for i, tok in enumerate(tokens) if tok.kind == "punct" and tok.value == "."}
            named += [(keyspace, token_name(tok)) for i, tok in enumerate(tokens)
                      if tok.kind in ("word", "qname") and token_name(tok) in known
                      and i - 1 not in chained and i + 1 not in chained]
        for ks, table in named:
            why = self.policy.refusal(ks, table)
            if why is not None:
                return why
            if self.policy.redactions(ks, table):
                return (f"refused: the policy ({self.policy.source}) redacts values of {ks}.{table}, and "
                        f"{READER} redacts nothing: cqlsh-ext mcp answers it redacted")
        return None


def runs_read_only(text: str, feature: Feature | None = None) -> bool:
    """Whether --read-only runs a statement of this text (`feature`: the one it is a statement of),
    the tables it names aside (--spec says it of each statement)."""
    from cqlsh_ext.cql.lexer import Lexed

    tokens = _first(Lexed(text).tokens)
    return not tokens or _statement_refusal(tokens, feature) is None


def _statement_refusal(tokens: list[Token], feature: Feature | None) -> str | None:
    """Why the statement is refused for what it is (a write, DDL, ...), or None."""
    if feature is not None:
        if feature.writes is not None or feature.shell_only:
            return (f"refused: {READER} runs reads only, and {' '.join(_words(tokens))} writes "
                    f"({feature.title}): {RUNS} only")
        return None
    if token_name(tokens[0]).lower() in SESSION_WORDS or gate.kind_of(tokens) is not None:
        return None
    return f"refused: {READER} runs {RUNS} only; {gate.what_of(tokens)} is not one of them"


def _first(tokens: list[Token]) -> list[Token]:
    """The tokens of the first statement: up to its `;`, without the end token."""
    out = []
    for tok in tokens:
        if tok.kind == "end" or (tok.kind == "punct" and tok.value == ";"):
            break
        out.append(tok)
    return out


def _words(tokens: list[Token]) -> list[str]:
    return [tok.value.upper() for tok in tokens[:2] if tok.kind == "word"]
