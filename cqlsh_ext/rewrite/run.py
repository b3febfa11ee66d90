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
from typing import TYPE_CHECKING

from cqlsh_ext.common.text import message, screen_width
from cqlsh_ext.cql.errors import QueryError
from cqlsh_ext.rewrite.job import LABEL
from cqlsh_ext.writing.refused import WriteRefused

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.rewrite.execute import RunFigures
    from cqlsh_ext.rewrite.parse import RewriteAsked
    from cqlsh_ext.rewrite.preview import PreviewFigures
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
