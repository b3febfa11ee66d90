"""Payload formats from outside: plugins (a Python entry point) and external commands (cqlshrc).

A team's own format comes in through the door the built-ins use: a `PayloadFormat`
(payload.formats), registered under the entry point group `cqlsh_ext.formats`:

    [project.entry-points."cqlsh_ext.formats"]
    orders = "acme_formats:FORMAT"          # a PayloadFormat: decode, optionally encode

or an external command named in cqlshrc's `[formats]` section (`NAME = command args`, the value's
bytes on its stdin, the decoded value on its stdout: JSON, or text with `NAME.output = text`).

Neither is trusted, and neither runs in the shell's process. Both run in one worker process (the
outside pieces' worker: started on first use, kept, started again after a call that was cut or
that ended it), started isolated: Python's isolated mode (no start directory, no user site, no
PYTHON* variable on its path; the shell's own extra absolute path entries after the standard
library), its requests and answers on two pipes that are not 0, 1 or 2 and that no process it
starts inherits (0 reads /dev/null, 1 and 2 write there), each answer carrying its request's
sequence number (a mismatch ends it), an environment of PASSED_ENVIRONMENT only, a session of its
own, a subreaper of whatever it starts: what a call leaves running, and anything that left its
process group or session, is ended before the call answers. A plugin's decoder and encoder run in
it under an address-space limit (PLUGIN_MEMORY beyond its start), each call within a time limit
(cut and said when it takes longer: the worker is ended, with everything it started, and started
again for the next value); what a decoder answers is checked there against the value's budget
(nodes, depth, characters: payload.budget) and must be plain data (maps, lists, text, numbers,
booleans, null, bytes). A command runs from it in a session of its own, under RLIMIT_AS
(COMMAND_MEMORY) and RLIMIT_CPU (its timeout), with a timeout and an output cap; a command that
fails, hangs or floods is that value's note, never the shell's end. While a call of `cqlsh-ext
mcp` runs (`stopping_with`), the call's stop and time limit cut a plugin's call or a command too,
and none starts after. The names are read from the entry points' metadata and the settings
without importing any plugin (spec parsing knows them); a plugin module is imported on its
format's first use, in this process (for its declared attributes) and in the worker (to run it).
"""

from __future__ import annotations

import atexit
import json
import marshal
import math
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
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from cqlsh_ext.payload.names import COMMAND_SECTION

#: The entry point group a plugin registers its PayloadFormat under.
ENTRY_POINT_GROUP = "cqlsh_ext.formats"
#: What a plugin's call or a command may take, by default: seconds, address space (beyond the
#: worker's start for plugins; a command's whole), output bytes (a command's stdout).
CALL_SECONDS = 5.0
PLUGIN_MEMORY = 512 << 20
COMMAND_MEMORY = PLUGIN_MEMORY
COMMAND_OUTPUT = 4 << 20
#: What passes of the shell's environment to the worker, and so to its plugins and commands:
#: these variables and the locale's LC_*, nothing else (no token, password or key the shell has).
PASSED_ENVIRONMENT = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR")
PASSED_PREFIXES = ("LC_",)
#: The most a plugin may claim for a value it detects (payload.confidence): likely. A claim to have
#: verified a checksum cannot be checked here, so confident is left to values the user names.
MOST_SURE = "likely"
_OUTPUTS = ("json", "text")
_OPTIONS = ("output", "timeout", "max_output", "max_memory", "encoder")


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
    #: Its address space (RLIMIT_AS), bytes.
    max_memory: int = COMMAND_MEMORY


_COMMANDS: dict[str, FormatCommand] = {}


# ------------------------------------------------------------------ names, without importing


_ENTRY_POINTS: list[Any] | None = None


def _entry_points() -> list[Any]:
    """The installed plugins' entry points, read once a process as plugin_names() reads their names:
    a scan of every installed distribution's metadata, which an MCP answer's notes (origins())
    would otherwise pay each call."""
    global _ENTRY_POINTS
    if _ENTRY_POINTS is None:
        from importlib.metadata import entry_points

        _ENTRY_POINTS = list(entry_points(group=ENTRY_POINT_GROUP))
    return _ENTRY_POINTS


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
    `NAME.timeout` (seconds), `NAME.max_output` and `NAME.max_memory` (bytes), `NAME.encoder` (a
    command). Raises
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
            max_memory = int(options.get("max_memory", COMMAND_MEMORY))
        except ValueError as err:
            raise OutsideError(f"[{COMMAND_SECTION}] {name}: {err}") from None
        if not (0 < timeout <= 600) or max_output <= 0 or max_memory <= 0:
            raise OutsideError(f"[{COMMAND_SECTION}] {name}: timeout (0, 600] seconds, max_output and "
                               "max_memory > 0 bytes")
        encoder = tuple(shlex.split(options["encoder"])) if options.get("encoder") else None
        commands[name] = FormatCommand(name, argv, output, timeout, max_output, encoder, max_memory)
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


def run_command(argv: tuple[str, ...], data: bytes, timeout: float, max_output: int, name: str = "",
                max_memory: int = COMMAND_MEMORY) -> bytes:
    """What `argv` writes on stdout given `data` on stdin, at most `max_output` bytes, within
    `timeout` seconds, run from the outside pieces' worker under its limits (the module's doc);
    PayloadError (one line, naming the format `name`) when it fails, hangs or floods, or when the
    running call of `cqlsh-ext mcp` stops (it is ended, with whatever it started)."""
    name = name or os.path.basename(argv[0])
    answer = _WORKER.ask(("command", tuple(argv), data, timeout, max_output, max_memory, name),
                         f"command {name}", timeout + _GRACE, max_output + (1 << 16),
                         f"command {name} took longer than {timeout:g} s: cut")
    assert isinstance(answer, bytes)
    return answer


def _command_here(argv: tuple[str, ...], data: bytes, timeout: float, max_output: int, max_memory: int,
                  name: str) -> bytes:
    """run_command's work, in the worker: the command in a session of its own, under its limits."""
    import shutil

    from cqlsh_ext.payload.formats.tree import PayloadError

    if shutil.which(argv[0]) is None:  # said as Popen says it, not as the limits' shell would
        raise PayloadError(f"command {name} does not start (no such executable: {argv[0]})")
    try:
        proc = subprocess.Popen([*_limited(max_memory, timeout), *argv], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
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
    _close_pipes(proc)  # what it left running is ended after the request (_end_leftovers)
    if code == -signal.SIGXCPU:
        raise PayloadError(f"command {name} used more than {math.ceil(timeout)} s of CPU: ended")
    if code != 0:
        first = bytes(said).decode("utf-8", "replace").strip().splitlines()
        last = f": {first[-1][:200]}" if first else ""
        ended = f"ended by {signal.Signals(-code).name}" if code < 0 and -code in _SIGNALS else f"exit {code}"
        raise PayloadError(f"command {name} failed ({ended}){last}")
    return bytes(out)


_SIGNALS = {int(s) for s in signal.Signals}


def _limited(memory: int, seconds: float) -> list[str]:
    """The command line before a command's own that sets its address space (KiB, soft and hard)
    and CPU time (seconds), then runs it (`exec "$@"`; the shell's PWD unset: the command gets
    the environment the worker has, no more). The shell's `ulimit` rather than
    Popen's preexec_fn: a Python function between fork and exec forbids vfork, and made each
    command cost 4 to 6 times as much."""
    hard_as = resource.getrlimit(resource.RLIMIT_AS)[1]
    if hard_as != resource.RLIM_INFINITY:
        memory = min(memory, hard_as)
    cpu = math.ceil(seconds)  # SIGXCPU at it, SIGKILL a second later
    limits = f"ulimit -v {max(memory >> 10, 1)} && ulimit -S -t {cpu} && ulimit -H -t {cpu + 1}"
    return ["/bin/sh", "-c", f'{limits} && unset PWD && exec "$@"', "sh"]


def _feed(pipe: Any, data: bytes) -> None:
    try:
        pipe.write(data)
        pipe.close()
    except OSError:  # the command did not read it all: its answer says the rest
        pass


def _end(proc: subprocess.Popen[bytes]) -> None:
    """`proc` and its process group killed, reaped, its pipes closed."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    proc.wait()
    _close_pipes(proc)


def _close_pipes(proc: subprocess.Popen[bytes]) -> None:
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass


def _command_decode(command: FormatCommand, data: bytes) -> Any:
    from cqlsh_ext.payload.formats.tree import PayloadError

    out = run_command(command.argv, data, command.timeout, command.max_output, command.name,
                      command.max_memory)
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
                       f"{command.name}.encoder", command.max_memory)


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


# ------------------------------------------------------------------ a call's stop


@dataclass(frozen=True)
class _Stop:
    stop: threading.Event
    deadline: float
    why: Callable[[], str]

    def reached(self) -> bool:
        return self.stop.is_set() or time.monotonic() >= self.deadline


#: The running call's stop (cqlsh-ext mcp serves one call at a time), while one runs.
_STOPS: list[_Stop] = []


@contextmanager
def stopping_with(stop: threading.Event, deadline: float, why: Callable[[], str]) -> Iterator[None]:
    """While the block runs (a call of `cqlsh-ext mcp`): a plugin's call or a command running when
    `stop` is set or `deadline` (time.monotonic()) passes is cut, its worker ended with everything it
    started, and none starts after; `why()` says why in the value's note (the call's time limit,
    its cancellation). Every thread's values: the calls run one at a time."""
    _STOPS.append(_Stop(stop, deadline, why))
    try:
        yield
    finally:
        _STOPS.pop()


# ------------------------------------------------------------------ the outside pieces' worker


#: A frame of the worker's protocol: the request's sequence number, the body's length (marshal).
_FRAME = struct.Struct("<QI")
#: Seconds a command's answer may come after its timeout (the worker ends it, and what it started).
_GRACE = 2.0
#: How often a wait looks at the running call's stop (its deadline is waited for exactly).
_STOP_TICK = 0.1
#: The worker's start: isolated mode (-I) puts neither the start directory nor the user site on its
#: path; the shell's own extra absolute entries (argv[3:]) go after the standard library.
_BOOT = ("import sys; sys.path += [p for p in sys.argv[3:] if p not in sys.path]; "
         "from cqlsh_ext.payload.formats._outside import _serve; _serve(int(sys.argv[1]), int(sys.argv[2]))")


def passed_environment() -> dict[str, str]:
    """What the worker, its plugins and its commands get of os.environ: PASSED_ENVIRONMENT."""
    return {key: value for key, value in os.environ.items()
            if key in PASSED_ENVIRONMENT or key.startswith(PASSED_PREFIXES)}


def _path_beside() -> list[str]:
    """This process's path entries the worker adds after its own: absolute, never the current
    directory (the worker's own standard library and site-packages are the same, and stay first)."""
    try:
        here: str | None = os.path.realpath(os.getcwd())
    except OSError:  # the directory is gone: nothing can name it
        here = None
    return list(dict.fromkeys(entry for entry in sys.path
                              if entry and os.path.isabs(entry) and os.path.realpath(entry) != here))


def _pipe() -> tuple[int, int]:
    """A pipe whose ends are neither 0, 1 nor 2 (free when the shell was started with one closed)."""
    import fcntl

    ends = []
    for fd in os.pipe():
        if fd < 3:
            moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
            os.close(fd)
            fd = moved
        ends.append(fd)
    return ends[0], ends[1]


class _Worker:
    """The outside pieces' worker process, seen from the shell (started on first use, started again
    after a call that was cut or that ended it); its requests one at a time."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        #: The pipes' ends of this side: requests written, answers read.
        self._requests = -1
        self._answers = -1
        self._sequence = 0
        self._lock = threading.Lock()
        self._stops_at_exit = False
        self.timeout = CALL_SECONDS

    def _start(self) -> subprocess.Popen[bytes]:
        from cqlsh_ext.payload.formats.tree import PayloadError

        proc = self.proc
        if proc is not None and proc.poll() is None:
            return proc
        self.stop()
        requests_in, requests = _pipe()
        answers, answers_out = _pipe()
        try:
            proc = subprocess.Popen([sys.executable, "-I", "-c", _BOOT, str(requests_in), str(answers_out),
                                     *_path_beside()],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, pass_fds=(requests_in, answers_out),
                                    env=passed_environment(), start_new_session=True)
        except OSError as err:
            os.close(requests)
            os.close(answers)
            raise PayloadError(f"the worker of plugins and commands does not start "
                               f"({err.strerror or err})") from None
        finally:
            os.close(requests_in)
            os.close(answers_out)
        self.proc, self._requests, self._answers = proc, requests, answers
        if not self._stops_at_exit:  # a worker busy in a plugin or a command must not outlive the shell
            atexit.register(self.stop)
            os.register_at_fork(after_in_child=self._forget)
            self._stops_at_exit = True
        return proc

    def stop(self) -> None:
        """The worker ended, with everything it started (its session, and what left it)."""
        if self.proc is not None:
            _end_tree(self.proc)
            self.proc = None
        self._close()

    def _close(self) -> None:
        for fd in (self._requests, self._answers):
            if fd >= 0:
                os.close(fd)
        self._requests = self._answers = -1

    def _forget(self) -> None:
        """In a process forked from the shell (a scan's worker): the shell's worker is not its own."""
        self.proc = None
        self._close()
        self._lock = threading.Lock()

    def call(self, op: str, name: str, value: Any, argument: str | None) -> Any:
        """The plugin `name`'s answer to `op` (decode, detect, encode) on `value`, checked; raises
        PayloadError (OverBudget) with one line."""
        from cqlsh_ext.payload import budget

        limits = budget.current()
        return self.ask((op, name, value, argument, limits.nodes, limits.depth, limits.chars),
                        f"plugin {name}", self.timeout, 4 * limits.chars + (1 << 20),
                        f"plugin {name} took longer than {self.timeout:g} s: cut")

    def ask(self, request: tuple[Any, ...], what: str, seconds: float, most: int, late: str) -> Any:
        """The worker's answer to `request` (about `what`: "plugin NAME", "command NAME"), within
        `seconds` (else `late` is raised) and `most` bytes, and within the running call's stop;
        PayloadError (OverBudget) with one line otherwise. A worker that is late, answers out of turn
        or too much is ended."""
        from cqlsh_ext.payload.formats.tree import OverBudget, PayloadError

        stop = _STOPS[-1] if _STOPS else None
        if stop is not None and stop.reached():
            raise PayloadError(f"{what} not run: its call has stopped ({stop.why()})")
        body = marshal.dumps(request)
        with self._lock:
            self._start()
            self._sequence += 1
            sequence = self._sequence
            try:
                _write_all(self._requests, _FRAME.pack(sequence, len(body)) + body)
                got, size = _FRAME.unpack(self._read(_FRAME.size, seconds, stop, what, late))
                if got != sequence:
                    raise PayloadError(f"{what}: its worker answered out of turn: ended")
                if size > most:
                    raise PayloadError(f"{what} answered more than {most:,} bytes: cut")
                status, answer = marshal.loads(self._read(size, seconds, stop, what, late))
            except PayloadError:
                self.stop()
                raise
            except (OSError, EOFError, ValueError, TypeError):
                self.stop()
                raise PayloadError(f"{what}: its worker ended (out of memory, or killed)") from None
            except BaseException:  # a second Ctrl-C: no answer is left behind for the next request
                self.stop()
                raise
        if status == "ok":
            return answer
        if status == "over":
            raise OverBudget(answer)
        raise PayloadError(answer)

    def _read(self, n: int, seconds: float, stop: _Stop | None, what: str, late: str) -> bytes:
        from cqlsh_ext.payload.formats.tree import PayloadError

        out = bytearray()
        deadline = time.monotonic() + seconds
        with selectors.DefaultSelector() as sel:
            sel.register(self._answers, selectors.EVENT_READ)
            while len(out) < n:
                now = time.monotonic()
                if stop is not None and stop.reached():
                    raise PayloadError(f"{what} cut: its call has stopped ({stop.why()})")
                if now >= deadline:
                    raise PayloadError(late)
                wait = deadline - now
                if stop is not None:
                    wait = max(0.0, min(wait, stop.deadline - now, _STOP_TICK))
                if not sel.select(wait):
                    continue
                chunk = os.read(self._answers, n - len(out))
                if not chunk:
                    raise EOFError
                out += chunk
        return bytes(out)


_WORKER = _Worker()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_all(fd: int, n: int) -> bytes | None:
    """`n` bytes from `fd`, or None at its end."""
    out = bytearray()
    while len(out) < n:
        chunk = os.read(fd, n - len(out))
        if not chunk:
            return None
        out += chunk
    return bytes(out)


# ------------------------------------------------------------------ a process tree, ended


def _descendants(root: int) -> list[int]:
    """The living processes below `root` (read from /proc: parents' pids; zombies left out)."""
    children: dict[int, list[int]] = {}
    living: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        pid = int(entry)
        children.setdefault(int(fields[1]), []).append(pid)
        if fields[0] not in (b"Z", b"X"):
            living.add(pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if pid in living:
            found.append(pid)
        todo += children.get(pid, [])
    return found


def _kill_all(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:  # gone meanwhile
            pass


#: Rounds of killing what is found below a process before giving up (each new process found is
#: one its parent made before its end).
_ROUNDS = 100


def _end_tree(proc: subprocess.Popen[bytes]) -> None:
    """The worker `proc` ended with every process below it. It is stopped first (it makes no new
    child), then what is below it is killed round after round (what a killed process made is
    reparented to the worker, a subreaper, and found in the next round), then the worker's session
    and the worker itself."""
    try:
        os.kill(proc.pid, signal.SIGSTOP)
    except OSError:
        pass
    for _ in range(_ROUNDS):
        below = _descendants(proc.pid)
        if not below:
            break
        _kill_all(below)
        time.sleep(0.005)  # their deaths to be seen in the next round
    _end(proc)


def _end_leftovers() -> None:
    """In the worker, after each request: what the call started and left running (its children,
    and every process orphaned below them, reparented here) is ended and reaped."""
    me = os.getpid()
    for _ in range(_ROUNDS):
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:  # no child, so nothing below: the usual case, one system call
            return
        _kill_all(_descendants(me))
        time.sleep(0.005)


def _become_subreaper() -> None:
    """Whatever a plugin or a command leaves when its parent ends is reparented to the worker
    (PR_SET_CHILD_SUBREAPER), not to init: `setsid` cannot take a process out of its reach."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):  # not Linux: the process groups alone are ended
        pass


def _ends_with_the_shell(requests: int) -> None:
    """A thread of the worker that waits for the shell's end (the requests' pipe hung up: it exited,
    or was killed), then ends everything below the worker and the worker: a worker busy in a plugin
    or a command outlives no shell, however it ended."""
    import select

    def watch() -> None:
        hung_up = select.poll()
        hung_up.register(requests, 0)
        while not hung_up.poll():
            pass
        for _ in range(_ROUNDS):
            below = _descendants(os.getpid())
            if not below:
                break
            _kill_all(below)
            time.sleep(0.005)
        os._exit(0)

    threading.Thread(target=watch, name="ends-with-the-shell", daemon=True).start()


def _serve(requests: int, answers: int) -> None:
    """The worker's loop (started by _BOOT): requests on `requests`, answers on `answers` (marshal,
    framed by _FRAME, each carrying its request's sequence number)."""
    from cqlsh_ext.payload import budget
    from cqlsh_ext.payload.formats.tree import OverBudget, PayloadError

    for fd in (requests, answers):  # no process a plugin or a command starts gets them
        os.set_inheritable(fd, False)
    _become_subreaper()
    _ends_with_the_shell(requests)
    _limit_memory()
    loaded: dict[str, Any] = {}
    while True:
        head = _read_all(requests, _FRAME.size)
        if head is None:
            _end_leftovers()
            return
        sequence, size = _FRAME.unpack(head)
        body = _read_all(requests, size)
        if body is None:
            _end_leftovers()
            return
        request = marshal.loads(body)
        reply: tuple[str, Any]
        if request[0] == "command":
            try:
                reply = ("ok", _command_here(*request[1:]))
            except PayloadError as err:
                reply = ("error", str(err))
            except MemoryError:
                reply = ("error", f"command {request[-1]}: its output is more than the worker can hold")
            _end_leftovers()
            answer = marshal.dumps(reply)
            _write_all(answers, _FRAME.pack(sequence, len(answer)) + answer)
            continue
        op, name, value, argument, nodes, depth, text = request
        token = budget.enter(budget.Budget(chars=text, nodes=nodes, depth=depth))
        try:
            plugin = loaded.get(name) or loaded.setdefault(name, _load_plugin(name))
            result: Any
            if op == "encode":
                write: Callable[..., Any] = plugin.encode_with if argument is not None else plugin.encode
                result = bytes(write(value, argument) if argument is not None else write(value))
            else:
                if op == "detect" and not plugin.maybe(value):
                    raise PayloadError(f"{name}: not this format")
                read = plugin.decode_with if argument is not None else (
                    plugin.detector or plugin.decode if op == "detect" else plugin.decode)
                result = checked_tree(read(value, argument) if argument is not None else read(value), name)
            reply = ("ok", result)
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
        _end_leftovers()
        answer = marshal.dumps(reply)
        _write_all(answers, _FRAME.pack(sequence, len(answer)) + answer)


def _limit_memory() -> None:
    """The worker's address space: what it has now (Python and this module) plus PLUGIN_MEMORY, as
    its soft limit (a command it starts sets its own, up to the hard limit left as it was)."""
    from cqlsh_ext.common.memory import address_space

    now = address_space()
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    if now:
        soft = now + PLUGIN_MEMORY if hard == resource.RLIM_INFINITY else min(now + PLUGIN_MEMORY, hard)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
