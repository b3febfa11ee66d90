"""api.conditions: what a source (polars', Spark's) pushes into its statement keeps every row the
frame's own comparison keeps on the Arrow values, the strings' lone surrogates included (the API's
Arrow spells one U+FFFD: docs/api.md)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from cqlsh_ext.api.conditions import path_condition
from cqlsh_ext.payload.arrow_types import Bool, Float, Int, Json, Str


def test_plain_kinds_become_payload_conditions():
    assert path_condition(Str(), "data.status", "=", ("PAID",)).text == "data.status = ?"
    assert path_condition(Str(), "data.status", "IN", ("NEW", "PAID")).text == "data.status IN (?, ?)"
    assert path_condition(Int(64), "data.n", ">", (3,)).values == (3,)
    assert path_condition(Float(), "data.x", "<", (1.5,)).values == (Decimal("1.5"),)
    assert path_condition(Bool(), "data.ok", "=", (True,)) is not None


@pytest.mark.parametrize(("kind", "op", "values"), [
    (Bool(), ">", (True,)),  # booleans compare by = and != only
    (Str(), "=", (3,)),  # a number is no string's
    (Int(64), "=", ("3",)),
    (Float(), ">", (2.0 ** 60,)),  # past 2**53 doubles and the number rule part
    (Json(), "=", ("x",)),  # mixed kinds: the frame's
])
def test_what_stays_the_frames(kind, op, values):
    assert path_condition(kind, "data.a", op, values) is None


def test_a_lone_surrogate_is_never_pushed_past():
    """A stored text with a lone surrogate reaches the frame as U+FFFD (Arrow's UTF-8), which
    sorts above U+E000-U+FFFC where the surrogate sorts below them, and equals a literal U+FFFD the
    text does not: neither comparison is pushed; one that orders alike is."""
    stored = "a\ud800"
    arrow = stored.replace("\ud800", "\ufffd")
    assert (arrow > "a\ue000") != (stored > "a\ue000")
    assert path_condition(Str(), "data.s", ">", ("a\ue000",)) is None
    assert (arrow == "a\ufffd") != (stored == "a\ufffd")
    assert path_condition(Str(), "data.s", "=", ("a\ufffd",)) is None
    assert path_condition(Str(), "data.s", "IN", ("x", "\ufffd")) is None
    # Below the surrogates both spellings order alike, and = with any other literal agrees.
    assert (arrow > "a\u00e9") == (stored > "a\u00e9")
    assert path_condition(Str(), "data.s", ">", ("a\u00e9",)) is not None
    assert path_condition(Str(), "data.s", "=", ("a\ue000",)) is not None
