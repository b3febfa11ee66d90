"""Pickles written opcode by opcode: the hostile shapes no Python object pickles as, and the
structure-aware mutations the fuzz engines apply to pickle inputs (tests/fuzzing/engines.py).

Byte-level mutation rarely makes a pickle whose memo shares one large structure and then hands it
to an opcode that builds text from its operands (STACK_GLOBAL's module and name, a REDUCE's
arguments, BUILD's state, a dict key, a set element, a persistent id): one flipped byte breaks
the stream. These mutations keep the stream readable and put such a structure where the reader
meets it:

- a shared structure (a list, tuple, dict or object holding the previous level twice, nested by
  memo reference) is put after PROTO, and the seed's own memo indices are moved past it;
- then one to three edits: a string operand (a name) replaced by a reference to the structure,
  or a value replaced by a consumer of it (STACK_GLOBAL, REDUCE, BUILD, NEWOBJ, a dict key, a set,
  a persistent id, `_codecs.encode` over a shared string).
"""

from __future__ import annotations

import io
import pickletools
import random
import struct
from collections.abc import Callable

PROTO_4 = b"\x80\x04"
MARK, STOP, POP, MEMOIZE = b"(", b".", b"0", b"\x94"
EMPTY_LIST, EMPTY_DICT, EMPTY_TUPLE, APPENDS, SETITEM = b"]", b"}", b")", b"e", b"s"
TUPLE1, TUPLE2, STACK_GLOBAL, REDUCE, BUILD = b"\x85", b"\x86", b"\x93", b"R", b"b"
NEWOBJ, BINPERSID, NONE, FROZENSET = b"\x81", b"Q", b"N", b"\x91"


def text(value: str) -> bytes:
    """SHORT_BINUNICODE, or BINUNICODE past 255 bytes."""
    raw = value.encode("utf-8")
    if len(raw) < 256:
        return b"\x8c" + bytes([len(raw)]) + raw
    return b"X" + struct.pack("<I", len(raw)) + raw


def get(index: int) -> bytes:
    """BINGET, or LONG_BINGET past 255."""
    return b"h" + bytes([index]) if index < 256 else b"j" + struct.pack("<I", index)


def put(index: int) -> bytes:
    return b"q" + bytes([index]) if index < 256 else b"r" + struct.pack("<I", index)


def small_int(value: int) -> bytes:
    return b"K" + bytes([value & 0xFF])


def global_(module: str, name: str) -> bytes:
    return text(module) + text(name) + STACK_GLOBAL


# ------------------------------------------------------------------------- shared structures
# Each writes memo entries first..first+levels (MEMOIZE, so `first` must be the memo's length
# there), every level holding the one before it twice, and leaves the stack as it found it.

def _level(kind: str, prev: int) -> bytes:
    if kind == "list":
        return EMPTY_LIST + MEMOIZE + MARK + get(prev) + get(prev) + APPENDS
    if kind == "tuple":
        return get(prev) + get(prev) + TUPLE2 + MEMOIZE
    if kind == "dict":
        return EMPTY_DICT + MEMOIZE + small_int(1) + get(prev) + SETITEM + small_int(2) + get(prev) + SETITEM
    # an object (a call the reader only names) whose state holds the previous level twice
    return (global_("m", "C") + EMPTY_TUPLE + REDUCE + MEMOIZE
            + EMPTY_DICT + small_int(1) + get(prev) + SETITEM + small_int(2) + get(prev) + SETITEM + BUILD)


KINDS = ("list", "tuple", "dict", "object")


def shared(kind: str, levels: int, leaf: int = 64, first: int = 0) -> tuple[bytes, int]:
    """(opcodes, memo index of the top level): a leaf list of `leaf` small integers, then `levels`
    levels of `kind`, each holding the previous twice; the top renders 2^levels times the leaf."""
    ops = bytearray(EMPTY_LIST + MEMOIZE + MARK + small_int(1) * leaf + APPENDS + POP)
    for level in range(1, levels + 1):
        ops += _level(kind, first + level - 1) + POP
    return bytes(ops), first + levels


def stack_global_of_a_shared_list(levels: int = 30, leaf: int = 64) -> bytes:
    """A hang once found by fuzzing: STACK_GLOBAL whose module and name are memo references to a list that
    holds a list twice, 30 levels down (the symbol's text was an f-string of the list's repr)."""
    body, top = shared("list", levels, leaf)
    return PROTO_4 + body + get(top) + get(top) + STACK_GLOBAL + STOP


# ------------------------------------------------------------------------------- consumers
# Opcodes that take the structure at memo `top` and push one value built from it.

def _consumers(top: int) -> list[bytes]:
    ref = get(top)
    return [
        ref + ref + STACK_GLOBAL,  # containers where the module and the name are expected
        text("m") + ref + STACK_GLOBAL,
        global_("m", "f") + ref + ref + TUPLE2 + REDUCE,  # a call over the structure
        global_("m", "C") + EMPTY_TUPLE + REDUCE + ref + BUILD,  # an object whose state it is
        global_("m", "C") + ref + TUPLE1 + NEWOBJ,
        EMPTY_DICT + ref + NONE + SETITEM,  # a dict key
        MARK + ref + FROZENSET,  # a set element
        global_("builtins", "set") + ref + TUPLE1 + REDUCE,
        ref + BINPERSID,  # a persistent id
    ]


_STRING_OPS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "STRING", "BINSTRING",
               "SHORT_BINSTRING"}
_VALUE_OPS = _STRING_OPS | {"BININT", "BININT1", "BININT2", "INT", "LONG1", "NONE", "NEWTRUE", "NEWFALSE",
                            "BINFLOAT", "SHORT_BINBYTES", "BINBYTES", "EMPTY_LIST", "EMPTY_DICT",
                            "EMPTY_TUPLE", "EMPTY_SET", "BINGET", "LONG_BINGET"}


def _ops(data: bytes) -> list[tuple[str, object, bytes]] | None:
    """(name, argument, the op's bytes) of a readable protocol 2-5 pickle, else None."""
    if len(data) < 3 or data[0] != 0x80:
        return None
    try:
        found = list(pickletools.genops(io.BytesIO(data)))
    except Exception:  # noqa: BLE001 - whatever pickletools refuses is no pickle to mutate
        return None
    out = []
    for i, (op, arg, pos) in enumerate(found):
        end = found[i + 1][2] if i + 1 < len(found) else len(data)
        out.append((op.name, arg, data[pos:end]))
    return out


def _moved(name: str, arg: object, raw: bytes, offset: int) -> bytes:
    """One of the seed's opcodes with its memo index moved past the inserted structure."""
    if name in ("BINGET", "LONG_BINGET", "GET"):
        return get(int(arg) + offset)  # type: ignore[call-overload]
    if name in ("BINPUT", "LONG_BINPUT", "PUT"):
        return put(int(arg) + offset)  # type: ignore[call-overload]
    if name == "FRAME":  # a frame's length would be wrong now; frames are optional
        return b""
    return raw


def mutate(data: bytes, rng: random.Random) -> bytes | None:
    """A structure-aware mutation of a pickle (see the module's text); None when `data` is not a
    readable pickle."""
    ops = _ops(data)
    if ops is None or ops[0][0] != "PROTO":
        return None
    kind = rng.choice(KINDS)
    # Mostly structures the budget admits (cheap to run: more executions per second), sometimes
    # ones that only an unmetered walk would finish (2^40 times the leaf).
    levels = rng.randint(1, 12) if rng.random() < 0.7 else rng.randint(13, 40)
    body, top = shared(kind, levels, rng.randint(1, 16))
    offset = top + 1
    seed_ops = [_moved(name, arg, raw, offset) for name, arg, raw in ops[1:]]
    names = [name for name, _, _ in ops[1:]]
    for _ in range(rng.randint(1, 3)):
        places = [i for i, name in enumerate(names) if name in _VALUE_OPS]
        if not places:
            break
        i = rng.choice(places)
        if names[i] in _STRING_OPS and rng.random() < 0.5:
            seed_ops[i] = get(top)  # a container (or an object) where a name or a string was
        else:
            seed_ops[i] = rng.choice(_consumers(top))
        names[i] = "edited"
    return PROTO_4 + body + b"".join(seed_ops)


#: Mutations by payload format name (targets.py gives a target those of its inputs' formats).
MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes | None]] = {"pickle": mutate}
