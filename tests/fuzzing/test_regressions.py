"""Hostile values that broke the shell (issue 20's reproducers and what the fuzz targets found),
each checked the way a user meets it: shown in a table and under EXPAND, written as JSON and CSV,
reported by INSPECT.

What a user must see: every path returns (no traceback instead of the result), the output is at
most `render_bound()` characters (twice the output cap and a little: the hex of a whole capped
value), and the value is either shown cut with a marker that says "cut" or shown as its hex with a
one-line reason. Each value is shown in a child process with an address-space limit and a hang
guard (tests/fuzzing/show.py), so a value that exhausts memory or hangs fails its test, not pytest.

Inputs are written by their real producer where one exists (pickle, cbor2, gzip, lz4, cramjam);
the Smile document is built token by token from the specification (no Python producer exists;
Jackson writes the same tokens for an array of one repeated short string with shared values on),
and a list as a dict key is pickle opcodes (no Python object can be pickled as one).
"""

from __future__ import annotations

import gzip
import json
import pickle
import random
import re
import struct
import subprocess
import sys
from pathlib import Path

import cbor2
import cramjam
import lz4.frame
import pytest

from fuzzing.targets import render_bound

pytestmark = pytest.mark.fuzz

SHOW = Path(__file__).resolve().parent / "show.py"
#: Seconds a value may take on all paths before it counts as a hang (generous: a fixed build
#: takes well under one).
HANG_S = 90
BOUND = render_bound()
TEXT = b"The quick brown fox jumps over the lazy dog. " * 3


def shown(tmp_path: Path, data: bytes, paths: tuple[str, ...] = ("table", "expand", "json", "csv", "inspect"),
          *, many: bool = False) -> dict[str, dict[str, object]]:
    """{path: show.py's result}; a path the child died or hung on gets its error."""
    value = tmp_path / "value.bin"
    value.write_bytes(data)
    cmd = [sys.executable, str(SHOW), str(value), *paths]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    hung = False
    try:
        out, err = proc.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        hung = True
    results: dict[str, dict[str, object]] = {}
    started = None
    for line in out.splitlines():
        doc = json.loads(line)
        if "start" in doc:
            started = doc["start"]
        else:
            results[str(doc["path"])] = doc
            started = None
    if started is not None:
        why = (f"hang: over {HANG_S} s" if hung
               else f"the process died ({proc.returncode}): {(err.strip().splitlines() or [''])[-1][:200]}")
        results[started] = {"path": started, "error": why}
    for path in paths:
        results.setdefault(path, {"path": path, "error": "not run: the process ended on an earlier path"})
    return results


def assert_user_sees(results: dict[str, dict[str, object]], *, markers: tuple[str, ...] = ("cut",),
                     text_ok: bool = False, marker_needed: bool = True) -> None:
    """Every path returned, within the bound, and shows the value cut (a marker) or as hex with a
    reason. `text_ok`: the stored text shown as text is also right (a JSON text that cannot be
    indented). `marker_needed=False`: the value may also decode (checksum and INSPECT cases)."""
    problems = []
    for path, r in results.items():
        if r.get("error"):
            problems.append(f"{path}: {r['error']}")
            continue
        chars = int(str(r["chars"]))
        if chars > BOUND:
            problems.append(f"{path}: {chars:,} characters rendered, bound {BOUND:,}")
        text = str(r["text"])
        if path == "json" and str(r["json"]).startswith("not JSON"):
            problems.append(f"json: {r['json']}")
        if path == "inspect" or not marker_needed:
            continue
        # A decoded layer whose record the budget stopped keeps the layer's label and says why:
        # `[gzip] 0x3a29... (N bytes) (smile: over 100,000 nodes)`.
        over_budget = re.search(r"\((?:[\w/]+: )?over [\d,]+ (?:nodes|MiB|KiB|opcodes|characters)", text)
        marked = any(m in text for m in markers) or bool(r["hex_reason"]) or bool(over_budget)
        if path == "json":
            marked = marked or r["json"] in ("hex", "note")
        if path == "csv":
            marked = marked or text.startswith("0x")
        if not (marked or text_ok):
            problems.append(f"{path}: neither cut with a marker ({'/'.join(markers)}) nor hex with a reason: "
                            f"{text[:160]!r}")
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------------------- pickle


def test_self_referencing_pickled_list(tmp_path: Path) -> None:
    # `l = []; l.append(l); pickle.dumps(l, 4)` without the frame: PROTO 4, EMPTY_LIST, MEMOIZE,
    # BINGET 0, APPEND, STOP. Rendering it raised RecursionError.
    value = bytes.fromhex("80045d946800612e")
    loaded = pickle.loads(value)
    assert loaded[0] is loaded
    assert_user_sees(shown(tmp_path, value), markers=("cut", "cycle"))


def test_pickle_nested_2000_deep(tmp_path: Path) -> None:
    nested: list[object] = []
    for _ in range(2000):
        nested = [nested]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        value = pickle.dumps(nested, protocol=4)
    finally:
        sys.setrecursionlimit(limit)
    assert_user_sees(shown(tmp_path, value))


def test_pickle_list_referenced_2000_times(tmp_path: Path) -> None:
    # One list of 1,600 numbers, then 2,000 memo references to it: about 10 KB that rendered 16 MB.
    shared = list(range(1000, 2600))
    value = pickle.dumps([shared] * 2000, protocol=4)
    assert len(value) < 12_000
    assert_user_sees(shown(tmp_path, value))


class Pair:
    """Pickled as a call of its class with two arguments (REDUCE); the pickle memo shares them."""

    def __init__(self, left: object, right: object) -> None:
        self.left, self.right = left, right

    def __reduce__(self) -> tuple[object, tuple[object, object]]:
        return (Pair, (self.left, self.right))


def test_pickle_reduce_argument_nested_by_reference(tmp_path: Path) -> None:
    # Each level's REDUCE takes the previous level twice (two memo references): a few hundred
    # bytes whose text doubles per level, 2^40 times the leaf.
    node: object = "leaf"
    for _ in range(40):
        node = Pair(node, node)
    value = pickle.dumps(node, protocol=4)
    assert len(value) < 2000
    assert_user_sees(shown(tmp_path, value))


def test_pickle_list_as_dict_key_nested_by_reference(tmp_path: Path) -> None:
    # No Python object pickles as this (a list cannot be a dict key), so it is written as opcodes:
    # PROTO 4, EMPTY_LIST, MEMOIZE; then per level EMPTY_DICT, MEMOIZE, {previous: previous}
    # (BINGET twice, SETITEM), POP; the last level stays on the stack for STOP.
    depth = 40
    ops = bytearray(b"\x80\x04]\x94")
    for level in range(1, depth + 1):
        ops += b"}\x94h" + bytes([level - 1]) + b"h" + bytes([level - 1]) + b"s"
        if level < depth:
            ops += b"0"
    ops += b"."
    assert_user_sees(shown(tmp_path, bytes(ops)))


# ---------------------------------------------------------------------------------- JSON text


def test_json_text_of_100000_brackets(tmp_path: Path) -> None:
    # Stored as text: the table shows it as it is; EXPAND (indented) and JSON output (embedded as
    # JSON) parsed it and raised RecursionError out of unwrap.json_container.
    value = b"[" * 100_000 + b"]" * 100_000
    assert_user_sees(shown(tmp_path, value), text_ok=True)


# ----------------------------------------------------------------------------------------- CBOR


def test_cbor_string_references_amplify(tmp_path: Path) -> None:
    # cbor2's string referencing: a 100-character string once, then 200,000 three-byte references
    # to it (tag 25), self-described, gzip around it: a few KB stored, 20 MB of text rendered.
    body = cbor2.dumps(["A" * 100] * 200_000, string_referencing=True)
    value = gzip.compress(b"\xd9\xd9\xf7" + body, mtime=0)
    assert len(value) < 4096
    assert_user_sees(shown(tmp_path, value))


def test_cbor_shared_values_nested_by_reference(tmp_path: Path) -> None:
    # cbor2's value sharing (tags 28/29): each level holds the previous one twice, 40 levels.
    node: object = ["leaf"]
    for _ in range(40):
        node = [node, node]
    value = b"\xd9\xd9\xf7" + cbor2.dumps(node, value_sharing=True)
    assert_user_sees(shown(tmp_path, value), marker_needed=False)


# ---------------------------------------------------------------------------------------- Smile


def test_smile_shared_strings_under_gzip(tmp_path: Path) -> None:
    # Header with shared names and shared string values on (`:)\n` 0x03), an array (0xF8), one
    # 64-byte ASCII string (0x7F: short ASCII of 33-64 bytes), then 990,000 one-byte references to
    # it (0x01: shared value 0), end of array (0xF9): about 1 KB with gzip around it, tens of MB shown.
    doc = b":)\n\x03\xf8\x7f" + b"A" * 64 + b"\x01" * 990_000 + b"\xf9"
    value = gzip.compress(doc, 9, mtime=0)
    assert len(value) < 2048
    assert_user_sees(shown(tmp_path, value))


# ------------------------------------------------------------------------------- codecs, INSPECT


def test_framed_snappy_declaring_a_huge_length(tmp_path: Path) -> None:
    # 25 bytes: a snappy framing stream whose compressed chunk declares a 4 GiB output; the native
    # library allocated it in INSPECT (under a memory limit the process aborted).
    value = bytes.fromhex("ff060000734e61507059000b000000000000ffffffff0f0061")
    assert len(value) == 25
    assert_user_sees(shown(tmp_path, value))


def test_lz4_frame_with_a_corrupt_block_in_inspect(tmp_path: Path) -> None:
    # lz4.frame with block and content checksums, one byte changed in the first block (found by
    # mutating it): INSPECT's checksum verification let LZ4BlockError out.
    frame = lz4.frame.compress(TEXT * 4, block_checksum=True, content_checksum=True)
    value = bytes.fromhex(
        "04224d187c401c0200000000000068390000008c1e54686520717569636b2062726f776e20666f78206a756d7073"
        "206f76657220746865206c617a7920646f672e202d00ffd850646f672e2090b699d800000000e8177ef8")
    assert len(value) == len(frame) and value[:6] == frame[:6]
    assert_user_sees(shown(tmp_path, value, ("inspect", "table", "json")), marker_needed=False)


def test_lz4_frames_mutated_3000_times_in_inspect(tmp_path: Path) -> None:
    # The sweep the issue describes: one byte of a checksummed frame set at random, 3,000 times
    # (seeded); every one must give INSPECT's report.
    frame = lz4.frame.compress(TEXT * 4, block_checksum=True, content_checksum=True)
    rng = random.Random(20)
    values = []
    for _ in range(3000):
        mutated = bytearray(frame)
        mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        values.append(bytes(mutated))
    value = b"".join(struct.pack(">I", len(v)) + v for v in values)
    results = shown(tmp_path, value, ("inspect-each",))
    assert not results["inspect-each"].get("error"), results["inspect-each"]


def test_lz4_block_stream_with_a_corrupt_block_in_inspect(tmp_path: Path) -> None:
    # lz4-java's LZ4BlockOutputStream layout with a corrupt compressed block (found by the inspect
    # target): LZ4BlockError out of INSPECT's checksum verification.
    from cqlsh_ext.demo.samples import lz4_java_block

    stream = bytearray(lz4_java_block(TEXT))
    stream[21] ^= 0xFF  # first byte of the compressed block: its token
    assert_user_sees(shown(tmp_path, bytes(stream), ("inspect", "table")), marker_needed=False)


def test_framed_snappy_with_a_corrupt_chunk_in_inspect(tmp_path: Path) -> None:
    # cramjam's framing format with one byte of the compressed chunk changed: the decode fails
    # (a reason), and INSPECT's CRC verification let cramjam.DecompressionError out.
    framed = bytearray(cramjam.snappy.compress(TEXT))
    framed[18] ^= 0xFF
    assert_user_sees(shown(tmp_path, bytes(framed)), marker_needed=False)
