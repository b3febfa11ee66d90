"""Payload formats from outside: plugins (a Python entry point) and external commands (cqlshrc).

A team's own format comes in through the door the built-ins use: a `PayloadFormat`
(payload.formats), registered under the entry point group `cqlsh_ext.formats`:

    [project.entry-points."cqlsh_ext.formats"]
    orders = "acme_formats:FORMAT"          # a PayloadFormat: decode, optionally encode

or an external command named in cqlshrc's `[formats]` section (`NAME = command args`, the value's
bytes on its stdin, the decoded value on its stdout: JSON, or text with `NAME.output = text`).

Neither is trusted with the per-value budget: a plugin's decoder and encoder run in a worker
process of this shell (one, started on first use, kept) under an address-space limit
(PLUGIN_MEMORY beyond its start), each call within a time limit (cut and said when it takes
longer: the worker is ended and started again for the next value); what a decoder answers is
checked there against the value's budget (nodes, depth, characters: payload.budget) and must be
plain data (maps, lists, text, numbers, booleans, null, bytes). A command runs with a timeout and
an output cap; a command that fails, hangs or floods is that value's note, never the shell's
end. The names are read from the entry points' metadata and the settings without importing any
plugin (spec parsing knows them); a plugin module is imported on its format's first use, in this
process (for its declared attributes) and in the worker (to run it).
"""

from __future__ import annotations

import atexit
import json
import marshal
import os
import resource
import selectors
import shlex
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: The entry point group a plugin registers its PayloadFormat under.
ENTRY_POINT_GROUP = "cqlsh_ext.formats"
#: cqlshrc's section of external-command decoders.
COMMAND_SECTION = "formats"
#: What a plugin's call or a command may take, by default: seconds, address space beyond the
#: worker's start, output bytes (a command's stdout).
CALL_SECONDS = 5.0
PLUGIN_MEMORY = 512 << 20
COMMAND_OUTPUT = 4 << 20
#: The most a plugin may claim for a value it detects (payload.confidence): likely. A claim to have
#: verified a checksum cannot be checked here, so confident is left to values the user names.
MOST_SURE = "likely"
_OUTPUTS = ("json", "text")
_OPTIONS = ("output", "timeout", "max_output", "encoder")


class OutsideError(ValueError):
    """A plugin or a command that cannot be set up; str() is the one-line reason."""


@dataclass(frozen=True)
class Origin:
    """Where a format from outside comes from: a plugin's distribution and version, or a command."""

    name: str
    #: "plugin" or "command"
    source: str
    #: The distribution that registers a plugin, or the command line.
    package: str
    version: str | None = None

    def __str__(self) -> str:
        if self.source == "plugin":
            return f"{self.name} (plugin {self.package} {self.version or '?'})"
        return f"{self.name} (command: {self.package})"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "package": self.package, "version": self.version}


@dataclass(frozen=True)
class FormatCommand:
    """An external decoder from cqlshrc: argv, what it writes (json or text), its limits, and an
    encoder command (the record's JSON or the text on stdin, the stored bytes on stdout)."""

    name: str
    argv: tuple[str, ...]
    output: str = "json"
    timeout: float = CALL_SECONDS
    max_output: int = COMMAND_OUTPUT
    encoder: tuple[str, ...] | None = None


_COMMANDS: dict[str, FormatCommand] = {}


# ------------------------------------------------------------------ names, without importing


def _entry_points() -> list[Any]:
    from importlib.metadata import entry_points

    return list(entry_points(group=ENTRY_POINT_GROUP))


_PLUGIN_NAMES: tuple[str, ...] | None = None


def plugin_names() -> tuple[str, ...]:
    """The names the installed plugins register (read from their metadata, nothing imported)."""
    global _PLUGIN_NAMES
    if _PLUGIN_NAMES is None:
        _PLUGIN_NAMES = tuple(sorted({ep.name.lower() for ep in _entry_points()}))
    return _PLUGIN_NAMES


def command_names() -> tuple[str, ...]:
    return tuple(sorted(_COMMANDS))


def outside_names() -> tuple[str, ...]:
    """Every format name from outside: the plugins', then the commands'."""
    return (*plugin_names(), *(n for n in command_names() if n not in plugin_names()))


def origins() -> list[Origin]:
    """Where each format from outside comes from (--version, INSPECT, the API's notes)."""
    out: list[Origin] = []
    for ep in sorted(_entry_points(), key=lambda e: e.name):
        dist = getattr(ep, "dist", None)
        out.append(Origin(ep.name.lower(), "plugin", dist.name if dist is not None else ep.value,
                          dist.version if dist is not None else None))
    out += [Origin(name, "command", shlex.join(c.argv)) for name, c in sorted(_COMMANDS.items())]
    return out


def origin(name: str) -> Origin | None:
    return next((o for o in origins() if o.name == name), None)


def configure_commands(section: Mapping[str, str]) -> None:
    """The `[formats]` section of cqlshrc: `NAME = command args` and `NAME.output` (json or text),
    `NAME.timeout` (seconds), `NAME.max_output` (bytes), `NAME.encoder` (a command). Raises
    OutsideError with one line; replaces what an earlier call set (the caller forgets the specs
    parsed before: payload.spec.parse_spec's cache)."""
    from cqlsh_ext.payload.names import PAYLOAD_NAMES

    found: dict[str, dict[str, str]] = {}
    for key, text in section.items():
        name, _, option = key.strip().lower().partition(".")
        if option and option not in _OPTIONS:
            raise OutsideError(f"[{COMMAND_SECTION}] {key}: unknown option {option!r} "
                               f"(known: {', '.join(_OPTIONS)})")
        found.setdefault(name, {})[option or "command"] = text.strip()
    commands: dict[str, FormatCommand] = {}
    for name, options in found.items():
        if not name.isidentifier():
            raise OutsideError(f"[{COMMAND_SECTION}] {name!r}: a format's name is a word "
                               "(letters, digits, _)")
        if name in PAYLOAD_NAMES:
            raise OutsideError(f"[{COMMAND_SECTION}] {name}: a built-in reading has that name")
        if "command" not in options:
            raise OutsideError(f"[{COMMAND_SECTION}] {name}: options without a command "
                               f"({name} = command args)")
        argv = tuple(shlex.split(options["command"]))
        if not argv:
            raise OutsideError(f"[{COMMAND_SECTION}] {name}: an empty command")
        output = options.get("output", "json").lower()
        if output not in _OUTPUTS:
            raise OutsideError(f"[{COMMAND_SECTION}] {name}.output: json or text, not {output!r}")
        try:
            timeout = float(options.get("timeout", CALL_SECONDS))
            max_output = int(options.get("max_output", COMMAND_OUTPUT))
        except ValueError as err:
            raise OutsideError(f"[{COMMAND_SECTION}] {name}: {err}") from None
        if not (0 < timeout <= 600) or max_output <= 0:
            raise OutsideError(f"[{COMMAND_SECTION}] {name}: timeout (0, 600] seconds, max_output > 0 bytes")
        encoder = tuple(shlex.split(options["encoder"])) if options.get("encoder") else None
        commands[name] = FormatCommand(name, argv, output, timeout, max_output, encoder)
    _COMMANDS.clear()
    _COMMANDS.update(commands)
    _GUARDED.clear()


# ------------------------------------------------------------------ the formats, guarded


_GUARDED: dict[str, Any] = {}


def outside_formats() -> list[Any]:
    """Every format from outside as a guarded PayloadFormat (plugins first, then commands); a
    plugin that cannot be loaded is left out and said once on stderr (--version lists it)."""
    out = []
    for name in outside_names():
        try:
            fmt = outside_format(name)
        except OutsideError as err:
            print(f"cqlsh-ext: format {name}: {err}", file=sys.stderr)
            continue
        if fmt is not None:
            out.append(fmt)
    return out


def outside_format(name: str) -> Any:
    """The guarded PayloadFormat of a format from outside; None when `name` is none."""
    found = _GUARDED.get(name)
    if found is not None:
        return found
    if name in _COMMANDS:
        fmt = _command_format(_COMMANDS[name])
    elif name in plugin_names():
        fmt = _plugin_format(name)
    else:
        return None
    _GUARDED[name] = fmt
    return fmt


def _load_plugin(name: str) -> Any:
    """The PayloadFormat a plugin's entry point names (imported here)."""
    from cqlsh_ext.payload.formats import PayloadFormat

    ep = next((e for e in _entry_points() if e.name.lower() == name), None)
    if ep is None:
        raise OutsideError(f"no plugin registers {name!r}")
    try:
        fmt = ep.load()
    except Exception as err:
        raise OutsideError(f"plugin {ep.value} does not load ({type(err).__name__}: {err})") from None
    if callable(fmt) and not isinstance(fmt, PayloadFormat):
        fmt = fmt()
    if not isinstance(fmt, PayloadFormat):
        raise OutsideError(f"plugin {ep.value} is a {type(fmt).__name__}, not a PayloadFormat")
    return fmt


def _plugin_format(name: str) -> Any:
    from cqlsh_ext.payload.formats import PayloadFormat
    from cqlsh_ext.payload.view import CONFIDENCES as LEVELS

    plugin = _load_plugin(name)
    known = origin(name)
    writer = f"plugin {known.package} {known.version}" if known is not None else "plugin"
    leads = plugin.leads
    sure = plugin.confidence if plugin.confidence in LEVELS else "guessed"
    if LEVELS.index(sure) > LEVELS.index(MOST_SURE):
        sure = MOST_SURE

    def maybe(data: bytes) -> bool:  # the plugin's own look runs in the worker, with its decoder
        return leads is None or (bool(data) and data[0] in leads)

    return PayloadFormat(
        name, plugin.auto, maybe,
        lambda data: _WORKER.call("decode", name, data, None),
        detector=lambda data: _WORKER.call("detect", name, data, None),
        decode_with=((lambda data, arg: _WORKER.call("decode", name, data, arg))
                     if plugin.decode_with else None),
        encode=(lambda record: _WORKER.call("encode", name, record, None)) if plugin.encode else None,
        encode_with=((lambda record, arg: _WORKER.call("encode", name, record, arg))
                     if plugin.encode_with else None),
        encodes_text=plugin.encodes_text, writer=writer,
        unwritable=plugin.unwritable if plugin.encode is None else "",
        leads=leads, confidence=sure,
        confidence_why=f"{plugin.confidence_why} (a plugin's detection, {writer})")


def _command_format(command: FormatCommand) -> Any:
    from cqlsh_ext.payload.formats import PayloadFormat

    shown = shlex.join(command.argv)
    return PayloadFormat(
        command.name, False, lambda data: True,
        lambda data: _command_decode(command, data),
        encode=(lambda record: _command_encode(command, record)) if command.encoder else None,
        encodes_text=command.output == "text",
        writer=f"command {shlex.join(command.encoder)}" if command.encoder else "",
        unwritable=f"no encoder command ({command.name}.encoder in [{COMMAND_SECTION}])",
        confidence="guessed", confidence_why=f"an external command's answer ({shown})")


# ------------------------------------------------------------------ external commands


def run_command(argv: tuple[str, ...], data: bytes, timeout: float, max_output: int, name: str = "") -> bytes:
    """What `argv` writes on stdout given `data` on stdin, at most `max_output` bytes, within
    `timeout` seconds; PayloadError (one line, naming the format `name`) when it fails, hangs or
    floods (it is ended, with whatever it started)."""
    from cqlsh_ext.payload.formats.tree import PayloadError

    name = name or os.path.basename(argv[0])
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as err:
        raise PayloadError(f"command {name} does not start ({err.strerror or err})") from None
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    writer = threading.Thread(target=_feed, args=(proc.stdin, data), daemon=True)
    writer.start()
    out, said = bytearray(), bytearray()
    deadline = time.monotonic() + timeout
    why: str | None = None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ, out)
        sel.register(proc.stderr, selectors.EVENT_READ, said)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                why = f"command {name} took longer than {timeout:g} s: cut"
                break
            for key, _ in sel.select(left):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                key.data.extend(chunk)
                if key.data is out and len(out) > max_output:
                    why = f"command {name} wrote more than {max_output:,} bytes: cut"
                    break
                if key.data is said and len(said) > 65536:
                    del said[4096:]
            if why:
                break
    if why is not None:
        _end(proc)
        raise PayloadError(why)
    try:
        code = proc.wait(max(deadline - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        _end(proc)
        raise PayloadError(f"command {name} took longer than {timeout:g} s: cut") from None
    if code != 0:
        first = bytes(said).decode("utf-8", "replace").strip().splitlines()
        last = f": {first[-1][:200]}" if first else ""
        raise PayloadError(f"command {name} failed (exit {code}){last}")
    return bytes(out)


def _feed(pipe: Any, data: bytes) -> None:
    try:
        pipe.write(data)
        pipe.close()
    except OSError:  # the command did not read it all: its answer says the rest
        pass


def _end(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    proc.wait()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass


def _command_decode(command: FormatCommand, data: bytes) -> Any:
    from cqlsh_ext.payload.formats.tree import PayloadError

    out = run_command(command.argv, data, command.timeout, command.max_output, command.name)
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError:
        raise PayloadError(f"{command.name}: the command's output is not UTF-8") from None
    if command.output == "text":
        return text
    try:
        tree = json.loads(text)
    except ValueError as err:
        raise PayloadError(f"{command.name}: the command's output is not JSON ({err})") from None
    return checked_tree(tree, command.name)


def _command_encode(command: FormatCommand, record: Any) -> bytes:
    assert command.encoder is not None
    given = record if isinstance(record, str) else json.dumps(record, ensure_ascii=False)
    return run_command(command.encoder, given.encode("utf-8"), command.timeout, command.max_output,
                       f"{command.name}.encoder")


# ------------------------------------------------------------------ the tree a reader answers


def checked_tree(tree: Any, name: str) -> Any:
    """`tree` as plain data within the current value's budget (payload.budget: nodes, depth,
    characters); PayloadError or OverBudget naming `name` otherwise."""
    from cqlsh_ext.payload import budget
    from cqlsh_ext.payload.formats.tree import OverBudget, PayloadError

    limits = budget.current()
    nodes_left = [limits.nodes]
    chars_left = [limits.chars]
    max_depth = limits.depth

    def walk(node: Any, depth: int) -> Any:
        nodes_left[0] -= 1
        if nodes_left[0] < 0:
            raise OverBudget(f"{name}: {limits.nodes_reason}")
        if depth > max_depth:
            raise OverBudget(f"{name}: {limits.depth_reason}")
        kind = type(node)
        if node is None or kind in (bool, int, float):
            return node
        if kind is str or kind is bytes or kind is bytearray:
            chars_left[0] -= len(node)
            if chars_left[0] < 0:
                raise OverBudget(f"{name}: {limits.chars_reason}")
            return bytes(node) if kind is bytearray else node
        if kind is list or kind is tuple:
            return [walk(item, depth + 1) for item in node]
        if kind is dict:
            out = {}
            for key, value in node.items():
                if type(key) not in (str, int):
                    raise PayloadError(f"{name}: a map key of type {type(key).__name__}")
                out[walk(key, depth + 1)] = walk(value, depth + 1)
            return out
        raise PayloadError(f"{name}: answered a value of type {kind.__name__}, not plain data")

    return walk(tree, 0)


# ------------------------------------------------------------------ the plugins' worker


_HEADER = struct.Struct("<I")


class _PluginWorker:
    """One worker process running the plugins (started on first use, started again after a call
    that was cut or that ended it)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.timeout = CALL_SECONDS
        self._stops_at_exit = False

    def _start(self) -> subprocess.Popen[bytes]:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            return proc
        self.proc = subprocess.Popen([sys.executable, "-m", "cqlsh_ext.payload.formats._outside"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        if not self._stops_at_exit:  # a worker busy in a plugin must not outlive the shell
            atexit.register(self.stop)
            self._stops_at_exit = True
        return self.proc

    def stop(self) -> None:
        if self.proc is not None:
            _end(self.proc)
            self.proc = None

    def call(self, op: str, name: str, value: Any, argument: str | None) -> Any:
        """The plugin `name`'s answer to `op` (decode, detect, encode) on `value`, checked; raises
        PayloadError (OverBudget) with one line."""
        from cqlsh_ext.payload import budget
        from cqlsh_ext.payload.formats.tree import OverBudget, PayloadError

        limits = budget.current()
        request = marshal.dumps((op, name, value, argument, limits.nodes, limits.depth, limits.chars))
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(_HEADER.pack(len(request)) + request)
            proc.stdin.flush()
            head = self._read(proc, _HEADER.size, name)
            size = _HEADER.unpack(head)[0]
            if size > 4 * limits.chars + (1 << 20):
                self.stop()
                raise PayloadError(f"plugin {name} answered more than the value's budget: cut")
            status, answer = marshal.loads(self._read(proc, size, name))
        except PayloadError:  # cut: said as it is
            raise
        except (OSError, EOFError, ValueError, TypeError):
            self.stop()
            raise PayloadError(f"plugin {name}: its worker ended (out of memory, or killed)") from None
        if status == "ok":
            return answer
        if status == "over":
            raise OverBudget(answer)
        raise PayloadError(answer)

    def _read(self, proc: subprocess.Popen[bytes], n: int, name: str) -> bytes:
        from cqlsh_ext.payload.formats.tree import PayloadError

        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        out = bytearray()
        deadline = time.monotonic() + self.timeout
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while len(out) < n:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    self.stop()
                    raise PayloadError(f"plugin {name} took longer than {self.timeout:g} s: cut")
                chunk = os.read(fd, n - len(out))
                if not chunk:
                    raise EOFError
                out += chunk
        return bytes(out)


_WORKER = _PluginWorker()


def _serve() -> None:
    """The worker's loop: requests on stdin, answers on stdout (marshal, length first)."""
    from cqlsh_ext.payload import budget
    from cqlsh_ext.payload.formats.tree import OverBudget, PayloadError

    _limit_memory()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a plugin's prints must not reach the answers
    loaded: dict[str, Any] = {}
    while True:
        head = stdin.read(_HEADER.size)
        if len(head) < _HEADER.size:
            return
        op, name, value, argument, nodes, depth, text = marshal.loads(stdin.read(_HEADER.unpack(head)[0]))
        token = budget.enter(budget.Budget(chars=text, nodes=nodes, depth=depth))
        try:
            plugin = loaded.get(name) or loaded.setdefault(name, _load_plugin(name))
            answer: Any
            if op == "encode":
                write: Callable[..., Any] = plugin.encode_with if argument is not None else plugin.encode
                answer = bytes(write(value, argument) if argument is not None else write(value))
            else:
                if op == "detect" and not plugin.maybe(value):
                    raise PayloadError(f"{name}: not this format")
                read = plugin.decode_with if argument is not None else (
                    plugin.detector or plugin.decode if op == "detect" else plugin.decode)
                answer = checked_tree(read(value, argument) if argument is not None else read(value), name)
            reply = ("ok", answer)
        except OverBudget as err:
            reply = ("over", str(err))
        except PayloadError as err:
            reply = ("error", str(err) if str(err).startswith(name) else f"{name}: {err}")
        except MemoryError:
            reply = ("error", f"{name}: out of memory (over {PLUGIN_MEMORY >> 20} MiB)")
        except OutsideError as err:
            reply = ("error", f"{name}: {err}")
        except Exception as err:  # a plugin's own failure is the value's note
            reply = ("error", f"{name}: {type(err).__name__}: {str(err)[:200]}")
        finally:
            budget.leave(token)
        body = marshal.dumps(reply)
        stdout.write(_HEADER.pack(len(body)) + body)
        stdout.flush()


def _limit_memory() -> None:
    """The worker's address space: what it has now (Python and this module) plus PLUGIN_MEMORY."""
    from cqlsh_ext.common.memory import address_space

    now = address_space()
    if now:
        resource.setrlimit(resource.RLIMIT_AS, (now + PLUGIN_MEMORY, now + PLUGIN_MEMORY))


if __name__ == "__main__":
    _serve()
