"""One budget per value (cqlsh_ext.payload.budget): hostile values that describe a huge structure
in a few bytes are shown cut with the reason, or stay hex with it; nothing raises out of a cell.

Each test builds its value with the producing library (pickle, cbor2, json) or, where no library
writes the hostile shape, opcode by opcode, and checks what a person sees: the table cell, the
EXPAND cell, the JSON Lines object and the CSV field.
"""

from __future__ import annotations

import gzip
import json
import pickle
import sys

import cbor2
import pytest

from cqlsh_ext.codecs.base import DEFAULT_CAP
from cqlsh_ext.output.display import BlobDisplay
from cqlsh_ext.output.spellings import CsvSpelling, JsonSpelling
from cqlsh_ext.payload.budget import MAX_NODES, Budget
from cqlsh_ext.payload.formats.tree import Cut, jsonable_cut, render, render_cut
from cqlsh_ext.payload.unwrap import unwrap
from cqlsh_ext.payload.view import RECORD
from cqlsh_ext.settings import DisplaySettings
from cqlsh_ext.upstream import seams

PLAIN = seams.value_colormap(False)
#: What one cell may hold at the most: the budget's text, plus the label and the notes around it.
CELL_LIMIT = DEFAULT_CAP + 200


def cell(value: bytes, expanded: bool = False, **settings: object) -> str:
    display = BlobDisplay(DisplaySettings(**settings), False, expanded)
    return str(display(value, PLAIN).strval)


def json_row(value: bytes, **settings: object) -> object:
    from cassandra import cqltypes

    return json.loads(JsonSpelling(DisplaySettings(**settings)).value(value, cqltypes.BytesType))


def csv_field(value: bytes) -> str:
    from cassandra import cqltypes

    return CsvSpelling(DisplaySettings()).value(value, cqltypes.BytesType)


# ---------------------------------------------------------------- reproducers of the hardening issue

SELF_REFERENCING_LIST = bytes.fromhex("80045d946800612e")  # l = []; l.append(l), protocol 4


def test_a_pickled_list_holding_itself_is_shown_with_a_cycle_marker():
    assert cell(SELF_REFERENCING_LIST) == '[pickle/4] [cycle("back to an enclosing list")]'
    row = json_row(SELF_REFERENCING_LIST)
    assert row["payload"] == [{"$tag": "cycle", "value": "back to an enclosing list"}]


def _nested_pickle(depth: int) -> bytes:
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth * 4 + 100)
    try:
        value: list[object] = []
        for _ in range(depth):
            value = [value]
        return pickle.dumps(value, protocol=4)
    finally:
        sys.setrecursionlimit(old)


def test_a_pickle_nested_2000_deep_is_shown_to_the_depth_limit_with_the_reason():
    data = _nested_pickle(2000)
    shown = cell(data)
    assert shown.startswith("[pickle/4] " + "[" * 64 + "…")
    assert shown.endswith("(cut: nested deeper than 64)")
    assert cell(data, expanded=True).endswith("(cut: nested deeper than 64)")
    row = json_row(data)
    assert row["cut"] == "nested deeper than 64"
    assert "…" in json.dumps(row["payload"], ensure_ascii=False)
    assert csv_field(data).startswith("[" * 64)


def test_json_text_nested_100000_deep_is_shown_as_stored_in_every_output():
    data = b"[" * 100_000 + b"]" * 100_000
    assert cell(data) == "[text] " + data.decode()
    assert cell(data, expanded=True) == "[text] " + data.decode()
    assert json_row(data) == {"label": "text", "kind": "text", "confidence": "guessed",
                              "payload": data.decode(),
                              "note": "not read as JSON: nested deeper than 512 levels, past the value's "
                                      "budget"}
    assert csv_field(data) == data.decode()


def test_a_list_referenced_2000_times_renders_at_most_the_node_budget():
    data = pickle.dumps([list(range(1000))] * 2000, protocol=4)
    assert len(data) < 10_000
    shown = cell(data)
    assert len(shown) < CELL_LIMIT and shown.endswith(f"(cut: over {MAX_NODES:,} nodes)")
    shown = cell(data, expanded=True)
    assert len(shown) < CELL_LIMIT and shown.endswith(f"    … (cut: over {MAX_NODES:,} nodes)")
    row = json_row(data)
    assert row["cut"] == f"over {MAX_NODES:,} nodes"
    assert row["payload"][-1][-1] == f"… (cut: over {MAX_NODES:,} nodes)"  # where the walk stopped
    assert len(json.dumps(row)) < CELL_LIMIT


def test_a_list_doubled_by_reference_40_times_stops_at_the_budget():
    value: list[object] = [1]
    for _ in range(40):
        value = [value, value]  # 2^40 leaves if every reference were walked
    data = pickle.dumps(value, protocol=4)
    assert len(data) < 1_000
    shown = cell(data)
    assert f"(cut: over {MAX_NODES:,} nodes)" in shown and len(shown) < CELL_LIMIT
    assert "(cut: over 4 MiB of text)" in cell(data, expanded=True)


def _reduce_doubling(levels: int) -> bytes:
    """x0 = f(); x(k+1) = f(xk, xk): each call's text holds the previous one twice (the shape a
    REDUCE argument nested by reference takes; no library writes it, so opcode by opcode)."""
    out = bytearray(b"\x80\x04" + b"cbuiltins\nprint\n" + b"\x94" + b")R\x94")  # memo 0: f, memo 1: x0
    for k in range(1, levels + 1):
        prev = k.to_bytes(4, "little")
        out += b"h\x00" + b"j" + prev + b"j" + prev + b"\x86R\x94"  # BINGET f, LONG_BINGET x(k-1) twice
    return bytes(out + b".")


def test_a_call_whose_argument_doubles_by_reference_stays_hex_with_the_reason():
    data = _reduce_doubling(40)
    shown = cell(data)
    assert shown == "0x" + data.hex() + " (pickle: over 4 MiB of text)"
    assert json_row(data) == {"kind": "unknown", "payload": "0x" + data.hex(),
                              "note": "pickle: over 4 MiB of text"}
    assert csv_field(data) == "0x" + data.hex() + " (pickle: over 4 MiB of text)"


def test_a_list_used_as_a_dict_key_by_reference_is_charged_each_time():
    # d(k+1) = {render(dk): dk, ...}: keys are rendered at decode time, against the same budget.
    out = bytearray(b"\x80\x04]\x94")  # memo 0: []
    for k in range(40):
        ref = k.to_bytes(4, "little")
        out += b"}\x94" + b"j" + ref + b"j" + ref + b"s"  # {} MEMOIZE, key = value = memo k, SETITEM
    data = bytes(out + b".")
    shown = cell(data)
    assert len(shown) < CELL_LIMIT
    assert "(cut:" in shown or shown.startswith("0x")


def test_cbor_string_references_render_within_the_budget():
    # 90,000 references to one 60-character string: each costs its text when rendered.
    data = b"\xd9\xd9\xf7" + cbor2.dumps(["x" * 60] * 90_000, string_referencing=True)
    shown = cell(data)
    assert shown.startswith("[cbor] [")
    assert len(shown) < CELL_LIMIT and shown.endswith("(cut: over 4 MiB of text)")
    # More items than the budget's nodes: counted from the headers before cbor2 builds anything.
    data = b"\xd9\xd9\xf7" + cbor2.dumps(["x" * 60] * 200_000, string_referencing=True)
    assert cell(data) == "0x" + data.hex() + " (cbor: over 100,000 nodes)"


def test_msgpack_with_more_values_than_the_budget_is_counted_before_it_is_built():
    import msgpack

    data = gzip.compress(msgpack.packb([{}] * 1_000_000), mtime=0)
    assert len(data) < 10_000
    shown = cell(data)
    assert shown.startswith("[gzip] 0x") and shown.endswith("bytes) (msgpack: over 100,000 nodes)")
    within = msgpack.packb({"items": [{"n": i} for i in range(30_000)]})
    assert len(within) > MAX_NODES  # counted, and within the budget: shown
    assert cell(within).startswith('[msgpack] {"items":[{"n":0},')


def test_cbor_shared_values_are_shown_as_their_tags_not_expanded():
    shared: list[object] = [1] * 100
    for _ in range(30):
        shared = [shared, shared]
    data = b"\xd9\xd9\xf7" + cbor2.dumps(shared, value_sharing=True)
    shown = cell(data)
    assert shown.startswith("[cbor] tag28(") and len(shown) < 2_000


def _smile_shared_strings(references: int) -> bytes:
    """Smile with shared string values on: one 32-character string, then `references` one-byte
    references to it (0x01 = shared value 0), in an array."""
    body = b":)\n\x03" + b"\xf8" + b"\x5f" + b"s" * 32 + b"\x01" * references + b"\xf9"
    return gzip.compress(body, mtime=0)


def test_smile_shared_strings_behind_gzip_stay_within_the_budget():
    small = _smile_shared_strings(10)
    assert cell(small) == "[gzip>smile] [" + ",".join(['"' + "s" * 32 + '"'] * 11) + "]"
    data = _smile_shared_strings(1_000_000)
    assert len(data) < 10_000
    shown = cell(data)
    assert shown.startswith("[gzip] 0x3a290a03") and shown.endswith("bytes) (smile: over 100,000 nodes)")
    near = _smile_shared_strings(MAX_NODES - 10)
    shown = cell(near)
    assert shown.startswith("[gzip>smile] [") and len(shown) < CELL_LIMIT


def test_the_output_cap_setting_scales_the_budget():
    data = pickle.dumps([list(range(100))] * 2000, protocol=4)
    budget = Budget.for_cap(64 << 10)
    assert budget.chars == 64 << 10 and budget.nodes == 1_562
    shown = cell(data, cap=64 << 10)
    assert shown.endswith("(cut: over 1,562 nodes)")
    assert len(shown) < (64 << 10) + 200


# ---------------------------------------------------------------- the walk itself

def test_a_shared_node_costs_each_time_it_is_rendered():
    leaf = "y" * 1000
    tree = [leaf] * 10
    text, cut = render_cut(tree, None, Budget(chars=5_000, nodes=1_000))
    assert cut == "over 5,000 characters of text" and text.endswith("…") and len(text) <= 5_001
    text, cut = render_cut(tree, None, Budget(chars=50_000, nodes=5))
    assert cut == "over 5 nodes"


def test_a_cut_node_placed_by_a_decoder_is_shown_and_reported():
    assert render_cut([1, Cut("nested deeper than 64")], None) == ("[1,…]", "nested deeper than 64")
    assert jsonable_cut([1, Cut("why")]) == ([1, "… (cut: why)"], "why")


def test_render_appends_the_reason_when_cut():
    assert render(list(range(20)), budget=Budget(chars=1_000, nodes=10)).endswith("… (cut: over 10 nodes)")


@pytest.mark.parametrize("indent", [None, 2])
def test_small_records_render_as_before(indent):
    record = {"orderId": "ORD-1", "items": [{"sku": "A", "qty": 2}], "total": 9.5, "note": None}
    import msgpack

    view = unwrap(msgpack.packb(record), "auto", DEFAULT_CAP)
    assert view.kind == RECORD and view.tree_input_size is not None
    expected = json.dumps(record, indent=indent, separators=(",", ":") if indent is None else (",", ": "))
    assert render_cut(view.tree, indent) == (expected, None)
