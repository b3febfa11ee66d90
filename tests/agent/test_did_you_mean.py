"""Did-you-mean on every road: a misspelt table, keyspace, column or keyword (FORM) gets the same
suggestion in a JSON error's `hint` as in the shell's prose line (output.meant), whether the server,
DESCRIBE or the payload parser says it is not there, in a plain SELECT or a payload query's."""

from __future__ import annotations

import json
from pathlib import Path

from shell_runner import CQLSH_EXT, run


def _error(home: Path, statement: str, *flags: str) -> dict[str, object]:
    result = run(CQLSH_EXT, ["--read-only", "--output-format", "json", *flags, "-e", statement], home)
    assert result.returncode == 2, result
    [error] = [json.loads(line) for line in result.stderr.splitlines() if '"type": "error"' in line]
    return error


def test_a_misspelt_table_or_keyspace_is_told_the_one_meant_as_json_and_as_prose(
        demo_keyspace: str, connected_home: Path) -> None:
    ks = demo_keyspace
    for statement, meant in ((f"SELECT name FROM {ks}.blob_formts", "blob_formats"),
                             (f"DESCRIBE TABLE {ks}.blob_formts", "blob_formats"),
                             (f"DESCRIBE KEYSPACE {ks}x", ks),
                             (f"SELECT name FROM {ks}x.blob_formats", ks),
                             (f"SELECT name FORM {ks}.blob_formats", "FROM"),
                             (f"SELECT name, data.format FORM {ks}.blob_formats", "FROM"),
                             (f"SELECT nme FROM {ks}.blob_formats", "name"),
                             (f"SELECT nme, data.format FROM {ks}.blob_formats", "name")):
        error = _error(connected_home, statement)
        assert error["hint"] == f"did you mean {meant}?", (statement, error)
        prose = run(CQLSH_EXT, ["--read-only", "-e", statement], connected_home)
        assert f"(did you mean {meant}?)" in prose.stderr, (statement, prose.stderr)
