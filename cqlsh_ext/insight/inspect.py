"""INSPECT: what one stored value is made of, as a report (text or JSON).

For each value: the nesting chain (<codec> > <stream> > String), per layer the container, its header
fields (the Headers capability, codecs.capabilities), the checksums verified here (checksums.py),
input and output sizes; then the payload's kind and a preview. A value that is not compressed, or
cannot be decoded, says why; a recognised format that fails still shows its header fields and
checksums.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cqlsh_ext.codecs._common import reason
from cqlsh_ext.codecs.base import DEFAULT_CAP, Container, DecodeError
from cqlsh_ext.codecs.capabilities import Headers
from cqlsh_ext.common.text import ELLIPSIS, OneRow, shorten
from cqlsh_ext.insight import checksums, isolate, report
from cqlsh_ext.insight.view_measures import COMPRESSED, measured, ratio
from cqlsh_ext.payload.measures import STATUS_TITLES
from cqlsh_ext.payload.names import BINARY_KINDS
from cqlsh_ext.payload.view import FAILED, RECORD, TEXT, UNKNOWN, BlobView

if TYPE_CHECKING:
    from cqlsh_ext.payload.formats import StreamLayer

PREVIEW_CHARS = 160
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
#: Entries shown per header list (chunks, blocks, frames) in text; JSON has them all (the format
#: modules stop at 256).
LIST_ENTRIES = 12

# Binary payloads worth naming: (kind, leading bytes).
_BINARY_MAGIC = (
    ("PNG image", b"\x89PNG\r\n\x1a\n"),
    ("JPEG image", b"\xff\xd8\xff"),
    ("GIF image", b"GIF8"),
    ("PDF document", b"%PDF-"),
    ("ZIP archive", b"PK\x03\x04"),
    *BINARY_KINDS,  # those the payload formats declare
    ("Parquet", b"PAR1"))


@dataclass
class LayerReport:
    label: str
    codec: str
    container: str
    grade: str
    input_size: int
    output_size: int | None
    declared_size: int | None = None
    truncated: bool = False
    headers: dict[str, object] = field(default_factory=dict)
    checks: list[checksums.Check] = field(default_factory=list)
    #: 'none in this format', or None when checks apply.
    checks_note: str | None = None
    #: Why the layer did not decode (the value is then 'failed').
    error: str | None = None

    def to_json(self) -> dict[str, object]:
        doc: dict[str, object] = {"format": self.label, "codec": self.codec, "container": self.container,
                                  "grade": self.grade, "input_size": self.input_size,
                                  "output_size": self.output_size, "declared_size": self.declared_size,
                                  "truncated": self.truncated, "headers": self.headers,
                                  "checksums": [c.to_json() for c in self.checks]}
        if self.checks_note:
            doc["checksums_note"] = self.checks_note
        if self.error:
            doc["error"] = self.error
        return doc


@dataclass
class Payload:
    kind: str
    size: int
    #: Characters of text, class name of a serialized object, ...
    detail: str | None = None
    preview: str | None = None

    def to_json(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class ValueReport:
    #: Where the value came from: row number, column, key columns; or the file name.
    where: dict[str, object]
    stored_size: int
    status: str
    #: The layers peeled, outer first (BlobView.chain).
    chain: tuple[str, ...]
    layers: list[LayerReport]
    payload: Payload
    #: Decompressed / stored, for compressed values.
    ratio: float | None
    exact: bool = True
    reason: str | None = None
    #: How sure the reading is and why (payload.confidence); None for a value that did not decode.
    confidence: tuple[str, str] | None = None
    #: The format from outside that read the payload (a plugin, a command): where it comes from.
    reader: dict[str, Any] | None = None

    def to_json(self) -> dict[str, object]:
        return {**self.where, "stored_size": self.stored_size, "status": self.status,
                "chain": list(self.chain),
                "confidence": None if self.confidence is None else self.confidence[0],
                "confidence_why": None if self.confidence is None else self.confidence[1],
                "reader": self.reader,
                "decompressed_size": self.payload.size if self.status == COMPRESSED else None,
                "ratio": None if self.ratio is None else round(self.ratio, 4), "exact": self.exact,
                "reason": self.reason, "layers": [layer.to_json() for layer in self.layers],
                "payload": self.payload.to_json()}

    def render(self) -> list[str]:
        lines = [_title(self.where)]
        summary = f"  {STATUS_TITLES.get(self.status, self.status)}: stored {report.sized(self.stored_size)}"
        if self.status == COMPRESSED:
            size = self.payload.size
            approx = "" if self.exact else " (cut at the output cap)"
            summary += (
                f", decompressed {report.sized(size)}{approx}, ratio {report.ratio(self.ratio)}"
                f", chain {' > '.join(self.chain)}")
        if self.reason:
            summary += f" ({self.reason})"
        lines.append(summary)
        for n, layer in enumerate(self.layers, 1):
            lines.extend(_render_layer(n, layer))
        p = self.payload
        detail = f", {p.detail}" if p.detail else ""
        lines.append(f"  payload: {p.kind}, {report.sized(p.size)}{detail}")
        if self.confidence is not None:
            lines.append(f"  confidence: {self.confidence[0]} ({self.confidence[1]})")
        if self.reader is not None:
            version = f" {self.reader['version']}" if self.reader["version"] else ""
            lines.append(f"  read by: {self.reader['name']}, {self.reader['source']} "
                         f"{self.reader['package']}{version}")
        # A name, a header or a reason read from the stored value (a serialized class's name, a
        # file name in a header) may hold a newline: each line stays one line, so a value cannot
        # forge report lines. The preview is one row at any width, cut, never wrapped.
        preview = [OneRow(_escaped(f"    {p.preview}"))] if p.preview else []
        return [*(_escaped(line) for line in lines), *preview]


def inspect_value(
    value: bytes, where: dict[str, object], mode: str = "auto", cap: int = DEFAULT_CAP,
    spec: str | None = None,
) -> ValueReport:
    """The report for one stored value. Never raises: this is the last-resort boundary of one
    value, so whatever a decoder or a library raises (RecursionError, MemoryError, their own
    errors) becomes this value's one-line reason and the other values still print. Values whose
    outer layer's codec needs a worker are inspected in one (insight.isolate)."""
    try:
        if isolate.needs_worker(value, mode):  # a codec that needs a worker: memory-limited
            ok, result = isolate.call(_inspect, value, where, mode, cap, spec)
            return result if ok else unreadable(value, where, str(result))
        return _inspect(value, where, mode, cap, spec)
    except Exception as err:
        return unreadable(value, where, f"could not be inspected: {reason(err)}")


def unreadable(value: bytes, where: dict[str, object], why: str) -> ValueReport:
    """The report of a value whose inspection failed as a whole: its size, its first bytes, why."""
    preview = _hex_preview(value)
    return ValueReport(where, len(value), FAILED, (), [], Payload("binary", len(value), None, preview),
                       None, True, why)


def _inspect(value: bytes, where: dict[str, object], mode: str, cap: int,
             spec: str | None = None) -> ValueReport:
    from cqlsh_ext.payload.engine import ValueEngine

    # The engine's full trace: every container layer keeps its input and Decoded (their headers
    # and checksums are shown), and the payload read as every reader reads it.
    # A column setting (DECODE, --decode), when the value's column has one, reads it so.
    view = ValueEngine(mode, cap, spec).trace(value)
    status, _chain, size, exact, why = measured(view)
    layers = [_layer(fmt, layer.data_in or b"", layer.decoded, cap) for layer in view.layers
              if (fmt := layer.fmt) is not None and layer.decoded is not None]
    failed_format = view.failed_format
    if view.kind == FAILED and failed_format is not None:
        layers.append(_failed_layer(failed_format, value, view.reason, cap))
    if view.stream_format is not None:
        layers.append(_stream_layer(view.stream_format, view.data))
    shown = size if status == COMPRESSED else len(view.data)
    try:
        payload = _payload(view, shown)
    except Exception as err:  # a payload reader's failure costs the payload line, not the layers
        payload = Payload("not readable", shown, reason(err))
    return ValueReport(where, len(value), status, view.chain, layers, payload,
                       ratio(size, len(value)) if status == COMPRESSED else None, exact, why,
                       _confidence(view, layers), _reader(view))


def _reader(view: BlobView) -> dict[str, Any] | None:
    """Where the format that read the payload comes from, when it is from outside."""
    if view.payload_format is None:
        return None
    from cqlsh_ext.payload.formats._outside import origin

    found = origin(view.payload_format)
    return None if found is None else found.to_json()


def _confidence(view: BlobView, layers: list[LayerReport]) -> tuple[str, str] | None:
    """How sure the reading is (payload.confidence), and why; a layer whose checksums all verified
    here says so (INSPECT verifies them; the display's own decode does not report them)."""
    from cqlsh_ext.payload.confidence import view_explained

    found = view_explained(view)
    if found is None:
        return None
    good = (checksums.OK, checksums.BY_DECODER)
    verified = [layer.label for layer in layers
                if layer.checks and all(check.status in good for check in layer.checks)]
    if verified:
        return found[0], f"{found[1]}; checksums verified: {', '.join(verified)}"
    return found


def _layer(fmt: Container, data: bytes, decoded: Any, cap: int) -> LayerReport:
    return LayerReport(fmt.label, fmt.codec, fmt.container, fmt.grade, len(data), len(decoded.data),
                       decoded.declared_size, decoded.truncated, _headers(fmt, data, decoded.headers),
                       checksums.verify(fmt, data, decoded, cap), checksums.no_checksum_note(fmt))


#: Shown after a trailer field of a value that did not decode, when the checks could not reach its
#: trailer either.
NOT_A_TRAILER = "not verified: the last bytes of a value that is cut short or corrupt"


def _failed_layer(fmt: Container, data: bytes, reason: str | None, cap: int) -> LayerReport:
    headers = _headers(fmt, data, {})
    checks = checksums.verify(fmt, data, None, cap, reason)
    # A value that failed to decode may end anywhere: what sits where its trailer would be is a
    # trailer only when the checks found the end of the compressed data just before it (then they
    # compare it, ok or MISMATCH, below the header, and the field is shown as stored: one story).
    # Otherwise those bytes are shown as such; a ratio computed from them is no fact at all.
    verdicts = (checksums.OK, checksums.MISMATCH)
    reached = {_field_key(check.what) for check in checks if check.status in verdicts}
    for key in fmt.trailer_fields if isinstance(fmt, Headers) else ():
        if key == "ratio":
            headers.pop(key, None)
        elif key in headers and _field_key(key) not in reached:
            headers[key] = f"{headers[key]} ({NOT_A_TRAILER})"
    return LayerReport(fmt.label, fmt.codec, fmt.container, fmt.grade, len(data), None, headers=headers,
                       checks=checks, checks_note=checksums.no_checksum_note(fmt), error=reason)


def _field_key(name: str) -> str:
    """A header field's or a check's name compared as one: 'CRC32', 'member 1: CRC-32' -> 'crc32'."""
    return re.sub(r"[^a-z0-9]", "", name.rsplit(": ", 1)[-1].lower())


def _headers(fmt: Container, data: bytes, extra: dict[str, object]) -> dict[str, object]:
    try:
        headers = dict(fmt.headers(data)) if isinstance(fmt, Headers) else {}
    except DecodeError as err:
        headers = {"error": f"header not readable: {err}"}
    except Exception as err:  # a header walk must never cost the report
        headers = {"error": f"header not readable ({type(err).__name__})"}
    headers.pop("format", None)
    # Decoded.headers carries what only a decode learns (trailing bytes, LZ4Block checksum state).
    for key, value in extra.items():
        headers.setdefault(key, value)
    return headers


def _stream_layer(name: str, data: bytes) -> LayerReport:
    """The layer of a serialization stream (payload.formats.StreamLayer): its declared headers."""
    try:
        headers = _stream(name).headers(data)
    except Exception as err:  # a header walk must never cost the report
        headers = {"error": reason(err)}
    return LayerReport(name, name, "serialization", "A", len(data), len(data), headers=headers,
                       checks_note="none in this format")


def _stream(name: str) -> StreamLayer:
    from cqlsh_ext.payload import formats

    fmt = formats.get(name)
    assert fmt is not None and fmt.stream is not None  # the walk found it so
    return fmt.stream


def _payload(view: BlobView, size: int) -> Payload:
    """What the payload is, in INSPECT's words: the view's reading (text, a record, a stream's
    object, bytes), never read again here."""
    data = view.data
    if view.stream_format is not None and view.stream is not None:
        stream = _stream(view.stream_format)
        content = view.stream
        if content.text is None:
            name = f" {content.class_name}" if content.class_name else ""
            if view.kind != RECORD:
                return Payload(f"{stream.title} {content.kind}{name} (not deserialized)", size, view.reason)
            return Payload(f"{stream.title} {content.kind}{name}", size,
                           "read from the stream's grammar, never deserialized", _tree_preview(view.record))
        text = content.text
        return Payload(
            f"{stream.title} {content.kind} holding {_text_kind(view, view.cut or content.truncated)}",
            size, f"{len(text):,} characters", _preview(text))
    if view.kind == TEXT:
        text = view.text or ""
        return Payload(_text_kind(view, view.cut), size, f"{len(text):,} characters", _preview(text))
    if view.kind == RECORD:
        return Payload(view.reading or "record", size,
                       "decoded from the format's own structure, nothing executed",
                       _tree_preview(view.record))
    preview = _hex_preview(data)
    if view.kind == UNKNOWN and not view.quiet:
        # A payload reader stopped on it (a budget, a malformed record): the reason, never a
        # plain "binary" that would say nothing was tried.
        return Payload("not readable", size, view.reason, preview)
    kind = next((name for name, magic in _BINARY_MAGIC if data.startswith(magic)), None)
    return Payload(kind or "binary", size, None, preview)


def _hex_preview(data: bytes) -> str:
    """A payload shown as bytes: its first 48 in hex."""
    return "0x" + data[:48].hex() + (ELLIPSIS if len(data) > 48 else "")


def _text_kind(view: BlobView, truncated: bool) -> str:
    text = view.text or ""
    head = text.lstrip()[:1]
    if head in ("{", "["):
        if truncated:
            return "JSON (cut at the output cap)"
        value = view.tree  # parsed once, kept on the view
        if value is None:
            return _unread_json(view)
        return (
            "JSON object" if isinstance(value, dict) else "JSON array" if isinstance(value, list) else "JSON")
    if head == "<":
        return "XML/HTML text"
    return "text"


def _unread_json(view: BlobView) -> str:
    """A text that starts like JSON and is not read as JSON: past the value's budget (said so:
    it may well parse), or not JSON (json.loads refuses it)."""
    reason = view.json_past_budget
    if reason is not None:
        return f"text (starts like JSON, {reason}: past the value's budget, shown as stored)"
    return "text (starts like JSON, does not parse)"


def _escaped(text: str) -> str:
    """One line: control characters (newlines included) shown as escapes, the rest as is."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def _preview(text: str) -> str:
    return _escaped(text[:PREVIEW_CHARS]) + (ELLIPSIS if len(text) > PREVIEW_CHARS else "")


def _tree_preview(tree: Any) -> str:
    """The start of a record as the display writes it, rendered within a budget of the preview's
    characters: a record of megabytes is not written whole for one line."""
    from cqlsh_ext.payload.budget import Budget
    from cqlsh_ext.payload.formats.tree import render_cut

    text, _ = render_cut(tree, None, Budget(chars=PREVIEW_CHARS + 1))
    return _preview(text)


# ------------------------------------------------------------------------------------------- text


def _title(where: dict[str, object]) -> str:
    if "file" in where:
        return f"{where['file']}"
    parts = [f"row {where.get('row')}"]
    key = where.get("key")
    if isinstance(key, dict) and key:
        parts.append(" ".join(f"{k}={_short(v)}" for k, v in key.items()))
    parts.append(f"column {where.get('column')}")
    return "  ".join(parts)


def _short(value: object) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return shorten(text, 60)


def _value(value: object, key: str = "") -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "-"
    # Sizes get thousands separators; IDs, offsets and checksums stay as stored.
    if isinstance(value, int) and abs(value) >= 10000 and ("size" in key or "length" in key):
        return f"{value:,}"
    return str(value)


#: How sure the identification of a layer is, in the report's words (JSON keeps the letter,
#: codecs.base.Grade): a signature that decides, one a trial decode confirms, a trial decode alone,
#: or only when the codec is named.
GRADE_WORDS = {"A": "found by its signature", "B": "found by its signature and a trial decode",
               "C": "no signature: found by a trial decode",
               "D": "no signature: decoded as named (-d, DECOMPRESS)"}


def _render_layer(n: int, layer: LayerReport) -> list[str]:
    out = f"{report.sized(layer.output_size)}" if layer.output_size is not None else "not decoded"
    cut = ", cut at the output cap" if layer.truncated else ""
    declared = f" (declares {report.sized(layer.declared_size)})" if layer.declared_size is not None else ""
    lines = [
        f"  layer {n}: {layer.label} (codec {layer.codec}, container {layer.container}, "
        f"{GRADE_WORDS.get(layer.grade, 'grade ' + layer.grade)}): {report.sized(layer.input_size)} -> "
        f"{out}{declared}{cut}"]
    if layer.error:
        lines.append(f"    error: {layer.error}")
    lines.extend(_render_fields(layer.headers, "    "))
    if layer.checks:
        lines.append("    checksums:")
        for check in layer.checks:
            values = ""
            if check.stored is not None and check.computed is not None:
                values = f" (stored {check.stored}, computed {check.computed})"
            elif check.stored is not None:
                values = f" (stored {check.stored})"
            why = f": {check.detail}" if check.detail else ""
            lines.append(
                f"      {check.what}: {check.status.upper() if check.status == 'mismatch' else check.status}"
                f"{values}{why}")
    elif layer.checks_note:
        lines.append(f"    checksums: {layer.checks_note}")
    return lines


def _render_fields(fields: dict[str, object], indent: str) -> list[str]:
    scalars = [f"{k} {_value(v, k)}" for k, v in fields.items() if not isinstance(v, (list, dict))]
    # One line per group of fields: report.fit wraps it to the screen (after a comma), a pipe gets it whole.
    lines = [indent + ", ".join(scalars)] if scalars else []
    for key, value in fields.items():
        if isinstance(value, dict):
            lines.append(f"{indent}{key}:")
            lines.extend(_render_fields(value, indent + "  "))
        elif isinstance(value, list):
            lines.append(f"{indent}{key}: {len(value)}"
                         if value and isinstance(value[0], dict)
                         else f"{indent}{key}: {', '.join(_value(v) for v in value) or '-'}")
            if value and isinstance(value[0], dict):
                for i, entry in enumerate(value[:LIST_ENTRIES]):
                    flat = [
                        f"{k} {_value(v, k)}" for k, v in entry.items() if not isinstance(v, (list, dict))]
                    nested = [f"{k}: {len(v)}" for k, v in entry.items() if isinstance(v, (list, dict))]
                    lines.append(f"{indent}  #{i:<2} " + ", ".join(flat + nested))
                if len(value) > LIST_ENTRIES:
                    lines.append(f"{indent}  ... {len(value) - LIST_ENTRIES} more")
    return lines


