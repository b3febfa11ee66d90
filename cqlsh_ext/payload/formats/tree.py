"""The decoded structure of a binary payload, and how people and scripts read it.

Decoders turn a payload into plain Python values (dict, list, str, int, float, bool, None,
bytes) plus the few types below for what JSON lacks. `render` writes readable JSON-like text
(compact for a table cell, indented under EXPAND); `jsonable` gives a structure json.dumps writes
(leaves spelled by cqlsh_ext.common.jsonenc, the one JSON spelling: bytes "0x...", times ISO 8601 UTC
with a Z, NaN and infinities by name; integers exact, tags and symbols as marked objects). Both
walk within the value's budget (payload.budget): a shared node costs each time it appears, and a
value past the budget is cut where the walk stopped, with the reason.
"""

from __future__ import annotations

import datetime
import decimal
import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cqlsh_ext.common import jsonenc
from cqlsh_ext.common.long_int import PAST_PYTHON_DIGITS, LongInt
from cqlsh_ext.payload.budget import Budget, BudgetExceeded, Meter, current


@dataclass(frozen=True)
class Tagged:
    """A value with a format's semantic tag the display does not interpret (a tag for a
    regular expression, never compiled; an object id; ...)."""

    tag: str
    value: Any


@dataclass(frozen=True)
class Symbol:
    """What a serialization stream would have called or built: `module.name(args)`. Shown, never
    executed."""

    text: str


@dataclass(frozen=True)
class Cut:
    """Where a decoder stopped descending (a level past the budget's depth): rendered "…", and the
    value is reported cut with `reason`."""

    reason: str


class Alike:
    """A map key Python's dict takes for an earlier key of the same map, kept as a key of its own:
    a MessagePack map may hold the integer 1, the float 1.0 and true (1 == 1.0 == True in Python,
    one key of a dict). Equal only to a key of the same type and value; shown as that value."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Alike) and type(other.value) is type(self.value)
                and bool(other.value == self.value))

    def __hash__(self) -> int:
        return hash((type(self.value).__name__, self.value))

    def __repr__(self) -> str:
        return f"Alike({self.value!r})"


def pairs_kept(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """A map's (key, value) pairs as a dict, as dict(pairs) builds it (a key said twice keeps its
    first place and its last value), but a key Python takes for an earlier one of another type
    (1.0 or true after 1) kept as an Alike key of its own, not its value lost."""
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    out = {}
    placed: dict[tuple[type, Any], Any] = {}  # each (type, key) met: the key it is in `out`
    for key, value in pairs:
        slot = placed.get((type(key), key))
        if slot is None:
            slot = placed[(type(key), key)] = Alike(key) if key in out else key
        out[slot] = value
    return out


class PayloadError(ValueError):
    """A payload that does not decode as the named format; str() is the one-line reason."""


class OverBudget(PayloadError):
    """A decoder stopped by the value's budget before it could tell the value is well-formed: the
    value stays hex, with this as its reason, even when it was only being detected."""


def read_varint(data: bytes, pos: int, fmt: str) -> tuple[int, int]:
    """An unsigned base-128 varint at `pos` (Protocol Buffers, and a zig-zag varint under it):
    (value, position after it); at most 64 bits."""
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise PayloadError(f"{fmt}: truncated or overlong number")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def int_text(value: int) -> str:
    """Decimal digits, or hex for integers past Python's default 4,300-digit conversion limit (a
    hostile bignum must not stop the display), whatever this process's limit is now; a document's
    long integer (common.long_int.LongInt, within its value's budget) as the document writes it."""
    if isinstance(value, LongInt):
        return value.text
    if value.bit_length() <= DECIMAL_BITS or abs(value) < PAST_PYTHON_DIGITS:
        return str(value)
    return f"{'-' if value < 0 else ''}0x{abs(value):x}"


#: Integers of at most this many bits have at most 4,300 decimal digits: int_text writes them in
#: decimal, decimal_text converts them (decimal.Decimal(int) takes time quadratic in the digits:
#: a 300 KB number takes 20 s, one of this size well under a millisecond).
DECIMAL_BITS = 14_000


@functools.cache
def _exact() -> decimal.Context:
    # No rounding: a BigDecimal of 40 digits shows its 40 digits, not the default context's 28.
    return decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def decimal_text(unscaled: int, exponent: int) -> str:
    """unscaled x 10^exponent exactly, as Python's decimal writes it ('19.99', '1.2345E+7'): the
    decimals of the record formats (BigDecimal, decimal fractions, decimal logical types). Numbers
    past DECIMAL_BITS, or with an exponent decimal cannot hold, as `<int_text digits>E<exponent>`."""
    if unscaled.bit_length() <= DECIMAL_BITS:
        try:
            return str(decimal.Decimal(unscaled).scaleb(exponent, _exact()))
        except ArithmeticError:  # decimal's Overflow and InvalidOperation: an exponent past its range
            pass
    return f"{int_text(unscaled)}E{exponent}"


def charged_text(meter: Meter, *parts: str) -> str:
    """Text joined from a record's parts, charged to the value's meter before it is built: with
    render_charged (which writes a decoded value), the one way a decoder builds text from what it
    decoded. A back-reference can put one part in a value many times over; charging what is built
    keeps the work within the budget (payload.budget). Parts are text only: a decoded value
    becomes text through render_charged, never through str(), repr() or an f-string."""
    size = 0
    for part in parts:
        if type(part) is not str:
            raise TypeError(f"charged_text takes text, not {type(part).__name__}")
        size += len(part)
    meter.text(size)
    return "".join(parts)


def _scalar(value: Any) -> str:
    if isinstance(value, Alike):
        return _scalar(value.value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int_text(value)
    if isinstance(value, float):
        name = jsonenc.float_name(value)
        return repr(value) if name is None else f'"{name}"'
    if isinstance(value, (bytes, bytearray, memoryview)):
        return jsonenc.blob_text(value)
    if isinstance(value, datetime.datetime):
        return json.dumps(value.isoformat())
    if isinstance(value, Symbol):
        return f"{value.text} (not executed)"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(str(value), ensure_ascii=False)


def _not_json(value: Any) -> Any:
    raise TypeError(type(value).__name__)


@functools.cache
def _orjson_options() -> int:
    import orjson

    # Integer keys (some producers write them) as JSON writes them; dataclasses (Tagged, Symbol) and datetimes
    # go to the walk below, which marks them, rather than orjson's own spelling.
    return (orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS
            | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS)


def json_native(tree: Any, indent: int | None = None) -> str | None:
    """The tree as JSON text when it holds only what JSON has (the common case), else None.

    orjson renders a 4 KB record in about a tenth of the time of json's C encoder, which was
    most of the cost of showing a record format's value (docs/performance.md). It writes NaN
    and infinities as null, which would hide them: output with a null is checked again by json,
    which refuses them, so the walk below shows them as they are.
    """
    if indent is None or indent == 2:
        import orjson

        options = _orjson_options() | (orjson.OPT_INDENT_2 if indent else 0)
        try:
            # First without OPT_NON_STR_KEYS, which writes the integer 1 and the text "1" as one
            # name twice (the walk names such a map's keys apart: alike_key_texts).
            text = orjson.dumps(tree, default=_not_json, option=options & ~orjson.OPT_NON_STR_KEYS)
        except TypeError:  # orjson.JSONEncodeError: keys not text, bytes, big integers, tags, deep nesting
            try:
                text = orjson.dumps(tree, default=_not_json, option=options)
                # A name twice in an object is read once: the text read and written again differs.
                # (orjson's own round trip, in C: a walk of the tree in Python took 30 times as long.)
                if orjson.dumps(orjson.loads(text), option=options) != text:
                    return None
            except (TypeError, ValueError):  # (orjson.JSONDecodeError is a ValueError)
                return None
        if b"null" not in text:
            return text.decode("utf-8")
    elif keys_alike_within(tree):  # json.dumps, too, writes the integer 1 and the text "1" as one name
        return None
    try:
        return json.dumps(tree, ensure_ascii=False, allow_nan=False, default=_not_json, indent=indent,
                          separators=(",", ":") if indent is None else (",", ": "))
    except (TypeError, ValueError, RecursionError):
        return None


def _key(key: Any, meter: Meter) -> str:
    """A map key as JSON writes it (numbers quoted, as json and orjson do, so a record reads the
    same whichever renders it); keys JSON cannot have (bytes, tags) as their own text."""
    if isinstance(key, Alike):
        return _key(key.value, meter)
    if isinstance(key, int) and not isinstance(key, bool):
        return f'"{int_text(key)}"'
    if key is None or isinstance(key, (bool, float)):
        return '"' + _scalar(key).strip('"') + '"'
    if isinstance(key, (dict, list, tuple, Tagged)):
        return render_charged(key, meter)
    return _scalar(key)


def key_json_text(key: Any, meter: Meter) -> str:
    """A map key as its own JSON text, which says its type: a text key in its quotes, a number,
    true, false or null bare, NaN and the infinities by their bare names, bytes as 0x..., a tag or
    an array as the table shows it. The key of a map whose keys would otherwise be written alike
    (`key_names`)."""
    if isinstance(key, str):
        return jsonenc.string(key)
    if isinstance(key, float):
        return jsonenc.float_name(key) or repr(key)
    if isinstance(key, (dict, list, tuple, Tagged)):
        return render_charged(key, meter)
    return _scalar(key)


def _name(key: Any, meter: Meter) -> str:
    """A map key as a JSON object's name: a text key as it is, another as its text (`_key`)."""
    return key if type(key) is str else _key(key, meter).strip('"')


def alike_key_texts(mapping: dict[Any, Any], meter: Meter) -> list[str] | None:
    """Each key of `mapping` as its own JSON text (key_json_text) when two of its keys would be
    the same name in a JSON object (the integer 1 and the text "1" in one MessagePack or CBOR map:
    an object keeps one value a name), so no value is lost; None for a map whose names differ,
    which keeps them."""
    if {*map(type, mapping)} <= {str}:
        return None
    names = {_name(key, meter) for key in mapping}
    if len(names) == len(mapping):
        return None
    return [key_json_text(key, meter) for key in mapping]


def _names_apart(mapping: dict[Any, Any], kinds: set[type]) -> bool:
    """Whether a map of text and integer keys (`kinds`: its keys' types) certainly names them
    apart, told without spelling a name (alike_key_texts spells each): distinct integers have
    distinct decimal texts, so only a text key can be one of them."""
    if not kinds <= {str, int}:
        return False
    numbers = [key for key in mapping if type(key) is int]
    if max(map(int.bit_length, numbers)) > DECIMAL_BITS:  # int_text's hex, not str()'s digits
        return False
    return not any(map(mapping.__contains__, map(str, numbers)))


#: The containers keys_alike_within walks into (what the decoders build: plain dicts and lists).
_HOLDERS = frozenset({dict, list, tuple, Tagged})


def keys_alike_within(tree: Any) -> bool:
    """Whether a map anywhere in `tree` has keys alike_key_texts spells as their JSON text (each
    container looked at once: a shared one, or one that holds itself, is not walked again; no
    scalar visited)."""
    seen: set[int] = set()
    stack = [tree]
    meter = Budget().meter()
    holders = _HOLDERS
    try:
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is Tagged:
                stack.append(node.value)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            if kind is dict:
                kinds = {*map(type, node)}
                if not kinds <= {str} and not _names_apart(node, kinds) \
                        and alike_key_texts(node, meter) is not None:
                    return True
                values = node.values()
            elif kind is list or kind is tuple:
                values = node
            else:
                continue
            stack.extend([value for value in values if type(value) in holders])
    except BudgetExceeded:  # keys past the budget: the walk, which says so, writes the tree
        return True
    return False


def cut_marker(reason: str) -> str:
    return f"… (cut: {reason})"


def render(tree: Any, indent: int | None = None, budget: Budget | None = None) -> str:
    """JSON-like text: one line (indent None) or indented by `indent` spaces per level; a value
    past the budget ends with `… (cut: reason)`."""
    text, cut = render_cut(tree, indent, budget)
    return text if cut is None else text + cut_marker(cut)[1:]


def render_cut(tree: Any, indent: int | None = None, budget: Budget | None = None,
               trusted: bool = False) -> tuple[str, str | None]:
    """(text, None), or (the text as far as the budget allowed, ending in "…", the reason).

    trusted: the tree comes from a format without back-references, decoded from bytes few enough
    that it cannot exceed the budget (Budget.trusts): orjson writes it without a first count.
    """
    budget = budget or current()
    if isinstance(tree, (dict, list)) and (trusted or fits(tree, budget, indent)):
        native = json_native(tree, indent)
        if native is not None and len(native) <= budget.chars:
            return native, None
    return render_walk(tree, indent, budget)


def render_walk(tree: Any, indent: int | None, budget: Budget) -> tuple[str, str | None]:
    """render_cut's own walk, for a caller that has already counted the tree (or chose not to
    write it natively): what it renders and why it stopped."""
    out: list[str] = []
    renderer = _Renderer(out, indent, budget.meter())
    try:
        renderer.walk(tree, 0)
    except BudgetExceeded as err:
        return "".join(out) + "…", str(err)
    return "".join(out), renderer.cut


def render_charged(tree: Any, meter: Meter) -> str:
    """Compact text of `tree` charged to a meter that outlives it (a decoder building the text of
    several symbols for one value); BudgetExceeded propagates."""
    out: list[str] = []
    _Renderer(out, None, meter).walk(tree, 0)
    return "".join(out)


def fits(tree: Any, budget: Budget, indent: int | None) -> bool:
    """Whether orjson may write `tree` at once: a count of what the walk would visit (a shared
    node counts each time it appears) within the budget's nodes, depth and characters."""
    nodes = chars = 0
    deepest = 0
    stack: list[tuple[Any, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > budget.nodes or depth > budget.depth:
            return False
        kind = type(node)
        if kind is dict:
            deepest = max(deepest, depth)
            for key, value in node.items():
                chars += len(key) if type(key) is str else 24
                stack.append((value, depth + 1))
        elif kind is list:
            deepest = max(deepest, depth)
            stack.extend((value, depth + 1) for value in node)
        elif kind is str:
            chars += len(node)
        elif kind is int:  # a shared big integer renders its digits each time it appears
            if node.bit_length() > DECIMAL_BITS:  # json would write it past the default limit: the walk's hex
                return False
            chars += node.bit_length() // 3
    per_node = 24 if indent is None else 26 + indent * (deepest + 1)
    return chars * 6 + nodes * per_node <= budget.chars


class _Renderer:
    """The walk behind render_cut: visits each occurrence of a shared node (and charges it),
    shows a container that holds itself as a cycle, and levels past the budget's depth as "…"."""

    __slots__ = ("out", "indent", "meter", "depth_limit", "on_path", "cut")

    def __init__(self, out: list[str], indent: int | None, meter: Meter) -> None:
        self.out = out
        self.indent = indent
        self.meter = meter
        self.depth_limit = meter.budget.depth
        self.on_path: set[int] = set()
        self.cut: str | None = None

    def emit(self, text: str) -> None:
        left = self.meter.chars_left
        if len(text) > left:
            self.out.append(text[:left])
        else:
            self.out.append(text)
        self.meter.text(len(text))

    def walk(self, node: Any, depth: int) -> None:
        self.meter.node()
        if isinstance(node, Cut):
            self.emit("…")
            self.cut = self.cut or node.reason
            return
        if isinstance(node, Tagged):
            self.emit(f"{node.tag}(")
            self.walk(node.value, depth)
            self.emit(")")
            return
        if not isinstance(node, (dict, list, tuple)):
            self.emit(_scalar(node))
            return
        if not node:
            self.emit("{}" if isinstance(node, dict) else "[]")
            return
        if depth >= self.depth_limit:
            self.emit("…")
            self.cut = self.cut or self.meter.budget.depth_reason
            return
        if id(node) in self.on_path:
            self.emit(f'cycle("back to an enclosing {"map" if isinstance(node, dict) else "list"}")')
            return
        self.on_path.add(id(node))
        indent = self.indent
        pad = "" if indent is None else "\n" + " " * (indent * (depth + 1))
        end = "" if indent is None else "\n" + " " * (indent * depth)
        colon = ":" if indent is None else ": "
        if isinstance(node, dict):
            self.emit("{")
            first = True
            texts = alike_key_texts(node, self.meter)
            for at, (key, value) in enumerate(node.items()):
                name = _key(key, self.meter) if texts is None else _scalar(texts[at])
                self.emit(("" if first else ",") + pad + name + colon)
                first = False
                self.walk(value, depth + 1)
            self.emit(end + "}")
        else:
            self.emit("[")
            first = True
            for value in node:
                self.emit(("" if first else ",") + pad)
                first = False
                self.walk(value, depth + 1)
            self.emit(end + "]")
        self.on_path.discard(id(node))


class _Marked(BudgetExceeded):
    """A budget stop whose marker is in place: carries the container that was being built, for
    its parent to keep."""

    def __init__(self, reason: str, partial: Any) -> None:
        super().__init__(reason)
        self.partial = partial


def jsonable(tree: Any, budget: Budget | None = None) -> Any:
    """The structure as JSON-able values: leaves as cqlsh_ext.common.jsonenc spells them (bytes "0x...",
    times ISO 8601 UTC with a Z, NaN and the infinities by name), tags {"$tag": t, "value": v},
    symbols {"$call": "module.name(...)", "executed": false}; integers stay exact. A structure
    past the budget ends, where it stopped, with a "… (cut: reason)" item (key "…" in a map)."""
    return jsonable_cut(tree, budget)[0]


def jsonable_cut(tree: Any, budget: Budget | None = None, floats: bool = False) -> tuple[Any, str | None]:
    """jsonable, and the reason it was cut (None when whole). `floats`: NaN and the infinities
    kept as the floats they are (for a typed reader: Arrow holds them, as JSON text does not)."""
    builder = _JsonBuilder((budget or current()).meter(), floats)
    try:
        return builder.build(tree, 0), builder.cut
    except _Marked as err:
        return err.partial, builder.cut
    except BudgetExceeded as err:  # stopped before the top level had a container to mark
        return cut_marker(str(err)), str(err)


class _JsonBuilder:
    __slots__ = ("meter", "on_path", "cut", "floats")

    def __init__(self, meter: Meter, floats: bool = False) -> None:
        self.meter = meter
        self.on_path: set[int] = set()
        self.cut: str | None = None
        self.floats = floats

    def stop(self, err: BudgetExceeded, container: Any, place: Callable[[Any], None]) -> _Marked:
        """A budget stop under `container`: the child being built (when it got that far) or the
        marker goes where the child would have, and the walk unwinds with what was built."""
        if isinstance(err, _Marked):
            place(err.partial)
        else:
            place(cut_marker(str(err)))
            self.cut = str(err)
        return _Marked(str(err), container)

    def build(self, tree: Any, depth: int) -> Any:
        self.meter.node()
        if isinstance(tree, Cut):
            self.cut = self.cut or tree.reason
            return cut_marker(tree.reason)
        if isinstance(tree, Tagged):
            tagged: dict[str, Any] = {"$tag": tree.tag, "value": None}
            try:
                tagged["value"] = self.build(tree.value, depth + 1)
            except BudgetExceeded as err:
                raise self.stop(err, tagged, lambda child: tagged.__setitem__("value", child)) from None
            return tagged
        if isinstance(tree, Symbol):
            self.meter.text(len(tree.text))
            return {"$call": tree.text, "executed": False}
        if isinstance(tree, (dict, list, tuple)):
            if depth > self.meter.budget.depth:
                self.cut = self.cut or self.meter.budget.depth_reason
                return {"$truncated": "nesting too deep"}
            if id(tree) in self.on_path:
                return {"$tag": "cycle", "value": "back to an enclosing " + ("map" if isinstance(tree, dict)
                                                                              else "list")}
            self.on_path.add(id(tree))
            try:
                if isinstance(tree, dict):
                    mapping: dict[str, Any] = {}
                    key = "…"
                    try:
                        texts = alike_key_texts(tree, self.meter)
                        names = tree if texts is None else texts  # text keys as they are, the rest _name's
                        for k, name, v in zip(tree, names, tree.values(), strict=True):
                            key = name if type(name) is str else _name(k, self.meter)
                            self.meter.text(len(key))
                            mapping[key] = self.build(v, depth + 1)
                    except BudgetExceeded as err:
                        slot = key if isinstance(err, _Marked) else "…"
                        raise self.stop(err, mapping,
                                        lambda child: mapping.__setitem__(slot, child)) from None
                    return mapping
                items: list[Any] = []
                try:
                    for v in tree:
                        items.append(self.build(v, depth + 1))
                except BudgetExceeded as err:
                    raise self.stop(err, items, items.append) from None
                return items
            finally:
                self.on_path.discard(id(tree))
        if isinstance(tree, (bytes, bytearray, memoryview)):
            self.meter.text(2 + 2 * len(tree))  # charged before the text is built
            return jsonenc.blob_text(tree)
        if isinstance(tree, str):
            self.meter.text(len(tree))
            return tree
        if isinstance(tree, float):
            return tree if self.floats else jsonenc.float_name(tree) or tree
        if isinstance(tree, datetime.datetime):
            return jsonenc.time_text(tree)
        # (a document's LongInt is within its value's budget, and json writes it)
        if isinstance(tree, int) and not isinstance(tree, (bool, LongInt)) \
                and tree.bit_length() > DECIMAL_BITS:
            self.meter.text(tree.bit_length() // 4 + 3)  # charged before the hex is built
            return {"$hex": int_text(tree)}  # json cannot write past 4,300 digits
        if tree is None or isinstance(tree, (int, float, bool)):
            return tree
        text = str(tree)
        self.meter.text(len(text))
        return text


def plausible_record(value: Any) -> bool:
    """What real records look like, for the formats detected without a signature (random bytes
    that happen to parse give short arrays of small numbers, empty strings, keys with control characters):
    a map whose keys are printable strings or non-negative integers, with a string key or a
    non-empty string or string-keyed map as a value; or an array holding such a map, or two non-empty
    strings. No extension types anywhere."""
    # The common case: a record with printable string keys (all str, their characters all printable;
    # told by builtins: this runs once per record detected).
    if isinstance(value, dict) and value and {*map(type, value)} == {str} and "".join(value).isprintable():
        return True
    if not _deep_ok(value):
        return False
    if isinstance(value, dict):  # integer keys (some producers write them): some text among the values
        return any(isinstance(k, str) or _texty(v) for k, v in value.items())
    return any(isinstance(v, dict) and any(isinstance(k, str) for k in v) for v in value) or sum(
        isinstance(v, str) and len(v) > 0 for v in value) >= 2


def _deep_ok(value: Any) -> bool:
    """No extension types; map keys printable strings or non-negative integers, all the way down."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, Tagged):
            return False
        if isinstance(node, dict):
            for key, item in node.items():
                if isinstance(key, str):
                    if not key.isprintable():
                        return False
                elif not isinstance(key, int) or isinstance(key, bool) or key < 0:
                    return False
                stack.append(item)
        elif isinstance(node, list):
            stack.extend(node)
    return True


def _texty(value: Any) -> bool:
    """A non-empty string, or a map with a string key."""
    if isinstance(value, str):
        return len(value) > 0
    return isinstance(value, dict) and any(isinstance(k, str) for k in value)
