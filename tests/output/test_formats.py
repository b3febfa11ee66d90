"""The output formats are declared once (cqlsh_ext.settings.output_formats), without a server."""

from __future__ import annotations

from cqlsh_ext.output import writers
from cqlsh_ext.settings import MACHINE_FORMATS, OUTPUT_FORMATS
from cqlsh_ext.settings.output_formats import DECLARED, for_layout, output_format


def test_the_declarations_are_the_names_users_give():
    assert tuple(fmt.name for fmt in DECLARED) == OUTPUT_FORMATS
    assert tuple(fmt.name for fmt in DECLARED if fmt.machine) == MACHINE_FORMATS
    assert [output_format(name).name for name in OUTPUT_FORMATS] == list(OUTPUT_FORMATS)


def test_a_layout_is_cqlshs_expand_and_each_machine_format_has_one_writer():
    assert for_layout(False).name == "table"
    assert for_layout(True).name == "vertical"
    assert sorted(writers.WRITERS) == sorted(MACHINE_FORMATS)
    for name, writer in writers.WRITERS.items():
        assert hasattr(writer, "write_rows") and hasattr(writer, "finish"), name


def test_reports_are_json_only_where_a_format_says_so():
    assert [fmt.name for fmt in DECLARED if fmt.reports_as_json] == ["json"]
