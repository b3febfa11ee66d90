"""Doing an edit, a front end on the writing layer: the rows read (writing.cell_reads: the plan built
from the statement's parts, read as a payload query reads them), each stored value rewritten in its
own chain (edit.rewrite), then either a preview (edit.preview) or, with CONFIRM, each row journaled
(writing.journal, its head holding the request: writing.requests.EditRequest) and written by the
one write mechanism (writing.cell_writer: at the cell's write time + 1 with its moment of expiry kept,
then read again; or, where the server does not allow that, on the condition that the row holds the
bytes read), row by row (writing.loop). UNDO is writing.undo's.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.text import plural
from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.edit.document import EditRefused
from cqlsh_ext.edit.preview import LABEL, Outcome, RowChange, summary
from cqlsh_ext.writing.blob_target import BlobTarget, key_columns, refuse_system

if TYPE_CHECKING:
    import io

    from cqlsh_ext.edit.parse import Edit
    from cqlsh_ext.payload.places import Decoding
    from cqlsh_ext.writing.cell_reads import CellRead
    from cqlsh_ext.writing.loop import Done
    from cqlsh_ext.writing.mechanism import Mechanism
    from cqlsh_ext.writing.requests import EditRequest
    from cqlsh_ext.writing.write_context import WriteContext


@dataclass
class EditFigures:
    """What an edit did, as data (the Python API's EditResult): the rows read and what each
    became (`outcome`: found, to change with their changes, already as asked, refused by reason),
    whether its reading was stopped (Ctrl-C: nothing is then written), and after CONFIRM the
    row loop's figures (`done`) and the journal's path."""

    outcome: Outcome
    interrupted: bool = False
    done: Done | None = None
    journal: str | None = None


def edit_request(edit: Edit, keyspace: str) -> EditRequest:
    """The edit as the typed request its journal keeps."""
    from cqlsh_ext.edit.document import value_json
    from cqlsh_ext.writing.requests import EditOp, EditRequest

    blob = BlobTarget(edit.column, edit.access, edit.container, edit.holds_text)
    ops = tuple(EditOp(op.text, tuple(op.steps), value_json(op.value)) for op in edit.ops)
    return EditRequest(keyspace, edit.table, blob, ops, edit.where.text, edit.verb, edit.allow_filtering,
                       edit.confirm)


@dataclass
class EditPreview:
    """What an edit would do, read and nothing written: the outcome (rows found, to change, refused,
    already as asked, each row's old and new value), the mechanism it would write by, whether the
    reading was stopped before its end; the request, the blob and the key columns it would write."""

    outcome: Outcome
    mechanism: Mechanism
    interrupted: bool
    request: EditRequest
    blob: BlobTarget
    keys: list[str]


def preview_edit(ctx: WriteContext, edit: Edit, keyspace: str, meta: Any) -> EditPreview | None:
    """Read the rows the edit names and rewrite each value as it would, writing nothing; None when
    the reading failed (said through ctx.error). QueryError or WriteRefused for what is refused
    before reading."""
    from cqlsh_ext.writing.cell_reads import plan_for, read_rows, sibling_columns, write_decoding
    from cqlsh_ext.writing.mechanism import choose

    request = edit_request(edit, keyspace)
    blob = request.blob
    refuse_system(keyspace)
    if edit.container is not None and str(meta.columns[edit.column].cql_type).startswith("frozen<"):
        raise QueryError(f"{edit.column} is frozen: it is written whole, and {blob}'s documents are not "
                         "edited here")
    keys = key_columns(meta, edit.column)
    if not edit.allow_filtering and not set(keys) <= edit.where.restricted:
        raise QueryError("the WHERE names no full primary key, so this edits the rows a scan finds: "
                         "add ALLOW FILTERING")
    mechanism = choose(ctx, keyspace, meta.name, blob, keys)
    from cqlsh_ext.reading.resolve import table_target

    target = table_target(ctx.cluster.metadata, keyspace, meta.name)
    if target is None:
        raise QueryError(f"unknown table {keyspace}.{meta.name}")
    decoding = write_decoding(ctx.settings)
    plan = plan_for(keyspace, meta, target.schema, blob, keys, edit.where, edit.allow_filtering,
                    edit.allow_filtering and edit.confirm, mechanism,
                    sibling_columns(decoding, keyspace, meta.name, blob))
    read = read_rows(ctx, plan, meta, keys, blob, mechanism, decoding, edit.bind)
    if read is None:
        return None
    outcome = _outcome(edit, blob, keyspace, meta, read.pages(), decoding)
    if read.error:
        ctx.error(f"{LABEL}: the reading failed ({read.error}); nothing was written")
        return None
    return EditPreview(outcome, mechanism, bool(read.interrupted), request, blob, keys)


def run_edit(ctx: WriteContext, edit: Edit, keyspace: str, meta: Any) -> EditFigures | None:
    """Preview or write the edit (see the module doc): its figures, or None when the reading
    failed (ctx.error said why); QueryError or WriteRefused for what is refused before reading."""
    previewed = preview_edit(ctx, edit, keyspace, meta)
    if previewed is None:
        return None
    outcome, mechanism = previewed.outcome, previewed.mechanism
    figures = EditFigures(outcome, interrupted=previewed.interrupted)
    stopped = " (the reading was stopped by Ctrl-C: these are the rows found before)" \
        if previewed.interrupted else ""
    asking = not edit.confirm and bool(outcome.rows) and not previewed.interrupted and ctx.ask is not None
    # A question follows: the preview goes to the terminal with it, not to the pager that holds
    # standard output until the statement ends.
    out = sys.stderr if asking else ctx.out
    summary(ctx, edit.confirm, outcome, stopped, mechanism, out)
    if not edit.confirm:
        if not outcome.rows:
            return figures
        if not asking or ctx.ask is None or not ctx.ask(f"Write {plural(len(outcome.rows), 'row')}? [y/N] "):
            print(f"Nothing written: add CONFIRM at the end of the statement to write "
                  f"{plural(len(outcome.rows), 'row')}.", file=ctx.out)
            return figures
    if previewed.interrupted:
        print("Nothing written: the reading was stopped.", file=ctx.out)
        return figures
    if outcome.rows:
        from cqlsh_ext.writing.loop import write_changes

        figures.done, figures.journal = write_changes(ctx, keyspace, meta, previewed.blob, previewed.keys,
                                                      mechanism, outcome.rows, previewed.request, LABEL)
    return figures


def _outcome(edit: Edit, blob: BlobTarget, keyspace: str, meta: Any, pages: Iterable[list[CellRead]],
             decoding: Decoding) -> Outcome:
    from cqlsh_ext.edit.rewrite import rewrite
    from cqlsh_ext.payload.engine import ValueEngine
    from cqlsh_ext.payload.places import Engines, ValuePlace
    from cqlsh_ext.payload.view import TEXT_READING

    is_text = blob.holds_text
    # A text column's value is its text: read as text whatever the mode guesses of its bytes.
    steps = ("value",) if blob.container == "map" else (str(blob.access),) if blob.container else ()
    engine = ValueEngine(cap=decoding.cap, spec=TEXT_READING) if is_text else \
        Engines(decoding)(ValuePlace(keyspace, meta.name, edit.column, steps))
    outcome = Outcome()
    for page in pages:
        for cell in page:
            outcome.found += 1
            stored = cell.stored
            if stored is None:
                outcome.refuse("null: no document to edit")
                continue
            raw = stored.encode("utf-8") if isinstance(stored, str) else bytes(stored)
            # a bare blob the reading decoded (its chain picked by a sibling column, say) is edited
            # as it was read
            view = cell.view if cell.view is not None and blob.container is None and not is_text else None
            try:
                done = rewrite(raw, engine, edit.ops, decoding.cap, view)
            except EditRefused as err:
                outcome.refuse(str(err))
                continue
            except Exception as err:  # the boundary of one value: a writer's or reader's surprise
                outcome.refuse(f"not rewritten here ({type(err).__name__}: {str(err)[:80]})")
                continue
            if done is None:
                outcome.unchanged += 1
                continue
            new: Any = done.value
            if is_text:
                try:
                    new = done.value.decode("utf-8")
                except UnicodeDecodeError:
                    outcome.refuse("the new value is not text, and the column is")
                    continue
            outcome.rows.append(RowChange(cell.key, stored, new, done.changes, cell.writetime, cell.ttl,
                                          cell.expires))
            for note in done.notes:
                outcome.notes[note] = outcome.notes.get(note, 0) + 1
    return outcome


def edit_call(ctx: WriteContext, call: Any) -> dict[str, Any] | None:
    """An edit called with a front end's arguments (a features.feature.FeatureCall, checked against
    its declaration: the API's db.edit): the statement read (edit.parse) with its markers bound by the
    front end (FeatureCall.bind: a program's `params`, a SET's values and a payload condition's
    literals given theirs by edit.parse.bind_edit, the ordinary conditions' bound into the rows'
    reading), CONFIRM given or written at its end; previewed or written as the shell's statement is
    (`run_edit`); its figures as the fields its declared answer names (`answer_of`). None: the reading
    failed, said through ctx.error. QueryError for a statement that names no payload path."""
    from dataclasses import replace

    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.edit.parse import TableColumns, bind_edit, parse
    from cqlsh_ext.query.grammar import quote

    given = call.arguments
    lexed = Lexed(given["statement"])
    lookup = TableColumns(ctx.cluster, ctx.keyspace)
    asked = parse(lexed, lookup, lookup.schema, markers=call.bind is not None)
    if asked is None:
        raise QueryError("db.edit takes UPDATE ... SET path = value or DELETE path FROM ... naming paths "
                         "inside payloads (cqlsh-ext docs edit); this statement is CQL's own: db.execute "
                         "runs it")
    keyspace = lookup.keyspace or ""
    if call.bind is not None:
        where = asked.where
        # The server's part of the WHERE, as the rows' reading sends it (its markers in their order).
        server = f"SELECT * FROM {quote(keyspace)}.{quote(asked.table)} WHERE " \
            f"{' AND '.join(where.ordinary)} ALLOW FILTERING" if where.ordinary else None
        bound = call.bind(lexed, server, given.get("params"), [*asked.markers, *where.markers])
        asked = replace(bind_edit(asked, bound.taken), bind=bound.binder())
    if given.get("confirm"):
        asked = replace(asked, confirm=True)
    figures = run_edit(ctx, asked, keyspace, lookup.meta)
    return None if figures is None else answer_of(edit_request(asked, keyspace), asked.confirm, figures)


def answer_of(request: EditRequest, confirmed: bool, figures: EditFigures) -> dict[str, Any]:
    """An edit's answer as its declaration names its fields (features.output_schemas.EDIT_RESULT: the
    API's EditResult): each row to change, its key and per path the value before and after."""
    outcome = figures.outcome
    changes = [{"key": dict(row.key), "changes": [_change(path, old, new) for path, old, new in row.changes]}
               for row in outcome.rows]
    answer: dict[str, Any] = {"request": request, "confirmed": confirmed, "found": outcome.found,
                              "to_change": len(outcome.rows), "unchanged": outcome.unchanged,
                              "refused": dict(outcome.refused), "changes": changes,
                              "interrupted": figures.interrupted}
    done = figures.done
    if not confirmed:
        return answer
    if done is None:  # confirmed, nothing to write (or the reading stopped)
        return {**answer, "written": 0, "left_alone": 0}
    return {**answer, "written": done.written, "left_alone": done.changed + done.expired,
            "journal": figures.journal, "stopped": done.stop or None}


def _change(path: str, old: Any, new: Any) -> dict[str, Any]:
    """One path's change as data: its value before and after; `added` (a key that was not there)
    or `removed` (a DELETE's) where one side is none."""
    from cqlsh_ext.edit.document import REMOVE

    change: dict[str, Any] = {"path": path, "old": None if old is REMOVE else old,
                              "new": None if new is REMOVE else new}
    if old is REMOVE:
        change["added"] = True
    if new is REMOVE:
        change["removed"] = True
    return change


def propose_call(ctx: Any, call: Any) -> dict[str, Any] | None:
    """propose_edit (a read feature: MCP's tool): the statement a person would run in the shell for an
    intent, and what the shell's preview of it says, reading only: the UPDATE or DELETE of a payload
    path (`preview_edit`, the same reading and rewriting of each value), or with `target` the
    COMPRESSION REWRITE of the column, previewed by the rewrite feature's own service (called through
    its declaration: a sample of a big table). `call` is the FeatureCall the front end checked, the
    table it names found (FeatureCall.table); the statement spelt from it is bounded by the front
    end's bound (FeatureCall.bound) before any parser reads it. Its answer the fields the declared
    proposal names; None where refused or unread (said through ctx.error). features.arguments.Invalid
    for arguments that do not make a statement."""
    import io
    from dataclasses import replace

    from cqlsh_ext.writing.refused import WriteRefused
    from cqlsh_ext.writing.write_context import write_context

    keyspace, table = call.table
    out = io.StringIO()
    wctx = replace(write_context(ctx, "", out), ask=None)  # nobody to answer a preview's question: no write
    try:
        if "target" in call.arguments:
            return _proposed_rewrite(wctx, keyspace, table, call, out)
        return _proposed_edit(wctx, keyspace, table, call)
    except (QueryError, WriteRefused) as err:
        ctx.error(f"refused: {err}; nothing would be written")
        return None


def _bounded(call: Any, statement: str) -> Any:
    """The statement lexed, within the front end's bound (FeatureCall.bound; QueryError)."""
    from cqlsh_ext.cql.lexer import Lexed

    lexed = Lexed(statement)
    if call.bound is not None:
        call.bound(lexed)
    return lexed


def _proposed_edit(ctx: WriteContext, keyspace: str, table: str, call: Any) -> dict[str, Any] | None:
    """propose_edit's UPDATE or DELETE of a path (see propose_call)."""
    from cqlsh_ext.cql.spelling import spell
    from cqlsh_ext.edit.parse import TableColumns, parse, read_path, spell_literal
    from cqlsh_ext.edit.preview import PREVIEW_ROWS, side
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.writing.blob_target import key_text
    from cqlsh_ext.writing.cell_writer import raw

    given = call.arguments
    path, where = given.get("path"), given.get("where")
    if not isinstance(path, str) or not path.strip():
        raise Invalid("path must be a column and a path inside it: data.status, data.items[0].qty")
    if not isinstance(where, str) or not where.strip():
        raise Invalid("where must be the conditions after WHERE: id = 42")
    remove = given.get("remove", False)
    if remove == ("value" in given):
        raise Invalid("give a value (SET the path to it) or remove: true (DELETE the path), one of them")
    name = f"{spell(keyspace)}.{spell(table)}"
    # The path read as a path and spelt again: what else its text holds (a second assignment,
    # `data.a = 1, data.b`) is refused, never pasted into the statement.
    target = read_path(path)
    statement = (f"DELETE {target} FROM {name}" if remove else
                 f"UPDATE {name} SET {target} = {spell_literal(given['value'])}")
    statement += f" WHERE {where.strip()}" + (" ALLOW FILTERING" if given.get("allow_filtering") else "")
    lexed = _bounded(call, statement)
    lookup = TableColumns(ctx.cluster, ctx.keyspace)
    edit = parse(lexed, lookup, lookup.schema)
    if edit is None:
        raise Invalid(f"{target} is no path inside a blob or JSON text column of {name}")
    if (lookup.keyspace, lookup.meta.name) != (keyspace, table) or edit.confirm:
        raise Invalid("where holds the conditions alone (CONFIRM is the person's to add)")
    previewed = preview_edit(ctx, edit, keyspace, lookup.meta)
    if previewed is None:
        return None
    outcome = previewed.outcome
    lines = _preview_lines(ctx, outcome, previewed)
    rows = [{"key": key_text(row.key),
             "changes": [{"path": p, "old": side(old), "new": side(new)} for p, old, new in row.changes]}
            for row in outcome.rows[:PREVIEW_ROWS]]
    data: dict[str, Any] = {
        "statement": statement, "to_write": statement + " CONFIRM", "rows_found": outcome.found,
        "would_change": len(outcome.rows), "already_as_asked": outcome.unchanged,
        "refused": dict(outcome.refused), "bytes_before": sum(len(raw(row.old)) for row in outcome.rows),
        "bytes_after": sum(len(raw(row.new)) for row in outcome.rows), "rows": rows, "preview": lines}
    if previewed.interrupted:
        data["stopped"] = {"why": "the reading was stopped", "says": "the figures cover the rows read before"}
    return data


def _preview_lines(ctx: WriteContext, outcome: Outcome, previewed: EditPreview) -> list[str]:
    """The lines the shell's preview of the edit says (edit.preview.summary), as a list."""
    import io

    lines = io.StringIO()
    stopped = " (stopped: these are the rows found before)" if previewed.interrupted else ""
    summary(ctx, False, outcome, stopped, previewed.mechanism, lines)
    return lines.getvalue().splitlines()


def _proposed_rewrite(ctx: WriteContext, keyspace: str, table: str, call: Any,
                      out: io.StringIO) -> dict[str, Any] | None:
    """propose_edit's COMPRESSION REWRITE of a column to a target chain (see propose_call), previewed
    by the rewrite feature's service (rewrite.run.rewrite_call) with its arguments: never confirmed."""
    from cqlsh_ext.cql.spelling import spell
    from cqlsh_ext.edit.parse import spell_literal
    from cqlsh_ext.features import declared
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.features.calling import request_of
    from cqlsh_ext.features.feature import FeatureCall

    given = call.arguments
    column, target, where = given.get("path"), given.get("target"), given.get("where")
    if not isinstance(column, str) or not column.strip() or not isinstance(target, str) or not target.strip():
        raise Invalid("a rewrite takes path (the column: data) and target (the codecs: 'zstd')")
    if "value" in given or given.get("remove"):
        raise Invalid("target rewrites a column's values whole: no value or remove with it")
    where = where.strip() if isinstance(where, str) and where.strip() else None
    filtering = given.get("allow_filtering", False)
    column = f"{spell(keyspace)}.{spell(table)}.{column.strip()}"
    statement = f"COMPRESSION REWRITE {column} AS {spell_literal(target.strip())}"
    statement += (f" WHERE {where}" if where else "") + (" ALLOW FILTERING" if filtering else "")
    _bounded(call, statement)
    rewrite = declared(plugins=False)["rewrite"]
    asked = request_of(rewrite, FeatureCall({"column": column, "spec": target.strip(), "where": where,
                                             "allow_filtering": filtering}))
    if rewrite.service is None:
        raise QueryError("rewrite declares no service")
    figures = rewrite.service(ctx, asked)
    if figures is None:
        return None
    return {"statement": statement, "to_write": statement + " CONFIRM", "rows_found": figures["found"],
            "would_change": figures["to_rewrite"], "already_as_asked": figures["already"],
            "refused": figures["refused"], "bytes_before": figures["bytes_before"],
            "bytes_after": figures["bytes_after"], "sampled": figures["sampled"],
            "preview": out.getvalue().splitlines()}
