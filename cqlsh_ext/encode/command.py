"""encode() in one INSERT, UPDATE or BATCH: each call replaced by the `0x...` literal of the value it
describes, every value verified first (encode.chain); a refusal sends nothing of the statement.

The encode feature's statement's claim (encode/declared.py): the shell hands it every INSERT, UPDATE
and BATCH, lexed once (cql.lexer.Lexed); it answers False when the statement has no encode() call, True when
it was refused (one line said why; nothing sent), or the Rewritten statement cqlsh sends instead,
whose `said()` prints one line per value on stderr after a successful write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.units import human_size
from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.cql.lexer import Lexed, Token
from cqlsh_ext.cql.types import parse, udts_of
from cqlsh_ext.encode.chain import Encoded, EncodeRefused, encode, same
from cqlsh_ext.encode.parse import EncodeCall, Reader, TableTypes, Unreadable, is_call
from cqlsh_ext.payload.places import ValuePlace
from cqlsh_ext.settings import NONE
from cqlsh_ext.upstream import seams

if TYPE_CHECKING:
    from cqlsh_ext.settings.shell import Shell

#: A statement worth reading: `encode(` somewhere in it (case-blind), spaces allowed before '('.
ENCODE_CALL = re.compile(r"encode\s*\(", re.IGNORECASE)


@dataclass
class Rewritten:
    """The statement to send: cqlsh's tokens and its text, and what was encoded in it."""

    tokens: Any
    text: str
    lines: list[str] = field(default_factory=list)

    def said(self) -> None:
        """One line per encoded value, on stderr as cqlsh's warnings (after the write)."""
        from cqlsh_ext.common.text import say

        for line in self.lines:
            say(line)


def intercept(shell: Shell, statement: Lexed) -> bool | Rewritten:
    """The statement with its encode() calls replaced (Rewritten), True when refused (said on
    stderr), False when it calls no encode()."""
    if ENCODE_CALL.search(statement.text) is None:
        return False
    try:
        rewritten = _rewrite(shell, statement)
    except EncodeRefused as err:
        reason = str(err) if str(err).startswith("encode(") else f"encode(): {err}"
        shell.printerr(f"{reason}; nothing was sent")
        return True
    if rewritten is None:
        return False
    new_text, lines = rewritten
    return Rewritten(seams.statement_tokens(new_text), new_text, lines)


def _rewrite(shell: Shell, statement: Lexed) -> tuple[str, list[str]] | None:
    text = statement.text
    try:
        toks = statement.tokens
    except QueryError as err:
        raise EncodeRefused(f"cannot read the statement ({err})") from None
    if not any(is_call(toks, i) for i in range(len(toks) - 1)):
        return None
    schema = _Schema(shell)
    named = {toks[i].value for i in range(len(toks) - 1) if toks[i + 1].value == "."}
    udf = schema.user_function(named)
    if udf is not None:
        from cqlsh_ext.common.text import say

        say(f"encode(): keyspace {udf} has a user function named encode: the statement goes to the server "
            "unchanged")
        return None
    try:
        calls = Reader(toks, schema.table).statements()
    except Unreadable as err:
        raise EncodeRefused(f"cannot tell where the values go ({err})") from None
    placed = {c.first for c in calls}
    for i in range(len(toks) - 1):
        if is_call(toks, i) and i not in placed:
            raise EncodeRefused(f"encode( at char {toks[i].start}: not where a column's value goes")
    out: list[str] = []
    lines: list[str] = []
    pos = 0
    for call in calls:
        encoded, line = _value(shell, call)
        out += [text[pos:toks[call.first].start], "0x" + encoded.value.hex()]
        pos = toks[call.last].end
        lines.append(line)
    out.append(text[pos:])
    return "".join(out), lines


def _place(call: EncodeCall) -> ValuePlace:
    return ValuePlace(call.keyspace, call.table, call.column, call.path)


def _value(shell: Shell, call: EncodeCall) -> tuple[Encoded, str]:
    place = _place(call)
    if call.cql_type is None or not call.cql_type.is_blob:
        kind = "an unknown type" if call.cql_type is None else str(call.cql_type)
        raise EncodeRefused(f"{place} is {kind}: encode() writes blobs")
    display = shell.settings.display
    setting = display.decoding().spec(place)
    args = [_argument(arg) for arg in call.args]
    if len(args) == 2 and isinstance(args[0], str):
        chain, source = args
    elif len(args) == 1:
        if setting is None:
            raise EncodeRefused(f"encode() with one argument takes the chain from {place}'s DECODE "
                                "setting, and it has none")
        chain, source = setting, args[0]
    else:
        raise EncodeRefused(f"encode() for {place}: give encode('chain', 'value') or encode('value')")
    try:
        encoded = encode(str(chain), source, display.cap)
    except EncodeRefused as err:
        raise EncodeRefused(f"encode({_quoted(str(chain))}) for {place}: {err}") from None
    what = "text" if isinstance(source, str) else "bytes"
    line = (f"encode: {place} as {encoded.chain}: {human_size(encoded.input_size)} of {what}, "
            f"{human_size(len(encoded.value))} stored")
    # Under -d none nothing is decoded for display, with or without a setting.
    if setting is None and display.mode != NONE and not _shown(encoded, source, display.mode, display.cap):
        line += f"; shown only with a setting: DECODE '{place}' AS '{encoded.chain}'"
    return encoded, line


def _argument(arg: list[Token]) -> str | bytes:
    if len(arg) == 1 and arg[0].kind == "string":
        return str(arg[0].literal)
    if len(arg) == 2 and arg[0].value == "0":
        digits = arg[1].value[1:]
        try:
            return bytes.fromhex(digits)
        except ValueError:
            raise EncodeRefused(f"0{arg[1].value} is not a blob literal") from None
    raise EncodeRefused(f"{arg[0].describe()}: encode()'s arguments are strings ('...', $$...$$) "
                        "or a blob literal 0x...")


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _shown(encoded: Encoded, source: str | bytes, mode: str, cap: int) -> bool:
    """Whether the display, with no setting for the column, shows what was encoded."""
    from cqlsh_ext.payload.engine import ValueEngine
    from cqlsh_ext.payload.view import BINARY, RECORD, TEXT

    view = ValueEngine(mode, cap).view(encoded.value)
    if isinstance(source, bytes):
        return view.kind == BINARY and view.data == source
    if view.kind == TEXT:
        return view.text == source
    if view.kind == RECORD:
        import json

        try:
            return same(view.record, json.loads(source))
        except ValueError:
            return False
    return False


class _Schema:
    """The driver's schema metadata, as the reader asks for it."""

    def __init__(self, shell: Shell) -> None:
        self.shell = shell
        self.metadata = shell.conn.metadata

    def table(self, keyspace: str | None, name: str) -> TableTypes:
        ks = keyspace or self.shell.current_keyspace
        if ks is None:
            raise Unreadable(f"no keyspace for table {name!r} (USE one, or write keyspace.table)")
        ks_meta = self.metadata.keyspaces.get(ks)
        table = ks_meta.tables.get(name) if ks_meta is not None else None
        if table is None:
            raise Unreadable(f"unknown table {ks}.{name}")
        udts = udts_of(ks_meta)
        return TableTypes(ks, name, {c: parse(str(col.cql_type), udts) for c, col in table.columns.items()})

    def user_function(self, named: set[str]) -> str | None:
        """The keyspace, of those the statement names and the current one, that has a function
        named encode (the server would call it)."""
        names = {n for n in named if n in self.metadata.keyspaces} | {self.shell.current_keyspace}
        for ks in sorted(n for n in names if n):
            ks_meta = self.metadata.keyspaces.get(ks)
            if ks_meta is not None and any(f.name == "encode" for f in ks_meta.functions.values()):
                return ks
        return None
