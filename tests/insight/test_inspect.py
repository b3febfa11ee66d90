"""INSPECT in the shell and `cqlsh-ext inspect` offline: chains, header fields, checksums, sizes and
payload kinds of values written by the Python and Java producers, each checked against the bytes."""

from __future__ import annotations

import gzip
import re
import struct
import zlib
from pathlib import Path

import cramjam
import lz4.frame
import pytest
import xxhash
import zstandard
from shell_runner import CQLSH_EXT, run

from cqlsh_ext.codecs import registry
from cqlsh_ext.demo.records import documents
from cqlsh_ext.demo.samples import lz4_java_block

from .conftest import cqlsh_ext, json_docs

OS_NAMES = {0: "FAT", 3: "Unix", 255: "unknown"}
REPO = Path(__file__).resolve().parents[2]


def crc32c_bitwise(data: bytes) -> int:
    """CRC-32C one bit at a time (independent of the table-driven one under test)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def masked(crc: int) -> int:
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def by_what(checks: list[dict]) -> dict[str, dict]:
    return {c["what"]: c for c in checks}


def expected_checks(fmt_label: str, stored: bytes, payload: bytes) -> dict[str, tuple[str, str]]:
    """what -> (stored, computed) for the checksums this value carries, computed from the bytes."""
    h = lambda v, w=8: f"0x{v:0{w}x}"  # noqa: E731
    if fmt_label == registry.GZIP.label:
        return {
            "CRC-32": (h(struct.unpack("<I", stored[-8:-4])[0]), h(zlib.crc32(payload))),
            "ISIZE": (str(struct.unpack("<I", stored[-4:])[0]), str(len(payload))),
        }
    if fmt_label == registry.ZLIB.label:
        return {"Adler-32": (h(struct.unpack(">I", stored[-4:])[0]), h(zlib.adler32(payload)))}
    if fmt_label == registry.ZSTD.label and stored[4] & 0x04:
        return {
            "content checksum (XXH64, low 32 bits)": (
                h(struct.unpack("<I", stored[-4:])[0]),
                h(xxhash.xxh64_intdigest(payload) & 0xFFFFFFFF),
            )
        }
    if fmt_label == registry.LZ4_FRAME.label:
        flg = stored[4]
        hl = 7 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
        out = {
            "header checksum (XXH32 >> 8)": (
                h(stored[hl - 1], 2),
                h((xxhash.xxh32_intdigest(stored[4 : hl - 1]) >> 8) & 0xFF, 2),
            )
        }
        if flg & 0x04:
            out["content checksum (XXH32)"] = (
                h(struct.unpack("<I", stored[-4:])[0]),
                h(xxhash.xxh32_intdigest(payload)),
            )
        return out
    if fmt_label == registry.SNAPPY_FRAMED.label:
        out, pos, index = {}, 0, 0
        while pos < len(stored):
            typ, ln = stored[pos], int.from_bytes(stored[pos + 1 : pos + 4], "little")
            if typ in (0, 1):
                body = stored[pos + 8 : pos + 4 + ln]
                data = bytes(cramjam.snappy.decompress_raw(body)) if typ == 0 else body
                out[f"chunk {index} masked CRC-32C"] = (
                    h(int.from_bytes(stored[pos + 4 : pos + 8], "little")),
                    h(masked(crc32c_bitwise(data))),
                )
            pos, index = pos + 4 + ln, index + 1
        return out
    if fmt_label == registry.LZ4_JAVA.label:
        token, clen, dlen, check = struct.unpack_from("<Biii", stored, 8)
        return {
            "block 0 checksum (XXH32 seed 0x9747b28c, low 28 bits)": (
                h(check & 0x0FFFFFFF),
                h(xxhash.xxh32_intdigest(payload[:dlen], seed=0x9747B28C) & 0x0FFFFFFF),
            )
        }
    return {}


def inspect_json(cassandra, home, insight, where: str = "") -> dict[str, dict]:
    out = cqlsh_ext(cassandra, home, f"INSPECT JSON SELECT name, data FROM {insight.ks}.formats{where}")
    return {doc["key"]["name"]: doc for doc in json_docs(out.stdout)}


def test_every_producer(cassandra, insight, home):
    docs = inspect_json(cassandra, home, insight)
    assert set(docs) == set(insight.formats)
    text = insight.formats_doc
    verified: set[str] = set()
    for name, (stored, payload) in insight.formats.items():
        doc = docs[name]
        assert doc["row"] >= 1 and doc["column"] == "data"
        assert doc["stored_size"] == len(stored), name
        if name == "java java_string":
            assert doc["status"] == "not compressed" and doc["chain"] == ["java"]
            assert doc["payload"]["kind"] == "Java String holding JSON object"
            continue
        assert doc["status"] == "compressed", (name, doc["reason"])
        assert doc["decompressed_size"] == len(payload), name
        assert doc["ratio"] == round(len(payload) / len(stored), 4), name
        outer = doc["layers"][0]
        assert outer["input_size"] == len(stored) and outer["output_size"] == len(payload)
        assert doc["exact"] is True and outer["truncated"] is False
        # Checksums: the stored and computed values as this test computes them, all "ok".
        want = expected_checks(outer["format"], stored, payload)
        got = by_what(outer["checksums"])
        for what, (s, c) in want.items():
            assert (got[what]["stored"], got[what]["computed"], got[what]["status"]) == (s, c, "ok"), (
                name,
                what,
            )
            verified.add(outer["format"])
        if not want and outer["format"] not in (registry.BZIP2.label, registry.XZ.label):
            assert (
                outer.get("checksums_note") == "none in this format"
                or not outer["checksums"]
                or all(c["status"] == "not checked" for c in outer["checksums"])
            ), name
        hdr = outer["headers"]
        if outer["format"] == registry.GZIP.label:
            assert hdr["MTIME"] == struct.unpack("<I", stored[4:8])[0]
            assert hdr["OS"] == OS_NAMES.get(stored[9], str(stored[9]))
            assert hdr["ISIZE"] == len(payload)
        elif outer["format"] == registry.ZSTD.label:
            (frame,) = hdr["frames"]
            assert frame["FHD"] == f"0x{stored[4]:02x}" and frame["checksum_flag"] == bool(stored[4] & 4)
            assert frame["compressed_size"] == len(stored)
            if stored[4] >> 6 or stored[4] & 0x20:  # content size field present
                assert frame["content_size"] == len(payload)
        elif outer["format"] == registry.LZ4_FRAME.label:
            (frame,) = hdr["frames"]
            assert frame["FLG"] == f"0x{stored[4]:02x}" and frame["BD"] == f"0x{stored[5]:02x}"
            assert (
                frame["block_max_size"]
                == {4: 64 << 10, 5: 256 << 10, 6: 1 << 20, 7: 4 << 20}[(stored[5] >> 4) & 7]
            )
        elif outer["format"] == registry.SNAPPY_XERIAL.label:
            assert (hdr["version"], hdr["compatible_version"]) == struct.unpack(">ii", stored[8:16])
        elif outer["format"] == registry.LZ4_JAVA.label:
            assert hdr["blocks"][0]["decompressed_length"] == len(payload)
            assert hdr["blocks"][0]["compressed_length"] == struct.unpack_from("<i", stored, 9)[0]
        elif outer["format"] == registry.SNAPPY_RAW.label:
            assert hdr["declared_length"] == len(payload)
        elif outer["format"] == registry.BZIP2.label or outer["format"] == registry.XZ.label:
            assert [c["status"] for c in outer["checksums"]] == ["verified by the decoder"]
        if "gzip_java" in name:
            java = doc["layers"][1]
            assert doc["chain"] == [registry.GZIP.label, "java"]
            if "object" in name:
                assert java["headers"]["type_code"] == "TC_OBJECT (0x73)"
                assert doc["payload"]["kind"] == "Java object java.util.ArrayList"
                assert doc["payload"]["preview"] == '["cqlsh-ext",42]'
                assert doc["payload"]["detail"] == "read from the stream's grammar, never deserialized"
            else:
                assert java["headers"]["type_code"] == "TC_STRING (0x74)"
                assert java["headers"]["length"] == len(text.encode())
                assert doc["payload"]["kind"] == "Java String holding JSON object"
                assert doc["payload"]["detail"] == f"{len(text):,} characters"
        else:
            assert len(doc["layers"]) == 1
            assert doc["payload"]["kind"] == "JSON object", name
            assert doc["payload"]["preview"].startswith(text[:40])
    assert verified == {
        registry.GZIP.label,
        registry.ZLIB.label,
        registry.ZSTD.label,
        registry.LZ4_FRAME.label,
        registry.SNAPPY_FRAMED.label,
        registry.LZ4_JAVA.label,
    }


def test_text_report(cassandra, insight, home):
    stored, payload = insight.formats["py_gzip"]
    out = cqlsh_ext(
        cassandra,
        home,
        f"INSPECT SELECT name, data FROM {insight.ks}.formats WHERE name IN ('py_gzip', 'py_zlib')",
    ).stdout
    block = out.split("row 1", 1)[1].split("row 2", 1)[0]
    assert "name='py_gzip'" in block
    ratio = len(payload) / len(stored)
    assert (
        f"compressed: stored {len(stored):,} B, decompressed {len(payload):,} B, ratio {ratio:.2f}, "
        f"chain {registry.GZIP.label}"
    ) in block
    crc = f"0x{zlib.crc32(payload):08x}"
    assert f"CRC-32: ok (stored {crc}, computed {crc})" in block
    assert "payload: JSON object" in block
    assert "(2 blob values in 2 rows)" in out


def _flip(data: bytes, index: int) -> bytes:
    b = bytearray(data)
    b[index] ^= 0x5A
    return bytes(b)


def test_bad_checksums_are_shown(cassandra, insight, home):
    payload = insight.formats_doc.encode()
    gz = gzip.compress(payload, mtime=0)
    zs = zstandard.ZstdCompressor(write_checksum=True).compress(payload)
    l4 = lz4.frame.compress(payload, content_checksum=True)
    sf = bytes(cramjam.snappy.compress(payload))
    lj = lz4_java_block(payload)
    bad = {
        "gzip": (_flip(gz, len(gz) - 6), "CRC-32", zlib.crc32(payload), len(gz) - 8, "<I"),
        "zstd": (
            _flip(zs, len(zs) - 1),
            "content checksum (XXH64, low 32 bits)",
            xxhash.xxh64_intdigest(payload) & 0xFFFFFFFF,
            len(zs) - 4,
            "<I",
        ),
        "lz4": (
            _flip(l4, len(l4) - 1),
            "content checksum (XXH32)",
            xxhash.xxh32_intdigest(payload),
            len(l4) - 4,
            "<I",
        ),
        "snappy": (_flip(sf, 15), "chunk 1 masked CRC-32C", masked(crc32c_bitwise(payload)), 14, "<I"),
        "lz4java": (
            _flip(lj, 18),
            "block 0 checksum (XXH32 seed 0x9747b28c, low 28 bits)",
            xxhash.xxh32_intdigest(payload, seed=0x9747B28C) & 0x0FFFFFFF,
            17,
            "<I",
        ),
    }
    s = cassandra.session(insight.ks)
    s.execute("CREATE TABLE IF NOT EXISTS corrupt (name text PRIMARY KEY, data blob)")
    for name, (value, *_rest) in bad.items():
        s.execute("INSERT INTO corrupt (name, data) VALUES (%s, %s)", (name, value))
    s.shutdown()
    out = cqlsh_ext(cassandra, home, f"INSPECT JSON SELECT name, data FROM {insight.ks}.corrupt")
    docs = {d["key"]["name"]: d for d in json_docs(out.stdout)}
    for name, (value, what, computed, offset, fmt) in bad.items():
        doc = docs[name]
        assert doc["status"] == "failed", name
        assert "checksum" in doc["reason"], (name, doc["reason"])
        layer = doc["layers"][0]
        assert layer["error"] == doc["reason"]
        check = by_what(layer["checksums"])[what]
        stored = struct.unpack_from(fmt, value, offset)[0]
        if name == "lz4java":
            stored &= 0x0FFFFFFF
        assert check == {
            "what": what,
            "status": "mismatch",
            "stored": f"0x{stored:08x}",
            "computed": f"0x{computed:08x}",
        }, name


def _decodable_flip(stored: bytes) -> tuple[bytes, bytes]:
    """A gzip value with one byte of its deflate data flipped such that the stream still inflates
    (to other bytes): the corruption only the CRC-32 can see. Found with zlib alone."""
    for index in range(len(stored) // 2, len(stored) - 8):
        flipped = _flip(stored, index)
        inflate = zlib.decompressobj(-15)
        try:
            out = inflate.decompress(flipped[10:])
        except zlib.error:
            continue
        if inflate.eof and inflate.unused_data == flipped[-8:] and out != gzip.decompress(stored):
            return flipped, out
    raise AssertionError("no decodable flip in this value")


def test_a_corrupt_gzip_tells_one_story_and_exits_1(tmp_path):
    payload = next(documents(1, seed=3)).encode()  # an order document, as the demo writes them
    stored = gzip.compress(payload, mtime=0)
    flipped, inflated = _decodable_flip(stored)
    (tmp_path / "flipped.gz").write_bytes(flipped)
    result = run(CQLSH_EXT, ["inspect", str(tmp_path / "flipped.gz")], tmp_path)
    assert result.returncode == 1, result
    stored_crc = f"0x{struct.unpack('<I', flipped[-8:-4])[0]:08x}"
    assert "failed: " in result.stdout and "(gzip: checksum mismatch)" in result.stdout
    # The header shows the trailer as the checksums read it: no "not verified" beside a verdict.
    assert f"CRC32 {stored_crc}, ISIZE {len(payload)}\n" in result.stdout
    assert "not verified" not in result.stdout
    assert f"CRC-32: MISMATCH (stored {stored_crc}, computed 0x{zlib.crc32(inflated):08x})" in result.stdout
    isize = "ok" if len(inflated) == len(payload) else "MISMATCH"
    assert f"ISIZE: {isize} (stored {len(payload)}, computed {len(inflated)})" in result.stdout

    # Cut short, the last bytes are no trailer: both the header and the checksums say so.
    (tmp_path / "cut.gz").write_bytes(stored[: len(stored) // 2])
    cut = run(CQLSH_EXT, ["inspect", str(tmp_path / "cut.gz")], tmp_path)
    assert cut.returncode == 1, cut
    crc_field = re.search(r"CRC32 0x[0-9a-f]{8}( \(not verified[^)]*\))?", cut.stdout)
    assert crc_field is not None and crc_field.group(1), cut.stdout
    assert "CRC-32: not checked: stream cut short" in cut.stdout

    # Decoded, or in no known format: 0.
    (tmp_path / "good.gz").write_bytes(stored)
    assert run(CQLSH_EXT, ["inspect", str(tmp_path / "good.gz")], tmp_path).returncode == 0
    assert run(CQLSH_EXT, ["inspect", "0x00010203"], tmp_path).returncode == 0


def test_each_layer_says_how_it_was_found_in_words_the_docs_explain(tmp_path):
    doc = next(documents(1, seed=5)).encode()
    deflate = zlib.compressobj(6, zlib.DEFLATED, -15)
    values = {  # the producers' bytes, and how sure their identification can be
        "gzip": ([], gzip.compress(doc, mtime=0), "found by its signature"),
        "zlib": ([], zlib.compress(doc), "found by its signature and a trial decode"),
        "snappy": ([], bytes(cramjam.snappy.compress_raw(doc)), "no signature: found by a trial decode"),
        "deflate": (["-d", "deflate"], deflate.compress(doc) + deflate.flush(),
                    "no signature: decoded as named (-d, DECOMPRESS)"),
    }
    docs = " ".join((REPO / "docs" / "insight.md").read_text().split())
    for name, (flags, value, how) in values.items():
        path = tmp_path / f"{name}.bin"
        path.write_bytes(value)
        out = run(CQLSH_EXT, ["inspect", *flags, str(path)], tmp_path)
        assert out.returncode == 0, out
        layer = next(line for line in out.stdout.splitlines() if line.startswith("  layer 1: "))
        assert f", {how}): {len(value):,} B -> {len(doc):,} B" in layer, layer
        assert "grade" not in out.stdout
        assert how.split(" (")[0] in docs, how  # docs/insight.md says what each means
        (found,) = json_docs(run(CQLSH_EXT, ["inspect", "--json", *flags, str(path)], tmp_path).stdout)
        assert found["layers"][0]["grade"] == "ABCD"[list(values).index(name)]  # JSON keeps the letter


def test_hex_lines_on_stdin_are_one_value_each(tmp_path):
    # Two values copied from cqlsh's output (the second with the reason cqlsh-ext prints after it).
    first, second = b"first value " * 20, b'{"second": "value"}'
    stored = [gzip.compress(first, mtime=0), zstandard.ZstdCompressor().compress(second)]
    piped = f"0x{stored[0].hex()}\n\n0x{stored[1].hex()} (as printed)\n"
    text = run(CQLSH_EXT, ["inspect", "-"], tmp_path, stdin=piped)
    assert text.returncode == 0, text
    reports = text.stdout.split("\n\n")
    assert [r.splitlines()[0] for r in reports] == ["stdin line 1 (hex)", "stdin line 3 (hex)"]
    assert f"chain {registry.GZIP.label}" in reports[0] and f"{len(first):,} B" in reports[0]
    assert f"chain {registry.ZSTD.label}" in reports[1] and "payload: JSON object" in reports[1]
    docs = json_docs(run(CQLSH_EXT, ["inspect", "--json", "-"], tmp_path, stdin=piped).stdout)
    assert [d["stored_size"] for d in docs] == [len(v) for v in stored]
    # A text that starts as hex values and goes on as something else is refused in one line.
    mixed = run(CQLSH_EXT, ["inspect", "-"], tmp_path, stdin=f"0x{stored[0].hex()}\nnot hex\n")
    assert mixed.returncode == 2 and mixed.stdout == ""
    (line,) = mixed.stderr.splitlines()
    assert line.startswith("cqlsh-ext inspect: error: stdin: line 2 is not a 0x... hex value")
    assert "--raw" in line


def test_offline_inspect(insight, cassandra, home, tmp_path):
    stored, payload = insight.formats["java gzip_java_string"]
    shell_doc = inspect_json(cassandra, home, insight, " WHERE name = 'java gzip_java_string'")[
        "java gzip_java_string"
    ]
    for key in ("row", "column", "key"):
        shell_doc.pop(key)
    path = tmp_path / "value.bin"
    path.write_bytes(stored)
    hexed = "0x" + stored.hex()
    (tmp_path / "value.hex").write_text(hexed + "\n")
    runs = {
        "file": run(CQLSH_EXT, ["inspect", "--json", str(path)], home),
        "hex file": run(CQLSH_EXT, ["inspect", "--json", str(tmp_path / "value.hex")], home),
        "hex argument": run(CQLSH_EXT, ["inspect", "--json", hexed], home),
        "stdin hex": run(
            CQLSH_EXT, ["inspect", "--json", "-"], home, stdin=hexed + " (as cqlsh printed it)\n"
        ),
    }
    for how, result in runs.items():
        assert result.returncode == 0, (how, result.stderr)
        (doc,) = json_docs(result.stdout)
        assert doc.pop("file")
        assert doc == shell_doc, how
    text = run(CQLSH_EXT, ["inspect", str(path)], home)
    assert text.returncode == 0
    assert f"layer 1: {registry.GZIP.label} " in text.stdout and "type_code TC_STRING (0x74)" in text.stdout
    assert f"{len(stored):,} B -> {len(payload):,} B" in text.stdout

    binary = tmp_path / "raw.bin"
    binary.write_bytes(b"0x00")  # looks like hex text; --raw takes it as the bytes it is
    raw = json_docs(run(CQLSH_EXT, ["inspect", "--json", "--raw", str(binary)], home).stdout)[0]
    assert raw["stored_size"] == 4 and raw["status"] == "unknown"  # too short to be read as text
    bad = run(CQLSH_EXT, ["inspect", str(tmp_path / "missing.bin")], home)
    assert bad.returncode == 2 and "error" in bad.stderr


@pytest.mark.parametrize("statement", ["INSPECT SELECT id FROM {ks}.orders LIMIT 2"])
def test_no_blob_column(cassandra, insight, home, statement):
    result = cqlsh_ext(cassandra, home, statement.format(ks=insight.ks), ok=False)
    assert result.returncode != 0 and "no blob column" in result.stderr


def test_json_past_the_value_s_budget_is_told_apart_from_text_that_is_no_json(tmp_path):
    # Valid JSON nested 1,000 levels deep (an object, an array), JSON of more values than the
    # budget's nodes, and a text that starts like JSON and is none: the first three are not read
    # because of the budget, and say so; only the last "does not parse".
    texts = ['{"a":' * 1000 + "1" + "}" * 1000, "[" * 1000 + "]" * 1000,
             "[" + ",".join(["1"] * 150_000) + "]", '{"a": 1,']
    piped = "".join(f"0x{zstandard.ZstdCompressor().compress(t.encode()).hex()}\n" for t in texts)
    out = run(CQLSH_EXT, ["inspect", "-"], tmp_path, stdin=piped)
    assert out.returncode == 0, out
    payloads = [line.split(", ")[0:3] for line in out.stdout.splitlines()
                if line.startswith("  payload: ")]
    past = ["  payload: text (starts like JSON", "{}: past the value's budget", "shown as stored)"]
    deep, many = ([past[0], past[1].format(reason), past[2]]
                  for reason in ("nested deeper than 512 levels", "over 100,000 nodes"))
    assert payloads == [deep, deep, many, ["  payload: text (starts like JSON", "does not parse)", "8 B"]]
