"""The tools' answers, rendered from the typed answers of the one reading (cqlsh_ext.reading):
nothing the shell prints is read back.

- rows (`query`, `list_keyspaces`, `list_tables`): each row spelt as `--output-format json` spells
  it (render.json_lines), in an object that says how many, the columns and their types, whether
  the answer was cut (the row limit, the byte cap: measured on the JSON sent), the reading's notes
  as data (`reading`) and as the shell says them (`notes`: a payload query's closing line);
- INSPECT's values: each value's report as its JSON;
- reports (DESCRIBE PAYLOAD, COMPRESSION STATS and SETTINGS): the report's figures;
- an error: the one line the reading gave (reading.context.ReadContext.error), or the gate's refusal.

A call stopped (cancelled, the time limit) keeps what was read: the rows or groups, the report's
figures so far, marked stopped (`ToolAnswer.stopped`), with how far it got.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cqlsh_ext.reading.typed import ReportAnswer, TypedAnswer
    from cqlsh_ext.render.json_lines import JsonRows

#: Why an answer was cut short.
LIMIT, BYTES = "limit", "bytes"


@dataclass
class ToolAnswer:
    """A tool's answer: `data` (a JSON object: the structured content; `text`, its text when it was
    spelt already, else its JSON spelt here), or `error` (one line: an error result); `notes`, what
    the statement said besides, shown after it."""

    data: dict[str, Any] | None = None
    error: str | None = None
    text: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def is_error(self) -> bool:
        return self.data is None

    def texts(self) -> list[str]:
        """The answer as text blocks: the JSON (or the error), then each note apart."""
        if self.data is None:
            return [self.error or "no answer", *self.notes]
        return [self.text if self.text is not None else dumps(self.data), *self.notes]

    def stopped(self, why: str) -> ToolAnswer:
        """This answer of a call stopped for `why` (cancelled, the time limit)."""
        if self.data is not None:
            self.data["stopped"] = f"{why}: the answer covers what was read before"
            self.text = None
        else:
            self.error = f"{self.error} (stopped: {why})" if self.error else f"stopped: {why}"
        return self


def failed(line: str, notes: list[str] | None = None) -> ToolAnswer:
    return ToolAnswer(error=line, notes=list(notes or []))


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)


@dataclass
class Taken:
    """Items taken into an answer, up to a count and a byte cap of their JSON as sent."""

    limit: int | None
    max_bytes: int
    items: list[Any] = field(default_factory=list)
    size: int = 0
    cut: str | None = None

    def take(self, item: Any) -> bool:
        """Take `item` (a JSON value); False when it does not fit (the answer is cut there)."""
        if self.limit is not None and len(self.items) >= self.limit:
            self.cut = LIMIT
            return False
        size = len(dumps(item).encode()) + 1
        if self.size + size > self.max_bytes:
            self.cut = BYTES
            return False
        self.items.append(item)
        self.size += size
        return True


def rows(statement: str, answer: TypedAnswer, spelling: JsonRows, limit: int, max_bytes: int,
         said: list[str], errors: list[str], key: str = "rows") -> ToolAnswer:
    """The answer's rows (as `spelling` spells them), at most `limit` and `max_bytes` of their
    JSON; its columns, its notes. The reading is ended where the answer is cut. `said`: the
    context's messages; `errors`: its errors (a reading that fails after some rows keeps them)."""
    from cqlsh_ext.render.closing import closing_text

    taken = Taken(limit, max_bytes)
    notes = answer.notes
    try:
        for batch in answer:
            if not all(taken.take(json.loads(spelling.line(row))) for row in batch):
                break
    finally:
        answer.close()
    if taken.cut is not None and notes is not None:
        notes.output_closed = True
    if notes is not None and notes.error and not errors:
        errors = [notes.error]
    if errors and not taken.items:
        return failed(" ".join(errors), said)
    data: dict[str, Any] = {"statement": statement.strip(), key: taken.items, "count": len(taken.items),
                            "cut": cut_text(taken, key)}
    if errors:
        data["error"] = " ".join(errors)
    closing = closing_text(notes) if notes is not None and notes.answer is not None else None
    data["notes"] = [*said, *([closing] if closing else [])]
    data["columns"] = [c.to_json() for c in answer.columns]
    if notes is not None:
        data["reading"] = notes.to_json()
    return ToolAnswer(data=data)


def cut_text(taken: Taken, key: str) -> str | None:
    if taken.cut == LIMIT:
        return f"at the limit of {taken.limit:,} {key}: more follow (a higher limit, or a narrower WHERE)"
    if taken.cut == BYTES and not taken.items:
        return (f"the first of the {key} alone is more than {taken.max_bytes:,} bytes of JSON, the "
                "answer's cap: select paths inside the values rather than whole values, or fewer columns")
    if taken.cut == BYTES:
        return (f"at {taken.max_bytes:,} bytes, the answer's cap: more {key} follow (fewer columns or "
                "paths, or a narrower WHERE)")
    return None


def document(value: Any) -> Any:
    """A report's figures as the one JSON spelling writes them (common.jsonenc: bytes, times,
    floats that JSON numbers cannot hold), as JSON values: what the shell's JSON report holds."""
    from cqlsh_ext.common import jsonenc

    return json.loads(jsonenc.dumps(value))


def report(answer: ReportAnswer | None, max_bytes: int, said: list[str], errors: list[str]) -> ToolAnswer:
    """A report's figures, whole (a report larger than `max_bytes` of JSON is refused), or the
    error that left none."""
    if answer is None:
        return failed(" ".join(errors) or "the statement reported nothing", said)
    data = document(answer.data())
    notes = [*said, *errors]
    if answer.stopped is not None:
        data["stopped"] = f"{answer.stopped}: the report covers what was read before"
    text = dumps(data)
    if len(text.encode()) > max_bytes:
        return failed(f"the report is larger than {max_bytes:,} bytes, the answer's cap", notes)
    return ToolAnswer(data=data, text=text, notes=notes)
