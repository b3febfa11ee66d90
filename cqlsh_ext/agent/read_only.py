"""--read-only: the shell's door to the read-only rule (features/read_rule.py), the one `cqlsh-ext
mcp` keeps to. A statement runs when the rule lets it run (a read it knows, read as the server reads
it) and no table it reads is one the policy refuses (mcp_server/policy.py: the tables of credentials
and of other sessions' statements, the system tables it does not read, those a policy file denies,
and those whose values it redacts, which the shell cannot redact). The tables are those the rule
finds: a feature's as its declaration names them, in the keyspace in use; a SELECT's (the user's, or
the one a feature reads) those the server names once it has prepared it, beside those its text
names; a materialized view is refused as the table whose rows it holds is (Policy.view_refusal).
Any other statement is refused before it runs, in one line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.features import read_rule
from cqlsh_ext.mcp_server.policy import Policy, qualified_tables

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed, Token
    from cqlsh_ext.features.feature import Feature

#: How a refusal names the switch, and who keeps to the policy.
READER = "cqlsh-ext --read-only"
#: What a refusal says runs, and cqlsh-ext --spec and the skill say.
RUNS = ("SELECT, DESCRIBE (DESCRIBE PAYLOAD too), COMPRESSION STATS, SETTINGS or ADVISE (without SAVE "
        "DICTIONARY), INSPECT, and the session's commands (USE, CONSISTENCY, PAGING, OUTPUT, DECODE, ...)")


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
                tables_of: Callable[[str], Sequence[str]],
                prepare: Callable[[str], object] | None = None,
                base_of: Callable[[str, str], str | None] | None = None) -> str | None:
        """Why `statement` (its first statement: the shell runs one at a time) is refused, one
        line, or None. `feature`: the declared feature it is a statement of; `keyspace`: the one in
        use; `tables_of(keyspace)`: the names of its tables, by which an unqualified name is
        known to be a table; `prepare`: the session's, by which the server names a SELECT's table;
        `base_of(keyspace, name)`: the table a materialized view holds the rows of (None: no view),
        whose refusal is the view's (view_base)."""
        why = read_rule.statement_refusal(READER, statement, feature, session=True)
        if why is not None:
            return why
        tokens = read_rule.first_statement(statement.tokens)
        if not tokens:
            return None
        why = self.policy.named_refusal(tokens)
        if why is not None:
            return why
        found = read_rule.feature_of(statement) if feature is None else (feature, _words(feature))
        if found is not None:
            from cqlsh_ext.cql.errors import QueryError
            from cqlsh_ext.features.arguments import Invalid

            try:
                tables, select = read_rule.feature_tables(found[0], statement, found[1], keyspace)
            except (Invalid, QueryError):
                return None  # the feature says why, reading it as here, and reads nothing
        elif tokens[0].name.lower() == "select":
            tables, select = [], statement
        else:
            return None  # a session command, DESCRIBE: the schema
        if select is not None:
            select_tokens = read_rule.first_statement(select.tokens)
            why = self.policy.named_refusal(select_tokens)
            if why is not None:
                return why
            tables += self._named(select_tokens, keyspace, tables_of)
            if prepare is not None:
                tables += read_rule.server_tables(prepare, select.spanned()) or []
        return self._tables(tables, base_of)

    def _named(self, tokens: list[Token], keyspace: str | None,
               tables_of: Callable[[str], Sequence[str]]) -> list[tuple[str, str]]:
        """The tables a statement's text names: keyspace.table, or a name alone that is a table of
        the keyspace in use."""
        named = qualified_tables(tokens)
        if keyspace is not None:
            known = set(tables_of(keyspace))
            chained = {i for i, tok in enumerate(tokens) if tok.kind == "punct" and tok.value == "."}
            named += [(keyspace, tok.name) for i, tok in enumerate(tokens)
                      if tok.kind in ("word", "qname") and tok.name in known
                      and i - 1 not in chained and i + 1 not in chained]
        return named

    def _tables(self, tables: list[tuple[str, str]],
                base_of: Callable[[str, str], str | None] | None) -> str | None:
        """Why one of `tables` (or the table a view among them holds the rows of) is refused."""
        for ks, table in tables:
            why = self.policy.refusal(ks, table)
            if why is not None:
                return why
            base = base_of(ks, table) if base_of is not None else None
            why = self.policy.view_refusal(ks, table, base) if base is not None else None
            if why is not None:
                return why
            if self.policy.redactions(ks, table):
                return (f"refused: the policy ({self.policy.source}) redacts values of {ks}.{table}, and "
                        f"{READER} redacts nothing: cqlsh-ext mcp answers it redacted")
        return None


def view_base(metadata: Any, keyspace: str, name: str) -> str | None:
    """The table whose rows the materialized view keyspace.name holds, in the driver's schema
    (`metadata`: its Cluster's), or None: no view of it."""
    meta = metadata.keyspaces.get(keyspace) if metadata is not None else None
    view = getattr(meta, "views", {}).get(name) if meta is not None else None
    return str(view.base_table_name) if view is not None else None


def runs_read_only(text: str, feature: Feature | None = None) -> bool:
    """Whether --read-only runs a statement of this text (`feature`: the one it is a statement of),
    the tables it names aside (--spec says it of each statement)."""
    from cqlsh_ext.cql.lexer import Lexed

    return read_rule.statement_refusal(READER, Lexed(text), feature, session=True) is None


def _words(feature: Feature) -> int:
    from cqlsh_ext.features.forms import statement_words

    return len(statement_words(feature))
