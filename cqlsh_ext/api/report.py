"""A report's answer in a program (DESCRIBE PAYLOAD, COMPRESSION STATS, ADVISE, SETTINGS): its
figures as data, its text as the shell prints it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.reading.typed import ReportAnswer

__all__ = ["ReportResult"]


class ReportResult:
    """`to_dict()`: the figures (what `... JSON` prints in the shell); `text(width)`: the report as
    the shell lays it out; `stopped`: None, or why it covers only the rows read (interrupted,
    failed); `messages`: what the reading said besides (a sample's reason, say)."""

    def __init__(self, answer: ReportAnswer, messages: list[str]) -> None:
        self._answer = answer
        self.title = answer.title
        self.stopped = answer.stopped
        self.messages = messages
        self._data: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        if self._data is None:
            self._data = self._answer.data()
        return self._data

    def text(self, width: int = 100) -> str:
        return "\n".join(self._answer.text(width, False))

    def json_schema(self) -> dict[str, Any]:
        """DESCRIBE PAYLOAD's places as a JSON Schema (as `cqlsh-ext mcp` gives it)."""
        from cqlsh_ext.describe.json_schema import schema_answer

        return schema_answer(self.to_dict())

    def __repr__(self) -> str:
        return f"<ReportResult {self.title}{f' ({self.stopped})' if self.stopped else ''}>"
