"""describe.sketch: a path's values, counted while few and then by a HyperLogLog, merging exactly
whatever the split (the shell's workers, a sample's slices and Spark's tasks each fill a part)."""

from __future__ import annotations

import math
import random
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cqlsh_ext.describe.sketch import _REST, EXACT, LONG_TEXT, REGISTERS, Values, registers_max

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.integers(), st.floats(allow_nan=True),
                    st.text(max_size=4), st.text(min_size=LONG_TEXT - 2, max_size=LONG_TEXT + 3),
                    st.binary(max_size=3), st.decimals(allow_nan=True, places=2))


def filled(values: list[object]) -> Values:
    sketch = Values()
    for value in values:
        sketch.add(value)
    return sketch


def state(sketch: Values) -> tuple[object, ...]:
    return (sketch.exact, sketch.distinct(), repr(sketch.most_common()),
            None if sketch.registers is None else bytes(sketch.registers))


@settings(max_examples=300, deadline=None)
@given(st.lists(SCALARS, max_size=150), st.lists(st.integers(0, 3), max_size=150), st.randoms())
def test_parts_merged_in_any_order_give_the_whole(values, parts, rng):
    whole = filled(values)
    split: list[list[object]] = [[], [], [], []]
    for k, value in enumerate(values):
        split[parts[k] if k < len(parts) else 0].append(value)
    filled_parts = [filled(part) for part in split]
    rng.shuffle(filled_parts)
    merged = Values()
    for part in filled_parts:
        merged.merge(part)
    assert state(merged) == state(whole)


@settings(max_examples=300, deadline=None)
@given(st.lists(SCALARS, max_size=300), st.lists(st.integers(1, 50), max_size=20))
def test_a_page_at_a_time_is_one_at_a_time(values, sizes):
    """add_many (a path's leaves of a page) is add() of each: the same counts, the same registers,
    whatever values it remembered as already hashed."""
    paged, start = Values(), 0
    for size in [*sizes, len(values)]:
        paged.add_many(values[start:start + size])
        start += size
    assert state(paged) == state(filled(values))


def test_few_values_are_counted_one_by_one_with_their_types_apart():
    sketch = filled(["1", 1, 1.0, True, "1", None, None, Decimal("1.0"), b"1"])
    assert sketch.exact
    assert sorted(sketch.most_common()[:2], key=repr) == [("1", 2), (None, 2)]
    assert sorted(map(repr, (v for v, n in sketch.most_common() if n == 1))) == \
        sorted(map(repr, [1, 1.0, True, Decimal("1.0"), b"1"]))
    assert sketch.distinct() == 6  # null is no distinct value


def test_many_values_are_counted_by_the_hyperloglog_within_a_few_percent():
    for n in (EXACT + 1, 1_000, 50_000):
        sketch = filled([f"ORD-{i:08d}" for i in range(n)] * 2)
        assert not sketch.exact and sketch.most_common() == []
        assert abs(sketch.distinct() - n) <= max(3, 0.05 * n), n


def test_every_nan_is_one_value_and_zero_is_zero():
    sketch = filled([math.nan, float("nan"), -0.0, 0.0])
    assert sketch.distinct() == 2
    counts = sorted(n for _, n in sketch.most_common())
    assert counts == [2, 2]
    # The same after the switch to the HyperLogLog: NaN and -0.0 hash as their one value.
    big = filled([math.nan, float("nan"), -0.0, 0.0] + list(range(EXACT * 4)))
    assert abs(big.distinct() - (EXACT * 4 + 1)) <= 0.05 * EXACT * 4


def test_a_long_string_is_kept_by_its_hash_and_first_characters():
    a, b = "x" * 5_000_000 + "a", "x" * 5_000_000 + "b"
    sketch = filled([a, b, a])
    (first, n_first), (second, n_second) = sketch.most_common()
    assert (n_first, n_second) == (2, 1)
    assert first == second == "x" * LONG_TEXT + "…"  # two values, shown by their first characters
    assert sum(len(str(k)) for k in sketch.counts or ()) < 1_000  # not megabytes


def test_merging_a_counted_part_into_a_hyperloglog_adds_its_values():
    rng = random.Random(5)
    many = [rng.random() for _ in range(10_000)]
    few = ["a", "b"]
    one = filled(many)
    one.merge(filled(few))
    other = filled(few)
    other.merge(filled(many))
    whole = filled(many + few)
    assert bytes(one.registers or b"") == bytes(other.registers or b"") == bytes(whole.registers or b"")


@pytest.mark.parametrize("seed", range(40))
def test_two_hyperloglogs_merge_register_by_register(seed: int) -> None:
    """registers_max (the registers as one integer, lane by lane) is each register's max, for every
    rank a register can hold, equal ranks and zeros among them."""
    rng = random.Random(seed)
    mine = [rng.randint(0, _REST + 1) for _ in range(REGISTERS)]
    theirs = [rng.choice((0, r, _REST + 1, rng.randint(0, _REST + 1))) for r in mine]
    assert registers_max(bytearray(mine), bytes(theirs)) == bytearray(map(max, mine, theirs))
