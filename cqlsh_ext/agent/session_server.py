"""`cqlsh-ext --serve NAME [connection options]`: a warm session. It connects once and keeps that
connection (the driver's Cluster and Session: agent.kept_connection), cqlsh, the driver, the native
core and the codec registry loaded, and serves calls (`cqlsh-ext --session NAME ...`,
agent.session_client) on a Unix socket only its user can open (a 0700 directory, a 0600 socket, the
peer's uid checked with SO_PEERCRED).

Each call runs in the session's own process, on that one connection (the driver's threads do not
survive a fork), one call at a time: a call that arrives while another runs waits its turn. It runs
on the caller's own standard streams and working directory (received as file descriptors, put on
0, 1 and 2 for the call) exactly as `cqlsh-ext ARGS` runs cold (cli.run's steps, every setting and
shell state made anew): the same bytes on both streams and the same exit code, a start that costs
nothing. The connection options are the session's: a call may repeat them, never change them
(refused, exit code 2). The caller's Ctrl-C stops its statement as Ctrl-C stops a cold run's. The
session holds the terminal, a line per call on its own standard error, until Ctrl-C between calls,
SIGTERM, or IDLE seconds without a call.
"""

from __future__ import annotations

import argparse
import configparser
import gc
import json
import os
import queue
import select
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, TextIO

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
    #: The kept connection made ready for the next call (agent.kept_connection): what failed.
    kept_after_call: Callable[[], list[str]]
    since: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    calls: int = 0
    #: The calls received and not yet ended, in their order (the first one runs, the rest wait).
    pending: list[WarmCall] = field(default_factory=list)
    #: Guards `pending` and each call's `state` between the session's threads.
    lock: threading.Lock = field(default_factory=threading.Lock)

    def status(self) -> dict[str, object]:
        with self.lock:
            running = sum(1 for call in self.pending if call.state == RUNNING)
            waiting = sum(1 for call in self.pending if call.state == WAITING)
        return {"name": self.name, "pid": os.getpid(), "host": self.host, "since": self.since,
                "calls": self.calls, "running": running, "waiting": waiting}


#: A call's states: received and in line, running, ended (answered), given up before it ran.
WAITING, RUNNING, ENDED, GIVEN_UP = "waiting", "running", "ended", "given up"


@dataclass
class WarmCall:
    """One caller's call: its socket, its command line's words and its descriptors (stdin, stdout,
    stderr, working directory)."""

    conn: socket.socket
    args: list[str]
    fds: list[int]
    state: str = WAITING


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


class SessionSide:
    """The session's side while it serves: its own standard streams and directory (the calls take
    theirs in turn), its log (a copy of its original standard error), the calls' line."""

    def __init__(self, session: WarmSession, cqlshmain: Any, ext_parser: argparse.ArgumentParser) -> None:
        self.session = session
        self.cqlshmain = cqlshmain
        self.ext_parser = ext_parser
        self.log: TextIO = os.fdopen(os.dup(2), "w", buffering=1, encoding="utf-8", errors="backslashreplace")
        self.own_fds = [os.dup(fd) for fd in (0, 1, 2)]
        self.own_cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
        self.own_streams = (sys.stdin, sys.stdout, sys.stderr)
        self.own_originals = (sys.__stdin__, sys.__stdout__, sys.__stderr__)
        self.line: queue.Queue[WarmCall | None] = queue.Queue()
        #: Set in the main thread alone, around a call's run: an interruption outside one is none.
        self.in_call = False
        self.stopping = False

    def note(self, line: str) -> None:
        self.log.write(f"cqlsh-ext: {line}\n")

    def close(self) -> None:
        for fd in (*self.own_fds, self.own_cwd):
            os.close(fd)
        self.log.close()

    # ------------------------------------------------ signals: the main thread's

    def interrupted(self, signum: int, frame: FrameType | None) -> None:
        """SIGUSR1, sent by a caller's watcher: the running call's Ctrl-C, handed to the SIGINT
        handler the call has in place (cqlsh's, a reading's CtrlC), as the terminal's Ctrl-C
        reaches a cold run; nothing once the call has ended."""
        if self.in_call:
            from cqlsh_ext.common.interrupt import hand_on

            hand_on(signal.getsignal(signal.SIGINT), signal.SIGINT, frame)

    def terminated(self, signum: int, frame: FrameType | None) -> None:
        """SIGTERM (`kill`): the session ends, a running call first stopped as Ctrl-C stops it."""
        self.stopping = True
        raise KeyboardInterrupt

    # ------------------------------------------------ the main thread: one call at a time

    def run_calls(self, idle: float) -> None:
        last = time.monotonic()
        while not self.stopping:
            try:
                call = self.line.get(timeout=max(0.0, last + idle - time.monotonic()))
            except queue.Empty:
                return
            if call is None:
                return
            with self.session.lock:
                if call.state == GIVEN_UP:
                    continue
                call.state = RUNNING
            began = time.monotonic()
            code = session_client.INTERRUPTED
            try:
                code = self.run_here(call)
            finally:
                self.answer(call, code)
            self.note(f"call {self.session.calls}: exit {code} in {(time.monotonic() - began) * 1000:.0f} ms")
            for failed in self.session.kept_after_call():
                self.note(failed)
            gc.collect()  # the call's cycles, before the next call's start freezes what is left (gc_pause)
            last = time.monotonic()

    def run_here(self, call: WarmCall) -> int:
        """The call in this process, on the caller's streams and in its directory: put on 0, 1 and
        2 and made sys.std* as Python's start makes them, this process's own put back after."""
        for stream in self.own_streams[1:]:
            stream.flush()
        try:
            for target, fd in enumerate(call.fds[:3]):
                os.dup2(fd, target)
            os.fchdir(call.fds[3])
        finally:
            for fd in call.fds:
                os.close(fd)
        _fresh_streams()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        self.in_call = True
        try:
            return _run_call(self.session, call.args, self.cqlshmain, self.ext_parser)
        except KeyboardInterrupt:  # a Ctrl-C before the call's own handling began, or after it
            return session_client.INTERRUPTED
        finally:
            self.in_call = False
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):  # the reader gone: nothing more reaches it
                    pass
            for target, fd in enumerate(self.own_fds):
                os.dup2(fd, target)
            os.fchdir(self.own_cwd)
            sys.stdin, sys.stdout, sys.stderr = self.own_streams
            _originals(*self.own_originals)
            signal.signal(signal.SIGINT, signal.default_int_handler)  # not the call's (its shell's run)

    def answer(self, call: WarmCall, code: int) -> None:
        with self.session.lock:
            call.state = ENDED
            if call in self.session.pending:
                self.session.pending.remove(call)
        try:
            session_client.send(call.conn, session_client.EXIT, str(code).encode())
            call.conn.shutdown(socket.SHUT_RDWR)  # its watcher hears the end and closes it
        except OSError:  # the caller gone
            pass

    # ------------------------------------------------ the listening thread and each call's watcher

    def listen(self, listener: socket.socket, woken: int) -> None:
        while True:
            ready, _w, _x = select.select([listener.fileno(), woken], [], [])
            if woken in ready:
                return
            try:
                self.accept(listener)
            except Exception as err:  # one caller's failure never ends the session
                self.note(f"a call could not be received: {err}")

    def accept(self, listener: socket.socket) -> None:
        conn, _addr = listener.accept()
        refusal = peer_refusal(conn, os.getuid())
        if refusal is not None:
            self.note(refusal)
            conn.close()
            return
        conn.settimeout(10)  # a caller sends its call at once
        try:
            message, fds = session_client.receive(conn, max_fds=4)
        except OSError:
            conn.close()
            return
        conn.settimeout(None)
        if message is not None and message[0] == session_client.CALL and len(fds) == 4:
            call = WarmCall(conn, session_client.words(message[1]), fds)
            with self.session.lock:
                self.session.calls += 1
                self.session.pending.append(call)
            threading.Thread(target=self.watch, args=(call,), name="session-call", daemon=True).start()
            self.line.put(call)
            return
        for fd in fds:
            os.close(fd)
        if message is not None and message[0] == session_client.STATUS:
            session_client.send(conn, session_client.STATUS_JSON, json.dumps(self.session.status()).encode())
        conn.close()

    def watch(self, call: WarmCall) -> None:
        """A caller's messages during its call: its Ctrl-C, or its end (it was killed), either of
        which stops the call as Ctrl-C stops a cold run's (one still waiting is given up)."""
        while True:
            try:
                message, _fds = session_client.receive(call.conn)
            except OSError:
                message = None
            with self.session.lock:
                if call.state == WAITING:
                    call.state = GIVEN_UP
                    self.session.pending.remove(call)
                    for fd in call.fds:
                        os.close(fd)
                    if message is not None:
                        try:
                            session_client.send(call.conn, session_client.EXIT,
                                                str(session_client.INTERRUPTED).encode())
                        except OSError:
                            pass
                elif call.state == RUNNING:
                    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGUSR1)
            if message is None or call.state == GIVEN_UP:
                break
        call.conn.close()


def serve(name: str, args: list[str], cqlshmain: Any, ext_parser: argparse.ArgumentParser,
          idle: float | None, run_call: RunCall) -> int:
    """--serve NAME: connect, preload, listen and serve until Ctrl-C, SIGTERM or idle; its exit code."""
    from cqlsh_ext.agent import kept_connection

    refusal = serve_refusal(args, cqlshmain, ext_parser)
    if refusal is not None:
        _note(f"error: {refusal}")
        return session_client.USAGE
    connection = connection_of(args, cqlshmain, ext_parser)
    kept = kept_connection.hold()
    session = WarmSession(name, args, connection, _host(connection, cqlshmain), run_call,
                          kept_after_call=kept.after_call)
    try:
        path = session_client.socket_path(name)
        listener = _listen(name, path)
    except SessionError as err:
        _note(f"error: {err}")
        return err.code
    served = SessionSide(session, cqlshmain, ext_parser)
    woken, wake = os.pipe()
    started = False
    try:
        _preload()
        checked = _run_call(session, ["-e", ";"], cqlshmain, ext_parser)  # the connection made and kept
        if checked != 0 or kept.session is None:
            _note(f"session {name}: the connection failed (exit code {checked}); not started")
            return checked or 1
        idle = IDLE_SECONDS if idle is None else idle
        served.note(f"session {name} is ready ({session.host}): cqlsh-ext --session {name} -e ... runs "
                    f"through it; Ctrl-C stops it, as do {idle:g} s without a call")
        started = True
        signal.signal(signal.SIGTERM, served.terminated)
        signal.signal(signal.SIGUSR1, served.interrupted)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        threading.Thread(target=served.listen, args=(listener, woken), name="session-listener",
                         daemon=True).start()
        try:
            served.run_calls(idle)
        except KeyboardInterrupt:
            pass
    finally:
        os.write(wake, b"x")
        listener.close()
        if os.path.exists(path):
            os.unlink(path)
        with session.lock:
            left, session.pending[:] = list(session.pending), []
        for call in left:  # still waiting: its caller says the session ended
            call.state = GIVEN_UP
            for fd in call.fds:
                os.close(fd)
            call.conn.close()
        kept.close()
        if started:
            plural = "s" if session.calls != 1 else ""
            served.note(f"session {name} stopped after {session.calls} call{plural}")
        served.close()
        os.close(woken)
        os.close(wake)
    return 0


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


def peer_refusal(conn: socket.socket, owner: int) -> str | None:
    """The note for a peer that is not the session's user (SO_PEERCRED), or None."""
    uid = session_client.peer_uid(conn)
    return None if uid == owner else f"refused a caller running as uid {uid}: the session is uid {owner}'s"


def _run_call(session: WarmSession, args: list[str], cqlshmain: Any,
              ext_parser: argparse.ArgumentParser) -> int:
    """The session's connection options and the call's words run as a cold run runs them
    (session.run_call), or the one line refusing them."""
    call = connection_of(args, cqlshmain, ext_parser)
    refusal = call_refusal(session, call)
    base = _drop_positional(session.args, cqlshmain, ext_parser) if call.positional else session.args
    return session.run_call([*base, *args], refusal)


def _fresh_streams() -> None:
    """sys.stdin, stdout and stderr on descriptors 0, 1 and 2 (the caller's), as Python's start-up
    makes them for a cold run (buffered by line on a terminal, stderr always)."""
    import io

    def text(fd: int, mode: str, line_buffering: bool, errors: str) -> io.TextIOWrapper:
        raw = io.FileIO(fd, mode, closefd=False)
        buffered: Any = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
        return io.TextIOWrapper(buffered, encoding=sys.stdout.encoding, errors=errors,
                                line_buffering=line_buffering)

    sys.stdin = text(0, "r", False, "strict")
    sys.stdout = text(1, "w", os.isatty(1), "strict")
    sys.stderr = text(2, "w", True, "backslashreplace")
    _originals(sys.stdin, sys.stdout, sys.stderr)


def _originals(stdin: TextIO | None, stdout: TextIO | None, stderr: TextIO | None) -> None:
    """sys.__stdin__ and the like (what a library asks the terminal's size of): read-only names to
    type checkers."""
    setattr(sys, "__stdin__", stdin)  # noqa: B010
    setattr(sys, "__stdout__", stdout)  # noqa: B010
    setattr(sys, "__stderr__", stderr)  # noqa: B010
