"""What a column holds, as the user tells it: `codec>format` (payload.names.EXAMPLE_SPEC), `text`.

A spec is a chain of steps from the stored bytes inwards, each a codec name (CODEC_NAMES) or one
of its containers as the display labels it (`<codec>/<container>`), optionally with a level
and a dictionary of the store (`<codec>:N`, `<codec>:dict=ID`, `<codec>:N,dict=ID`, `dcz:dict=` and
the 64 hex digits of the dictionary's SHA-256: what encode()
writes; decoding ignores them, the value naming its dictionary itself), then
at most one payload reading (PAYLOAD_NAMES: the payload formats, `text` or `hex`), or `auto` to
detect the rest. Columns are named
by their place: `keyspace.table.column`, or `table.column`; a blob inside a collection or UDT by
its path below the column (`ks.t.attachments.item`, `ks.t.by_codec.value`, `ks.t.doc.content`),
and a setting for a column covers every blob inside it that has none of its own.

Parsing is standard library only (it runs while settings are read): the names come from the
codec and payload format modules' declarations, read without importing them; applying a spec
loads the codec and format layers.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from cqlsh_ext.codecs.base import CODEC_NAMES
from cqlsh_ext.common.text import unknown
from cqlsh_ext.payload.names import ARGUMENT_NAMES, EXAMPLE_SPEC, FILE_AFTER, PAYLOAD_NAMES
from cqlsh_ext.payload.sibling import ChoiceError, SiblingChoice, is_choice, parse_choice

AUTO_STEP = "auto"
#: A dictionary named by its SHA-256 (`dcz:dict=...`): this many hex digits.
SHA256_DIGITS = 64


class SpecError(ValueError):
    """A spec that cannot be used; str() is the one-line reason. `word`: the step named that is no
    step at all, for a place that takes fewer (a rewrite's compressions: common.text.unknown)."""

    def __init__(self, reason: str, word: str | None = None) -> None:
        super().__init__(reason)
        self.word = word


@dataclass(frozen=True)
class Spec:
    text: str
    codecs: tuple[str, ...]
    #: The payload reading, or "auto" (detect below the codecs), or None (stop after the codecs).
    payload: str | None
    #: The reading's argument, for a reading that takes one (ARGUMENT_NAMES): a schema file's path
    #: (user's home expanded).
    argument: str | None = None
    #: Per codec step: the container it names (its display label), or None (any of the codec's).
    variants: tuple[str | None, ...] = ()
    #: Per codec step: the level it names (`<codec>:N`), or None; decoding ignores it.
    levels: tuple[int | None, ...] = ()
    #: Per codec step: the ID of the store's dictionary it names (`<codec>:dict=ID`), or None.
    dictionaries: tuple[int | None, ...] = ()
    #: A setting that picks its chain per row by a sibling column (`by COLUMN: VALUE -> CHAIN,
    #: ...`: payload.sibling); its codecs and payload are then empty, each chain a spec of its own.
    choice: SiblingChoice | None = None

    def __str__(self) -> str:
        return self.text


@functools.lru_cache(maxsize=256)
def parse_spec(text: str) -> Spec:
    """The spec `text` names (cached: the display applies it per value); raises SpecError."""
    if is_choice(text):
        return _choice_spec(text)
    steps = [step.strip() for step in text.strip().split(">")]
    if not steps or not all(steps):
        raise SpecError(f"empty step in {text!r} (example: {EXAMPLE_SPEC})")
    codecs: list[str] = []
    variants: list[str | None] = []
    levels: list[int | None] = []
    dicts: list[int | None] = []
    payload: str | None = None
    argument: str | None = None
    for i, step in enumerate(steps):
        last = i == len(steps) - 1
        name, _, arg = step.partition(":")
        name = name.strip().lower()  # names are case-blind; a file name keeps its case
        family, _, variant = name.partition("/")
        if family in CODEC_NAMES:
            if payload is not None:
                raise SpecError(f"{text!r}: codec {family!r} after the payload format")
            codecs.append(family)
            variants.append(_variant(step, family, variant) if variant else None)
            level, dict_id = _codec_arguments(step, arg) if arg else (None, None)
            levels.append(level)
            dicts.append(dict_id)
            continue
        if arg:
            if name not in ARGUMENT_NAMES:
                raise SpecError(f"{step!r}: {name!r} takes no argument here")
            argument = _argument(step, name, arg.strip())
        if name in PAYLOAD_NAMES or name == AUTO_STEP or _from_outside(name):
            if not last:
                raise SpecError(f"{text!r}: {name!r} must be the last step")
            payload = name
        else:
            known = (*CODEC_NAMES, *PAYLOAD_NAMES, *_outside_names(), AUTO_STEP)
            raise SpecError(unknown("step", name, known, within=text.strip()), name)
    return Spec(text.strip(), tuple(codecs), payload, argument, tuple(variants), tuple(levels),
                tuple(dicts) if any(d is not None for d in dicts) else ())


def _choice_spec(text: str) -> Spec:
    """A `by COLUMN: VALUE -> CHAIN, ...` setting, each chain checked as a spec of its own."""
    try:
        column, chains = parse_choice(text)
    except ChoiceError as err:
        raise SpecError(str(err)) from None
    checked = []
    for value, chain in chains:
        if is_choice(chain):
            raise SpecError(f"{value!r} -> {chain!r}: a chain, not another choice")
        checked.append((value, str(parse_spec(chain))))
    choice = SiblingChoice(column, tuple(checked))
    return Spec(str(choice), (), None, choice=choice)


def _outside_names() -> tuple[str, ...]:
    """The formats from outside (plugins' entry points, cqlshrc's [formats] commands): their names
    only, nothing imported but the metadata."""
    from cqlsh_ext.payload.formats._outside import outside_names

    return outside_names()


def _from_outside(name: str) -> bool:
    return name in _outside_names()


def _codec_arguments(step: str, arg: str) -> tuple[int | None, int | None]:
    """A codec step's `N`, `dict=ID` or `N,dict=ID`: (level, dictionary ID)."""
    level: int | None = None
    dict_id: int | None = None
    for item in arg.split(","):
        key, eq, value = item.strip().partition("=")
        if not eq:
            level = _level(step, key)
            continue
        if key.strip().lower() != "dict":
            raise SpecError(f"{step!r}: a codec takes a level and a dictionary (<codec>:N,dict=ID)")
        text = value.strip()
        try:
            # a zlib DICTID is written in hex (0x216f4cdd), an RFC 9842 dictionary by the 64 hex
            # digits of its SHA-256 (dcz:dict=...)
            dict_id = int(text, 16) if len(text) == SHA256_DIGITS else int(text, 0)
        except ValueError:
            raise SpecError(f"{step!r}: dict= takes a dictionary ID (a number, 0x... for zlib's DICTID, "
                            "or the 64 hex digits of a dictionary's SHA-256)") from None
    return level, dict_id


def _variant(step: str, family: str, variant: str) -> str:
    """The display label of the container `family/variant` names; SpecError when none has it.
    Only a step naming a container loads the codec modules (no codec library)."""
    from cqlsh_ext.codecs import registry

    fmt = registry.by_label(f"{family}/{variant}")
    if fmt is None or fmt.codec != family:
        labels = ", ".join(f.label for f in registry.all_containers() if f.codec == family and not f.primary)
        raise SpecError(f"{step!r}: no {family} container {variant!r}; known: {labels or 'none'}")
    return fmt.label


def _level(step: str, arg: str) -> int:
    try:
        return int(arg)
    except ValueError:
        raise SpecError(f"{step!r}: a codec takes a level after the colon (<codec>:N)") from None


def _argument(step: str, name: str, arg: str) -> str:
    """The argument with its file's path expanded; SpecError when the file is missing."""
    sep = FILE_AFTER.get(name)
    head, at, path = arg.rpartition(sep) if sep else ("", "", arg)
    if sep and not (head and at and path):
        raise SpecError(f"{step!r}: {ARGUMENT_NAMES[name]}")
    path = os.path.expanduser(path)
    if not os.path.isfile(path):
        raise SpecError(f"{step!r}: no such file {path!r} ({ARGUMENT_NAMES[name]})")
    return f"{head}@{path}" if head else path


def place_candidates(place: str) -> list[str]:
    """Setting keys that apply to `place` (ks.table.column[.path]), most specific first: the
    place itself, then its parents up to the column; each also without the keyspace."""
    parts = place.split(".")
    out: list[str] = []
    # A place has at least keyspace.table.column when both are known.
    for end in range(len(parts), 2, -1):
        out.append(".".join(parts[:end]))
    for end in range(len(parts), 2, -1):
        out.append(".".join(parts[1:end]))
    return out
