"""Which formats exist, in which order auto-detection tries them, and what `-d CODEC` means.

Importing this module imports every codec module (found by common.declarations) and loads no codec
library: the codec modules bind their libraries on their first decode. The order of every table
below comes from the formats' declared priorities (Container.signature_priority, trial_priority,
trial_zero_priority, early_priority, tried_by), not from lists kept here.

Auto-detection (decode_auto/detect):
  1. values shorter than MIN_AUTO_LENGTH are never decoded;
  2. a table keyed by the first byte lists the formats with a signature (grade A, then B);
     a grade A match is final (a failed decode raises), a grade B match needs its trial decode;
  3. then the signature-less grade C formats, each a validated trial decode;
  4. grade D formats (no signature and too permissive to guess) only on request.

Codec modules reuse their library contexts across calls: not thread-safe, like the shell.
"""

from __future__ import annotations

import os
from importlib import import_module
from types import ModuleType

from cqlsh_ext.common.declarations import read_declarations
from cqlsh_ext.common.text import unknown

from .base import CODEC_NAMES, DEFAULT_CAP, RULED_OUT_HEADER, Container, Decoded, DecodeError, Undecodable
from .capabilities import Writer

__all__ = [
    "CODEC_NAMES",
    "MIN_AUTO_LENGTH",
    "all_containers",
    "by_label",
    "decode_as",
    "written_by",
    "decode_auto",
    "decode_known",
    "decode_named",
    "detect",
    "detection_order",
    "dispatch_table",
    "containers_for",
]


#: Shorter values are never auto-decoded. The signature-less trial decodes accept about 0.06 %
#: of random 1-4 byte values (b"\x00" is a valid empty raw block) and none at >= 5 bytes in
#: 20k+20k random/text trials; 6 also leaves room for the smallest real values we care about
#: (a 4-character string or a single byte compresses to 6 bytes in the common block formats).
MIN_AUTO_LENGTH = 6


def _modules() -> list[ModuleType]:
    """Every codec module, in the order of the first -d name each declares."""
    found = read_declarations(os.path.dirname(__file__), __package__ or "cqlsh_ext.codecs")
    order = sorted(found, key=lambda name: min(found[name]["names"].values()))
    return [import_module(f"{__package__}.{name}") for name in order]


_MODULES = _modules()
#: Every format, grouped by codec module, each module's FORMATS in its own order.
_ALL: tuple[Container, ...] = tuple(fmt for m in _MODULES for fmt in m.FORMATS)


def _ordered(priority: str) -> tuple[Container, ...]:
    """The formats declaring `priority` (a Container attribute), lowest first."""
    found = [(getattr(f, priority), i, f) for i, f in enumerate(_ALL) if getattr(f, priority) is not None]
    return tuple(f for _p, _i, f in sorted(found, key=lambda t: (t[0], t[1])))


# Formats with a signature; the dispatch table keeps this order per first byte.
_SIGNED = _ordered("signature_priority")
# Signature-less formats, most common first (each declaration says why it stands where it does).
_AUTO_C = _ordered("trial_priority")
# The same when the first byte is 0 (a big-endian length; some formats are never 0 there).
_AUTO_C_ZERO = _ordered("trial_zero_priority")
# Tried between the signatures and the trials when their early() holds.
_EARLY = _ordered("early_priority")


def _dispatch_table() -> tuple[tuple[Container, ...], ...]:
    table: list[list[Container]] = [[] for _ in range(256)]
    for fmt in _SIGNED:
        for b in fmt.lead_bytes or fmt.magic[:1]:
            table[b].append(fmt)
    return tuple(tuple(row) for row in table)


_BY_BYTE = _dispatch_table()
#: The formats detection tries without a signature (early, then the trials).
_SIGNATURE_LESS = frozenset((*_EARLY, *_AUTO_C, *_AUTO_C_ZERO))


def _named() -> dict[str, tuple[Container, ...]]:
    """-d CODEC: the formats each name's declarations list, by their tried_by priority (callers
    check signatures first, then try the signature-less ones in this order)."""
    named: dict[str, tuple[Container, ...]] = {}
    for name in CODEC_NAMES:
        tried = sorted(((f.tried_by[name], i, f) for i, f in enumerate(_ALL) if name in f.tried_by),
                       key=lambda t: (t[0], t[1]))
        if not tried:
            raise ImportError(f"codec name {name!r} is declared but no format is tried by it")
        named[name] = tuple(f for _p, _i, f in tried)
    return named


_NAMED = _named()
_BY_CONSTANT: dict[str, Container] = {
    k: v for m in _MODULES for k, v in vars(m).items() if k.isupper() and isinstance(v, Container)
}


def __getattr__(name: str) -> Container:
    """A format instance by the constant its module names it (registry.<CONSTANT>)."""
    try:
        return _BY_CONSTANT[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


#: Signature-less trial decodes run with at least this cap, then are clipped to the caller's: a
#: decode stopped after a few bytes proves nothing (a nested layer may have a tiny budget).
TRIAL_MIN_CAP = 64 << 10


def _clip(dec: Decoded, cap: int) -> Decoded:
    if len(dec.data) <= cap:
        return dec
    return Decoded(dec.data[: max(cap, 0)], True, dec.declared_size, dec.headers)


def _labelled(fmt: Container, exc: Exception) -> DecodeError:
    """The error to raise for `fmt`: DecodeError reasons get the label prefix ('<label>: truncated
    stream'); Undecodable messages already name the format. `.format` is set either way."""
    if isinstance(exc, Undecodable):
        err: DecodeError = Undecodable(str(exc))
    elif isinstance(exc, DecodeError):
        err = DecodeError(f"{fmt.label}: {exc}")
    else:  # a bug in a format module must not take the shell down with it
        err = DecodeError(f"{fmt.label}: internal error ({type(exc).__name__}: {exc})")
    err.format = fmt
    return err


def detection_order() -> dict[str, tuple[Container, ...]]:
    """The sequences auto-detection tries: signatures (per first byte, in this order), the early
    trial, then the signature-less trials (`trial_zero` when the first byte is 0)."""
    return {"signature": _SIGNED, "early": _EARLY, "trial": _AUTO_C, "trial_zero": _AUTO_C_ZERO}


def dispatch_table() -> tuple[tuple[Container, ...], ...]:
    """The signature formats tried per first byte (256 rows)."""
    return _BY_BYTE


def all_containers() -> list[Container]:
    """Every format, grouped by codec family."""
    return list(_ALL)


def containers_for(codec: str) -> list[Container]:
    """The formats `-d codec` tries, in order. Unknown codec -> ValueError."""
    try:
        return list(_NAMED[codec])
    except KeyError:
        raise ValueError(unknown("codec", codec, CODEC_NAMES)) from None


def decode_auto(data: bytes, cap: int = DEFAULT_CAP) -> tuple[Container, Decoded] | None:
    """Decode `data` if it is recognisably compressed; None when it is not.

    Raises DecodeError ('<label>: <reason>') when a grade A signature matched but the decode
    failed, Undecodable when a recognised format cannot be decoded here.
    """
    n = len(data)
    if n < MIN_AUTO_LENGTH or not n:
        return None
    trial_cap = cap if cap >= TRIAL_MIN_CAP else TRIAL_MIN_CAP
    for fmt in _BY_BYTE[data[0]]:
        if not fmt.matches(data):
            continue
        if fmt.grade == "A":
            try:
                return fmt, fmt.decode(data, cap)
            except Exception as e:
                raise _labelled(fmt, e) from None
        try:
            res = fmt.trial(data, trial_cap)
        except Undecodable as e:
            raise _labelled(fmt, e) from None
        except Exception:
            res = None
        if res is not None:
            return fmt, _clip(res, cap)
    for fmt in _EARLY:
        if fmt.early(data):
            res = fmt.trial(data, trial_cap)
            if res is not None:
                return fmt, _clip(res, cap)
    # The signature-less trials. A value none of them takes leaves the list of those its header
    # did not rule out, by header and length (_LIVE): the next such value (a column of stored text
    # or records, whose values start alike) tries only those. A zero first byte is a big-endian
    # length: its own order (trial_zero_priority).
    key = (data[:RULED_OUT_HEADER], n)
    live = _LIVE.get(key)
    tried: list[Container] = []
    for fmt in live if live is not None else _AUTO_C_ZERO if data[0] == 0 else _AUTO_C:
        if live is None:
            if fmt.ruled_out(data):  # its trial would refuse it by this same test
                continue
            tried.append(fmt)
        try:
            res = fmt.trial(data, trial_cap)
        except Undecodable as e:
            raise _labelled(fmt, e) from None
        except Exception:
            continue
        if res is not None:
            return fmt, _clip(res, cap)
    if live is None:
        if len(_LIVE) >= _LIVE_KEPT:
            _LIVE.clear()
        _LIVE[key] = tuple(tried)
    return None


#: The signature-less formats a value's header did not rule out (Container.ruled_out, which reads
#: the header and the length only), by (header, length), for values no trial took: a column of
#: stored text or records has few distinct ones, random bytes many; kept to _LIVE_KEPT entries.
_LIVE: dict[tuple[bytes, int], tuple[Container, ...]] = {}
_LIVE_KEPT = 4096


def decode_known(fmt: Container, data: bytes, cap: int = DEFAULT_CAP) -> tuple[Container, Decoded] | None:
    """decode_auto(data, cap) when it would choose `fmt`, found without the expensive part of
    trying the formats detection puts before `fmt`; None when it would not, or when that cannot
    be told cheaply (the caller then runs decode_auto). For a column whose values share a chain
    (payload.engine remembers it).

    Follows decode_auto's order exactly: every format before `fmt` must be ruled out cheaply, by
    its signature (matches() is false) or, for a signature-less one, by Container.ruled_out(); an
    early trial that applies to the value and is not `fmt` makes it unsure. Then `fmt` decodes
    the value as decode_auto would (the same call, the same cap), checksums and all; any error
    is left to decode_auto to report.
    """
    if len(data) < MIN_AUTO_LENGTH:
        return None
    row = _BY_BYTE[data[0]]
    if fmt not in row and fmt not in _SIGNATURE_LESS:
        return None  # a signature this first byte does not start
    trial_cap = cap if cap >= TRIAL_MIN_CAP else TRIAL_MIN_CAP
    try:
        if fmt in row:
            for earlier in row:
                if earlier is fmt:
                    break
                if earlier.matches(data):
                    return None
            if not fmt.matches(data):
                return None
            if fmt.grade == "A":
                return fmt, fmt.decode(data, cap)
            res = fmt.trial(data, trial_cap)
            return None if res is None else (fmt, _clip(res, cap))
        for earlier in row:
            if earlier.matches(data):
                return None
        for early in _EARLY:
            if early.early(data):
                if early is not fmt:
                    return None
                res = early.trial(data, trial_cap)
                return None if res is None else (fmt, _clip(res, cap))
        for trial in _AUTO_C_ZERO if data[0] == 0 else _AUTO_C:
            if trial is fmt:
                res = fmt.trial(data, trial_cap)
                return None if res is None else (fmt, _clip(res, cap))
            if not trial.ruled_out(data):
                return None
    except Exception:  # decode_auto says what failed, and how
        return None
    return None


def may_come_first(fmt: Container | None, data: bytes) -> bool:
    """Whether decode_auto may take `fmt` first on `data` (None: no container at all), told from
    signatures and headers alone, nothing decoded: False only where it certainly does not (another
    grade A signature before it matches, `fmt`'s own signature is absent and it has no trial, or
    its header rules its trial out). For a reader that wants the values of one chain alone
    (COMPRESSION REWRITE's values in its target already: rewrite.job.Examiner.settle)."""
    if len(data) < MIN_AUTO_LENGTH:
        return fmt is None
    for found in _BY_BYTE[data[0]]:
        if found is fmt:
            if fmt.matches(data):
                return True
            break
        if found.grade == "A" and found.matches(data):
            return False  # decode_auto takes it, or says it fails
    if fmt is None:
        return True
    return fmt in _SIGNATURE_LESS and not fmt.ruled_out(data)


def signature_matches(prefix: bytes) -> bool:
    """Whether a format with a signature (grade A or B) matches these first bytes of a payload:
    the cheap test for "something recognisable may be inside" when only a prefix is at hand."""
    return bool(prefix) and any(fmt.matches(prefix) for fmt in _BY_BYTE[prefix[0]])


def detect(data: bytes, *, signatures_only: bool = False) -> Container | None:
    """The format decode_auto would use, or None.

    Grade A is decided by signature alone; grade B/C need a (capped) trial decode, so prefer
    decode_auto when the output is wanted anyway. `signatures_only=True` skips the grade C
    trials (for payloads inside a decoded layer, where only signatures should count).
    """
    if len(data) < MIN_AUTO_LENGTH or not data:
        return None
    for fmt in _BY_BYTE[data[0]] if signatures_only else (*_BY_BYTE[data[0]], *_AUTO_C):
        if fmt.grade == "A":
            if fmt.matches(data):
                return fmt
            continue
        if fmt.grade == "B" and not fmt.matches(data):
            continue
        try:
            if fmt.trial(data, DEFAULT_CAP) is not None:
                return fmt
        except Undecodable:
            return fmt
        except Exception:
            continue
    return None


def decode_named(codec: str, data: bytes, cap: int = DEFAULT_CAP) -> tuple[Container, Decoded]:
    """Decode `data` as `codec` (-d CODEC), trying that codec's formats including grade D.

    A matching grade A signature decides (its failure is raised). Otherwise the first
    signature-less format that decodes wins; if none does, the primary format's reason is raised.
    Unknown codec -> ValueError.
    """
    order = containers_for(codec)
    first: DecodeError | None = None
    # A long signature that is present but whose header is cut short explains more than C/D failures.
    short = next(
        (f for f in order if f.grade == "A" and data and data[: len(f.magic)] == f.magic[: len(data)]),
        None,
    )
    for fmt in order:
        if fmt.grade not in ("A", "B") or not fmt.matches(data):
            continue
        try:
            if fmt.grade == "A":
                return fmt, fmt.decode(data, cap)
            return fmt, _clip(fmt.decode(data, max(cap, TRIAL_MIN_CAP)), cap)
        except Exception as e:
            err = _labelled(fmt, e)
            if fmt.grade == "A" or isinstance(e, Undecodable):
                raise err from None
            first = first or err
    for fmt in order:
        if fmt.grade in ("A", "B"):
            continue
        try:
            return fmt, _clip(fmt.decode(data, max(cap, TRIAL_MIN_CAP)), cap)
        except Undecodable as e:
            raise _labelled(fmt, e) from None
        except Exception as e:
            first = first or _labelled(fmt, e)
    if short is not None and not short.matches(data):
        raise _labelled(short, DecodeError("truncated or malformed header"))
    if first is None:
        first = _labelled(order[0], DecodeError(f"no {order[0].label} signature"))
    raise first


#: by_label()'s table (each label, lower-cased, to the first format of _ALL with it) and the _ALL it
#: was made from: every value a chain names is peeled through by_label (a load's verification, a
#: setting's reading), so it is a dict lookup, not a walk over every format; made again where _ALL
#: is another tuple (a test's registry with a format of its own).
_BY_LABEL: tuple[tuple[Container, ...], dict[str, Container]] = ((), {})


def by_label(label: str) -> Container | None:
    """The format the display labels `label` ('<codec>' or '<codec>/<container>'), case-blind."""
    global _BY_LABEL
    made_from, table = _BY_LABEL
    if made_from is not _ALL:
        table = {}
        for fmt in _ALL:
            table.setdefault(fmt.label.lower(), fmt)
        _BY_LABEL = (_ALL, table)
    return table.get(label.lower())


#: written_by()'s answers: every encode() asks (COMPRESSION REWRITE, once a row written), and
#: isinstance of a protocol with data members walks its attributes on every call on Python 3.11.
_BARE_WRITERS: dict[str, Container] = {}


def written_by(codec: str) -> Container:
    """The container a bare `encode('<codec>', ...)` writes (the Writer declaring writes_bare); for
    a codec that writes none (dcb), its primary container, which says why (NotWritten)."""
    known = _BARE_WRITERS.get(codec)
    if known is not None:
        return known
    found: list[Container] = [f for f in _ALL if isinstance(f, Writer) and f.writes_bare and f.codec == codec]
    if not found and not any(isinstance(f, Writer) for f in _ALL if f.codec == codec):
        found = [f for f in _ALL if f.primary and f.codec == codec]
    if len(found) != 1:
        raise ValueError(f"codec {codec!r} declares {len(found)} bare writers")
    _BARE_WRITERS[codec] = found[0]
    return found[0]


def decode_as(fmt: Container, data: bytes, cap: int = DEFAULT_CAP) -> tuple[Container, Decoded]:
    """Decode `data` as this one container (a spec step naming it: '<codec>/<container>');
    DecodeError ('<label>: <reason>') when it is not one."""
    try:
        if fmt.grade == "A":
            return fmt, fmt.decode(data, cap)
        return fmt, _clip(fmt.decode(data, max(cap, TRIAL_MIN_CAP)), cap)
    except Exception as e:
        raise _labelled(fmt, e) from None
