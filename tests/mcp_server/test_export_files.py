"""The export directory held as the journals are, against the real Cassandra through the MCP SDK's own
client, each attack of the last round tried again:

- a directory open to others (0777, 0755) or another user's is refused at start in one line, and
  left as it was; one the server makes is 0700;
- the files are 0600 whatever the umask (the shell's COPY TO keeps the umask's mode, as cqlsh does);
- a link planted under an export's name (to the server's /proc/self/environ), a second name of the
  file, another user's file there: never served, one line;
- `--export-max-bytes 1MiB`: an export of 125 MB decoded from ~5 KB stored (JSON Lines) and one of
  Parquet past the cap stop while writing, leave nothing, and the server writes about the cap at most
  (its /proc wchar) and serves on;
- an export is read by the identity that made it: over HTTP another OAuth identity that knows the URI
  is refused; over stdio the one client reads its own;
- no answer holds the server's directory; `?offset=²` and other non-ASCII digits are a one-line
  INVALID_PARAMS error.
"""

from __future__ import annotations

import base64
import json
import os
import random
import stat
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
import zstandard
from mcp import types
from mcp.shared.exceptions import MCPError
from shell_runner import CQLSH_EXT
from shell_runner import run as run_binary

from .conftest import Demo
from .harness import REVISIONS, HttpMcpServer, McpServer, server_pid
from .issuer import AUDIENCE, ISSUER, Issuer

pytestmark = pytest.mark.server

#: The cap of these tests (--export-max-bytes 1MiB).
CAP = 1 << 20
#: The bomb: ROWS values of zstd JSON, each about 3.9 MB decoded (under the shell's 4 MiB per value):
#: 5,270 bytes stored, 124.8 MB decoded.
ROWS, DECODED_CHARS = 32, 3_900_000
#: A marker in the server's environment: /proc/self/environ holds it, no answer may.
MARKER = "export-environ-marker-5b1f9e"


@pytest.fixture(scope="module")
def bombs(cassandra) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """ks.bombs: ROWS rows (id, data, note): `data` zstd JSON of DECODED_CHARS each (a few hundred
    bytes stored), `note` 100 KB of random base64 text (what Parquet's codec cannot squeeze)."""
    ks = cassandra.create_keyspace("mcp_export_caps")
    session = cassandra.session()
    session.execute(f"CREATE TABLE {ks}.bombs (id int PRIMARY KEY, data blob, note text)")
    insert = session.prepare(f"INSERT INTO {ks}.bombs (id, data, note) VALUES (?, ?, ?)")
    rng = random.Random(83)
    compressor = zstandard.ZstdCompressor(level=19)
    for key in range(ROWS):
        document = json.dumps({"id": key, "fill": chr(ord("a") + key % 26) * DECODED_CHARS}).encode()
        note = base64.b64encode(rng.randbytes(75_000)).decode()
        session.execute(insert, (key, compressor.compress(document), note))
    session.shutdown()
    yield f"{ks}.bombs"


def _read(server: Any, uri: str) -> Any:
    """resources/read of `uri` through the client (stdio or HTTP), its one content."""
    contents = server.portal.call(server.client.read_resource, uri).contents
    assert len(contents) == 1
    return contents[0]


def _refused(server: Any, uri: str) -> str:
    """The one-line INVALID_PARAMS error resources/read of `uri` answers."""
    with pytest.raises(MCPError) as raised:
        _read(server, uri)
    error = raised.value.error
    assert error.code == types.INVALID_PARAMS and "\n" not in error.message, error
    return error.message


def _wchar(pid: int) -> int:
    """The bytes process `pid` has handed to write() and the like so far (/proc/PID/io)."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise AssertionError(f"no wchar for {pid}")


@pytest.mark.parametrize("mode", [0o777, 0o755])
def test_an_export_directory_open_to_others_is_refused_at_start(
        demo: Demo, assistant_home: Path, tmp_path: Path, mode: int) -> None:
    exports = tmp_path / "exports"
    exports.mkdir()
    exports.chmod(mode)
    planted = exports / "planted"
    planted.write_text("left by someone else\n")
    run = run_binary(CQLSH_EXT, ["mcp", *demo.conn, "--export-dir", str(exports)], assistant_home)
    shown = stat.filemode(stat.S_IFDIR | mode)[1:]
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        f"cqlsh-ext mcp: --export-dir: the export directory {exports} is open to others ({shown}): refused, "
        "its files hold the rows of tables: chmod 700 it, or name another"]
    assert stat.S_IMODE(exports.stat().st_mode) == mode and os.listdir(exports) == ["planted"]  # as it was


def test_another_users_export_directory_is_refused_at_start(
        demo: Demo, assistant_home: Path, tmp_path: Path) -> None:
    exports = tmp_path / "exports"
    exports.mkdir(mode=0o700)
    os.chown(exports, 4242, -1)  # another user's (the tests run as root here, or chown is refused)
    run = run_binary(CQLSH_EXT, ["mcp", *demo.conn, "--export-dir", str(exports)], assistant_home)
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        f"cqlsh-ext mcp: --export-dir: the export directory {exports} belongs to another user (uid 4242): "
        "refused, its files hold the rows of tables"]


def test_files_are_0600_and_a_planted_link_or_second_name_is_never_served(
        demo: Demo, assistant_home: Path, tmp_path: Path) -> None:
    exports = tmp_path / "made" / "exports"  # made by the server, with its parent
    statement = f"SELECT name FROM {demo.keyspace}.blob_formats"
    umask = os.umask(0o022)  # the servers and the shell started here take it
    try:
        with McpServer([*demo.conn, "--export-dir", str(exports)], assistant_home,
                       env={"EXPORT_MARKER": MARKER}) as server:
            assert stat.S_IMODE(exports.stat().st_mode) == 0o700
            made = server.call("export", statement=statement, format="jsonl").data
            uri, name = made["uri"], made["uri"].rsplit("/", 1)[1]
            file = exports / name
            assert os.listdir(exports) == [name]
            assert stat.S_IMODE(file.stat().st_mode) == 0o600
            closing = f"COPY (SELECT ...): {made['rows']:,} rows written to {name} (JSON Lines)"
            assert made["notes"][-1].startswith(closing)
            whole = _read(server, uri).text
            assert whole.encode() == file.read_bytes()
            # A second name for the file (a hard link elsewhere): no longer the file the server wrote.
            second = tmp_path / "second-name"
            os.link(file, second)
            not_ours = (f"the export {name} is no longer the file this server wrote (a link, or a file of "
                        "another name or user): refused")
            assert _refused(server, uri) == not_ours
            second.unlink()
            assert _read(server, uri).text == whole
            # Another user's file under its name.
            os.chown(file, 4242, -1)
            assert _refused(server, uri) == not_ours
            # A link to the server's environment under its name, and under a name the server never gave.
            file.unlink()
            file.symlink_to("/proc/self/environ")
            assert _refused(server, uri) == not_ours
            assert _refused(server, f"{uri}?offset=0") == not_ours
            other = "export-" + "0" * 32 + ".jsonl"
            (exports / other).symlink_to("/proc/self/environ")
            assert _refused(server, f"cqlsh-ext://exports/{other}") == (
                f"no export '{other}' of this client (an export is read by the MCP session or OAuth identity "
                "that made it, while the server that wrote it runs)")
            # The server serves on: a new export, read back.
            again = server.call("export", statement=statement, format="jsonl").data
            assert _read(server, again["uri"]).text == whole
            wire = server.wire.read_bytes()
        assert MARKER.encode() not in wire
        assert str(tmp_path).encode() not in wire  # no answer names the server's directory
        # The shell's COPY TO keeps the umask's mode, as cqlsh's does.
        copied = tmp_path / "copied.jsonl"
        shell = run_binary(CQLSH_EXT, [*demo.conn, "-e", f"COPY ({statement}) TO '{copied}'"], assistant_home)
        assert shell.returncode == 0, shell.stderr
        assert stat.S_IMODE(copied.stat().st_mode) == 0o644
        assert copied.read_text() == whole
    finally:
        os.umask(umask)


@pytest.mark.parametrize(("fmt", "column"), [("jsonl", "data"), ("parquet", "note")])
def test_the_byte_cap_stops_an_export_while_it_is_written(demo: Demo, assistant_home: Path, tmp_path: Path,
                                                           bombs: str, fmt: str, column: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    exports = tmp_path / "exports"
    args = [*demo.conn, "--export-dir", str(exports), "--export-max-bytes", "1MiB", "--time-limit", "600"]
    with McpServer(args, assistant_home) as server:
        pid = server_pid()
        before = _wchar(pid)
        refused = server.call("export", timeout=900, statement=f"SELECT id, {column} FROM {bombs}",
                              format=fmt).error
        written = _wchar(pid) - before
        assert refused == ("COPY (SELECT ...): the file would pass 1,048,576 bytes, the most an export may "
                           "write (mcp_export_max_bytes): stopped, nothing written; select fewer rows or "
                           "columns")
        assert os.listdir(exports) == []  # no part left, no file
        # What the server wrote meanwhile: the file up to the cap, its answer, its log (before: 124.8 MB
        # of JSON Lines from 5,270 bytes stored, and 2.4 MB of Parquet, written, then removed).
        with capsys.disabled():
            print(f"\n[export cap] {fmt}: {written:,} bytes written by the server, the cap 1 MiB")
        assert written < CAP + (256 << 10), f"{written:,} bytes written"
        # The server serves on: an export under the cap, read back whole.
        small = server.call("export", statement=f"SELECT id FROM {bombs}", format=fmt).data
        assert small["rows"] == ROWS and 0 < small["size"] < CAP
        content = _read(server, small["uri"])
        assert content.meta["size"] == small["size"] and content.meta["truncated"] is False
        assert "Traceback" not in server.logged()


@pytest.mark.parametrize("revision", REVISIONS)
def test_an_export_is_read_only_by_the_identity_that_made_it(
        demo: Demo, assistant_home: Path, tmp_path: Path, revision: str) -> None:
    issuer = Issuer(audience=AUDIENCE)
    jwks = issuer.write_jwks(assistant_home / "jwks.json")
    exports = tmp_path / "exports"
    args = [*demo.conn, "--oauth-issuer", ISSUER, "--oauth-jwks", str(jwks), "--oauth-audience", AUDIENCE,
            "--export-dir", str(exports)]
    statement = f"SELECT name, data FROM {demo.keyspace}.blob_formats"
    mine = {"Authorization": f"Bearer {issuer.token()}"}
    theirs = {"Authorization": f"Bearer {issuer.token(sub='intruder-9')}"}
    with HttpMcpServer(args, assistant_home) as server:
        with server.client(mine, revision=revision) as one, server.client(theirs, revision=revision) as other:
            made = one.call("export", statement=statement, format="jsonl").data
            uri, name = made["uri"], made["uri"].rsplit("/", 1)[1]
            assert str(exports) not in json.dumps(made)
            first = _read(one, uri)
            assert first.meta["offset"] == 0 and first.text
            expected = (f"no export '{name}' of this client (an export is read by the MCP session or OAuth "
                        "identity that made it, while the server that wrote it runs)")
            assert _refused(other, uri) == expected
            assert _refused(other, f"{uri}?offset=10") == expected
            assert _read(one, uri).text == first.text  # its maker reads on
            if revision == REVISIONS[-1]:  # no session: the token's identity, whichever client holds it
                again = {"Authorization": f"Bearer {issuer.token()}"}
                with server.client(again, revision=revision) as same:
                    assert _read(same, uri).text == first.text
    assert "Traceback" not in server.log.read_text()


def test_an_offset_is_ascii_digits_and_anything_else_one_line(
        demo: Demo, assistant_home: Path, tmp_path: Path) -> None:
    exports = tmp_path / "exports"
    args = [*demo.conn, "--export-dir", str(exports), "--max-bytes", "4096"]
    with McpServer(args, assistant_home) as server:
        made = server.call("export", statement=f"SELECT name, data FROM {demo.keyspace}.blob_formats",
                           format="jsonl").data
        uri = made["uri"]
        for offset in ("²", "%C2%B2", "٣", "１", "-1", "1e3", "0x10", "", "9" * 40):
            said = _refused(server, f"{uri}?offset={offset}")
            assert said.endswith("offset must be a whole number of bytes (the digits 0-9, at most 19)"), said
        past, name = made["size"] + 1, uri.rsplit("/", 1)[1]
        assert _refused(server, f"{uri}?offset={past}") == (
            f"offset {past:,} is past the end of {name} ({made['size']:,} bytes)")
        assert _read(server, f"{uri}?offset=0").meta["offset"] == 0
        assert "Traceback" not in server.logged()


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_directory_moved_and_replaced_by_a_link_is_never_written_through(
        demo: Demo, assistant_home: Path, tmp_path: Path, transport: str) -> None:
    """`mv exp exp.moved; ln -s elsewhere exp` while the server runs: its next export is written into
    the directory it holds (exp.moved), answered and read back from there; `elsewhere` gets nothing."""
    exports, moved, elsewhere = tmp_path / "exp", tmp_path / "exp.moved", tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    statement = f"SELECT name FROM {demo.keyspace}.blob_formats"
    args = [*demo.conn, "--export-dir", str(exports)]
    with (McpServer(args, assistant_home) if transport == "stdio" else HttpMcpServer(args, assistant_home)) \
            as server, (nullcontext(server) if transport == "stdio" else server.client()) as client:
        first = client.call("export", statement=statement, format="jsonl").data
        whole = _read(client, first["uri"]).text
        exports.rename(moved)
        exports.symlink_to(elsewhere, target_is_directory=True)
        again = client.call("export", statement=statement, format="jsonl").data
        name = again["uri"].rsplit("/", 1)[1]
        assert os.listdir(elsewhere) == []
        assert sorted(os.listdir(moved)) == sorted([first["uri"].rsplit("/", 1)[1], name])
        assert (moved / name).read_text() == whole == _read(client, again["uri"]).text
        assert stat.S_IMODE((moved / name).stat().st_mode) == 0o600
