"""Display settings of cqlsh-ext: decompression mode, output cap, field width.

They come from three places, later ones winning: built-in defaults, the `[cqlsh_ext]` section of
cqlshrc (cqlsh ignores sections it does not know), and command-line flags. The shell's DECOMPRESS
command changes the mode at run time.
"""

from __future__ import annotations

import configparser
from dataclasses import dataclass

from cqlsh_ext.codecs.base import CODEC_NAMES, DEFAULT_CAP

CONFIG_SECTION = "cqlsh_ext"
AUTO = "auto"
NONE = "none"
MODES = (AUTO, NONE, *CODEC_NAMES)
#: Terminal cells are cut here by default (pgcli's max_field_width); scripts get whole values.
DEFAULT_MAX_FIELD_WIDTH = 500
#: --output-format / OUTPUT FORMAT values; json and csv are the machine-readable ones (cqlsh_ext.output).
OUTPUT_FORMATS = ("table", "vertical", "json", "csv")


class SettingError(ValueError):
    """A setting has a value we cannot use; str() is the one-line message for the user."""


def parse_mode(text: str) -> str:
    """Normalise a -d / DECOMPRESS / cqlshrc value; 'off' is accepted as 'none'."""
    mode = text.strip().lower()
    if mode == "off":
        mode = NONE
    if mode not in MODES:
        raise SettingError(f"unknown decompression mode {text!r}; valid: {', '.join(MODES)}")
    return mode


def parse_size(text: str) -> int:
    """'4MiB', '512k', '1048576' -> bytes."""
    units = {
        "": 1,
        "k": 1024,
        "kb": 1024,
        "kib": 1024,
        "m": 1024**2,
        "mb": 1024**2,
        "mib": 1024**2,
        "g": 1024**3,
        "gb": 1024**3,
        "gib": 1024**3,
    }
    raw = text.strip().lower().replace(" ", "")
    digits = raw.rstrip("kmgib")
    try:
        value = int(digits) * units[raw[len(digits) :]]
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


@dataclass
class DisplaySettings:
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
    #: Interactive: a result wider than the terminal is shown vertically, as with EXPAND ON.
    auto_vertical: bool = True
    #: Interactive: pager command for results taller than the terminal; None = $PAGER or
    #: `less -SRXF`, "" = no pager.
    pager: str | None = None

    def effective_width(self, interactive: bool) -> int:
        if self.max_field_width is not None:
            return self.max_field_width
        return DEFAULT_MAX_FIELD_WIDTH if interactive else 0


def read_config(path: str) -> DisplaySettings:
    """Settings from the [cqlsh_ext] section of a cqlshrc file (missing file or section: defaults)."""
    settings = DisplaySettings()
    parser = configparser.RawConfigParser()
    parser.read(path)
    if not parser.has_section(CONFIG_SECTION):
        return settings
    section = parser[CONFIG_SECTION]
    try:
        if "decompress" in section:
            settings.mode = parse_mode(section["decompress"])
        if "max_output_size" in section:
            settings.cap = parse_size(section["max_output_size"])
        if "max_field_width" in section:
            settings.max_field_width = parse_width(section["max_field_width"])
        if "output_format" in section:
            settings.output_format = parse_output_format(section["output_format"])
        for name in ("raw_blobs", "classic", "auto_vertical"):
            if name in section:
                setattr(settings, name, parse_bool(section[name]))
        if "pager" in section:
            pager = section["pager"].strip()
            settings.pager = "" if pager.lower() in ("off", "false", "no", "none") else pager
    except SettingError as err:
        raise SettingError(f"{path} [{CONFIG_SECTION}]: {err}") from None
    return settings
