"""The API's writes (docs/api.md, "Writes"): the methods of the write features (db.rewrite, db.resume,
db.undo, db.edit, db.write, a package's own) are made from their declarations (api.report_methods)
and run here, by one function (`declared_write`): the call checked against the declaration, handed
as a FeatureCall to the service its feature declares (rewrite.run.rewrite_call, rewrite.resume,
writing.undo.undo_call, edit.run.edit_call, load.run.load_call) in a write context made of the
Database's reading context and the journal directory (cqlshrc's or --journal-dir's, as the shell's),
and its answer (the fields its output schema names) made the typed result its Method declares
(`RewriteResult`, `ResumeResult`, `UndoResult`, `EditResult`, api.loads.LoadResult; else a
`WriteResult`), with the lines the shell would print. Nothing is written without `confirm=True`;
every write is journaled and conditioned as in the shell (docs/rewrite.md, docs/edit.md)."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypeVar, Union

from cqlsh_ext.api.errors import Error, one_line

if TYPE_CHECKING:
    from cqlsh_ext.api.connected import Connected
    from cqlsh_ext.api.params import Params
    from cqlsh_ext.api.query_answer import Progress
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.features.feature import Feature
    from cqlsh_ext.writing.requests import EditRequest, ResumeRequest, RewriteRequest, UndoRequest
    from cqlsh_ext.writing.write_context import WriteContext

__all__ = ["EditResult", "ResumeResult", "RewriteResult", "UndoResult", "WriteResult", "declared_write"]

T = TypeVar("T")

#: A journal as the writes take it: its path, the id its name ends with or "LAST", or a confirmed
#: result that names it (None, a preview's journal, is refused in one line).
Journal = Union[str, "os.PathLike[str]", "RewriteResult", "EditResult", "WriteResult", None]


@dataclass(frozen=True)
class RewriteResult:
    """A rewrite's preview (`confirmed` False: nothing written) or run. The rows read, those found
    (the WHERE's payload conditions kept), to rewrite, already in the target chain and refused (by
    reason); stored bytes before and after and the write units the rewrite costs (a preview's of a
    big table are a sample's estimate: `sampled`). After confirm=True: the rows `written`, those
    `left_alone` (changed or expired since they were read), the `journal` (give it to db.undo),
    whether every token range is finished (`complete`; else RESUME in the shell goes on) and why it
    stopped (`stopped`, None). `text`: what the shell prints."""

    request: RewriteRequest
    confirmed: bool
    rows_read: int
    found: int
    to_rewrite: int
    already: int
    refused: dict[str, int]
    bytes_before: int
    bytes_after: int
    write_units: int
    sampled: bool = False
    written: int | None = None
    left_alone: int | None = None
    journal: str | None = None
    complete: bool | None = None
    stopped: str | None = None
    text: str = field(default="", repr=False)

    def to_dict(self) -> dict[str, Any]:
        return _as_dict(self)


@dataclass(frozen=True)
class ResumeResult(RewriteResult):
    """A rewrite gone on with from its journal (COMPRESSION REWRITE RESUME): a RewriteResult of the
    token ranges left, its `request` the rewrite the journal holds; `resumed` what was asked, the
    journal's token ranges (`ranges`, None: the rows its WHERE names), those finished before
    (`ranges_finished`) and the rows rewritten before (`rows_before`). After confirm=True
    `journal` is the same journal, appended to (a Spark run's directory of parts: a new one)."""

    resumed: ResumeRequest | None = None
    ranges: int = 0
    ranges_finished: int = 0
    rows_before: int = 0

    def to_dict(self) -> dict[str, Any]:
        doc = _as_dict(self)
        doc["resumed"] = None if self.resumed is None else self.resumed.to_json()
        return doc


@dataclass(frozen=True)
class UndoResult:
    """An UNDO's preview (`confirmed` False: nothing written) or run: the rows the journal says
    were written (`rows`); the preview's count of those that still hold what was written (`still`:
    the ones written back); after confirm=True the rows `written` back, those `left_alone` (changed
    or written again since), the undo's own `journal` (undo it in turn) and why it stopped
    (`stopped`, None). `text`: what the shell prints."""

    request: UndoRequest
    confirmed: bool
    rows: int
    still: int | None = None
    written: int | None = None
    left_alone: int | None = None
    journal: str | None = None
    stopped: str | None = None
    text: str = field(default="", repr=False)

    def to_dict(self) -> dict[str, Any]:
        return _as_dict(self)


@dataclass(frozen=True)
class EditChange:
    """One row an edit changes: its primary key (column -> value as the driver gives it) and, per
    path the statement names, the value before and after (`removed`: a DELETE took it away)."""

    key: dict[str, Any]
    changes: list[dict[str, Any]]


@dataclass(frozen=True)
class EditResult:
    """An edit's preview (`confirmed` False: nothing written) or run (db.edit): the rows `found`
    (its WHERE's payload conditions kept), those it changes (`to_change`, each with its
    changes: `changes`), those already as asked (`unchanged`), those refused (by reason); whether
    the reading was stopped (`interrupted`: nothing is then written). After confirm=True: the
    rows `written`, those `left_alone` (changed or expired since they were read), the `journal`
    (db.undo takes it) and why the writes stopped (`stopped`, None). `text`: what the shell
    prints."""

    request: EditRequest
    confirmed: bool
    found: int
    to_change: int
    unchanged: int
    refused: dict[str, int]
    changes: list[EditChange] = field(repr=False)
    interrupted: bool = False
    written: int | None = None
    left_alone: int | None = None
    journal: str | None = None
    stopped: str | None = None
    text: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        # the service's answer gives each row's changes as data: {"key": ..., "changes": [...]}
        changes = [EditChange(**c) if isinstance(c, dict) else c for c in self.changes]
        object.__setattr__(self, "changes", changes)

    def to_dict(self) -> dict[str, Any]:
        doc = _as_dict(self)
        doc["changes"] = [{"key": c.key, "changes": c.changes} for c in self.changes]
        return doc


class WriteResult:
    """A declared write feature's preview (nothing written) or run, by its method made from its
    declaration (db.<its method>: api.report_methods): its answer's data as the declaration's output
    schema names it (`to_dict()`; each field an attribute too: `result.written`), and `text`, what
    the shell prints. A confirmed run names its `journal` (db.undo takes the result or the path)."""

    def __init__(self, feature: str, data: dict[str, Any], text: str) -> None:
        self.feature, self.data, self.text = feature, data, text

    def __getattr__(self, name: str) -> Any:
        data = self.__dict__.get("data", {})
        if name in data:
            return data[name]
        raise AttributeError(f"{self.__dict__.get('feature', 'a write')}'s result has no field {name!r} "
                             f"(it has {', '.join(data)})")

    @property
    def journal(self) -> str | None:
        journal = self.data.get("journal")
        return journal if isinstance(journal, str) else None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.data)

    def __repr__(self) -> str:
        return f"WriteResult({self.feature!r}, {self.data!r})"


def declared_write(db: Connected, feature: Feature, arguments: Mapping[str, Any],
                   progress: Progress | None) -> Any:
    """A write feature called by the method its declaration makes (api.report_methods: db.rewrite,
    db.undo, ..., a package's own): `arguments` (None and False: not given; a path or a write's result
    given for a string, its journal's path: `_path_of`) checked against the declaration and made its
    service's request (features.calling.request_of, as the shell's statement is; a FeatureCall with
    the API's binding of a statement's markers, `_binder`), handed to its service in a write context
    (`_written`: the journal directory, its lines kept as the result's text). Its answer, a dict of
    the fields its declared output schema names, is made the declared result (Method.result: the
    typed RewriteResult, UndoResult, ...), else a WriteResult. A refusal is an Error, one line
    beginning with the declared label, nothing written."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.features.calling import request_of
    from cqlsh_ext.features.feature import FeatureCall
    from cqlsh_ext.writing.refused import WriteRefused

    method = feature.method
    label = method.label if method is not None and method.label else feature.name
    if feature.writes is not None and feature.writes.what == "journal" and \
            arguments.get(feature.writes.argument, "") is None:  # a preview's journal, None
        raise Error(f"{label}: a preview wrote nothing and has no journal; nothing was written")
    given = {name: _path_of(value, label) if feature.argument(name).type == "string"
             else dict(value) if isinstance(value, Mapping) else value
             for name, value in arguments.items() if value is not None and value is not False}
    try:
        request = request_of(feature, FeatureCall(given, bind=_binder(db)))
    except Invalid as err:
        raise Error(f"{err}; nothing was written") from None
    service = feature.service
    if service is None:
        raise Error(f"{feature.name} declares no service: the API cannot run it; nothing was written")
    answer, text, errors = _written(label, lambda ctx: service(ctx, request), db,
                                    (QueryError, WriteRefused), progress)
    if answer is None:
        raise Error(errors[-1] if errors else f"{label}: the reading failed; nothing was written")
    required = feature.output_schema.get("required", ())
    if not isinstance(answer, Mapping) or any(name not in answer for name in required):
        raise Error(f"{feature.name} answered no result its declaration names (the fields "
                    f"{', '.join(required)})")
    if method is not None and method.result is not None:
        return method.result(**answer, text=text)
    return WriteResult(feature.name, dict(answer), text)


def _path_of(value: Any, label: str) -> Any:
    """A string argument's value as a program may give it: a path (os.PathLike: a LoadResult is its
    journal's) or a confirmed write's result, its journal's path; a preview's result is refused."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, (RewriteResult, EditResult, UndoResult, WriteResult)):
        if value.journal is None:
            raise Error(f"{label}: a preview wrote nothing and has no journal; nothing was written")
        return value.journal
    return value


def _binder(db: Connected) -> Callable[..., Any]:
    """The API's binding of a statement's markers (FeatureCall.bind): `params` bound as db.query binds
    them (api.params.bind_statement, through the connection's prepared statements), those the
    service reads itself (`taken`) handed back; a wrong value a QueryError (its one line)."""

    def bind(lexed: Lexed, server_text: str | None, params: Params, taken: Sequence[Any]) -> Any:
        from cqlsh_ext.api.params import bind_statement
        from cqlsh_ext.cql.errors import QueryError

        try:
            return bind_statement(db._prepared, lexed, server_text, None, params, taken=taken)
        except Error as err:
            raise QueryError(str(err)) from None

    return bind


def _as_dict(result: RewriteResult | UndoResult | EditResult) -> dict[str, Any]:
    """A result's fields as JSON-ready values, in their order; its request as the journal spells
    it; `text` left out."""
    doc = {f.name: getattr(result, f.name) for f in fields(result) if f.repr}
    doc["request"] = result.request.to_json()
    return {name: dict(value) if isinstance(value, dict) else value for name, value in doc.items()}


def _written(label: str, call: Callable[[WriteContext], T], db: Connected,
             refusals: tuple[type[Exception], ...], progress: Progress | None) -> tuple[T, str, list[str]]:
    """`call(ctx)` in a write context whose lines go to a stream of this call's own (never the
    process's standard output: other threads keep theirs): its answer, the lines it wrote (and its
    errors after them) as one text, and its errors. A refusal is an Error saying nothing was
    written; any other failure an Error of its one line. `progress`: the reading's events, and the
    write's notes (progress off a terminal, Ctrl-C's) as {"note": line}."""
    errors: list[str] = []
    out = io.StringIO()
    ctx = _context(db, errors, [], out, progress)
    try:
        answer = call(ctx)
    except refusals as err:
        raise Error(f"{label}: {one_line(err, db.where)}; nothing was written") from None
    except Error:
        raise
    except Exception as err:
        raise Error(one_line(err, db.where)) from None
    return answer, "\n".join([*out.getvalue().splitlines(), *errors]), errors


def _context(db: Connected, errors: list[str], messages: list[str], out: io.StringIO,
             progress: Progress | None) -> WriteContext:
    """The Database's reading context with the journal directory, its lines to `out`; conditioned
    writes at LOCAL_SERIAL on Amazon Keyspaces (as Spark's driver writes them)."""
    from cassandra import ConsistencyLevel

    from cqlsh_ext.writing.journal import journal_directory
    from cqlsh_ext.writing.write_context import write_context

    ctx = write_context(db.context(errors, messages, progress), journal_directory(db.config), out)
    if progress is not None:
        ctx.say = lambda line: progress({"note": line})
    if db.config.keyspaces.keyspaces:
        ctx.serial_consistency = ConsistencyLevel.LOCAL_SERIAL
    return ctx
