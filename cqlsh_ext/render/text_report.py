"""A report's answer (reading.typed.ReportAnswer: DESCRIBE PAYLOAD, the COMPRESSION reports) on the
shell's query output: one JSON document (the statement says JSON, or the output format makes
reports JSON), else its text laid out for the screen the output goes to (-e too), its charts in
Unicode's block characters where the output's encoding has them. CAPTURE applies (query_out)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cqlsh_ext.reading.typed import ReportAnswer
    from cqlsh_ext.upstream.protocol import Shell


def report_lines(shell: Shell, answer: ReportAnswer, as_json: bool) -> list[str]:
    """What the shell prints of the report: the JSON document's one line, or the text's lines."""
    if as_json:
        from cqlsh_ext.common import jsonenc

        return [jsonenc.dumps(answer.data())]
    from cqlsh_ext.common.text import draws_blocks

    encoding = getattr(shell.query_out, "encoding", None)
    return answer.text(shell.results.screen_width(), draws_blocks(encoding))


def write_lines(shell: Shell, lines: Iterable[str]) -> None:
    """Lines on the shell's query output (CAPTURE's file while one is open)."""
    out = shell.query_out
    for line in lines:
        out.write(line + "\n")
    out.flush()


def print_report(shell: Shell, answer: ReportAnswer, as_json: bool) -> None:
    write_lines(shell, report_lines(shell, answer, as_json))
