"""Files through the door: under `--read-only --export-dir DIR`, `COPY (SELECT ...) TO 'file'` writes a
new file directly inside DIR (readable by its owner only) and is refused anywhere else: outside
through `..`, through a link, at an absolute path elsewhere, over a file that is there; COPY FROM,
stock COPY TO and a table the policy refuses stay refused. Run as an assistant runs it, on the demo."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from shell_runner import CQLSH_EXT, run

SELECT = "SELECT data.orderId, data.status FROM {keyspace}.table_with_compressed_json"


def _copy(home: Path, directory: Path, keyspace: str, target: str,
          statement: str | None = None) -> tuple[int, list[dict[str, object]], list[dict[str, object]]]:
    text = statement or f"COPY ({SELECT.format(keyspace=keyspace)}) TO '{target}'"
    result = run(CQLSH_EXT, ["--read-only", "--export-dir", str(directory), "--output-format", "json",
                             "-e", text], home)
    out = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    said = [json.loads(line) for line in result.stderr.splitlines() if line.strip()]
    return result.returncode, out, said


def _refused(said: list[dict[str, object]]) -> str:
    [error] = [s for s in said if s["type"] == "error"]
    assert error["kind"] == "refused", error
    return str(error["message"])


def test_copy_to_writes_a_new_owner_only_file_inside_the_export_directory(demo_keyspace: str,
                                                                        connected_home: Path) -> None:
    exports = connected_home / "exports"  # made by the run, 0700
    target = exports / "orders.csv"
    code, out, said = _copy(connected_home, exports, demo_keyspace, str(target))
    assert code == 0, said
    assert stat.S_IMODE(exports.stat().st_mode) == 0o700
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    [answer] = out
    assert answer["copy"] == str(target) and answer["rows"] == 200 and answer["format"] == "csv"
    lines = target.read_text().splitlines()
    assert lines[0] == "data.orderId,data.status" and len(lines) == 201
    assert [p.name for p in exports.iterdir()] == ["orders.csv"]  # no temporary file left


def test_copy_to_anywhere_else_is_refused_and_writes_nothing(demo_keyspace: str, connected_home: Path,
                                                            tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    exports = connected_home / "exports"
    exports.mkdir(mode=0o700)
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (exports / "there.csv").write_text("kept\n")
    os.symlink(elsewhere / "linked.csv", exports / "link.csv")
    os.symlink(elsewhere, exports / "subdir")
    for target, said in ((f"{exports}/../up.csv", "not a file directly inside"),
                         (str(elsewhere / "abs.csv"), "not a file directly inside"),
                         (f"{exports}/subdir/through.csv", "not a file directly inside"),
                         (f"{exports}/link.csv", "exists"),
                         (f"{exports}/there.csv", "exists")):
        code, out, errors = _copy(connected_home, exports, demo_keyspace, target)
        assert code == 3 and not out, (target, errors)
        assert said in _refused(errors), (target, errors)
    assert (exports / "there.csv").read_text() == "kept\n"
    assert sorted(p.name for p in elsewhere.iterdir()) == []
    assert sorted(p.name for p in connected_home.iterdir() if p.name == "up.csv") == []
    select = SELECT.format(keyspace=demo_keyspace)
    for statement in (f"COPY ({select}) TO '{exports}/new.csv' WITH OVERWRITE = true",
                      f"COPY {demo_keyspace}.blob_formats TO '{exports}/stock.csv'",
                      f"COPY {demo_keyspace}.blob_formats FROM '{exports}/there.csv'",
                      f"COPY (SELECT * FROM system_auth.roles) TO '{exports}/roles.csv'"):
        code, out, errors = _copy(connected_home, exports, demo_keyspace, "", statement)
        assert code == 3 and not out, (statement, errors)
        _refused(errors)
    assert sorted(p.name for p in exports.iterdir()) == ["link.csv", "subdir", "there.csv"]


def test_the_export_directory_is_refused_when_others_may_enter_it_or_without_read_only(
        connected_home: Path) -> None:
    exports = connected_home / "open"
    exports.mkdir(mode=0o755)
    exports.chmod(0o755)
    result = run(CQLSH_EXT, ["--read-only", "--export-dir", str(exports), "-e", "SELECT 1"], connected_home)
    assert result.returncode == 2 and "open to others" in result.stderr, result.stderr
    result = run(CQLSH_EXT, ["--export-dir", str(exports), "-e", "SELECT 1"], connected_home)
    assert result.returncode == 2 and "goes with --read-only" in result.stderr, result.stderr
