"""Laying cells out to a width (cqlsh_ext.output.layout): what a person sees, checked on the lines
written. No server needed."""

from __future__ import annotations

from cqlshlib.displaying import ANSI_RESET, FormattedValue

from cqlsh_ext.output import layout
from cqlsh_ext.output.cells import NotedValue

RED = "\x1b[0;1;31m"


def fv(text: str) -> FormattedValue:
    return FormattedValue(text)


def lines_of(names, rows, widths, overflow, color=False, with_header=True) -> list[str]:
    out: list[str] = []
    layout.print_table(out.append, [fv(n) for n in names], rows, widths, with_header, False, color, overflow)
    return out


def test_a_table_that_fits_keeps_its_natural_widths():
    names = [fv("id"), fv("name")]
    rows = [[fv("1"), fv("alice")], [fv("22"), fv("bob")]]
    assert layout.fit_widths(names, rows, 80) == [2, 5]


def test_short_values_are_kept_whole_or_the_table_does_not_fit():
    # The five paths at 80 columns: equal cuts made 'ORD-2024001…' and 'RETURN_REQU…'.
    paths = ("data.orderId", "data.status", "data.customer.name", "data.items", "data.payment")
    names = [fv(n) for n in paths]
    rows = [[fv("ORD-2024001567"), fv("RETURN_REQUESTED"), fv("Goran Jensen"), fv("[" * 300), fv("{" * 60)]]
    assert layout.fit_widths(names, rows, 80) == [12, 12, 18, 12, 12]  # fits only by cutting them
    assert layout.fit_widths(names, rows, 80, keep_short=True) is None  # so: vertical
    widths = layout.fit_widths(names, rows, 100, keep_short=True)
    assert widths is not None and widths[:3] == [14, 16, 18]  # whole; the long ones share the rest
    assert layout.table_width(widths) == 100 and widths[3] >= layout.MIN_COLUMN


def test_wide_columns_share_the_room_narrow_ones_keep_theirs():
    names = [fv("id"), fv("body"), fv("note")]
    rows = [[fv("1"), fv("x" * 300), fv("y" * 200)]]
    widths = layout.fit_widths(names, rows, 80)
    assert widths is not None
    assert widths[0] == 2  # narrow: whole
    assert layout.table_width(widths) == 80  # every column of the screen used, none more
    assert abs(widths[1] - widths[2]) <= 1  # the two wide ones cut alike
    out = lines_of(["id", "body", "note"], rows, widths, layout.CUT)
    assert max(len(line) for line in out) <= 80
    assert out[2].endswith("…") and "…" in out[2].split("|")[1]


def test_too_many_columns_cannot_fit_even_cut():
    names = [fv(f"column_{i}") for i in range(10)]
    rows = [[fv("v" * 40) for _ in range(10)]]
    assert layout.fit_widths(names, rows, 80) is None  # the caller shows it vertically


def test_cut_keeps_colours_and_counts_only_what_is_shown():
    cell = FormattedValue("abcdefghij", f"{RED}abc{ANSI_RESET}defghij", 10)
    cut = layout.cut(cell, 5, color=True)
    assert cut.strval == "abcd…" and cut.displaywidth == 5
    assert cut.coloredval.startswith(f"{RED}abc{ANSI_RESET}d…")
    assert layout.cut(cell, 20, color=True) is cell


def test_cut_counts_wide_characters_by_their_screen_width():
    cell = FormattedValue("日本語テキスト", None, 14)
    cut = layout.cut(cell, 7, color=False)
    assert cut.strval == "日本語…" and cut.displaywidth == 7


def test_wrap_keeps_every_character_within_the_width():
    rows = [[fv("1"), fv("0123456789" * 5)]]
    out = lines_of(["id", "text"], rows, [2, 12], layout.WRAP)
    body = out[2:]
    assert all(len(line) <= layout.table_width([2, 12]) for line in out)
    assert "".join(line.split("| ")[1].strip() for line in body) == "0123456789" * 5
    assert body[0].startswith("  1 | ") and not body[1].strip().startswith("1")


def test_scripts_do_not_pad_every_row_for_one_long_cell():
    names = [fv("name"), fv("data")]
    rows = [[fv("short"), fv("0x00")], [fv("huge"), fv("0x" + "ab" * 2000)], [fv("other"), fv("0x0102")]]
    widths = layout.script_widths(names, rows, layout.SCRIPT_CELL_BOUND)
    assert widths == [5, 6]
    out = lines_of(["name", "data"], rows, widths, layout.WHOLE)
    assert out[2] == " short |   0x00"
    assert out[3] == "  huge | 0x" + "ab" * 2000  # written whole, never cut
    assert out[4] == " other | 0x0102"


def test_script_layout_equals_cqlsh_when_no_cell_is_over_the_bound():
    # The same widths cqlsh computes: scripts with ordinary values print what cqlsh prints.
    names = [fv("a"), fv("bb")]
    rows = [[fv("1"), fv("x" * 100)]]
    assert layout.script_widths(names, rows, 120) == layout.natural_widths(names, rows) == [1, 100]


def test_vertical_values_and_rule_fit_the_screen():
    names = [fv("id"), fv("payload")]
    rows = [[fv("7"), fv("z" * 500)]]
    out: list[str] = []
    layout.print_vertical(out.append, names, rows, 0, 60, False, layout.CUT)
    assert out[0] == "@ Row 1"
    assert max(len(line) for line in out) <= 60
    assert out[3].endswith("…")


def test_a_cut_reason_loses_its_hex_first_then_its_tail_words():
    reason = "(as deflate: deflate: invalid block type; the value is a gzip stream, read with -d gzip)"
    cell = NotedValue(fv("0x1f8b0800000000000003" * 3), FormattedValue(reason, f"{RED}{reason}{ANSI_RESET}",
                                                                         len(reason)))
    assert layout.cut(cell, len(reason) + 6, color=False).strval == "0x1f… " + reason
    cut = layout.cut(cell, 60, color=False)
    assert cut.strval == "0x… (as deflate: deflate: invalid block type; the value is…)"
    assert cut.displaywidth == len(cut.strval) <= 60
    colored = layout.cut(cell, 60, color=True)
    assert colored.strval == cut.strval
    assert colored.coloredval.endswith(f"{RED}{cut.strval[len('0x… '):]}{ANSI_RESET}")
    # A first word wider than the room is cut where it must.
    assert layout.cut(NotedValue(fv("0x00"), fv("(" + "x" * 40 + ")")), 20, color=False).strval.endswith("x…")
