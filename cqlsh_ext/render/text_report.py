"""A report's answer (reading.typed.ReportAnswer: DESCRIBE PAYLOAD, the COMPRESSION reports) on the
shell's query output: one JSON document (the statement says JSON, or the output format makes
reports JSON), else its text laid out for the screen the output goes to (-e too), its charts in
Unicode's block characters where the output's encoding has them. CAPTURE applies (query_out)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cqlsh_ext.reading.typed import ReportAnswer
    from cqlsh_ext.upstream.protocol import Out


def report_lines(answer: ReportAnswer, as_json: bool, out: Out, width: int) -> list[str]:
    """What is printed of the report on `out`: the JSON document's one line, or the text's lines
    laid out for `width` columns (0: the natural width), block characters where `out`'s encoding
    has them."""
    if as_json:
        from cqlsh_ext.common import jsonenc

        return [jsonenc.dumps(answer.data())]
    from cqlsh_ext.common.text import draws_blocks

    return answer.text(width, draws_blocks(getattr(out, "encoding", None)))


def write_lines(out: Out, lines: Iterable[str]) -> None:
    """Lines on `out` (the shell's query output: CAPTURE's file while one is open), flushed."""
    for line in lines:
        out.write(line + "\n")
    out.flush()


def print_report(answer: ReportAnswer, as_json: bool, out: Out, width: int) -> None:
    write_lines(out, report_lines(answer, as_json, out, width))
