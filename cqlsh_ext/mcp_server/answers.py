"""The tools' answers, rendered from the typed answers of the one reading (cqlsh_ext.reading):
nothing the shell prints is read back.

- rows (`query`, `list_keyspaces`, `list_tables`; INSPECT's values): each row spelt as
  `--output-format json` spells it (render.json_lines), screened (the policy's redaction, `count`
  spelt one way: guard.py's Screen) before anything measures or sends it, its long values cut
  inside it (the cut said). A batch's rows are laid out a column at a time as their compact JSON,
  the core writing what it read with the first cut looked at there and the screen's rule for each
  column applied (JsonRows.answer_rows, `_laid_out`): no JSON value is made of such a row
  (SpeltRow); a row with a value to cut, or one the core spells otherwise than json.dumps, is
  made JSON values, screened and cut as a whole. In an object that says how many, the columns
  and their types, whether the answer was cut and where (`cut`, and a `cursor` that continues it
  where the reading can go on from its rows), the reading's notes as data (`reading`) and as the
  shell says them (`notes`);
- reports (DESCRIBE PAYLOAD, COMPRESSION STATS, SETTINGS and ADVISE): the report's figures,
  screened, long values cut, its longest lists cut where the whole does not fit;
- an error: the one line the reading gave (reading.context.ReadContext.error), or the gate's refusal.

Every answer keeps to its cap (`max_bytes`, 32 KiB by default), measured on the message the client
receives (sizing.message_size: the text block and the structured content both count): rows are
taken while they fit, each spelt once as compact JSON when taken (the text block joins those
bytes, measured as they are: ToolAnswer.body), then `ToolAnswer.fit` measures the answer exactly
as sent and gives back rows (or cuts a report's lists) until it fits. The statement is echoed as
a short prefix only.

A call stopped (cancelled, the time limit) keeps what was read: the rows or groups, the report's
figures so far, marked `stopped` with how far it got (`ToolAnswer.stopped`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common import jsonenc
from cqlsh_ext.common.long_int import PYTHON_DIGITS
from cqlsh_ext.mcp_server import sizing

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.mcp_server.cursor import Cursors
    from cqlsh_ext.reading.typed import AnswerBatch, Position, ReportAnswer, TypedAnswer
    from cqlsh_ext.render.json_lines import JsonRows

#: Why an answer was cut short.
LIMIT, BYTES = "limit", "bytes"
#: The cap (CAPS) each (why, the items' key) names: INSPECT's values are cut at INSPECT_VALUES.
_CAP_OF = {(LIMIT, "rows"): "limit", (LIMIT, "values"): "inspect_values", (BYTES, "rows"): "max_bytes",
           (BYTES, "values"): "max_bytes"}
#: How hard the values of a row that does not fit whole are cut, when it is the first of its
#: answer: (characters of a string, entries of an array or object) at most, tried in order.
#: A string stays whole up to 100 characters (a key, an id, a name).
CUT_LEVELS = ((sizing.DEFAULT_VALUE_CHARS, sizing.DEFAULT_VALUE_ITEMS), (500, 100), (100, 20))
#: ... and then, for a first row that still does not fit (a row larger than the answer's cap even so:
#: many columns, a document of many long lists), down to its values' first characters and entries,
#: then to none of them, rather than answer no row: its columns are all there, each value shown cut.
FIRST_ROW_LEVELS = (*CUT_LEVELS, (20, 5), (0, 0))
#: The cuts an answer names at most (then how many more).
CUTS_SAID = 20
#: An error line at most (the statement is never echoed whole, nor a server's long message).
ERROR_CHARS = 1000
#: Bytes kept free for what an answer of rows says after its rows (notes, reading, cut, cursor)
#: while they are taken, at most (an eighth of a small cap); `fit` measures exactly after.
TAIL_BYTES = 2048


@dataclass
class Screen:
    """What is done to each row, INSPECT value and report before anything measures or sends it
    (guard.py sets it from the policy): `row` returns the row as it may leave, or None for a row
    left out (a table the policy hides from a list)."""

    row: Callable[[dict[str, Any]], dict[str, Any] | None] = lambda row: row
    value: Callable[[Any], Any] = lambda value: value
    report: Callable[[dict[str, Any]], dict[str, Any]] = lambda report: report
    #: Rows `row` left out, by the call's reading.
    hidden: int = 0
    #: `row` may leave rows out (tables the policy hides): the reading's own counts of rows, and
    #: its progress, are not told (they would count them).
    hides: bool = False
    #: Whether a table or view of a keyspace is one the policy hides (describe_table leaves out a
    #: view of its table that is).
    hidden_table: Callable[[str, str], bool] = lambda keyspace, name: False
    #: The statement's own LIMIT, applied to the rows `row` lets through (the server was sent the
    #: statement without it: it would count the rows left out); None: the server applies any.
    limit: int | None = None
    #: Why an answer of rows cut short cannot be continued, where `row` keeps counts a cursor does
    #: not carry (a PER PARTITION LIMIT applied after it); None: it keeps none.
    why_not: str | None = None
    #: `row` a column at a time, for rows the core lays out (render.json_lines.JsonRows.answer_rows):
    #: each of an answer's columns (by its result names) None (its values as they are), a JSON
    #: text (every value answered so: redacted whole) or a function of a value's JSON value
    #: (redacted inside); None: no such rule (`row` reads rows whole, or leaves some out).
    columns: Callable[[Sequence[str]], list[str | Callable[[Any], Any] | None]] | None = (
        lambda names: [None] * len(names))


class SpeltRow:
    """A row taken as its compact JSON (the core laid it out, its values within the answer's
    first cut: JsonRows.answer_rows), never made a JSON value but where one is read (`value`);
    `escapes`: its quotes and backslashes, as the core counted them."""

    __slots__ = ("text", "escapes")

    def __init__(self, text: bytes, escapes: int) -> None:
        self.text = text
        self.escapes = escapes

    def value(self) -> Any:
        return json.loads(self.text)


@dataclass
class ToolAnswer:
    """A tool's answer: `data` (a JSON object: the structured content; its text is the same JSON),
    or `error` (one line: an error result); `notes`, what the statement said besides, as further
    text blocks. `cap`: the bytes of the message that carries it at most; `fitting`: how it is
    made to fit (rows given back, a report's lists cut), where it can be."""

    data: dict[str, Any] | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    cap: int = sizing.DEFAULT_ANSWER_BYTES
    fitting: Callable[[ToolAnswer], None] | None = None
    #: Resource links sent after the text blocks ({uri, name, mimeType, size, description}: an
    #: export's file).
    links: list[dict[str, Any]] = field(default_factory=list)
    #: An answer of rows' rows as spelt when taken (_RowsFitting.settle): the key, the list that
    #: data holds under it, each row's compact JSON, their quotes and backslashes (counted once,
    #: by their cost). The body joins those bytes rather than encode the rows again; a list no
    #: longer the one data holds is encoded as any value.
    spelt: tuple[str, list[Any], list[bytes], int] | None = None

    @property
    def is_error(self) -> bool:
        return self.data is None

    def body(self) -> bytes | None:
        """The structured content's compact JSON (the first text block's UTF-8), its rows' bytes
        as spelt; None for an error."""
        return self._body()[0]

    def _body(self) -> tuple[bytes | None, int | None]:
        """body(), and its quotes and backslashes where they are known without counting them
        (sizing.text_wire_size's `escapes`; None: not known)."""
        data = self.data
        if data is None:
            return None, None
        spelt = self.spelt
        if spelt is not None:
            key, items, texts, escapes = spelt
            if data.get(key) is items and len(items) == len(texts):
                return sizing.joined(data, key, texts, escapes)
            if any(isinstance(item, SpeltRow) for item in data.get(key) or ()):
                data = {**data, key: [i.value() if isinstance(i, SpeltRow) else i for i in data[key]]}
        return sizing.compact(data), None

    def json_data(self, body: bytes) -> Any:
        """The structured content as JSON values, as `body` (body()) spells it
        (sizing.for_the_sdk): rows taken as their text (SpeltRow) read back from it."""
        spelt = self.spelt
        if spelt is not None and any(isinstance(item, SpeltRow) for item in spelt[1]):
            return json.loads(body)
        return sizing.for_the_sdk(self.data, body)

    def texts(self) -> list[str]:
        """The answer as text blocks: one, framed (frame()), or the error and each note apart."""
        return self.texts_of(self.body())

    def texts_of(self, body: bytes | None) -> list[str]:
        """texts(), the structured content's compact JSON (`body`, as body() made it) joined already."""
        if body is None:
            return [self.error or "no answer", *self.notes]
        head, tail = self.frame()
        return [head + body.decode("utf-8", "surrogatepass") + tail]

    def frame(self) -> tuple[str, str]:
        """What the text block holds before and after the answer's JSON (one line): the summary's
        line first, then the notes a line each, and the summary's line again last, so that a client
        that keeps an output's head, or its head and its tail, keeps what the answer is."""
        line = summary_line(self.data)
        return line + "\n", "".join(f"\n{note}" for note in self.notes) + "\n" + line

    def size(self) -> int:
        """The bytes of the message line that carries it (sizing.message_size), its links too."""
        links = sum(len(sizing.compact({"type": "resource_link", **link})) + 1 for link in self.links)
        body, escapes = self._body()
        if body is None:
            return sizing.message_size(self.texts_of(None), None) + links
        # The text block frames the structured content's compact JSON: joined once, measured as it
        # is (sizing.framed_wire_size), neither decoded nor encoded again, its rows' escapes as
        # their costs counted them.
        return (sizing.MESSAGE_BYTES + sizing.BLOCK_BYTES
                + sizing.framed_wire_size(body, *self.frame(), escapes) + len(body) + links)

    def stopped(self, why: str, seen: dict[str, Any] | None = None) -> ToolAnswer:
        """This answer of a call stopped for `why` (cancelled, the time limit): marked `stopped`,
        with how far it got (rows read, token ranges read; `seen`: the reading's last progress)."""
        if self.data is None:
            self.error = f"{self.error} (stopped: {why})" if self.error else f"stopped: {why}"
            return self
        self.data["stopped"] = how_far(why, self.data, seen)
        return self

    def fit(self) -> ToolAnswer:
        """Made to keep to its cap, measured as sent: rows given back, a report's lists cut; an
        answer that cannot be made to fit is an error that says so. Every answer then says whether a
        cap cut it, and which (`truncated`: mark_truncated)."""
        if self.data is None:
            if self.error is not None and len(self.error) > ERROR_CHARS:
                self.error = self.error[:ERROR_CHARS] + "…"
            self.notes = [n if len(n) <= ERROR_CHARS else n[:ERROR_CHARS] + "…" for n in self.notes]
            return self
        mark_truncated(self.data)
        if self.size() <= self.cap:
            return self
        if self.fitting is not None:
            self.fitting(self)
            if self.data is not None:
                mark_truncated(self.data)
        if self.data is not None and self.size() > self.cap:
            self.data, self.fitting, self.notes = None, None, []
            self.error = (f"the answer is larger than {self.cap:,} bytes, its cap, even cut: ask for less "
                          "(fewer columns or paths, a narrower WHERE), or a larger max_bytes")
        return self


def summary(data: dict[str, Any] | None) -> dict[str, Any]:
    """What an answer is, in four fields: the rows (or values) it holds (None: a report), whether it
    is exact (nothing cut, the reading's figures exact), what cut it (`truncated`, as the answer
    says it) and the cursor that goes on (None: none)."""
    if data is None:
        return {"rows": None, "exact": False, "truncated": False, "cursor": None}
    count = data.get("count")
    truncated = data.get("truncated", False)
    reading = data.get("reading")
    exact = not truncated and not data.get("stopped") and not data.get("error") \
        and (reading.get("exact", True) is True if isinstance(reading, dict) else True)
    return {"rows": count if isinstance(count, int) else None, "exact": exact, "truncated": truncated,
            "cursor": data.get("cursor")}


def summary_line(data: dict[str, Any] | None) -> str:
    """summary() as the text block's first and last line: {"summary": {...}}, compact."""
    return sizing.compact({"summary": summary(data)}).decode("utf-8", "surrogatepass")


#: The caps an answer may be cut by, as `truncated` names them: the answer's bytes as sent
#: (max_bytes), the rows asked for (limit), long values cut inside (value_size), the values
#: INSPECT answers (inspect_values), the call's time limit or its cancellation (stopped).
CAPS = ("max_bytes", "limit", "value_size", "inspect_values", "stopped")


def mark_truncated(data: dict[str, Any]) -> None:
    """`truncated` on an answer's data, always: false, or the CAPS that cut it, from what its cuts
    say: `cut` (an answer of rows' text, a report's list of lists cut), `values_cut`, `stopped`,
    and the cap its rows' fitting named (`truncated` already a list). The cursor that goes on, where
    there is one, is `cursor`."""
    found = data.get("truncated")
    caps = [c for c in found if c in CAPS] if isinstance(found, list) else []
    cut = data.get("cut")
    if isinstance(cut, list) and cut:
        caps.append("max_bytes")
    if data.get("values_cut"):
        caps.append("value_size")
    if data.get("stopped"):
        caps.append("stopped")
    data["truncated"] = [c for c in CAPS if c in caps] or False


def failed(line: str, notes: list[str] | None = None) -> ToolAnswer:
    return ToolAnswer(error=line, notes=list(notes or []))


def how_far(why: str, data: dict[str, Any], seen: dict[str, Any] | None) -> dict[str, Any]:
    """`stopped`: why, and how far the reading got: the rows it read and the token ranges it read
    (its notes, a report's figures, else its last progress), the share done when it was known."""
    out: dict[str, Any] = {"why": why}
    found = data.get("reading")
    reading: dict[str, Any] = found if isinstance(found, dict) else {}
    rows = reading.get("rows_read")
    if not isinstance(rows, int):
        rows = next((data[k] for k in ("rows_read", "rows") if isinstance(data.get(k), int)), None)
    if not isinstance(rows, int) and seen:
        rows = seen.get("rows")
    if isinstance(rows, int):
        out["rows_read"] = rows
    if isinstance(reading.get("ranges"), int):
        out["ranges_read"], out["ranges"] = reading.get("ranges_read"), reading["ranges"]
    done = seen.get("done") if seen else None
    if isinstance(done, (int, float)):
        out["share_done"] = round(min(max(float(done), 0.0), 1.0), 4)
    out["says"] = "the answer covers what was read before"
    return out


# ------------------------------------------------------------------------------------- rows


@dataclass
class Continuation:
    """What an answer of rows needs to name where it was cut: the server's cursors and the
    statement (a cursor is bound to it); `why_not`, why its reading cannot be gone on with (None:
    it can); a continued call's `skip` (rows of its first page an earlier answer had) and
    `before` (rows the earlier answers had)."""

    cursors: Cursors | None
    #: The statement as given (lexed once: a cursor is bound to its tokens).
    statement: Lexed | str
    why_not: str | None = None
    skip: int = 0
    before: int = 0
    #: The client the answer goes to: its cursor is for it alone.
    owner: bytes = b""

    def cursor(self, at: Position | None, answered: int) -> str | None:
        """The cursor of the row at `at` (None: no cursor), `answered` rows of this answer before it."""
        from cqlsh_ext.mcp_server.cursor import CursorError

        if self.cursors is None or self.why_not is not None or at is None:
            return None
        state, index = at
        try:
            extra = {"skip": index, "answered": self.before + answered}
            return self.cursors.issue(self.statement, state, extra, owner=self.owner)
        except CursorError:
            return None


@dataclass
class _Taken:
    """The rows taken into an answer: each one's JSON value and its compact JSON as spelt once,
    what it costs as sent, its Position (None: the reading gives none), the cuts made inside it;
    and the first row not taken."""

    key: str
    rows: list[Any] = field(default_factory=list)
    texts: list[bytes] = field(default_factory=list)
    costs: list[int] = field(default_factory=list)
    at: list[Any] = field(default_factory=list)
    cuts: list[list[str]] = field(default_factory=list)
    #: Why it was cut (LIMIT, BYTES), and the Position of the first row left out.
    cut: str | None = None
    next_at: Any = None
    #: The first row as it came, where it is, and its cost as taken: cut harder if the answer
    #: would otherwise lose it.
    first: tuple[Any, str, int] | None = None


def _cut(item: Any, chars: int, items: int | None, where: str) -> tuple[Any, list[str]]:
    """An item's values cut (a row's columns are its own: never left out, only their values cut)."""
    if not isinstance(item, dict):
        return sizing.cut_value(item, chars, items, where)
    out: dict[str, Any] = {}
    cuts: list[str] = []
    for key, value in item.items():
        out[key], said = sizing.cut_value(value, chars, items, f"{where}.{key}")
        cuts += said
    return out, cuts


def _spelt_cut(item: Any, chars: int, items: int | None, where: str) -> tuple[Any, list[str], int, bytes]:
    """`item` cut at one level (_cut), with its cost as a row and its compact JSON, spelt here once:
    the answer joins it."""
    cut, cuts = _cut(item, chars, items, where)
    made = sizing.spelt(cut, where)
    if made.replaced:
        many = "s" if made.replaced > 1 else ""
        cuts.append(f"{where}: {made.replaced:,} lone surrogate{many} (no Unicode character, which the "
                    "protocol's JSON cannot carry) sent as U+FFFD")
    # Never a string in a number's place unsaid: the client's parser refuses the whole message
    # holding such a number (the SDK's, pydantic-core's: "number out of range").
    cuts += [f"{place}: an integer of {digits:,} digits sent as a string of them (the MCP client's JSON "
             f"parser refuses a number of more than {PYTHON_DIGITS:,} digits)"
             for place, digits in made.long_integers]
    return cut, cuts, sizing.row_cost(made.body), made.body


def _cut_row(item: Any, where: str, room: int, first: bool) -> tuple[Any, list[str], int, bytes] | None:
    """`item` with its long values cut, its cuts, its cost and its compact JSON (_spelt_cut), when
    it fits `room`; a first row that does not fit is cut harder (FIRST_ROW_LEVELS) until it does. None:
    it does not fit."""
    levels = FIRST_ROW_LEVELS if first else CUT_LEVELS[:1]
    for chars, items in levels:
        made = _spelt_cut(item, chars, items, where)
        if made[2] <= room:
            return made
    return None


class Taker:
    """Items (rows, INSPECT's values) taken into an answer while `limit` allows and they fit its
    `cap` as sent (the answer without them, `head`, measured first), each one's long values cut
    (CUT_LEVELS; FIRST_ROW_LEVELS for a first item that does not fit whole); `finish` makes the answer."""

    def __init__(self, key: str, limit: int | None, cap: int, head: dict[str, Any],
                 why_not: str | None = None) -> None:
        self.key, self.limit, self.cap = key, limit, cap
        #: Why its items have no cursor (an answer not of rows: INSPECT's values).
        self.why_not = why_not
        self.taken = _Taken(key)
        self.head = {**head, key: [], "count": 0, "cut": None}
        self.room = (cap - sizing.message_size([sizing.compact(self.head).decode()], self.head)
                     - min(TAIL_BYTES, cap // 8))

    @property
    def items(self) -> list[Any]:
        return self.taken.rows

    def take(self, item: Any, at: Position | None = None) -> bool:
        """Take `item` (a JSON value; `at`: its Position); False when it is not taken (the answer
        is cut there)."""
        taken = self.taken
        if self.limit is not None and len(taken.rows) >= self.limit:
            taken.cut, taken.next_at = LIMIT, at
            return False
        where = f"{self.key}[{len(taken.rows)}]"
        if isinstance(item, SpeltRow):  # within the first cut already: as it is, or a first row cut harder
            cost = sizing.row_cost(item.text, item.escapes)
            made = ((item, [], cost, item.text) if cost <= self.room
                    else _cut_row(item.value(), where, self.room, True) if not taken.rows else None)
        else:
            made = _cut_row(item, where, self.room, not taken.rows)
        if made is None:
            taken.cut, taken.next_at = BYTES, at
            return False
        if not taken.rows:
            taken.first = (item, where, made[2])
        item, cuts, cost, text = made
        taken.rows.append(item)
        taken.texts.append(text)
        taken.costs.append(cost)
        taken.at.append(at)
        taken.cuts.append(cuts)
        self.room -= cost
        return True

    def finish(self, data: dict[str, Any], continuation: Continuation | None = None,
               resume: Position | None = None, notes: list[str] | None = None) -> ToolAnswer:
        """The answer: `data` (what it says besides its items) with the items; `resume`: where a
        stopped reading goes on from, when nothing was cut."""
        fitting = _RowsFitting(self.taken, continuation or Continuation(None, "", self.why_not), resume)
        out = ToolAnswer(data={**self.head, **data}, notes=list(notes or []), cap=self.cap, fitting=fitting)
        fitting.settle(out, len(self.taken.rows))
        return out


def rows(statement: str, answer: TypedAnswer, spelling: JsonRows, limit: int, cap: int,
         said: list[str], errors: list[str], screen: Screen, continuation: Continuation,
         key: str = "rows") -> ToolAnswer:
    """The answer's rows (as `spelling` spells them, then `screen`), at most `limit` and what fits
    `cap` as sent; its columns, its notes, where it was cut (`cursor`). The reading is ended where
    the answer is cut. `said`: the context's messages; `errors`: its errors (a reading that fails
    after some rows keeps them). An answer that names a column twice is refused, its reading ended:
    a row object holds one value a name."""
    from cqlsh_ext.payload.columns import name_said_twice
    from cqlsh_ext.render.closing import closing_text, path_meant

    twice = name_said_twice(answer.columns)
    if twice is not None:
        answer.close()
        return failed(twice, said)
    taker = Taker(key, limit, cap, {"statement": sizing.prefix(statement),
                                    "columns": [c.to_json() for c in answer.columns]})
    notes = answer.notes
    skip = continuation.skip
    if screen.why_not is not None and continuation.why_not is None:
        continuation.why_not = screen.why_not
    # The statement's own LIMIT, less the rows earlier answers had: the answer ends there, not cut.
    own = None if screen.limit is None else max(0, screen.limit - continuation.before)
    shown = 0  # rows the screen let through
    laid = _laid_out(spelling, screen)
    try:
        for batch in answer:
            positions = batch.positions
            texts, escapes = laid(batch) if laid is not None else (None, None)
            rows: list[Any] | None = None
            for i in range(len(batch)):
                if skip:
                    skip -= 1
                    continue
                if own is not None and shown >= own:
                    break
                text = texts[i] if texts is not None else None
                if text is not None and escapes is not None:
                    item: Any = SpeltRow(text, escapes[i])
                else:
                    rows = rows if rows is not None else batch.rows
                    item = screen.row(spelling.values(rows[i]))
                if item is None:
                    screen.hidden += 1
                    continue
                shown += 1
                if not taker.take(item, positions[i] if positions is not None else None):
                    break
            if taker.taken.cut is not None or (own is not None and shown >= own):
                break
    finally:
        answer.close()
    if taker.taken.cut is not None and notes is not None:
        notes.output_closed = True
        notes.closed_by = (f"at the call's limit of {limit:,} {key}" if taker.taken.cut == LIMIT
                           else f"at the answer's cap of {cap:,} bytes")
    if notes is not None and notes.error and not errors:
        errors = [notes.error]
    if errors and not taker.items:
        return failed(" ".join(errors), said)
    data: dict[str, Any] = {}
    if continuation.before or continuation.skip:
        data["rows_before"] = continuation.before
    if errors:
        data["error"] = " ".join(errors)
    closing = closing_text(notes) if notes is not None and notes.answer is not None else None
    data["notes"] = [*said, *([closing] if closing else [])]
    if notes is not None:
        reading = notes.to_json()
        # a typo's "did you mean", in the words of the shell's JSON warning (render.closing)
        for entry in reading.get("paths_no_value_had") or []:
            entry["hint"] = path_meant(notes, entry["path"], entry["nearest_keys"])[1]
        if screen.hides:  # the rows read would count those left out: those it let through instead
            reading["rows_read"] = reading["matched"] = shown
        data["reading"] = reading
    resume = notes.resume if notes is not None and taker.taken.cut is None else None
    return taker.finish(data, continuation, resume)


def _laid_out(spelling: JsonRows,
              screen: Screen) -> Callable[[AnswerBatch], tuple[list[bytes | None], list[int]]] | None:
    """How a batch's rows are spelt a column at a time, the core laying out what it read
    (JsonRows.answer_rows), `screen`'s columns rule applied there: each row's compact JSON, or
    None for a row made a JSON value and screened whole (one with a value the answer cuts, or
    spelt otherwise: a lone surrogate, an integer past 4,300 digits, a float JSON cannot hold:
    the core says so by a NUL in its line); and each row's quotes and backslashes.
    None: no batch is (a screen with no columns rule)."""
    names = spelling.names
    if screen.columns is None:
        return None
    screens = screen.columns(names)
    cut = CUT_LEVELS[0]

    def laid(batch: AnswerBatch) -> tuple[list[bytes | None], list[int]]:
        return spelling.answer_rows(batch.columns(len(names)), cut, partial(_answer_text, cut), screens)

    return laid


def _answer_text(cut: tuple[int, int], value: Any) -> str:
    """A JSON value's compact JSON as a row spells it (sizing.spelt), or a NUL where the row is
    spelt otherwise (a value `cut` changes, a float JSON cannot hold, a lone surrogate, an integer
    past 4,300 digits)."""
    if not sizing.within(value, *cut):
        return "\0"
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        return "\0"
    if len(text) > PYTHON_DIGITS and jsonenc.has_long_digits(text.encode("utf-8", "surrogatepass")):
        return "\0"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "\0"
    return text


class _RowsFitting:
    """An answer of rows made to fit: `settle(answer, n)` keeps its first `n` rows taken and says
    so (count, cut, cursor, the values cut); calling it gives rows back until the answer fits."""

    def __init__(self, taken: _Taken, continuation: Continuation, resume: Position | None) -> None:
        self.taken = taken
        self.continuation = continuation
        #: Where a stopped reading goes on from, when nothing was cut.
        self.resume = resume

    def settle(self, answer: ToolAnswer, kept: int) -> None:
        taken, data = self.taken, answer.data
        assert data is not None
        key = taken.key
        data[key] = taken.rows[:kept]
        texts = taken.texts[:kept]
        answer.spelt = (key, data[key], texts, sum(map(sizing.row_escapes, texts, taken.costs[:kept])))
        data["count"] = kept
        cut, at = taken.cut, taken.next_at
        if kept < len(taken.rows):
            cut, at = BYTES, taken.at[kept]
        # A first row that fits no answer even with every value cut (its columns' names alone fill
        # the cap) is left out, said, and the cursor goes on after it: never the same cursor again.
        past = not kept and cut == BYTES and at is not None
        if past:
            at = (at[0], at[1] + 1)
        cursor = self.continuation.cursor(at if cut is not None else self.resume, kept + past)
        if cursor is not None:
            data["cursor"] = cursor
        else:
            data.pop("cursor", None)
        data["cut"] = _cut_text(cut, key, kept, answer.cap, cursor is not None, self.continuation.why_not)
        if past and cursor is not None:
            data["cut"] = (f"the first of the {key} alone is more than {answer.cap:,} bytes, the answer's "
                           "cap, even with every value cut: it is left out, and the cursor continues after "
                           "it (a larger max_bytes, or fewer columns, answers it)")
        data["truncated"] = False if cut is None else [_CAP_OF.get((cut, key), "max_bytes")]
        said = [c for cuts in taken.cuts[:kept] for c in cuts]
        if said:
            data["values_cut"] = said[:CUTS_SAID] + ([f"and {len(said) - CUTS_SAID:,} more"]
                                                     if len(said) > CUTS_SAID else [])
        else:
            data.pop("values_cut", None)

    def __call__(self, answer: ToolAnswer) -> None:
        taken = self.taken
        kept = len(taken.rows)
        over = answer.size() - answer.cap
        while kept > 1 and over > 0:
            # Give back the rows that cover the excess by their cost, then measure exactly.
            while kept > 1 and over > 0:
                kept -= 1
                over -= taken.costs[kept]
            self.settle(answer, kept)
            over = answer.size() - answer.cap
        if kept == 1 and over > 0 and taken.first is not None:
            # The first row alone: cut its values harder rather than answer none.
            item, where, _ = taken.first
            if isinstance(item, SpeltRow):
                item = item.value()
            for chars, items in FIRST_ROW_LEVELS:
                cut, cuts, size, text = _spelt_cut(item, chars, items, where)
                if size >= taken.costs[0]:
                    continue
                taken.rows[0], taken.texts[0], taken.cuts[0], taken.costs[0] = cut, text, cuts, size
                self.settle(answer, 1)
                if answer.size() <= answer.cap:
                    return
            self.settle(answer, 0)


def _cut_text(cut: str | None, key: str, kept: int, cap: int, cursor: bool,
              why_not: str | None) -> str | None:
    if cut is None:
        return None
    more = ("the cursor continues from the next" if cursor else f"no cursor: {why_not}" if why_not
            else "no cursor")
    if cut == LIMIT:
        return f"at the limit of {kept:,} {key}: more follow ({more}; or a higher limit, or a narrower WHERE)"
    if not kept:
        return (f"the first of the {key} alone is more than {cap:,} bytes, the answer's cap, even with its "
                "values cut: a larger max_bytes, or select paths inside the values rather than whole values")
    return (f"at {cap:,} bytes, the answer's cap: more {key} follow ({more}; or fewer columns or paths, a "
            "narrower WHERE, or a larger max_bytes)")


# ------------------------------------------------------------------------------------ reports


def report(answer: ReportAnswer | None, cap: int, said: list[str], errors: list[str],
           screen: Screen) -> ToolAnswer:
    """A report's figures (`screen` first), its long values cut; or the error that left none.
    Made to fit its cap by cutting its longest lists (`fit`), the cut said."""
    if answer is None:
        return failed(" ".join(errors) or "the statement reported nothing", said)
    data, cuts = sizing.cut_value(jsonenc.loaded(screen.report(answer.data())), items=None)
    if cuts:
        data["values_cut"] = cuts[:CUTS_SAID] + ([f"and {len(cuts) - CUTS_SAID:,} more"]
                                                 if len(cuts) > CUTS_SAID else [])
    if answer.stopped is not None:
        data["stopped"] = {"why": answer.stopped, "says": "the report covers what was read before"}
    return ToolAnswer(data=data, notes=[*said, *errors], cap=cap, fitting=cut_lists)


def cut_lists(answer: ToolAnswer) -> None:
    """A document made to fit: its longest list (by its JSON's size) cut to half, again, until the
    answer fits; each cut said in `cut` ("places[0].paths: 40 of 212 kept")."""
    data = answer.data
    assert data is not None
    whole: dict[str, tuple[int, list[Any]]] = {}
    while answer.size() > answer.cap:
        found = _longest_list(data, "")
        if found is None:
            return
        where, items = found
        whole.setdefault(where, (len(items), items))
        del items[max(1, len(items) // 2):]
        data["cut"] = [f"{place}: {len(kept):,} of {n:,} kept (the answer's cap, {answer.cap:,} bytes)"
                       for place, (n, kept) in whole.items()]


def _longest_list(value: Any, where: str) -> tuple[str, list[Any]] | None:
    best: tuple[int, str, list[Any]] | None = None

    def walk(item: Any, at: str) -> None:
        nonlocal best
        if isinstance(item, list):
            if len(item) > 1:
                size = len(sizing.compact(item))
                if best is None or size > best[0]:
                    best = (size, at, item)
            for i, inner in enumerate(item):
                walk(inner, f"{at}[{i}]")
        elif isinstance(item, dict):
            for k, inner in item.items():
                if k != "cut":
                    walk(inner, f"{at}.{k}" if at else str(k))

    walk(value, where)
    return (best[1], best[2]) if best is not None else None
