"""The file formats of COPY (SELECT ...) TO 'file', COPY ... FROM 'file' and MCP's export tool,
declared once (docs/extending.md, "Adding a file format"): each one's name, the suffixes that mean
it, its writer and its reader. Every place that names a format reads FILE_FORMATS: the statements'
parsers (export.parse, load.parse), the export's run and the load's (the writer and the reader
called by name), HELP EXPORT and HELP LOAD, MCP's tool (its schema's enum, its files' names and
MIME types), a load's journaled request (writing.requests).

A writer and a reader are named as "module:function", imported when a file is written or read:
declaring the table imports nothing (pyarrow least of all; tests/test_imports.py). Standard library
only (this is the `common` layer): the statements' parsers read it at start-up.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class FileFormat:
    """One file format. A plain class: export's declaration reads the table at start-up, and a
    NamedTuple or a dataclass compiles code when it is made (the registry's declared() took 3.0
    million instructions more with a NamedTuple, 0.9 million with this: callgrind)."""

    __slots__ = ("name", "title", "suffixes", "writer", "reader", "header", "fields", "aliases",
                 "export_options", "load_options", "typed", "extra", "mcp", "mime", "text", "cqlsh_copy",
                 "note")

    #: What FORMAT = '...' and MCP's `format` take, what a load's journaled request names.
    name: str
    #: What a person calls it: the closing line's, the refusals'.
    title: str
    #: The name endings that mean it, the first the one a file is given (MCP's export files).
    suffixes: tuple[str, ...]
    #: "module:function" of the export's writer: called with (target, answer, settings, places,
    #: export) where target is the file (export.target.ExportFile: `output()`, its bytes), answer
    #: the typed answer (reading.typed), settings the display's, places each column's value place,
    #: export the statement (export.parse.ExportStatement); it returns the sink: write(batch) for
    #: each batch, then finish() (its rows in `rows`, or a summary with `rows`), or abort().
    writer: str
    #: "module:function" of the load's reader of rows: called with (path, columns, blobs, reading,
    #: skip) (load.source.FileReading), it returns (windows of rows, how many rows when known); and
    #: of its header: (path, reading) -> the file's column names. Or, for a format of text records
    #: (CSV's kind), `fields`: (lines of text) -> each record's fields, and load.source reads the
    #: rest as a CSV file's (its header, its 0x... bytes, its refusals).
    reader: str | None
    header: str | None
    fields: str | None
    #: FORMAT's other names for it.
    aliases: tuple[str, ...]
    #: The WITH options of an export (beside FORMAT, OVERWRITE, RAW) and of a load (beside ENCODE,
    #: TTL, FORMAT) that are this format's.
    export_options: tuple[str, ...]
    load_options: tuple[str, ...]
    #: The file holds the answer's typed columns whatever the options (else only with SAMPLE_ROWS
    #: or SCHEMA, where they are its options).
    typed: bool
    #: The extra its writer and reader need (common.install.install_hint), if any.
    extra: str | None
    #: MCP's export tool writes it: its MIME type, and whether a chunk read back is text (else base64).
    mcp: bool
    mime: str
    text: bool
    #: cqlsh's own COPY TO and COPY FROM write and read it (stored bytes): a COPY table TO 'x' of
    #: it is cqlsh's, and a COPY ... FROM 'x' of it is a load only with ENCODE, PACE or CONFIRM.
    cqlsh_copy: bool
    #: HELP EXPORT's word on it, after its suffixes.
    note: str

    def __init__(self, name: str, title: str, suffixes: tuple[str, ...], writer: str, *,
                 reader: str | None = None, header: str | None = None, fields: str | None = None,
                 aliases: tuple[str, ...] = (), export_options: tuple[str, ...] = (),
                 load_options: tuple[str, ...] = (), typed: bool = False, extra: str | None = None,
                 mcp: bool = False, mime: str = "application/octet-stream", text: bool = True,
                 cqlsh_copy: bool = False, note: str = "") -> None:
        self.name, self.title, self.suffixes, self.writer = name, title, suffixes, writer
        self.reader, self.header, self.fields, self.aliases = reader, header, fields, aliases
        self.export_options, self.load_options = export_options, load_options
        self.typed, self.extra = typed, extra
        self.mcp, self.mime, self.text, self.cqlsh_copy, self.note = mcp, mime, text, cqlsh_copy, note

    def __repr__(self) -> str:
        return f"FileFormat({self.name!r})"


#: In the order HELP, the refusals and MCP's schema list them; the first is MCP's default.
FILE_FORMATS: tuple[FileFormat, ...] = (
    FileFormat("parquet", "Parquet", (".parquet", ".pq"), "cqlsh_ext.render.parquet:file_sink",
               reader="cqlsh_ext.load.source:parquet_source", header="cqlsh_ext.load.source:parquet_header",
               export_options=("compression", "row_group_size", "sample_rows", "schema"), typed=True,
               extra="parquet", mcp=True, mime="application/vnd.apache.parquet", text=False),
    # A `.json` file is JSON Lines too (one object per line, what --output-format json prints), not
    # one JSON array: rows stream into it, and DuckDB, pandas (lines=True) and jq read it as it is.
    FileFormat("jsonl", "JSON Lines", (".jsonl", ".ndjson", ".json"),
               "cqlsh_ext.export.json_csv:json_lines_sink",
               reader="cqlsh_ext.load.source:json_lines_source", header="cqlsh_ext.load.source:json_header",
               aliases=("json", "ndjson"), export_options=("sample_rows", "schema"), mcp=True,
               mime="application/jsonl",
               note="JSON Lines, as --output-format json prints: one object per line, no array"),
    FileFormat("csv", "CSV", (".csv",), "cqlsh_ext.export.json_csv:csv_sink",
               fields="cqlsh_ext.load.source:csv_fields", export_options=("sample_rows", "schema"),
               load_options=("header",), cqlsh_copy=True, mime="text/csv",
               note="as --output-format csv prints"),
)


def file_format(name: str) -> FileFormat | None:
    """The format FORMAT = 'name' names (a name or another name of it, case aside), else None."""
    typed = name.lower()
    return next((f for f in FILE_FORMATS if typed == f.name or typed in f.aliases), None)


def named(name: str) -> FileFormat:
    """The format of this name (a statement's, a journaled request's: one of FILE_FORMATS')."""
    found = file_format(name)
    if found is None:
        raise KeyError(name)
    return found


def by_suffix(path: str) -> FileFormat | None:
    """The format the file's name ends in, else None."""
    lowered = path.lower()
    return next((f for f in FILE_FORMATS for suffix in f.suffixes if lowered.endswith(suffix)), None)


def names(formats: Iterable[FileFormat] = FILE_FORMATS) -> list[str]:
    return [f.name for f in formats]


def listed(words: Iterable[str], last: str = "or") -> str:
    """'a', 'a or b', 'a, b or c'."""
    items = list(words)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


def imported(name: str) -> Any:
    """The function a "module:function" names (a writer, a reader), its module imported now."""
    import importlib

    module, _, function = name.partition(":")
    return getattr(importlib.import_module(module), function)


def unknown_format(value: object) -> str:
    """FORMAT's refusal of a name no format has: the nearest name, and the names."""
    from cqlsh_ext.common.text import unknown

    return unknown("format", str(value), names())


def untold(path: str) -> str:
    """The refusal of a file whose name ends in no format's suffix."""
    ends = listed(f.suffixes[0] for f in FILE_FORMATS)
    first, *others = (f"'{f.name}'" for f in FILE_FORMATS)
    return (f"cannot tell the format from the name {path!r}: end it in {ends}, or add WITH FORMAT = {first}"
            + (f" (or {', '.join(others)})" if others else ""))


def foreign_options(given: Iterable[str], fmt: FileFormat, which: str) -> str | None:
    """The refusal of the options given that are other formats' and not `fmt`'s (`which`: "export"
    or "load"), else None: "COMPRESSION and ROW_GROUP_SIZE are Parquet's options"."""
    def options(f: FileFormat) -> tuple[str, ...]:
        return f.export_options if which == "export" else f.load_options

    every = [option for f in FILE_FORMATS for option in options(f)]
    given = set(given)
    refused = [option for option in dict.fromkeys(every) if option in given and option not in options(fmt)]
    if not refused:
        return None
    owners = [f for f in FILE_FORMATS if refused[0] in options(f)]
    theirs = [o for o in options(owners[0]) if o not in options(fmt) and all(o in options(f) for f in owners)]
    words = listed((o.upper() for o in theirs), "and")
    titles = listed((f.title for f in owners), "and")
    if which == "export":
        whose = f"{titles}'s"
    else:
        whose = f"a {titles} file's" if len(owners) == 1 else f"{titles} files'"
    noun = "options" if len(theirs) > 1 else "option"
    return f"{words} {'are' if len(theirs) > 1 else 'is'} {whose} {noun}"
