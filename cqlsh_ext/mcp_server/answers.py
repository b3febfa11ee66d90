"""The tools' answers, made of what the shell printed for the statement (capture.py): the shell's
JSON is the answer's JSON.

- rows (`query`, `list_keyspaces`, `list_tables`, INSPECT's values): the shell's JSON Lines, one
  object per row exactly as `--output-format json` prints it, in an object that says how many,
  whether the answer was cut (the row limit, the byte cap) and what the shell said besides (a
  payload query's closing line, warnings);
- reports (DESCRIBE PAYLOAD, COMPRESSION STATS and SETTINGS): the one JSON document the shell
  prints, as it is; what it said besides comes as further text;
- an error: the shell's one line (an error result), or the gate's refusal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from cqlsh_ext.mcp_server.capture import BYTES, LIMIT, Capture


@dataclass
class ToolAnswer:
    """A tool's answer: `data` (a JSON object: the structured content; `text`, its text when the
    shell printed it, else its JSON spelt here), or `error` (one line: an error result); `notes`,
    what the statement said besides, shown after it."""

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


def failed(line: str) -> ToolAnswer:
    return ToolAnswer(error=line)


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)


def rows(statement: str, capture: Capture, key: str = "rows") -> ToolAnswer:
    """The rows the shell printed for `statement` (JSON Lines), with their count and cut."""
    found: list[Any] = []
    said = list(capture.messages)
    for line in capture.lines:
        try:
            found.append(json.loads(line))
        except ValueError:
            said.append(line)  # not a row: something the shell printed as text
    if capture.errors and not found:
        return ToolAnswer(error=" ".join(capture.errors), notes=said)
    data: dict[str, Any] = {"statement": statement.strip(), key: found, "count": len(found),
                            "cut": _cut(capture, key)}
    if capture.errors:
        data["error"] = " ".join(capture.errors)
    data["notes"] = said
    return ToolAnswer(data=data)


def _cut(capture: Capture, key: str) -> str | None:
    if capture.cut == LIMIT:
        return f"at the limit of {capture.limit:,} {key}: more follow (a higher limit, or a narrower WHERE)"
    if capture.cut == BYTES and not capture.lines:
        return (f"the first of the {key} alone is more than {capture.max_bytes:,} bytes of JSON, the "
                "answer's cap: select paths inside the values rather than whole values, or fewer columns")
    if capture.cut == BYTES:
        return (f"at {capture.max_bytes:,} bytes, the answer's cap: more {key} follow (fewer columns or "
                "paths, or a narrower WHERE)")
    return None


def report(capture: Capture) -> ToolAnswer:
    """The one JSON document the shell printed (a report), as it printed it."""
    text = capture.text().strip()
    notes = [*capture.messages, *capture.errors]
    if capture.cut == BYTES:
        return ToolAnswer(error=f"the report is larger than {capture.max_bytes:,} bytes, the answer's cap",
                      notes=notes)
    if not text:
        return ToolAnswer(error=" ".join(capture.errors) or "the statement printed nothing",
                      notes=capture.messages)
    try:
        data = json.loads(text)
    except ValueError:
        return ToolAnswer(error=" ".join([*capture.errors, text.splitlines()[0]]), notes=capture.messages)
    if not isinstance(data, dict):
        return ToolAnswer(error="the report is not a JSON object", notes=notes)
    return ToolAnswer(data=data, text=text, notes=notes)
