"""The cqlsh 6.2 internals cqlsh-ext relies on (cqlsh_ext/seams.py) are still where we expect them.

These fail first, and say what moved, when the pinned cqlsh is upgraded.
"""

from __future__ import annotations

import inspect
import subprocess
import sys

from cqlsh_ext import seams

cqlshmain = seams.import_cqlshmain(None)


def test_pinned_cqlsh_version():
    assert cqlshmain.version.startswith(seams.CQLSH_VERSION_PIN)


def test_importing_cqlshmain_ignores_our_command_line():
    # cqlsh parses sys.argv at import time: --help there would exit before our parser ran.
    code = (
        "import sys; sys.argv = ['cqlsh-ext', '--help', '-d', 'snappy'];"
        "from cqlsh_ext import seams; m = seams.import_cqlshmain(None); print('imported', m.version)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith("imported 6.2")


def test_shell_is_looked_up_as_a_module_global():
    assert "Shell(" in inspect.getsource(cqlshmain.main)
    assert hasattr(cqlshmain, "Shell")


def test_blob_formatter_registry_and_swap():
    from cqlshlib import formatting

    original = formatting._formatters["blob"]
    marker = object()
    with seams.blob_formatter_swapped(lambda *a, **k: marker):
        assert formatting.CqlType("list<blob>").sub_types[0].formatter() is marker
    assert formatting._formatters["blob"] is original
    assert formatting.CqlType("blob").formatter is original


def test_special_command_rule_shape():
    from cqlshlib import cqlshhandling

    rule = cqlshhandling.cqlsh_special_cmd_command_syntax_rules
    assert "<specialCommand> ::=" in rule and rule.rstrip().endswith(";")


def test_overridden_shell_methods_exist_with_their_signatures():
    expected = {
        "print_static_result": ["self", "result", "table_meta", "with_header", "tty", "row_count_offset"],
        "print_formatted_result_vertically": [
            "self",
            "formatted_names",
            "formatted_values",
            "row_count_offset",
        ],
        "print_result": ["self", "result", "table_meta"],
        "myformat_value": ["self", "val", "cqltype", "kwargs"],
        "check_build_versions": ["self"],
        "print_warnings": ["self", "warnings"],
        "cmdloop": ["self", "intro"],
        "do_describe": ["self", "parsed"],
        "do_copy": ["self", "parsed"],
    }
    for name, params in expected.items():
        method = getattr(cqlshmain.Shell, name)
        assert list(inspect.signature(method).parameters) == params, name


def test_text_helpers_and_colormaps():
    color_text, controls, show = seams.text_formatting()
    assert controls.sub(show, "a\tb") == "a\\tb"
    assert color_text("x", seams.value_colormap(False)).strval == "x"
    assert seams.value_colormap(True)["blob"]
    assert hasattr(cqlshmain, "readline")
