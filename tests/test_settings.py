"""Every setting is one Key (cqlsh_ext.settings.SETTINGS); what is made from it follows it."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import options_table
import pytest

from cqlsh_ext import cli
from cqlsh_ext.keyspaces import options
from cqlsh_ext.mcp_server import cli as mcp_cli
from cqlsh_ext.settings import KEYS, SETTINGS, Key, SettingError, Settings, load, sample_config

FLAGGED = [key for key in SETTINGS if key.flags]


def test_options_doc_table_is_the_declarations():
    lines = options_table.OPTIONS_DOC.read_text(encoding="utf-8").splitlines()
    start, end = options_table.table_span(lines)
    assert lines[start:end] == sample_config.options_table(), "run tools/options_table.py"
    assert len(lines[start:end]) == len(SETTINGS) + 2


def test_every_declaration_is_complete():
    names = [key.name for key in SETTINGS]
    assert len(names) == len(set(names))
    for key in SETTINGS:
        assert key.group in ("display", "keyspaces", "mcp", "agent")
        assert hasattr(getattr(Settings(), key.group), key.attr)
        assert key.summary, key.name
        if key.flag_only:  # a run's own flag: no cqlshrc key, so nothing for the sample to say
            assert key.flags and key.name not in KEYS, key.name
            assert f";{key.name} =" not in sample_config.sample(), key.name
            continue
        assert key.doc, key.name
        assert key.example or key.default is not None, f"{key.name}: nothing to show in the sample"
        if key.flags:
            assert key.help and key.flags[-1].startswith("--"), key.name
            assert (key.metavar is None) == (key.takes == "switch"), key.name
        else:
            assert not key.help and key.parse_flag is None, key.name


@pytest.mark.parametrize("key", [key for key in SETTINGS if key.default is not None], ids=lambda k: k.name)
def test_declared_default_is_the_dataclass_default(key: Key):
    settings = Settings()
    key.put(settings, key.parse(key.default or ""))
    assert settings == Settings()


def _parser(key: Key) -> argparse.ArgumentParser:
    """The parser of the command whose flag it is: `cqlsh-ext mcp`'s for the mcp group's, the shell's else."""
    return mcp_cli._parser() if key.group == "mcp" else cli._ext_parser()


def test_every_flag_is_a_declaration_and_its_dest_is_the_key():
    parser = cli._ext_parser()
    ours = {action.dest: action.option_strings for action in parser._actions}
    assert ours == {key.name: list(key.flags) for key in FLAGGED if key.group != "mcp"}
    served = {action.dest: action.option_strings for action in mcp_cli._parser()._actions}
    assert {key.name: list(key.flags) for key in FLAGGED if key.group == "mcp"}.items() <= served.items()
    keyspaces = argparse.ArgumentParser(add_help=False)
    options.add_arguments(keyspaces)
    assert {action.dest for action in keyspaces._actions} == \
        {key.name for key in FLAGGED if key.group == "keyspaces"}


def test_sample_reads_back_with_every_example(tmp_path: Path):
    text = sample_config.sample()
    rc = tmp_path / "cqlshrc"
    rc.write_text("\n".join(line[1:] if line.startswith(";") and not line.startswith("; ") else
                            line[2:] if line.startswith("; shop.") else line for line in text.splitlines()))
    settings = load(None, str(rc))
    for key in KEYS.values():
        expected = Settings()
        key.put(expected, key.parse(key.example or key.default or ""))
        assert getattr(getattr(settings, key.group), key.attr) == \
            getattr(getattr(expected, key.group), key.attr), key.name
    assert settings.display.columns == {"shop.orders.body": "zstd>msgpack", "shop.events.payload": "protobuf",
                                        "shop.orders.attachments.item": "gzip"}
    assert all(len(line) <= sample_config.WIDTH for line in text.splitlines())


def _flag_value(key: Key) -> list[str]:
    if key.takes == "switch":
        return [key.flags[-1]]
    value = {"decompress": "zstd", "max_output_size": "1KiB", "output_format": "json",
             "cells": "wrap", "keyspaces": "eu-west-3", "region": "eu-west-3",
             "mcp_oauth_algorithms": "ES256", "resume": "a-token"}.get(key.name, key.example)
    if key.section:
        value = value.splitlines()[0].replace(" ", "")
    return [key.flags[-1], value]


@pytest.mark.parametrize("key", FLAGGED, ids=lambda k: k.name)
def test_a_flag_wins_over_cqlshrc(tmp_path: Path, key: Key):
    """The flag's value, not the sample cqlshrc's, is what the run gets."""
    rc = tmp_path / "cqlshrc"
    rc.write_text("[cqlsh_ext]\ndecompress = snappy\nmax_output_size = 2MiB\nmax_field_width = 7\n"
                  "output_format = csv\ncells = cut\nraw_blobs = no\nclassic = no\nkeyspaces = us-west-2\n"
                  "sigv4 = no\nregion = us-west-2\nprofile = team\nrole_arn = arn:x\ncertfile = /ca.pem\n"
                  "[cqlsh_ext.decode]\nshop.orders.body = gzip\n")
    ext, _ = _parser(key).parse_known_args(_flag_value(key))
    with_flag, without = load(ext, str(rc)), load(None, str(rc))
    assert getattr(with_flag, key.group) != getattr(without, key.group), key.name


@pytest.mark.parametrize(("args", "message"), [
    (["-d", "bogus"], "--decompress: unknown decompression mode 'bogus'; valid: auto, none, "),
    (["--max-field-width", "x"], "--max-field-width: not a field width: 'x'"),
    (["--max-output-size", "0"], "--max-output-size: size must be positive: '0'"),
    (["--output-format", "xml"], "--output-format: unknown output format 'xml'"),
    (["--cells", "no"], "--cells: unknown cell mode 'no'; valid: cut, wrap"),
    (["--region", "us_east_1"], "--region: 'us_east_1' is not an AWS region name (for example us-east-1)"),
    (["--keyspaces", "us-east-1", "--region", "eu-west-1"],
     "--keyspaces us-east-1 and --region eu-west-1 disagree: give the region once"),
    (["--decode", "abc"], "--decode 'abc': expected keyspace.table.column=SPEC"),
    (["--decode", "a=gzip"], "--decode a: not a column: 'a'"),
])
def test_a_flag_that_cannot_be_used_is_named(args: list[str], message: str):
    ext, _ = cli._ext_parser().parse_known_args(args)
    with pytest.raises(SettingError) as err:
        load(ext, None)
    assert str(err.value).startswith(message)


def test_keyspaces_flag_values():
    def keyspaces(*args: str) -> tuple[bool, str | None, list[str]]:
        opts = load(cli._ext_parser().parse_known_args(list(args))[0], None).keyspaces
        return opts.keyspaces, opts.region, opts.give_back

    assert keyspaces() == (False, None, [])
    assert keyspaces("--keyspaces") == (True, None, [])
    assert keyspaces("--keyspaces", "eu-north-1") == (True, "eu-north-1", [])
    assert keyspaces("--keyspaces", "127.0.0.1") == (True, None, ["127.0.0.1"])
    assert keyspaces("--region", "") == (False, None, [])  # an empty flag changes nothing


def test_codec_names_in_texts_come_from_codec_names():
    """A codec added to CODEC_NAMES shows in --help, the sample and the options table by itself."""
    code = ("import cqlsh_ext.codecs.base as base\n"
            "base.CODEC_NAMES = (*base.CODEC_NAMES, 'newcodec')\n"
            "from cqlsh_ext import cli\nfrom cqlsh_ext.settings import sample_config\n"
            "from cqlsh_ext.settings import load\n"
            "print(cli._ext_parser().format_help().count('newcodec'),\n"
            "      sample_config.sample().count('newcodec'),\n"
            "      '\\n'.join(sample_config.options_table()).count('`newcodec`'))\n"
            "ext, _ = cli._ext_parser().parse_known_args(['-d', 'newcodec'])\n"
            "print(load(ext, None).display.mode)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["1", "1", "1", "newcodec"]
