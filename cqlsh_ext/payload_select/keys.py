"""The keys a payload path can take next, for completion: `data.` offers the keys seen in a small
sample of the column (docs/queries.md, "In the interactive shell").

`path_at(text, cursor)` finds the path being typed at the cursor (`data.cu`, `data.customer.`,
`m['k'].`, `u.payload.`, `data.items[0].`) and the table in the statement's FROM, wherever the
FROM is (after the cursor too). `PayloadKeys(context)` resolves it against the driver's schema and
answers the keys: each (keyspace, table, column) is read once per session, `SELECT col FROM ks.t
LIMIT 100`, one page, with a short client-side timeout; the values are decoded the display's way
(the value engine, the column settings included) and their keys collected per path prefix
(list indexes stand for any element). A failure, a timeout or an undecodable value gives no keys,
never an error; the outcome is cached, so a slow table costs at most one wait per session.

No prompt_toolkit here: the completer (repl/completer.py) asks `candidates()`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cqlsh_ext.cql.spelling import schema_name, unquoted

if TYPE_CHECKING:
    from cqlsh_ext.query.evaluate import Decoding
    from cqlsh_ext.reading.context import ReadContext

#: Rows read per column, once per session: a sample, never a scan.
SAMPLE_ROWS = 100
#: The sample read's client-side timeout and the decoding's deadline (seconds): the first Tab on
#: a column waits at most about this long.
SAMPLE_SECONDS = 2.0
#: Bounds on what one column's sample keeps: path prefixes, keys per prefix, depth.
MAX_PREFIXES = 2000
MAX_KEYS = 500
MAX_DEPTH = 12
#: Nodes the walk of one value visits at most: a record with shared parts (a record format's
#: back-references) is a graph, whose paths can far outnumber its nodes (888 stored bytes can
#: hold 10**12 paths).
MAX_VISITS = 20_000

#: How far back from the cursor a path may start (characters).
PATH_WINDOW = 400
#: A list index in a prefix: `data.items[0].` and `data.items[3].` offer the same keys.
ANY_INDEX = -1

Prefix = tuple[str | int, ...]

_NAME = r'(?:[A-Za-z_][A-Za-z0-9_]*|"(?:[^"]|"")*")'
_STEP = rf"(?:\.{_NAME}|\[\s*(?:\d+|'(?:[^']|'')*')\s*\])"
#: The path at the end of the text before the cursor: a name, steps, a dot and the key begun.
_PATH_END = re.compile(rf"(?<![\w.\"\]])(?P<head>{_NAME})(?P<steps>{_STEP}*)"
                       rf"\.(?P<partial>[A-Za-z_][A-Za-z0-9_]*|\"(?:[^\"]|\"\")*)?$")
_ONE_STEP = re.compile(rf"\.(?P<name>{_NAME})|\[\s*(?:(?P<index>\d+)|'(?P<key>(?:[^']|'')*)')\s*\]")
_WORD_BEFORE = re.compile(r"(\w+)\s*$")
_SELECT = re.compile(r"\s*select\b", re.IGNORECASE)


@dataclass(frozen=True)
class PathAt:
    """The path being typed: its column as written (`head`), the steps after it (`.name` as
    (".", the name as written, quotes included), `['k']` as ("[", k), `[n]` as n), the key begun
    (`partial`, with its opening quote if any) and the statement's table ([keyspace], table); None
    for a SELECT whose FROM is not written yet (people type left to right)."""

    head: str
    steps: tuple[tuple[str, str] | int, ...]
    partial: str
    table: tuple[str | None, str] | None


def _statement_around(text: str, cursor: int) -> tuple[str, int]:
    """The statement the cursor is in (between semicolons) and the cursor within it."""
    start = text.rfind(";", 0, cursor) + 1
    end = text.find(";", cursor)
    return text[start:len(text) if end < 0 else end], cursor - start


def path_at(text: str, cursor: int) -> PathAt | None:
    """The payload path ending at `cursor` (after a `.`) and its SELECT's table, or None.
    Syntax only: whether the head is a blob column is the schema's to say (PayloadKeys)."""
    from cqlsh_ext.query.recognize import table_of

    statement, at = _statement_around(text, cursor)
    before = statement[:at]
    # A path is short: looking at the last few hundred characters keeps this cheap per keystroke.
    match = _PATH_END.search(before, max(0, len(before) - PATH_WINDOW))
    if match is None:
        return None
    word = _WORD_BEFORE.search(before, 0, match.start())
    if word is not None and word.group(1).lower() in ("from", "into", "update", "table"):
        return None  # `FROM ks.`: a table name, cqlsh's to complete
    partial = match.group("partial") or ""
    # The table from the whole statement, the key begun left out (an opening quote would not lex).
    table = table_of(before[:len(before) - len(partial)] + statement[at:])
    if table is None and not _SELECT.match(statement):
        return None
    steps: list[tuple[str, str] | int] = []
    for step in _ONE_STEP.finditer(match.group("steps")):
        if step.group("name") is not None:
            steps.append((".", step.group("name")))
        elif step.group("index") is not None:
            steps.append(int(step.group("index")))
        else:
            steps.append(("[", step.group("key").replace("''", "'")))
    return PathAt(match.group("head"), tuple(steps), partial, table)


def collect(tree: Any, keys: dict[Prefix, set[str]]) -> None:
    """Add the string keys of every mapping in `tree` to `keys[prefix]`, prefixes as paths walk
    them (payload.paths.step): a Tagged value stands for its value, list items are ANY_INDEX,
    a Cut ends the walk; bounded by MAX_PREFIXES, MAX_KEYS, MAX_DEPTH and MAX_VISITS."""
    from cqlsh_ext.payload.formats.tree import Tagged

    visits = MAX_VISITS

    def walk(tree: Any, prefix: Prefix) -> None:
        nonlocal visits
        visits -= 1
        if visits < 0:
            return
        while isinstance(tree, Tagged):
            tree = tree.value
        if len(prefix) > MAX_DEPTH:
            return
        if isinstance(tree, Mapping):
            names = [k for k in tree if isinstance(k, str)]
            if names and (prefix in keys or len(keys) < MAX_PREFIXES):
                found = keys.setdefault(prefix, set())
                for name in names:
                    if len(found) >= MAX_KEYS:
                        break
                    found.add(name)
            for name, child in tree.items():
                if isinstance(name, str) and isinstance(child, (Mapping, list, tuple, Tagged)):
                    walk(child, (*prefix, name))
        elif isinstance(tree, (list, tuple)):
            for child in tree:
                if isinstance(child, (Mapping, list, tuple, Tagged)):
                    walk(child, (*prefix, ANY_INDEX))

    walk(tree, ())


@dataclass
class KeySample:
    """One column's keys: per place of the blob (None for the column itself, a map key or a UDT
    field), per path prefix. `rows` read, `undecodable` values skipped, `error` a failed read."""

    keys: dict[str | None, dict[Prefix, set[str]]] = field(default_factory=dict)
    rows: int = 0
    undecodable: int = 0
    error: str | None = None


def sample_column(session: Any, keyspace: str, table: str, column: str, settings: Decoding,
                  consistency_level: Any = None) -> KeySample:
    """Read SAMPLE_ROWS values of `column` once (one page, SAMPLE_SECONDS at most) and collect
    their keys. Never raises for the server's or the values' sake: the error is kept instead."""
    from cqlsh_ext.payload.paths import MISSING
    from cqlsh_ext.payload.places import Engines, ValuePlace
    from cqlsh_ext.query.evaluate import view_tree
    from cqlsh_ext.query.grammar import quote
    from cqlsh_ext.scanning.scan import error_text, one_page

    sample = KeySample()
    if settings.mode == "none":  # -d none: decoding is off, paths are refused
        return sample
    query = f"SELECT {quote(column)} FROM {quote(keyspace)}.{quote(table)} LIMIT {SAMPLE_ROWS}"
    deadline = time.monotonic() + SAMPLE_SECONDS
    try:
        rows = one_page(session, query, SAMPLE_ROWS, SAMPLE_SECONDS, consistency_level)
    except Exception as err:  # a timeout, an unavailable replica, a refused read: no keys
        sample.error = error_text(err)
        return sample
    engines = Engines(settings)
    for row in rows:
        if time.monotonic() > deadline:  # decoding is bounded by the same wait
            break
        sample.rows += 1
        value = row[0] if isinstance(row, tuple) else next(iter(row.values()), None)
        for place, steps, blob in _blobs(value):
            engine = engines(ValuePlace(keyspace, table, column, steps))
            tree = view_tree(engine.view(bytes(blob)))  # never raises: a failure is the value's kind
            if tree is MISSING:
                sample.undecodable += 1
                continue
            collect(tree, sample.keys.setdefault(place, {}))
    return sample


def _blobs(value: Any) -> Iterable[tuple[str | None, tuple[str, ...], Any]]:
    """(place, its steps as column settings name them, blob) in one column value: the blob
    itself, a map's values by key, a UDT's blob fields by name."""
    blob_types = (bytes, bytearray, memoryview)
    if isinstance(value, blob_types):
        yield None, (), value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and isinstance(item, blob_types):
                yield key, ("value",), item
    elif value is not None and hasattr(value, "_fields"):  # a UDT as the driver builds it
        for name in value._fields:
            item = getattr(value, name, None)
            if isinstance(item, blob_types):
                yield name, (name,), item


#: Keys a DESCRIBE PAYLOAD of a column found (its whole structure, not a 100-row sample), by
#: (session, keyspace, table, column): offered before a sample's (cqlsh_ext.describe calls learn).
_LEARNED: dict[tuple[Any, str, str, str], KeySample] = {}


def learn(session: Any, keyspace: str, table: str, column: str, sample: KeySample) -> None:
    """Offer `sample`'s keys for the column for the rest of the session."""
    _LEARNED[(session, keyspace, table, column)] = sample


class PayloadKeys:
    """Key candidates for the interactive shell, a sample per (keyspace, table, column) cached for
    the shell's session (a new session, after LOGIN, starts afresh). `context` gives the reading's
    context as it is now (the REPL's: reading.context.shell_context of its shell): its session,
    schema, keyspace in use, consistency and display settings change with LOGIN, USE,
    CONSISTENCY and DECODE."""

    def __init__(self, context: Callable[[], ReadContext]) -> None:
        self.context = context
        self.samples: dict[tuple[str, str, str], KeySample] = {}
        self._session: Any = None
        #: KeySample reads done: what the cache saves (bench/completion.py reports it).
        self.reads = 0

    def candidates(self, text: str, cursor: int, read: bool = True) -> tuple[int, list[str]] | None:
        """(characters before the cursor to replace, the keys spelt as steps, sorted) when the
        cursor is after a path's `.` (or in the key begun there); None when it is not, so the
        caller completes as usual. `read=False` answers from the cache only (while typing)."""
        at = path_at(text, cursor)
        if at is None:
            return None
        ctx = self.context()
        resolved = self._resolve(ctx, at)
        if resolved is None:
            return None
        keyspace, table, column, place, prefix = resolved
        if ctx.session is not self._session:
            self.samples.clear()
            self._session = ctx.session
        sample = _LEARNED.get((ctx.session, keyspace, table, column)) or \
            self.samples.get((keyspace, table, column))
        if sample is None:
            if not read:
                return len(at.partial), []
            sample = self._read(ctx, keyspace, table, column)
        begun = unquoted(at.partial + '"' if at.partial.startswith('"') else at.partial).lower()
        found = sample.keys.get(place, {}).get(prefix, set())
        keys = sorted((k for k in found if k.lower().startswith(begun)), key=lambda k: (k.lower(), k))
        from cqlsh_ext.query.grammar import spell_key

        return len(at.partial), [spell_key(k) for k in keys]

    def _read(self, ctx: ReadContext, keyspace: str, table: str, column: str) -> KeySample:
        from cqlsh_ext.reading.resolve import table_target

        found = table_target(ctx.cluster.metadata, keyspace, table)
        assert found is not None  # _resolve found it
        meta = found.meta
        settings = ctx.decoding()
        self.reads += 1
        sample = sample_column(ctx.session, keyspace, meta.name, column, settings, ctx.consistency)
        self.samples[(keyspace, table, column)] = sample
        return sample

    def from_needed(self, text: str, cursor: int, room: int = 0) -> str | None:
        """What Tab says after a path's `.` in a SELECT that names no table yet, when its column
        does not identify one table of the current keyspace (then candidates() is None): that the
        FROM is needed, and where the column is, naming as many of its tables as `room`
        characters hold (0: three; the menu cuts a longer line with '...'). None elsewhere."""
        at = path_at(text, cursor)
        if at is None or at.table is not None:
            return None
        ctx = self.context()
        keyspace = ctx.keyspace
        if not keyspace:
            return "<FROM keyspace.table first: its values give the keys>"
        tables = self._tables_with(ctx, at, keyspace)
        if len(tables) < 2:
            return None  # one: candidates() answers; none: not a payload path here, cqlsh's
        for shown in range(min(3, len(tables)), 0, -1):
            named = ", ".join(tables[:shown]) + (", ..." if len(tables) > shown else "")
            hint = f"<FROM first: {at.head} is in {named}>"
            if not room or len(hint) <= room:
                return hint
        return f"<FROM first: {at.head} is in {len(tables)} tables>"

    def _tables_with(self, ctx: ReadContext, at: PathAt, keyspace: str) -> list[str]:
        """The tables (and views) of `keyspace` whose column `at.head` is the path's blob, from the
        driver's schema (no request), sorted."""
        try:
            ks = ctx.cluster.metadata.keyspaces.get(keyspace)
            names = sorted({*ks.tables, *ks.views}) if ks is not None else []
        except Exception:  # metadata mid-refresh: none this time
            return []
        return [name for name in names
                if self._resolve(ctx, PathAt(at.head, at.steps, at.partial, (keyspace, name))) is not None]

    def _resolve(self, ctx: ReadContext, at: PathAt) -> tuple[str, str, str, str | None, Prefix] | None:
        """(keyspace, table, column, place of the blob, key prefix) when `at.head` reaches a blob
        of the statement's table, from the driver's schema (no request); in a SELECT without a
        table yet, of the one table of the current keyspace where it does."""
        from cqlsh_ext.cql.types import UDT
        from cqlsh_ext.query.grammar import map_of_blobs
        from cqlsh_ext.reading.resolve import table_target

        if at.table is None:
            keyspace = ctx.keyspace
            tables = self._tables_with(ctx, at, keyspace) if keyspace else []
            return self._resolve(ctx, PathAt(at.head, at.steps, at.partial, (keyspace, tables[0]))) \
                if len(tables) == 1 else None
        keyspace = at.table[0] or ctx.keyspace
        try:
            found = table_target(ctx.cluster.metadata, keyspace, at.table[1])
        except Exception:  # metadata mid-refresh: no keys this time
            return None
        if found is None or keyspace is None:
            return None
        meta = found.meta
        column = schema_name(at.head)
        if column not in meta.columns:
            return None
        ctype = found.type_of(column)
        if ctype is None:
            return None
        steps = list(at.steps)
        place: str | None = None
        if not ctype.is_blob:
            first = steps.pop(0) if steps else None
            if not isinstance(first, tuple):
                return None
            kind, name = first
            if map_of_blobs(ctype) and kind == "[":
                place = name
            else:
                if ctype.kind != UDT or kind != ".":
                    return None
                place = schema_name(name)
                field_type = ctype.child(place)
                if field_type is None or not field_type.is_blob:
                    return None
        prefix: list[str | int] = []
        for step in steps:
            if isinstance(step, int):
                prefix.append(ANY_INDEX)
            elif step[0] == ".":
                prefix.append(unquoted(step[1]))  # keys as written, case sensitive
            else:
                return None  # ['k'] inside a record is no path step
        return keyspace, meta.name, column, place, tuple(prefix)
