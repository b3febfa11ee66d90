"""`cqlsh-ext mcp --audit-log FILE`: one JSON line per call, written when it ends:

    {"time": "2026-11-02T10:41:07.512Z", "tool": "query", "statement": {"hash": "9f2c...", "words":
     "SELECT data.status , count ( * ) FROM shop.orders"}, "decision": "answered", "rows": 6,
     "bytes": 412, "seconds": 0.183}

`decision` is answered, refused (the gate, the policy, a bound, the rate limit: nothing ran),
failed (it ran and the server or the shell said an error), or stopped (cancelled, or its time
limit; it answered what it had read). Never a value or a secret: the statement's words stop at its
first literal (a string, a number) and at WHERE, and the statement is otherwise known by its hash,
an HMAC-SHA256 keyed by a secret this server draws at start (the same statement hashes the same
within one server's log, and a guessed literal cannot be checked against it). Names in arguments
(keyspace, table, column) are logged: they are schema, not data. The file is appended to, made
with mode 600, each line written whole and flushed.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import os
import secrets
import threading
from typing import Any

from cqlsh_ext.mcp_server.answers import ToolAnswer

ANSWERED, REFUSED, FAILED, STOPPED = "answered", "refused", "failed", "stopped"
#: Words of a statement logged at most.
WORDS = 12
#: Arguments logged as they are: names (schema), numbers; never a statement, a where, a decode spec,
#: a cursor.
_NAMES = ("keyspace", "table", "column", "sample", "limit", "max_bytes")
#: The first words of error lines that mean nothing ran (the gate's, the policy's, the bounds').
_REFUSALS = ("refused:", "syntax error", "no statement given", "not run:", "no tool ", "no keyspace ",
             "no table ")


class AuditLog:
    def __init__(self, path: str) -> None:
        self.path = path
        self._key = secrets.token_bytes(32)
        self._lock = threading.Lock()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._file = os.fdopen(fd, "a", encoding="utf-8")

    def record(self, tool: str, arguments: dict[str, Any], answer: ToolAnswer | None, stopped: bool,
               seconds: float, refused: bool = False) -> dict[str, Any]:
        """Write the call's line; returns what was written."""
        entry: dict[str, Any] = {"time": _now(), "tool": tool}
        statement = _statement_of(tool, arguments)
        if statement is not None:
            entry["statement"] = {"hash": self.hash(statement), "words": first_words(statement)}
        named = {k: v for k, v in arguments.items() if k in _NAMES and isinstance(v, (str, int))
                 and not isinstance(v, bool)}
        if named:
            entry["arguments"] = named
        if "where" in arguments:
            entry["where"] = {"hash": self.hash(str(arguments["where"]))}
        entry["decision"] = decision(answer, stopped, refused)
        entry.update(figures(answer))
        entry["seconds"] = round(seconds, 3)
        line = json.dumps(entry, ensure_ascii=False)
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()
        return entry

    def hash(self, text: str) -> str:
        return hmac.new(self._key, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:32]

    def close(self) -> None:
        with self._lock:
            self._file.close()


def decision(answer: ToolAnswer | None, stopped: bool, refused: bool = False) -> str:
    if refused:
        return REFUSED
    if stopped:
        return STOPPED
    if answer is None:
        return FAILED
    if answer.data is None:
        line = answer.error or ""
        return REFUSED if line.startswith(_REFUSALS) else FAILED
    return FAILED if answer.data.get("error") else ANSWERED


def figures(answer: ToolAnswer | None) -> dict[str, int]:
    """rows (or values) answered and the answer's bytes (the message that carries it, as its cap
    counts them: sizing.message_size)."""
    if answer is None:
        return {"bytes": 0}
    out: dict[str, int] = {"bytes": answer.size()}
    if answer.data is not None:
        for key in ("rows", "values"):
            if isinstance(answer.data.get(key), list):
                out["rows"] = len(answer.data[key])
    return out


def first_words(statement: str) -> str:
    """The statement's first words, up to its first literal or WHERE: its kind and what it reads."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.cql.lexer import Lexed

    try:
        tokens = Lexed(statement[:4096]).tokens
    except QueryError:
        return "(does not lex)"
    words: list[str] = []
    for tok in tokens:
        if tok.kind in ("string", "int", "decimal", "end") or (
                tok.kind == "word" and tok.value.lower() == "where"):
            break
        words.append(f'"{tok.value}"' if tok.kind == "qname" else tok.value)
        if len(words) == WORDS:
            break
    return " ".join(words)


def _statement_of(tool: str, arguments: dict[str, Any]) -> str | None:
    statement = arguments.get("statement")
    return statement if isinstance(statement, str) else None


def _now() -> str:
    now = datetime.datetime.now(datetime.timezone.utc)
    return now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
