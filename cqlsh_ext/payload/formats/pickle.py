"""Python pickle (protocols 2 to 5), read from its opcodes and never loaded.

pickle.loads runs code named by the data. Here the opcodes (pickletools.genops, which only parses)
drive a small stack machine that builds plain data only: dicts, lists, tuples, sets, strings,
bytes, numbers, booleans, None. Anything that would import or call something (GLOBAL,
STACK_GLOBAL, REDUCE, NEWOBJ, BUILD, INST, OBJ, persistent ids) becomes a Symbol such as
`collections.OrderedDict([...])`, shown as not executed. Detected by its first byte (PROTO 2-5)
and its last (STOP).
"""

from __future__ import annotations

import io
from typing import Any

from cqlsh_ext.payload.formats import PayloadFormat
from cqlsh_ext.payload.formats.tree import MAX_ITEMS, PayloadError, Symbol, render

#: Opcodes a value may take at most (a pickle of a million small items is still read).
MAX_OPS = 2_000_000


def _maybe(data: bytes) -> bool:
    return len(data) >= 3 and data[0] == 0x80 and 2 <= data[1] <= 5 and data[-1:] == b"."


def protocol(data: bytes) -> int:
    return data[1]


class _Mark:
    pass


_MARK = _Mark()


class _Built:
    """An object a call would have built: the call, and what later opcodes add to it (items of
    an OrderedDict or a defaultdict, the state BUILD sets)."""

    def __init__(self, call: Symbol) -> None:
        self.call = call
        self.items: dict[Any, Any] = {}
        self.elements: list[Any] = []
        self.state: Any = None

    def __setitem__(self, key: Any, value: Any) -> None:
        self.items[key] = value

    def append(self, value: Any) -> None:
        self.elements.append(value)

    def extend(self, values: list[Any]) -> None:
        self.elements.extend(values)

    def update(self, values: Any) -> None:
        self.elements.extend(values)

    def symbol(self) -> Symbol:
        parts = [self.call.text]
        for what, content in (("items", self.items), ("elements", self.elements), ("state", self.state)):
            if content:
                parts.append(f"{what} {render(_plain(content))}")
        return Symbol(" with ".join(parts))


#: Calls that protocols 2 and 3 use to rebuild plain data, whose result is known without calling
#: anything: computed here from their arguments.
_SETS = ("__builtin__.set", "builtins.set", "__builtin__.frozenset", "builtins.frozenset")
_BYTES = ("__builtin__.bytes", "builtins.bytes", "__builtin__.bytearray", "builtins.bytearray")


def _known(func: Any, args: Any) -> Any:
    name = func.text if isinstance(func, Symbol) else None
    if isinstance(args, tuple):
        if name in _SETS and len(args) == 1 and isinstance(args[0], list):
            return {_hashable(a) for a in args[0]}
        if name == "_codecs.encode" and len(args) == 2 and isinstance(args[0], str) and args[1] == "latin1":
            return args[0].encode("latin-1")
        if name in _BYTES and (not args or (len(args) == 1 and isinstance(args[0], bytes))):
            return args[0] if args else b""
    return _Built(_call_text(func, args))


def _text(value: Any) -> str:
    """A value inside a call's text: symbols without their own "not executed" mark."""
    value = _plain(value)
    return value.text if isinstance(value, Symbol) else render(value)


def _call_text(func: Any, args: Any) -> Symbol:
    inner = ", ".join(_text(a) for a in args[:MAX_ITEMS]) if isinstance(args, tuple) else _text(args)
    return Symbol(f"{_text(func)}({inner})")


def decode(data: bytes) -> Any:
    import pickletools

    stack: list[Any] = []
    memo: dict[int, Any] = {}

    def pop_mark() -> list[Any]:
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is _MARK:
                items = stack[i + 1:]
                del stack[i:]
                return items
        raise PayloadError("pickle: MARK missing")

    try:
        for count, (op, arg, _pos) in enumerate(pickletools.genops(io.BytesIO(data))):
            if count > MAX_OPS:
                raise PayloadError("pickle: too many opcodes")
            name = op.name
            if name in ("PROTO", "FRAME"):
                continue
            if name == "STOP":
                break
            if name == "MARK":
                stack.append(_MARK)
            elif name in ("EMPTY_DICT",):
                stack.append({})
            elif name == "EMPTY_LIST":
                stack.append([])
            elif name == "EMPTY_TUPLE":
                stack.append(())
            elif name == "EMPTY_SET":
                stack.append(set())
            elif name == "NONE":
                stack.append(None)
            elif name in ("NEWTRUE", "NEWFALSE"):
                stack.append(name == "NEWTRUE")
            elif op.arg is not None and name in ("INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1",
                                                 "LONG4", "FLOAT", "BINFLOAT", "STRING", "BINSTRING",
                                                 "SHORT_BINSTRING", "UNICODE", "BINUNICODE",
                                                 "SHORT_BINUNICODE", "BINUNICODE8", "BINBYTES",
                                                 "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8"):
                stack.append(arg)
            elif name in ("APPEND",):
                value = stack.pop()
                stack[-1].append(value)
            elif name == "APPENDS":
                items = pop_mark()
                stack[-1].extend(items)
            elif name == "SETITEM":
                value, key = stack.pop(), stack.pop()
                stack[-1][_hashable(key)] = value
            elif name == "SETITEMS":
                items = pop_mark()
                target = stack[-1]
                for i in range(0, len(items) - 1, 2):
                    target[_hashable(items[i])] = items[i + 1]
            elif name == "ADDITEMS":
                items = pop_mark()
                stack[-1].update(_hashable(i) for i in items)
            elif name == "TUPLE":
                stack.append(tuple(pop_mark()))
            elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
                n = int(name[-1])
                items = stack[-n:]
                del stack[-n:]
                stack.append(tuple(items))
            elif name == "LIST":
                stack.append(pop_mark())
            elif name == "DICT":
                items = pop_mark()
                stack.append({_hashable(items[i]): items[i + 1] for i in range(0, len(items) - 1, 2)})
            elif name == "FROZENSET":
                stack.append(frozenset(_hashable(i) for i in pop_mark()))
            elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
                memo[int(arg or 0)] = stack[-1]
            elif name == "MEMOIZE":
                memo[len(memo)] = stack[-1]
            elif name in ("GET", "BINGET", "LONG_BINGET"):
                stack.append(memo[int(arg or 0)])
            elif name == "POP":
                stack.pop()
            elif name == "POP_MARK":
                pop_mark()
            elif name == "DUP":
                stack.append(stack[-1])
            elif name == "GLOBAL":
                module, _, attr = str(arg).partition(" ")
                stack.append(Symbol(f"{module}.{attr}"))
            elif name == "STACK_GLOBAL":
                attr, module = stack.pop(), stack.pop()
                stack.append(Symbol(f"{module}.{attr}"))
            elif name == "REDUCE":
                args, func = stack.pop(), stack.pop()
                stack.append(_known(func, args))
            elif name == "NEWOBJ":
                args, cls = stack.pop(), stack.pop()
                stack.append(_Built(_call_text(cls, args)))
            elif name == "NEWOBJ_EX":
                kwargs, args, cls = stack.pop(), stack.pop(), stack.pop()
                stack.append(_Built(_call_text(cls, (*args, kwargs))))
            elif name == "BUILD":
                state = stack.pop()
                if not isinstance(stack[-1], _Built):
                    stack[-1] = _Built(Symbol(render(_plain(stack[-1]))))
                stack[-1].state = state
            elif name in ("INST", "OBJ"):
                items = pop_mark()
                if name == "INST":
                    module, _, attr = str(arg).partition(" ")
                    stack.append(_Built(_call_text(Symbol(f"{module}.{attr}"), tuple(items))))
                else:
                    stack.append(_Built(_call_text(items[0], tuple(items[1:]))))
            elif name in ("PERSID", "BINPERSID"):
                pid = arg if name == "PERSID" else stack.pop()
                stack.append(Symbol(f"persistent_load({render(pid)})"))
            elif name in ("EXT1", "EXT2", "EXT4"):
                stack.append(Symbol(f"copyreg extension {arg}"))
            elif name == "NEXT_BUFFER" or name == "READONLY_BUFFER":
                stack.append(Symbol("out-of-band buffer"))
            else:
                raise PayloadError(f"pickle: opcode {name} not read")
    except PayloadError:
        raise
    except (ValueError, IndexError, KeyError, TypeError, AttributeError, EOFError) as err:
        raise PayloadError(f"pickle: {type(err).__name__}") from None
    if len(stack) != 1:
        raise PayloadError("pickle: the stream does not end with one value")
    return _plain(stack[0])


def _hashable(key: Any) -> Any:
    if isinstance(key, (dict, list, set, _Built)):
        return render(_plain(key))
    return key


def _plain(value: Any) -> Any:
    if isinstance(value, _Built):
        return value.symbol()
    if isinstance(value, (set, frozenset)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


FORMAT = PayloadFormat("pickle", True, _maybe, decode, labeller=lambda data: f"pickle/{protocol(data)}")
