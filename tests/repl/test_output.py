"""--output-format for -e, -f and piped input, parsed the way a script parses it."""

from __future__ import annotations

import csv
import io
import json
import sys

import pytest
from shell_runner import CQLSH_EXT, ext, run

from .conftest import ORDER_DOC


def json_lines(stdout: str) -> list[dict]:
    # Every line of stdout must be a JSON document: warnings and banners belong on stderr.
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_json_lines_types_and_decoded_blobs(home, cassandra, repl_ks):
    out = ext(cassandra, home, "--output-format", "json", "-e",
              f"SELECT id, customer, placed, payload, raw, tags FROM {repl_ks}.orders WHERE id IN (1, 2)",
              login=False).checked_stdout()
    rows = json_lines(out)
    assert [r["id"] for r in rows] == [1, 2]
    first = rows[0]
    assert first["customer"] == "customer-01"
    assert first["placed"] == "2024-05-06T07:08:09.123Z"
    assert first["tags"] == ["a", "b"]
    assert first["raw"] == "0x0100ff"  # not compressed: the stored bytes, as cqlsh shows them
    assert first["payload"] == {"label": "gzip>json", "kind": "text", "confidence": "confident",
                                "payload": dict(ORDER_DOC, order=1001)}
    assert "raw" not in first["payload"]


def test_json_raw_blobs_on_request(home, cassandra, repl_ks):
    out = ext(cassandra, home, "--output-format", "json", "--raw-blobs", "-e",
              f"SELECT payload FROM {repl_ks}.orders WHERE id = 3", login=False).checked_stdout()
    (row,) = json_lines(out)
    assert row["payload"]["payload"]["order"] == 1003
    assert bytes.fromhex(row["payload"]["raw"][2:])[:2] == b"\x1f\x8b"  # the gzip stream as stored


def test_json_with_decompression_off_keeps_hex(home, cassandra, repl_ks):
    out = ext(cassandra, home, "--output-format", "json", "-d", "none", "-e",
              f"SELECT payload FROM {repl_ks}.orders WHERE id = 3", login=False).checked_stdout()
    (row,) = json_lines(out)
    assert row["payload"].startswith("0x1f8b")


def test_csv_has_a_header_and_decoded_text(home, cassandra, repl_ks):
    out = ext(cassandra, home, "--output-format", "csv", "-e",
              f"SELECT id, customer, payload, tags FROM {repl_ks}.orders WHERE id = 4",
              login=False).checked_stdout()
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["id", "customer", "payload", "tags"]
    assert rows[1][:2] == ["4", "customer-04"]
    assert json.loads(rows[1][2])["order"] == 1004
    assert json.loads(rows[1][3]) == ["a", "b"]


def test_file_and_piped_input_with_cqlshrc_format(home, cassandra, repl_ks, tmp_path):
    script = tmp_path / "two.cql"
    script.write_text(f"SELECT id FROM {repl_ks}.orders WHERE id = 1;\n"
                      f"SELECT id, customer FROM {repl_ks}.orders WHERE id = 2;\n")
    rows = json_lines(ext(cassandra, home, "--output-format", "json", "-f", str(script),
                          login=False).checked_stdout())
    assert rows == [{"id": 1}, {"id": 2, "customer": "customer-02"}]
    (home / ".cassandra" / "cqlshrc").write_text("[cqlsh_ext]\noutput_format = json\n")
    rows = json_lines(ext(cassandra, home, stdin=script.read_text(), login=False).checked_stdout())
    assert rows == [{"id": 1}, {"id": 2, "customer": "customer-02"}]


def test_output_command_in_a_script(home, cassandra, repl_ks):
    stdin = (f"OUTPUT FORMAT csv\nSELECT id FROM {repl_ks}.orders WHERE id = 1;\n"
             f"OUTPUT FORMAT json\nSELECT id FROM {repl_ks}.orders WHERE id = 2;\n")
    out = ext(cassandra, home, stdin=stdin, login=False).checked_stdout()
    assert "id\n1\n" in out and '{"id": 2}' in out


def test_vertical_is_expand_on(home, cassandra, repl_ks):
    out = ext(cassandra, home, "--output-format", "vertical", "-e",
              f"SELECT id, customer FROM {repl_ks}.orders WHERE id = 1", login=False).checked_stdout()
    assert "@ Row 1" in out and "customer | customer-01" in out


def test_unknown_format_is_a_one_line_error(home, cassandra):
    result = run(CQLSH_EXT, [cassandra.host, str(cassandra.port), "--output-format", "xml", "-e", "x"], home)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "cqlsh-ext: error: --output-format: unknown output format 'xml'; valid: table, vertical, json, csv"]


@pytest.mark.parametrize("mode", ["-e", "-f", "stdin"])
def test_scripts_never_import_prompt_toolkit(home, cassandra, tmp_path, mode):
    statement = "SELECT release_version FROM system.local;"
    args = ["-X", "importtime", "-m", "cqlsh_ext", cassandra.host, str(cassandra.port)]
    stdin = None
    if mode == "-e":
        args += ["-e", statement]
    elif mode == "-f":
        (tmp_path / "s.cql").write_text(statement + "\n")
        args += ["-f", str(tmp_path / "s.cql")]
    else:
        stdin = statement + "\n"
    result = run(sys.executable, args, home, stdin=stdin)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "release_version" in result.stdout
    assert "cqlsh_ext.output.pipeline" in result.stderr  # importtime did report
    assert "prompt_toolkit" not in result.stderr
