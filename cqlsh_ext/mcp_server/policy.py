"""What `cqlsh-ext mcp` may answer: its policy (docs/mcp.md, "Policy"). Built in, and not to be
lifted by any policy file: the tables of credentials and of other sessions' statements are never
read (CREDENTIALS). The tables of system keyspaces are read by allowing, not denying: only the schema
and topology tables an assistant needs (SYSTEM_READABLE), and those a policy file names one by one;
every other table of a system keyspace is refused (system.paxos, system.batches and
system.prepared_statements hold other sessions' mutations and statements, their values included).
A policy file (`--policy FILE`, TOML) adds:

    [tools]
    allow = ["list_keyspaces", "query"]      # only these are listed and served (default: every tool)
    deny = ["inspect_value"]                 # these are not

    [tables]
    deny = ["hr.*", "shop.payment_tokens"]   # keyspace.table globs: never read, never listed

    [redact]
    columns = ["shop.customers.email",       # keyspace.table.column[.path] globs: values never leave
               "shop.orders.data.customer.*",
               "*.*.password"]

    [system]
    allow = ["system_views.settings"]        # further system tables read, each keyspace.table (no glob)

    [limits]
    calls_per_minute = 60

Names are matched as the schema spells them (lower case unless the name was created "quoted");
payload paths as DESCRIBE PAYLOAD names them (data.items[].sku: an array's elements are `[]`, an
index written [3] is `[]` too). In a pattern `*` stands for any part of one name (never a dot), `**`
for any number of names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cqlsh_ext.cql.system import CASSANDRA_SYSTEM_KEYSPACES, is_system_keyspace

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Token

#: Tables never read, whatever the policy says: credentials (Cassandra's roles and their salted
#: password hashes, permissions, role members; DataStax Enterprise's security keyspace), and the
#: tables that hold other sessions' statements as text (a traced or running ALTER ROLE ... WITH
#: PASSWORD; the server's log lines), its JVM's properties (a keystore password given with -D), the
#: clients connected and the keys of the auth caches. system_views.settings stays readable:
#: Cassandra shows its passwords as <REDACTED> itself. Amazon Keyspaces keeps no credentials in
#: tables (IAM holds them); system_distributed holds repair and view-build history, no secret.
CREDENTIALS = (
    "system_auth.*",
    "dse_security.*",
    "system_traces.*",
    "system_views.queries",
    "system_views.system_logs",
    "system_views.system_properties",
    "system_views.clients",
    "system_views.*_cache_keys",
)
#: The tables of system keyspaces read: the schema (system_auth's table and column names among it:
#: they are in Cassandra's source), and the topology and estimates an assistant plans a reading with.
#: Any other table of a system keyspace is refused unless a policy's [system] allow names it.
#: Left out by decision: system_distributed (repair history with its error messages and options, the
#: partition deny list: keys of any table, denied ones included) and system_views.settings (the
#: server's configuration: paths, addresses, options of authenticators and encryption, where an
#: operator's own values may be secrets; Cassandra redacts only what it knows to be passwords).
SYSTEM_READABLE = (
    "system_schema.*",            # keyspaces, tables, columns, types, functions, indexes, views
    "system_virtual_schema.*",    # the virtual tables' schema
    "system_schema_mcs.*",        # Amazon Keyspaces' schema
    "system_multiregion_info.*",  # Amazon Keyspaces' regions of a keyspace and table
    "system.local",               # the node: its release, data centre, rack, tokens
    "system.peers",               # the other nodes
    "system.peers_v2",
    "system.size_estimates",      # estimated partitions and sizes per token range: a reading's cost
    "system.table_estimates",
)
_SECTIONS = {"tools": {"allow", "deny"}, "tables": {"deny"}, "redact": {"columns"}, "system": {"allow"},
             "limits": {"calls_per_minute"}}
#: Where a refusal of a system table points for how to allow it.
SYSTEM_HOW = ('a policy\'s [system] allow names further ones, each as keyspace.table (cqlsh-ext docs mcp, '
              '"System tables")')


class PolicyError(Exception):
    """A policy file that cannot be used; str() is the one line."""


@dataclass(frozen=True)
class Pattern:
    """A glob over dotted names: `ks.table` or `ks.table.column.path...` (see the module's doc)."""

    text: str
    parts: tuple[str, ...]

    @classmethod
    def parse(cls, text: str, least: int, most: int | None, what: str) -> Pattern:
        parts = tuple(normal(part) for part in split_path(text))
        if len(parts) < least or (most is not None and len(parts) > most) or not all(parts):
            shape = "keyspace.table" if most == 2 else "keyspace.table.column[.path]"
            raise PolicyError(f"{what}: {text!r} is not {shape} (names or globs: *, **)")
        if "**" in parts[:2]:
            raise PolicyError(f"{what}: {text!r}: ** stands for payload path steps, not a keyspace or table")
        return cls(text, parts)

    def matches(self, path: Sequence[str]) -> bool:
        """Whether `path` (names) is one the pattern names."""
        return _match(self.parts, 0, list(path), 0, prefix=False)

    def reaches(self, path: Sequence[str]) -> bool:
        """Whether `path` names one the pattern names, or holds one (a place above it)."""
        return _match(self.parts, 0, list(path), 0, prefix=True)

    def covers(self, path: Sequence[str]) -> bool:
        """Whether `path` or a place above it is one the pattern names: its whole value is."""
        return any(self.matches(path[:n]) for n in range(1, len(path) + 1))


@dataclass(frozen=True)
class Policy:
    denied: tuple[Pattern, ...] = ()
    redacted: tuple[Pattern, ...] = ()
    tools_allowed: frozenset[str] | None = None
    tools_denied: frozenset[str] = frozenset()
    calls_per_minute: int | None = None
    #: Where it was read from, as an answer names it: its file's name ('built in' without a file).
    source: str = "built in"
    #: The system tables the policy file allows beyond SYSTEM_READABLE, each (keyspace, table).
    system_allowed: tuple[tuple[str, str], ...] = ()
    credentials: tuple[Pattern, ...] = field(default_factory=lambda: built_in())
    #: The file as given on the command line, for the server's own log (None: built in).
    path: str | None = None
    system_readable: tuple[Pattern, ...] = field(default_factory=lambda: system_readable())
    #: Who keeps to it, as its refusals name it: `cqlsh-ext mcp`, or the shell's --read-only.
    reader: str = "cqlsh-ext mcp"

    def permits_tool(self, name: str) -> bool:
        if name in self.tools_denied:
            return False
        return self.tools_allowed is None or name in self.tools_allowed

    def refusal(self, keyspace: str, table: str | None = None) -> str | None:
        """Why keyspace.table (or the keyspace, when `table` is None: every table of it) is never
        read, or None when it may be."""
        for patterns, why in ((self.credentials, "holds credentials or other sessions' statements"),
                              (self.denied, f"is denied by the policy ({self.source})")):
            for pattern in patterns:
                if table is None and _match(pattern.parts[:1], 0, [keyspace], 0, prefix=False) \
                        and pattern.parts[1] in ("*", "**"):
                    return f"refused: keyspace {keyspace} {why}: {self.reader} never reads it"
                if table is not None and pattern.matches([keyspace, table]):
                    return f"refused: table {keyspace}.{table} {why}: {self.reader} never reads it"
        if not is_system_keyspace(keyspace):
            return None
        if table is None:
            if any(p.parts[0] == keyspace for p in self.system_readable) \
                    or any(ks == keyspace for ks, _ in self.system_allowed):
                return None  # some of its tables are read (list_tables leaves the others out)
            return (f"refused: keyspace {keyspace} is a system keyspace none of whose tables {self.reader} "
                    f"reads: {SYSTEM_HOW}")
        if any(p.matches([keyspace, table]) for p in self.system_readable) \
                or (keyspace, table) in self.system_allowed:
            return None
        return (f"refused: table {keyspace}.{table} is a system table, and {self.reader} reads only the "
                f"schema and topology ones ({', '.join(SYSTEM_READABLE)}): {SYSTEM_HOW}")

    def view_refusal(self, keyspace: str, view: str, base: str) -> str | None:
        """Why the materialized view keyspace.view is not read, or None: it holds the rows of its
        base table (`base`), so the base's refusal is its own, and a view of a table whose values
        the policy redacts is not read either (the redaction names the base table's columns)."""
        why = self.refusal(keyspace, base)
        if why is None and self.redactions(keyspace, base):
            why = f"the policy ({self.source}) redacts values of {keyspace}.{base}"
        if why is None:
            return None
        return (f"refused: {keyspace}.{view} is a materialized view of {keyspace}.{base}, whose rows it "
                f"holds, and {why.removeprefix('refused: ')}")

    def hides(self, keyspace: str, table: str | None = None) -> bool:
        """Whether the policy file's [tables] deny names keyspace.table (or, `table` None, every
        table of the keyspace): such a table is absent from every answer, the rows of the schema
        and estimate tables that name it included. Cassandra's own tables that are never read
        (CREDENTIALS, the system tables not allowed) stay named there: their names are Cassandra's."""
        for pattern in self.denied:
            if table is not None and pattern.matches([keyspace, table]):
                return True
            if table is None and pattern.parts[1] in ("*", "**") and _keyspace_of(pattern, keyspace):
                return True
        return False

    def may_hide(self, keyspace: str | None) -> bool:
        """Whether the policy file may hide a table of `keyspace` (None: of any keyspace): decided by
        the policy alone, never by what the schema holds."""
        return any(keyspace is None or _keyspace_of(p, keyspace) for p in self.denied)

    def denied_keyspace_names(self) -> frozenset[str]:
        """Keyspaces every table of which is refused, named without a glob (their names are refused
        wherever a statement has them: no spelling of a table in them gets through): those of
        credentials, those the policy denies whole, and the system keyspaces Cassandra has of which
        no table is read."""
        named = {p.parts[0] for p in (*self.credentials, *self.denied)
                 if p.parts[1] in ("*", "**") and "*" not in p.parts[0]}
        return frozenset(named | {ks for ks in CASSANDRA_SYSTEM_KEYSPACES if self.refusal(ks) is not None})

    def redactions(self, keyspace: str, table: str) -> tuple[Pattern, ...]:
        """The redaction patterns that may reach into keyspace.table."""
        return tuple(p for p in self.redacted if p.reaches([keyspace, table]))

    def named_refusal(self, tokens: Sequence[Token]) -> str | None:
        """Why a statement is refused for what it names, its tokens the shell's lexer's (the
        server is sent the text of the tokens read): a table of a system keyspace the policy does
        not read, named `keyspace.table` wherever it is, FROM or not (first: a table's own refusal
        says most); then the name of a keyspace refused whole (credentials, a keyspace the policy
        denies, a system keyspace none of whose tables is read) anywhere in it, so that no spelling
        of a table in it gets through. None: nothing it names is refused."""
        for keyspace, table in qualified_tables(tokens):
            if is_system_keyspace(keyspace):
                why = self.refusal(keyspace, table)
                if why is not None:
                    return why
        refused = self.denied_keyspace_names()
        for tok in tokens:
            if tok.kind in ("word", "qname") and tok.name in refused:
                return self.refusal(tok.name) or f"refused: {tok.name}"
        return None


def qualified_tables(tokens: Sequence[Token]) -> list[tuple[str, str]]:
    """Every (keyspace, table) a statement names as `name . name` at the head of a dotted chain
    (a payload path's later steps, data.system.paxos, are no table)."""
    items = [("name", tok.name) if tok.kind in ("word", "qname")
             else (".", "") if tok.kind == "punct" and tok.value == "." else ("", "") for tok in tokens]
    return [(items[i][1], items[i + 2][1]) for i in range(len(items) - 2)
            if items[i][0] == "name" and items[i + 1][0] == "." and items[i + 2][0] == "name"
            and (i == 0 or items[i - 1][0] != ".")]


def _keyspace_of(pattern: Pattern, keyspace: str) -> bool:
    """Whether `pattern`'s keyspace part names `keyspace`."""
    return _match(pattern.parts[:1], 0, [keyspace], 0, prefix=False)


def split_path(text: str) -> list[str]:
    """`a.b."c.d".e[0].f` -> [a, b, c.d, e[0], f]: dots outside double quotes; quotes kept off."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            if quoted and text[i + 1:i + 2] == '"':
                current.append('"')
                i += 2
                continue
            quoted = not quoted
        elif ch == "." and not quoted:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current).strip())
    return parts


_INDEX = re.compile(r"\[[^\]]*\]")


def normal(part: str) -> str:
    """A path step as patterns compare it: every [index] written `[]`."""
    return _INDEX.sub("[]", part)


def _glob(part: str) -> re.Pattern[str]:
    return re.compile("".join(".*" if ch == "*" else re.escape(ch) for ch in part) + r"\Z", re.DOTALL)


def _match(pattern: Sequence[str], pi: int, path: list[str], si: int, prefix: bool) -> bool:
    """pattern[pi:] against path[si:]; `prefix`: the path may end before the pattern does (it holds
    what the rest would name)."""
    if si == len(path):
        return pi == len(pattern) or prefix or all(p == "**" for p in pattern[pi:])
    if pi == len(pattern):
        return False
    if pattern[pi] == "**":
        return _match(pattern, pi + 1, path, si, prefix) or _match(pattern, pi, path, si + 1, prefix)
    return _step(pattern[pi], normal(path[si]), prefix and si == len(path) - 1) \
        and _match(pattern, pi + 1, path, si + 1, prefix)


def _step(pattern: str, step: str, last: bool) -> bool:
    """One step against one pattern step. An array's elements (`items[]`) are inside the array
    (`items`): a pattern naming the array names them; the array holds what a pattern names of them."""
    glob = _glob(pattern)
    if glob.match(step):
        return True
    bare = step
    while bare.endswith("[]"):
        bare = bare[:-2]
        if glob.match(bare):
            return True
    return last and pattern.endswith("[]") and _glob(pattern.rstrip("[]") or pattern).match(step) is not None


def built_in() -> tuple[Pattern, ...]:
    """The CREDENTIALS patterns."""
    return tuple(Pattern.parse(text, 2, 2, "built in") for text in CREDENTIALS)


def system_readable() -> tuple[Pattern, ...]:
    """The SYSTEM_READABLE patterns."""
    return tuple(Pattern.parse(text, 2, 2, "built in") for text in SYSTEM_READABLE)


def load(path: str | None, tools: Iterable[str], calls_per_minute: int | None = None,
         reader: str = "cqlsh-ext mcp") -> Policy:
    """The policy of the file at `path` (None: the built-in one alone); `tools`: the tools there are;
    `calls_per_minute` given on the command line wins; `reader`: who keeps to it, as its refusals
    say. Raises PolicyError."""
    data: dict[str, Any] = {}
    source = "built in"
    if path is not None:
        source = os.path.basename(path)  # as refusals name it: no answer names the server's directories
        data = _read(path)
    known = set(tools)
    for section, value in data.items():
        if section not in _SECTIONS:
            raise PolicyError(f"{path}: unknown section [{section}] (known: {', '.join(_SECTIONS)})")
        if not isinstance(value, dict):
            raise PolicyError(f"{path}: [{section}] must be a section")
        for key in value:
            if key not in _SECTIONS[section]:
                raise PolicyError(f"{path}: [{section}] has no key {key!r} (it takes "
                                  f"{', '.join(sorted(_SECTIONS[section]))})")
    tools_section = data.get("tools", {})
    allowed = _names(tools_section, "allow", path, known) if "allow" in tools_section else None
    denied_tools = _names(tools_section, "deny", path, known)
    denied = tuple(Pattern.parse(t, 2, 2, f"{path}: [tables] deny")
                   for t in _strings(data.get("tables", {}), "deny", path))
    redacted = tuple(Pattern.parse(t, 3, None, f"{path}: [redact] columns")
                     for t in _strings(data.get("redact", {}), "columns", path))
    system_allowed = tuple(_system_table(t, path) for t in _strings(data.get("system", {}), "allow", path))
    limit = data.get("limits", {}).get("calls_per_minute")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise PolicyError(f"{path}: [limits] calls_per_minute must be a whole number of 1 or more")
    if calls_per_minute is not None:
        limit = calls_per_minute
    return Policy(denied, redacted, frozenset(allowed) if allowed is not None else None,
                  frozenset(denied_tools), limit, source, system_allowed, path=path, reader=reader)


def _system_table(text: str, path: str | None) -> tuple[str, str]:
    """A [system] allow entry: one table of a system keyspace, named; never one of credentials."""
    what = f"{path}: [system] allow"
    parts = split_path(text)
    if len(parts) != 2 or not all(parts) or any("*" in part for part in parts):
        raise PolicyError(f"{what}: {text!r} is not keyspace.table (each system table is named: no glob)")
    keyspace, table = parts
    if not is_system_keyspace(keyspace):
        raise PolicyError(f"{what}: {keyspace} is not a system keyspace (its tables are read unless "
                          "[tables] deny names them)")
    if any(p.matches([keyspace, table]) for p in built_in()):
        raise PolicyError(f"{what}: {keyspace}.{table} holds credentials or other sessions' statements: "
                          "cqlsh-ext mcp never reads it")
    return keyspace, table


def _read(path: str) -> dict[str, Any]:
    import tomllib
    try:
        with Path(path).open("rb") as f:
            return tomllib.load(f)
    except OSError as err:
        raise PolicyError(f"{path}: {err.strerror or err}") from None
    except tomllib.TOMLDecodeError as err:
        raise PolicyError(f"{path}: not TOML: {err}") from None


def _strings(section: dict[str, Any], key: str, path: str | None) -> list[str]:
    value = section.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PolicyError(f"{path}: {key} must be a list of strings")
    return value


def _names(section: dict[str, Any], key: str, path: str | None, known: set[str]) -> list[str]:
    names = _strings(section, key, path)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise PolicyError(f"{path}: [tools] {key}: no tool {unknown[0]!r} "
                          f"(tools: {', '.join(sorted(known))})")
    return names
