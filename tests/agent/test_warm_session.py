"""Warm sessions (docs/agents.md, "Warm sessions"): `cqlsh-ext --serve NAME` started as a user starts
it against the real server, and calls through it (`--session NAME`) that answer what a cold run of
the same flags answers, byte for byte and exit code for exit code; the socket only its user opens;
--session-status as JSON; a changed connection, a password and a missing session refused in one
line; Ctrl-C forwarded (exit 130); a client that loads neither cqlsh nor the driver; the calls on
the session's one connection, as the server lists its clients; what a call changes gone at the next;
a call arriving during another waiting its turn.

One session for the module: its start is one cold start and one connection."""

from __future__ import annotations

import importlib.machinery
import importlib.metadata
import importlib.util
import json
import os
import signal
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from shell_runner import CQLSH_EXT, ext, isolated_env, run
from waiting import wait_until

from cqlsh_ext.agent import session_server

NAME = "warm-test"


@pytest.fixture(scope="module")
def runtime_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """$XDG_RUNTIME_DIR of the module's runs: the sessions' sockets in a directory of their own."""
    path = tmp_path_factory.mktemp("run")
    path.chmod(0o700)
    return path


@pytest.fixture(scope="module")
def warm_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("warm-home")


def _env(home: Path, runtime_dir: Path) -> dict[str, str]:
    return {**isolated_env(home), "XDG_RUNTIME_DIR": str(runtime_dir)}


@pytest.fixture(scope="module")
def session(cassandra, warm_home: Path, runtime_dir: Path) -> Iterator[subprocess.Popen[str]]:  # type: ignore[no-untyped-def]
    server = subprocess.Popen([CQLSH_EXT, "--serve", NAME, *cassandra.cqlsh_args], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=_env(warm_home, runtime_dir))
    assert server.stderr is not None
    said = []
    for line in server.stderr:  # the event: its ready line (or its end)
        said.append(line)
        if "is ready" in line:
            break
    assert "is ready" in "".join(said), "".join(said)
    yield server
    server.send_signal(signal.SIGINT)
    server.communicate(timeout=120)


def _warm(home: Path, runtime_dir: Path, *args: str, stdin: str | None = None):  # type: ignore[no-untyped-def]
    return run(CQLSH_EXT, ["--session", NAME, *args], home, stdin=stdin,
               env={"XDG_RUNTIME_DIR": str(runtime_dir)})


def _cases(numbered: str) -> list[tuple[list[str], str | None]]:
    return [
        (["-e", f"SELECT n, data FROM {numbered} WHERE p = 0 AND n < 3"], None),
        (["--output-format", "json", "-e",
          f"SELECT n, data.word FROM {numbered} WHERE data.n < 4 ALLOW FILTERING"], None),
        (["--output-format", "json", "-e", f"DESCRIBE TABLE {numbered}"], None),
        (["--read-only", "-e", f"INSERT INTO {numbered} (p, n) VALUES (0, 9999)"], None),
        (["--output-format", "json", "-e", f"SELEC n FROM {numbered}"], None),
        (["--output-format", "json", "--max-rows", "2", "-e", f"SELECT n FROM {numbered}"], None),
        ([], f"SELECT n FROM {numbered} WHERE p = 0 AND n = 7;\n"),
    ]


def test_warm_calls_answer_byte_for_byte_what_cold_runs_answer(cassandra, session, warm_home: Path,
                                                               runtime_dir: Path, numbered: str) -> None:
    codes = []
    for args, stdin in _cases(numbered):
        cold = ext(cassandra, warm_home, *args, stdin=stdin)
        warm = _warm(warm_home, runtime_dir, *args, stdin=stdin)
        assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout,
                                                               cold.stderr), args
        codes.append(cold.returncode)
    # the cases cover what the skill names: answers, a refusal (3), a statement's error (2)
    assert codes == [0, 0, 0, 3, 2, 0, 0]


def test_a_file_of_statements_runs_from_the_callers_directory(cassandra, session, warm_home: Path,
                                                             runtime_dir: Path, numbered: str,
                                                             tmp_path: Path) -> None:
    (tmp_path / "two.cql").write_text(f"SELECT n FROM {numbered} WHERE p = 0 AND n = 1;\n"
                                      f"SELECT n FROM {numbered} WHERE p = 0 AND n = 2;\n")
    env = {**isolated_env(warm_home), "XDG_RUNTIME_DIR": str(runtime_dir)}
    cold = subprocess.run([CQLSH_EXT, *cassandra.cqlsh_args, "-f", "two.cql"], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=120)
    warm = subprocess.run([CQLSH_EXT, "--session", NAME, "-f", "two.cql"], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=120)
    assert cold.returncode == 0, cold.stderr
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)


def test_the_socket_is_the_users_alone(session, runtime_dir: Path) -> None:
    held = runtime_dir / "cqlsh-ext"
    assert stat.S_IMODE(held.stat().st_mode) == 0o700
    sock = held / f"{NAME}.sock"
    assert stat.S_ISSOCK(sock.stat().st_mode) and stat.S_IMODE(sock.stat().st_mode) == 0o600


def test_a_caller_of_another_uid_is_refused() -> None:
    # SO_PEERCRED of a real socket: the session's own uid passes, any other is refused.
    ours, theirs = socket.socketpair(socket.AF_UNIX)
    with ours, theirs:
        assert session_server.peer_refusal(ours, os.getuid()) is None
        refusal = session_server.peer_refusal(ours, os.getuid() + 1)
    assert refusal is not None and f"uid {os.getuid()}" in refusal


def test_session_status_is_json(cassandra, session, warm_home: Path, runtime_dir: Path) -> None:
    _warm(warm_home, runtime_dir, "-e", "SELECT release_version FROM system.local")
    result = run(CQLSH_EXT, ["--session-status", NAME], warm_home, env={"XDG_RUNTIME_DIR": str(runtime_dir)})
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert status["name"] == NAME and status["pid"] == session.pid and status["host"] == cassandra.host
    assert status["calls"] >= 1 and status["since"].endswith("Z")
    every = run(CQLSH_EXT, ["--session-status"], warm_home, env={"XDG_RUNTIME_DIR": str(runtime_dir)})
    assert [found["name"] for found in json.loads(every.stdout)] == [NAME]


def test_another_connection_or_a_password_is_refused_in_one_line(session, warm_home: Path,
                                                                  runtime_dir: Path) -> None:
    other = _warm(warm_home, runtime_dir, "-k", "system", "-e", "SELECT now() FROM system.local")
    assert other.returncode == 2 and other.stdout == ""
    assert other.stderr.count("\n") == 1 and "keyspace system differs" in other.stderr, other.stderr
    for given in (["-p", "hunter2"], ["-phunter2"], ["--password=hunter2"]):
        secret = _warm(warm_home, runtime_dir, *given, "-e", "SELECT 1")
        assert secret.returncode == 2 and "hunter2" not in secret.stderr
        assert secret.stderr.count("\n") == 1 and "never sent to a session" in secret.stderr


def test_a_session_not_running_says_so_exit_1(warm_home: Path, runtime_dir: Path) -> None:
    gone = run(CQLSH_EXT, ["--session", "nosuch", "--output-format", "json", "-e", "SELECT 1"], warm_home,
               env={"XDG_RUNTIME_DIR": str(runtime_dir)})
    assert gone.returncode == 1
    error = json.loads(gone.stderr)
    assert error["kind"] == "connection" and "session nosuch is not running" in error["message"]


def test_ctrl_c_stops_the_statement_in_the_session_exit_130(cassandra, session, warm_home: Path,
                                                            runtime_dir: Path, slow_table: str) -> None:
    client = subprocess.Popen([CQLSH_EXT, "--session", NAME, "-e", f"SELECT n, v FROM {slow_table}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=_env(warm_home, runtime_dir))
    wait_until(lambda: cassandra.faults.met().pages >= 1, "the scan's first page asked for", process=client)
    client.send_signal(signal.SIGINT)
    _out, err = client.communicate(timeout=120)
    assert client.returncode == 130, err
    assert "interrupted (Ctrl-C)" in err and "Traceback" not in err


def test_the_client_loads_neither_cqlsh_nor_the_driver(warm_home: Path, runtime_dir: Path) -> None:
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "cqlsh_ext", "--session", "nosuch",
                             "-e", "SELECT 1"], capture_output=True, text=True, timeout=120,
                            env=_env(warm_home, runtime_dir), cwd=Path(__file__).parents[2])
    assert result.returncode == 1
    loaded = {line.split("|")[-1].strip() for line in result.stderr.splitlines()
              if line.startswith("import time:")}
    assert "cqlsh_ext.agent.session_client" in loaded
    heavy = {name for name in loaded if name.split(".")[0] in ("cqlshlib", "cassandra", "cqlsh_ext_native")
             or name.startswith(("cqlsh_ext.shell", "cqlsh_ext.settings", "cqlsh_ext.payload"))}
    assert not heavy, sorted(heavy)


def _loaded(code: str, args: list[str], env: dict[str, str], cwd: Path) -> set[str]:
    """The modules `python -c CODE ARGS` imports, as -X importtime lists them."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", code, *args], capture_output=True,
                            text=True, timeout=120, env=env, cwd=cwd)
    return {line.split("|")[-1].strip() for line in result.stderr.splitlines()
            if line.startswith("import time:")}


def test_the_client_loads_no_python_module_beyond_pythons_own_start(warm_home: Path,
                                                                   runtime_dir: Path) -> None:
    """A warm call's client is Python's start and little more (bench/warm_session.py, the goal of a
    tenth of a cold run's CPU): beyond what `python -c pass` loads, only cqlsh-ext's own modules on
    the way to agent.session_client and C modules; no pure-Python module (struct, __future__, re)."""
    (script,) = [entry for entry in importlib.metadata.entry_points(group="console_scripts")
                 if entry.name == "cqlsh-ext"]
    module, function = script.value.split(":")
    env = _env(warm_home, runtime_dir)
    start = _loaded("pass", [], env, warm_home)
    # the console script's own lines, less the `import re` of pip's launcher (the installer's)
    call = _loaded(f"import sys; from {module} import {function}; sys.exit({function}())",
                   ["--session", "nosuch", "-e", "SELECT 1"], env, warm_home)
    assert "cqlsh_ext.agent.session_client" in call
    python_modules = {name for name in call - start if name.split(".")[0] != "cqlsh_ext"
                      and (spec := importlib.util.find_spec(name)) is not None
                      and spec.origin not in ("built-in", None)
                      and not spec.origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))}
    assert not python_modules, sorted(python_modules)


def test_an_idle_session_ends_and_takes_its_socket_with_it(cassandra, tmp_path: Path,
                                                           runtime_dir: Path) -> None:
    idle = subprocess.Popen([CQLSH_EXT, "--serve", "idle-test", "--session-idle", "0.1",
                             *cassandra.cqlsh_args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True,
                            env=_env(tmp_path, runtime_dir))
    _out, err = idle.communicate(timeout=300)  # the event: it ends by itself
    assert idle.returncode == 0, err
    assert "session idle-test is ready" in err and "session idle-test stopped after 0 calls" in err
    assert not (runtime_dir / "cqlsh-ext" / "idle-test.sock").exists()


def test_a_sessions_directory_others_may_enter_is_refused(tmp_path: Path) -> None:
    (tmp_path / "cqlsh-ext").mkdir(mode=0o755)
    (tmp_path / "cqlsh-ext").chmod(0o755)
    result = run(CQLSH_EXT, ["--session", "any", "-e", "SELECT 1"], tmp_path,
                 env={"XDG_RUNTIME_DIR": str(tmp_path)})
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "that only you may enter (0700)" in result.stderr, result.stderr


def test_the_interactive_shell_is_not_run_through_a_session(tmp_path: Path, runtime_dir: Path) -> None:
    # Standard input a terminal, no statement given: the prompt would belong to the session's process,
    # which no terminal's job holds; said before any session is asked.
    main_end, terminal = os.openpty()
    try:
        result = subprocess.run([CQLSH_EXT, "--session", NAME], stdin=terminal, capture_output=True,
                                text=True, env=_env(tmp_path, runtime_dir), timeout=120)
    finally:
        os.close(main_end)
        os.close(terminal)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "runs -e, -f and a pipe's statements" in result.stderr


def test_a_caller_killed_during_its_call_leaves_the_session_serving(cassandra, session, warm_home: Path,
                                                                   runtime_dir: Path, slow_table: str,
                                                                   numbered: str) -> None:
    client = subprocess.Popen([CQLSH_EXT, "--session", NAME, "-e", f"SELECT n, v FROM {slow_table}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=_env(warm_home, runtime_dir))
    wait_until(lambda: cassandra.faults.met().pages >= 1, "the scan's first page asked for", process=client)
    client.kill()  # no Ctrl-C to forward: its socket's end stops the statement
    client.wait(timeout=60)
    after = _warm(warm_home, runtime_dir, "-e", f"SELECT n FROM {numbered} WHERE p = 0 AND n = 3")
    assert after.returncode == 0 and " 3\n" in after.stdout, after.stderr
    assert session.poll() is None


def _clients(result) -> set[tuple[str, int]]:  # type: ignore[no-untyped-def]
    """The server's client connections (address, port) a run saw: system_views.clients' rows."""
    assert result.returncode == 0, result.stderr
    return {(row["address"], row["port"]) for row in map(json.loads, result.stdout.splitlines())}


def test_calls_run_on_the_sessions_one_connection_a_cold_run_on_its_own(cassandra, session, warm_home: Path,
                                                                        runtime_dir: Path) -> None:
    # The server's word for it: the connections it lists are the same for three calls in a row (a
    # call with a login of its own adds its connections, gone by the next call), and a cold run's
    # listing holds a connection of its own that none of the calls saw.
    listing = ["--output-format", "json", "-e", "SELECT address, port FROM system_views.clients"]
    seen = [_clients(_warm(warm_home, runtime_dir, *listing)) for _ in range(3)]
    assert seen[0] == seen[1] == seen[2], seen
    cold = _clients(ext(cassandra, warm_home, *listing))
    assert cold - seen[0], (cold, seen[0])


def test_what_a_call_changes_is_gone_at_the_next_call(cassandra, session, warm_home: Path, runtime_dir: Path,
                                                     numbered: str) -> None:
    # Every shell state a statement sets (cqlsh's and cqlsh-ext's), and USE's keyspace on the
    # connection itself: the next call starts as a cold run starts.
    keyspace, table = numbered.split(".")
    setting = [f"USE {keyspace}", "CONSISTENCY ALL", "SERIAL CONSISTENCY LOCAL_SERIAL", "PAGING 7",
               "TRACING ON",
               "EXPAND ON", "DECOMPRESS OFF", "OUTPUT FORMAT JSON", f"DECODE '{table}.data' AS 'gzip'"]
    changed = _warm(warm_home, runtime_dir, "-e", "; ".join(setting))
    assert changed.returncode == 0, changed.stderr
    shown = ["-e", "CONSISTENCY; SERIAL CONSISTENCY; PAGING; TRACING; EXPAND; DECOMPRESS; OUTPUT; DECODE; "
                   f"SELECT n FROM {table} WHERE p = 0 AND n = 1"]
    cold = ext(cassandra, warm_home, *shown)
    warm = _warm(warm_home, runtime_dir, *shown)
    assert "No keyspace has been specified" in cold.stderr and cold.returncode == 2, cold.stderr
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)


def test_a_call_during_another_waits_its_turn_or_is_given_up(session, warm_home: Path, runtime_dir: Path,
                                                             numbered: str) -> None:
    env = _env(warm_home, runtime_dir)
    # its statements from a pipe, held open
    first = subprocess.Popen([CQLSH_EXT, "--session", NAME], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)

    def status() -> dict[str, int]:
        said = run(CQLSH_EXT, ["--session-status", NAME], warm_home,
                   env={"XDG_RUNTIME_DIR": str(runtime_dir)})
        return dict(json.loads(said.stdout))

    wait_until(lambda: status()["running"] == 1, "the first call running", process=first)
    second = subprocess.Popen([CQLSH_EXT, "--session", NAME, "-e",
                               f"SELECT n FROM {numbered} WHERE p = 0 AND n = 2"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    wait_until(lambda: status()["waiting"] == 1, "the second call waiting", process=second)
    third = subprocess.Popen([CQLSH_EXT, "--session", NAME, "-e", "SELECT now() FROM system.local"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    wait_until(lambda: status()["waiting"] == 2, "the third call waiting", process=third)
    third.send_signal(signal.SIGINT)  # a Ctrl-C while it waits: given up, never run
    out, err = third.communicate(timeout=120)
    assert (third.returncode, out) == (130, ""), err
    assert status()["waiting"] == 1 and second.poll() is None
    # the first call's statement and its input's end: it ends, and the second runs
    out, err = first.communicate(f"SELECT n FROM {numbered} WHERE p = 0 AND n = 1;\n", timeout=120)
    assert first.returncode == 0 and " 1\n" in out, err
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0 and " 2\n" in out, err
