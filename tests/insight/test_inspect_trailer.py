"""INSPECT tells a trailer from garbage: a gzip or zlib value cut short has no trailer to read."""

from __future__ import annotations

import gzip
import json
import os
import zlib
from pathlib import Path

from shell_runner import CQLSH_EXT, run


def _inspect(tmp_path: Path, data: bytes, *flags: str, decoded: bool = False) -> str:
    path = tmp_path / "value.bin"
    path.write_bytes(data)
    result = run(CQLSH_EXT, ["inspect", *flags, str(path)], tmp_path)
    assert result.returncode == (0 if decoded else 1), result.stderr  # 1: a value not decoded
    return result.stdout


def test_truncated_gzip_marks_its_last_bytes_and_shows_no_ratio(tmp_path: Path):
    whole = gzip.compress(os.urandom(4000), mtime=0)
    out = _inspect(tmp_path, whole[:300])
    assert "failed" in out
    fields = out[out.index("error:"):]
    assert "ISIZE" in fields and "not verified" in fields.split("ISIZE", 1)[1].splitlines()[0]
    assert "ratio" not in fields.split("checksums:")[0]
    # The same value whole: the trailer is read and checked, and the ratio is a fact.
    out = _inspect(tmp_path, whole, decoded=True)
    assert "ISIZE 4000, ratio" in out and "not verified" not in out


def test_truncated_zlib_marks_its_adler32(tmp_path: Path):
    # zlib is only detected by a decode that succeeds; named, a cut one is reported as zlib.
    out = _inspect(tmp_path, zlib.compress(os.urandom(3000))[:200], "-d", "zlib")
    assert "adler32" in out and "not verified" in out.split("adler32", 1)[1].splitlines()[0]


def test_json_report_keeps_the_mark(tmp_path: Path):
    out = _inspect(tmp_path, gzip.compress(os.urandom(4000), mtime=0)[:300], "--json")
    layer = json.loads(out.splitlines()[0])["layers"][0]
    assert "not verified" in str(layer["headers"]["ISIZE"]) and "ratio" not in layer["headers"]
