"""Two spellings the native core repeats belong to Python's standard library, not to cqlsh-ext, so
native/mirror.manifest has no code of ours to fingerprint for them (its comment says so):
`json.dumps(value, ensure_ascii=False)` (with common/jsonenc.line_safe's escapes of U+0085, U+2028
and U+2029, which are ours and in the manifest), the JSON text of an object or array at a path
(native/core/src/columns.rs: json_text, json_string, json_key), and Python's float repr, the
shortest digits that read back the same (columns.rs: py_float_repr; held.rs's JSON text spells
finite floats with it too). They are pinned here instead: the core's text of values Hypothesis
generates (derandomized: the same values every run) against the standard library's, each value
read by the core itself (none handed back to the Python engine, which would spell it with
json.dumps and so compare the library with itself)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cqlsh_ext.common.jsonenc import line_safe
from cqlsh_ext.payload import native
from cqlsh_ext.payload.engine import ValueEngine

pytestmark = pytest.mark.usefixtures("native_core")

#: Floats of every magnitude (subnormals, -0.0, the 1e16 boundary of repr's fixed and exponent
#: forms): JSON holds only finite ones.
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
#: Texts of any code point but lone surrogates (UTF-8 cannot store them): controls, quotes,
#: backslashes, U+2028, astral characters.
TEXTS = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
SCALARS = st.none() | st.booleans() | st.integers(-(1 << 70), 1 << 70) | FLOATS | TEXTS
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(TEXTS, inner, max_size=4), max_leaves=16)
#: What a path's column spells as JSON text: an object or an array (a scalar gets a typed column).
CONTAINERS = st.lists(VALUES, max_size=5) | st.dictionaries(TEXTS, VALUES, max_size=5)


def core_texts(docs: list[Any]) -> list[str | None]:
    """The core's JSON text of each document's "o", the documents stored as plain JSON (padded
    past the length below which a value is not read as text)."""
    values = [json.dumps({"o": doc, "padding": "." * 40}).encode() for doc in docs]
    core = native.module()
    got = core.page_columns(core.DecodeRequest(values, cap=ValueEngine().cap, paths=[("o",)]), ["o"])
    assert got.handed_back == [], "a value left to the Python engine compares json.dumps with itself"
    return list(got["o"].to_pylist())


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(CONTAINERS, min_size=1, max_size=8))
def test_an_object_or_array_at_a_path_is_json_dumps(docs: list[Any]) -> None:
    assert core_texts(docs) == [line_safe(json.dumps(json.loads(json.dumps(doc)), ensure_ascii=False))
                                for doc in docs]


@settings(max_examples=150, derandomize=True, deadline=None)
@given(st.lists(FLOATS, min_size=1, max_size=32))
def test_a_float_is_spelt_as_python_repr_spells_it(floats: list[float]) -> None:
    assert core_texts([floats]) == ["[" + ", ".join(repr(f) for f in floats) + "]"]


def test_the_edges_spelt_as_the_library_spells_them() -> None:
    # repr's switch to exponents, the smallest subnormal, a negative zero; a control character
    # escaped, a non-ASCII character kept as it is (ensure_ascii=False), U+2028 escaped (line_safe)
    assert core_texts([[1e16, 1e15, 0.1, -0.0, 5e-324, 1.7976931348623157e308], {"é": "\u2028\x00"}]) == [
        "[1e+16, 1000000000000000.0, 0.1, -0.0, 5e-324, 1.7976931348623157e+308]", '{"é": "\\u2028\\u0000"}']
