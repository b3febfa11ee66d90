"""encode() with a dictionary of the store (`<codec>:dict=ID`): what the producer's library writes,
read back by that library, verified through the display's path; refused in one line otherwise.
ADVISE's SAVE DICTIONARY file trains on the whole sample and reads back."""

from __future__ import annotations

import zlib

import pytest
import zstandard
from dictionary_values import Made

from cqlsh_ext.codecs import dictionaries
from cqlsh_ext.encode.chain import EncodeRefused, encode
from cqlsh_ext.payload.spec import SpecError, parse_spec

DOC = '{"orderId": "ORD-1", "status": "PAID"}'


def test_spec_steps_name_a_level_and_a_dictionary():
    spec = parse_spec("zstd:19,dict=42>msgpack")
    assert (spec.levels, spec.dictionaries) == ((19,), (42,))
    assert parse_spec("zlib:dict=0x216f4cdd").dictionaries == (0x216F4CDD,)
    assert parse_spec("zstd:3").dictionaries == ()
    for bad, says in (("zstd:dict=x", "dict= takes a dictionary ID"),
                      ("zstd:lvl=3", "a codec takes a level and a dictionary")):
        with pytest.raises(SpecError, match=says):
            parse_spec(bad)


def test_encode_writes_with_the_stored_dictionary(made: Made):
    with pytest.raises(EncodeRefused, match=f"zstd: dictionary {made.zstd_id} is not loaded"):
        encode(f"zstd:dict={made.zstd_id}", DOC, 1 << 20)
    dictionaries.load([str(made.zstd_file), str(made.zlib_file)])
    value = encode(f"zstd:19,dict={made.zstd_id}", DOC, 1 << 20).value
    assert zstandard.get_frame_parameters(value).dict_id == made.zstd_id
    trained = zstandard.ZstdCompressionDict(made.zstd_file.read_bytes())
    assert zstandard.ZstdDecompressor(dict_data=trained).decompress(value) == DOC.encode()
    value = encode(f"zlib:dict=0x{made.zlib_id:08x}", DOC, 1 << 20).value
    obj = zlib.decompressobj(zdict=made.zlib_file.read_bytes())
    assert value[1] & 0x20 and obj.decompress(value) == DOC.encode()
    with pytest.raises(EncodeRefused, match="gzip is not written with a dictionary here"):
        encode("gzip:dict=5", DOC, 1 << 20)
    with pytest.raises(EncodeRefused, match="zlib: dictionary 7 is not loaded"):
        encode("zlib:dict=7", DOC, 1 << 20)  # an ID of the other kind is not taken


def test_the_saved_dictionary_is_trained_on_the_whole_sample(made: Made, tmp_path):
    from cqlsh_ext.insight.advise import AdviseSample, save_dictionaries

    sample = AdviseSample(300, "auto", 1 << 20)
    for doc in made.docs:
        sample.add("ks.t.data", doc)
    saved = save_dictionaries(sample, str(tmp_path / "d"))
    assert [(s.column, s.error) for s in saved] == [("ks.t.data", None)]
    data = (tmp_path / "d").read_bytes()
    assert dictionaries.from_bytes(data, "x").id == saved[0].dict_id
    assert dictionaries.zstd(saved[0].dict_id) is not None  # loaded in this process at once
    few = AdviseSample(300, "auto", 1 << 20)
    few.add("ks.t.data", made.docs[0])
    assert save_dictionaries(few, str(tmp_path / "e"))[0].error == "too few values to train a dictionary " \
                                                                     "(needs 16)"
    assert not (tmp_path / "e").exists()
