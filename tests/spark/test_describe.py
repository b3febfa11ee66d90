"""cqlsh_ext.spark.udf.describe, the per-value function behind the pandas UDF (no Spark needed):
what the shell shows and what COMPRESSION STATS counts, for values written by real producers."""

from __future__ import annotations

import gzip
import json

import cramjam
import pytest
import zstandard

from cqlsh_ext.spark.udf import FIELDS, describe, describe_batch


def test_values_by_real_producers():
    payload = json.dumps({"order": 7, "status": "PAID"}).encode()
    snappy = bytes(cramjam.snappy.compress_raw(payload))
    assert describe(snappy) == (payload.decode(), "snappy", len(snappy), len(payload))
    zstd = zstandard.ZstdCompressor().compress(payload)
    assert describe(zstd) == (payload.decode(), "zstd", len(zstd), len(payload))
    assert describe(b"plain text value") == ("plain text value", "not compressed", 16, 16)
    broken = gzip.compress(payload)[:-9]
    text, label, stored, size = describe(broken)
    assert (text, label, stored, size) == (None, "failed", len(broken), len(broken))


@pytest.mark.spark  # pandas comes with the [spark] extra
def test_a_batch_keeps_nulls_and_order():
    import pandas

    zstd = zstandard.ZstdCompressor().compress(b'{"a": 1}')
    frame = describe_batch(pandas.Series([bytearray(zstd), None, b"plain text value"]))
    assert list(frame.columns) == list(FIELDS)
    assert frame.iloc[0].tolist() == ['{"a": 1}', "zstd", len(zstd), 8]
    assert frame.iloc[1].isna().all()
    assert frame.iloc[2]["label"] == "not compressed"
