"""Doing COMPRESSION REWRITE (docs/rewrite.md), a front end on the writing layer: the statement read
into its request (rewrite.parse), the job made of it (rewrite.job), then the preview
(rewrite.preview) or the paced run (rewrite.execute over writing.ranges, journaled by
writing.journal with the request in its sealed head), or RESUME (rewrite.resume).

The rows are read by token ranges of the ring (the WHERE's partitions as one range when it names
them), with the key columns, the blob, its write time and TTL (writing.cell_reads' plan, the WHERE's
payload conditions evaluated here); each value is re-encoded in the target chain (recode: the
payload kept byte for byte, verified), and written by the one mechanism (writing.cell_writer: at the
cell's write time + 1 with its moment of expiry kept, then read again; or on the condition that
the row holds the bytes read, where timestamps cannot be used). Writes run on threads, as many at
once and as many units a second as the pace allows (writing.pace). Each row is journaled (fsync'd)
before its write; a token range whose rows are all written is journaled as finished, and RESUME
reads the others again (a row rewritten before a kill is then already in the target chain: never
written twice). UNDO (writing.undo) writes the journal's old values back.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.text import message, screen_width
from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.rewrite.job import LABEL
from cqlsh_ext.writing.refused import WriteRefused

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.rewrite.execute import RunFigures
    from cqlsh_ext.rewrite.parse import RewriteAsked
    from cqlsh_ext.rewrite.preview import PreviewFigures
    from cqlsh_ext.writing.requests import RewriteRequest
    from cqlsh_ext.writing.write_context import WriteContext


def run(ctx: WriteContext, statement: Lexed) -> None:
    """COMPRESSION REWRITE ... (the statement as the shell lexed it, once: rewrite.command) read
    into its request and done; refusals said in one line."""
    from cqlsh_ext.rewrite.job import table_meta, table_schema
    from cqlsh_ext.rewrite.parse import parse
    from cqlsh_ext.rewrite.resume import resume
    from cqlsh_ext.writing.requests import ResumeRequest

    try:
        asked = parse(statement, lambda ks, t: table_meta(ctx, ks, t), lambda meta: table_schema(ctx, meta),
                      ctx.keyspace)
        if isinstance(asked, ResumeRequest):
            resume(ctx, asked)
        else:
            rewrite(ctx, asked)
    except (QueryError, WriteRefused) as err:
        ctx.error(message(f"{LABEL}: {err}; nothing was written", screen_width(sys.stderr)))


def rewrite(ctx: WriteContext, asked: RewriteAsked) -> PreviewFigures | RunFigures | None:
    """The preview, or with CONFIRM the run over every token range, journaled; its figures (None:
    the preview's reading failed, said through ctx.error)."""
    from cqlsh_ext.rewrite.execute import execute
    from cqlsh_ext.rewrite.job import job_for
    from cqlsh_ext.rewrite.preview import preview
    from cqlsh_ext.writing.journal import open_journal

    request = asked.request
    job = job_for(ctx, request, asked.where)
    if not request.confirm:
        previewed = preview(ctx, job, request.every_row)
        if previewed is None or not previewed.accepted:
            return previewed
        job = replace(job, request=replace(request, confirm=True))  # answered yes: as with CONFIRM
    work = job.work
    journal = open_journal(ctx, "rewrite", work.keyspace, work.table, work.blob, work.mechanism, request,
                           job.head(), LABEL)
    return execute(ctx, job, journal, list(range(work.range_count)))


# --------------------------------------------------------------- called with a front end's arguments

def rewrite_call(ctx: WriteContext, call: Any) -> dict[str, Any] | None:
    """COMPRESSION REWRITE called with a front end's arguments (a features.feature.FeatureCall: the
    API's db.rewrite), checked against its declaration: the column looked up (a system keyspace
    refused before its columns are), the request made and done as the statement's is (`rewrite`); its
    figures as the fields its declared answer names (`answer_of`). None: the reading failed, said
    through ctx.error."""
    from cqlsh_ext.rewrite.job import table_meta, table_schema
    from cqlsh_ext.rewrite.parse import RewriteAsked, blob_of, where_of
    from cqlsh_ext.writing.blob_target import refuse_system
    from cqlsh_ext.writing.requests import RewriteRequest

    given = call.arguments

    def tables(keyspace: str | None, table: str) -> Any:
        meta = table_meta(ctx, keyspace, table)
        if meta is not None:  # refused before its columns are looked at
            refuse_system(meta.keyspace_name)
        return meta

    keyspace, meta, blob = blob_of(given["column"], tables, lambda m: table_schema(ctx, m), ctx.keyspace)
    request = RewriteRequest(keyspace, meta.name, blob, given["spec"], given.get("where"),
                             given.get("allow_filtering", False), given.get("pace"),
                             given.get("every_row", False), given.get("confirm", False))
    figures = rewrite(ctx, RewriteAsked(request, where_of(request, table_schema(ctx, meta))))
    return None if figures is None else answer_of(request, figures)


def resume_call(ctx: WriteContext, call: Any) -> dict[str, Any] | None:
    """COMPRESSION REWRITE RESUME called with a front end's arguments (the API's db.resume): the
    journal's rewrite gone on with (rewrite.resume), its figures as `answer_of`'s with what the journal
    held (its token ranges, those finished, the rows rewritten before); a journal with nothing left
    answers that nothing was read nor written. None: the reading failed, said through ctx.error."""
    from cqlsh_ext.rewrite.resume import resume
    from cqlsh_ext.writing.requests import ResumeRequest

    request = ResumeRequest(call.arguments["journal"], call.arguments.get("confirm", False))
    found, figures = resume(ctx, request)
    held: dict[str, Any] = {"resumed": request, "ranges": found.job.work.range_count,
                            "ranges_finished": len(found.done), "rows_before": found.rows_before}
    if figures is not None:
        return {**answer_of(found.job.request, figures), **held}
    if found.todo:
        return None
    nothing = 0 if request.confirm else None  # every token range finished already
    return {"request": found.job.request, "confirmed": request.confirm, "rows_read": 0, "found": 0,
            "to_rewrite": 0, "already": 0, "refused": {}, "bytes_before": 0, "bytes_after": 0,
            "write_units": 0, "written": nothing, "left_alone": nothing, "complete": True, **held}


def answer_of(request: RewriteRequest, figures: PreviewFigures | RunFigures) -> dict[str, Any]:
    """A rewrite's answer as its declaration names its fields (features.output_schemas.REWRITE_RESULT:
    the API's RewriteResult), from a preview's or a run's figures."""
    from cqlsh_ext.rewrite.execute import RunFigures

    counts = figures.counts
    common: dict[str, Any] = {"request": request, "rows_read": counts.rows, "found": counts.found,
                              "to_rewrite": counts.change, "already": counts.already,
                              "refused": dict(counts.refused)}
    if not isinstance(figures, RunFigures):
        return {"confirmed": False, "bytes_before": counts.before, "bytes_after": counts.after,
                "write_units": counts.rewrite_wcu, "sampled": figures.sampled, **common}
    written = figures.written
    return {"confirmed": True, "bytes_before": written.before, "bytes_after": written.after,
            "write_units": written.units, "written": written.written,
            "left_alone": written.changed + written.expired, "journal": figures.journal,
            "complete": figures.complete, "stopped": figures.stop or None, **common}
