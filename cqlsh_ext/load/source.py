"""What a load reads (docs/load.md): a JSON Lines, Parquet or CSV file, or data in memory (the
Python API's Arrow table or RecordBatchReader, pandas or polars frame), a window of rows at a time,
each row its values in the request's column order. A blob column's value is a `GivenValue`: what the
source says of it, before the encoding rule (load.encoded_values) decides its chain.

How each source spells a blob column (the exports' spellings, docs/export.md, read back):

- JSON Lines: the object the exports write, {"label", "kind", "payload", ...} (its payload's text
  kept as the line spells it: the numbers and escapes of a JSON text as stored); "0x..." (bytes);
  null; any other JSON value is a document (an object or a list as its JSON text, a string as its
  text).
- Wherever a document holds the exports' object of a blob (its label, kind and payload: an
  export's envelope), the row is refused naming where (`envelope_refusal`): a key set beside the
  payload, or an envelope inside a document, is a fix made at the wrong level, never a document.
- Parquet and Arrow data: the six columns the exports write (`data`, `data:label`, `data:kind`,
  `data:note`, `data:stored`, `data:confidence`): the payload (a struct a record, a string a text;
  a field of JSON text, marked so or Arrow's `arrow.json`, as its text; a null field may be a key a record
  lacked, which load.documents reads against the stored document, the stored bytes beside the
  payload among them), or the stored bytes where the payload is null; without `data:kind` the
  column alone: a struct, a map or a list a document, a string a document's text, bytes bytes;
  beside either, a `data:absent` column (a list of paths a row) names places removed.
- pandas: the same columns, a dict a whole document (a key it lacks is absent).
- CSV: text; `0x...` (with a reason after it, a value that failed: `0x... (why)`) bytes; an empty
  field null, as cqlsh's COPY FROM reads it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from cqlsh_ext.load.files import Line, SourceError, SourceFile, line_error, open_regular, shown
from cqlsh_ext.output.spellings import BLOB_OBJECT_KEYS
from cqlsh_ext.payload.arrow_types import UNFIT, is_json_text
from cqlsh_ext.payload.json_text import unique_pairs

__all__ = ["SourceError"]

#: Rows read at a time: a window's values are encoded, its rows read and written together.
WINDOW_ROWS = 500
#: A window holds at most this many bytes of the source's lines (fewer rows where lines are long).
WINDOW_BYTES = 64 << 20
#: The keys of the object the exports write for a blob (output.spellings' BLOB_OBJECT_KEYS).
BLOB_KINDS = frozenset({"text", "record", "binary", "unknown", "failed"})
_HEX = re.compile(r"0x((?:[0-9a-fA-F]{2})*)(?: \(.*\))?", re.DOTALL)


@dataclass(frozen=True)
class GivenValue:
    """A blob column's value as the source gives it. A document's `text` (JSON text as written, or
    text) or `tree` (JSON values: a Parquet struct's, a frame's dict); or `data`, bytes (the stored
    bytes of a value no reading read, a binary payload under its label's codecs, bytes given);
    with the export's `label` and `kind` where the source carries them, `cut` where the export's
    output cap cut the value, `stored` where `data` are the stored bytes of a value whose payload
    the source does not hold (Parquet's misfits)."""

    label: str | None = None
    kind: str | None = None
    text: str | None = None
    tree: Any = None
    data: bytes | None = None
    cut: str | None = None
    stored: bool = False
    #: The source has the column's `:label` beside it but not its `:kind` (which says how the label
    #: reads): the label is not taken alone.
    label_alone: bool = False
    #: A frame's document (Arrow, pandas, polars, Parquet): a null field may be a key absent.
    frame: bool = False
    #: The stored bytes the source carries beside the payload (a RAW export's `data:stored`, JSON
    #: Lines' "raw"): the stored document what the source cannot say is read from (load.documents).
    reference: bytes | None = None
    #: The source's row says a place of the document did not fit its type (null there).
    misfit: bool = False
    #: A pandas dict: it holds every key of its document (an export's frame a key for each field
    #: of the struct), so a key it lacks is absent, removed from the stored document.
    whole: bool = False
    #: A pandas dict given alone (no export's columns beside it): its None is null in a new row too.
    nulls: bool = False
    #: `text` is JSON the source's reader read already, a key given twice refused (a JSON Lines
    #: line's object or list): not read again for that.
    checked: bool = False
    #: The places the source says are absent (its `data:absent` column: `customer.tier`,
    #: `items[1].qty`): removed from the document written.
    absent: tuple[str, ...] = ()
    #: Why the value is not written (an export's envelope at the wrong level: envelope_refusal).
    refused: str | None = None

@dataclass(frozen=True)
class SourceRow:
    """One row of the source: its position (0 for the first row, a file's header not counted) and
    its values in the request's column order (a blob column's a GivenValue or None); the line it
    starts at in a file of lines; `refused`, why the source's row cannot be read (its values then
    empty); `size`, the bytes it took in the file."""

    position: int
    values: list[Any]
    line: int | None = None
    refused: str | None = None
    size: int = 0
    #: A key of the row's JSON object that is no column of the table: the row is refused, naming it.
    stray: str | None = None

    @property
    def where(self) -> str:
        """The row as a refusal names it: its line (from 1), or its row (from 1)."""
        return f"line {self.line:,}" if self.line is not None else f"row {self.position + 1:,}"


class Window(list[SourceRow]):
    """Rows read together; `read`, where the source's file stood after them (bytes read and their
    digest), `whole`, the file's size and digest as the load opened it (what RESUME checks the
    file by), None for data in memory."""

    read: tuple[int, str] | None = None
    whole: tuple[int, str] | None = None


class Fragment(str):
    """JSON text standing for a value (a JSON-text field's: is_json_text): written into a document's text as
    it is, read as JSON into a record."""


class CsvField(str):
    """A CSV field: a value's text, read into a key column's type by CQL's spelling of it."""


class NumberText(str):
    """A JSON number as the line spells it (`1.00000000000000000001`, `1e-400`): a key read from
    its text by its column's type (load.encoded_values.key_from_text, as a CSV field), never
    through a binary float."""


# ---------------------------------------------------------------------------------------- files

@dataclass(frozen=True)
class FileReading:
    """How a file is read, as every format's reader takes it (common.file_formats): the bytes a
    line or a record holds at most (files.line_budget), a value's cap (a Parquet page's), the
    header's flag of a file of text records (CSV's HEADER), and the keys a JSON line may have (the
    table's columns and their companions: another is the row's `stray`)."""

    budget: int
    cap: int
    header: bool = True
    known: frozenset[str] | None = None


def file_rows(fmt: str, path: str, columns: Sequence[str], blobs: frozenset[str], reading: FileReading,
              skip: int = 0) -> tuple[Iterator[Window], int | None]:
    """The rows of a file of the format `fmt` names (common.file_formats) a window at a time, and
    how many when the file says (a Parquet file's): its reader's, or for a format of text records
    its fields read as a CSV file's."""
    from cqlsh_ext.common.file_formats import imported, named

    found = named(fmt)
    if found.fields is not None:
        source = SourceFile(path, reading.budget, whole=True)
        split = imported(found.fields)
        rows = _csv_rows(source, columns, blobs, reading.header, skip, split, found.title)
        return _windows(rows, source), None
    return imported(str(found.reader))(path, columns, blobs, reading, skip)


def file_header(fmt: str, path: str, reading: FileReading) -> list[str] | None:
    """The column names a file of the format `fmt` names holds, in its order (a JSON Lines file's
    first object's keys, a Parquet file's columns, a CSV file's header); None for a file of text
    records without a header (HEADER = false)."""
    from cqlsh_ext.common.file_formats import imported, named

    found = named(fmt)
    if found.fields is not None:
        if not reading.header:
            return None
        with SourceFile(path, reading.budget) as source:
            return _csv_names(source, _records(source, imported(found.fields), found.title)) or []
    return imported(str(found.header))(path, reading)


# ---------------------------------------------------------------------------------------- JSON Lines

def hex_bytes(text: str) -> bytes | None:
    """The bytes a `0x...` string spells (a failed value's `0x... (why)` too), else None."""
    found = _HEX.fullmatch(text)
    return bytes.fromhex(found.group(1)) if found is not None else None


_SPACE = re.compile(r"[ \t\n\r]*")
_BLANKS = frozenset(" \t\n\r")


def _skip(line: str, i: int) -> int:
    """Past the blanks at `i` (the exports write one space after ':' and ','; a regex for more)."""
    if line[i:i + 1] in _BLANKS:
        i += 1
        if line[i:i + 1] in _BLANKS:
            blanks = _SPACE.match(line, i)  # never None: it matches the empty string
            i = blanks.end() if blanks is not None else i
    return i


def _members(line: str, start: int, walked: frozenset[str] = frozenset()
             ) -> tuple[dict[str, tuple[Any, int, int]], int]:
    """A JSON object's members from `start` (its '{'): key -> (value, its first char, its end),
    each value parsed once by the standard library's scanner, or, for a key in `walked` whose value
    is an object, walked as this walks one (its value then its members: what a blob's object is
    read by); ValueError when it is not an object."""
    from _json import scanstring  # json.decoder's, the C one (json's own import of it)

    scan = _SCANNER
    i = _skip(line, start + 1)
    out: dict[str, tuple[Any, int, int]] = {}
    if line.startswith("}", i):
        return out, i + 1
    while True:
        if not line.startswith('"', i):
            raise ValueError(f"a key expected at char {i}")
        key, i = scanstring(line, i + 1)
        i = _skip(line, i)
        if not line.startswith(":", i):
            raise ValueError(f"':' expected at char {i}")
        i = _skip(line, i + 1)
        if key in out:  # json.loads would keep the last without a word
            raise ValueError(f"{json.dumps(key, ensure_ascii=False)} given twice in one object")
        if key in walked and line.startswith("{", i):
            value, end = _members(line, i)
        else:
            try:
                value, end = scan(line, i)
            except StopIteration:
                raise ValueError(f"a value expected at char {i}") from None
        out[key] = (value, i, end)
        i = _skip(line, end)
        if line.startswith(",", i):
            i = _skip(line, i + 1)
            continue
        if line.startswith("}", i):
            return out, i + 1
        raise ValueError(f"',' or '}}' expected at char {i}")


#: The standard library's value scanner (its C one): (text, at) -> (value, end); a key given twice
#: in an object refused.
_SCANNER = json.JSONDecoder(object_pairs_hook=unique_pairs).scan_once  # type: ignore[attr-defined]


def json_blob(value: Any, line: str, start: int, end: int) -> GivenValue | None:
    """A JSON Lines blob value (see the module doc): `line[start:end]` is its text; an object's
    `value` is its members (key -> (value, first char, end): _members)."""
    if value is None:
        return None
    if isinstance(value, str):
        data = hex_bytes(value)
        return GivenValue(data=data) if data is not None else GivenValue(text=value)
    plain = {k: v[0] for k, v in value.items()} if isinstance(value, dict) else value
    if isinstance(plain, dict) and not _is_blob_object(plain) and _is_envelope(plain):
        beside = [key for key in plain if key not in BLOB_OBJECT_KEYS]
        one = len(beside) == 1
        return GivenValue(refused=f"{', '.join(beside)} {'is' if one else 'are'} beside payload: put "
                          f"{'it' if one else 'them'} inside")
    if isinstance(value, dict) and _is_blob_object(plain):
        members, value = value, plain
        kind = value.get("kind")
        label = value.get("label") if isinstance(value.get("label"), str) else None
        cut = value.get("cut") if isinstance(value.get("cut"), str) else None
        payload, first, last = members["payload"]
        if kind in ("unknown", "failed") or (kind == "binary" and isinstance(payload, str)):
            data = hex_bytes(payload) if isinstance(payload, str) else None
            if data is None:
                return GivenValue(label=label, kind=kind, cut=cut or "its payload is not bytes (0x...)")
            return GivenValue(label=label if kind == "binary" else None, kind=kind, data=data, cut=cut)
        if isinstance(payload, str):
            return GivenValue(label=label, kind=kind, text=payload, cut=cut)
        if payload is None:
            return GivenValue(label=label, kind=kind,
                              cut=cut or "its payload is null (an object its stream's reader could not read)")
        raw = value.get("raw")
        # (an envelope in the payload: its text names "payload", which few documents' do)
        refused = envelope_refusal(payload, "payload") if '"payload"' in line[first:last] else None
        return GivenValue(label=label, kind=kind, text=line[first:last], cut=cut, refused=refused,
                          reference=hex_bytes(raw) if isinstance(raw, str) else None, checked=True)
    text = line[start:end]  # an object, a list, a number: its JSON text, a document
    return GivenValue(text=text, checked=True,
                      refused=envelope_refusal(plain) if '"payload"' in text else None)


def _windows(rows: Iterator[SourceRow], source: SourceFile | None = None) -> Iterator[Window]:
    """`rows` WINDOW_ROWS (or WINDOW_BYTES) at a time, the last window what is left; each window
    marked with where `source` stood after it. A SourceError (the source cannot be read on) comes
    after the window of the rows read before it."""
    window = Window()
    size = 0
    try:
        for row in rows:
            window.append(row)
            size += row.size
            if len(window) >= WINDOW_ROWS or size >= WINDOW_BYTES:
                window.read = source.mark() if source is not None else None
                window.whole = source.whole if source is not None else None
                yield window
                window, size = Window(), 0
    except SourceError:
        if window:
            window.read = None  # the rows before the failure: RESUME reads them again if unwritten
            yield window
        raise
    if window:
        window.read = source.mark() if source is not None else None
        window.whole = source.whole if source is not None else None
        yield window


def _is_blob_object(value: dict[str, Any]) -> bool:
    """The object the exports write for a blob: a kind of theirs and a payload, no other keys."""
    return value.get("kind") in BLOB_KINDS and "payload" in value and value.keys() <= BLOB_OBJECT_KEYS


def _is_envelope(value: dict[Any, Any]) -> bool:
    """An export's object of a blob, whatever else it holds: its label, a kind of theirs, a payload."""
    kind = value.get("kind")
    return "payload" in value and "label" in value and isinstance(kind, str) and kind in BLOB_KINDS


def envelope_refusal(tree: Any, below: str = "") -> str | None:
    """Why a document (`tree`, JSON values) that holds an export's envelope of a blob is not
    written, naming where it sits (`below`: the path of `tree` in the source's value, `payload`
    for an envelope's); None for a document without one. An envelope is the exports' wrapping of
    a value, never a document's: a load that wrote it would store the label, the kind and the
    payload as the document's fields (the user's fix made a level too high or too low)."""
    stack: list[tuple[Any, str]] = [(tree, below)]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            if _is_envelope(value):
                where = f"inside the document, at {path}" if path else "where its document goes"
                return f"an export's object (label, kind, payload) {where}: give its payload alone there"
            stack.extend((item, f"{path}.{key}" if path else str(key)) for key, item in value.items()
                         if isinstance(item, dict | list))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(value)
                         if isinstance(item, dict | list))
    return None


def json_lines_source(path: str, columns: Sequence[str], blobs: frozenset[str], reading: FileReading,
                      skip: int = 0) -> tuple[Iterator[Window], None]:
    """A JSON Lines file's reader (common.file_formats): its rows (one object a line, a blank line
    skipped) a window at a time, not counted ahead; a line that cannot be read (not UTF-8, not a
    JSON object, cut short, past the budget) is a refused row, and the others go on; a key not in
    `reading.known` is the row's `stray`."""
    source = SourceFile(path, reading.budget, whole=True)
    return _windows(_json_rows(source, columns, blobs, skip, reading.known), source), None


def _json_rows(source: SourceFile, columns: Sequence[str], blobs: frozenset[str], skip: int,
               known: frozenset[str] | None) -> Iterator[SourceRow]:
    position = 0
    with source:
        for line in source.lines():
            if line.data is not None and not line.data.strip():
                continue
            if position >= skip:
                yield _json_row(line, position, columns, blobs, source.budget, known)
            position += 1


def _json_row(line: Line, position: int, columns: Sequence[str], blobs: frozenset[str], budget: int,
              known: frozenset[str] | None) -> SourceRow:
    """One line's row, or the row refused saying why it cannot be read."""
    from cqlsh_ext.load.files import budget_words

    number = line.number
    if line.data is None:
        return SourceRow(position, [], number, f"a line of {line.size:,} bytes, longer than the budget of "
                         f"{budget_words(budget)}: not read", line.size)
    try:
        text = line.data.decode("utf-8")
    except UnicodeDecodeError as err:
        return SourceRow(position, [], number, f"not UTF-8 (byte 0x{line.data[err.start]:02x} at byte "
                         f"{err.start + 1:,} of the line)", line.size)
    at = _skip(text, 0)
    try:
        members, _ = _members(text, at, blobs)
    except (ValueError, RecursionError) as err:
        cut = " (the file's last line, without its newline: cut short?)" if line.last else ""
        return SourceRow(position, [], number, line_error(err, text, at) + cut, line.size)
    values: list[Any] = []
    for column in columns:
        found = members.get(column)
        if found is None:
            values.append(None)
        elif column in blobs:
            values.append(json_blob(found[0], text, found[1], found[2]))
        elif isinstance(found[0], int | float) and not isinstance(found[0], bool):
            values.append(NumberText(text[found[1]:found[2]]))
        else:
            values.append(found[0])
    stray = None if known is None or members.keys() <= known else next(k for k in members if k not in known)
    return SourceRow(position, values, number, None, line.size, stray=stray)


def json_header(path: str, reading: FileReading) -> list[str]:
    """The keys of a JSON Lines file's first object, in order (the columns a COPY without a list
    of columns names)."""
    with SourceFile(path, reading.budget) as source:
        for line in source.lines():
            if line.data is None:
                raise SourceError(f"{shown(path)}: its first line is longer than the budget: name the "
                                  "columns")
            if not line.data.strip():
                continue
            try:
                text = line.data.decode("utf-8")
                at = _skip(text, 0)
                members, _ = _members(text, at)
            except UnicodeDecodeError:
                raise SourceError(f"{shown(path)}: its first line is not UTF-8") from None
            except (ValueError, RecursionError) as err:
                raise SourceError(f"{shown(path)}: its first line is {line_error(err, text, at)}") from None
            return list(members)
    return []


# ---------------------------------------------------------------------------------------- CSV

def csv_fields(lines: Iterator[str]) -> Iterator[list[str]]:
    """A CSV file's records, each its fields (common.file_formats' `fields` of CSV): csv.reader's,
    strict. A CSV file's rows (file_rows): a header row first with HEADER (its names pick the
    columns), a window at a time; a record that cannot be read (not UTF-8, not CSV, past the
    budget, with too few fields) is a refused row, and the others go on; a quoted field that never
    ends stops the load (the rest of the file is in it)."""
    import csv

    return csv.reader(lines, strict=True)


class _LineRefused(Exception):
    def __init__(self, number: int, reason: str) -> None:
        super().__init__(reason)
        self.number = number
        self.reason = reason


class _CsvLines:
    """A CSV file's lines as text for csv.reader: each within the budget and UTF-8 (else
    _LineRefused), a record's lines together within the budget too (`record`: its bytes so far)."""

    def __init__(self, source: SourceFile) -> None:
        self._lines = source.lines()
        self.budget = source.budget
        self.number = 0
        self.record = 0
        self.ended = False

    def __iter__(self) -> _CsvLines:
        return self

    def __next__(self) -> str:
        from cqlsh_ext.load.files import budget_words

        try:
            line = next(self._lines)
        except StopIteration:
            self.ended = True
            raise
        self.number = line.number
        self.record += line.size
        if line.data is None or self.record > self.budget:
            what = "a line" if line.data is None else "a record"
            raise _LineRefused(line.number, f"{what} longer than the budget of {budget_words(self.budget)}: "
                               "not read")
        try:
            return line.data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise _LineRefused(line.number, f"not UTF-8 (byte 0x{line.data[err.start]:02x} at byte "
                               f"{err.start + 1:,} of the line)") from None


def _records(source: SourceFile, split: Callable[[Iterator[str]], Iterator[list[str]]], title: str
             ) -> Iterator[tuple[int, list[str] | None, str | None]]:
    """(the line a record starts at, its fields or None, why it is not read) for each record of a
    file of text records, `split` its format's reading of lines into records (csv_fields)."""
    import csv

    from cqlsh_ext.common.text import visible
    from cqlsh_ext.load.files import budget_words

    if csv.field_size_limit() < source.budget:
        csv.field_size_limit(source.budget)  # a blob's 0x... past 64 KiB (the module's default: 128 KiB)
    lines = _CsvLines(source)
    reader = split(lines)
    while True:
        lines.record = 0
        first = lines.number + 1
        try:
            yield first, next(reader), None
        except StopIteration:
            return
        except _LineRefused as err:
            yield err.number, None, err.reason
        except (csv.Error, ValueError) as err:
            text = str(err)
            if lines.ended and "end of data" in text:
                raise SourceError(f"{shown(source.path)} line {first:,}: a quoted field opened there never "
                                  "ends (the rest of the file is in it): not read past it") from None
            reason = f"a field longer than the budget of {budget_words(source.budget)}" \
                if "field limit" in text else f"not {title} ({visible(text, 80)})"
            yield first, None, reason


def _csv_rows(source: SourceFile, columns: Sequence[str], blobs: frozenset[str], header: bool, skip: int,
              split: Callable[[Iterator[str]], Iterator[list[str]]], title: str) -> Iterator[SourceRow]:
    with source:
        records = _records(source, split, title)
        order = list(range(len(columns)))
        if header:
            names = _csv_names(source, records)
            if names is None:
                return
            missing = [c for c in columns if c not in names]
            if missing:
                from cqlsh_ext.common.text import visible

                raise SourceError(f"{shown(source.path)}: its header names no column {missing[0]} (it names "
                                  f"{visible(', '.join(names), 120)})")
            order = [names.index(c) for c in columns]
        position = 0
        for line, record, refused in records:
            if record is not None and not record:
                continue
            if position >= skip:
                yield _csv_row(position, line, record, refused, columns, order, blobs)
            position += 1


def _csv_row(position: int, line: int, record: list[str] | None, refused: str | None, columns: Sequence[str],
             order: list[int], blobs: frozenset[str]) -> SourceRow:
    if record is None:
        return SourceRow(position, [], line, refused)
    size = sum(len(field) for field in record)
    if len(record) <= max(order):
        return SourceRow(position, [], line, f"{len(record)} fields, not {len(columns)}", size)
    values: list[Any] = []
    for column, i in zip(columns, order, strict=True):
        text = record[i]
        if text == "":
            values.append(None)
        elif column in blobs:
            data = hex_bytes(text)
            values.append(GivenValue(data=data) if data is not None else GivenValue(text=text))
        else:
            values.append(CsvField(text))
    return SourceRow(position, values, line, None, size)


def _csv_names(source: SourceFile, records: Iterator[tuple[int, list[str] | None, str | None]]
               ) -> list[str] | None:
    """The header's names (None: an empty file); SourceError when the header cannot be read."""
    found = next(records, None)
    if found is None:
        return None
    _line, names, refused = found
    if names is None:
        raise SourceError(f"{shown(source.path)}: its header cannot be read: {refused}")
    return names


# ---------------------------------------------------------------------------------------- Arrow

def parquet_file(path: str) -> tuple[Any, int]:
    """A Parquet file opened (a regular file: files.open_regular) by pyarrow's reader, and the
    descriptor it reads (its pages' headers are read beside it); SourceError when it is not one."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise SourceError("reading Parquet needs pyarrow (the parquet extra: bin/setup --parquet, or "
                          "python3 -m pip install 'cqlsh-ext[parquet]')") from None
    f = open_regular(path)
    try:
        return pq.ParquetFile(f), f.fileno()
    except OSError as err:
        f.close()
        raise SourceError(f"cannot read {shown(path)}: {err}") from None
    except Exception as err:  # pyarrow's ArrowInvalid: not a Parquet file
        f.close()
        raise SourceError(f"{shown(path)} is not a Parquet file ({str(err).splitlines()[0]})") from None


def parquet_header(path: str, reading: FileReading) -> list[str]:
    """A Parquet file's column names, in its order."""
    return list(parquet_file(path)[0].schema_arrow.names)


def parquet_source(path: str, columns: Sequence[str], blobs: frozenset[str], reading: FileReading,
                   skip: int = 0) -> tuple[Iterator[Window], int]:
    """A Parquet file's reader (common.file_formats): its rows a window at a time, and how many: a
    row group at a time, each first looked at (files.oversized_group: a page past the budget, a
    value's cap, refuses its group's rows, never decompressed), a window at most WINDOW_BYTES of the
    group's columns read (fewer rows where values are large); the file's digest (read whole: its
    rows are reached from its footer) marks every window."""
    source, fd = parquet_file(path)
    names = list(source.schema_arrow.names)
    missing = [c for c in columns if c not in names]
    if missing:
        raise SourceError(f"{shown(path)} has no column {missing[0]} (it has {', '.join(names)})")
    return _parquet_windows(source, fd, path, columns, blobs, reading.cap, skip), source.metadata.num_rows


def _parquet_windows(source: Any, fd: int, path: str, columns: Sequence[str], blobs: frozenset[str],
                     budget: int, skip: int) -> Iterator[Window]:
    from cqlsh_ext.load.files import oversized_group, whole_digest

    schema = source.schema_arrow
    wanted = [n for n in schema.names if n.split(":", 1)[0] in columns]
    metadata = source.metadata
    read = whole_digest(fd)
    position = 0
    for group in range(metadata.num_row_groups):
        chunks = metadata.row_group(group)
        count = chunks.num_rows
        try:
            reason = oversized_group(fd, metadata, group, columns, budget)
            if reason is None:
                size = sum(chunks.column(j).total_uncompressed_size for j in range(chunks.num_columns)
                           if chunks.column(j).path_in_schema.split(".", 1)[0] in wanted)
                rows = max(1, min(WINDOW_ROWS, WINDOW_BYTES * count // max(size, 1)))
                batches = source.iter_batches(batch_size=rows, row_groups=[group], columns=wanted)
                for window in arrow_rows(schema, batches, columns, blobs, skip, position, rows):
                    window.read = window.whole = read
                    yield window
        except SourceError:
            raise
        except Exception as err:  # pyarrow's: a row group that does not read (a file cut, changed)
            why = str(err).splitlines()[0][:200]
            raise SourceError(f"{shown(path)}: its row group {group + 1:,} (rows {position + 1:,} to "
                              f"{position + count:,}) cannot be read ({why})") from None
        if reason is not None:
            refused = [SourceRow(p, [], None, f"row group {group + 1:,}: {reason}")
                       for p in range(max(position, skip), position + count)]
            for start in range(0, len(refused), WINDOW_ROWS):
                window = Window(refused[start:start + WINDOW_ROWS])
                window.read = window.whole = read
                yield window
        position += count


def arrow_rows(schema: Any, batches: Iterator[Any], columns: Sequence[str], blobs: frozenset[str],
               skip: int = 0, position: int = 0, window_rows: int = WINDOW_ROWS) -> Iterator[Window]:
    """Rows of Arrow record batches (a Parquet file's, the API's data), a window at a time (see the
    module doc: a blob column's six parts, or the column alone); `position`, the first batch's
    first row's."""
    names = list(schema.names)
    missing = [c for c in columns if c not in names]
    if missing:
        raise SourceError(f"the data has no column {missing[0]} (it has {', '.join(names)})")
    for batch in batches:
        count = batch.num_rows
        if position + count <= skip:
            position += count
            continue
        readers = [_column_reader(batch, schema, column, column in blobs) for column in columns]
        window = [SourceRow(position + i, [read(i) for read in readers])
                  for i in range(count) if position + i >= skip]
        position += count
        for start in range(0, len(window), window_rows):
            yield Window(window[start:start + window_rows])


def _column_reader(batch: Any, schema: Any, column: str, blob: bool) -> Any:
    """The i -> value function of one column of a batch."""
    array = batch.column(schema.names.index(column))
    values = _plain(array.to_pylist(), schema.field(column))
    if not blob:
        return values.__getitem__
    part = {name: batch.column(schema.names.index(f"{column}:{name}")).to_pylist()
            for name in ("label", "kind", "note", "stored", ABSENT) if f"{column}:{name}" in schema.names}
    absents = part.get(ABSENT)
    if "kind" not in part:
        alone = "label" in part
        return lambda i: _bare_blob(values[i], alone, absent=_absent(absents[i] if absents else None))
    labels, kinds = part.get("label"), part["kind"]
    stored, notes = part.get("stored"), part.get("note")

    def given(i: int) -> GivenValue | None:
        return _exported_blob(values[i], kinds[i], labels[i] if labels else None,
                              stored[i] if stored else None, notes[i] if notes else None,
                              absent=_absent(absents[i] if absents else None))

    return given


def _exported_blob(value: Any, kind: Any, label: Any, stored: Any, note: Any = None, whole: bool = False,
                   absent: tuple[str, ...] = ()) -> GivenValue | None:
    """A blob of the exports' six columns: its payload (typed), kind, label, stored bytes (beside
    a payload: the document's, read where the payload cannot say: load.documents) and note;
    `whole`, a pandas dict (a key it lacks is absent, where the note says no field was left out),
    `absent`, the places its `:absent` column names."""
    if kind is None:
        return None  # a null blob: its six parts null
    if value is None:
        if stored is None:
            return GivenValue(label=label, kind=kind,
                         cut="its payload is null and its stored bytes are not in the file")
        read = kind not in ("unknown", "failed")
        return GivenValue(label=label if read else None, kind=kind, data=bytes(stored), stored=read)
    if isinstance(value, Fragment):
        return GivenValue(label=label, kind=kind, text=str(value))
    if isinstance(value, str):
        data = hex_bytes(value) if kind == "binary" else None
        return GivenValue(label=label, kind=kind, data=data) if data is not None else \
            GivenValue(label=label, kind=kind, text=value)
    if isinstance(value, bytes | bytearray):
        return GivenValue(label=label, kind=kind, data=bytes(value))
    misfit = isinstance(note, str) and note.startswith(UNFIT)
    return GivenValue(label=label, kind=kind, tree=value, frame=True,
                      reference=bytes(stored) if stored is not None else None,
                      misfit=misfit, whole=whole and not misfit and isinstance(value, dict), absent=absent,
                      refused=envelope_refusal(value, "payload"))


def _bare_blob(value: Any, label_alone: bool = False, whole: bool = False, absent: tuple[str, ...] = ()
               ) -> GivenValue | None:
    """A blob column given alone (data in memory, a file not of the exports' shape; `label_alone`:
    its `:label` column is there, its `:kind` not; `whole`: a pandas dict, its document whole)."""
    if value is None:
        return None
    if isinstance(value, bytes | bytearray | memoryview):
        return GivenValue(data=bytes(value))
    if isinstance(value, str):
        data = hex_bytes(value)
        if data is not None:
            return GivenValue(data=data)
        return GivenValue(text=str(value), label_alone=label_alone)
    whole = whole and isinstance(value, dict)
    return GivenValue(tree=value, label_alone=label_alone, frame=True, whole=whole, nulls=whole,
                      absent=absent, refused=envelope_refusal(value))


#: The companion column naming, row by row, the places of a document that are absent: a list of
#: paths (`customer.tier`, `items[1].qty`), a columnar frame's way to remove a key (docs/load.md).
ABSENT = "absent"


def _absent(paths: Any) -> tuple[str, ...]:
    """A row's `:absent` value: its paths (None, NaN or an empty list: none); SourceError for
    anything but a list of strings."""
    if paths is None or (not isinstance(paths, list | tuple) and _missing(paths)):
        return ()
    if hasattr(paths, "tolist"):  # a NumPy array (pyarrow's to_pandas)
        paths = paths.tolist()
    if not isinstance(paths, list | tuple) or not all(isinstance(p, str) for p in paths):
        raise SourceError(f"a :absent column holds lists of paths (['customer.tier']), not {paths!r:.60}")
    return tuple(paths)


def _plain(values: list[Any], field: Any) -> list[Any]:
    """An Arrow column's Python values, its JSON text (arrow_types.is_json_text) as Fragments."""
    if not _has_json(field):
        return values
    tree = _tree_of(field)
    return [tree(v) for v in values]


def _inner_fields(kind: Any) -> list[Any]:
    """The fields of the places inside a value of Arrow type `kind` (a struct's, a list's item,
    a map's value)."""
    import pyarrow as pa

    if pa.types.is_struct(kind):
        return [kind.field(i) for i in range(kind.num_fields)]
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return [kind.value_field]
    if pa.types.is_map(kind):
        return [kind.item_field]
    return []


def _has_json(field: Any) -> bool:
    return is_json_text(field) or any(_has_json(f) for f in _inner_fields(field.type))


def _tree_of(field: Any) -> Callable[[Any], Any]:
    """The function making a value of a pyarrow.Field (as to_pylist gives it) its tree, JSON text
    places as Fragments: made once a column, so a value's walk asks no type what it is."""
    import pyarrow as pa

    kind = field.type
    if is_json_text(field):
        return lambda value: None if value is None else Fragment(value)
    if pa.types.is_struct(kind):
        fields = [(f.name, _tree_of(f)) for f in _inner_fields(kind)]
        return lambda value: None if value is None else {name: tree(value.get(name)) for name, tree in fields}
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        item = _tree_of(kind.value_field)
        return lambda value: None if value is None else [item(v) for v in value]
    if pa.types.is_map(kind):
        entry = _tree_of(kind.item_field)
        return lambda value: None if value is None else [(k, entry(v)) for k, v in value]
    return _as_is


def _as_is(value: Any) -> Any:
    return value


def data_rows(data: Any, columns: Sequence[str], blobs: frozenset[str], skip: int = 0
              ) -> tuple[Any, Iterator[list[SourceRow]], int | None]:
    """(the columns' names, the rows a window at a time, how many when known) of the Python API's
    data: a pyarrow Table or RecordBatchReader (streamed: a batch at a time), a polars DataFrame
    (its Arrow), a pandas DataFrame (its rows' Python objects, a dict a document as it is);
    SourceError for anything else."""
    module = type(data).__module__.split(".")[0]
    if module == "pandas":
        names = [str(n) for n in data.columns]
        return names, _frame_rows(data, names, columns, blobs, skip), len(data)
    try:
        import pyarrow as pa
    except ImportError:
        raise SourceError("db.write needs pyarrow (the api extra: python3 -m pip install "
                          "'cqlsh-ext[api]')") from None
    if module == "polars":
        data = data.to_arrow()
    if isinstance(data, pa.RecordBatchReader):
        return data.schema.names, arrow_rows(data.schema, iter(data), columns, blobs, skip), None
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if isinstance(data, pa.Table):
        batches = iter(data.to_batches(max_chunksize=WINDOW_ROWS))
        return data.schema.names, arrow_rows(data.schema, batches, columns, blobs, skip), data.num_rows
    raise SourceError(f"db.write takes a pyarrow Table or RecordBatchReader, a pandas or a polars "
                      f"DataFrame, not {type(data).__name__}")


def _missing(value: Any) -> bool:
    """pandas' missing values: None, NaN, NaT, pandas.NA."""
    if value is None or type(value).__name__ == "NAType":  # (pandas.NA's truth is no boolean)
        return True
    try:
        return bool(value != value)  # NaN and NaT are not equal to themselves
    except (TypeError, ValueError):
        return False


def _frame_rows(frame: Any, names: list[str], columns: Sequence[str], blobs: frozenset[str], skip: int
                ) -> Iterator[list[SourceRow]]:
    missing = [c for c in columns if c not in names]
    if missing:
        raise SourceError(f"the data has no column {missing[0]} (it has {', '.join(names)})")
    parts = {c: [p for p in (*_EXPORT_PARTS, ABSENT) if f"{c}:{p}" in names] for c in blobs}
    for start in range(skip, len(frame), WINDOW_ROWS):
        chunk = frame.iloc[start:start + WINDOW_ROWS]
        lists = {name: chunk[name].tolist() for name in chunk.columns}
        window = []
        for i in range(len(chunk)):
            values: list[Any] = []
            for column in columns:
                value = _python_value(lists[column][i])
                value = None if not isinstance(value, list | dict | bytes) and _missing(value) else value
                absent = _absent(lists[f"{column}:{ABSENT}"][i]) if column in blobs and \
                    ABSENT in parts[column] else ()
                if column in blobs and "kind" in parts[column]:
                    kind, label, stored, note = (_part(lists, column, name, i, parts[column])
                                                 for name in _EXPORT_PARTS)
                    values.append(_exported_blob(value, kind, label, stored, note, whole=True, absent=absent))
                elif column in blobs:
                    values.append(_bare_blob(value, "label" in parts[column], whole=True, absent=absent))
                else:
                    values.append(value)
            window.append(SourceRow(start + i, values))
        yield window


def _python_value(value: Any) -> Any:
    """A pandas cell as plain Python, inside dicts and lists too: NumPy's arrays lists (pyarrow's
    to_pandas gives a list so), its scalars their Python values (a list is a list, a number a
    number, however the frame was made)."""
    if value is None or type(value) in _PLAIN:
        return value
    if type(value).__name__ in _PANDAS_NULLS:  # pandas' missing values inside a document: null
        return None
    if isinstance(value, dict):
        return {k: _python_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_python_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_python_value(v) for v in value)
    if type(value).__module__ == "numpy":
        if getattr(value, "ndim", 0):
            return [_python_value(v) for v in value.tolist()]
        return value.item()
    return value


_PLAIN = frozenset({str, int, float, bool, bytes})
#: pandas.NA's and pandas.NaT's types (no number, no time: JSON's null).
_PANDAS_NULLS = frozenset({"NAType", "NaTType"})
#: The parts of an exported blob a row's value is read with, in _exported_blob's order.
_EXPORT_PARTS = ("kind", "label", "stored", "note")


def _part(lists: dict[str, list[Any]], column: str, name: str, i: int, present: list[str]) -> Any:
    """One of a blob's export parts (`data:kind`, ...) in a frame's row, None when missing."""
    found = lists[f"{column}:{name}"][i] if name in present else None
    return None if found is None or (not isinstance(found, bytes) and _missing(found)) else found
