"""`cqlsh-ext --serve NAME [connection options]`: a warm session. It checks its connection once,
keeps cqlsh, the driver, the native core and the codec registry loaded, and serves calls
(`cqlsh-ext --session NAME ...`, agent.session_client) on a Unix socket only its user can open
(a 0700 directory, a 0600 socket, the peer's uid checked with SO_PEERCRED).

Each call runs in a process forked from the warm one, on the caller's own standard streams and
working directory (received as file descriptors), exactly as `cqlsh-ext ARGS` runs cold (cli.run's
steps): the same bytes on both streams and the same exit code, a start that costs nothing. The
connection options are the session's: a call may repeat them, never change them (refused, exit
code 2). It holds the terminal, a line per call on standard error, until Ctrl-C or IDLE seconds
without a call.
"""

from __future__ import annotations

import argparse
import configparser
import json
import os
import select
import selectors
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cqlsh_ext.agent import session_client
from cqlsh_ext.agent.session_client import SessionError

#: How a session runs a call in its process (cli.call_in_session): the command line's words and
#: the one line refusing it (None: it runs); the call's exit code.
RunCall = Callable[[list[str], "str | None"], int]

#: cqlsh's options that say which server, as whom and where (a call may repeat them, never change them).
CQLSH_CONNECTION = ("username", "password", "keyspace", "ssl", "cqlshrc", "credentials", "cqlversion",
                    "protocol_version")
#: Seconds a session waits for a call before it ends (--session-idle's default).
IDLE_SECONDS = 900.0


@dataclass
class ConnectionWords:
    """What a command line says of the connection: cqlsh's and --keyspaces' options given, and the
    host and port words."""

    options: dict[str, Any]
    positional: list[str]


@dataclass
class WarmSession:
    name: str
    args: list[str]
    connection: ConnectionWords
    host: str
    run_call: RunCall
    since: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    calls: int = 0

    def status(self) -> dict[str, object]:
        return {"name": self.name, "pid": os.getpid(), "host": self.host, "since": self.since,
                "calls": self.calls}


def _connection_dests(ext_parser: argparse.ArgumentParser) -> set[str]:
    from cqlsh_ext.keyspaces import options as keyspaces_options

    keyspaces = argparse.ArgumentParser(add_help=False)
    keyspaces_options.add_arguments(keyspaces)
    return {action.dest for action in keyspaces._actions}


def connection_of(args: list[str], cqlshmain: Any,
                  ext_parser: argparse.ArgumentParser) -> ConnectionWords:
    ext, cqlsh_args = ext_parser.parse_known_args(args)
    cqlsh, left = cqlshmain.parser.parse_known_args(cqlsh_args)
    given = {dest: getattr(cqlsh, dest) for dest in CQLSH_CONNECTION
             if getattr(cqlsh, dest) != cqlshmain.parser.get_default(dest)}
    given.update({dest: getattr(ext, dest) for dest in _connection_dests(ext_parser)
                  if getattr(ext, dest, None) != ext_parser.get_default(dest)})
    return ConnectionWords(given, [word for word in left if not word.startswith("-")])


def serve_refusal(args: list[str], cqlshmain: Any, ext_parser: argparse.ArgumentParser) -> str | None:
    """The one line for a --serve given anything but connection options (a statement, a display
    option: those are each call's), or None."""
    ext, cqlsh_args = ext_parser.parse_known_args(args)
    cqlsh, _left = cqlshmain.parser.parse_known_args(cqlsh_args)
    allowed = set(CQLSH_CONNECTION) | {"connect_timeout", "request_timeout", "debug"}
    for parser, parsed, own in ((cqlshmain.parser, cqlsh, allowed),
                                (ext_parser, ext, _connection_dests(ext_parser) | {"serve", "session_idle"})):
        for action in parser._actions:
            if (action.dest not in own and action.option_strings and action.default != argparse.SUPPRESS
                    and getattr(parsed, action.dest, None) != parser.get_default(action.dest)):
                return (f"--serve takes connection options only, not {action.option_strings[-1]}: give it "
                        f"to each call (cqlsh-ext --session NAME {action.option_strings[-1]} ...)")
    return None


def call_refusal(session: WarmSession, call: ConnectionWords) -> str | None:
    """The one line for a call whose connection options differ from the session's, or None: a
    session never answers from another connection than the one it was started with."""
    for dest, value in call.options.items():
        if session.connection.options.get(dest) != value:
            shown = "(hidden)" if dest == "password" else value
            return (f"--session {session.name} connects as cqlsh-ext --serve {session.name} said; {dest} "
                    f"{shown} differs: start another session for it (cqlsh-ext --serve OTHER ...)")
    if call.positional and call.positional != session.connection.positional:
        return (f"--session {session.name} connects to {session.host}; {' '.join(call.positional)} differs: "
                f"start another session for it (cqlsh-ext --serve OTHER ...)")
    return None


def _host(connection: ConnectionWords, cqlshmain: Any) -> str:
    """The host the session connects to, as cqlsh finds it: the host word, $CQLSH_HOST, cqlshrc."""
    if connection.positional:
        return connection.positional[0]
    if connection.options.get("keyspaces"):
        return f"Amazon Keyspaces ({connection.options.get('region') or 'its region'})"
    config = configparser.ConfigParser(interpolation=None)
    config.read(os.path.expanduser(connection.options.get("cqlshrc") or cqlshmain.CONFIG_FILE))
    return os.environ.get("CQLSH_HOST") or str(config.get("connection", "hostname", fallback="127.0.0.1"))


def _drop_positional(args: list[str], cqlshmain: Any, ext_parser: argparse.ArgumentParser) -> list[str]:
    """args without their host and port words (a call that repeats them runs with its own)."""
    takes_value = {flag for parser in (cqlshmain.parser, ext_parser) for action in parser._actions
                   if action.nargs is None and action.option_strings for flag in action.option_strings}
    kept: list[str] = []
    for word in args:
        if not word.startswith("-") and not (kept and kept[-1] in takes_value):
            continue
        kept.append(word)
    return kept


def _note(line: str) -> None:
    sys.stderr.write(f"cqlsh-ext: {line}\n")
    sys.stderr.flush()


def _preload() -> None:
    """What a cold run loads before its first statement (the shell: cli loads it): loaded once
    here, every call's for free."""
    from cqlsh_ext.agent import door  # noqa: F401
    from cqlsh_ext.codecs import registry
    from cqlsh_ext.payload.running import reads_pages_whole

    reads_pages_whole()  # loads the native core where it runs (the payload layer's one room for it)
    registry.dispatch_table()


def serve(name: str, args: list[str], cqlshmain: Any, ext_parser: argparse.ArgumentParser,
          idle: float | None, run_call: RunCall) -> int:
    """--serve NAME: check, preload, listen and serve until Ctrl-C or idle; its exit code."""
    refusal = serve_refusal(args, cqlshmain, ext_parser)
    if refusal is not None:
        _note(f"error: {refusal}")
        return session_client.USAGE
    connection = connection_of(args, cqlshmain, ext_parser)
    session = WarmSession(name, args, connection, _host(connection, cqlshmain), run_call)
    try:
        path = session_client.socket_path(name)
        listener = _listen(name, path)
    except SessionError as err:
        _note(f"error: {err}")
        return err.code
    try:
        _preload()
        checked = _wait(_fork_call(session, ["-e", ";"], None, cqlshmain, ext_parser))
        if checked != 0:
            _note(f"session {name}: the connection failed (exit code {checked}); not started")
            return checked
        idle = IDLE_SECONDS if idle is None else idle
        _note(f"session {name} is ready ({session.host}): cqlsh-ext --session {name} -e ... runs through it; "
              f"Ctrl-C stops it, as do {idle:g} s without a call")
        signal.signal(signal.SIGTERM, _stop)  # `kill`: stopped as Ctrl-C stops it, its socket removed
        try:
            _loop(session, listener, idle, cqlshmain, ext_parser)
        except KeyboardInterrupt:
            pass
    finally:
        listener.close()
        if os.path.exists(path):
            os.unlink(path)
    _note(f"session {name} stopped after {session.calls} call{'s' if session.calls != 1 else ''}")
    return 0


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _listen(name: str, path: str) -> socket.socket:
    if os.path.exists(path):
        try:
            session_client.connect(name).close()
        except SessionError:
            os.unlink(path)  # left by a server that ended without removing it
        else:
            raise SessionError(f"session {name} is already running (cqlsh-ext --session-status {name})")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    umask = os.umask(0o177)  # the socket is made 0600, never for a moment wider
    try:
        listener.bind(path)
    finally:
        os.umask(umask)
    os.chmod(path, 0o600)
    listener.listen(16)
    return listener


def _wait(pid: int) -> int:
    return _exit_code(os.waitpid(pid, 0)[1])


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code  # killed by a signal: as a shell reports it


def _loop(session: WarmSession, listener: socket.socket, idle: float, cqlshmain: Any,
          ext_parser: argparse.ArgumentParser) -> None:
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, None)
    woken, wake = os.pipe()
    os.set_blocking(woken, False)
    os.set_blocking(wake, False)
    signal.set_wakeup_fd(wake)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)  # wakes select through the pipe
    selector.register(woken, selectors.EVENT_READ, "children")
    running: dict[int, tuple[socket.socket, float]] = {}
    last = time.monotonic()
    try:
        while True:
            wait = None if running else max(0.0, last + idle - time.monotonic())
            events = selector.select(wait)
            if not events and not running and time.monotonic() >= last + idle:
                return
            for key, _mask in events:
                if key.fileobj is listener:
                    started = _accept(session, listener, cqlshmain, ext_parser)
                    if started is not None:
                        pid, conn = started
                        running[pid] = (conn, time.monotonic())
                        selector.register(conn, selectors.EVENT_READ, pid)
                elif key.data == "children":
                    while os.read(woken, 512) if _readable(woken) else b"":
                        pass
                    for pid, code in _reaped():
                        if pid not in running:
                            continue
                        conn, began = running.pop(pid)
                        if conn in selector.get_map():  # (a caller gone was unregistered when it went)
                            selector.unregister(conn)
                        try:
                            session_client.send(conn, session_client.EXIT, str(code).encode())
                        except OSError:
                            pass
                        conn.close()
                        took = (time.monotonic() - began) * 1000
                        _note(f"call {session.calls}: exit {code} in {took:.0f} ms")
                    last = time.monotonic()
                elif isinstance(key.fileobj, socket.socket):  # a caller's connection (data: its pid)
                    _heard(key.fileobj, key.data, selector)
    finally:
        signal.set_wakeup_fd(-1)
        for pid in running:  # Ctrl-C on the session: its calls stop as theirs would
            os.kill(pid, signal.SIGINT)
        for pid in list(running):
            code = _wait(pid)
            try:
                session_client.send(running[pid][0], session_client.EXIT, str(code).encode())
            except OSError:
                pass
        os.close(woken)
        os.close(wake)


def _readable(fd: int) -> bool:
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except OSError:
        return False


def _reaped() -> list[tuple[int, int]]:
    done: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done.append((pid, _exit_code(status)))


def _heard(conn: socket.socket, pid: int, selector: selectors.BaseSelector) -> None:
    """A caller's message during its call: its Ctrl-C, or its end (it was killed): either stops the
    statement as Ctrl-C stops a cold run's."""
    try:
        message, _fds = session_client.receive(conn)
    except OSError:
        message = None
    if message is None:
        selector.unregister(conn)
    try:
        os.kill(pid, signal.SIGINT)
    except ProcessLookupError:
        pass


def _accept(session: WarmSession, listener: socket.socket, cqlshmain: Any,
            ext_parser: argparse.ArgumentParser) -> tuple[int, socket.socket] | None:
    conn, _addr = listener.accept()
    refusal = peer_refusal(conn, os.getuid())
    if refusal is not None:
        _note(refusal)
        conn.close()
        return None
    conn.settimeout(10)  # a caller sends its call at once
    try:
        message, fds = session_client.receive(conn, max_fds=4)
    except OSError:
        conn.close()
        return None
    conn.settimeout(None)
    try:
        if message is not None and message[0] == session_client.STATUS:
            session_client.send(conn, session_client.STATUS_JSON, json.dumps(session.status()).encode())
        elif message is not None and message[0] == session_client.CALL and len(fds) == 4:
            session.calls += 1
            return _fork_call(session, session_client.words(message[1]), fds, cqlshmain, ext_parser), conn
    finally:
        for fd in fds:
            os.close(fd)
    conn.close()
    return None


def peer_refusal(conn: socket.socket, owner: int) -> str | None:
    """The note for a peer that is not the session's user (SO_PEERCRED), or None."""
    uid = session_client.peer_uid(conn)
    return None if uid == owner else f"refused a caller running as uid {uid}: the session is uid {owner}'s"


def _fork_call(session: WarmSession, args: list[str], fds: list[int] | None, cqlshmain: Any,
               ext_parser: argparse.ArgumentParser) -> int:
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid:
        return pid
    code = 70
    try:
        code = _run_call(session, args, fds, cqlshmain, ext_parser)
    except KeyboardInterrupt:  # a Ctrl-C before the call's own handling began
        code = 130
    finally:
        os._exit(code)


def _run_call(session: WarmSession, args: list[str], fds: list[int] | None, cqlshmain: Any,
              ext_parser: argparse.ArgumentParser) -> int:
    """In the call's process: the caller's streams and directory taken, then the session's
    connection options and the call's words run as a cold run runs them (session.run_call)."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if fds is not None:
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        os.fchdir(fds[3])
        for fd in fds:
            os.close(fd)
        _fresh_streams()
    call = connection_of(args, cqlshmain, ext_parser)
    refusal = call_refusal(session, call)
    base = _drop_positional(session.args, cqlshmain, ext_parser) if call.positional else session.args
    return session.run_call([*base, *args], refusal)


def _fresh_streams() -> None:
    """sys.stdin, stdout and stderr on the caller's descriptors, as Python's start-up makes them for
    a cold run (buffered by line on a terminal, stderr always)."""
    import io

    def text(fd: int, mode: str, line_buffering: bool, errors: str) -> io.TextIOWrapper:
        raw = io.FileIO(fd, mode, closefd=False)
        buffered: Any = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
        return io.TextIOWrapper(buffered, encoding=sys.stdout.encoding, errors=errors,
                                line_buffering=line_buffering)

    sys.stdin = text(0, "r", False, "strict")
    sys.stdout = text(1, "w", os.isatty(1), "strict")
    sys.stderr = text(2, "w", True, "backslashreplace")
    # (and the originals a library asks for the terminal's size: read-only names to type checkers)
    setattr(sys, "__stdin__", sys.stdin)  # noqa: B010
    setattr(sys, "__stdout__", sys.stdout)  # noqa: B010
    setattr(sys, "__stderr__", sys.stderr)  # noqa: B010
