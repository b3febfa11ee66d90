"""The core crate's own corpus (native/core/tests/): what its `cargo test` reads, written from the
Python side, the reference. Two files:

- registry.json: the Python registry's data (payload/native.py `_config`, less the formats from
  outside), as the core's configure takes it (bytes as hex, the printable table as the runs of
  printable characters);
- corpus.json: values and what the Python engine answers for each alone (payload.unwrap in auto
  mode, through tests/fuzzing/native_diff.expected): kind code, label, stored and decoded sizes,
  cut, the text (its length and blake2b-8 digest when long), and whether the core must hand it
  back (a reason the page API does not carry). The values: the fuzzing seeds by file name
  (tests/fuzzing/corpus), the order table's, nested chains' and their edges' (cut, changed,
  extended) by their hex (a gzip member's time zeroed: the files do not change with the clock).

    .venv/bin/python tests/native/core_corpus.py            prints whether the files are current
    .venv/bin/python tests/native/core_corpus.py --write    writes them

tests/native/test_core_corpus.py fails when either file is not what the Python side gives now.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "native" / "core" / "tests"
REGISTRY = OUT / "registry.json"
CORPUS = OUT / "corpus.json"
#: The caps each value is read at: the default, and one that cuts most layers.
CAPS = (4 << 20, 300)
#: A text longer than this is given by its length and digest.
SHORT_TEXT = 400


def _runs(table: bytes) -> list[list[int]]:
    """The runs [start, end) of printable characters in the table."""
    runs: list[list[int]] = []
    for code, printable in enumerate(table):
        if printable:
            if runs and runs[-1][1] == code:
                runs[-1][1] = code + 1
            else:
                runs.append([code, code + 1])
    return runs


def registry() -> dict[str, Any]:
    from cqlsh_ext.payload import native
    from cqlsh_ext.payload.formats._outside import outside_names

    config: dict[str, Any] = dict(native._config())
    # the built-ins' registry: a plugin installed where the files are written is not the crate's
    config["records"] = [name for name in config["records"] if name not in outside_names()]
    config["stream_magics"] = [magic.hex() for magic in config["stream_magics"]]
    config["printable_bmp"] = _runs(config["printable_bmp"])
    stats = config["stats"]
    config["stats"] = {**stats, "header_sized": [list(entry) for entry in stats["header_sized"]]}
    return config


for _extra in (ROOT / "tests", ROOT / "tests" / "native", ROOT):
    if str(_extra) not in sys.path:
        sys.path.insert(0, str(_extra))


def _values() -> list[tuple[str, bytes]]:
    """(how the core's test finds the value: "seed:<path>" or "hex:<bytes>", the value)."""
    import corpora

    seeds = sorted(p for p in corpora.CORPUS.rglob("*") if p.is_file())
    out = [(f"seed:{p.relative_to(corpora.CORPUS).as_posix()}", p.read_bytes()) for p in seeds]
    made = [_timeless(v) for v in corpora.orders(60)] + corpora.nested()[::8]
    # cut short, a byte changed, bytes after: failed formats and their edges
    made += corpora.edges([_timeless(v) for v in corpora.orders(6, seed=9)], random.Random(3), per_value=2)
    return out + [(f"hex:{v.hex()}", v) for v in made]


def _timeless(value: bytes) -> bytes:
    """A gzip member with its modification time zeroed (the same member, whenever it was made)."""
    if value.startswith(b"\x1f\x8b\x08"):
        return value[:4] + bytes(4) + value[8:]
    return value


def corpus() -> list[dict[str, Any]]:
    from fuzzing.native_diff import expected

    entries = []
    for where, value in _values():
        for cap in CAPS:
            want = expected(value, cap)
            text = want.text
            entry: dict[str, Any] = {
                "value": where, "cap": cap, "kind": want.kind, "label": want.label, "stored": want.stored,
                "decoded": want.decoded, "cut": want.cut, "hand_back": want.needs_view is not None,
            }
            if text is not None:
                raw = text.encode("utf-8", "surrogatepass")
                entry["text_length"] = len(raw)
                entry["text_digest"] = hashlib.blake2b(raw, digest_size=8).hexdigest()
                if len(text) <= SHORT_TEXT:
                    entry["text"] = text
            entries.append(entry)
    return entries


def rendered() -> dict[Path, str]:
    return {REGISTRY: json.dumps(registry(), indent=1) + "\n",
            CORPUS: "[\n" + ",\n".join(json.dumps(entry) for entry in corpus()) + "\n]\n"}


if __name__ == "__main__":
    files = rendered()
    if sys.argv[1:] == ["--write"]:
        OUT.mkdir(parents=True, exist_ok=True)
        for path, text in files.items():
            path.write_text(text, encoding="utf-8")
    else:
        for path, text in files.items():
            current = path.exists() and path.read_text(encoding="utf-8") == text
            print(f"{path.relative_to(ROOT)}: {'current' if current else 'stale (run with --write)'}")
