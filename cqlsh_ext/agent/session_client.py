"""`cqlsh-ext --session NAME ...` and `--session-status [NAME]`: a call through a warm session
(`cqlsh-ext --serve NAME`, agent.session_server), from a client that starts in milliseconds.

The standard library only: a call imports neither cqlsh, the driver nor the rest of cqlsh-ext
(bench/warm_session.py measures it). The client hands the session its own standard input, output
and error and its working directory (file descriptors over the Unix socket, SCM_RIGHTS) with the
command line's words, never the environment nor a password; the session runs the call as a cold
run runs it, writing to those very descriptors, and answers the exit code. Ctrl-C here is sent on
as an interruption of the call: the session stops the statement as Ctrl-C stops a cold run's.
"""

# No pure-Python module beyond Python's own start (tests/agent/test_warm_session.py): _signal and
# _socket, the C modules under signal and socket (which build enums of their constants at import, a
# sixth of the client's own start, bench/warm_session.py); a socket.socket is one. Neither struct nor
# `from __future__ import annotations` (each a module to load): the annotations here hold at run time.
import _signal
import _socket
import os
import stat
import sys

#: A session's name: a file name's safe letters (checked without `re`: every import is the start's).
NAME_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
#: What a message is, its first byte: a call (the words, NUL-separated, and the caller's descriptors),
#: a question (status), a Ctrl-C; the answers: a call's exit code, a session's status (its JSON).
CALL, STATUS, INTERRUPT, EXIT, STATUS_JSON = b"C", b"S", b"I", b"E", b"J"
#: The words of a call that reads no statement from the terminal (-e, -f, a report, a document).
STATEMENTS_GIVEN = ("-e", "--execute", "-f", "--file", "--catalog", "--spec", "-h", "--help", "-v",
                    "--version")
#: A message's length, before its kind and body: 4 bytes, network order.
_LENGTH_SIZE = 4
#: A descriptor's or a credential's int as SCM_RIGHTS and SO_PEERCRED hold it: the machine's C int.
_INT_SIZE = 4
#: The exit codes a call's own failures end with (common.exits: connection, statement).
NO_SESSION = 1
USAGE = 2
INTERRUPTED = 130


class SessionError(Exception):
    """The one line of a call that could not reach its session, and its exit code."""

    def __init__(self, line: str, code: int = NO_SESSION) -> None:
        super().__init__(line)
        self.code = code


def sessions_dir() -> str:
    """Where the sessions' sockets are: $XDG_RUNTIME_DIR/cqlsh-ext, else ~/.cache/cqlsh-ext/sessions;
    made 0700, and refused when another user owns it or may enter it."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        path = os.path.join(runtime, "cqlsh-ext")
    else:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = os.path.join(cache, "cqlsh-ext", "sessions")
    os.makedirs(path, mode=0o700, exist_ok=True)
    held = os.lstat(path)
    if not stat.S_ISDIR(held.st_mode) or held.st_uid != os.getuid() or held.st_mode & 0o077:
        raise SessionError(f"sessions directory {path}: not a directory of yours that only you may "
                           f"enter (0700); remove it or fix its mode")
    return path


def socket_path(name: str) -> str:
    if not 0 < len(name) <= 64 or not NAME_LETTERS.issuperset(name):
        raise SessionError(f"session name {name!r}: letters, digits, '_', '.' and '-' only (64 at most)",
                           USAGE)
    return os.path.join(sessions_dir(), f"{name}.sock")


def send(sock: _socket.socket, kind: bytes, body: bytes = b"", fds: list[int] | None = None) -> None:
    framed = (len(body) + 1).to_bytes(_LENGTH_SIZE, "big") + kind + body
    if fds:  # socket.send_fds' message: the descriptors as SCM_RIGHTS
        rights = b"".join(fd.to_bytes(_INT_SIZE, sys.byteorder, signed=True) for fd in fds)
        sent = sock.sendmsg([framed], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
        if sent < len(framed):
            sock.sendall(framed[sent:])
    else:
        sock.sendall(framed)


def receive(sock: _socket.socket, max_fds: int = 0) -> tuple[tuple[bytes, bytes] | None, list[int]]:
    """One message (its kind, its body) and the descriptors that came with it; (None, fds) when the
    other side closed."""
    fds: list[int] = []
    if max_fds:  # socket.recv_fds' reading: SCM_RIGHTS' descriptors
        data, ancillary, _flags, _addr = sock.recvmsg(65536, _socket.CMSG_LEN(max_fds * _INT_SIZE))
        for level, kind, rights in ancillary:
            if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                fds.extend(_c_int(rights, at) for at in range(0, len(rights) - _INT_SIZE + 1, _INT_SIZE))
    else:
        data = sock.recv(65536)
    if not data:
        return None, fds
    while len(data) < _LENGTH_SIZE or len(data) < _LENGTH_SIZE + _length(data):
        more = sock.recv(65536)
        if not more:
            return None, fds
        data += more
    message = data[_LENGTH_SIZE:_LENGTH_SIZE + _length(data)]
    return (message[:1], message[1:]), fds


def _length(data: bytes) -> int:
    return int.from_bytes(data[:_LENGTH_SIZE], "big")


def _c_int(data: bytes, at: int) -> int:
    return int.from_bytes(data[at:at + _INT_SIZE], sys.byteorder, signed=True)


def words(body: bytes) -> list[str]:
    """A call's command line from its message's body."""
    return body.decode("utf-8", "surrogateescape").split("\0") if body else []


def peer_uid(sock: _socket.socket) -> int:
    """The user id of the process at the socket's other end (SO_PEERCRED: pid, uid, gid)."""
    creds = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 3 * _INT_SIZE)
    return _c_int(creds, _INT_SIZE)


def connect(name: str) -> _socket.socket:
    path = socket_path(name)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        raise SessionError(f"session {name} is not running: start it with cqlsh-ext --serve {name} "
                           f"[connection options]") from None
    if peer_uid(sock) != os.getuid():  # a socket of another user's where ours should be
        sock.close()
        raise SessionError(f"session {name}: its server runs as another user; refused")
    return sock


def option_value(args: list[str], flag: str) -> tuple[str | None, list[str]]:
    """`flag VALUE` or `flag=VALUE` taken off args: (VALUE, the rest); (None, args) when absent."""
    for at, word in enumerate(args):
        if word == flag and at + 1 < len(args):
            return args[at + 1], args[:at] + args[at + 2:]
        if word.startswith(flag + "="):
            return word.split("=", 1)[1], args[:at] + args[at + 1:]
    return None, args


def _is_password(word: str) -> bool:
    """-p, -pSECRET, --password, --password=SECRET: cqlsh's one password option, in each form."""
    return word.startswith("--password") or (word.startswith("-p") and not word.startswith("--"))


def _json_errors(args: list[str]) -> bool:
    value, _rest = option_value(args, "--output-format")
    return (value or "").strip().lower() == "json"


def _say(line: str, code: int, args: list[str]) -> int:
    if _json_errors(args):
        import json  # (an error's line only: a call's start never pays for it)

        kind = "usage" if code == USAGE else "connection"
        hint = ("cqlsh-ext --help lists the options" if code == USAGE
                else "cqlsh-ext --session-status lists the running sessions")
        sys.stderr.write(json.dumps({"type": "error", "kind": kind, "message": line, "hint": hint,
                                     "position": None}, ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"cqlsh-ext: {line}\n")
    return code


def main(args: list[str]) -> int:
    try:
        if "--session-status" in args or any(word.startswith("--session-status=") for word in args):
            return status(args)
        name, rest = option_value(args, "--session")
        if name is None:
            raise SessionError("--session needs a session's NAME", USAGE)
        secret = next((word for word in rest if _is_password(word)), None)
        if secret is not None:
            flag = "--password" if secret.startswith("--") else "-p"
            raise SessionError(f"--session {name}: {flag} is never sent to a session; the session logs in "
                               f"as cqlsh-ext --serve {name} was told to", USAGE)
        if "--serve" in rest or any(word.startswith("--serve=") for word in rest):
            raise SessionError(f"--session {name}: --serve starts a session of its own, never inside one",
                               USAGE)
        if os.isatty(0) and not any(word.startswith(STATEMENTS_GIVEN) for word in rest):
            # The session's process is no job of this terminal's: the prompt would be stopped (SIGTTIN).
            raise SessionError(f"--session {name} runs -e, -f and a pipe's statements; the interactive "
                               f"shell runs without --session", USAGE)
        return call(name, rest)
    except SessionError as err:
        return _say(str(err), err.code, args)


def call(name: str, args: list[str]) -> int:
    """Run `cqlsh-ext ARGS` in the session NAME on this process's standard streams; its exit code."""
    sock = connect(name)
    cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        send(sock, CALL, "\0".join(args).encode("utf-8", "surrogateescape"), [0, 1, 2, cwd])
    finally:
        os.close(cwd)

    def interrupt(signum: int, frame: object) -> None:
        try:
            send(sock, INTERRUPT)
        except OSError:
            pass

    previous = _signal.signal(_signal.SIGINT, interrupt)
    try:
        while True:
            try:
                answer, _fds = receive(sock)
                break
            except InterruptedError:  # (PEP 475 retries; kept for clarity)
                continue
    finally:
        _signal.signal(_signal.SIGINT, previous)
        sock.close()
    if answer is None or answer[0] != EXIT:
        raise SessionError(f"session {name} ended during the call (its server stopped)")
    return int(answer[1])


def status(args: list[str]) -> int:
    """--session-status [NAME]: one session's figures as a JSON object, or every running one's as a
    JSON list; a session not running is a one-line error, exit code 1."""
    name, _rest = option_value(args, "--session-status")
    if name is not None and name.startswith("-"):
        name = None
    if name is not None:
        print(_status_of(name))
        return 0
    found = []
    for entry in sorted(os.listdir(sessions_dir())):
        if entry.endswith(".sock"):
            try:
                found.append(_status_of(entry[:-len(".sock")]))
            except SessionError:
                continue  # a socket its server left behind: not running
    print(f"[{', '.join(found)}]")
    return 0


def _status_of(name: str) -> str:
    """The session's status, its JSON object as the session wrote it."""
    sock = connect(name)
    try:
        send(sock, STATUS)
        answer, _fds = receive(sock)
    finally:
        sock.close()
    if answer is None or answer[0] != STATUS_JSON:
        raise SessionError(f"session {name} ended before it answered")
    return answer[1].decode()
