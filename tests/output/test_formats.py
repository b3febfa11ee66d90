"""The output formats are declared once (cqlsh_ext.output.formats), without a server."""

from __future__ import annotations

from cqlsh_ext.output import formats, writers
from cqlsh_ext.settings import MACHINE_FORMATS, OUTPUT_FORMATS


def test_the_declarations_are_the_names_users_give():
    assert tuple(formats.FORMATS) == OUTPUT_FORMATS
    assert tuple(name for name, fmt in formats.FORMATS.items() if fmt.machine) == MACHINE_FORMATS


def test_a_layout_is_cqlshs_expand_and_a_machine_format_has_its_writer():
    assert formats.for_layout(False).name == "table"
    assert formats.for_layout(True).name == "vertical"
    for fmt in formats.FORMATS.values():
        assert (fmt.expand is None) == fmt.machine
        if fmt.machine:
            assert hasattr(getattr(writers, str(fmt.writer)), "write_rows")
