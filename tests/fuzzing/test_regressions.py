"""Hostile values that broke the shell (the first reproducers: huge declared sizes,
self-references, deep nesting; and what the fuzz targets found), each checked the way a user
meets it: shown in a table and under EXPAND, written as JSON and CSV, reported by INSPECT.

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


# ------------------------------------ text built from a record's parts outside the budget
# Each reader built some text or value from a record's parts outside the value's budget: an
# f-string, a repr, a hash, a decimal conversion. A back-reference (the pickle memo, a Java
# handle) puts one part in many places, so the cost was a multiple of the stored bytes.

#: 411 bytes (pickle_ops.stack_global_of_a_shared_list): PROTO 4; a list of 64 ones (memo 0); 30
#: lists each holding the one before twice (memo 1-30, each popped: `]\x94(h..h..e0`); then
#: STACK_GLOBAL with memo 30 as both module and name. The symbol's name was an f-string of the
#: list's repr, 2^30 copies of the leaf: over 30 s on every path, then the memory limit.
STACK_GLOBAL_OF_A_SHARED_LIST = bytes.fromhex(
    "80045d9428" + "4b01" * 64 + "6530"
    + "".join(f"5d942868{level:02x}68{level:02x}6530" for level in range(30))
    + "681e681e932e")


def test_pickle_stack_global_of_a_shared_list(tmp_path: Path) -> None:
    from fuzzing.pickle_ops import stack_global_of_a_shared_list

    assert STACK_GLOBAL_OF_A_SHARED_LIST == stack_global_of_a_shared_list()  # the fuzz hook's shape
    results = shown(tmp_path, STACK_GLOBAL_OF_A_SHARED_LIST)
    assert_user_sees(results)
    for path in ("table", "expand", "csv", "inspect"):
        assert "pickle: over 100,000 nodes" in str(results[path]["text"]), results[path]


def _pickle_of(consumer: bytes, kind: str = "tuple", levels: int = 30) -> bytes:
    from fuzzing.pickle_ops import PROTO_4, STOP, get, shared

    body, top = shared(kind, levels, leaf=1)
    return PROTO_4 + body + consumer.replace(b"TOP", get(top)) + STOP


@pytest.mark.parametrize("value", [
    # A tuple holding a tuple twice, 30 levels down, as a dict key: hashing it walked 2^30 tuples.
    pytest.param(_pickle_of(b"}TOPNs"), id="tuple-as-dict-key"),
    pytest.param(_pickle_of(b"(TOP\x91"), id="tuple-in-a-frozenset"),
])
def test_pickle_hashing_a_shared_structure(tmp_path: Path, value: bytes) -> None:
    assert len(value) < 500
    assert_user_sees(shown(tmp_path, value))


def test_pickle_set_of_one_shared_list_many_times(tmp_path: Path) -> None:
    # builtins.set() over one list of 100,000 numbers, 4,000 times through the memo: each call
    # built a new set of all its items (400 million insertions), none of them charged.
    from fuzzing.pickle_ops import MEMOIZE, PROTO_4, get, global_

    ops = (PROTO_4 + b"]" + MEMOIZE + b"(" + b"K\x01" * 100_000 + b"e0" + global_("builtins", "set") + MEMOIZE
           + b"0(" + (get(1) + get(0) + b"\x85R") * 4000 + b"l.")
    value = gzip.compress(ops, mtime=0)
    assert len(value) < 4096
    assert_user_sees(shown(tmp_path, value))


def test_pickle_codecs_encode_of_one_shared_string(tmp_path: Path) -> None:
    # Protocol 2 writes bytes as _codecs.encode(str, 'latin1'): one 60,000-character string, then
    # 30,000 calls of it through the memo (5 bytes each). Each call made a new copy: 1.8 GB.
    from fuzzing.pickle_ops import get, global_, text

    ops = (b"\x80\x04" + global_("_codecs", "encode") + b"\x940" + text("A" * 60_000) + b"\x940"
           + get(1) + text("latin1") + b"\x86\x940" + b"(" + (get(0) + get(2) + b"R") * 30_000 + b"l.")
    results = shown(tmp_path, gzip.compress(ops, mtime=0))
    assert_user_sees(results)
    assert "pickle: over 4 MiB of text" in str(results["table"]["text"]), results["table"]


class Node:
    """Pickled by pickle itself with BUILD, its state holding the object (a parent link)."""

    def __init__(self, parent: Node | None = None) -> None:
        self.me = self
        self.parent = parent
        self.children: list[Node] = []


def test_pickle_object_whose_state_holds_itself(tmp_path: Path) -> None:
    # The commonest object graph there is: a tree with parent links. The state's conversion
    # re-entered the object's own text without end: RecursionError in every path.
    root = Node()
    root.children.append(Node(root))
    results = shown(tmp_path, pickle.dumps(root, protocol=4))
    assert_user_sees(results, markers=("cycle",))
    assert 'cycle("back to an enclosing object")' in str(results["table"]["text"])


def _java_utf(text: str) -> bytes:
    return struct.pack(">H", len(text)) + text.encode()


def _java_class(name: str, fields: bytes = b"", count: int = 0, flags: int = 0x02) -> bytes:
    """TC_CLASSDESC: name, serialVersionUID 0, flags, fields, no annotation, no superclass."""
    return (b"\x72" + _java_utf(name) + b"\x00" * 8 + bytes([flags]) + struct.pack(">h", count) + fields
            + b"\x78\x70")


def test_java_cycles_back_to_a_class_with_a_long_name(tmp_path: Path) -> None:
    # An object of a class with a 60,000-character name whose one field is an array of 50,000
    # references to the object itself: each was marked with an f-string holding the name, 3 GB
    # (MemoryError under the limit). Written by the grammar: ObjectOutputStream writes the same
    # for `o.a = new Object[50000]; Arrays.fill(o.a, o)` with such a class.
    field = b"[" + _java_utf("a") + b"\x74" + _java_utf("[Ljava/lang/Object;")
    stream = (b"\xac\xed\x00\x05\x73" + _java_class("A" * 60_000, field, 1)
              + b"\x75" + _java_class("[Ljava.lang.Object;") + struct.pack(">i", 50_000)
              + (b"\x71" + struct.pack(">i", 0x7E0002)) * 50_000)
    value = gzip.compress(stream, mtime=0)
    assert len(value) < 4096
    results = shown(tmp_path, value)
    assert_user_sees(results)
    # Read and shown as far as the budget goes (not "not decoded: MemoryError", hex).
    table = str(results["table"]["text"])
    assert table.startswith("[gzip>java] AAAA") and table.endswith("(cut: over 4 MiB of text)"), table[:300]


def _big_number(magnitude: int) -> int:
    return int.from_bytes(b"\x7f" * magnitude, "big")


def test_java_big_decimal_of_300_kb(tmp_path: Path) -> None:
    # java.math.BigDecimal(BigInteger of 300,000 bytes, scale 2), the JDK's field layout: the
    # decimal conversion took 17 s (quadratic in the digits) and rounded to 28 digits. It is
    # shown now, whole, in hex digits (past Python's 4,300-digit limit).
    number_fields = (b"I" + _java_utf("bitCount") + b"I" + _java_utf("bitLength")
                     + b"I" + _java_utf("firstNonzeroByteNum") + b"I" + _java_utf("lowestSetBit")
                     + b"I" + _java_utf("signum") + b"[" + _java_utf("magnitude") + b"\x74" + _java_utf("[B"))
    number = (b"\x73" + _java_class("java.math.BigInteger", number_fields, 6, 0x03)[:-1]
              + b"\x72" + _java_utf("java.lang.Number") + b"\x00" * 8 + b"\x02\x00\x00\x78\x70"
              + struct.pack(">iiiii", -1, -1, -2, -2, 1)
              + b"\x75" + _java_class("[B") + struct.pack(">i", 300_000) + b"\x7f" * 300_000 + b"\x78")
    decimal_fields = (b"I" + _java_utf("scale") + b"L" + _java_utf("intVal")
                      + b"\x74" + _java_utf("Ljava/math/BigInteger;"))
    stream = (b"\xac\xed\x00\x05\x73" + _java_class("java.math.BigDecimal", decimal_fields, 2)
              + struct.pack(">i", 2) + number)
    results = shown(tmp_path, gzip.compress(stream, mtime=0), ("table", "json", "inspect"))
    assert_user_sees(results, marker_needed=False)
    assert str(results["table"]["text"]).startswith('[gzip>java] BigDecimal("0x7f7f7f'), results["table"]


def test_cbor_decimal_fraction_of_300_kb(tmp_path: Path) -> None:
    # Tag 4 [-2, a 300,000-byte bignum]: cbor2 built a decimal.Decimal (quadratic: 15 s).
    body = cbor2.dumps([cbor2.CBORTag(4, [-2, _big_number(300_000)])])
    results = shown(tmp_path, gzip.compress(b"\xd9\xd9\xf7" + body, mtime=0), ("table", "json", "inspect"))
    assert_user_sees(results, marker_needed=False)
    assert str(results["table"]["text"]).startswith('[gzip>cbor] ["0x7f7f7f'), results["table"]


def test_avro_decimal_of_300_kb(tmp_path: Path) -> None:
    # A container file whose schema declares a decimal, holding one of 300,000 bytes (written as
    # plain bytes: fastavro's writer would take as long as its reader). The reader took 24 s.
    import io

    import fastavro

    decimal = {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2}
    with_decimal = {"type": "record", "name": "R", "fields": [{"name": "d", "type": decimal}]}
    plain = {"type": "record", "name": "R", "fields": [{"name": "d", "type": "bytes"}]}
    out = io.BytesIO()
    writer = fastavro.write.Writer(out, fastavro.parse_schema(with_decimal), codec="deflate")
    writer.schema = fastavro.parse_schema(plain)  # the header says decimal, the block holds bytes
    writer.write({"d": b"\x7f" * 300_000})
    writer.flush()
    results = shown(tmp_path, out.getvalue(), ("table", "json", "inspect"))
    assert_user_sees(results, marker_needed=False)
    assert '"d":"0x7f7f7f' in str(results["table"]["text"]), results["table"]


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


# ---------------------------------------------------------------------------------------- Thrift


def _thrift_deep(depth: int) -> bytes:
    # Binary protocol: a struct field (type 12, id 1) inside each struct, then the STOP bytes.
    return b"\x0c\x00\x01" * depth + b"\x08\x00\x01\x00\x00\x00\x07" + b"\x00" * (depth + 1)


@pytest.mark.parametrize("value", [
    _thrift_deep(100_000),                                                  # nested 100,000 deep
    gzip.compress(b"\x1c" * 500_000 + b"\x00" * 500_001, mtime=0),          # compact, 500,000 deep, in gzip
    b"\x0f\x00\x01\x0b\x7f\xff\xff\xff" + b"\x00\x00\x00\x01a" * 3 + b"\x00",  # list of 2^31 strings
    b"\x0b\x00\x01\x7f\xff\xff\xff" + b"text" * 4 + b"\x00",                # a string claiming 2 GiB
    b"\x19\xfb\xff\xff\xff\xff\x0f" + b"\x00" * 12,                          # compact map count by varint
    gzip.compress(b"\x19\xf3\x90\xa1\x0f" + b"\x00" * 250_000 + b"\x00", mtime=0),  # 250,000 bytes in a list
], ids=["binary-deep", "compact-deep-gzip", "list-count", "string-length", "map-count", "wide-gzip"])
def test_thrift_that_lies_about_its_sizes_and_depths(tmp_path: Path, value: bytes) -> None:
    assert_user_sees(shown(tmp_path, value), marker_needed=False)


# ------------------------------------------------------------------------------------ dcz, dcb


def _dcz(body: bytes, digest: bytes = b"\x11" * 32) -> bytes:
    return b"\x5e\x2a\x4d\x18\x20\x00\x00\x00" + digest + body


@pytest.mark.parametrize("value", [
    _dcz(bytes.fromhex("28b52ffd") + b"\xe0" + b"\xff" * 8 + b"\x01\x00\x00"),   # a frame claiming 2^64 bytes
    _dcz(bytes.fromhex("28b52ffd2000") + b"\x00" * 40),                          # the frame cut short
    _dcz(b"", b"\x00" * 32) + b"\x28",                                          # the header and a byte
    b"\x5e\x2a\x4d\x18\xff\xff\xff\xff" + b"\x00" * 64,                           # a skippable frame of 4 GiB
    b"\xff\x44\x43\x42" + b"\x22" * 32 + b"\xff" * 64,                              # dcb, no dictionary
], ids=["dcz-claims-2^64", "dcz-cut", "dcz-header-only", "skippable-4gib", "dcb"])
def test_hashed_dictionary_values_that_lie_about_their_sizes(tmp_path: Path, value: bytes) -> None:
    results = shown(tmp_path, value)
    assert_user_sees(results, marker_needed=False)
    assert all(str(r["text"]).startswith("0x") for path, r in results.items() if path in ("table", "csv"))


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


# ------------------------------------------------------------------- found by the fuzz targets
# Each with the target that found it and the input as it found it (tools/fuzz.py, atheris).


def test_finding_pickle_memo_cycle_through_a_dict(tmp_path: Path) -> None:
    # payload-pickle: a dict holding a list that holds itself through the memo (`h\x00`), with a
    # tuple, a set and a frozenset beside it, 62 bytes: RecursionError out of pickle._plain.
    value = bytes.fromhex(
        "80049533000000000000007d94288c0161945d94948c01618c0178629468008c0174944b014b0286948c0173948f"
        "94284b03908c016694284b0c9194752e")
    assert_user_sees(shown(tmp_path, value), markers=("cut", "cycle"))


def test_finding_pickle_stack_global_of_stack_globals(tmp_path: Path) -> None:
    # payload-pickle (Hypothesis, seed datetime.date pickled): STACK_GLOBAL whose module is the
    # previous STACK_GLOBAL's result, 60 times: 481 bytes that rendered 302 MB.
    value = bytes.fromhex(
        "80049520000000000000008c086461746574696d65948c04646174659493944304077465949394"
        + "43040774659493944304077465949394" * 29
        + "430407e8010294859452942e")
    assert_user_sees(shown(tmp_path, value))


def test_finding_java_class_name_with_newlines_in_a_table_cell(tmp_path: Path) -> None:
    # display-table: a Java stream whose class name holds newlines (a JSON text where the name
    # should be) and that breaks later: named by its class, unescaped, a table cell of 10 lines.
    value = bytes.fromhex(
        "aced00057372006d70617261747b0a2020226964223a2034322c0a2020226e616d65223a2022416461222c0a2020"
        "2274616773223a205b0a202020202261222c0a202020202262220a20205d2c0a2020227072696365223a2031392e"
        "39392c0a2020226f6b223a20747275652c0a2020226e6f7465223a206e756c6c2c0a2020226974656d73223a205b"
        "0a202020207b0a20202020202022736b75223a2022782d31222c0a20202020202022717479223a20320a20202020"
        "7d2c0a6f727400164c6a610576616c7565787200106a6176612e6c616e672e4e756d62657286ac951d0b94e08b02"
        "00007870000000000020202020000001740001627371007e00047b0a20202020202022736b75223a202d22790000"
        "00002d32222c0a2020202020202271740079223a20310a202020000002207d0a20205d780a7d")
    results = shown(tmp_path, value, ("table", "json", "csv", "inspect"))
    assert_user_sees(results, marker_needed=False)
    assert "\n" not in str(results["table"]["text"]), results["table"]["text"]


@pytest.mark.parametrize("value", [
    # LZ4Block (lz4-java) with a corrupt block: LZ4BlockError in checksums._lz4_java.
    "4c5a34426c6f636b26380000008700000051e8ba0eff1e54686520717569636b2062726f776e20666f78206a756d70"
    "73206f76657220746865206c617a267920646f672e202d004250646f672e204c5a34426c6f636b1600000000000000"
    "0000000000",
    # LZ4Block declaring a huge block: MemoryError in checksums._lz4_java (under 1.5 GiB).
    "4c5a34426c6f636b263800010079ffffffae17ba0eff1e54686520717569636b20624d6f776e20666f78206a756d70"
    "73206f76657220746865206c617a7920646f672e202d004250646f672e204c5a38426c6f636b160000000000787878"
    "78787878787878787878787878787878787878787878787878787878",
    # LZ4 frames: LZ4BlockError in checksums._lz4_frame (two places).
    "04224d187c408700000000000000de38000000ff1e54686520717569636b2062726f776e6f776e20666f78206a756d"
    "7073206f76657220746865206c617a7920646f672e202d0042506420054d3852000000000cbefb05",
    "04224d180100000060707384000000f1157b226964223a2034322c20226e616d65223a2022416461222c2022746167"
    "73223a205b220e00a062225d2c2022707269632400f00231392e39392c20226f6b223a20747275653f00206f741b00"
    "b16e756c6c2c20226974656d3f00507b22736b75570030782d315700000000000000000000a5717479223a20327d2c"
    "201a0035792d321a005020317d5d7d00000000",
    # snappy framing around an Avro file: cramjam.DecompressionError in checksums._snappy_framed.
    "ff060000734e6150705900c6ffff9f96b0068701b054686520717569636b2062726f776e20666f78206a754f626a01"
    "04146176726f2e636f6465630c736e61707079166176726f2e736368656d618c047b2274797065223a20227265636f"
    "7264222c20226e616d65223a20224f72646572222c20226669656c6473223a205b7b226e616d65223a20226964222c"
    "202274797065223a20226c6f6e67227d2c207b226e616d65223a20226e616d65222c202274797065223a2022737472"
    "696e67227d2c207b226e616d65223a202274616773222c202274797065223a207b2274797065223a20226172726179"
    "222c20226974656d73223a2022737472696e67227d7d2c207b226e616d65223a206d7073206f766572207468227072"
    "696365222c20227479706565206c617a79223a2022646f75626c65227d2c207b226e616d65223a20226578747261222c"
    "202274797065223a205b226e756c6c222c20226279746573225d7d5d7d00010101010101010101010101010101010238"
    "1654540641646104026102620020646f3d0ad7a370fd3340020201e57e97672e20fe2d00663001010101010101010101"
    "0101010101012d00",
], ids=["lz4block-corrupt", "lz4block-huge", "lz4frame-corrupt", "lz4frame-corrupt-2", "snappy-framed-avro"])
def test_finding_inspect_checksum_verification(tmp_path: Path, value: str) -> None:
    # inspect: errors INSPECT's checksum verification (insight/checksums.verify) let out.
    assert_user_sees(shown(tmp_path, bytes.fromhex(value), ("inspect", "table", "json")), marker_needed=False)


def test_finding_lz4_frame_headers_index_error() -> None:
    # container-lz4-frame: a 14-byte frame header cut short: Container.headers raised IndexError
    # (documented: DecodeError only; INSPECT catches everything there, so no user saw it).
    from cqlsh_ext.codecs import registry
    from cqlsh_ext.codecs.base import DecodeError

    for value in ("04224d1868408704220087042200", "04224d187c409600000000000000",
                  "04224d1868000002630000000021"):
        try:
            registry.LZ4_FRAME.headers(bytes.fromhex(value))
        except DecodeError:
            pass


def test_finding_zlib_fdict_struct_error(tmp_path: Path) -> None:
    # container-zlib: a 5-byte zlib header with FDICT set and its dictionary id cut short:
    # Zlib.decode raised struct.error (documented: DecodeError only; the registry turns it into
    # "internal error").
    from cqlsh_ext.codecs import registry
    from cqlsh_ext.codecs.base import DecodeError

    value = bytes.fromhex("782000003d")
    with pytest.raises(DecodeError):
        registry.ZLIB.decode(value, 1 << 20)
    with pytest.raises(DecodeError) as err:
        registry.decode_named("zlib", value)
    assert "internal error" not in str(err.value)


# ------------------------------------------------------------------------- through the binary


def test_hostile_pickle_through_the_binary(cassandra, tmp_path: Path) -> None:
    """The pickle that hung (STACK_GLOBAL of a shared list) as a user meets it: `cqlsh-ext inspect 0x...`
    without a server, then a table cell, JSON output and INSPECT through the server. Each run returns
    (shell_runner.run's timeout is the hang guard) and shows the stored bytes with the reason on one line."""
    from shell_runner import CQLSH_EXT, ext, run

    value = STACK_GLOBAL_OF_A_SHARED_LIST
    reason = "pickle: over 100,000 nodes"
    offline = run(CQLSH_EXT, ["inspect", "0x" + value.hex()], tmp_path)
    assert offline.returncode == 0, offline.stderr
    assert f"  payload: not readable, 411 B, {reason}" in offline.stdout.splitlines(), offline.stdout

    ks = cassandra.create_keyspace("hostile")
    session = cassandra.session(ks)
    session.execute("CREATE TABLE values_ (id int PRIMARY KEY, v blob)")
    session.execute("INSERT INTO values_ (id, v) VALUES (1, %s)", (value,))
    session.shutdown()

    table = ext(cassandra, tmp_path, "-e", f"SELECT v FROM {ks}.values_").checked_stdout()
    cells = [line.strip() for line in table.splitlines() if line.strip().startswith("0x")]
    assert cells == [f"0x{value.hex()} ({reason})"], table
    row = json.loads(ext(cassandra, tmp_path, "--output-format", "json", "-e", f"SELECT v FROM {ks}.values_")
                     .checked_stdout().strip())
    assert (row["v"]["payload"], row["v"]["note"]) == ("0x" + value.hex(), reason), row
    report = ext(cassandra, tmp_path, "-e", f"INSPECT SELECT v FROM {ks}.values_").checked_stdout()
    assert f"  payload: not readable, 411 B, {reason}" in report.splitlines(), report
