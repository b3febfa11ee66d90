"""--read-only: the shell's door to the read-only rule (features/read_rule.py), the one `cqlsh-ext
mcp` keeps to. A statement runs when the rule lets it run (a read it knows, read as the server reads
it) and no table it reads is one the policy refuses (mcp_server/policy.py: the tables of credentials
and of other sessions' statements, the system tables it does not read, those a policy file denies,
and those whose values it redacts, which the shell cannot redact). The tables are those the rule
finds: a feature's as its declaration names them, in the keyspace in use; a SELECT's (the user's, or
the one a feature reads) those the server names once it has prepared it, beside those its text
names; a materialized view is refused as the table whose rows it holds is (Policy.view_refusal).
Any other statement is refused before it runs, in one line. The schema keeps MCP's rule, denied
means absent (Policy.hides): DESCRIBE of a denied table (or of a view of one) is refused as its
SELECT is, and what DESCRIBE lists or prints leaves it out (hidden_in, shown_schema).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.cql.system import is_system_keyspace
from cqlsh_ext.features import read_rule
from cqlsh_ext.mcp_server.policy import Policy, qualified_tables

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed, Token
    from cqlsh_ext.features.feature import Feature

#: The system tables read whose rows name no keyspace or table: the only ones read while the policy
#: hides a table (denied means absent; the shell leaves no row out, as MCP's screen does). Decided
#: by the policy and the table's name alone, never by what the schema holds.
NAME_NO_TABLE = frozenset({("system", "local"), ("system", "peers"), ("system", "peers_v2")})
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
        elif tokens[0].name in ("describe", "desc"):
            return self._described(tokens, keyspace, tables_of, base_of)
        else:
            return None  # a session command
        if select is not None:
            select_tokens = read_rule.first_statement(select.tokens)
            why = self.policy.named_refusal(select_tokens)
            if why is not None:
                return why
            tables += self._named(select_tokens, keyspace, tables_of)
            if prepare is not None:
                tables += read_rule.server_tables(prepare, select.spanned()) or []
        return self._tables(tables, base_of)

    def _described(self, tokens: list[Token], keyspace: str | None,
                   tables_of: Callable[[str], Sequence[str]],
                   base_of: Callable[[str, str], str | None] | None) -> str | None:
        """Why a DESCRIBE is refused: it names a keyspace or a table the policy refuses, or a view
        of such a table (MCP's describe_table refuses them alike). A table whose values are
        redacted is described: its schema holds none of them."""
        words = [tok.name for tok in tokens[1:] if tok.kind == "word"]
        while words and words[0] in ("full", "only"):
            words = words[1:]
        if words[:1] == ["keyspace"] and len(words) > 1:
            why = self.policy.refusal(words[1])
            if why is not None and self.policy.hides(words[1]):
                return why
        for ks, name in self._named(tokens[1:], keyspace, tables_of):
            why = self.policy.refusal(ks, name)
            base = base_of(ks, name) if why is None and base_of is not None else None
            if base is not None and self.policy.refusal(ks, base) is not None:
                why = self.policy.view_refusal(ks, name, base)
            if why is not None:
                return why
        return None

    def hidden_in(self, metadata: Any) -> Callable[[str, str | None], bool]:
        """Whether the policy hides keyspace.name (name None: the keyspace whole), in the driver's
        schema (`metadata`: its Cluster's): a denied table, or a view or an index of one. Denied
        means absent, as in MCP's lists: DESCRIBE leaves it out, and no line says it did."""
        def hidden(keyspace: str, name: str | None = None) -> bool:
            if self.policy.hides(keyspace):
                return True
            if name is None:
                return False
            table = view_base(metadata, keyspace, name) or index_table(metadata, keyspace, name)
            return self.policy.hides(keyspace, name) \
                or (table is not None and self.policy.hides(keyspace, table))

        return hidden

    def shown_schema(self, rows: Iterable[Mapping[str, Any]], metadata: Any) -> list[Mapping[str, Any]]:
        """The rows of a DESCRIBE's answer (the server's: keyspace_name, type, name, ...) without
        those naming what the policy hides (hidden_in)."""
        hidden = self.hidden_in(metadata)

        def shown(row: Mapping[str, Any]) -> bool:
            keyspace, kind, name = row.get("keyspace_name"), row.get("type"), row.get("name")
            if not isinstance(keyspace, str):  # DESCRIBE KEYSPACES: the keyspace's name alone
                return not (kind in (None, "keyspace") and isinstance(name, str) and hidden(name, None))
            if kind not in (None, "table", "materialized_view", "view", "index") or not isinstance(name, str):
                return not hidden(keyspace, None)
            return not hidden(keyspace, name)

        return [row for row in rows if shown(row)]

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
            if is_system_keyspace(ks) and (ks, table) not in NAME_NO_TABLE and self.policy.may_hide(None):
                return (f"refused: the policy ({self.policy.source}) hides tables, and rows of {ks}.{table} "
                        f"may name one: {READER} leaves no row out (DESCRIBE does; cqlsh-ext mcp answers "
                        "it screened)")
        return None


def view_base(metadata: Any, keyspace: str, name: str) -> str | None:
    """The table whose rows the materialized view keyspace.name holds, in the driver's schema
    (`metadata`: its Cluster's), or None: no view of it."""
    meta = metadata.keyspaces.get(keyspace) if metadata is not None else None
    view = getattr(meta, "views", {}).get(name) if meta is not None else None
    return str(view.base_table_name) if view is not None else None


def index_table(metadata: Any, keyspace: str, name: str) -> str | None:
    """The table the index keyspace.name is of, in the driver's schema, or None: no index of it."""
    meta = metadata.keyspaces.get(keyspace) if metadata is not None else None
    index = getattr(meta, "indexes", {}).get(name) if meta is not None else None
    return str(index.table_name) if index is not None else None


def runs_read_only(text: str, feature: Feature | None = None) -> bool:
    """Whether --read-only runs a statement of this text (`feature`: the one it is a statement of),
    the tables it names aside (--spec says it of each statement)."""
    from cqlsh_ext.cql.lexer import Lexed

    return read_rule.statement_refusal(READER, Lexed(text), feature, session=True) is None


def _words(feature: Feature) -> int:
    from cqlsh_ext.features.forms import statement_words

    return len(statement_words(feature))
