"""The API's writes (docs/api.md, "Writes"): `db.edit`, `db.rewrite`, `db.resume` and `db.undo`, a
front end on the writing layer as the shell's statements are: each hands its request to the service
its feature declares (edit/ and rewrite/declared.py: edit.run, rewrite.run, rewrite.resume,
writing.undo). Each builds the typed request (writing.requests.RewriteRequest, UndoRequest), runs it
in a write context made of the Database's reading context and the journal directory (cqlshrc's or
--journal-dir's, as the shell's), and gives back the figures the service returns (rewrite.preview's
PreviewFigures, rewrite.execute's RunFigures, writing.undo's UndoFigures) with the lines the shell
would print. Nothing is written without `confirm=True`; every write is journaled and conditioned
as in the shell (docs/rewrite.md, docs/edit.md)."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypeVar, Union

from cqlsh_ext.api.errors import Error, one_line

if TYPE_CHECKING:
    from cqlsh_ext.api.connected import Connected
    from cqlsh_ext.api.params import Params
    from cqlsh_ext.api.query_answer import Progress
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.edit.parse import Edit
    from cqlsh_ext.edit.run import EditFigures
    from cqlsh_ext.features.feature import Feature
    from cqlsh_ext.rewrite.execute import RunFigures
    from cqlsh_ext.rewrite.preview import PreviewFigures
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
                   progress: Progress | None) -> WriteResult:
    """A write feature called by the method its declaration makes (api.report_methods): `arguments`
    (None and False: not given) checked against the declaration and made its service's request
    (features.calling.request_of, as the shell's statement is), handed to its service in a write
    context (`_written`: the journal directory, its lines kept as the result's text); its answer, a
    dict of the fields its declared output schema names, is the result. A refusal is an Error, one
    line, nothing written."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.features.calling import request_of
    from cqlsh_ext.features.feature import FeatureCall
    from cqlsh_ext.writing.refused import WriteRefused

    given = {name: value for name, value in arguments.items() if value is not None and value is not False}
    try:
        request = request_of(feature, FeatureCall(given))
    except Invalid as err:
        raise Error(f"{err}; nothing was written") from None
    service = feature.service
    if service is None:
        raise Error(f"{feature.name} declares no service: the API cannot run it; nothing was written")
    answer, text, errors = _written(feature.name, lambda ctx: service(ctx, request), db,
                                    (QueryError, WriteRefused), progress)
    if answer is None:
        raise Error(errors[-1] if errors else f"{feature.name}: the reading failed; nothing was written")
    required = feature.output_schema.get("required", ())
    if not isinstance(answer, Mapping) or any(name not in answer for name in required):
        raise Error(f"{feature.name} answered no result its declaration names (the fields "
                    f"{', '.join(required)})")
    return WriteResult(feature.name, dict(answer), text)


def _as_dict(result: RewriteResult | UndoResult | EditResult) -> dict[str, Any]:
    """A result's fields as JSON-ready values, in their order; its request as the journal spells
    it; `text` left out."""
    doc = {f.name: getattr(result, f.name) for f in fields(result) if f.repr}
    doc["request"] = result.request.to_json()
    return {name: dict(value) if isinstance(value, dict) else value for name, value in doc.items()}


def checked_call(name: str, **arguments: Any) -> None:
    """A hand-written write method's arguments (None and False: not given) checked against its
    feature's declaration (features.calling.checked, the one check every front end makes: names,
    types, bounds, what goes with what), before anything is read. Error, one line naming the
    argument; nothing written."""
    from cqlsh_ext.features import declared
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.features.calling import checked

    given = {key: value for key, value in arguments.items() if value is not None and value is not False}
    try:
        checked(declared(plugins=False)[name], given)
    except Invalid as err:
        raise Error(f"{err}; nothing was written") from None


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


def _figures(request: RewriteRequest, figures: PreviewFigures | RunFigures, text: str) -> dict[str, Any]:
    """A RewriteResult's fields from a preview's or a run's figures."""
    from cqlsh_ext.rewrite.execute import RunFigures

    counts = figures.counts
    common: dict[str, Any] = {"request": request, "rows_read": counts.rows, "found": counts.found,
                              "to_rewrite": counts.change, "already": counts.already,
                              "refused": dict(counts.refused), "text": text}
    if not isinstance(figures, RunFigures):
        return {"confirmed": False, "bytes_before": counts.before, "bytes_after": counts.after,
                "write_units": counts.rewrite_wcu, "sampled": figures.sampled, **common}
    written = figures.written
    return {"confirmed": True, "bytes_before": written.before, "bytes_after": written.after,
            "write_units": written.units, "written": written.written,
            "left_alone": written.changed + written.expired, "journal": figures.journal,
            "complete": figures.complete, "stopped": figures.stop or None, **common}


def rewrite(db: Connected, column: str, spec: str, *, where: str | None = None, allow_filtering: bool = False,
            pace: int | None = None, every_row: bool = False, confirm: bool = False,
            progress: Progress | None = None) -> RewriteResult:
    """COMPRESSION REWRITE column AS 'spec' [WHERE where] [ALLOW FILTERING] [PACE pace] [ALL]
    [CONFIRM] (see Database.rewrite)."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.features import service_of
    from cqlsh_ext.rewrite.job import LABEL, table_meta, table_schema
    from cqlsh_ext.rewrite.parse import RewriteAsked, blob_of, where_of
    from cqlsh_ext.writing.blob_target import refuse_system
    from cqlsh_ext.writing.refused import WriteRefused
    from cqlsh_ext.writing.requests import RewriteRequest

    checked_call("rewrite", column=column, spec=spec, where=where, allow_filtering=allow_filtering, pace=pace,
                 every_row=every_row, confirm=confirm)

    def run(ctx: WriteContext) -> tuple[RewriteRequest, PreviewFigures | RunFigures | None]:
        def tables(keyspace: str | None, table: str) -> Any:
            meta = table_meta(ctx, keyspace, table)
            if meta is not None:  # refused before its columns are looked at
                refuse_system(meta.keyspace_name)
            return meta

        keyspace, meta, blob = blob_of(column, tables, lambda m: table_schema(ctx, m), ctx.keyspace)
        request = RewriteRequest(keyspace, meta.name, blob, spec, where, allow_filtering, pace, every_row,
                                 confirm)
        asked = RewriteAsked(request, where_of(request, table_schema(ctx, meta)))
        figures: PreviewFigures | RunFigures | None = service_of("rewrite")(ctx, asked)
        return request, figures

    (request, figures), text, errors = _written(LABEL, run, db, (QueryError, WriteRefused), progress)
    if figures is None:
        raise Error(errors[-1] if errors else f"{LABEL}: the reading failed; nothing was written")
    return RewriteResult(**_figures(request, figures, text))


def resume(db: Connected, journal: Journal, *,
           confirm: bool = False, progress: Progress | None = None) -> ResumeResult:
    """COMPRESSION REWRITE RESUME 'journal' [CONFIRM] (see Database.resume)."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.features import service_of
    from cqlsh_ext.rewrite.job import LABEL
    from cqlsh_ext.writing.refused import WriteRefused
    from cqlsh_ext.writing.requests import ResumeRequest

    path = _journal_path(journal, LABEL)
    checked_call("resume", journal=path, confirm=confirm)
    request = ResumeRequest(path, confirm)
    (found, figures), text, errors = _written(LABEL, lambda ctx: service_of("resume")(ctx, request), db,
                                              (QueryError, WriteRefused), progress)
    held: dict[str, Any] = {"resumed": request, "ranges": found.job.work.range_count,
                            "ranges_finished": len(found.done), "rows_before": found.rows_before}
    if figures is None and found.todo:
        raise Error(errors[-1] if errors else f"{LABEL}: the reading failed; nothing was written")
    if figures is None:  # every token range finished already: nothing to read or write
        nothing = 0 if confirm else None
        return ResumeResult(request=found.job.request, confirmed=confirm, rows_read=0, found=0, to_rewrite=0,
                            already=0, refused={}, bytes_before=0, bytes_after=0, write_units=0,
                            written=nothing, left_alone=nothing, complete=True, text=text, **held)
    return ResumeResult(**_figures(found.job.request, figures, text), **held)


def _journal_path(journal: Journal, label: str) -> str:
    """A journal's path: given, or the one a confirmed RewriteResult or EditResult names."""
    if isinstance(journal, (RewriteResult, EditResult, WriteResult)):
        journal = journal.journal
    if journal is None:
        raise Error(f"{label}: a preview wrote nothing and has no journal; nothing was written")
    return os.fspath(journal)


def undo(db: Connected, journal: Journal, *, unsealed: bool = False,
         confirm: bool = False, cut: bool = False, progress: Progress | None = None) -> UndoResult:
    """UNDO 'journal' [CUT] [UNSEALED] [CONFIRM] (see Database.undo)."""
    from cqlsh_ext.features import service_of
    from cqlsh_ext.writing.refused import WriteRefused
    from cqlsh_ext.writing.requests import UndoRequest
    from cqlsh_ext.writing.undo import LABEL

    path = _journal_path(journal, LABEL)
    checked_call("undo", journal=path, unsealed=unsealed, confirm=confirm, cut=cut)
    request = UndoRequest(path, unsealed, confirm, cut)
    figures, text, _ = _written(LABEL, lambda ctx: service_of("undo")(ctx, request), db, (WriteRefused,),
                                progress)
    done = figures.done
    if done is None:
        nothing = 0 if confirm else None  # confirmed with no row to write back
        return UndoResult(request, confirm, figures.rows, figures.still, nothing, nothing, text=text)
    return UndoResult(request, True, figures.rows, figures.still, done.written,
                      done.changed + done.rewritten + done.expired, figures.journal, done.stop or None, text)


def edit(db: Connected, statement: str, params: Params = None, *, confirm: bool = False,
         progress: Progress | None = None) -> EditResult:
    """UPDATE ... SET path = ... / DELETE path FROM ... [CONFIRM] (see Database.edit)."""
    from dataclasses import replace

    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.edit.document import REMOVE
    from cqlsh_ext.edit.parse import TableColumns, parse
    from cqlsh_ext.edit.preview import LABEL
    from cqlsh_ext.edit.run import edit_request
    from cqlsh_ext.features import service_of
    from cqlsh_ext.writing.refused import WriteRefused

    checked_call("edit", statement=statement, params=params, confirm=confirm)
    lexed = Lexed(statement)
    lookup = TableColumns(db.cluster, db.keyspace)
    try:
        asked = parse(lexed, lookup, lookup.schema, markers=True)
    except QueryError as err:
        raise Error(f"{LABEL}: {err}; nothing was written") from None
    if asked is None:
        raise Error(f"{LABEL}: db.edit takes UPDATE ... SET path = value or DELETE path FROM ... naming "
                    "paths inside payloads (cqlsh-ext docs edit); this statement is CQL's own: db.execute "
                    "runs it")
    keyspace = lookup.keyspace or ""
    asked = _bound_edit(db, lexed, asked, keyspace, params, LABEL)
    if confirm:
        asked = replace(asked, confirm=True)
    figures, text, errors = _written(LABEL, lambda ctx: service_of("edit")(ctx, asked, keyspace, lookup.meta),
                                     db, (QueryError, WriteRefused), progress)
    if figures is None:
        raise Error(errors[-1] if errors else f"{LABEL}: the reading failed; nothing was written")
    return _edit_result(edit_request(asked, keyspace), asked.confirm, figures, text, REMOVE)


def _bound_edit(db: Connected, lexed: Lexed, asked: Edit, keyspace: str, params: Params, label: str) -> Edit:
    """The edit with `params` bound as db.query binds them (api.params.bind_statement): a SET's
    value and a payload condition's literal given theirs (edit.parse.bind_edit), the ordinary
    conditions' markers checked against the types the server says they have and bound into the
    rows' reading (Edit.bind). Error, one line, nothing written."""
    from dataclasses import replace

    from cqlsh_ext.api.params import bind_statement
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.edit.parse import bind_edit
    from cqlsh_ext.query.grammar import quote

    where = asked.where
    # The server's part of the WHERE, as the rows' reading sends it (its markers in their order).
    server = f"SELECT * FROM {quote(keyspace)}.{quote(asked.table)} WHERE {' AND '.join(where.ordinary)} " \
        "ALLOW FILTERING" if where.ordinary else None
    try:
        bound = bind_statement(db._prepared, lexed, server, None, params,
                               taken=[*asked.markers, *where.markers])
        asked = bind_edit(asked, bound.taken)
    except (Error, QueryError) as err:
        raise Error(f"{label}: {err}; nothing was written") from None
    return replace(asked, bind=bound.binder())


def _edit_result(request: EditRequest, confirmed: bool, figures: EditFigures, text: str,
                 removed: object) -> EditResult:
    outcome = figures.outcome
    changes = [EditChange(dict(row.key), [_change(path, old, new, removed) for path, old, new in row.changes])
               for row in outcome.rows]
    common: dict[str, Any] = {"request": request, "found": outcome.found, "to_change": len(outcome.rows),
                              "unchanged": outcome.unchanged, "refused": dict(outcome.refused),
                              "changes": changes, "interrupted": figures.interrupted, "text": text}
    done = figures.done
    if not confirmed:
        return EditResult(confirmed=False, **common)
    if done is None:  # confirmed, nothing to write (or the reading stopped)
        return EditResult(confirmed=True, written=0, left_alone=0, **common)
    return EditResult(confirmed=True, written=done.written, left_alone=done.changed + done.expired,
                      journal=figures.journal, stopped=done.stop or None, **common)


def _change(path: str, old: Any, new: Any, removed: object) -> dict[str, Any]:
    """One path's change as data: its value before and after; `added` (a key that was not there)
    or `removed` (a DELETE's) where one side is none."""
    change: dict[str, Any] = {"path": path, "old": None if old is removed else old,
                              "new": None if new is removed else new}
    if old is removed:
        change["added"] = True
    if new is removed:
        change["removed"] = True
    return change
