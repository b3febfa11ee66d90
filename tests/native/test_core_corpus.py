"""The core crate's own corpus (native/core/tests: registry.json, corpus.json, read by its `cargo
test`) is what the Python side gives now: the registry's data and the Python engine's answer for
each value (tests/native/core_corpus.py writes both; a change on the Python side that the files
do not follow fails here, naming the command that writes them again)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import core_corpus  # noqa: E402

#: The C libraries' releases are the machine's (the core's test takes the ones it links).
_MACHINE = ("zlib_version", "lz4_version", "zstd_version")


def test_the_core_corpus_is_what_the_python_side_gives() -> None:
    for path, text in core_corpus.rendered().items():
        assert path.exists(), f"{path}: run tests/native/core_corpus.py --write"
        stored = path.read_text(encoding="utf-8")
        if path == core_corpus.REGISTRY:
            now, then = json.loads(text), json.loads(stored)
            for key in _MACHINE:
                now.pop(key), then.pop(key)
            assert now == then, f"{path.name} is stale: run tests/native/core_corpus.py --write"
        else:
            assert stored == text, f"{path.name} is stale: run tests/native/core_corpus.py --write"


def test_the_corpus_holds_every_kind_of_answer() -> None:
    entries = json.loads(core_corpus.CORPUS.read_text(encoding="utf-8"))
    kinds = {entry["kind"] for entry in entries}
    assert kinds >= {0, 1, 2, 3, 4}  # text, record, binary, no known format, failed
    assert any(entry["hand_back"] for entry in entries)
    assert any(entry["cut"] for entry in entries)
