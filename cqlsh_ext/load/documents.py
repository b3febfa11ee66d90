"""What a source's document means, against the one stored (docs/load.md, "What is written"): the one
rule by which a load writes what the user meant, field for field.

A source spells a document as the exports spell it, which is not always as it is stored: Arrow (a
Parquet file, db.write's Arrow, pandas or polars frame) types a place by the union of the
documents' keys, so a key a document lacks is a null field, an integer in a float place is a float
(2.0), a value that did not fit its place is null (its note says so); a record's bytes, times and
tags are JSON text's spellings of them (`"0x..."`, ISO 8601, `{"$tag": ...}`). What the source
cannot say is taken from the stored document, the row's value in the table or the stored bytes the
source carries beside the payload (a RAW export's `data:stored`, JSON Lines' `"raw"`):

- a place whose value is the exports' spelling of the stored one (`equivalent`) is the stored
  value, exactly: an untouched document is the stored document, and a one-field fix changes that
  field only (its other keys, their order, their types as stored);
- in a frame, a null field where the stored document has no such key is that key absent; a null
  where the export could not fit the stored value (the row's note says "did not fit") is the
  stored value; a field the frame has no place for is the stored one;
- anything else is the source's value as it spells it (`fresh`); a frame's null field where no
  stored document has the key is absent ("a frame's null in a field the document never had").

JSON Lines' own documents (a JSON text, an object that is no export's) and CSV texts are written as
they are: JSON says what is absent and what is null. A frame's document written back into a stored
JSON text keeps the stored spelling of each value it leaves as stored (`spelt_tree`: `0.10`,
`1E5`, `7.0700000000000000001`, a string's escapes), as JSON Lines keeps the line's text.
"""

from __future__ import annotations

import decimal
import re
from typing import Any

from cqlsh_ext.common import jsonenc
from cqlsh_ext.load.source import Fragment
from cqlsh_ext.payload.arrow_types import json_text
from cqlsh_ext.payload.json_text import StoredFloat, StoredInt

#: A key a document does not have (not null: absent).
MISSING: Any = object()
_NUMBERS = (int, float, decimal.Decimal)
#: Leaves whose equality is their value's (a float's: but NaN, below).
_EXACT = frozenset({str, int, bool, bytes})


class StoredStr(str):
    """A stored JSON text's string, with its literal as stored (quotes and escapes: `"caf\\u00e9"`)."""

    spelling: str

    def __new__(cls, value: str, spelling: str) -> StoredStr:
        found = super().__new__(cls, value)
        found.spelling = spelling
        return found


#: The leaves spelt_tree gives: a JSON text's writer (load.encoded_values.json_text) writes each
#: as its `spelling`.
SPELT = (StoredFloat, StoredInt, StoredStr)


def spelt_tree(text: str) -> Any:
    """A stored JSON text's tree as Python's json reads it (a key given twice: its last value), each
    number and string value a SPELT leaf holding its text as stored, so that the values a frame's
    edit leaves as stored are written back as they were spelt, not respelt from their values; None
    when the text is not JSON (or too deep to read). Read only for a document an edit changed: by
    the C scanner where the text holds no escape (its strings are spelt as json_text spells them),
    else by Python's own (the C one takes no string hook)."""
    global _NUMBERS_SPELT, _ALL_SPELT
    if "\\" not in text:
        if _NUMBERS_SPELT is None:
            import json

            _NUMBERS_SPELT = json.JSONDecoder(parse_float=StoredFloat, parse_int=StoredInt)
        decoder = _NUMBERS_SPELT
    else:
        if _ALL_SPELT is None:
            _ALL_SPELT = _python_spelt()
        decoder = _ALL_SPELT
    try:
        return decoder.decode(text)
    except (ValueError, RecursionError):
        return None


_NUMBERS_SPELT: Any = None
_ALL_SPELT: Any = None


def _python_spelt() -> Any:
    """Python's own JSON scanner, each number and string a SPELT leaf."""
    import json
    import json.scanner
    from _json import scanstring  # json.decoder's, the C one (json's own import of it)

    def spelt_string(s: str, end: int, strict: bool = True) -> tuple[str, int]:
        value, last = scanstring(s, end, strict)
        return StoredStr(value, s[end - 1:last]), last

    # (Any: the scanner's hooks are attributes json's decoder sets itself, undeclared in its stub)
    decoder: Any = json.JSONDecoder(parse_float=StoredFloat, parse_int=StoredInt)
    decoder.parse_string = spelt_string
    scanner: Any = json.scanner
    decoder.scan_once = scanner.py_make_scanner(decoder)
    return decoder


def settled(stored: Any, spelt: Any, given: Any, frame: bool, misfit: bool, whole: bool = False) -> Any:
    """The document to write: `given` (the source's document) against `stored` (the stored
    document, as its format's reader gives it) and `spelt` (the exports' spelling of it: what an
    untouched source holds); `frame`: an Arrow or pandas document (a null field may be a key
    absent), `misfit`: the source's row says a place of it did not fit (see the module doc),
    `whole`: a pandas dict, which holds every key of its document (a key it lacks is removed).
    Where every place is the stored one, the stored object itself (`is`): one walk of the tree."""
    if isinstance(given, dict) and isinstance(stored, dict) and isinstance(spelt, dict) \
            and all(type(k) is str for k in stored):
        out: dict[str, Any] = {}
        kept = True
        for key, value in stored.items():
            if key in given:
                found = settled(value, spelt.get(key, MISSING), given[key], frame, misfit, whole)
            else:  # a frame with no field for it: as stored; a JSON object, a pandas dict without it: removed
                found = value if frame and not whole else MISSING
            kept = kept and found is value
            if found is not MISSING:
                out[key] = found
        for key, value in given.items():
            if key not in stored and not (frame and value is None):
                out[str(key)] = fresh(value, frame)
                kept = False
        return stored if kept else out
    if isinstance(given, list) and isinstance(stored, list) and isinstance(spelt, list) \
            and len(given) == len(stored) == len(spelt):
        items = [settled(s, e, g, frame, misfit, whole) for s, e, g in zip(stored, spelt, given, strict=True)]
        return stored if all(a is b for a, b in zip(items, stored, strict=True)) else items
    if equivalent(given, spelt, frame):
        return stored
    if given is None and misfit and stored is not MISSING and stored is not None:
        return stored  # the export could not fit it: null in the frame, the value in data:stored
    return fresh(given, frame)


_PLACE = re.compile(r"\[([0-9]+)\]")


def without(document: Any, paths: tuple[str, ...]) -> Any:
    """`document` with the places `paths` name removed (a frame's `:absent` column: `status`,
    `customer.tier`, `items[1].qty`: keys by `.`, list items by `[n]`), copied where it changes;
    a place it does not have is absent already. ValueError for a path that is no place's."""
    for path in paths:
        steps: list[str | int] = []
        for part in path.split("."):
            name, _, rest = part.partition("[")
            indexes = _PLACE.findall("[" + rest) if rest else []
            if not name or (rest and "".join(f"[{i}]" for i in indexes) != "[" + rest):
                raise ValueError(f"{path!r} is no path of a document's place (customer.tier, items[1].qty)")
            steps.append(name)
            steps.extend(int(i) for i in indexes)
        document = _without(document, steps)
    return document


def _without(value: Any, steps: list[str | int]) -> Any:
    step, rest = steps[0], steps[1:]
    if isinstance(step, str) and isinstance(value, dict) and step in value:
        if not rest:
            return {k: v for k, v in value.items() if k != step}
        inner = _without(value[step], rest)
        return value if inner is value[step] else {**value, step: inner}
    if isinstance(step, int) and isinstance(value, list) and step < len(value) and rest:
        inner = _without(value[step], rest)
        return value if inner is value[step] else [*value[:step], inner, *value[step + 1:]]
    return value




def holds_float_names(value: Any) -> bool:
    """Whether a record's tree holds a string naming NaN or an infinity anywhere."""
    if isinstance(value, str):
        return value in jsonenc.FLOAT_NAMES
    if isinstance(value, dict):
        return any(holds_float_names(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(holds_float_names(v) for v in value)
    return False


def fresh(value: Any, frame: bool, dropped: list[bool] | None = None) -> Any:
    """The source's value as it spells it, a frame's null fields left out (a key absent; noted in
    `dropped` where one was)."""
    if not frame:
        return value
    if isinstance(value, dict):
        out = {key: fresh(item, frame, dropped) for key, item in value.items() if item is not None}
        if dropped is not None and len(out) != len(value):
            dropped.append(True)
        return out
    if isinstance(value, list):
        return [fresh(item, frame, dropped) for item in value]
    return value


def equivalent(given: Any, spelt: Any, frame: bool) -> bool:
    """Whether the source's `given` is the exports' spelling `spelt` of a stored value: equal, a
    number of the same value (2.0 in a float place for 2; NaN for NaN), a JSON text place's text
    (an `arrow.json` field, or its text where pandas or polars lost the type), a frame's null where
    the key is absent, a frame's struct without a field the stored record has."""
    kind = type(given)
    if kind is type(spelt) and kind in _EXACT:  # (the common case, first)
        if given == spelt:
            return True
        if kind is not str:  # (a string may be a JSON text place's, below)
            return False
    if spelt is MISSING:
        return given is None and frame
    if given is None or spelt is None:
        return given is None and spelt is None
    if isinstance(given, Fragment):
        return str(given) == json_text(spelt)
    if isinstance(given, bool) or isinstance(spelt, bool):
        return type(given) is type(spelt) and given == spelt
    if isinstance(given, _NUMBERS) and isinstance(spelt, _NUMBERS):
        return bool(given == spelt) or (given != given and spelt != spelt)
    if isinstance(given, str):
        if given == spelt or (isinstance(spelt, float) and given == jsonenc.float_name(spelt)):
            return True  # (JSON Lines spells NaN and the infinities by name)
        return frame and given == json_text(spelt)
    if isinstance(given, dict):
        if not isinstance(spelt, dict) or not (frame or given.keys() == spelt.keys()):
            return False
        return all(equivalent(value, spelt.get(key, MISSING), frame) for key, value in given.items())
    if isinstance(given, list | tuple):
        if isinstance(spelt, dict) and given and all(isinstance(p, tuple) and len(p) == 2 for p in given):
            return equivalent(dict(given), spelt, frame)  # an Arrow map's pairs
        return isinstance(spelt, list) and len(given) == len(spelt) and all(
            equivalent(g, s, frame) for g, s in zip(given, spelt, strict=True))
    return bool(given == spelt)
