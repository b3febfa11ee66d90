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
from collections.abc import Callable
from typing import Any

from cqlsh_ext.payload import budget
from cqlsh_ext.payload.budget import BudgetExceeded, Meter
from cqlsh_ext.payload.formats import PayloadFormat
from cqlsh_ext.payload.formats.tree import (
    Cut,
    OverBudget,
    PayloadError,
    Symbol,
    Tagged,
    charged_text,
    render_charged,
)

#: Read without importing this module (common.declarations): its place in detection and
#: dispatch (lower first; auto-detection tries it only when FORMAT.auto), its place in name lists
#: and help, and what an argument after a colon names (payload.spec).
DECLARES = {"detection": 30, "listed": 40}

#: Opcodes read per node of the value's budget (payload.budget) at the most.
OPS_PER_NODE = 4


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


#: Calls that protocols 2 and 3 use to rebuild plain data, whose result is known without calling
#: anything: computed here from their arguments.
_SETS = ("__builtin__.set", "builtins.set", "__builtin__.frozenset", "builtins.frozenset")
_BYTES = ("__builtin__.bytes", "builtins.bytes", "__builtin__.bytearray", "builtins.bytearray")


_BACK_TO_OBJECT = Tagged("cycle", "back to an enclosing object")


class _Plain:
    """Turns what the stack machine built into a tree. The memo and GET make one object appear in
    several places (or inside itself): converted once per call, so the tree shares nodes as the
    pickle does, and every text built for the value (a symbol's name, a call, a key) is built by
    charged_text or render_charged, charged to one meter: a part shared by reference would
    otherwise be copied into text at each place it appears, a REDUCE argument nested by
    reference double its text at each level, and no budget would see it."""

    def __init__(self, meter: Meter) -> None:
        self.meter = meter
        #: The objects whose text is being built: one met again inside its own state is a cycle.
        self.building: set[int] = set()

    def tree(self, value: Any, depth: int = 0) -> Any:
        return self._convert(value, {}, depth)

    def _convert(self, value: Any, seen: dict[int, Any], depth: int) -> Any:
        if not isinstance(value, (_Built, set, frozenset, dict, list, tuple)):
            return value
        done = seen.get(id(value))
        if done is not None:
            return done
        if depth > self.meter.budget.depth:  # the stream was read whole; the tree stops here
            return Cut(self.meter.budget.depth_reason)
        if isinstance(value, _Built):
            symbol = seen[id(value)] = self.symbol(value, depth)
            return symbol
        self.meter.node()
        if isinstance(value, dict):
            mapping: dict[Any, Any] = {}
            seen[id(value)] = mapping
            for k, v in value.items():
                mapping[k] = self._convert(v, seen, depth + 1)
            return mapping
        items: list[Any] = []
        seen[id(value)] = items  # before the items: a list that holds itself stays a cycle
        items.extend(self._convert(v, seen, depth + 1) for v in value)
        return items

    def text(self, value: Any) -> str:
        """A value inside a call's text: symbols without their own "not executed" mark."""
        value = self.tree(value)
        if isinstance(value, Symbol):
            return value.text
        return render_charged(value, self.meter)

    def symbol(self, built: _Built, depth: int = 0) -> Symbol | Tagged:
        """The object's call and what was added to it (its state nested `depth` levels down)."""
        if id(built) in self.building:  # an object whose state holds itself (a parent link)
            return _BACK_TO_OBJECT
        self.building.add(id(built))
        try:
            parts = [built.call.text]
            for what, content in (("items", built.items), ("elements", built.elements),
                                  ("state", built.state)):
                if content:
                    parts += [f" with {what} ", render_charged(self.tree(content, depth + 1), self.meter)]
            return Symbol(charged_text(self.meter, *parts))
        finally:
            self.building.discard(id(built))

    def call(self, func: Any, args: Any) -> Symbol:
        parts = [self.text(func), "("]
        for i, arg in enumerate(args if isinstance(args, tuple) else (args,)):
            parts += [", ", self.text(arg)] if i else [self.text(arg)]
        return Symbol(charged_text(self.meter, *parts, ")"))

    def name(self, module: Any, attr: Any) -> Symbol:
        """`module.attr`, what GLOBAL, STACK_GLOBAL and INST import. STACK_GLOBAL takes both from
        the stack, where a stream may put anything (a memo reference to a large shared list): what
        is not a string is written as a value inside a call is."""
        return Symbol(charged_text(self.meter, module if type(module) is str else self.text(module), ".",
                                   attr if type(attr) is str else self.text(attr)))

    def known(self, func: Any, args: Any) -> Any:
        name = func.text if isinstance(func, Symbol) else None
        if isinstance(args, tuple):
            if name in _SETS and len(args) == 1 and isinstance(args[0], list):
                self.meter.node(len(args[0]))  # a memo reference can pass one long list many times
                return {self.hashable(a) for a in args[0]}
            if name == "_codecs.encode" and len(args) == 2 and isinstance(args[0], str) \
                    and args[1] == "latin1":
                self.meter.text(len(args[0]))  # a new copy each time: charged like text
                return args[0].encode("latin-1")
            if name in _BYTES and (not args or (len(args) == 1 and isinstance(args[0], bytes))):
                return args[0] if args else b""
        return _Built(self.call(func, args))

    def hashable(self, key: Any) -> Any:
        """`key` as a dict key or set element: a container as its text; a tuple as it is, once its
        hash is paid for (hashing walks a tuple whole, each shared element each time it appears)."""
        if isinstance(key, (dict, list, set, _Built)):
            return render_charged(self.tree(key), self.meter)
        if isinstance(key, tuple):
            pending = [key]
            while pending:
                node = pending.pop()
                self.meter.node(len(node))
                pending.extend(item for item in node if isinstance(item, tuple))
        return key


#: Opcodes that push their argument.
_ARGUMENTS = ("INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "FLOAT", "BINFLOAT", "STRING",
              "BINSTRING", "SHORT_BINSTRING", "UNICODE", "BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8",
              "BINBYTES", "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8")


class _Machine:
    """decode's stack machine: its stack and memo, what it builds made plain data by `plain`
    (charged to its meter). Each of its opcode methods reads the opcodes of one kind, and says
    whether it read `name` (_OPCODES: which reads which)."""

    def __init__(self, plain: _Plain, meter: Meter) -> None:
        self.stack: list[Any] = []
        self.memo: dict[int, Any] = {}
        self.plain = plain
        self.meter = meter

    def pop_mark(self) -> list[Any]:
        stack = self.stack
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is _MARK:
                items = stack[i + 1:]
                del stack[i:]
                return items
        raise PayloadError("pickle: MARK missing")

    def value(self, name: str, op: Any, arg: Any) -> bool:
        """A value pushed: MARK, an empty container, None, a boolean, an opcode's argument."""
        stack = self.stack
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
        elif op.arg is not None and name in _ARGUMENTS:
            stack.append(arg)
        else:
            return False
        return True

    def container(self, name: str, op: Any, arg: Any) -> bool:
        """Items added to the container on the stack, or a container made of the items on it."""
        stack, plain = self.stack, self.plain
        if name in ("APPEND",):
            value = stack.pop()
            stack[-1].append(value)
        elif name == "APPENDS":
            items = self.pop_mark()
            stack[-1].extend(items)
        elif name == "SETITEM":
            value, key = stack.pop(), stack.pop()
            stack[-1][plain.hashable(key)] = value
        elif name == "SETITEMS":
            items = self.pop_mark()
            target = stack[-1]
            for i in range(0, len(items) - 1, 2):
                target[plain.hashable(items[i])] = items[i + 1]
        elif name == "ADDITEMS":
            items = self.pop_mark()
            stack[-1].update(plain.hashable(i) for i in items)
        elif name == "TUPLE":
            stack.append(tuple(self.pop_mark()))
        elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
            n = int(name[-1])
            items = stack[-n:]
            del stack[-n:]
            stack.append(tuple(items))
        elif name == "LIST":
            stack.append(self.pop_mark())
        elif name == "DICT":
            items = self.pop_mark()
            stack.append({plain.hashable(items[i]): items[i + 1] for i in range(0, len(items) - 1, 2)})
        elif name == "FROZENSET":
            stack.append(frozenset(plain.hashable(i) for i in self.pop_mark()))
        else:
            return False
        return True

    def memo_or_stack(self, name: str, op: Any, arg: Any) -> bool:
        """The memo written or read, the stack's top dropped or repeated."""
        stack, memo = self.stack, self.memo
        if name in ("PUT", "BINPUT", "LONG_BINPUT"):
            memo[int(arg or 0)] = stack[-1]
        elif name == "MEMOIZE":
            memo[len(memo)] = stack[-1]
        elif name in ("GET", "BINGET", "LONG_BINGET"):
            stack.append(memo[int(arg or 0)])
        elif name == "POP":
            stack.pop()
        elif name == "POP_MARK":
            self.pop_mark()
        elif name == "DUP":
            stack.append(stack[-1])
        else:
            return False
        return True

    def call(self, name: str, op: Any, arg: Any) -> bool:
        """What would import or call something: a Symbol, or an object a call would have built."""
        stack, plain, meter = self.stack, self.plain, self.meter
        if name == "GLOBAL":
            module, _, attr = str(arg).partition(" ")
            stack.append(plain.name(module, attr))
        elif name == "STACK_GLOBAL":
            attr, module = stack.pop(), stack.pop()
            stack.append(plain.name(module, attr))
        elif name == "REDUCE":
            args, func = stack.pop(), stack.pop()
            stack.append(plain.known(func, args))
        elif name == "NEWOBJ":
            args, cls = stack.pop(), stack.pop()
            stack.append(_Built(plain.call(cls, args)))
        elif name == "NEWOBJ_EX":
            kwargs, args, cls = stack.pop(), stack.pop(), stack.pop()
            stack.append(_Built(plain.call(cls, (*args, kwargs))))
        elif name == "BUILD":
            state = stack.pop()
            if not isinstance(stack[-1], _Built):
                stack[-1] = _Built(Symbol(render_charged(plain.tree(stack[-1]), meter)))
            stack[-1].state = state
        elif name in ("INST", "OBJ"):
            items = self.pop_mark()
            if name == "INST":
                module, _, attr = str(arg).partition(" ")
                stack.append(_Built(plain.call(plain.name(module, attr), tuple(items))))
            else:
                stack.append(_Built(plain.call(items[0], tuple(items[1:]))))
        elif name in ("PERSID", "BINPERSID"):
            pid = arg if name == "PERSID" else stack.pop()
            pid_text = render_charged(plain.tree(pid), meter)
            stack.append(Symbol(charged_text(meter, "persistent_load(", pid_text, ")")))
        elif name in ("EXT1", "EXT2", "EXT4"):
            stack.append(Symbol(charged_text(meter, "copyreg extension ", str(int(arg or 0)))))
        elif name == "NEXT_BUFFER" or name == "READONLY_BUFFER":
            stack.append(Symbol("out-of-band buffer"))
        else:
            return False
        return True


#: Which of the machine's methods reads each opcode (one it reads not: "not read").
_OPCODES: dict[str, Callable[[_Machine, str, Any, Any], bool]] = {
    **dict.fromkeys(("MARK", "EMPTY_DICT", "EMPTY_LIST", "EMPTY_TUPLE", "EMPTY_SET", "NONE", "NEWTRUE",
                     "NEWFALSE", *_ARGUMENTS), _Machine.value),
    **dict.fromkeys(("APPEND", "APPENDS", "SETITEM", "SETITEMS", "ADDITEMS", "TUPLE", "TUPLE1", "TUPLE2",
                     "TUPLE3", "LIST", "DICT", "FROZENSET"), _Machine.container),
    **dict.fromkeys(("PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE", "GET", "BINGET", "LONG_BINGET", "POP",
                     "POP_MARK", "DUP"), _Machine.memo_or_stack),
    **dict.fromkeys(("GLOBAL", "STACK_GLOBAL", "REDUCE", "NEWOBJ", "NEWOBJ_EX", "BUILD", "INST", "OBJ",
                     "PERSID", "BINPERSID", "EXT1", "EXT2", "EXT4", "NEXT_BUFFER", "READONLY_BUFFER"),
                    _Machine.call),
}


def decode(data: bytes) -> Any:
    import pickletools

    limits = budget.current()
    meter = limits.meter()
    plain = _Plain(meter)
    machine = _Machine(plain, meter)
    stack = machine.stack
    # Each value takes a few opcodes at the most (the value, MEMOIZE, MARK, APPENDS).
    max_ops = limits.nodes * OPS_PER_NODE
    try:
        for count, (op, arg, _pos) in enumerate(pickletools.genops(io.BytesIO(data))):
            if count > max_ops:
                raise OverBudget(f"pickle: over {max_ops:,} opcodes ({limits.nodes_reason})")
            name = op.name
            if name in ("PROTO", "FRAME"):
                continue
            if name == "STOP":
                break
            read = _OPCODES.get(name)
            if read is None or not read(machine, name, op, arg):
                raise PayloadError(f"pickle: opcode {name} not read")
        if len(stack) != 1:
            raise PayloadError("pickle: the stream does not end with one value")
        return plain.tree(stack[0])
    except PayloadError:
        raise
    except BudgetExceeded as err:
        raise OverBudget(f"pickle: {err}") from None
    except (ValueError, IndexError, KeyError, TypeError, AttributeError, EOFError) as err:
        raise PayloadError(f"pickle: {type(err).__name__}") from None


FORMAT = PayloadFormat("pickle", True, _maybe, decode, labeller=lambda data: f"pickle/{protocol(data)}",
                       leads=b"\x80",
                       unwritable="not written: a pickle's bytes depend on the writer's classes and protocol",
                       confidence="confident",
                       confidence_why="the protocol header, every opcode and the final STOP")
