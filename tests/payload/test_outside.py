"""Formats from outside (docs/payloads.md, "Formats from outside"): the test plugin acme-formats
(tests/plugins/acme_formats, installed by bin/setup --test as a team installs theirs) and the
external decoder tests/plugins/decode_kv.py named in cqlshrc's [formats], read, filtered, exported
and edited through the real binary on the real server, on both value engines (the native core hands
back the values of formats it does not know); a plugin or a command that misbehaves held within
the value's budget, its failure that value's note; and each held apart ("what an outside piece can
and cannot do"): nothing imported from where the shell starts, nothing it writes mixed into the
answers, no secret in its environment, nothing it starts outliving its value, its call's stop or
the shell."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import zstandard
from acme_formats import decode as kv1_decode
from acme_formats import encode as kv1
from shell_runner import CQLSH_EXT, as_the_user, isolated_env, run
from waiting import running, wait_until

from cqlsh_ext.codecs.base import DEFAULT_CAP
from cqlsh_ext.payload import formats
from cqlsh_ext.payload.confidence import view_explained
from cqlsh_ext.payload.formats._outside import PASSED_ENVIRONMENT, configure_commands, origins, stopping_with
from cqlsh_ext.payload.spec import parse_spec
from cqlsh_ext.payload.unwrap import unwrap, unwrap_spec

PLUGINS = Path(__file__).resolve().parents[1] / "plugins"
DECODER = f"{sys.executable} {PLUGINS / 'decode_kv.py'}"
ADA = {"id": "7", "name": "Ada", "city": "Paris"}
BO = {"id": "8", "name": "Bo", "city": "Lyon"}
#: The rows of table `noisy`: a value the test plugin decodes noisily (it writes on fd 1, prints,
#: runs `cat` and `sh`), each answering its own name; row FORGED writes into the worker's answers.
NOISY = 30
FORGED = 15
#: Modules a directory may hold that the plugins' worker imports from the standard library.
PLANTED = ("shlex", "json", "selectors", "subprocess", "threading")
#: What the shell is given that no plugin or command may see.
SECRETS = {"CQLSH_EXT_MCP_TOKEN": "tok-4d1c9e-never-seen", "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE0NEVERSEEN",
           "AWS_SECRET_ACCESS_KEY": "aws-secret-0f3b-never-seen",
           "AWS_SESSION_TOKEN": "aws-session-never-seen", "ACME_DB_PASSWORD": "acme-pass-never-seen"}


@pytest.fixture(scope="module")
def ks(cassandra):
    name = cassandra.create_keyspace("outside")
    s = cassandra.session(name)
    s.execute("CREATE TABLE kv (id int PRIMARY KEY, data blob)")
    s.execute("CREATE TABLE cmd (id int PRIMARY KEY, data blob)")
    rows = {1: kv1(ADA), 2: zstandard.ZstdCompressor().compress(kv1(BO)), 3: json.dumps(BO).encode()}
    for key, value in rows.items():
        s.execute("INSERT INTO kv (id, data) VALUES (%s, %s)", (key, value))
        s.execute("INSERT INTO cmd (id, data) VALUES (%s, %s)", (key, value))
    s.execute("CREATE TABLE noisy (id int PRIMARY KEY, data blob)")
    for key in range(1, NOISY + 1):
        s.execute("INSERT INTO noisy (id, data) VALUES (%s, %s)",
                  (key, b"forge" if key == FORGED else f"noisy row-{key}".encode()))
    s.execute("CREATE TABLE asks (id int PRIMARY KEY, data blob)")
    for key, value in {1: b"path", 2: b"env"}.items():
        s.execute("INSERT INTO asks (id, data) VALUES (%s, %s)", (key, value))
    s.shutdown()
    return name


def ext(cassandra, home: Path, *args: str, rc: str = "", start: Path | None = None,
        env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """cqlsh-ext on the test server with cqlshrc `rc`, started in directory `start` (env -C)."""
    cqlshrc = home / "cqlshrc"
    cqlshrc.write_text(rc)
    argv = [*cassandra.cqlsh_args, "--cqlshrc", str(cqlshrc), *args]
    result = (run(CQLSH_EXT, argv, home, env=env) if start is None
              else run("env", ["-C", str(start), CQLSH_EXT, *argv], home, env=env))
    return result.returncode, result.stdout, result.stderr


def json_rows(out: str) -> dict[int, dict]:
    """--output-format json's rows by id: the data column's reading."""
    return {row["id"]: row["data"] for row in map(json.loads, out.splitlines())}


def planted(directory: Path) -> Path:
    """`directory` holding a module of each name in PLANTED that leaves a file `imported-NAME` there
    when imported (as a stranger's files in a shared directory would run as the user)."""
    directory.mkdir(exist_ok=True)
    for name in PLANTED:
        marker = directory / f"imported-{name}"
        (directory / f"{name}.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    return directory


def markers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.glob("imported-*"))


def pid_in(path: Path) -> int:
    return int(wait_until(lambda: path.exists() and path.read_text().strip(), f"a pid in {path}"))


def stored(cassandra, ks: str, table: str, key: int) -> bytes:
    s = cassandra.session(ks)
    try:
        return bytes(s.execute(f"SELECT data FROM {table} WHERE id = %s", (key,)).one().data)
    finally:
        s.shutdown()


# ------------------------------------------------------------------ the plugin, in this process


def test_the_plugin_registers_through_the_built_ins_door() -> None:
    found = {o.name: o for o in origins()}
    assert found["kv1"].package == "acme-formats" and found["kv1"].version == "1.4.2"
    assert formats.get("kv1") is not None and "kv1" in [f.name for f in formats.auto_formats()]
    assert str(parse_spec("zstd>kv1")) == "zstd>kv1"  # a spec knows the name, nothing imported for it
    view = unwrap(zstandard.ZstdCompressor().compress(kv1(ADA)), "auto", DEFAULT_CAP)
    assert (view.label, view.kind, view.record) == ("zstd>kv1", "record", ADA)
    sure, why = view_explained(view)
    assert sure == "likely" and "acme-formats 1.4.2" in why  # a plugin's claim: never past likely


@pytest.mark.parametrize(("value", "note"), [
    (b"sleep", "plugin acme_hostile took longer than 5 s: cut"),
    (b"nodes", "acme_hostile: over 100,000 nodes"),
    (b"deep", "acme_hostile: nested deeper than 64"),
    (b"memory", "acme_hostile: out of memory (over 512 MiB)"),
    (b"object", "acme_hostile: answered a value of type object, not plain data"),
    (b"raise", "acme_hostile: RuntimeError: the plugin fell over"),
])
def test_a_plugin_that_misbehaves_is_that_values_note(value: bytes, note: str) -> None:
    view = unwrap_spec(value, "acme_hostile", DEFAULT_CAP)
    assert view.kind == "failed" and view.reason == f"as acme_hostile: {note}"
    # the worker is started again for the next value
    assert unwrap_spec(b"fine", "acme_hostile", DEFAULT_CAP).record == {"bytes": 4}


def test_nothing_a_plugin_writes_reaches_its_answers() -> None:
    assert unwrap_spec(b"print", "acme_hostile", DEFAULT_CAP).record == {"printed": True}
    # on fd 1 (an answer as the worker's first protocol framed one), through `cat` and `sh`
    for n in range(1, 11):
        read = unwrap_spec(f"noisy row-{n}".encode(), "acme_hostile", DEFAULT_CAP)
        assert read.record == {"row": f"row-{n}"}
    # into the answers' own pipe: out of turn, so the worker is ended and the next value read right
    forged = unwrap_spec(b"forge", "acme_hostile", DEFAULT_CAP)
    assert (forged.kind, forged.reason) == (
        "failed", "as acme_hostile: plugin acme_hostile: its worker answered out of turn: ended")
    assert unwrap_spec(b"noisy after", "acme_hostile", DEFAULT_CAP).record == {"row": "after"}


def test_a_calls_stop_cuts_a_plugin_or_a_command_and_starts_none(tmp_path: Path) -> None:
    # the call's time limit (cqlsh-ext mcp's) cuts a plugin before its own 5 s
    with stopping_with(threading.Event(), time.monotonic() + 2, lambda: "the time limit (2 s)"):
        cut = unwrap_spec(b"sleep", "acme_hostile", DEFAULT_CAP)
        after = unwrap_spec(b"fine", "acme_hostile", DEFAULT_CAP)
    assert cut.reason == ("as acme_hostile: plugin acme_hostile cut: its call has stopped (the time limit "
                          "(2 s))")
    assert after.reason == ("as acme_hostile: plugin acme_hostile not run: its call has stopped (the time "
                            "limit (2 s))")
    assert unwrap_spec(b"fine", "acme_hostile", DEFAULT_CAP).record == {"bytes": 4}  # outside a call

    # the client's cancellation cuts a running command (its own timeout 60 s) with what it started
    pids = tmp_path / "pids"
    pids.mkdir()
    configure_commands({"kvslow": f"{DECODER} --pids {pids} --leave {tmp_path / 'left'} --hang",
                        "kvslow.timeout": "60"})
    parse_spec.cache_clear()
    stop = threading.Event()

    def cancel_once_running() -> None:
        pid_in(tmp_path / "left")
        stop.set()

    threading.Thread(target=cancel_once_running, daemon=True).start()
    try:
        with stopping_with(stop, time.monotonic() + 600, lambda: "cancelled by the client"):
            cut = unwrap_spec(kv1(ADA), "kvslow", DEFAULT_CAP)
            after = unwrap_spec(kv1(BO), "kvslow", DEFAULT_CAP)
    finally:
        configure_commands({})
        parse_spec.cache_clear()
    assert cut.reason == "as kvslow: command kvslow cut: its call has stopped (cancelled by the client)"
    assert after.reason == "as kvslow: command kvslow not run: its call has stopped (cancelled by the client)"
    started = [int(p.name) for p in pids.iterdir()]
    assert len(started) == 1 and not running(started[0])  # the one that ran, ended: none after it
    assert not running(pid_in(tmp_path / "left"))  # and what it left in a session of its own


def test_commands_are_held_to_their_timeout_and_output_cap() -> None:
    configure_commands({"kvcmd": DECODER, "kvhang": f"{DECODER} --hang", "kvhang.timeout": "1",
                        "kvflood": f"{DECODER} --flood", "kvflood.max_output": "1000",
                        "kvfail": f"{DECODER} --fail", "kvwords": f"{DECODER} --not-json",
                        "kvtext": f"{DECODER} --not-json", "kvtext.output": "text"})
    parse_spec.cache_clear()
    try:
        value = kv1(ADA)
        assert unwrap_spec(value, "kvcmd", DEFAULT_CAP).record == ADA
        notes = {name: unwrap_spec(value, name, DEFAULT_CAP).reason
                 for name in ("kvhang", "kvflood", "kvfail", "kvwords")}
        assert notes == {
            "kvhang": "as kvhang: command kvhang took longer than 1 s: cut",
            "kvflood": "as kvflood: command kvflood wrote more than 1,000 bytes: cut",
            "kvfail": "as kvfail: command kvfail failed (exit 1): decode_kv: this value is not ours",
            "kvwords": "as kvwords: kvwords: the command's output is not JSON (Expecting value: line 1 "
                       "column 1 (char 0))"}
        text = unwrap_spec(value, "kvtext", DEFAULT_CAP)
        assert (text.kind, text.text) == ("text", "plain words")
    finally:
        configure_commands({})
        parse_spec.cache_clear()


def test_a_command_is_held_to_its_memory_and_leaves_nothing_running(tmp_path: Path) -> None:
    configure_commands({"kvbig": f"{DECODER} --allocate",
                        "kvroomy": f"{DECODER} --allocate", "kvroomy.max_memory": str(4 << 30),
                        "kvleave": f"{DECODER} --leave {tmp_path / 'left'}",
                        "kvhang": f"{DECODER} --leave {tmp_path / 'hung'} --hang", "kvhang.timeout": "1"})
    parse_spec.cache_clear()
    try:
        value = kv1(ADA)
        # 1.5 GB refused by its address space's 512 MiB; given 4 GiB, the same command reads it
        assert unwrap_spec(value, "kvbig", DEFAULT_CAP).reason == \
            "as kvbig: command kvbig failed (exit 1): MemoryError"
        assert unwrap_spec(value, "kvroomy", DEFAULT_CAP).record == ADA
        # a `setsid` sleeper, out of its process group and session: ended once the value is read
        assert unwrap_spec(value, "kvleave", DEFAULT_CAP).record == ADA
        assert not running(pid_in(tmp_path / "left"))
        assert unwrap_spec(value, "kvhang", DEFAULT_CAP).reason == \
            "as kvhang: command kvhang took longer than 1 s: cut"
        assert not running(pid_in(tmp_path / "hung"))
    finally:
        configure_commands({})
        parse_spec.cache_clear()


# ------------------------------------------------------------------ through the shell, on the server


def test_version_names_the_plugin(cassandra, tmp_path):
    code, out, _ = ext(cassandra, tmp_path, "--version")
    assert code == 0 and "format kv1 (plugin acme-formats 1.4.2)" in out.splitlines()


def test_read_filter_export_and_edit_through_the_plugin(cassandra, ks, tmp_path, engine):
    code, out, err = ext(cassandra, tmp_path, "-e", f"SELECT id, data FROM {ks}.kv")
    assert code == 0, err
    assert '[kv1] {"id":"7","name":"Ada","city":"Paris"}' in out
    assert '[zstd>kv1] {"id":"8","name":"Bo","city":"Lyon"}' in out

    code, out, err = ext(cassandra, tmp_path, "-e",
                         f"SELECT id, data.city FROM {ks}.kv WHERE data.name = 'Bo' ALLOW FILTERING")
    assert code == 0, err
    assert out.count("Lyon") == 2 and "Paris" not in out  # the KV1 one and the JSON one

    target = tmp_path / "kv.parquet"
    code, out, err = ext(cassandra, tmp_path, "-e",
                         f"COPY (SELECT id, data FROM {ks}.kv) TO '{target}'")
    assert code == 0, err
    rows = {r["id"]: r for r in pq.read_table(target).to_pylist()}
    assert rows[1]["data:label"] == "kv1" and rows[2]["data:label"] == "zstd>kv1"
    assert rows[1]["data:confidence"] == rows[2]["data:confidence"] == "likely"
    assert rows[3]["data:label"] == "json" and rows[3]["data:confidence"] == "likely"
    assert rows[1]["data"] == ADA and rows[2]["data"] == rows[3]["data"] == BO

    code, out, err = ext(cassandra, tmp_path, "-e",
                         f"UPDATE {ks}.kv SET data.city = 'Nice' WHERE id = 2 CONFIRM")
    assert code == 0, err
    after = stored(cassandra, ks, "kv", 2)
    assert after.startswith(b"\x28\xb5\x2f\xfd")  # still a zstd frame around KV1, written by the plugin
    assert kv1_decode(zstandard.ZstdDecompressor().decompress(after)) == dict(BO, city="Nice")
    code, _, err = ext(cassandra, tmp_path, "-e",
                       f"UPDATE {ks}.kv SET data.city = 'Lyon' WHERE id = 2 CONFIRM")
    assert code == 0, err


def test_an_external_decoder_named_by_a_setting(cassandra, ks, tmp_path, engine):
    rc = (f"[formats]\nkvcmd = {DECODER}\nkvcmd.encoder = {DECODER} --encode\n"
          f"kvhang = {DECODER} --hang\nkvhang.timeout = 1\n"
          f"[cqlsh_ext.decode]\n{ks}.cmd.data = zstd>kvcmd\n")
    code, out, err = ext(cassandra, tmp_path, "-e", f"SELECT id, data FROM {ks}.cmd WHERE id = 2", rc=rc)
    assert code == 0, err
    assert '[zstd>kvcmd] {"id":"8","name":"Bo","city":"Lyon"}' in out

    code, out, err = ext(cassandra, tmp_path, "--output-format", "json", "-e",
                         f"SELECT id, data FROM {ks}.cmd WHERE id IN (1, 2)", rc=rc)
    assert code == 0, err
    got = {row["id"]: row["data"] for row in map(json.loads, out.splitlines())}
    assert got[2] == {"label": "zstd>kvcmd", "kind": "record", "confidence": "confident", "payload": BO}
    assert got[1]["kind"] == "failed" and got[1]["note"].startswith("as zstd>kvcmd: zstd")  # not zstd

    code, _, err = ext(cassandra, tmp_path, "-e",
                       f"UPDATE {ks}.cmd SET data.name = 'Bea' WHERE id = 2 CONFIRM", rc=rc)
    assert code == 0, err
    assert kv1_decode(zstandard.ZstdDecompressor().decompress(stored(cassandra, ks, "cmd", 2))) == \
        dict(BO, name="Bea")
    code, _, err = ext(cassandra, tmp_path, "-e",
                       f"UPDATE {ks}.cmd SET data.name = 'Bo' WHERE id = 2 CONFIRM", rc=rc)
    assert code == 0, err

    hang = rc.replace(f"{ks}.cmd.data = zstd>kvcmd", f"{ks}.cmd.data = kvhang")
    code, out, err = ext(cassandra, tmp_path, "-e", f"SELECT id, data FROM {ks}.cmd WHERE id = 1", rc=hang)
    assert code == 0, err
    assert "(as kvhang: command kvhang took longer than 1 s: cut)" in out


def test_a_bad_formats_section_is_one_line(cassandra, tmp_path):
    code, _out, err = ext(cassandra, tmp_path, "-e", "SELECT now() FROM system.local",
                          rc="[formats]\nkv.output = text\n")
    assert code != 0
    last = err.strip().splitlines()[-1]
    assert last.endswith("[formats] kv: options without a command (kv = command args)")


# ------------------------------------------------------------------ held apart, through the shell


def test_nothing_is_imported_from_where_the_shell_starts(cassandra, ks, tmp_path):
    start = planted(tmp_path / "start")
    subprocess.run([sys.executable, "-c", "import shlex"], cwd=start, check=True)  # what it would do
    assert markers(start) == ["imported-shlex"]
    (start / "imported-shlex").unlink()
    # An entry of PYTHONPATH, before the tests' own (tests/conftest.py: where the test plugins are):
    # after the worker's standard library.
    extra = tmp_path / "extra"
    extra.mkdir()
    rc = (f"[formats]\nkvcmd = {DECODER}\n"
          f"[cqlsh_ext.decode]\n{ks}.cmd.data = zstd>kvcmd\n{ks}.asks.data = acme_hostile\n")
    code, out, err = ext(cassandra, tmp_path, "--output-format", "json", "-e",
                         f"SELECT id, data FROM {ks}.kv WHERE id = 1; "
                         f"SELECT id, data FROM {ks}.cmd WHERE id = 2; "
                         f"SELECT id, data FROM {ks}.asks WHERE id = 1", rc=rc, start=start,
                         env={"PYTHONPATH": os.pathsep.join([str(extra), os.environ["PYTHONPATH"]])})
    assert code == 0, err
    assert markers(start) == []
    by_plugin, by_command, path = [json.loads(line)["data"] for line in out.splitlines()]
    assert (by_plugin["label"], by_plugin["payload"]) == ("kv1", ADA)
    assert (by_command["label"], by_command["payload"]) == ("zstd>kvcmd", BO)
    worker_path = path["payload"]
    stdlib = os.path.dirname(os.__file__)
    assert all(os.path.isabs(entry) and entry != str(start) for entry in worker_path), worker_path
    assert worker_path.index(str(extra)) > worker_path.index(stdlib)


def test_each_row_shows_its_own_value_whatever_the_plugin_writes(cassandra, ks, tmp_path):
    rc = f"[cqlsh_ext.decode]\n{ks}.noisy.data = acme_hostile\n"
    code, out, err = ext(cassandra, tmp_path, "--output-format", "json", "-e",
                         f"SELECT id, data FROM {ks}.noisy", rc=rc)
    assert code == 0, err
    rows = json_rows(out)
    assert sorted(rows) == list(range(1, NOISY + 1))
    assert rows.pop(FORGED)["note"] == ("as acme_hostile: plugin acme_hostile: its worker answered out of "
                                        "turn: ended")
    assert {key: row.get("payload") for key, row in rows.items()} == \
        {key: {"row": f"row-{key}"} for key in rows}
    assert "forged" not in out and "forged" not in err and "decoding" not in out + err


def test_no_secret_reaches_a_plugin_or_a_command(cassandra, ks, tmp_path):
    rc = (f"[formats]\nkvenv = {DECODER} --env\n"
          f"[cqlsh_ext.decode]\n{ks}.asks.data = acme_hostile\n{ks}.cmd.data = kvenv\n")
    code, out, err = ext(cassandra, tmp_path, "--output-format", "json", "-e",
                         f"SELECT id, data FROM {ks}.asks WHERE id = 2; "
                         f"SELECT id, data FROM {ks}.cmd WHERE id = 1", rc=rc,
                         env={**SECRETS, "TZ": "Europe/Paris", "LC_ALL": "C.UTF-8"})
    assert code == 0, err
    plugin_env, command_env = [json.loads(line)["data"]["payload"] for line in out.splitlines()]
    for seen in (plugin_env, command_env):
        assert all(key in PASSED_ENVIRONMENT or key.startswith("LC_") for key in seen), sorted(seen)
        assert seen["TZ"] == "Europe/Paris" and seen["LC_ALL"] == "C.UTF-8" and seen["PATH"]
    assert not any(secret in out or secret in err for secret in SECRETS.values())


def test_a_command_cannot_read_the_shells_environment_from_proc(cassandra, ks, tmp_path):
    """The shell is not dumpable: an external decoder, run as the user (without capabilities, as
    every process of a user is), reading /proc/PID/environ of each process above it is refused the
    shell's, which holds the secrets, and reads none of them anywhere."""
    rc = f"[formats]\nkvproc = {DECODER} --ancestors\n[cqlsh_ext.decode]\n{ks}.cmd.data = kvproc\n"
    (tmp_path / "cqlshrc").write_text(rc)
    command = [*as_the_user(), CQLSH_EXT, *cassandra.cqlsh_args, "--cqlshrc", str(tmp_path / "cqlshrc"),
               "--output-format", "json", "-e", f"SELECT id, data FROM {ks}.cmd WHERE id = 1"]
    result = run(command[0], command[1:], tmp_path, env=SECRETS)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)["data"]["payload"]["ancestors"]
    shells = [each for each in seen if CQLSH_EXT in each["cmdline"] and "--cqlshrc" in each["cmdline"]]
    assert len(shells) == 1 and shells[0].get("refused") == "Permission denied", seen
    assert not any(name in SECRETS for each in seen for name in each.get("names", ())), seen


def test_what_a_command_starts_ends_with_the_shell_however_it_ends(cassandra, ks, tmp_path):
    rc = (f"[formats]\nkvleave = {DECODER} --leave {tmp_path / 'left'}\n"
          f"kvhang = {DECODER} --pids {tmp_path} --leave {tmp_path / 'hung'} --hang\nkvhang.timeout = 60\n"
          f"[cqlsh_ext.decode]\n{ks}.cmd.data = kvleave\n")
    code, out, err = ext(cassandra, tmp_path, "--output-format", "json", "-e",
                         f"SELECT id, data FROM {ks}.cmd WHERE id = 1", rc=rc)
    assert code == 0, err
    assert json_rows(out)[1]["payload"] == ADA
    assert not running(pid_in(tmp_path / "left"))

    # killed (no atexit runs) while a command hangs: the command and its sleeper end with it
    (tmp_path / "cqlshrc").write_text(rc.replace("= kvleave", "= kvhang"))
    shell = subprocess.Popen([CQLSH_EXT, *cassandra.cqlsh_args, "--cqlshrc", str(tmp_path / "cqlshrc"), "-e",
                              f"SELECT id, data FROM {ks}.cmd WHERE id = 1"], env=isolated_env(tmp_path),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sleeper = pid_in(tmp_path / "hung")
    command = int(wait_until(lambda: [p.name for p in tmp_path.iterdir() if p.name.isdigit()],
                             "the command's pid")[0])
    assert running(command) and running(sleeper)
    os.kill(shell.pid, signal.SIGKILL)
    shell.wait()
    wait_until(lambda: not running(command) and not running(sleeper), "the command and its sleeper ended")
