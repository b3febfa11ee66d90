"""How one blob becomes a table cell (cqlsh_ext.output.display), without a server."""

from __future__ import annotations

import gzip
import json
import zlib

import cramjam
import zstandard

from cqlsh_ext.demo.samples import java_string
from cqlsh_ext.output.display import BlobDisplay, human_size
from cqlsh_ext.settings import DisplaySettings
from cqlsh_ext.upstream import seams

PLAIN = seams.value_colormap(False)
COLOR = seams.value_colormap(True)


def cell(
    value: bytes,
    *,
    mode: str = "auto",
    interactive: bool = False,
    expanded: bool = False,
    quote: bool = False,
    room: int = 0,
    **settings: object,
) -> str:
    display = BlobDisplay(DisplaySettings(mode=mode, **settings), interactive, expanded, room)
    return display(value, PLAIN, quote=quote).strval


def test_decoded_text_is_labelled():
    assert cell(gzip.compress(b'{"a": 1}')) == '[gzip] {"a": 1}'
    assert cell(bytes(cramjam.snappy.compress_raw(b"hello, snappy"))) == "[snappy] hello, snappy"


def test_control_characters_are_escaped_like_cqlsh_text():
    assert cell(zlib.compress(b"tab\there\\back")) == "[zlib] tab\\there\\\\back"


def test_multiline_json_is_compact_in_a_table_and_indented_expanded():
    doc = json.dumps({"a": [1, 2], "b": "x"}, indent=4).encode()
    assert cell(zlib.compress(doc)) == '[zlib] {"a": [1, 2], "b": "x"}'
    assert cell(zlib.compress(doc), expanded=True) == '[zlib] {\n  "a": [\n    1,\n    2\n  ],\n  "b": "x"\n}'


def test_inside_collections_the_text_is_quoted_like_cqlsh_strings():
    assert cell(zlib.compress(b"it's"), quote=True) == "[zlib] 'it''s'"


def test_binary_payload_is_hex_with_its_size():
    assert (
        cell(zlib.compress(bytes(range(8)) * 4)) == "[zlib] 0x" + (bytes(range(8)) * 4).hex() + " (32 bytes)"
    )


#: `new ObjectOutputStream(out).writeObject(new ArrayList<>(Arrays.asList("a", 1)))` on JDK 17.
ARRAY_LIST = bytes.fromhex(
    "aced0005737200136a6176612e7574696c2e41727261794c6973747881d21d99c7619d03000149000473697a6578"
    "700000000277040000000274000161737200116a6176612e6c616e672e496e746567657212e2a0a4f78187380200"
    "0149000576616c7565787200106a6176612e6c616e672e4e756d62657286ac951d0b94e08b02000078700000000178"
)

def test_java_objects_are_read_from_the_stream_never_deserialized():
    assert cell(gzip.compress(java_string("héllo"))) == "[gzip>java] héllo"
    # ArrayList of "a" and 1, as ObjectOutputStream writes it (the JDK's own output is in
    # tests/payload/test_javaser.py).
    assert cell(gzip.compress(ARRAY_LIST)) == '[gzip>java] ["a",1]'
    # A stream broken inside the object: named by its class, with the reason.
    obj = b"\xac\xed\x00\x05sr\x00\x13java.util.ArrayList" + b"\x00" * 12
    assert cell(gzip.compress(obj)) == ("[gzip>java] object java.util.ArrayList (not deserialized) "
                                        "(java serialization: unknown type code 0x00)")


def test_plain_binary_is_hex_exactly_as_cqlsh_prints_it():
    # cqlsh's own blob test values: no note, nothing appended.
    for value in (b"\x00\x01\x02\x03\x04\x05\xff\xfe\xfd", b"\xff" * 9, b"", b"\x80", b"\x00\x01"):
        assert cell(value) == "0x" + value.hex()
    assert cell(bytes(range(256))) == "0x" + bytes(range(256)).hex()


def test_a_format_that_fails_says_why():
    broken = gzip.compress(b"x" * 1000)[:20]
    assert cell(broken) == f"0x{broken.hex()} (gzip: truncated stream)"


def test_text_stored_as_is_is_shown_as_text():
    assert cell(b"plain text, stored raw") == "[text] plain text, stored raw"
    assert cell(b'{"id": 7, "tags": ["a", "b"]}') == '[text] {"id": 7, "tags": ["a", "b"]}'
    assert cell("grüße aus köln, zürich und malmö".encode()) == "[text] grüße aus köln, zürich und malmö"
    assert cell("grüße, köln".encode()) == "0x" + "grüße, köln".encode().hex()  # short: ASCII only
    assert cell("utf-16 text".encode("utf-16")) == "[text] utf-16 text"
    assert cell(b"short ok") == "0x" + b"short ok".hex()  # under 10 bytes: too little to tell
    assert cell(b"tab\there, ctrl\x01 too") == "0x" + b"tab\there, ctrl\x01 too".hex()
    multi = json.dumps({"a": 1, "b": [1, 2]}, indent=2).encode()
    assert cell(multi) == '[text] {"a": 1, "b": [1, 2]}'  # compact in a table
    expanded = cell(multi, expanded=True)
    assert expanded.startswith("[text] {\n") and '  "a": 1,' in expanded


def test_named_codec_failure_shows_the_reason():
    assert cell(gzip.compress(b"abc"), mode="zstd").endswith(")")
    assert "(zstd: " in cell(gzip.compress(b"abc"), mode="zstd")


def test_output_cap_is_announced_up_front():
    bomb = zstandard.ZstdCompressor().compress(b"a" * (3 << 20))
    shown = cell(bomb, cap=1 << 20)
    assert shown.startswith("[zstd, first 1.0 MiB of 3.0 MiB] aaa")
    assert len(shown) == len("[zstd, first 1.0 MiB of 3.0 MiB] ") + (1 << 20)


def test_terminal_cells_are_cut_and_scripts_get_everything():
    value = zlib.compress(b"x" * 2000)
    assert len(cell(value)) == len("[zlib] ") + 2000
    cut = cell(value, interactive=True)
    assert len(cut) == 500 and cut.endswith("…")
    assert len(cell(value, interactive=True, room=120)) == 120
    assert len(cell(value, interactive=True, room=120, max_field_width=300)) == 300  # an explicit width wins
    assert len(cell(value, max_field_width=60)) == 60


def test_colour_does_not_change_the_width():
    display = BlobDisplay(DisplaySettings(), False, False)
    plain, colored = display(gzip.compress(b"a\\b"), PLAIN), display(gzip.compress(b"a\\b"), COLOR)
    assert plain.displaywidth == len(plain.strval)
    assert "\x1b[" in colored.coloredval and colored.displaywidth == len("[gzip] a\\b")


def test_a_coloured_text_is_cqlsh_colouring_of_its_body():
    # The label in the label colour, then the body as cqlsh's color_text colours a text (a body
    # without a backslash skips its substitutions: the same bytes).
    from cqlshlib.displaying import ANSI_RESET, CYAN

    color_text = seams.text_formatting()[0]
    display = BlobDisplay(DisplaySettings(), False, False)
    for stored, label, body in ((b'{"a": "plain"}', "[gzip]", '{"a": "plain"}'),
                                (b"a\\b and \\u00e9", "[gzip]", "a\\\\b and \\\\u00e9")):
        shown = display(gzip.compress(stored), COLOR)
        colored_body = color_text(body, COLOR)
        assert shown.strval == f"{label} {body}"
        assert shown.coloredval == f"{CYAN}{label}{ANSI_RESET} {colored_body.coloredval}"
        assert shown.displaywidth == len(label) + 1 + colored_body.displaywidth


def test_human_size():
    assert [human_size(n) for n in (5, 1536, 3 << 20, 1 << 40)] == ["5 B", "1.5 KiB", "3.0 MiB", "1.0 TiB"]


def test_a_page_decoded_ahead_shows_each_cell_as_alone():
    # output.table hands each blob column's page to the display before cqlsh formats it cell by
    # cell (BlobDisplay.prepare): every cell, coloured or not, in a table or expanded, is the one
    # a display that decodes the cell alone shows; a cell that is not the next one prepared (cells
    # formatted in another order) is decoded alone.
    from cqlsh_ext.payload.places import ValuePlace
    from tests.payload.test_engine import POOL

    place = ValuePlace("ks", "t", "data")
    page = [v for v in POOL if len(v) < 200_000][:120] + [None]
    for colored in (False, True):
        colormap = seams.value_colormap(colored)
        for expanded in (False, True):
            ahead = BlobDisplay(DisplaySettings(), False, expanded)
            ahead.prepare(place, page)
            shown = [ahead(v, colormap, place=place) for v in page if v is not None]
            alone = [BlobDisplay(DisplaySettings(), False, expanded)(v, colormap, place=place)
                     for v in page if v is not None]
            assert [(c.strval, c.coloredval) for c in shown] == [(c.strval, c.coloredval) for c in alone]
    out_of_order = BlobDisplay(DisplaySettings(), False, False)
    out_of_order.prepare(place, page[:10])
    assert [out_of_order(v, PLAIN, place=place).strval for v in reversed(page[:10])] == \
        [cell(v) for v in reversed(page[:10])]
