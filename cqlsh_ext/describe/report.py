"""DESCRIBE PAYLOAD's report: what the user reads (text laid out for the terminal's width) and what
tools read (one JSON document), from a Description (describe.description) and how it was read.

Every share is a share of a count the report prints beside it: an encoding's of the place's
values, a path's presence of the values that have a tree there (the JSON texts and records), a
type's of the path's occurrences. Read exactly (ALL, or the rows a WHERE names), shares are exact;
read from a sample, each comes with its 95 % interval for the whole table (scanning.estimate:
cluster sampling over the token-range slices read), and distinct counts and top values are the
sample's own. Text lines are built for the width they are written to and never exceed it (a
path's figures continue on the lines below it); 0 writes every line whole (pipes, files).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cqlsh_ext.common.text import plural, shorten
from cqlsh_ext.describe.description import DescribedPlace, Description
from cqlsh_ext.describe.sketch import Values
from cqlsh_ext.describe.structure import FOLDED, ITEMS, MAX_DEPTH, MAX_PATHS, MAX_VISITS, Node
from cqlsh_ext.payload.confidence import GUESSED
from cqlsh_ext.payload.view import KIND_TITLES, KINDS, UNKNOWN

#: Top values a text report names per path (the JSON document has them all).
TOP_SHOWN = 5
#: A path with at most this many distinct values shows them with their counts (a category).
TOP_DISTINCT = 20
#: A value in a text report: at most this many characters (with its count, a field fits 80 columns).
VALUE_TEXT = 32
#: A column narrower than this leaves its text to the lines below.
MIN_TEXT = 24
#: How each kind is named in the encodings' table: as every report names it.
KIND_TEXT = KIND_TITLES


@dataclass
class Reading:
    """How the rows were read: `mode` "all" (every row), "sample" or "named" (the rows a WHERE on
    columns names), `why` that reading (the statement said so, or the table's size), the time
    it took and how the table was read (`scan`), and the sample (a scanning.sample.SliceSampler)."""

    mode: str
    why: str
    seconds: float = 0.0
    sample: Any = None
    retried: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Share:
    """A share of a count; `low`/`high`: its 95 % interval when read from a sample."""

    count: int
    whole: int
    estimate: float | None
    low: float | None = None
    high: float | None = None

    def text(self, compact: bool = False) -> str:
        """'12.5 %'; from a sample '12.5 % (10.1-14.9)', or `compact` '12.5 % +-2.4' (half the
        interval's width: a tree's columns stay narrow)."""
        if self.estimate is None:
            return "-"
        shown = f"{100 * self.estimate:.1f} %"
        if self.low is not None and self.high is not None:
            shown += (f" +-{50 * (self.high - self.low):.1f}" if compact
                      else f" ({100 * self.low:.1f}-{100 * self.high:.1f})")
        return shown

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"count": self.count,
                               "share": None if self.estimate is None else round(self.estimate, 6)}
        if self.low is not None and self.high is not None:
            out["interval"] = [round(self.low, 6), round(self.high, 6)]
        return out


class Report:
    """The report of one DESCRIBE PAYLOAD (see the module doc)."""

    def __init__(self, target: str, column_type: str, description: Description, reading: Reading,
                 where: str | None = None, hint_place: Callable[[DescribedPlace], str] | None = None) -> None:
        self.target = target
        self.column_type = column_type
        self.d = description
        self.reading = reading
        self.where = where
        #: The DECODE place of a place ('ks.t.data', 'ks.t.m.value'), for the one-line hint.
        self.hint_place = hint_place
        self.sample = reading.sample
        self._slices: list[dict[tuple[str, ...], int]] = list(self.sample.done) if self.sample else []

    # ------------------------------------------------------------------ figures

    def share(self, count: int, whole: int, key: tuple[str, ...], of: tuple[str, ...]) -> Share:
        """count / whole, with its interval from the sample's slices (`key` over `of`) if any."""
        if not whole:
            return Share(count, whole, None)
        if self.sample is None:
            return Share(count, whole, count / whole)
        from cqlsh_ext.scanning import estimate

        interval = estimate.share([float(s.get(key, 0)) for s in self._slices],
                                  [float(s.get(of, 0)) for s in self._slices], self.sample.slices)
        return Share(count, whole, count / whole, interval.low, interval.high)

    def encodings(self, place: DescribedPlace) -> list[tuple[str, str, bool, str | None, Share]]:
        """(label, kind, cut, confidence, share of the place's values), most values first, then by
        label."""
        rows = []
        for (kind, label, cut, sure), n in place.encodings.items():
            key = ("encoding", place.name, kind, label, "cut" if cut else "")
            rows.append((label, kind, cut, sure, self.share(n, place.values, key, ("values", place.name))))
        rows.sort(key=lambda r: (-r[4].count, KINDS.index(r[1]), r[0], r[2]))
        return rows

    def presence(self, place: DescribedPlace, path: str, node: Node) -> Share:
        trees = place.structure.values
        return self.share(node.present, trees, ("present", place.name, path), ("trees", place.name))

    def types(self, place: DescribedPlace, path: str, node: Node) -> list[tuple[str, Share]]:
        out = [(name, self.share(n, node.seen, ("type", place.name, path, name), ("seen", place.name, path)))
               for name, n in node.types.items()]
        out.sort(key=lambda t: (-t[1].count, t[0]))
        return out

    # ------------------------------------------------------------------ text

    def render(self, width: int = 0) -> list[str]:
        d = self.d
        lines = self._heading()
        if not d.places:
            lines.append("")
            if d.matched:
                lines.append(f"{self.d.column}: every value read is null")
            else:
                lines.append("no value to describe: " + ("no row matched the WHERE" if self.where
                                                         else "no row read"))
        for place in sorted(d.places.values(), key=lambda p: (-p.values, p.name)):
            lines.append("")
            lines.extend(self._place_lines(place, width))
        return _fitted(lines, width)

    def _heading(self) -> list[str]:
        d, reading = self.d, self.reading
        # A read cut short says so first: its counts are those of the rows read, not of every row.
        stopped = "INTERRUPTED" if d.interrupted else "STOPPED BY AN ERROR" if d.error else None
        if reading.mode == "sample":
            what = "a sample, every share with its 95 % interval for the whole table"
            if stopped:
                what = f"{stopped}: a smaller sample than asked, every share with its 95 % interval"
        elif stopped:
            what = f"{stopped}: only the rows read, exact counts of those"
        elif reading.mode == "named":
            what = "the rows the WHERE names, exact counts"
        else:
            what = "every row, exact counts"
        lines = [f"DESCRIBE PAYLOAD {self.target}: {what} ({reading.why})"]
        read = f"  {plural(d.read, 'row')} read in {reading.seconds:.1f} s"
        if d.scan:
            read += f" ({d.scan})"
        sample = self.sample
        if sample is not None:
            m, total = len(sample.done), sample.slices
            read += (f"; {plural(m, 'random token-range slice')} of {total:,} "
                     f"({100 * m / total:.2g} % of the ring), seed {sample.seed}")
            from cqlsh_ext.scanning import estimate

            rows = estimate.total([float(s.get(("rows",), 0)) for s in self._slices], total)
            if rows.estimate is not None and rows.low is not None and rows.high is not None:
                read += f"; rows in the table: about {rows.estimate:,.0f} ({rows.low:,.0f}-{rows.high:,.0f})"
        lines.append(read)
        for name, n in sorted(reading.retried.items()):
            lines.append(f"  retried {plural(n, 'time')} after {name}")
        if self.where is not None:
            matched = self.share(d.matched, d.read, ("matched",), ("rows",))
            line = (f"  WHERE {self.where}: {d.matched:,} of {plural(d.read, 'row')} matched "
                    f"({matched.text()})")
            if d.where_unread:
                line += f"; {plural(d.where_unread, 'value')} the WHERE could not read (undecodable or cut)"
            lines.append(line)
            for path, nearest, seen in d.paths.never_found():
                named = nearest or seen[:6]
                lines.append(f"  no value read has {path}" + (
                    f" (nearest keys seen there: {', '.join(named)})" if nearest else
                    f" (keys seen there: {', '.join(named)})" if named else ""))
        if d.interrupted:
            lines.append(f"  INTERRUPTED (Ctrl-C): the report covers the {plural(d.read, 'row')} read")
        if d.error:
            lines.append(f"  STOPPED BY AN ERROR: {d.error}; the report covers the "
                         f"{plural(d.read, 'row')} read")
        return lines

    def _place_lines(self, place: DescribedPlace, width: int) -> list[str]:
        d = self.d
        nulls = f", {d.nulls:,} rows without one" if d.nulls and len(d.places) == 1 else ""
        lines = [f"{place.name} ({self.column_type}): {plural(place.values, 'value')}{nulls}"]
        if place.key_kinds:
            keys = place.keys.distinct() if place.keys is not None else None
            approx = "" if place.keys is None or place.keys.exact else "about "
            kinds = ", ".join(f"{kind} {n:,}"
                              for kind, n in sorted(place.key_kinds.items(), key=lambda kv: (-kv[1], kv[0])))
            lines.append(f"  map keys folded here: {kinds}"
                         + (f"; {approx}{keys:,} distinct" if keys else ""))
        encodings = self.encodings(place)
        rows = [[label or "-", KIND_TEXT[kind] + (", cut" if cut else ""), sure or "-", f"{share.count:,}",
                 share.text()] for label, kind, cut, sure, share in encodings if sure != GUESSED]
        header = ["encoding", "kind", "how sure", "values", "share"]
        lines.extend(_table(rows, header, right=(3,), width=width))
        guessed = [(label, share) for label, _kind, _cut, sure, share in encodings if sure == GUESSED]
        if guessed:
            lines.append(f"  guessed, not shown above ({plural(sum(s.count for _, s in guessed), 'value')}: "
                         "a trial that passed weak tests; DECODE ... AS makes them sure): "
                         + ", ".join(f"{label} {share.count:,}" for label, share in guessed))
        for reason, n in sorted(place.reasons.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"  {plural(n, 'value')}: {reason}")
        hint = self._hint(place)
        if hint:
            lines.append(hint)
        structure = place.structure
        if not structure.values:
            lines.append("  no structure: no value is JSON or a record")
            return lines
        lines.append("")
        lines.append(f"  structure of the {plural(structure.values, 'value')} that are JSON or a record; "
                     "present: the share of those that have the path")
        lines.extend(self._tree(place, width))
        for note in self._bounds(place):
            lines.append(f"  {note}")
        return lines

    def _hint(self, place: DescribedPlace) -> str:
        """One line for values in no known format: the DECODE setting that would read them."""
        unknown = sum(n for (kind, _label, cut, _sure), n in place.encodings.items()
                      if kind == UNKNOWN and not cut)
        if not unknown or self.hint_place is None:
            return ""
        from cqlsh_ext.payload.names import EXAMPLE_SPEC

        spot = self.hint_place(place)
        return (f"  hint: {plural(unknown, 'value')} in no known format: if you know what they hold, "
                f"DECODE '{spot}' AS '{EXAMPLE_SPEC}' (or --decode {spot}={EXAMPLE_SPEC}) reads them so")

    def _bounds(self, place: DescribedPlace) -> list[str]:
        s = place.structure
        notes = []
        if s.untracked:
            notes.append(f"{plural(s.untracked, 'occurrence')} past the {MAX_PATHS:,} paths tracked, not "
                         "described")
        if s.unfinished:
            notes.append(f"{plural(s.unfinished, 'value')} walked to {MAX_VISITS:,} nodes only")
        if s.too_deep:
            notes.append(f"{plural(s.too_deep, 'value')} nested deeper than {MAX_DEPTH} levels: not "
                         "described below")
        return notes

    def _tree(self, place: DescribedPlace, width: int) -> list[str]:
        rows: list[tuple[str, str, list[str]]] = []
        for path, depth, step, node in place.structure.walk(place.name):
            name = "  " * depth + (step if depth == 0 else _step_text(step))
            rows.append((name, self.presence(place, path, node).text(compact=True),
                         self._details(place, path, node)))
        name_w = max(len(r[0]) for r in rows)
        present_w = max(len(r[1]) for r in rows)
        lines = []
        indent = "  "
        if width:
            name_w = min(name_w, max(12, (width - len(indent) - present_w - 4) * 2 // 5))
        head = f"{indent}{'path':<{name_w}}  {'present':>{present_w}}  types, values"
        lines.append(head)
        for name, present, details in rows:
            if width and len(name) > name_w:  # a long path on a line of its own
                lines.append(indent + name)
                name = ""
            start = f"{indent}{name:<{name_w}}  {present:>{present_w}}  "
            lines.extend(_wrapped(start, details, width, len(indent) + 4))
        return lines

    def _details(self, place: DescribedPlace, path: str, node: Node) -> list[str]:
        parts = []
        types = self.types(place, path, node)
        if len(types) == 1 and types[0][1].estimate == 1.0:
            parts.append(types[0][0])
        else:
            parts.extend(f"{name} {share.text(compact=True)}" for name, share in types)
        if node.key_kinds:
            kinds = " and ".join(k for k, _ in sorted(node.key_kinds.items(), key=lambda kv: (-kv[1], kv[0])))
            parts.append(f"keys: {kinds}" + (f" ({_distinct(node.keys)})" if node.keys is not None else ""))
        if node.lists:
            mean = f" (mean {node.list_total / node.lists:.1f})" if node.list_min != node.list_max else ""
            parts.append(f"length {_span(node.list_min, node.list_max)}{mean}")
        values = node.values
        top = values.most_common() if values is not None else []
        # A category: few distinct values, not each seen once.
        if top and len(top) <= TOP_DISTINCT and not (len(top) > 1 and all(n == 1 for _, n in top)):
            shown = [f"{_value(v)}: {n:,}" for v, n in top[:TOP_SHOWN]]
            if len(top) > TOP_SHOWN:
                shown.append(f"{len(top) - TOP_SHOWN} more")
            shown[0] = "values " + shown[0]
            parts.extend(shown)
        elif values is not None:
            parts.append(_distinct(values, node.seen) + (" in the sample" if self.sample is not None else ""))
        if node.strings:
            parts.append(f"length {_span(node.str_min, node.str_max)}")
        if node.low is not None:
            parts.append(f"min {_value(node.low)}, max {_value(node.high)}" if node.low != node.high
                         else f"always {_value(node.low)}")
        return parts

    # ------------------------------------------------------------------ JSON

    def to_json(self) -> dict[str, Any]:
        d, reading = self.d, self.reading
        doc: dict[str, Any] = {
            "describe": self.target,
            "column_type": self.column_type,
            "reading": {"mode": reading.mode, "why": reading.why, "scan": d.scan,
                        "seconds": round(reading.seconds, 3), "retried": dict(reading.retried)},
            "rows_read": d.read,
            "rows_without_value": d.nulls,
            "interrupted": d.interrupted,
            "error": d.error,
        }
        if self.sample is not None:
            s = self.sample
            doc["reading"]["sample"] = {"slices_read": len(s.done), "slices": s.slices, "seed": s.seed,
                                        "stopped": s.stopped, "partitions_estimate": s.server_partitions,
                                        "partitions_basis": s.partitions_basis}
        if self.where is not None:
            doc["where"] = {"conditions": self.where, "rows_matched": d.matched,
                            "values_unread": d.where_unread,
                            "paths_not_found": [{"path": p, "nearest": n, "keys_seen": k}
                                                for p, n, k in d.paths.never_found()]}
        places = sorted(d.places.values(), key=lambda p: (-p.values, p.name))
        doc["places"] = [self._place_json(p) for p in places]
        return doc

    def _place_json(self, place: DescribedPlace) -> dict[str, Any]:
        s = place.structure
        out: dict[str, Any] = {
            "place": place.name,
            "values": place.values,
            "encodings": [{"label": label, "kind": kind, "cut": cut, "confidence": sure, **share.to_json()}
                          for label, kind, cut, sure, share in self.encodings(place)],
            "guessed_values": sum(n for (_k, _l, _c, sure), n in place.encodings.items() if sure == GUESSED),
            "reasons": dict(sorted(place.reasons.items())),
            "structured_values": s.values,
            "bounds": {"untracked_occurrences": s.untracked, "values_walked_in_part": s.unfinished,
                       "values_too_deep": s.too_deep, "paths": s.paths, "max_paths": MAX_PATHS},
        }
        if place.key_kinds:
            out["map_keys"] = {"kinds": dict(sorted(place.key_kinds.items())),
                               **(_distinct_json(place.keys) if place.keys is not None else {})}
        hint = self._hint(place)
        if hint:
            out["hint"] = hint.strip()
        out["paths"] = [self._path_json(place, path, depth, node)
                        for path, depth, _step, node in s.walk(place.name)]
        return out

    def _path_json(self, place: DescribedPlace, path: str, depth: int, node: Node) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": path, "depth": depth, "present": self.presence(place, path, node).to_json(),
            "occurrences": node.seen,
            "types": {name: share.to_json() for name, share in self.types(place, path, node)}}
        if node.strings:
            out["string_length"] = _lengths_json(node.strings, node.str_min, node.str_max, node.str_total)
        if node.lists:
            out["list_length"] = _lengths_json(node.lists, node.list_min, node.list_max, node.list_total)
        if node.low is not None:
            out["numbers"] = {"min": _json_value(node.low), "max": _json_value(node.high)}
        if node.values is not None:
            out.update(_distinct_json(node.values, node.seen))
            top = node.values.most_common()
            if top:
                out["values"] = [{"value": _json_value(v), "count": n} for v, n in top]
        if node.key_kinds:
            out["keys"] = {"kinds": dict(sorted(node.key_kinds.items())),
                           **(_distinct_json(node.keys) if node.keys is not None else {})}
        return out


def _step_text(step: str) -> str:
    from cqlsh_ext.query.grammar import spell_key

    return step if step in (ITEMS, FOLDED) else spell_key(step)


def _span(least: int, most: int) -> str:
    return f"{least:,}" if least == most else f"{least:,}-{most:,}"


def _distinct(values: Values, seen: int | None = None) -> str:
    n = _estimate(values, seen)
    return f"{n:,} distinct" if values.exact else f"about {n:,} distinct"


def _distinct_json(values: Values, seen: int | None = None) -> dict[str, Any]:
    return {"distinct": _estimate(values, seen), "distinct_exact": values.exact}


def _estimate(values: Values, seen: int | None) -> int:
    """The distinct count, never more than the `seen` values it was counted over (the sketch's
    estimate can overshoot by its error: 2,021 distinct ids among 2,000 values would be a lie)."""
    n = values.distinct()
    return n if seen is None else min(n, seen)


def _lengths_json(n: int, least: int, most: int, total: int) -> dict[str, Any]:
    return {"min": least, "max": most, "mean": round(total / n, 3) if n else None}


def _value(value: Any) -> str:
    """A value as the report names it: strings quoted as JSON quotes them, numbers as JSON writes
    them, true, false, null; at most VALUE_TEXT characters."""
    from cqlsh_ext.common import jsonenc

    plain = _json_value(value)
    text = jsonenc.string(plain) if isinstance(plain, str) and isinstance(value, str) else \
        jsonenc.dumps(plain) if not isinstance(plain, str) else plain
    return shorten(text, VALUE_TEXT)


def _json_value(value: Any) -> Any:
    """A value in a JSON document: JSON's own types as they are (an integer too large for decimal
    digits in hex, as payload.formats.tree writes it), others as cqlsh-ext's JSON spells them."""
    from cqlsh_ext.common.jsonenc import leaf
    from cqlsh_ext.payload.formats.tree import DECIMAL_BITS, int_text

    if value is None or isinstance(value, (bool, str, float)):
        return value
    if isinstance(value, int):
        return value if value.bit_length() <= DECIMAL_BITS else int_text(value)
    return leaf(value)


def _wrapped(start: str, items: list[str], width: int, hang: int) -> list[str]:
    """`start` then `items` joined by ', ', continuing on the lines below under the first item (or
    `hang` columns in when that leaves less than MIN_TEXT), a line broken only between items; an
    item wider than a line is cut with '…'. Every line at most `width` (0: one line)."""
    text = ", ".join(items)
    if not width or len(start) + len(text) <= width:
        return [(start + text).rstrip()]
    column = len(start) if width - len(start) >= MIN_TEXT else hang
    lines = []
    line = start
    if column != len(start):  # the items under the line, hanging
        lines.append(start.rstrip())
        line = " " * column
    room = width - column
    for k, item in enumerate(items):
        piece = item if k == len(items) - 1 else item + ","
        if len(piece) > room:
            piece = shorten(piece, room)
        if len(line) > column and len(line) + 1 + len(piece) > width:
            lines.append(line)
            line = " " * column + piece
        else:
            line += (" " if len(line) > column else "") + piece
    lines.append(line.rstrip())
    return lines


def _table(rows: list[list[str]], header: list[str], right: Sequence[int], width: int) -> list[str]:
    """An aligned table (two spaces between columns), its first column narrowed to fit `width`:
    a label longer than that on a line of its own."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    indent = "  "
    if width:
        rest = sum(widths[1:]) + 2 * (len(widths) - 1) + len(indent)
        widths[0] = max(8, min(widths[0], width - rest))
    lines = []
    for row in [header, *rows]:
        first = row[0]
        if width and len(first) > widths[0]:
            lines.append(indent + first)
            first = ""
        cells = [first.ljust(widths[0])]
        cells += [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row[1:], widths[1:],
                                                                                             strict=True), 1)]
        lines.append((indent + "  ".join(cells)).rstrip())
    return lines


def _fitted(lines: list[str], width: int) -> list[str]:
    """Lines of prose (the heading, notes) wrapped at the width; built lines are already within it."""
    from cqlsh_ext.common.text import fit

    return list(fit(lines, width))
