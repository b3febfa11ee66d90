"""An error as data: with `--output-format json` the shell writes each error as one JSON object on
standard error, a line of its own, rather than its prose (rows stay on standard output):

    {"type": "error", "kind": "syntax", "message": "SyntaxException: line 1:9 no viable ...",
     "hint": "...", "position": {"line": 1, "column": 9}}

`kind` is one of KINDS (--spec lists them), read from what the line says: the driver's class of a
server error cqlsh prints ("InvalidRequest: ..."), cqlsh's and cqlsh-ext's own words ("Invalid
syntax at char 17", "syntax error at position 7", "refused: ..."), or given by whoever knows
better (a timeout, an interruption, an internal error, a connection). `position` is where in the
statement the error is, when the line says it (1-based line and column); `hint` what usually helps.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    name: str
    meaning: str
    #: What usually helps, said with each error of the kind (None: nothing general).
    hint: str | None = None


#: Every kind of error, as --spec lists them.
KINDS: tuple[Kind, ...] = (
    Kind("syntax", "the statement could not be read", "HELP <first word> shows the statement's form"),
    Kind("invalid", "the server refused the statement (InvalidRequest, ConfigurationException, "
         "AlreadyExists)", "DESCRIBE TABLE names the table's columns and types"),
    Kind("not_found", "a keyspace, table or other object the schema does not have",
         "DESCRIBE KEYSPACES and DESCRIBE TABLES list them"),
    Kind("unauthorized", "the role logged in may not do this", "log in with a role that may (LOGIN)"),
    Kind("unavailable", "too few replicas are up for the consistency level",
         "a lower CONSISTENCY, or try again when the nodes are up"),
    Kind("server_timeout", "the server or the driver timed out waiting for replicas or an answer",
         "a narrower WHERE, a LIMIT, or a longer --request-timeout"),
    Kind("server_failure", "the replicas failed the read or write (ReadFailure, WriteFailure, ...)", None),
    Kind("refused", "refused before it ran by --read-only or the policy",
         "cqlsh-ext --spec lists what --read-only runs"),
    Kind("timed_out", "stopped at --timeout; what it read before was printed",
         "a narrower WHERE, a LIMIT or --max-rows, or a longer --timeout"),
    Kind("interrupted", "stopped by Ctrl-C; what it read before was printed", None),
    Kind("internal", "an internal error of cqlsh-ext's; a crash report names it",
         "report it with its crash report"),
    Kind("connection", "no connection to the server", "check the host, port, TLS and credentials"),
    Kind("usage", "an option or setting refused before connecting", "cqlsh-ext --help lists the options"),
    Kind("statement", "any other error of a statement", None),
)
_BY_NAME = {kind.name: kind for kind in KINDS}

#: The driver's error classes, as cqlsh names them before a server error's message, by kind.
_DRIVER_KINDS = {
    "SyntaxException": "syntax", "InvalidRequest": "invalid", "ConfigurationException": "invalid",
    "AlreadyExists": "invalid", "Unauthorized": "unauthorized", "AuthenticationFailed": "unauthorized",
    "Unavailable": "unavailable", "ReadTimeout": "server_timeout", "WriteTimeout": "server_timeout",
    "OperationTimedOut": "server_timeout", "ReadFailure": "server_failure", "WriteFailure": "server_failure",
    "FunctionFailure": "server_failure", "ServerError": "server_failure", "NoHostAvailable": "connection",
    "KeyspaceNotFound": "not_found", "ColumnFamilyNotFound": "not_found", "ObjectNotFound": "not_found",
    "MaterializedViewNotFound": "not_found", "UserTypeNotFound": "not_found", "FunctionNotFound": "not_found",
    "AggregateNotFound": "not_found", "IndexNotFound": "not_found",
}
_CLASS = re.compile(r"^([A-Z][A-Za-z]+): ")
#: A suggestion the line carries (output.meant, common.text.nearest: "... (did you mean X?)").
_MEANT = re.compile(r"did you mean ([^?]+)\?")
#: Where a line says the error is: the server's `line 1:9`, cqlsh's `at line 2, char 5` or
#: `at char 17` (0-based), cqlsh-ext's `at position 7` (a 0-based offset in the statement).
_SERVER_AT = re.compile(r"\bline (\d+):(\d+)\b")
_CQLSH_AT = re.compile(r"\bat (?:line (\d+), )?char (\d+)\b")
_OFFSET_AT = re.compile(r"\bat position (\d+)\b")
_NOT_FOUND = re.compile(r"\b(?:keyspace|table|column family|type|function|aggregate|index|view)\b.*\b"
                        r"(?:not found|does not exist)\b|\bunconfigured table\b", re.IGNORECASE)


@dataclass(frozen=True)
class ErrorData:
    kind: str
    message: str
    position: dict[str, int] | None = None
    #: Lines that came with it (cqlsh's statement line and caret under a syntax error).
    detail: str | None = None

    def to_json(self) -> dict[str, object]:
        kind = _BY_NAME.get(self.kind, _BY_NAME["statement"])
        meant = _MEANT.search(self.message)  # the name meant, as the shell says it (output.meant)
        out: dict[str, object] = {"type": "error", "kind": kind.name, "message": self.message,
                                  "hint": f"did you mean {meant[1]}?" if meant else kind.hint,
                                  "position": self.position}
        if self.detail:
            out["detail"] = self.detail
        return out

    def line(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False)


def classify(text: str, statement: str | None = None, kind: str | None = None) -> ErrorData:
    """An error line as data; `statement`: the statement it is of (an offset becomes its line and
    column); `kind`: the kind when the caller knows it."""
    message = text.strip()
    return ErrorData(kind or _kind_of(message), message, _position(message, statement))


def _kind_of(message: str) -> str:
    found = _CLASS.match(message)
    if found is not None and found.group(1) in _DRIVER_KINDS:
        kind = _DRIVER_KINDS[found.group(1)]
        return "not_found" if kind == "invalid" and _NOT_FOUND.search(message) else kind
    lower = message.lower()
    if lower.startswith(("invalid syntax", "syntax error", "improper ")) or "starts no statement" in lower \
            or "is not a command or statement" in lower:
        return "syntax"
    if lower.startswith("refused"):
        return "refused"
    if _NOT_FOUND.search(message) or lower.startswith(("no keyspace ", "no table ")):
        return "not_found"
    return "statement"


def _position(message: str, statement: str | None) -> dict[str, int] | None:
    found = _SERVER_AT.search(message)
    if found is not None:  # the server's column is 0-based
        return {"line": int(found.group(1)), "column": int(found.group(2)) + 1}
    found = _CQLSH_AT.search(message)
    if found is not None:
        return {"line": int(found.group(1) or 1), "column": int(found.group(2)) + 1}
    found = _OFFSET_AT.search(message)
    if found is not None and statement is not None:
        offset = min(int(found.group(1)), len(statement))
        before = statement[:offset]
        return {"line": before.count("\n") + 1, "column": offset - (before.rfind("\n") + 1) + 1}
    return None
