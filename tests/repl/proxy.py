"""TCP stand-ins between cqlsh-ext and Cassandra: a server that can be made slow, and one that never answers.

`SlowProxy` forwards both ways; while `hold()` is on it keeps the server's answers back, which to
the shell is a server that takes as long as the test wants. `has_held()` tells the test that an
answer is waiting, i.e. that the statement really reached the server and the shell is waiting
for it. `cut_after(n)` closes the connection that carries the n-th byte of answers from then on,
in the middle of a result, as a dropped network path does; new connections are served again.
`SilentServer` accepts connections and never says a word: a connection timeout.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType


def _listener() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    return sock


class SlowProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.server = _listener()
        self.port = self.server.getsockname()[1]
        self._lock = threading.Lock()
        self._holding = False
        self._held: list[tuple[socket.socket, bytes]] = []
        self._held_event = threading.Event()
        self._sockets: list[socket.socket] = []
        self._closed = False
        self._cut_left: int | None = None
        self.cuts = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def cut_after(self, nbytes: int) -> None:
        with self._lock:
            self._cut_left = nbytes

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            self._sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, from_server: bool) -> None:
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data:
                with contextlib.suppress(OSError):
                    dst.shutdown(socket.SHUT_WR)
                return
            with self._lock:
                if from_server and self._cut_left is not None:
                    if len(data) >= self._cut_left:
                        with contextlib.suppress(OSError):
                            dst.sendall(data[: self._cut_left])
                        self._cut_left = None
                        self.cuts += 1
                        for sock in (src, dst):
                            with contextlib.suppress(OSError):
                                sock.shutdown(socket.SHUT_RDWR)
                            sock.close()
                        return
                    self._cut_left -= len(data)
                if from_server and self._holding:
                    self._held.append((dst, data))
                    self._held_event.set()
                    continue
            with contextlib.suppress(OSError):
                dst.sendall(data)

    def hold(self) -> None:
        with self._lock:
            self._holding = True
            self._held_event.clear()

    def has_held(self, timeout: float) -> bool:
        """Wait until an answer from the server is being held back."""
        return self._held_event.wait(timeout)

    def release(self) -> None:
        with self._lock:
            self._holding = False
            held, self._held = self._held, []
            for dst, data in held:
                with contextlib.suppress(OSError):
                    dst.sendall(data)

    def close(self) -> None:
        self._closed = True
        self.release()
        for sock in [self.server, *self._sockets]:
            with contextlib.suppress(OSError):
                sock.close()

    def __enter__(self) -> SlowProxy:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class SilentServer:
    """Accepts TCP connections on a loopback port and never answers."""

    def __init__(self) -> None:
        self.server = _listener()
        self.port = self.server.getsockname()[1]
        self._clients: list[socket.socket] = []
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            self._clients.append(client)  # kept open, never read

    def close(self) -> None:
        self._closed = True
        for sock in [self.server, *self._clients]:
            with contextlib.suppress(OSError):
                sock.close()

    def __enter__(self) -> SilentServer:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
