"""docs/payloads.md's matrix of what encode() writes says what the modules declare."""

from __future__ import annotations

import re
from pathlib import Path

from cqlsh_ext.codecs import registry
from cqlsh_ext.codecs.capabilities import Writer
from cqlsh_ext.payload import formats

DOC = (Path(__file__).resolve().parents[2] / "docs" / "payloads.md").read_text()


def rows(header: str) -> dict[str, list[str]]:
    """{each backticked name in a row's first cell: the row's cells} of the table after `header`."""
    table = DOC[DOC.index(header):].split("\n\n")[0]
    out: dict[str, list[str]] = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        for name in re.findall(r"`([^`]+)`", cells[0]):
            out[name] = cells
    return out


def test_containers():
    table = rows("| container | written |")
    for fmt in registry.all_containers():
        written, levels = table[fmt.label][1], table[fmt.label][3]
        assert written == ("yes" if isinstance(fmt, Writer) else "no"), fmt.label
        if isinstance(fmt, Writer):
            expected = "none" if fmt.level_range is None else "-".join(map(str, fmt.level_range))
            assert levels == expected, fmt.label
    assert set(table) == {f.label for f in registry.all_containers()}


def test_payloads():
    table = rows("| payload | written |")
    built_in = formats.declarations()
    for fmt in formats.all_formats():
        if fmt.name not in built_in:  # a plugin installed here (tests/plugins): its own docs say it
            continue
        named = next(name for name in table if name.split(":")[0] == fmt.name)
        writable = fmt.encode is not None or fmt.encode_with is not None
        assert table[named][1] == ("yes" if writable else "no"), fmt.name
