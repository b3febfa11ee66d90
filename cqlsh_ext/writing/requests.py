"""The write requests: what an edit, COMPRESSION REWRITE, its RESUME, UNDO, a load and any other declared
write feature (`FeatureRequest`: its name and checked arguments) ask, as typed data,
before anything is read or written. A front end (the shell's statement parsers, a Python API)
makes one; the journal's sealed head keeps it (`"request": request.to_json()`), and RESUME rebuilds
its work from the verified head's request, never from a statement's text.

Each is a frozen dataclass with `to_json()` (plain JSON values, `"request"` naming its kind) and
`from_json(data)` (ValueError, TypeError or KeyError for what is not one: a journal is read
through `request_from_json`, which says which line). Names are kept as CQL keeps them (a quoted
name's exact case); a WHERE is its conditions' text as written, read again by the payload-query
parser against the table's schema (query.grammar.where_at): conditions, never a statement.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cqlsh_ext.common.file_formats import FILE_FORMATS
from cqlsh_ext.writing.blob_target import BlobTarget


def _text(data: Mapping[str, Any], name: str) -> str:
    value = data[name]
    if not isinstance(value, str):
        raise TypeError(name)
    return value


def _optional_text(data: Mapping[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is not None and not isinstance(value, str):
        raise TypeError(name)
    return value


def _flag(data: Mapping[str, Any], name: str) -> bool:
    value = data.get(name, False)
    if not isinstance(value, bool):
        raise TypeError(name)
    return value


@dataclass(frozen=True)
class EditOp:
    """One SET or DELETE of an edit: the path as written (`data.items[0].qty`), its steps below the
    blob (keys and list indexes), and the JSON text of the value set, numbers spelt as typed (None:
    the path is removed)."""

    path: str
    steps: tuple[str | int, ...]
    value: str | None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "steps": list(self.steps), "value": self.value}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EditOp:
        steps = data["steps"]
        if not isinstance(steps, list) or not all(isinstance(s, str | int) and not isinstance(s, bool)
                                                  for s in steps):
            raise TypeError("steps")
        return cls(_text(data, "path"), tuple(steps), _optional_text(data, "value"))


@dataclass(frozen=True)
class EditRequest:
    """UPDATE ks.t SET data.path = value ... / DELETE data.path FROM ks.t ... (docs/edit.md): the
    table, the blob, the ops in order, the WHERE's conditions, ALLOW FILTERING and CONFIRM."""

    keyspace: str
    table: str
    blob: BlobTarget
    ops: tuple[EditOp, ...]
    where: str
    verb: str = "update"
    allow_filtering: bool = False
    confirm: bool = False

    KIND = "edit"

    def to_json(self) -> dict[str, Any]:
        return {"request": self.KIND, "verb": self.verb, "keyspace": self.keyspace, "table": self.table,
                "blob": self.blob.to_json(), "ops": [op.to_json() for op in self.ops], "where": self.where,
                "allow_filtering": self.allow_filtering, "confirm": self.confirm}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EditRequest:
        _kind(data, cls.KIND)
        verb = _text(data, "verb")
        if verb not in ("update", "delete"):
            raise ValueError("verb")
        ops = data["ops"]
        if not isinstance(ops, list) or not ops:
            raise TypeError("ops")
        return cls(_text(data, "keyspace"), _text(data, "table"), BlobTarget.from_json(data["blob"]),
                   tuple(EditOp.from_json(op) for op in ops), _text(data, "where"), verb,
                   _flag(data, "allow_filtering"), _flag(data, "confirm"))


@dataclass(frozen=True)
class RewriteRequest:
    """COMPRESSION REWRITE ks.t.column AS 'SPEC' [WHERE ...] [ALLOW FILTERING] [PACE n] [ALL]
    [CONFIRM] (docs/rewrite.md): the table, the blob, the target chain as typed, the WHERE's
    conditions (None: the whole table), PACE in write units a second, ALL (the preview reads every
    row) and CONFIRM."""

    keyspace: str
    table: str
    blob: BlobTarget
    spec: str
    where: str | None = None
    allow_filtering: bool = False
    pace: int | None = None
    every_row: bool = False
    confirm: bool = False

    KIND = "rewrite"

    def to_json(self) -> dict[str, Any]:
        return {"request": self.KIND, "keyspace": self.keyspace, "table": self.table,
                "blob": self.blob.to_json(), "spec": self.spec, "where": self.where,
                "allow_filtering": self.allow_filtering, "pace": self.pace, "every_row": self.every_row,
                "confirm": self.confirm}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RewriteRequest:
        _kind(data, cls.KIND)
        pace = data.get("pace")
        if pace is not None and (not isinstance(pace, int) or isinstance(pace, bool) or pace <= 0):
            raise ValueError("pace")
        return cls(_text(data, "keyspace"), _text(data, "table"), BlobTarget.from_json(data["blob"]),
                   _text(data, "spec"), _optional_text(data, "where"), _flag(data, "allow_filtering"), pace,
                   _flag(data, "every_row"), _flag(data, "confirm"))

    def statement(self) -> str:
        """The statement that asks it, spelt from the fields (what RESUME shows)."""
        from cqlsh_ext.writing.blob_target import quote

        blob = self.blob
        column = quote(blob.column)
        if blob.container == "map":
            column += "['" + str(blob.access).replace("'", "''") + "']"
        elif blob.container == "udt":
            column += "." + quote(str(blob.access))
        spec = self.spec.replace("'", "''")
        text = f"COMPRESSION REWRITE {quote(self.keyspace)}.{quote(self.table)}.{column} AS '{spec}'"
        if self.where:
            text += f" WHERE {self.where}"
        if self.allow_filtering:
            text += " ALLOW FILTERING"
        if self.pace is not None:
            text += f" PACE {self.pace}"
        return text + (" ALL" if self.every_row else "") + (" CONFIRM" if self.confirm else "")


@dataclass(frozen=True)
class ResumeRequest:
    """COMPRESSION REWRITE RESUME 'journal' [CONFIRM]: the journal (a file, a Spark run's directory
    of parts, the id a journal's name ends with, or LAST: writing.journal_names) to go on with."""

    path: str
    confirm: bool = False

    KIND = "resume"

    def to_json(self) -> dict[str, Any]:
        return {"request": self.KIND, "path": self.path, "confirm": self.confirm}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ResumeRequest:
        _kind(data, cls.KIND)
        return cls(_text(data, "path"), _flag(data, "confirm"))


@dataclass(frozen=True)
class UndoRequest:
    """UNDO 'journal' [CUT] [UNSEALED] [CONFIRM [UNSEALED]]: the journal (a file, a Spark run's
    directory of parts, the id a journal's name ends with, or LAST: writing.journal_names) whose
    written values go back; `unsealed` reads a journal written before journals were sealed (version
    1 or 2: the shell's UNSEALED to preview it, CONFIRM UNSEALED to write it); `cut` writes back a
    journal without its closing line (CUT)."""

    path: str
    unsealed: bool = False
    confirm: bool = False
    cut: bool = False

    KIND = "undo"

    def to_json(self) -> dict[str, Any]:
        return {"request": self.KIND, "path": self.path, "unsealed": self.unsealed, "confirm": self.confirm,
                "cut": self.cut}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> UndoRequest:
        _kind(data, cls.KIND)
        return cls(_text(data, "path"), _flag(data, "unsealed"), _flag(data, "confirm"), _flag(data, "cut"))


@dataclass(frozen=True)
class LoadRequest:
    """COPY [ks.]table (columns) FROM 'file' [WITH ENCODE column = 'chain' AND ...] [PACE n]
    [CONFIRM] (docs/load.md), and the Python API's db.write(table, data, encode=...): the table, the
    columns written in the source's order (the primary key's among them), the source (a file's
    absolute path and its format, or "data": rows handed over in memory), each blob column's chain
    (ENCODE), the TTL given (None: the table's default), CSV's HEADER, PACE in write units a second
    and CONFIRM."""

    keyspace: str
    table: str
    columns: tuple[str, ...]
    source: str | None
    format: str
    encode: tuple[tuple[str, str], ...] = ()
    ttl: int | None = None
    header: bool = True
    pace: int | None = None
    confirm: bool = False

    KIND = "load"
    #: The formats a load reads: the files' (common.file_formats: Parquet, JSON Lines, CSV), and
    #: data in memory (the API's).
    FORMATS = (*(f.name for f in FILE_FORMATS), "data")

    def to_json(self) -> dict[str, Any]:
        return {"request": self.KIND, "keyspace": self.keyspace, "table": self.table,
                "columns": list(self.columns), "source": self.source, "format": self.format,
                "encode": [list(pair) for pair in self.encode], "ttl": self.ttl, "header": self.header,
                "pace": self.pace, "confirm": self.confirm}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LoadRequest:
        _kind(data, cls.KIND)
        columns = data["columns"]
        if not isinstance(columns, list) or not columns or not all(isinstance(c, str) for c in columns):
            raise TypeError("columns")
        fmt = _text(data, "format")
        if fmt not in cls.FORMATS:
            raise ValueError("format")
        pairs = data.get("encode") or []
        if not isinstance(pairs, list) or not all(
                isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in pairs):
            raise TypeError("encode")
        ttl, pace = data.get("ttl"), data.get("pace")
        for name, value, low in (("ttl", ttl, 0), ("pace", pace, 1)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < low):
                raise ValueError(name)
        return cls(_text(data, "keyspace"), _text(data, "table"), tuple(columns),
                   _optional_text(data, "source"), fmt, tuple((c, chain) for c, chain in pairs), ttl,
                   _flag(data, "header") if "header" in data else True, pace, _flag(data, "confirm"))


@dataclass(frozen=True)
class FeatureRequest:
    """A declared write feature's call that declares no typed request of its own (a write statement
    added as its declaration and its service: docs/extending.md): the feature's name and its
    arguments as checked against its declaration (features.calling.request_of), each a JSON value
    (a name as written: its text)."""

    feature: str
    arguments: Mapping[str, Any]

    KIND = "feature"

    def to_json(self) -> dict[str, Any]:
        return {"request": self.KIND, "feature": self.feature,
                "arguments": {name: str(value) if isinstance(value, str) else value
                              for name, value in self.arguments.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FeatureRequest:
        _kind(data, cls.KIND)
        arguments = data["arguments"]
        if not isinstance(arguments, Mapping):
            raise TypeError("arguments")
        return cls(_text(data, "feature"), dict(arguments))


WriteRequest = EditRequest | RewriteRequest | ResumeRequest | UndoRequest | LoadRequest | FeatureRequest
_KINDS: dict[str, Any] = {kind.KIND: kind for kind in (EditRequest, RewriteRequest, ResumeRequest,
                                                       UndoRequest, LoadRequest, FeatureRequest)}


def _kind(data: Mapping[str, Any], kind: str) -> None:
    if data.get("request") != kind:
        raise ValueError("request")


def request_from_json(data: Any) -> WriteRequest:
    """The request `data` holds (ValueError, TypeError or KeyError when it holds none)."""
    if not isinstance(data, Mapping):
        raise TypeError("request")
    kind = _KINDS.get(str(data.get("request")))
    if kind is None:
        raise ValueError("request")
    request: WriteRequest = kind.from_json(data)
    return request
