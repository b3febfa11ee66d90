"""The read-only rule: the one answer every read-only door asks for ("may this statement run
here?"): the shell's `--read-only` (-e, -f, a pipe, the interactive shell, cqlshrc's read_only) and
`cqlsh-ext mcp` (mcp_server/gate.py, guard.py). docs/agents.md and docs/mcp.md print its table
(`RULE`), and a test checks they do.

A statement runs when the rule knows it for a read, from its declaration (features.feature: a read
feature, none that writes the database; no clause that writes a local file, Clause.writes_file) or
from the allow-list below (SELECT, DESCRIBE, the shell's session commands): an allow-list, never a
deny-list, so that a statement the rule does not know is refused. Before that, its text must read
the same to the guard and to the server (`unreadable`): Cassandra's lexer ends a `--` or `//`
comment at a newline or a carriage return (src/antlr/Lexer.g, as cql.lexer does), and its white
space is space, tab, newline and carriage return only; a lone carriage return (cqlsh's own lexer
reads a comment on past it), any other control or space character outside a string or a quoted
name, a `;` inside a comment, or a character that starts no token is refused.

Then the tables it reads (`tables_read`): a feature's table as its declaration names it, in the
keyspace in use when its name is alone (DESCRIBE PAYLOAD table.column: the column `column` of
`table`, never the table `column` of keyspace `table`), and for every SELECT (one the user wrote,
or one a feature reads: INSPECT's, COMPRESSION STATS SELECT ...), the table the server names when
it prepares it (`server_tables`): what the text seemed to say does not count where the server says
otherwise. The caller's policy (mcp_server/policy.py) says which tables are refused.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from cqlsh_ext.cql import first_words

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed, Token
    from cqlsh_ext.features.feature import Feature


class Verdict(NamedTuple):
    """One line of the rule: the statement (its words as the docs name them), whether it runs, and
    why; `doors`: where it runs (`every` read-only door, the shell's `session` only)."""

    statement: str
    runs: bool
    why: str
    doors: str = "every"


#: Why a statement is refused, where several lines of the rule say it.
WRITES_DATABASE = "writes the database"
WRITES_FILE = "writes a local file"

#: The rule, as docs/agents.md and docs/mcp.md print it: what runs under read-only, what is
#: refused, and why. Any statement not named here is refused (the rule's last line).
RULE: tuple[Verdict, ...] = (
    Verdict("SELECT", True, "reads the table the server names when it prepares the statement"),
    Verdict("DESCRIBE, DESC", True, "reads the schema"),
    Verdict("a read feature's statement: DESCRIBE PAYLOAD, COMPRESSION STATS, SETTINGS, ADVISE, INSPECT, "
            "a package's read feature", True, "reads the table its declaration names"),
    Verdict("USE, CONSISTENCY, SERIAL CONSISTENCY, PAGING, EXPAND, TRACING OFF, SHOW VERSION, SHOW HOST, "
            "HELP, EXIT, QUIT, CLEAR, CLS, HISTORY, DECODE, DECOMPRESS, OUTPUT", True,
            "changes only the session", "session"),
    Verdict("SOURCE", True, "each statement of the file is checked by this rule", "session"),
    Verdict("CAPTURE", False, "appends to a local file"),
    Verdict("COPY", False, "reads or writes a local file (TO, FROM), or writes the database (FROM)"),
    Verdict("COMPRESSION ADVISE ... SAVE DICTIONARY", False, WRITES_FILE),
    Verdict("LOGIN", False, "changes the role the session reads as"),
    Verdict("SHOW SESSION", False, "reads system_traces: another session's statements"),
    Verdict("TRACING ON", False, "has the server write each statement's trace to system_traces, and reads "
            "it from there"),
    Verdict("a write feature's statement (COMPRESSION REWRITE, TRIAL, UNDO, RESUME, edits, loads)", False,
            WRITES_DATABASE),
    Verdict("INSERT, UPDATE, DELETE, BATCH, CREATE, ALTER, DROP, TRUNCATE, GRANT, REVOKE", False,
            WRITES_DATABASE),
    Verdict("LIST", False, "reads roles and permissions"),
    Verdict("any other statement", False, "is no read the rule knows"),
)

#: The shell's session commands that run (the RULE's session line), by first word: CQL's USE, and
#: the shell's own.
SESSION_WORDS = first_words.SESSION | frozenset({
    "consistency", "serial", "paging", "expand", "tracing", "show", "help", "?", "exit", "quit", "clear",
    "cls", "history", "decode", "decompress", "output", "source"})
#: What SHOW may show (SHOW SESSION reads system_traces).
SHOW_WORDS = frozenset({"version", "host"})


#: Where docs/agents.md and docs/mcp.md hold the rule's table (`table_text`), as a test checks.
TABLE_START, TABLE_END = "<!-- the read-only rule: features/read_rule.py RULE -->", "<!-- end of the rule -->"


def table_text() -> str:
    """The rule as the docs print it: a Markdown table, a line a Verdict."""
    lines = ["| Statement | Under read-only | Why |", "|---|---|---|"]
    for verdict in RULE:
        runs = "refused" if not verdict.runs else "runs" if verdict.doors == "every" \
            else "runs (the shell; `cqlsh-ext mcp` has no session)"
        lines.append(f"| {verdict.statement} | {runs} | {verdict.why} |")
    return "\n".join(lines)


def _why(statement: str) -> str:
    return next(v.why for v in RULE if v.statement == statement)


def refusal_words(reader: str, what: str, why: str) -> str:
    """A refusal, in the same words at every door (`reader`: who keeps to the rule)."""
    return f"refused: {reader} runs reads only, and {what} {why}"


def statement_refusal(reader: str, statement: Lexed, feature: Feature | None, session: bool) -> str | None:
    """Why the rule refuses `statement` (its first statement: the tokens up to its first `;`) for
    what it is, in one line; None when it runs. `feature`: the declared feature it is a statement of
    (None: looked up here); `session`: whether the door runs the shell's session commands."""
    from cqlsh_ext.cql.errors import QueryError

    unread = unreadable(statement)
    if unread is not None:
        return f"refused: {reader} reads a statement only as the server reads it, and {unread}"
    try:
        tokens = first_statement(statement.tokens)
    except QueryError:  # (unreadable said it)
        return f"refused: {reader} reads a statement only as the server reads it"
    if not tokens:
        return None
    if feature is None:
        found = feature_of(statement)
        feature = found[0] if found is not None else None
    what = what_of(tokens)
    if feature is not None:
        if feature.writes is not None or feature.shell_only:
            return refusal_words(reader, what, WRITES_DATABASE)
        for clause in feature.statement.clauses if feature.statement is not None else ():
            if clause.writes_file and _has_words(tokens, clause.words):
                return refusal_words(reader, f"{what} ... {' '.join(clause.words)}", WRITES_FILE)
        return None
    first = tokens[0].name if tokens[0].kind == "word" else ""
    second = tokens[1].name if len(tokens) > 1 and tokens[1].kind == "word" else ""
    if first == "select" or first in ("describe", "desc"):
        return None
    if first in ("capture", "copy", "login"):
        return refusal_words(reader, what, _why(first.upper()))
    if first == "tracing" and second == "on":  # (TRACING OFF, and TRACING alone saying which: the session's)
        return refusal_words(reader, "TRACING ON", _why("TRACING ON"))
    if first == "show" and second not in SHOW_WORDS:
        return refusal_words(reader, f"SHOW {second.upper()}".strip(), _why("SHOW SESSION"))
    if first in SESSION_WORDS:
        if session:
            return None
        return refusal_words(reader, what, f"is a command of the shell's session, which {reader} has not")
    if first in first_words.WRITES or _declared_write(first):
        return refusal_words(reader, what, WRITES_DATABASE)
    if first == "list":
        return refusal_words(reader, what, _why("LIST"))
    return refusal_words(reader, what, _why("any other statement"))


def _declared_write(word: str) -> bool:
    """Whether a command or a statement's claim of the shell that starts with `word` is declared to
    write (features.commands: UNDO, COMPRESSION REWRITE, the edits, the loads): none of its
    statements is a read feature's (those are found before)."""
    from cqlsh_ext.features.commands import claims_for, command

    declared = command(word)
    return (declared is not None and not declared.reads_only) \
        or any(not claim.reads_only for claim in claims_for(word))


def feature_of(statement: Lexed) -> tuple[Feature, int] | None:
    """cqlsh-ext's own declared feature `statement` is a statement of, and how many of its tokens
    are the feature's words (a package's feature: the shell's door names it)."""
    from cqlsh_ext.features.statements import own_feature_of

    return own_feature_of(statement)


def _has_words(tokens: Sequence[Token], words: Sequence[str]) -> bool:
    """Whether `words` follow each other as words anywhere in `tokens` (any case, any space or
    comment between them)."""
    said = [tok.value.upper() if tok.kind == "word" else "" for tok in tokens]
    n = len(words)
    return any(said[i:i + n] == list(words) for i in range(len(said) - n + 1))


def what_of(tokens: Sequence[Token]) -> str:
    """How a refusal names the statement: its first words."""
    words = [tok.value.upper() for tok in tokens[:2] if tok.kind == "word"]
    if not words:
        return f"no statement (it starts with {tokens[0].value!r})"
    if words[0] in ("COMPRESSION", "BEGIN", "ALTER", "CREATE", "DROP", "LIST", "SHOW") \
            and len(words) > 1:
        return " ".join(words)
    return words[0]


def first_statement(tokens: Sequence[Token]) -> list[Token]:
    """The tokens of the first statement: up to its `;`, without the end token."""
    out = []
    for tok in tokens:
        if tok.kind == "end" or (tok.kind == "punct" and tok.value == ";"):
            break
        out.append(tok)
    return out


# ---------------------------------------------------------------------------- read as the server reads


def unreadable(statement: Lexed) -> str | None:
    """Why the server could read `statement`'s text otherwise than its tokens say (one line's end),
    or None. Between tokens there is only space and comments (cql.lexer): Cassandra's space is
    space, tab, newline and carriage return; a carriage return not followed by a newline ends a
    `--` comment for the server and not for cqlsh's lexer (which splits the shell's statements);
    a `;` in a comment ends a statement for a reader that takes the comment's end elsewhere."""
    from cqlsh_ext.cql.errors import QueryError

    text = statement.text
    try:
        tokens = statement.tokens
    except QueryError as err:
        return f"cannot read it: {err}"
    gaps = [(tokens[i - 1].end if i else 0, tok.start) for i, tok in enumerate(tokens)]
    for start, end in gaps:
        why = _gap(text, start, end)
        if why is not None:
            return why
    return None


def _gap(text: str, start: int, end: int) -> str | None:
    """Why the space and comments of text[start:end] may read otherwise to the server, or None."""
    for at in range(start, end):
        ch = text[at]
        if ch in " \t\n":
            continue
        if ch == "\r":
            if text[at + 1:at + 2] != "\n":
                return f"a carriage return at position {at} is not followed by a newline"
            continue
        if ch == ";":
            return f"a comment holds a ';' at position {at}"
        if unicodedata.category(ch)[0] in "CZ":
            return f"the control or space character U+{ord(ch):04X} at position {at} is outside a string"
    return None


# ---------------------------------------------------------------------------- the tables it reads


def feature_tables(feature: Feature, statement: Lexed, skip: int,
                   keyspace: str | None) -> tuple[list[tuple[str, str]], Lexed | None]:
    """What a read feature's statement reads, as its declaration names it: its table (a name alone
    in `keyspace`, the one in use; a column `table.column` is the column of `table` in it), and the
    SELECT it reads (INSPECT's, a Statement's `select` form), whose table the server names. Raises
    features.arguments.Invalid or cql.errors.QueryError where the feature would."""
    from cqlsh_ext.features.arguments import names
    from cqlsh_ext.features.calling import statement_arguments

    tokens = first_statement(statement.tokens[skip:])
    stated = statement_arguments(feature, statement.text, tokens)
    reads = feature.reads
    given = stated.arguments.get(reads.argument) if reads.argument is not None else None
    tables: list[tuple[str, str]] = []
    if reads.what in ("table", "column") and isinstance(given, str):
        found = names(given, tuple(range(1, 17)), reads.what)
        qualified = 2 if reads.what == "table" else 3
        if len(found) >= qualified:
            tables.append((found[0], found[1]))
        elif keyspace is not None:
            tables.append((keyspace, found[0]))
    select = stated.select
    if reads.what == "statement" and isinstance(given, str):
        from cqlsh_ext.cql.lexer import Lexed

        select = Lexed(given)
    return tables, select


def server_tables(prepare: Callable[[str], object], text: str) -> list[tuple[str, str]] | None:
    """The tables the server reads for the statement `text`, from its own result metadata once it
    has prepared it (`prepare`: the session's); None where it does not prepare it (a statement of
    cqlsh-ext's own grammar, a payload path: the guard's reading stands, read as the server reads)."""
    try:
        prepared = prepare(text)
    except Exception:  # noqa: BLE001 - the server's refusal of the text: it will not run as given
        return None
    # Each column of its result (keyspace, table, name, type), and of its bind markers' (the driver's
    # column_metadata): a SELECT whose every column is a literal still binds its WHERE's.
    columns = [*(getattr(prepared, "result_metadata", None) or ()),
               *(getattr(prepared, "column_metadata", None) or ())]
    found: list[tuple[str, str]] = []
    for column in columns:
        named = (str(column[0]), str(column[1]))
        if named not in found:
            found.append(named)
    return found
