"""Sizes are checked before native code allocates: every crafted value of hostile_values.py goes
through every path that decodes (the display's registry and cell, INSPECT, offline `inspect`,
COMPRESSION STATS' quick(), ADVISE's sample) in a child process whose address space is limited
to 1 GiB. A value whose header declares gigabytes must come back as a one-line reason, a bomb as
its first `cap` bytes, and the child must live: a native library that allocated what a header
declares would abort it (Rust's cramjam aborts on a failed allocation, it cannot raise)."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import hostile_values  # noqa: E402

LIMIT = 1 << 30
CAP = 1 << 20
PATHS = ("display", "cell", "inspect", "offline", "stats", "advise")

#: Values whose header declares more than the value can hold: never decoded, a reason instead.
DECLARING = (
    "snappy framed: chunk declaring 4 GiB",
    "snappy raw: varint 2^32-1",
    "snappy xerial: block declaring 4 GiB",
    "snappy hadoop: raw length 2^32-1",
    "lz4 frame: content size 2^40",
    "lz4 block LE: prefix 2^32-1",
    "lz4 LZ4Block: block declaring 32 MiB from 10 bytes",
    "lz4 hadoop: raw length 2^32-1",
    "zstd: frame claiming 1 TiB",
    "zstd: window descriptor 2^41",
    "xz: dictionary 1.5 GiB",
    ".lzma: declaring 2^40 with a 1 GiB dictionary",
)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    values = hostile_values.values()
    path = tmp_path_factory.mktemp("hostile") / "values.pickle"
    path.write_bytes(pickle.dumps(values))
    proc = subprocess.run(
        [sys.executable, str(HERE / "hostile_child.py"), str(path), str(LIMIT), str(CAP)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    docs = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    started = [d["start"] for d in docs if "start" in d]
    done = {d["name"]: d for d in docs if "name" in d}
    crashed = [name for name in started if name not in done]
    assert proc.returncode == 0 and not crashed, (
        f"the child died (exit {proc.returncode}) on {crashed}: {proc.stderr[-2000:]}"
    )
    assert len(done) == len(values)
    return done


@pytest.mark.parametrize("name", hostile_values.names())
def test_every_path_answers_in_one_line(results: dict[str, dict[str, object]], name: str) -> None:
    doc = results[name]
    for path in PATHS:
        said = str(doc[path])
        assert not said.startswith("RAISED"), (path, said)
        assert "\n" not in said and "Traceback" not in said, (path, said)
        assert "could not be inspected" not in said, (path, said)  # the last resort was not needed


@pytest.mark.parametrize("name", DECLARING)
def test_a_header_declaring_more_than_the_value_holds_is_a_reason(
    results: dict[str, dict[str, object]], name: str
) -> None:
    doc = results[name]
    assert str(doc["display"]).startswith("reason: "), doc
    assert str(doc["cell"]).startswith("reason: "), doc
    assert str(doc["inspect"]).startswith("failed: "), doc
    assert str(doc["offline"]).startswith("rc 1: failed: "), doc  # 1: a value not decoded
    assert str(doc["stats"]).startswith("failed "), doc
    assert "'undecodable: a format that failed': 1" in str(doc["advise"]), doc
    assert "out of memory" not in str(doc["display"])  # refused from the header, not by the limit


def test_bombs_stop_at_the_cap(results: dict[str, dict[str, object]]) -> None:
    bombs = [name for name in results if "bomb" in name or "GiB in" in name or "MiB of zeros" in name]
    assert len(bombs) >= 12
    for name in bombs:
        doc = results[name]
        assert doc["display"] == f"decoded {CAP} bytes (cut)", doc
        assert "(cut at the output cap)" in str(doc["inspect"]), doc
        assert "'cut at the output cap': 1" in str(doc["advise"]), doc


def test_the_issue_reproducer_in_inspect_names_the_chunk(results: dict[str, dict[str, object]]) -> None:
    doc = results["snappy framed: chunk declaring 4 GiB"]
    assert doc["inspect"] == (
        "failed: stored 25 B (snappy/framed: chunk 1 declares 4294967295 bytes, "
        "more than a chunk can hold)"
    )
