"""Raw-content zstd dictionaries (python-zstandard's DICT_TYPE_RAWCONTENT: the frame names no
dictionary) and RFC 9842 values that name theirs by its SHA-256 (dcz, dcb): read with the store's
dictionaries, or saying what they need, never "corruption"."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest
import zstandard
from dictionary_values import DCZ_HEADER, Made, dcz, read_dcz

from cqlsh_ext.codecs import dictionaries, registry
from cqlsh_ext.codecs.zstd import NEEDS_DICTIONARY
from cqlsh_ext.encode.chain import EncodeRefused, encode
from cqlsh_ext.insight.inspect import inspect_value
from cqlsh_ext.payload.confidence import view_confidence
from cqlsh_ext.payload.engine import ValueEngine
from cqlsh_ext.payload.unwrap import unwrap, unwrap_spec

CAP = 1 << 20


def view(value: bytes):
    return unwrap(value, "auto", CAP)


def test_a_raw_content_frame_names_no_dictionary_and_says_it_needs_one(made: Made):
    value = made.raw_values[3]
    assert zstandard.get_frame_parameters(value).dict_id == 0  # nothing in the frame names it
    with pytest.raises(zstandard.ZstdError, match="corruption"):
        zstandard.ZstdDecompressor().decompress(value)  # what libzstd alone says
    shown = view(value)
    assert (shown.kind, shown.reason) == ("failed", NEEDS_DICTIONARY)
    assert shown.reason == "zstd frame needs a dictionary (none named in the frame)"


def test_the_raw_dictionary_given_with_dictionary_reads_it(made: Made):
    dictionaries.load([str(made.raw_file)])
    entry = dictionaries.by_sha256(hashlib.sha256(made.raw_file.read_bytes()).digest())
    assert entry is not None and entry.raw
    for doc, value in zip(made.docs[:20], made.raw_values[:20], strict=True):
        shown = view(value)
        assert (shown.label, shown.kind, shown.text) == ("zstd>json", "text", doc.decode())


def test_two_raw_dictionaries_are_told_apart_by_the_frames_checksum_only(made: Made):
    dictionaries.load([str(made.zlib_file), str(made.raw_file)])
    # Without a checksum, a raw dictionary of the right size reads any such frame into something:
    # the zlib preset dictionary reads these frames too, into other text. Nothing is guessed.
    shown = [view(value) for value in made.raw_values[:30]]
    told = [v for v, doc in zip(shown, made.docs, strict=False) if v.text == doc.decode()]
    untold = [v for v in shown if v.kind == "failed" and "which is its own cannot be told" in v.reason]
    assert told and untold and len(told) + len(untold) == len(shown)
    assert str(made.zlib_file) in untold[0].reason and str(made.raw_file) in untold[0].reason
    checked = zstandard.ZstdCompressor(level=3, write_dict_id=False, write_checksum=True, dict_data=(
        zstandard.ZstdCompressionDict(made.raw_file.read_bytes(), dict_type=zstandard.DICT_TYPE_RAWCONTENT)))
    for doc in made.docs[:10]:
        assert view(checked.compress(doc)).text == doc.decode()


def test_a_corrupt_frame_stays_corrupt(made: Made):
    # Frames that name no dictionary, each with one bit flipped: libzstd refuses most of them, and
    # they keep its reason (a checksum that fails: read whole, so corrupt; without one, the zeros'
    # dictionary fails them too); with a raw dictionary loaded, a checksum keeps it from reading
    # them. A flip that leaves a checksummed frame readable with zeros only is told from a
    # dictionary frame by nothing: about one in 3,000 seeded flips.
    rng = random.Random(4)
    for checksum, store in ((False, []), (True, []), (True, [str(made.raw_file)])):
        dictionaries.load(store)
        cctx = zstandard.ZstdCompressor(level=3, write_checksum=checksum)
        reasons: list[str] = []
        for doc in made.docs * 2:
            broken = bytearray(cctx.compress(doc))
            broken[rng.randrange(6, len(broken))] ^= 1 << rng.randrange(8)
            shown = view(bytes(broken))
            if shown.kind == "failed":
                reasons.append(shown.reason)
        assert len(reasons) > 100 and reasons.count(NEEDS_DICTIONARY) <= 1, (checksum, store)
        assert all(r.startswith("zstd: ") for r in reasons if r != NEEDS_DICTIONARY)


def test_the_issues_case_a_short_value_and_fifty_orders(tmp_path: Path):
    # The issue's report: a 26-byte value and a raw-content dictionary of 50 order documents.
    orders = b"".join(json.dumps({"orderId": f"ORD-{n}", "status": "PAID", "total": n * 3}).encode()
                      for n in range(50))
    cctx = zstandard.ZstdCompressor(write_dict_id=False, dict_data=zstandard.ZstdCompressionDict(
        orders, dict_type=zstandard.DICT_TYPE_RAWCONTENT))
    value = cctx.compress(b'{"orderId": "ORD-7", "status": "PAID"}')
    assert view(value).reason == NEEDS_DICTIONARY
    path = tmp_path / "orders.raw"
    path.write_bytes(orders)
    dictionaries.load([str(path)])
    assert view(value).text == '{"orderId": "ORD-7", "status": "PAID"}'


def test_dcz_values_built_from_the_rfc_layout(made: Made):
    value = made.dcz_values[4]
    assert value[:8].hex(" ") == "5e 2a 4d 18 20 00 00 00"
    assert value[8:40] == hashlib.sha256(made.raw_file.read_bytes()).digest()
    missing = view(value)
    assert missing.kind == "failed"
    assert missing.reason == (f"dcz value needs the dictionary with SHA-256 "
                              f"{hashlib.sha256(made.raw_file.read_bytes()).hexdigest()} (not loaded)")
    dictionaries.load([str(made.raw_file)])
    shown = view(value)
    assert (shown.label, shown.text) == ("dcz>json", made.docs[4].decode())


def test_a_dcz_dictionary_is_found_by_its_hash_whatever_its_kind(made: Made):
    # A zstd-format dictionary file's bytes may be a dcz value's raw dictionary too.
    trained = made.zstd_file.read_bytes()
    cctx = zstandard.ZstdCompressor(write_dict_id=False, dict_data=zstandard.ZstdCompressionDict(
        trained, dict_type=zstandard.DICT_TYPE_RAWCONTENT))
    value = dcz(trained, cctx.compress(made.docs[9]))
    dictionaries.load([str(made.zstd_file)])
    assert view(value).text == made.docs[9].decode()


def test_a_dcz_value_that_lies_about_its_frame_stays_within_the_cap(made: Made):
    dictionaries.load([str(made.raw_file)])
    raw = made.raw_file.read_bytes()
    bomb = zstandard.ZstdCompressor(write_dict_id=False, dict_data=zstandard.ZstdCompressionDict(
        raw, dict_type=zstandard.DICT_TYPE_RAWCONTENT)).compress(b"\x00" * (8 << 20))
    shown = unwrap(dcz(raw, bomb), "auto", CAP)
    assert shown.truncated_layer is not None and len(shown.data) <= CAP
    header_only = DCZ_HEADER + hashlib.sha256(raw).digest()
    bare = view(header_only)  # no frame after the header: a dcz value that fails, not zstd's empty stream
    assert (bare.kind, bare.reason) == ("failed", "dcz: a bare header: no zstd frame after the "
                                                  "dictionary's SHA-256")
    assert bare.undecodable and view_confidence(bare) is None
    wrong_hash = DCZ_HEADER + b"\x00" * 32 + made.raw_values[0]
    assert view(wrong_hash).reason == f"dcz value needs the dictionary with SHA-256 {'00' * 32} (not loaded)"


def _frame_with(dictionary: bytes, doc: bytes, checksum: bool) -> bytes:
    """python-zstandard's frame of `doc` with `dictionary` as raw content (no ID in the frame)."""
    return zstandard.ZstdCompressor(level=3, write_dict_id=False, write_checksum=checksum, dict_data=(
        zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_RAWCONTENT))).compress(doc)


def test_a_dcz_value_made_with_another_dictionary_is_never_confident(made: Made):
    # The header names the loaded dictionary by its SHA-256; the frame was made with another one,
    # which holds the document. Read with the one named, it decodes into other orders' text: nothing
    # but a checksum tells that from the payload, so without one it is at most "likely", and says why.
    dictionaries.load([str(made.raw_file)])
    named = made.raw_file.read_bytes()
    other = b"\n".join(made.docs[100:150])
    doc = made.docs[120]
    for checksum in (False, True):
        wrong = dcz(named, _frame_with(other, doc, checksum))
        right = dcz(named, _frame_with(named, doc, checksum))
        shown = view(wrong)
        said = inspect_value(wrong, {}, "auto", CAP).confidence
        if checksum:
            assert (shown.kind, shown.reason) == ("failed", "dcz: checksum mismatch"), shown
            assert (view_confidence(view(right)), view(right).text) == ("confident", doc.decode())
            continue
        assert (shown.label, shown.kind) == ("dcz>text", "text") and "ORD-000120" not in shown.text  # garbage
        assert view_confidence(shown) == "likely"
        assert said == ("likely", "dcz: read with a dictionary, and no checksum says it is the producer's")
        # The producer's own value, read with the right dictionary: the same words (nothing tells them
        # apart).
        assert view(right).text == doc.decode() and view_confidence(view(right)) == "likely"
        # Named by a DECODE setting, the chain is the user's word, the dictionary still not.
        assert view_confidence(unwrap_spec(wrong, "dcz", CAP)) == "likely"


def test_an_edit_writes_back_only_a_verified_reading(made: Made):
    from cqlsh_ext.edit.document import EditRefused, Op
    from cqlsh_ext.edit.rewrite import rewrite

    dictionaries.load([str(made.raw_file)])
    named = made.raw_file.read_bytes()
    doc = made.docs[120]
    engine = ValueEngine("auto", CAP)
    ops = (Op(("status",), "DONE", "data.status"),)
    lying = dcz(named, _frame_with(b"\n".join(made.docs[100:150]), doc, False))
    said = (r"^its reading is not verified \(dcz: read with a dictionary, and no checksum says it is the "
            r"producer's\)")
    with pytest.raises(EditRefused, match=said):
        rewrite(lying, engine, ops, CAP)
    written = encode(f"dcz:dict={hashlib.sha256(named).hexdigest()}", doc.decode(), CAP).value
    edited = rewrite(written, engine, ops, CAP)  # encode()'s own value: its round trip verifies it
    assert edited is not None and json.loads(read_dcz(named, edited.value))["status"] == "DONE"


def test_a_frame_naming_its_dictionary_id_is_confident_with_a_checksum_only(made: Made):
    dictionaries.load([str(made.zstd_file)])
    trained = zstandard.ZstdCompressionDict(made.zstd_file.read_bytes())
    for checksum, sure in ((False, "likely"), (True, "confident")):
        cctx = zstandard.ZstdCompressor(level=3, dict_data=trained, write_checksum=checksum)
        value = cctx.compress(made.docs[5])
        assert zstandard.get_frame_parameters(value).dict_id == made.zstd_id
        shown = view(value)
        assert (shown.text, view_confidence(shown)) == (made.docs[5].decode(), sure)
    dictionaries.load([str(made.raw_file)])  # a frame naming none, read with the raw dictionary tried on it
    assert view_confidence(view(made.raw_values[5])) == "likely"
    assert view_confidence(view(_frame_with(made.raw_file.read_bytes(), made.docs[5], True))) == "confident"


def test_dcb_is_named_with_its_dictionary_not_decoded(made: Made):
    raw = made.raw_file.read_bytes()
    value = b"\xff\x44\x43\x42" + hashlib.sha256(raw).digest() + b"\x1b\x03\x00\x00" * 4
    assert view(value).reason.startswith("dcb (Brotli with a dictionary) cannot be decoded here: no Python "
                                         "Brotli binding takes a dictionary (SHA-256 ")
    dictionaries.load([str(made.raw_file)])
    assert view(value).reason.endswith(f"(its dictionary is loaded from {made.raw_file})")
    report = inspect_value(value, {}, "auto", CAP).to_json()
    header = report["layers"][0]["headers"]
    assert header["dictionary_sha256"] == hashlib.sha256(raw).hexdigest()
    assert str(made.raw_file) in header["dictionary"]


def test_inspect_shows_the_dcz_header_and_the_raw_dictionary_used(made: Made):
    dictionaries.load([str(made.raw_file)])
    digest = hashlib.sha256(made.raw_file.read_bytes()).hexdigest()
    report = inspect_value(made.dcz_values[2], {}, "auto", CAP).to_json()
    layer = report["layers"][0]
    assert layer["format"] == "dcz"
    assert layer["headers"]["header"] == "5e 2a 4d 18 20 00 00 00"
    assert layer["headers"]["dictionary_sha256"] == digest
    assert layer["headers"]["frames"][0]["offset"] == 40
    bare = inspect_value(made.raw_values[2], {}, "auto", CAP).to_json()["layers"][0]["headers"]
    assert bare["dictionary"].startswith(f"dictionary SHA-256 {digest}")
    assert "frame names none" in bare["dictionary"]


def test_encode_writes_dcz_with_a_named_dictionary_and_refuses_without(made: Made):
    dictionaries.load([str(made.raw_file)])
    digest = hashlib.sha256(made.raw_file.read_bytes()).hexdigest()
    value = encode(f"dcz:dict={digest}", '{"orderId": "ORD-000009"}', CAP).value
    assert value.startswith(DCZ_HEADER + bytes.fromhex(digest))
    # Read back by the producer's library, with the dictionary as raw content (RFC 8878 section 5).
    body = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(
        made.raw_file.read_bytes(), dict_type=zstandard.DICT_TYPE_RAWCONTENT)).decompress(value[40:])
    assert body == b'{"orderId": "ORD-000009"}'
    with pytest.raises(EncodeRefused, match=r"dcz is written with a dictionary of the store: dcz:dict="):
        encode("dcz", "x" * 20, CAP)
    with pytest.raises(EncodeRefused, match="is not loaded"):
        encode(f"dcz:dict={'ab' * 32}", "x" * 20, CAP)
    with pytest.raises(EncodeRefused, match="no Python Brotli binding here writes with a dictionary"):
        encode("dcb", "x" * 20, CAP)
    assert unwrap_spec(value, "dcz", CAP).text == '{"orderId": "ORD-000009"}'


def test_both_roads_give_the_same_answers(made: Made):
    values = made.raw_values[:20] + made.dcz_values[:20] + [DCZ_HEADER + hashlib.sha256(b"x").digest()]
    for loaded in ([], [str(made.raw_file)]):
        dictionaries.load(loaded)
        answers = []
        for native in (True, False):
            engine = ValueEngine("auto", CAP)
            engine.native = native
            answers.append([(v.label, v.kind, v.reason, v.text, view_confidence(v))
                            for v in map(engine.view, values)])
        assert answers[0] == answers[1]


def test_the_dictionary_table_and_files_share_one_store_by_hash(made: Made):
    entry = dictionaries.from_bytes(made.raw_file.read_bytes(), "table shop.dictionaries, data of 'raw'")
    dictionaries.add(entry)
    assert dictionaries.find(dictionaries.SHA256, int.from_bytes(entry.sha256, "big")) is entry
    assert view(made.dcz_values[0]).text == made.docs[0].decode()
    assert registry.by_label("dcz") is not None


def test_advise_reports_the_hash_and_ratio_of_the_dictionary_it_would_save(made: Made):
    from cqlsh_ext.insight.advise import advise_column
    from cqlsh_ext.insight.recompress import trained_dictionary

    payloads = made.docs[:80]
    advice = advise_column("data", payloads, [len(p) for p in payloads], {}, {}, budget=0.01, repetitions=1)
    note = next(n for n in advice.notes if n.startswith("dcz (RFC 9842)"))
    _fmt, saved = trained_dictionary(payloads)  # what SAVE DICTIONARY writes
    assert note.endswith(f"its values carry SHA-256 {hashlib.sha256(saved).hexdigest()}")
    ratio = float(note.split("ratio ")[1].split(" ")[0])
    # The ratio, measured again with python-zstandard alone: each value written with the dictionary
    # trained on the other half of the sample as raw content, behind RFC 9842's 40-byte header.
    halves = (payloads[0::2], payloads[1::2])
    size = max(1024, min(16 * 1024, sum(map(len, payloads)) // 20))
    trained = [zstandard.train_dictionary(size, list(half)).as_bytes() for half in halves]
    writers = [zstandard.ZstdCompressor(level=3, write_dict_id=False, dict_data=zstandard.ZstdCompressionDict(
        d, dict_type=zstandard.DICT_TYPE_RAWCONTENT)) for d in trained]
    stored = sum(40 + len(writers[1 - k % 2].compress(p)) for k, p in enumerate(payloads))
    assert ratio == round(sum(map(len, payloads)) / stored, 2)
    path = made.raw_file.parent / "saved.dict"
    path.write_bytes(saved)
    dictionaries.load([str(path)])
    value = encode(f"dcz:dict={hashlib.sha256(saved).hexdigest()}", made.docs[0].decode(), CAP).value
    assert view(value).text == made.docs[0].decode()
