"""The settings of one cqlsh-ext run, built once by `load()` from three sources.

Later sources win: built-in defaults, the `[cqlsh_ext]` section of cqlshrc (cqlsh ignores sections
it does not know), then command-line flags; the environment gives the AWS region when nothing
else does. This module is the only reader of `[cqlsh_ext]`: every key, its parser and its default
are in KEYS below, and every problem is a SettingError whose text is one line naming the file,
the key and what is accepted (a cqlshrc that cannot be parsed at all included).

The AWS region may still come from the environment (AWS_REGION) when the connection is made:
cqlsh_ext.keyspaces.options.env_region. The shell receives the object through its per-run class
(cqlsh_ext.shell.shell_class), so the sub-shells cqlsh builds for SOURCE and LOGIN share it.
`display` may change during a session (DECOMPRESS, OUTPUT); the rest is fixed once it starts.
"""

from __future__ import annotations

import configparser
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cqlsh_ext.codecs.base import CODEC_NAMES, DEFAULT_CAP

CONFIG_SECTION = "cqlsh_ext"
#: `keyspace.table.column = spec` lines: what a column holds (cqlsh_ext.payload.spec).
DECODE_SECTION = "cqlsh_ext.decode"
AUTO = "auto"
NONE = "none"
MODES = (AUTO, NONE, *CODEC_NAMES)
#: Terminal cells are cut here by default (pgcli's max_field_width); scripts get whole values.
DEFAULT_MAX_FIELD_WIDTH = 500
#: --output-format / OUTPUT FORMAT values; json and csv are the machine-readable ones (cqlsh_ext.output).
OUTPUT_FORMATS = ("table", "vertical", "json", "csv")
MACHINE_FORMATS = ("json", "csv")
#: Interactive shell: how a cell too wide for its share of the screen is shown (--cells).
CELL_MODES = ("cut", "wrap")


class SettingError(ValueError):
    """A setting has a value we cannot use; str() is the one-line message for the user."""


# ------------------------------------------------------------------ value parsers (one per kind)


def parse_mode(text: str) -> str:
    """Normalise a -d / DECOMPRESS / cqlshrc value; 'off' is accepted as 'none'."""
    mode = text.strip().lower()
    if mode == "off":
        mode = NONE
    if mode not in MODES:
        raise SettingError(f"unknown decompression mode {text!r}; valid: {', '.join(MODES)}")
    return mode


_SIZE_UNITS = {"": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
               "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}


def parse_size(text: str) -> int:
    """'4MiB', '512k', '1048576' -> bytes."""
    raw = text.strip().lower().replace(" ", "")
    digits = raw.rstrip("kmgib")
    try:
        value = int(digits) * _SIZE_UNITS[raw[len(digits):]]
    except (KeyError, ValueError):
        raise SettingError(f"not a size: {text!r} (examples: 4MiB, 512KiB, 1048576)") from None
    if value <= 0:
        raise SettingError(f"size must be positive: {text!r}")
    return value


def parse_output_format(text: str) -> str:
    fmt = text.strip().lower()
    if fmt not in OUTPUT_FORMATS:
        raise SettingError(f"unknown output format {text!r}; valid: {', '.join(OUTPUT_FORMATS)}")
    return fmt


def parse_cells(text: str) -> str:
    mode = text.strip().lower()
    if mode not in CELL_MODES:
        raise SettingError(f"unknown cell mode {text!r}; valid: {', '.join(CELL_MODES)}")
    return mode


def parse_bool(text: str) -> bool:
    # The words configparser accepts for booleans, so cqlshrc reads the same in every section.
    value = configparser.RawConfigParser.BOOLEAN_STATES.get(text.strip().lower())
    if value is None:
        raise SettingError(f"not a boolean: {text!r} (true/false, on/off, yes/no, 1/0)")
    return value


def parse_width(text: str) -> int:
    try:
        width = int(text)
    except ValueError:
        raise SettingError(f"not a field width: {text!r} (a number of characters, 0 for no limit)") from None
    if width < 0:
        raise SettingError(f"field width must be 0 (no limit) or more: {text!r}")
    return width


def parse_pager(text: str) -> str:
    """A pager command; off/false/no/none (or empty) turn the pager off ('')."""
    pager = text.strip()
    return "" if pager.lower() in ("", "off", "false", "no", "none") else pager


def parse_column_spec(text: str) -> str:
    """A column's spec (cqlsh_ext.payload.spec), checked; kept as its text."""
    from cqlsh_ext.payload.spec import SpecError, parse_spec

    try:
        return str(parse_spec(text))
    except SpecError as err:
        raise SettingError(str(err)) from None


def parse_place(text: str) -> str:
    """`keyspace.table.column` (or `table.column`), with a path below it for nested blobs."""
    place = text.strip()
    parts = place.split(".")
    if len(parts) < 2 or not all(part.strip() for part in parts):
        raise SettingError(f"not a column: {text!r} (keyspace.table.column or table.column)")
    return place


def parse_text(text: str) -> str | None:
    return text.strip() or None


#: us-east-1, eu-central-2, us-gov-west-1, cn-northwest-1, ap-southeast-5 ...
REGION_RE = re.compile(r"^[a-z]{2}(?:-[a-z]+)+-\d+$")


def parse_region(text: str, source: str = "region") -> str:
    region = text.strip()
    if not REGION_RE.match(region):
        raise SettingError(f"{source}: {region!r} is not an AWS region name (for example us-east-1)")
    return region


# ------------------------------------------------------------------ the settings


@dataclass
class DisplaySettings:
    """How results look; DECOMPRESS and OUTPUT change these during a session."""

    mode: str = AUTO
    #: Cumulative decompressed bytes per value, over all nested layers.
    cap: int = DEFAULT_CAP
    #: Characters per table cell on a terminal; 0 means no limit. None: decide by terminal or not.
    max_field_width: int | None = None
    #: table | vertical | json | csv (cqlsh_ext.output); OUTPUT FORMAT changes it at run time.
    output_format: str = "table"
    #: JSON/CSV output: also the stored bytes of every blob (JSON) or only them (CSV).
    raw_blobs: bool = False
    #: Interactive front end (cqlsh_ext.repl): False = prompt_toolkit, True = cqlsh's readline loop.
    classic: bool = False
    #: Interactive: a result wider than the terminal is shown vertically, as with EXPAND ON, when
    #: its cells cannot fit even cut (cqlsh_ext.output.layout).
    auto_vertical: bool = True
    #: Interactive: cells too wide for their share of the screen are cut with … or wrapped.
    cells: str = "cut"
    #: What columns hold, by place (`ks.table.column` -> spec text); DECODE changes it.
    columns: dict[str, str] = field(default_factory=dict)
    #: Interactive: pager command for results taller than the terminal; None = $PAGER or
    #: `less -SRXF`, "" = no pager.
    pager: str | None = None

    def effective_width(self, interactive: bool) -> int:
        if self.max_field_width is not None:
            return self.max_field_width
        return DEFAULT_MAX_FIELD_WIDTH if interactive else 0


@dataclass
class KeyspacesOptions:
    """Amazon Keyspaces, SigV4 and TLS (cqlsh_ext.keyspaces); `active` is False for plain cqlsh."""

    keyspaces: bool = False
    sigv4: bool = False
    region: str | None = None
    profile: str | None = None
    role_arn: str | None = None
    certfile: str | None = None
    #: cqlshrc's [auth_provider] names cassandra_sigv4 (the stock form): only errors are translated.
    stock_sigv4_provider: bool = False
    #: cqlsh arguments a flag of ours gave back: `--keyspaces 127.0.0.1` names a host, not a region.
    give_back: list[str] = field(default_factory=list)

    @property
    def wants_sigv4(self) -> bool:
        """SigV4 was asked for explicitly (with --keyspaces it is also the default without -u)."""
        return self.sigv4 or bool(self.profile) or bool(self.role_arn)

    @property
    def tls(self) -> bool:
        return self.keyspaces or bool(self.certfile)

    @property
    def active(self) -> bool:
        return self.keyspaces or self.wants_sigv4 or self.tls or self.stock_sigv4_provider


@dataclass
class Settings:
    display: DisplaySettings = field(default_factory=DisplaySettings)
    keyspaces: KeyspacesOptions = field(default_factory=KeyspacesOptions)
    #: The cqlshrc file the settings were read from (cqlsh's own CONFIG_FILE).
    config_file: str | None = None
    #: --debug was given: connection errors keep their tracebacks.
    debug: bool = False


@dataclass(frozen=True)
class Key:
    """A [cqlsh_ext] key: its parser, and where the value goes (group, attribute)."""

    parse: Callable[[str], Any]
    group: str
    attr: str
    #: The flag that sets the same thing (documentation and messages).
    flag: str | None = None


def _keyspaces_value(text: str) -> tuple[bool, str | None]:
    """`keyspaces = true | false | <region>`."""
    word = text.strip().lower()
    if word in configparser.RawConfigParser.BOOLEAN_STATES:
        return parse_bool(word), None
    return True, parse_region(text, "keyspaces")


#: Every [cqlsh_ext] key. The sample section (cqlsh-ext sample-config) documents each of them.
KEYS: dict[str, Key] = {
    "decompress": Key(parse_mode, "display", "mode", "-d/--decompress"),
    "max_output_size": Key(parse_size, "display", "cap", "--max-output-size"),
    "max_field_width": Key(parse_width, "display", "max_field_width", "--max-field-width"),
    "output_format": Key(parse_output_format, "display", "output_format", "--output-format"),
    "raw_blobs": Key(parse_bool, "display", "raw_blobs", "--raw-blobs"),
    "classic": Key(parse_bool, "display", "classic", "--classic"),
    "auto_vertical": Key(parse_bool, "display", "auto_vertical"),
    "cells": Key(parse_cells, "display", "cells", "--cells"),
    "pager": Key(parse_pager, "display", "pager"),
    "keyspaces": Key(_keyspaces_value, "keyspaces", "keyspaces", "--keyspaces"),
    "sigv4": Key(parse_bool, "keyspaces", "sigv4", "--sigv4"),
    "region": Key(parse_region, "keyspaces", "region", "--region"),
    "profile": Key(parse_text, "keyspaces", "profile", "--profile"),
    "role_arn": Key(parse_text, "keyspaces", "role_arn", "--role-arn"),
    "certfile": Key(lambda t: os.path.expanduser(t.strip()) or None, "keyspaces", "certfile", "--certfile"),
}


def read_cqlshrc(path: str | None) -> configparser.RawConfigParser:
    """cqlshrc parsed (a missing file reads as empty); one-line SettingError when it cannot be."""
    parser = configparser.RawConfigParser()
    if not path:
        return parser
    try:
        parser.read(path)
    except configparser.Error as err:
        first = str(err).splitlines()[0].rstrip(":")
        raise SettingError(f"{path}: cannot be read as an ini file: {first}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise SettingError(f"{path}: cannot be read: {err}") from None
    return parser


def _apply(settings: Settings, key: str, value: Any) -> None:
    spec = KEYS[key]
    group = getattr(settings, spec.group)
    if key == "keyspaces":
        group.keyspaces, region = value
        if region:
            group.region = region
        return
    setattr(group, spec.attr, value)


def load(flags: Any = None, config_file: str | None = None) -> Settings:
    """The run's settings from cqlshrc's [cqlsh_ext], then `flags` (cqlsh_ext.cli's namespace).

    Returns the settings; cqlsh's own arguments that a flag of ours gave back (`--keyspaces
    127.0.0.1` names a host, not a region) are in `settings.keyspaces.give_back`.
    """
    settings = Settings(config_file=config_file)
    config = read_cqlshrc(config_file)
    if config.has_section(CONFIG_SECTION):
        for key, text in config.items(CONFIG_SECTION):
            if key not in KEYS:
                known = ", ".join(KEYS)
                raise SettingError(f"{config_file} [{CONFIG_SECTION}]: unknown key {key!r} (known: {known})")
            try:
                _apply(settings, key, KEYS[key].parse(text))
            except SettingError as err:
                raise SettingError(f"{config_file} [{CONFIG_SECTION}] {key}: {err}") from None
    if config.has_section(DECODE_SECTION):
        for place, text in config.items(DECODE_SECTION):
            try:
                settings.display.columns[parse_place(place)] = parse_column_spec(text)
            except SettingError as err:
                raise SettingError(f"{config_file} [{DECODE_SECTION}] {place}: {err}") from None
    if config.has_section("auth_provider"):
        module = config["auth_provider"].get("module", "")
        settings.keyspaces.stock_sigv4_provider = module.strip().startswith("cassandra_sigv4")
    if flags is not None:
        _apply_flags(settings, flags)
    return settings


def _apply_flags(settings: Settings, flags: Any) -> None:
    display, ks = settings.display, settings.keyspaces
    # The display flags are named as their [cqlsh_ext] keys and parsed by the same parsers (KEYS);
    # a store_true flag arrives as True.
    for key, spec in KEYS.items():
        value = getattr(flags, key, None)
        if spec.group != "display" or value is None:
            continue
        try:
            setattr(display, spec.attr, True if value is True else spec.parse(value))
        except SettingError as err:
            raise SettingError(f"--{key.replace('_', '-')}: {err}") from None
    for item in getattr(flags, "decode", None) or ():
        place, sep, text = item.partition("=")
        if not sep:
            raise SettingError(f"--decode {item!r}: expected keyspace.table.column=SPEC (example: "
                               "shop.orders.body=zstd>msgpack)")
        try:
            display.columns[parse_place(place)] = parse_column_spec(text)
        except SettingError as err:
            raise SettingError(f"--decode {place.strip()}: {err}") from None
    settings.debug = bool(getattr(flags, "debug", False))
    _apply_keyspaces_flags(ks, flags)


def _apply_keyspaces_flags(opts: KeyspacesOptions, ext: Any) -> None:
    """Flags over what cqlshrc set. A `--keyspaces` value that is not a region names a host and
    goes back to cqlsh (opts.give_back)."""
    if ext.keyspaces is not None:
        opts.keyspaces = True
        value = ext.keyspaces.strip()
        if REGION_RE.match(value):
            opts.region = value
        elif value:
            opts.give_back.append(value)
    if ext.sigv4:
        opts.sigv4 = True
    if ext.region:
        flag_region = parse_region(ext.region, "--region")
        if ext.keyspaces and REGION_RE.match(ext.keyspaces.strip()) and ext.keyspaces.strip() != flag_region:
            raise SettingError(f"--keyspaces {ext.keyspaces} and --region {flag_region} disagree: "
                               "give the region once")
        opts.region = flag_region
    opts.profile = ext.profile or opts.profile
    opts.role_arn = ext.role_arn or opts.role_arn
    opts.certfile = ext.certfile or opts.certfile
    if opts.certfile:
        opts.certfile = os.path.expanduser(opts.certfile)
