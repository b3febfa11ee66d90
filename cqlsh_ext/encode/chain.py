"""One encode() value: the payload written by its format's encoder, then the codecs from the inside
out, each by the writer its module declares (a container's Writer, codecs.capabilities; payload.formats'
PayloadFormat.encode), then decoded again by the display's own path (payload.unwrap.unwrap_spec)
and compared with the input. A value that does not come back equal is refused (EncodeRefused).

Nothing here names a codec or a payload format: the spec parser knows the names from the modules'
declarations, and each module says whether and how it writes its format.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cqlsh_ext.payload.budget import Budget, enter, leave
from cqlsh_ext.payload.json_text import json_container, unique_pairs
from cqlsh_ext.payload.names import BUILTIN_READINGS
from cqlsh_ext.payload.spec import AUTO_STEP, Spec, SpecError, parse_spec

_TEXT, _HEX, _JSON = BUILTIN_READINGS
#: The readings that hold the input as it is: no payload step, detection, or text.
AS_IS = (None, AUTO_STEP, _TEXT, _JSON)


@dataclass(frozen=True)
class _Reading:
    """What a value is written and verified with beyond this module's imports: the display's
    reading (payload.unwrap), its views' kinds, the record formats, a writer's refusal."""

    as_text: Callable[..., tuple[str, bool] | None]
    named_layers: Callable[..., Any]
    unwrap_spec: Callable[..., Any]
    formats: Any
    unwritable: type[Exception]
    binary: str
    record: str
    text: str


@functools.cache
def _reading() -> _Reading:
    """_Reading, imported on the first value written (encode's importers, the shell's start among
    them, write none at import) and kept: a load writes thousands, and an import statement run
    for each value cost more than most of the steps it imported for."""
    from cqlsh_ext.codecs.base import Unwritable
    from cqlsh_ext.payload import formats
    from cqlsh_ext.payload.unwrap import as_text, named_layers, unwrap_spec
    from cqlsh_ext.payload.view import BINARY, RECORD, TEXT

    return _Reading(as_text, named_layers, unwrap_spec, formats, Unwritable, BINARY, RECORD, TEXT)


@functools.cache
def _orjson_dumps() -> Callable[[Any], bytes] | None:
    """orjson's writer, imported once (None without orjson: the standard library's spells)."""
    try:
        import orjson
    except ImportError:
        return None
    return orjson.dumps


class EncodeRefused(ValueError):
    """A value encode() does not write; str() is the one-line reason."""


@dataclass(frozen=True)
class Encoded:
    chain: str
    value: bytes
    #: What was encoded: the input's size (the text's UTF-8 bytes, or the given bytes).
    input_size: int


def spec_of(chain: str) -> Spec:
    try:
        spec = parse_spec(chain)
    except SpecError as err:
        raise EncodeRefused(str(err)) from None
    if spec.choice is not None:  # a column whose chain each row's sibling picks (payload.sibling)
        raise EncodeRefused(f"the chain is picked by {spec.choice.column} row by row: name it "
                            "(encode('zstd>json', ...))")
    return spec


def encode(chain: str, source: str | bytes, cap: int) -> Encoded:
    """`source` (text, JSON for a record format, or bytes) written as `chain` says and verified by
    decoding it with the display's path within `cap`; EncodeRefused with the reason otherwise."""
    return Encoder(chain, cap).text(source)


class Encoder:
    """One chain's encode(), its spec read and its writers found once: what a load (cqlsh_ext.load)
    calls for each of thousands of values of one chain, and encode() for one. EncodeRefused when the
    chain is none encode() writes (an unknown step, a container only read here, a dictionary the
    store lacks), said as encode() says it."""

    def __init__(self, chain: str, cap: int) -> None:
        self.spec = spec = spec_of(chain)
        self.cap = cap
        self.chain = str(spec)
        # The codec steps, inner first: each container's encode() with its level and dictionary.
        self._steps: list[tuple[Any, int | None, bytes | None]] = [
            _writer_step(spec, i) for i in reversed(range(len(spec.codecs)))]
        self._codecs = _codec_steps(spec)

    def _compressed(self, payload: bytes) -> bytes:
        value = payload
        try:
            for fmt, level, dictionary in self._steps:
                value = fmt.encode(value, level, dictionary)
        except _reading().unwritable as err:
            raise EncodeRefused(str(err)) from None
        return value

    def text(self, source: str | bytes) -> Encoded:
        """encode(chain, source, cap)."""
        spec = self.spec
        payload, expected = _payload(spec, source)
        value = self._compressed(payload)
        _verify(spec, value, source, expected, self.cap, self._codecs, payload)
        return Encoded(self.chain, value, len(source.encode("utf-8") if isinstance(source, str) else source))

    def holds(self, value: bytes, source: str | bytes) -> bool:
        """Whether a stored `value` (written by any producer: another level, a gzip header's time)
        reads in this chain as what `source` would be written as: the same bytes under its codecs,
        the same text, or for a JSON payload the same JSON value (types and NaN included, whatever
        its spacing). A record format's payload is not compared here (False)."""
        # (the display's reading of `<codecs>>hex` or `<codecs>>text`, its steps taken without the
        # view it builds: a load asks this of each value whose stored one differs)
        spec, cap = self.spec, self.cap
        if isinstance(source, bytes):
            return value == source if not self._codecs else _peeled(spec, value, cap) == source
        if spec.payload not in AS_IS:
            return False
        data = _peeled(spec, value, cap)
        found = None if data is None else _reading().as_text(data)
        if found is None:
            return False
        if found[0] == source:
            return True
        if spec.payload != _JSON:
            return False
        token = enter(Budget.for_cap(cap))  # (its tree parsed within the value's budget, as the view's)
        try:
            stored = json_container(found[0])
        finally:
            leave(token)
        given = json_container(source)
        return stored is not None and given is not None and same(stored, given)

    def record(self, record: Any) -> Encoded:
        """A record's tree (as its format's reader gave it: an edited document, cqlsh_ext.edit) written
        as the chain says, whose payload is a record format, and verified as text() verifies."""
        spec = self.spec
        fmt = _record_format(spec)
        write = record_writer(fmt, spec.argument)
        if write is None:
            raise EncodeRefused(f"{fmt.name}: {fmt.unwritable}")
        formats = _reading().formats
        try:
            value = write(record)
        except (formats.PayloadError, TypeError, ValueError, OverflowError) as err:
            raise EncodeRefused(f"{fmt.name} does not hold it ({err})") from None
        size = len(value)
        payload, value = value, self._compressed(value)
        _verify(spec, value, "", record, self.cap, self._codecs, payload)
        return Encoded(self.chain, value, size)


def _record_format(spec: Spec) -> Any:
    fmt = _reading().formats.get(str(spec.payload))
    if fmt is None:
        raise EncodeRefused(f"unknown payload format {spec.payload!r}")
    return fmt


def _payload(spec: Spec, source: str | bytes) -> tuple[bytes, Any]:
    """(the payload bytes, the record the display must read back, or None for text or bytes)."""
    if isinstance(source, bytes):  # given bytes are the payload: only the codecs are applied
        return source, None
    if spec.payload == _JSON and json_container(source) is None:
        raise EncodeRefused("a json reading takes a JSON object or array")
    if spec.payload in AS_IS:
        return source.encode("utf-8"), None
    if spec.payload == _HEX:
        raise EncodeRefused("a hex reading takes bytes (0x...), not text")
    fmt = _record_format(spec)
    argument = spec.argument
    write: Callable[[Any], bytes]
    if argument is not None and fmt.encode_with is not None:
        write = functools.partial(_with_argument, fmt.encode_with, argument)
    elif argument is None and fmt.encode is not None:
        write = fmt.encode
    else:
        raise EncodeRefused(f"{fmt.name}: {fmt.unwritable}")
    record: Any = source if fmt.encodes_text else json_record(source)
    try:
        data = write(record)
    except _reading().formats.PayloadError as err:
        raise EncodeRefused(str(err)) from None
    return data, None if fmt.encodes_text else record


def record_writer(fmt: Any, argument: str | None) -> Callable[[Any], bytes] | None:
    """A record format's writer (with `argument`, its schema's: avro:FILE, ...), None when it has
    none."""
    if argument is not None:
        return None if fmt.encode_with is None else functools.partial(_with_argument, fmt.encode_with,
                                                                      argument)
    return None if fmt.encodes_text else fmt.encode


def _with_argument(encode_with: Callable[[Any, str], bytes], argument: str, record: Any) -> bytes:
    return encode_with(record, argument)


def _float(text: str) -> float:
    value = float(text)
    if abs(value) == float("inf"):  # 1e400: past a double, no format would hold what was written
        raise ValueError(f"{text} is beyond a double")
    return value


def json_record(text: str) -> Any:
    """JSON text as a record format's writer takes it: NaN and the infinities as Python's json
    writes and reads them (`NaN`, `Infinity`, `-Infinity`: the floats a record format holds), a
    number past a double refused, a key given twice in one object refused (EncodeRefused)."""
    try:
        return json.loads(text, parse_float=_float, object_pairs_hook=unique_pairs)
    except ValueError as err:
        raise EncodeRefused(f"the value is not JSON ({str(err).splitlines()[0]})") from None


def _writer_step(spec: Spec, i: int) -> tuple[Any, int | None, bytes | None]:
    """The i-th codec step's container, level and dictionary (its bytes); EncodeRefused when the
    container is not written here or the dictionary is not loaded."""
    from cqlsh_ext.codecs import registry
    from cqlsh_ext.codecs.capabilities import Writer, unwritable

    variant = spec.variants[i] if spec.variants else None
    fmt = registry.by_label(variant) if variant else registry.written_by(spec.codecs[i])
    if fmt is None:  # parse_spec checked the label
        raise EncodeRefused(f"no container {variant!r}")
    if not isinstance(fmt, Writer):
        raise EncodeRefused(f"{fmt.label}: {unwritable(fmt)}")
    dictionary = _dictionary(fmt, spec.dictionaries[i]) if spec.dictionaries else None
    return fmt, spec.levels[i] if spec.levels else None, dictionary


def _dictionary(fmt: Any, dict_id: int | None) -> bytes | None:
    """The bytes of the store's dictionary a step names (`<codec>:dict=ID`); refused when the
    container writes none or the store does not hold it."""
    if dict_id is None:
        return None
    from cqlsh_ext.codecs import dictionaries
    from cqlsh_ext.codecs.capabilities import DictionaryWriter

    label = fmt.label
    if not isinstance(fmt, DictionaryWriter):
        raise EncodeRefused(f"{label} is not written with a dictionary here")
    entry = dictionaries.find(fmt.dictionary_kind, dict_id)
    if entry is None:
        raise EncodeRefused(f"{label}: dictionary {dict_id} is not loaded (--dictionary FILE, or "
                            "COMPRESSION ADVISE ... SAVE DICTIONARY 'file')")
    return entry.data


def _codec_steps(spec: Spec) -> str:
    """The spec's codec steps alone ('<codec>:N><codec>/<container>'), for checking given bytes."""
    return ">".join(str(spec).split(">")[: len(spec.codecs)])


def _read_as(value: bytes, setting: str, cap: int) -> Any:
    """`value` as the display reads a column whose setting is `setting` (the value engine's reading
    of a setting: payload.unwrap.unwrap_spec), within `cap`."""
    view = _reading().unwrap_spec(value, setting, cap)
    view.budget = Budget.for_cap(cap)  # what is read of it later is read within it, as the engine's
    return view


def _verify(spec: Spec, value: bytes, source: str | bytes, expected: Any, cap: int, steps: str,
            payload: bytes | None = None) -> None:
    """`value` read back as the display reads a column whose setting names the chain and compared
    with what was given; `steps`: the spec's codec steps (_codec_steps); `payload`: the bytes the
    codecs were given (_reads_back proves the common case without a view)."""
    if payload is not None and _reads_back(spec, value, payload, source, expected, cap):
        return

    def read_as(setting: str) -> Any:
        return _read_as(value, setting, cap)

    reading = _reading()
    if isinstance(source, bytes):
        if not steps:
            return  # nothing was written: the bytes go as they are
        view = read_as(f"{steps}>{_HEX}")
        shown: Any = view.data if view.kind == reading.binary else None
        want: Any = source
    elif expected is None:
        view = read_as(str(spec) if spec.payload not in AS_IS else f"{steps}>{_TEXT}" if steps else _TEXT)
        shown, want = (view.text if view.kind == reading.text else None), source
    else:
        view = read_as(str(spec))
        shown, want = (view.record if view.kind == reading.record else None), expected
    if view.truncated_layer is not None:
        raise EncodeRefused(f"not verified: the display stops at its output cap "
                            f"({view.truncated_layer.label})")
    if shown is None:
        raise EncodeRefused(f"not verified: the display reads it back as "
                            f"{view.kind}{' (' + view.reason + ')' if view.reason else ''}")
    if not same(shown, want):
        raise EncodeRefused(f"not verified: the display reads back {_brief(shown)}")


def _reads_back(spec: Spec, value: bytes, payload: bytes, source: str | bytes, expected: Any, cap: int
                ) -> bool:
    """Whether `value` reads back as what was given, by the steps the display's reading of the
    chain takes (payload.unwrap.unwrap_spec: its codecs peeled, then its text or its record read,
    within one budget of `cap`) without the view it builds: True only where _verify's view would
    compare equal; anything else (a layer cut, a reading that differs, an error) is left to it."""
    if _peeled(spec, value, cap) != payload:
        return False
    token = enter(Budget.for_cap(cap))
    try:
        data = payload
        if isinstance(source, bytes):
            return True  # (read as hex: the bytes under the codecs)
        if expected is None:
            found = _reading().as_text(data) if spec.payload in AS_IS else None
            return found is not None and found[0] == source
        tree = _reading().formats.decode_named(str(spec.payload), data, spec.argument)
        return not isinstance(tree, str) and same(tree, expected)
    except Exception:  # the view's road says what it is (a failed value's reason)
        return False
    finally:
        leave(token)


def _peeled(spec: Spec, value: bytes, cap: int) -> bytes | None:
    """The bytes under `value`'s codecs as the display's reading of the chain peels them (its
    named containers, within one budget of `cap`); None where that reading would not give them
    whole (a layer cut at the cap, a container that fails, any error: the view's road says which)."""
    token = enter(Budget.for_cap(cap))
    try:
        data = value
        for _fmt, _data_in, decoded in _reading().named_layers(spec, value, cap):
            if decoded.truncated:
                return None
            data = decoded.data
        return data
    except Exception:  # (the boundary the view's reading has: payload.unwrap._bounded)
        return None
    finally:
        leave(token)


def same(shown: Any, want: Any) -> bool:
    """Equal as records: same types (True is not 1, 1.0 is not 1), same keys, items in order."""
    try:  # equal values whose JSON spellings are equal are the same: both in C (the common case)
        if shown == want and _spelt(shown) == _spelt(want):
            return True
    except (TypeError, ValueError):  # bytes, keys that are not strings, integers past 64 bits, ...
        pass
    return _same(shown, want)


def _spelt(value: Any) -> bytes | str:
    """A JSON spelling that tells an integer, a float and a boolean apart (1, 1.0, true) and
    refuses what JSON has no value of (TypeError: bytes, times): orjson's, or the standard
    library's for what orjson refuses (integers past 64 bits; keys that are not strings, which
    equal values cannot hold where the other has a string). NaN is never equal to a NaN read back
    (another object): same()'s walk compares it."""
    dumps = _orjson_dumps()
    if dumps is not None:
        try:
            return bytes(dumps(value))
        except TypeError:
            pass
    return json.dumps(value)


def _same(shown: Any, want: Any) -> bool:
    if isinstance(want, bool) or isinstance(shown, bool):
        return type(shown) is type(want) and shown == want
    if isinstance(want, float):  # NaN read back as NaN is the same value
        return isinstance(shown, float) and (shown == want or (shown != shown and want != want))
    if isinstance(want, dict):
        return (isinstance(shown, dict) and shown.keys() == want.keys()
                and all(_same(shown[k], want[k]) for k in want))
    if isinstance(want, list):
        return (isinstance(shown, list | tuple) and len(shown) == len(want)
                and all(_same(a, b) for a, b in zip(shown, want, strict=True)))
    for kind in (int, str, bytes):  # a library's subclass counts (an Int64 type)
        if isinstance(want, kind):
            return isinstance(shown, kind) and shown == want
    return type(shown) is type(want) and bool(shown == want)


def _brief(value: Any) -> str:
    """A short JSON-like spelling of what the display read, for the refusal line."""
    text = json.dumps(value, default=repr, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
