"""Ctrl-C while a long command runs, handled one way everywhere (scans, worker processes, COMPRESSION
TRIAL, exports): the first press asks the command to stop at its next boundary and keep what it has
done; a second press raises KeyboardInterrupt at once.

    with CtrlC() as ctrl_c:
        for page in pages:
            if ctrl_c.pressed:
                break                # report what was read
            ...

Only the main thread receives signals, so elsewhere CtrlC installs nothing and `pressed` only
says what `stop` says. The handler in place before (cqlsh's, prompt_toolkit's) is restored on
exit, whatever happened; when another handler has taken its place meanwhile (the pager's, which
saved this one and puts it back when the pager is quit), that one is left in place, and this one,
once exited, hands a press on to the handler it had replaced: a CtrlC put back after its command
has ended never swallows the next command's first Ctrl-C.

While the interactive shell starts a statement (`carried()`), a press Python dropped (raised
inside a weakref or gc callback) is not lost: the statement's first CtrlC starts pressed.

A question waiting for the person at the terminal (a [y/N], ---MORE---, a password) is asked
inside `answering()`: Ctrl-C answers it at once, whatever the running command installed.

A command run for a server (`cqlsh-ext mcp`) has no terminal: its call's cancellation or time limit
presses from another thread (`Remote`), and the command stops as at a first Ctrl-C:

    with Remote() as remote:          # in the thread that runs the command
        run_the_command()             # its CtrlCs are pressed by remote.press(), from any thread
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from types import FrameType, TracebackType
from typing import Any, Protocol


class Flag(Protocol):
    """What CtrlC sets: a threading.Event, or a multiprocessing one that worker processes read."""

    def set(self) -> None: ...

    def is_set(self) -> bool: ...


class CtrlC:
    """The first Ctrl-C sets `stop` (and calls `on_first`, which must only note things: it runs in
    the signal handler); a second raises KeyboardInterrupt, after putting the previous handler
    back. Re-entrant use is not supported: one per running command."""

    def __init__(self, stop: Flag | None = None, on_first: Callable[[], None] | None = None,
                 inner: bool = False) -> None:
        self.stop: Flag = threading.Event() if stop is None else stop
        self.on_first = on_first
        #: A CtrlC entered inside this one (a scan's, inside a program's reading) presses this
        #: one too at its first press, so both stop (without it, the inner one alone hears it).
        self.inner = inner
        self._previous: Any = None
        self._installed = False
        self._remote: Remote | None = None

    @property
    def pressed(self) -> bool:
        return self.stop.is_set()

    def __enter__(self) -> CtrlC:
        remote = _remotes.get(threading.get_ident())
        if remote is not None:
            remote._hold(self)
        self._remote = remote
        if threading.current_thread() is not threading.main_thread():
            return self
        try:
            self._previous = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, self._handler)
        except ValueError:  # not the main interpreter, say: Ctrl-C is not ours to catch
            return self
        self._installed = True
        if _carried[0]:  # a press carried() saw whose KeyboardInterrupt Python dropped
            _carried[0] = False
            self._press()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.restore()

    def restore(self) -> None:
        """Put the previous handler back (idempotent), unless another has taken this one's place
        (see the module doc: a program's reading that ends after another began, say). From
        another thread (a finalizer) the handler stays, and hands presses on once exited."""
        if self._remote is not None:
            self._remote._release(self)
            self._remote = None
        if self._installed:
            self._installed = False
            try:
                if signal.getsignal(signal.SIGINT) == self._handler:
                    signal.signal(signal.SIGINT, self._previous)
            except ValueError:  # from another thread (a finalizer): the handler stays
                pass

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        if not self._installed:  # exited, and put back by whoever had saved it: not ours to note
            hand_on(self._previous, signum, frame)
            return
        _heard[0] += 1
        if self.stop.is_set():  # a second Ctrl-C: stop waiting at once
            self.restore()
            raise KeyboardInterrupt
        self.stop.set()
        if self.on_first is not None:
            self.on_first()
        outer = getattr(self._previous, "__self__", None)
        if isinstance(outer, CtrlC) and outer is not self and outer.inner:
            outer._press()

    def _press(self) -> None:
        """A first Ctrl-C pressed from another thread (Remote)."""
        if not self.stop.is_set():
            self.stop.set()
            if self.on_first is not None:
                self.on_first()


#: The presses a CtrlC heard in this process, first and second (presses()).
_heard = [0]
#: Who is pressing now: None for a person's Ctrl-C, else its words (a time limit's: agent.timer).
_presser: list[str | None] = [None]


def pressing(who: str | None) -> None:
    """The presses that follow come from `who` ("--timeout 2 s": a statement's time limit sends
    SIGINT as a Ctrl-C), not from a person; None: from a person again."""
    _presser[0] = who


def interrupted_words() -> str:
    """How a reading stopped by a press says so: "interrupted (Ctrl-C)", or "timed out (--timeout
    2 s)" when its time limit pressed (pressing())."""
    who = _presser[0]
    return "interrupted (Ctrl-C)" if who is None else f"timed out ({who})"


def presses() -> int:
    """How many Ctrl-C presses a CtrlC has heard so far in this process: a command that stopped at
    a first press ends as if it had ended by itself, and its caller tells the two apart by this
    count (the shell's exit code for a run a Ctrl-C stopped, cqlsh_ext.agent)."""
    return _heard[0]


#: The Remote in force in a thread, by thread id.
_remotes: dict[int, Remote] = {}


class Remote:
    """Ctrl-C pressed from another thread. While `with remote:` holds in the thread that runs a
    command, `press()` (from any thread) does what a first Ctrl-C does to every CtrlC that thread
    has entered (its stop set, `on_first` called), and a CtrlC it enters after the press starts
    pressed: the command stops at its next boundary and reports what it has done."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: list[CtrlC] = []
        self._thread: int | None = None
        #: Set by press().
        self.pressed = threading.Event()

    def __enter__(self) -> Remote:
        self._thread = threading.get_ident()
        _remotes[self._thread] = self
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._thread is not None and _remotes.get(self._thread) is self:
            del _remotes[self._thread]

    def press(self) -> None:
        with self._lock:
            self.pressed.set()
            held = list(self._held)
        for ctrl_c in held:
            ctrl_c._press()

    def _hold(self, ctrl_c: CtrlC) -> None:
        with self._lock:
            self._held.append(ctrl_c)
            pressed = self.pressed.is_set()
        if pressed:
            ctrl_c._press()

    def _release(self, ctrl_c: CtrlC) -> None:
        with self._lock:
            if ctrl_c in self._held:
                self._held.remove(ctrl_c)


def hand_on(handler: Any, signum: int, frame: FrameType | None) -> None:
    """What `handler` (as signal.getsignal gives it) does with a press: a Python handler is
    called, SIG_IGN ignores it, and Python's default (SIG_DFL, or None: a handler not set from
    Python) raises KeyboardInterrupt, as default_int_handler does."""
    if handler is signal.SIG_IGN:
        return
    if callable(handler):
        handler(signum, frame)
        return
    raise KeyboardInterrupt


#: carried()'s press, raised as KeyboardInterrupt and not yet seen to stop anything.
_carried = [False]


@contextmanager
def carried() -> Iterator[None]:
    """While the shell starts a statement: Ctrl-C does what the handler in force does (cqlsh's:
    KeyboardInterrupt), and is noted. Python drops a KeyboardInterrupt raised in a weakref or gc
    callback (an import's lock freed, a collection) with an "Exception ignored" line: the press was
    lost and the statement ran to its end. The first CtrlC entered after such a press starts
    pressed instead: the command stops at its first boundary. A press whose KeyboardInterrupt
    reached the caller is forgotten when the statement ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)

    def note(signum: int, frame: FrameType | None) -> None:
        _carried[0] = True
        hand_on(previous, signum, frame)

    signal.signal(signal.SIGINT, note)
    try:
        yield
    finally:
        _carried[0] = False
        if signal.getsignal(signal.SIGINT) is note:
            signal.signal(signal.SIGINT, previous)


def answering() -> AbstractContextManager[None]:
    """Around a question that waits for the person at the terminal ([y/N], ---MORE---, a
    password): Ctrl-C raises KeyboardInterrupt at once (the caller takes it as "no" or "stop"),
    whatever handler the running command has in place: a CtrlC's first press only notes a stop
    for the command's next boundary, and the question would wait for Enter."""
    return _sigint(signal.default_int_handler)


@contextmanager
def _sigint(handler: Any) -> Iterator[None]:
    """Ctrl-C handled by `handler` while the block runs (in the main thread: only it hears signals)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def heard_while(work: Callable[[], Any]) -> Any:
    """`work()` run in a thread while this one waits, so a press is heard while it runs (Python
    runs a signal's handler only between the main thread's bytecodes: one long C call, a file's
    last row group compressed and written, would hold it back until the work is done). A second
    press's KeyboardInterrupt is raised once the work has ended: what it uses (a file's writer) is
    never left half-used by the clean-up that follows.

    The handler in place is wrapped before the thread starts, and the wrapper keeps the
    KeyboardInterrupt it raises for later: a press that lands while the thread is being started
    (Thread.start waits for it) would otherwise raise there, and the clean-up would close the
    writer under the running work (pyarrow aborts the process then)."""
    if threading.current_thread() is not threading.main_thread():
        return work()
    done = threading.Event()
    outcome: list[Any] = []
    kept: list[KeyboardInterrupt] = []

    def run() -> None:
        try:
            outcome.append((True, work()))
        except BaseException as err:  # handed to the waiting thread
            outcome.append((False, err))
        finally:
            done.set()

    previous = signal.getsignal(signal.SIGINT)

    def keeping(signum: int, frame: FrameType | None) -> None:
        if kept:  # interrupted already: a later press is the same request
            return
        try:
            hand_on(previous, signum, frame)
        except KeyboardInterrupt as err:
            kept.append(err)

    try:
        signal.signal(signal.SIGINT, keeping)
    except ValueError:  # not the main interpreter: no handler of ours to wrap
        return work()
    try:
        threading.Thread(target=run, name="heard-while", daemon=True).start()
        while not done.wait(0.05):
            pass
    finally:
        if signal.getsignal(signal.SIGINT) is keeping:
            # A CtrlC whose second press raised has let go (it could not put its own previous
            # handler back past the wrapper): that one goes back in its place.
            owner = getattr(previous, "__self__", None)
            ended = owner._previous if isinstance(owner, CtrlC) and not owner._installed else None
            signal.signal(signal.SIGINT, ended if ended is not None else previous)
    if kept:
        raise kept[0]
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def shielded() -> AbstractContextManager[None]:
    """Ctrl-C ignored while the block runs (clean-up that must finish: dropping scratch tables)."""
    return _sigint(signal.SIG_IGN)


def ignore_in_child() -> None:
    """In a worker process: Ctrl-C reaches the whole terminal's process group, and the parent alone
    decides what it means (its CtrlC tells the workers through a shared stop flag)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def ends_at_once() -> None:
    """For the process's last steps, once its work is done: what it printed is flushed, and a
    Ctrl-C from then on ends it at once with status 130 (128 + SIGINT). Python's shutdown (the
    driver's threads joined, its connections closed) would otherwise print a KeyboardInterrupt
    traceback from whatever step the press landed in."""
    import os

    if threading.current_thread() is not threading.main_thread():
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can reach it
            pass
    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(128 + signal.SIGINT))


def wraps_ctrl_c(err: BaseException) -> bool:
    """Whether `err` was caused by a Ctrl-C (KeyboardInterrupt) that Python wrapped: on Python 3.11
    one that lands while a class is made (a dataclass's fields, on a module's first import right
    after Enter) comes out as 'RuntimeError: Error calling __set_name__ ...'."""
    seen: set[int] = set()
    cause = err.__cause__
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__
    return False


__all__ = ["CtrlC", "Flag", "Remote", "answering", "ends_at_once", "hand_on", "ignore_in_child",
           "interrupted_words", "presses", "pressing", "shielded", "wraps_ctrl_c"]
