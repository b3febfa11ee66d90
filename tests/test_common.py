"""cqlsh_ext.common's shared helpers: one Ctrl-C rule and one retry policy for every command."""

from __future__ import annotations

import os
import signal
import threading

import pytest
from own_process import in_own_process

from cqlsh_ext.common import retry
from cqlsh_ext.common.interrupt import CtrlC, Remote, answering, heard_while, shielded
from cqlsh_ext.common.text import fit, is_path, message, screen_width


def _press() -> None:
    """Ctrl-C, as a terminal sends it: in a test run in_own_process, never the pytest worker's."""
    os.kill(os.getpid(), signal.SIGINT)


@in_own_process
def test_first_ctrl_c_asks_to_stop_second_interrupts_and_the_previous_handler_comes_back() -> None:
    before = signal.getsignal(signal.SIGINT)
    noted: list[str] = []
    with CtrlC(on_first=lambda: noted.append("first")) as ctrl_c:
        assert not ctrl_c.pressed
        _press()
        assert ctrl_c.pressed and noted == ["first"]  # the command keeps what it has and stops
        with pytest.raises(KeyboardInterrupt):
            _press()
        assert signal.getsignal(signal.SIGINT) is before  # put back at the second press already
    assert signal.getsignal(signal.SIGINT) is before


@in_own_process
def test_a_ctrl_c_put_back_after_its_command_ended_hands_the_press_on() -> None:
    """The interactive shell's pager saves the handler in force when it starts (a payload query's
    scan's) and puts it back when it is quit, after the scan has ended: the next command's first
    Ctrl-C must still stop it, not note a stop for the finished scan."""
    before = signal.getsignal(signal.SIGINT)
    with CtrlC() as scan:
        saved = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the pager starts
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # not the scan's to take back
    signal.signal(signal.SIGINT, saved)  # the pager is quit
    try:
        with pytest.raises(KeyboardInterrupt):
            _press()
        assert not scan.pressed
        with CtrlC() as later:  # a later command's CtrlC over it: its own first press, as ever
            _press()
            assert later.pressed
    finally:
        signal.signal(signal.SIGINT, before)


@in_own_process
def test_an_inner_ctrl_c_that_ends_last_leaves_the_outer_ones_handler_alone() -> None:
    before = signal.getsignal(signal.SIGINT)
    outer = CtrlC().__enter__()
    inner = CtrlC().__enter__()
    outer.restore()  # out of order: the inner one is still in force
    _press()
    assert inner.pressed and not outer.pressed
    inner.restore()
    with pytest.raises(KeyboardInterrupt):  # what the outer one had replaced: the default
        _press()
    signal.signal(signal.SIGINT, before)


@in_own_process
def test_a_question_is_answered_by_the_first_ctrl_c_whatever_the_command_installed() -> None:
    before = signal.getsignal(signal.SIGINT)
    with CtrlC() as running:
        with pytest.raises(KeyboardInterrupt), answering():
            _press()
        assert not running.pressed  # the question took it, not the command
        assert signal.getsignal(signal.SIGINT) == running._handler
    with shielded(), pytest.raises(KeyboardInterrupt), answering():
        _press()
    assert signal.getsignal(signal.SIGINT) is before


@in_own_process
def test_ctrl_c_sets_a_flag_it_is_given() -> None:
    stop = threading.Event()
    with CtrlC(stop):
        _press()
    assert stop.is_set()


def test_off_the_main_thread_nothing_is_installed() -> None:
    before = signal.getsignal(signal.SIGINT)
    seen: list[object] = []

    def run() -> None:
        with CtrlC() as ctrl_c:
            seen.append(signal.getsignal(signal.SIGINT))
            seen.append(ctrl_c.pressed)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == [before, False]


def test_a_remote_press_stops_the_commands_of_its_thread_only() -> None:
    """cqlsh-ext mcp: a call cancelled, or out of time, presses from the protocol's thread."""
    remote = Remote()
    entered, go_on = threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def command() -> None:  # the shell's thread: a scan's CtrlC, then a second one after the press
        with remote:
            with CtrlC(on_first=lambda: seen.setdefault("noted", "first")) as scan:
                entered.set()
                go_on.wait(10)
                seen["scan"] = scan.pressed
            with CtrlC() as later:
                seen["later"] = later.pressed
        with CtrlC() as after:  # the call is over: a new command is not pressed
            seen["after"] = after.pressed

    def bystander() -> None:  # another thread's CtrlC is none of the remote's business
        with CtrlC() as other:
            entered.wait(10)
            go_on.wait(10)
            seen["other"] = other.pressed

    threads = [threading.Thread(target=command), threading.Thread(target=bystander)]
    for thread in threads:
        thread.start()
    assert entered.wait(10)
    remote.press()
    go_on.set()
    for thread in threads:
        thread.join(10)
    assert seen == {"noted": "first", "scan": True, "later": True, "after": False, "other": False}


@in_own_process
def test_a_second_press_while_the_work_starts_waits_for_the_work_to_end(monkeypatch) -> None:
    """An export's file is finished in a thread (heard_while) so a press is heard meanwhile. A
    second press that lands while that thread is being started raised in the starting thread,
    the clean-up closed the file's writer under the running work, and pyarrow aborted the process
    (CI: "Cannot get properties from closed file"). The press is kept until the work has ended."""
    before = signal.getsignal(signal.SIGINT)
    started = threading.Thread.start
    released = threading.Event()
    ended: list[str] = []

    def start_then_press(thread: threading.Thread) -> None:
        started(thread)
        if thread.name == "heard-while":
            _press()  # handled here, in the main thread, while the work runs
            released.set()

    def work() -> str:
        released.wait(10)
        ended.append("ended")
        return "written"

    monkeypatch.setattr(threading.Thread, "start", start_then_press)
    with CtrlC() as writing:
        writing.stop.set()  # the reading took the first press: this one is the second
        with pytest.raises(KeyboardInterrupt):
            heard_while(work)
        assert ended == ["ended"]  # raised once the work was done, not while it ran
    assert signal.getsignal(signal.SIGINT) is before  # the handler before the command is back


@in_own_process
def test_a_first_press_while_the_work_runs_is_noted_and_the_work_finishes() -> None:
    noted: list[str] = []
    with CtrlC(on_first=lambda: noted.append("first")) as writing:
        assert heard_while(lambda: (_press(), "written")[1]) == "written"
        assert writing.pressed and noted == ["first"]


@in_own_process
def test_shielded_clean_up_ignores_ctrl_c() -> None:
    before = signal.getsignal(signal.SIGINT)
    with shielded():
        _press()  # ignored: the clean-up finishes
    assert signal.getsignal(signal.SIGINT) is before


def test_backoff_doubles_with_full_jitter_up_to_its_cap_and_gives_up() -> None:
    for attempt in range(1, 12):
        bound = min(retry.CAP, retry.BASE * 2 ** attempt)
        delays = [retry.delay(attempt) for _ in range(200)]
        assert all(0 <= d <= bound for d in delays)
        assert max(delays) > bound / 2  # jittered over the whole range, not a fixed wait
    assert not retry.exhausted(retry.ATTEMPTS - 1) and retry.exhausted(retry.ATTEMPTS)


def test_a_message_wraps_at_words_and_loses_nothing() -> None:
    said = "COPY (SELECT ...): 44,000 rows written to cc.parquet; 44,000 rows read, 450 undecodable"
    for width in (20, 40, 80):
        lines = message(said, width).split("\n")
        assert all(len(line) <= width for line in lines)
        assert " ".join(" ".join(line.split()) for line in lines) == said  # every word whole
    assert message(said, 0) == said  # a pipe or a file: the one line
    # A path wider than the room is never broken nor cut: it stands whole on a line of its own at
    # the line's indent (the terminal shows it on as many rows as it takes; it copies as one), the
    # words after it on the next line; in a report too. A word that is no path stays whole on its
    # line in a message, and a report cuts it.
    path = "/a/path/wider/than/the/screen.parquet"
    assert message(f"cannot write {path}: no directory", 20).split("\n") == [
        "cannot write", f"    {path}:", "    no directory"]
    assert list(fit([f"cannot write {path}"], 20)) == ["cannot write", f"    {path}"]
    assert message(f"{path} is not there", 20).split("\n") == [path, "    is not there"]
    url = "https://cassandra.apache.org/doc/latest/cassandra/cql/cql_singlefile.html#deleteStmt"
    assert message(f"URL for help topic DELETE : {url}", 80).split("\n") == [
        "URL for help topic DELETE :", f"    {url}"]
    for relative in ("~/journal/edit-ks.t-20261127T212003-d65fc892.jsonl",
                     "docs/a-rather-long-name-of-a-doc.md"):
        assert message(f"see {relative} now", 30).split("\n") == ["see", f"    {relative}", "    now"]
    # One that fits the next line's room goes there whole, under the line's text.
    assert message(f"written to {path[:14]} today", 20).split("\n") == [
        "written to", f"    {path[:14]}", "    today"]
    word = "a-word-with-no-slash-in-it"
    assert message(f"cannot write {word}: no", 20).split("\n") == ["cannot write", f"    {word}:", "    no"]
    assert list(fit([f"cannot write {word}"], 20)) == ["cannot write", f"    {word[:15]}…"]
    assert not is_path("[lz4/frame]") and not is_path('{"a/b": 1}') and is_path("'/tmp/x.parquet'")


def test_only_a_terminal_has_a_screen_width(tmp_path) -> None:
    with open(tmp_path / "file", "w") as out:
        assert screen_width(out) == 0


def test_the_install_hint_is_editable_only_where_the_install_is(tmp_path) -> None:
    # The API's hint said `pip install -e CHECKOUT[api]` where the shell's said no -e: in another
    # environment than the checkout's .venv, -e only where cqlsh-ext was installed editable.
    import subprocess
    import sys

    from conftest import REPO_ROOT

    base = getattr(sys, "_base_executable", sys.executable)  # an interpreter outside .venv
    for editable, said in ((True, "-e "), (False, "")):
        site = tmp_path / f"site-{editable}"
        dist = site / "cqlsh_ext-0.1.0.dist-info"
        dist.mkdir(parents=True)
        (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cqlsh-ext\nVersion: 0.1.0\n")
        (dist / "direct_url.json").write_text(
            f'{{"url": "file://{REPO_ROOT}", "dir_info": {{"editable": {str(editable).lower()}}}}}')
        program = (f"import sys; sys.path[:0] = [{str(site)!r}, {str(REPO_ROOT)!r}]\n"
                   "from cqlsh_ext.common.install import install_hint; print(install_hint('api'))")
        out = subprocess.run([base, "-I", "-c", program], capture_output=True, text=True, cwd=tmp_path,
                             timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == f"run {base} -m pip install {said}'{REPO_ROOT}[api]'", out.stdout


def test_the_pager_s_stand_in_has_the_terminal_s_width() -> None:
    # A message written while the interactive shell's pager holds the output (HELP DELETE's hint)
    # was whole, and the terminal cut it at its edge ('HEL' / 'P EDIT'): the stand-in shows on the
    # shell's terminal, whose width it is fitted to.
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import sys
    import termios

    main, sub = pty.openpty()
    fcntl.ioctl(sub, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    program = ("import sys\nfrom cqlsh_ext.common.text import screen_width\n"
               "from cqlsh_ext.repl.pager import PagedOutput\n"
               "held = PagedOutput(sys.stdout, 'less', 10)\n"
               "print(screen_width(held), held.isatty(), file=sys.stderr)")
    try:
        proc = subprocess.run([sys.executable, "-c", program], stdout=sub, stderr=subprocess.PIPE, text=True,
                              timeout=60)
    finally:
        os.close(sub)
        os.close(main)
    assert proc.stderr.split() == ["80", "False"], proc.stderr  # fitted to 80, still no terminal itself


#: A statement that starts while an import's lock is freed: Ctrl-C pressed then is handled inside
#: importlib's weakref callback, where Python drops the KeyboardInterrupt ("Exception ignored"). Run
#: in a child process of its own: the SIGINT is never the pytest worker's.
_DROPPED_PRESS = """
import json, os, signal, sys, weakref
from cqlsh_ext.common.interrupt import CtrlC, carried
dropped = []
sys.unraisablehook = lambda raised: dropped.append(raised.exc_type.__name__)
class Lock:
    pass
def freed(_ref):  # as importlib's _get_module_lock callback: the press is handled in here
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(1000):
        pass
def statement():
    lock = Lock()
    ref = weakref.ref(lock, freed)
    del lock
    with CtrlC() as ctrl_c:  # the export's, entered after its imports
        return ctrl_c.pressed
bare = statement()
with carried():  # the shell's statement
    kept = statement()
print(json.dumps({"dropped": dropped, "bare": bare, "carried": kept, "restored":
                  signal.getsignal(signal.SIGINT) is signal.default_int_handler}))
"""


def test_a_ctrl_c_python_drops_while_a_statement_starts_still_stops_it() -> None:
    # tests/repl/test_ctrl_c.py::test_ctrl_c_right_after_enter_is_never_lost[export-0.0] lost its
    # Ctrl-C inside importlib's weakref callback and the export ran to its end (120 s).
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _DROPPED_PRESS], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    said = json.loads(proc.stdout)
    assert said["dropped"] == ["KeyboardInterrupt", "KeyboardInterrupt"], said  # each press dropped
    assert said["bare"] is False  # lost, as it was
    assert said["carried"] is True and said["restored"] is True, said
