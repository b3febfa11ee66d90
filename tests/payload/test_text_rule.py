"""Which stored values read as text (cqlsh_ext.payload.unwrap.stored_text): no false positives
on random binary values, nor on values of the compressed formats, seeded sweeps of 20,000 each."""

from __future__ import annotations

import random

from cqlsh_ext.demo.records import documents
from cqlsh_ext.demo.samples import samples
from cqlsh_ext.payload.unwrap import MIN_TEXT_LENGTH, stored_text


def test_random_values_never_read_as_text():
    rng = random.Random(20_000)
    hits = [n for n in (rng.randint(MIN_TEXT_LENGTH, 4096) for _ in range(20_000))
            if stored_text(rng.randbytes(n)) is not None]
    assert hits == []


def test_random_values_behind_a_utf16_mark_never_read_as_text():
    rng = random.Random(16)
    hits = [1 for _ in range(20_000)
            if stored_text(rng.choice((b"\xff\xfe", b"\xfe\xff")) + rng.randbytes(rng.randint(6, 512)))]
    assert hits == []


def test_compressed_values_never_read_as_text():
    docs = list(documents(40, seed=3))
    values = [s.data for doc in docs for s in samples(doc) if s.name != "plain json"]
    assert len(values) > 500
    assert [v[:8] for v in values if stored_text(v) is not None] == []


def test_text_and_json_of_every_size_read_as_text():
    rng = random.Random(7)
    for doc in documents(200, seed=5):
        cut = doc[: rng.randint(MIN_TEXT_LENGTH, len(doc))]
        assert stored_text(cut.encode()) == (cut, True)
