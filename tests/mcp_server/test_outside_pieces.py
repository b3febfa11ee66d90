"""Formats from outside under `cqlsh-ext mcp` (docs/mcp.md, "What an outside piece can and cannot
do"), through the MCP SDK's client on the real Cassandra: the test plugin (tests/plugins/acme_formats)
and the external decoder tests/plugins/decode_kv.py named in the server's cqlshrc. A slow command
is cut at its call's time limit, and the next call is answered, with no command left running; the
server started in a directory of planted modules imports none of them; neither a plugin nor a
command sees the server's secrets; the server's end ends a command it was running."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from acme_formats import encode as kv1
from shell_runner import CQLSH_EXT, as_the_user
from waiting import running, wait_until

from cqlsh_ext.payload.formats._outside import PASSED_ENVIRONMENT

from .harness import McpServer, write_credentials

PLUGINS = Path(__file__).resolve().parents[1] / "plugins"
DECODER = f"{sys.executable} {PLUGINS / 'decode_kv.py'}"
ADA = {"id": "7", "name": "Ada", "city": "Paris"}
#: Modules a directory may hold that the outside pieces' worker imports from the standard library.
PLANTED = ("shlex", "json", "selectors", "subprocess", "threading")
SECRETS = {"CQLSH_EXT_MCP_TOKEN": "tok-mcp-7a1e-never-seen", "AWS_ACCESS_KEY_ID": "AKIAMCPNEVERSEEN",
           "AWS_SECRET_ACCESS_KEY": "aws-mcp-secret-never-seen"}


@pytest.fixture(scope="module")
def ks(cassandra) -> str:  # type: ignore[no-untyped-def]
    name = cassandra.create_keyspace("mcp_outside")
    s = cassandra.session(name)
    for table in ("slow", "plain", "asks"):
        s.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, data blob)")
    for key in (1, 2, 3):
        s.execute("INSERT INTO slow (id, data) VALUES (%s, %s)", (key, kv1(dict(ADA, id=str(key)))))
    s.execute("INSERT INTO plain (id, data) VALUES (1, %s)", (kv1(ADA),))
    s.execute("INSERT INTO asks (id, data) VALUES (1, %s)", (b"env",))
    s.shutdown()
    return name


def home_with(cassandra, home: Path, rc: str) -> Path:  # type: ignore[no-untyped-def]
    """`home` logging in as the test server's user, its cqlshrc `rc`."""
    write_credentials(home, cassandra.username, cassandra.password)
    (home / ".cassandra" / "cqlshrc").write_text(rc)
    return home


def started(directory: Path) -> list[int]:
    """The pids the commands wrote into `directory` (decode_kv.py --pids)."""
    return [int(p.name) for p in directory.iterdir() if p.name.isdigit()]


def test_a_slow_command_is_cut_at_the_calls_time_limit_and_the_next_call_waits_for_nothing(
        cassandra, ks: str, tmp_path: Path) -> None:
    # 3 values x a command of 30 s, under a time limit of 8 s: the call ends at its limit
    pids = tmp_path / "pids"
    pids.mkdir()
    rc = (f"[formats]\nkvslow = {DECODER} --pids {pids} --sleep 30\nkvslow.timeout = 60\n"
          f"[cqlsh_ext.decode]\n{ks}.slow.data = kvslow\n")
    home = home_with(cassandra, tmp_path / "home", rc)
    with McpServer([cassandra.host, str(cassandra.port), "--time-limit", "8"], home) as server:
        answer = server.call("query", statement=f"SELECT id, data FROM {ks}.slow").data
        assert all(not running(pid) for pid in started(pids)) and started(pids)  # none left running
        assert answer["stopped"]["why"] == "the time limit (8 s)"
        assert "stopped" in answer["truncated"]
        notes = [row["data"]["note"] for row in answer["rows"]]
        limit = "its call has stopped (the time limit (8 s))"
        assert f"as kvslow: command kvslow cut: {limit}" in notes
        assert set(notes) <= {f"as kvslow: command kvslow cut: {limit}",
                              f"as kvslow: command kvslow not run: {limit}"}
        assert len(started(pids)) == 1  # no command started after the limit

        # the next call is answered, not refused for waiting behind a command
        after = server.call("query", statement=f"SELECT id FROM {ks}.slow").data
        assert sorted(row["id"] for row in after["rows"]) == [1, 2, 3] and "stopped" not in after
        assert len(started(pids)) == 1


def test_nothing_is_imported_from_where_the_server_starts_and_no_secret_reaches_a_piece(
        cassandra, ks: str, tmp_path: Path) -> None:
    start = tmp_path / "start"
    start.mkdir()
    for name in PLANTED:
        (start / f"{name}.py").write_text(f"open({str(start / f'imported-{name}')!r}, 'w').close()\n")
    rc = (f"[formats]\nkvenv = {DECODER} --env\n"
          f"[cqlsh_ext.decode]\n{ks}.asks.data = acme_hostile\n")
    home = home_with(cassandra, tmp_path / "home", rc)
    with McpServer([cassandra.host, str(cassandra.port)], home, env=SECRETS,
                   command=["env", "-C", str(start), CQLSH_EXT, "mcp"]) as server:
        read = server.call("query", statement=f"SELECT id, data FROM {ks}.plain WHERE id = 1").data
        assert (read["rows"][0]["data"]["label"], read["rows"][0]["data"]["payload"]) == ("kv1", ADA)
        plugin_env = server.call("query", statement=f"SELECT id, data FROM {ks}.asks WHERE id = 1").data
        command_env = server.call("query", statement=f"SELECT id, data FROM {ks}.asks WHERE id = 1",
                                  decode={"data": "kvenv"}).data
        written = server.written().decode("utf-8", "replace")
    assert sorted(p.name for p in start.glob("imported-*")) == []
    for answer in (plugin_env, command_env):
        seen = answer["rows"][0]["data"]["payload"]
        assert seen["PATH"] and all(key in PASSED_ENVIRONMENT or key.startswith("LC_") for key in seen), seen
    assert not any(secret in json.dumps([plugin_env, command_env]) or secret in written
                   for secret in SECRETS.values())


def test_a_command_cannot_read_the_servers_environment_from_proc(cassandra, ks: str, tmp_path: Path) -> None:
    """The MCP server is not dumpable: an external decoder, run as the user (without capabilities,
    as every process of a user is), reading /proc/PID/environ of each process above it is refused
    the server's, which holds the secrets, and reads none of them anywhere."""
    home = home_with(cassandra, tmp_path / "home", f"[formats]\nkvproc = {DECODER} --ancestors\n")
    with McpServer([cassandra.host, str(cassandra.port)], home, env=SECRETS,
                   command=[*as_the_user(), CQLSH_EXT, "mcp"]) as server:
        answer = server.call("query", statement=f"SELECT id, data FROM {ks}.asks WHERE id = 1",
                             decode={"data": "kvproc"}).data
    seen = answer["rows"][0]["data"]["payload"]["ancestors"]
    servers = [each for each in seen if f"{CQLSH_EXT} mcp" in each["cmdline"]]
    assert len(servers) == 1 and servers[0].get("refused") == "Permission denied", seen
    assert not any(name in SECRETS for each in seen for name in each.get("names", ())), seen


def test_the_servers_end_ends_the_command_it_was_running(cassandra, ks: str, tmp_path: Path) -> None:
    rc = (f"[formats]\nkvhang = {DECODER} --pids {tmp_path} --leave {tmp_path / 'left'} --hang\n"
          f"kvhang.timeout = 600\n[cqlsh_ext.decode]\n{ks}.slow.data = kvhang\n")
    home = home_with(cassandra, tmp_path / "home", rc)
    with McpServer([cassandra.host, str(cassandra.port), "--time-limit", "600"], home) as server:
        server.start("query", statement=f"SELECT id, data FROM {ks}.slow WHERE id = 1")
        command = wait_until(lambda: started(tmp_path), "the command running")[0]
        sleeper = int(wait_until(lambda: (tmp_path / "left").exists() and (tmp_path / "left").read_text(),
                                 "its sleeper's pid"))
        assert running(command) and running(sleeper)
    wait_until(lambda: not running(command) and not running(sleeper), "the command and its sleeper ended")
