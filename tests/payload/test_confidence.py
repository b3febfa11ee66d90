"""How sure each reading is (docs/formats.md, "How sure"), held over the producers' corpus.

The two promises: no value whose checksum INSPECT verifies is labelled guessed, and no value
found by a trial alone (no signature anywhere in its chain or its reading) is labelled
confident. What counts as a signature is read from the formats' own declarations (a container's
grade, a payload format's stream magic), not from the confidence rule under test. Then: the words
reach every output (JSON, the blob's parts, INSPECT, STATS, DESCRIBE), and naming a chain makes its
reading confident.
"""

from __future__ import annotations

import json
import random

import bson
import cbor2
import fastavro
import msgpack
import pytest
import zstandard

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.base import DEFAULT_CAP
from cqlsh_ext.codecs.capabilities import Checksums
from cqlsh_ext.insight import checksums
from cqlsh_ext.insight.inspect import inspect_value
from cqlsh_ext.payload.confidence import view_confidence
from cqlsh_ext.payload.engine import ValueEngine
from cqlsh_ext.payload.names import STREAM_MAGICS
from cqlsh_ext.payload.unwrap import unwrap, unwrap_spec
from cqlsh_ext.payload.view import BINARY, CONFIDENCES, RECORD, TEXT
from tests.native import corpora

#: Readings that no signature announces (payloads.md's detection rules): found by parsing alone.
SIGNATURE_LESS_READINGS = {"text", "json", "msgpack", "cbor", "bson", "thrift", "binary"}
#: Signature-carrying readings, from their declared magics: Avro's Obj\x01, Smile's header,
#: pickle's protocol opcode, and the serialization streams the walk takes as layers.
SIGNED_READINGS = {"avro", "smile", "pickle", *STREAM_MAGICS.values()}


def _corpus() -> list[bytes]:
    rng = random.Random(75)
    record = {"id": 7, "status": "PAID", "items": [{"sku": "S1", "qty": 2}]}
    extra = [
        bson.encode(record), cbor2.dumps(record, value_sharing=False), b"\xd9\xd9\xf7" + cbor2.dumps(record),
        msgpack.packb(record), json.dumps(record).encode(), b"plain text stored as it is, long enough",
    ]
    avro_file = _avro(record)
    extra.append(avro_file)
    base = [*corpora.produced(), *corpora.nested(), *corpora.orders(20), *extra]
    return base + corpora.edges(rng.sample(base, 30), rng, per_value=2)


def _avro(record: dict[str, object]) -> bytes:
    import io

    schema = {"type": "record", "name": "Order", "fields": [
        {"name": "id", "type": "long"}, {"name": "status", "type": "string"},
        {"name": "items", "type": {"type": "array", "items": {"type": "record", "name": "Item", "fields": [
            {"name": "sku", "type": "string"}, {"name": "qty", "type": "long"}]}}}]}
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), [record])
    return out.getvalue()


def _steps(label: str) -> list[str]:
    return label.split(">")


def _signed(step: str) -> bool:
    """Whether a label step carries a signature, by the format's declaration alone."""
    fmt = registry.by_label(step)
    if fmt is not None:
        return fmt.grade in ("A", "B")
    return step.partition("/")[0] in SIGNED_READINGS


def test_no_checksum_verified_value_is_guessed_and_no_trial_only_value_is_confident() -> None:
    engine = ValueEngine()
    seen = {level: 0 for level in CONFIDENCES}
    verified = trial_only = 0
    for value in _corpus():
        view = engine.view(value)
        sure = view_confidence(view)
        if view.kind not in (TEXT, RECORD, BINARY):
            assert sure is None, (view, sure)
            continue
        assert sure in CONFIDENCES, (view, sure)
        seen[sure] += 1
        if any(isinstance(layer.fmt, Checksums) for layer in view.layers):  # INSPECT verifies them
            report = inspect_value(value, {}, "auto", DEFAULT_CAP)
            assert report.confidence is not None and report.confidence[0] == sure  # INSPECT says the same
            checked = [layer for layer in report.layers if layer.checks]
            if checked and all(c.status == checksums.OK for layer in checked for c in layer.checks):
                verified += 1
                assert sure != "guessed", (view.label, report.confidence)
        steps = _steps(view.label)
        if not any(_signed(step) for step in steps):
            trial_only += 1
            assert all(registry.by_label(s) is not None or s.partition("/")[0] in SIGNATURE_LESS_READINGS
                       for s in steps), view.label
            assert sure != "confident", (view.label, report.confidence)
    # the corpus reaches every word and both promises' sides
    assert all(seen.values()), seen
    assert verified > 100 and trial_only > 50, (verified, trial_only)


@pytest.mark.parametrize(("value", "label", "auto", "named_as"), [
    (zstandard.ZstdCompressor().compress(msgpack.packb({"id": 1, "name": "abc"})), "zstd>msgpack", "likely",
     "zstd>msgpack"),
    (msgpack.packb({"id": 1, "name": "abc"}), "msgpack", "likely", "msgpack"),
    (b"plain text stored as it is, long enough", "text", "guessed", "text"),
])
def test_a_named_chain_is_confident(value: bytes, label: str, auto: str, named_as: str) -> None:
    found = unwrap(value, "auto", DEFAULT_CAP)
    assert (found.label, view_confidence(found)) == (label, auto)
    named = unwrap_spec(value, named_as, DEFAULT_CAP)
    assert (named.label, view_confidence(named)) == (label, "confident")


def test_d_codec_names_the_outer_layer() -> None:
    import snappy

    value = snappy.compress(json.dumps({"id": 1, "name": "a text long enough"}).encode())
    assert view_confidence(unwrap(value, "auto", DEFAULT_CAP)) == "likely"  # a raw block: a trial
    assert view_confidence(unwrap(value, "snappy", DEFAULT_CAP)) == "confident"


def test_values_that_did_not_decode_carry_none() -> None:
    for value in (bytes(range(40)), b"\x1f\x8b\x08\x00garbage-after-a-gzip-header"):
        view = unwrap(value, "auto", DEFAULT_CAP)
        assert view.kind in ("unknown", "failed") and view_confidence(view) is None
