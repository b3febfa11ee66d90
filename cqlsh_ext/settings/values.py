"""What a setting's text may be: the accepted values and one parser per kind of value, each
raising SettingError with the one line the user sees (cqlsh_ext.settings declares which setting
uses which)."""

from __future__ import annotations

import configparser
import os
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from cqlsh_ext.codecs.base import CODEC_NAMES
from cqlsh_ext.common.net import is_loopback
from cqlsh_ext.common.text import unknown
from cqlsh_ext.settings.output_formats import DECLARED, OutputFormat

CONFIG_SECTION = "cqlsh_ext"
#: `keyspace.table.column = spec` lines: what a column holds (cqlsh_ext.payload.spec).
DECODE_SECTION = "cqlsh_ext.decode"
AUTO = "auto"
NONE = "none"
MODES = (AUTO, NONE, *CODEC_NAMES)
#: Terminal cells are cut here by default (pgcli's max_field_width); scripts get whole values.
DEFAULT_MAX_FIELD_WIDTH = 500
#: --output-format / OUTPUT FORMAT values, the default first; the machine-readable ones have a writer.
OUTPUT_FORMATS = tuple(fmt.name for fmt in DECLARED)
MACHINE_FORMATS = tuple(fmt.name for fmt in DECLARED if fmt.machine)
#: Interactive shell: how a cell too wide for its share of the screen is shown (--cells).
CELL_MODES = ("cut", "wrap")
#: What an OAuth token of `cqlsh-ext mcp --http` may be signed with: asymmetric algorithms only
#: (`none` signs nothing; an HS* key is a shared secret, which a set of public keys never holds).
JWS_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")


class SettingError(ValueError):
    """A setting has a value we cannot use; str() is the one-line message for the user."""


# ------------------------------------------------------------------ value parsers (one per kind)


def parse_mode(text: str) -> str:
    """Normalise a -d / DECOMPRESS / cqlshrc value; 'off' is accepted as 'none'."""
    mode = text.strip().lower()
    if mode == "off":
        mode = NONE
    if mode not in MODES:
        raise SettingError(unknown("decompression mode", text.strip(), MODES))
    return mode


_SIZE_UNITS = {"": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
               "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}
_DURATION_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def _amount(text: str, number: Callable[[str], float], letters: str, units: dict[str, int], what: str,
            examples: str) -> float:
    """A positive number of `units` (its suffix made of `letters`: none is its first unit) -> how many;
    `what` names it in the one line that refuses it (`not a ...`, `... must be positive`)."""
    raw = text.strip().lower().replace(" ", "")
    digits = raw.rstrip(letters)
    try:
        value = number(digits) * units[raw[len(digits):]]
    except (KeyError, ValueError):
        raise SettingError(f"not a {what}: {text!r} (examples: {examples})") from None
    if not 0 < value < float("inf"):
        raise SettingError(f"{what.removeprefix('number of ')} must be positive: {text!r}")
    return value


def parse_size(text: str) -> int:
    """'4MiB', '512k', '1048576' -> bytes."""
    return int(_amount(text, int, "kmgib", _SIZE_UNITS, "size", "4MiB, 512KiB, 1048576"))


def parse_duration(text: str) -> float:
    """'90', '30m', '1h', '2d' -> seconds."""
    return float(_amount(text, int, "smhd", _DURATION_UNITS, "duration", "90, 30m, 1h, 2d"))


def parse_seconds(text: str) -> float:
    """'30', '2.5', '45s', '2m' -> seconds (a fraction allowed, unlike parse_duration's)."""
    return _amount(text, float, "smh", _DURATION_UNITS, "number of seconds", "30, 2.5, 2m")


def parse_count(text: str) -> int:
    """A whole number of 1 or more (rows)."""
    try:
        value = int(text.strip())
    except ValueError:
        raise SettingError(f"not a whole number: {text!r} (1 or more)") from None
    if value < 1:
        raise SettingError(f"must be 1 or more: {text!r}")
    return value


def parse_output_format(text: str) -> OutputFormat:
    """The declaration of the output format `text` names."""
    name = text.strip().lower()
    for fmt in DECLARED:
        if fmt.name == name:
            return fmt
    from cqlsh_ext.common.text import unknown

    raise SettingError(unknown("output format", text, list(OUTPUT_FORMATS)))


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


def parse_encoding(text: str) -> str:
    """A codec name Python knows: what cqlsh writes its output in (--encoding, cqlshrc's [ui] encoding)."""
    import codecs

    try:
        codecs.lookup(text)
    except LookupError:
        raise SettingError(f"unknown encoding: {text!r} (a Python codec name: utf-8, latin-1, ...)") from None
    return text


def _whole_number(text: str) -> int:
    try:
        return int(text)  # as configparser's getint reads it
    except ValueError:
        raise SettingError(f"not a whole number: {text!r}") from None


def _number(text: str) -> float:
    try:
        return float(text)  # as configparser's getfloat reads it
    except ValueError:
        raise SettingError(f"not a number: {text!r}") from None


#: cqlsh's own cqlshrc keys that it reads as a number, a boolean or a codec name (cqlshlib's
#: read_options, and its Shell the encoding), by (section, key): a value it cannot read ended the
#: run with a traceback, or an encoding with 'Connection error', before anything ran.
CQLSH_TYPED_KEYS: dict[tuple[str, str], Callable[[str], object]] = {
    ("ui", "color"): parse_bool, ("ui", "tty"): parse_bool, ("connection", "ssl"): parse_bool,
    ("history", "disabled"): parse_bool,
    ("ui", "float_precision"): _whole_number, ("ui", "double_precision"): _whole_number,
    ("csv", "field_size_limit"): _whole_number, ("protocol", "version"): _whole_number,
    ("connection", "timeout"): _whole_number, ("connection", "request_timeout"): _whole_number,
    ("tracing", "max_trace_wait"): _number,
    ("ui", "encoding"): parse_encoding,
}


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
    """An AWS region name; the message starts with `source:` unless it is empty."""
    region = text.strip()
    if not REGION_RE.match(region):
        prefix = f"{source}: " if source else ""
        raise SettingError(f"{prefix}{region!r} is not an AWS region name (for example us-east-1)")
    return region


_AWS_DOMAINS = ("amazonaws.com", "amazonaws.com.cn", "api.aws")


def region_from_host(host: str) -> str | None:
    """The region in a Keyspaces endpoint name, in all its common forms.

    cassandra.us-east-1.amazonaws.com, cassandra-fips.us-gov-west-1.amazonaws.com,
    cassandra.cn-north-1.amazonaws.com.cn, cassandra.eu-west-1.api.aws (dual-stack),
    vpce-0abc-123.cassandra.us-east-1.vpce.amazonaws.com (VPC endpoint).
    """
    name = host.strip().rstrip(".").lower()
    if not any(name.endswith("." + domain) for domain in _AWS_DOMAINS):
        return None
    labels = name.split(".")
    for i, label in enumerate(labels[1:], start=1):
        if REGION_RE.match(label) and re.fullmatch(r"cassandra(-fips)?", labels[i - 1]):
            return label
    return None


# ------------------------------------------------------------------ the settings


class KeyspacesValue(NamedTuple):
    """`keyspaces = true | false | REGION` in cqlshrc; `--keyspaces [REGION | HOST]` on the command line."""

    on: bool
    region: str | None = None
    #: `--keyspaces 127.0.0.1` names a host: it goes back to cqlsh (KeyspacesOptions.give_back).
    host: str | None = None


def _keyspaces_value(text: str) -> KeyspacesValue:
    """`keyspaces = true | false | <region>`."""
    word = text.strip().lower()
    if word in configparser.RawConfigParser.BOOLEAN_STATES:
        return KeyspacesValue(parse_bool(word))
    return KeyspacesValue(True, parse_region(text, "keyspaces"))


def _keyspaces_flag(text: str) -> KeyspacesValue:
    """`--keyspaces`, `--keyspaces REGION` or `--keyspaces HOST` (a value that is not a region)."""
    value = text.strip()
    if REGION_RE.match(value):
        return KeyspacesValue(True, value)
    return KeyspacesValue(True, host=value or None)


def _flag_region(text: str) -> str | None:
    return parse_region(text, "") if text else None


def _flag_text(text: str) -> str | None:
    return text or None


def parse_path(text: str) -> str | None:
    return os.path.expanduser(text.strip()) or None


_TABLE_RE = re.compile(r"^[A-Za-z0-9_]+\.[A-Za-z0-9_]+$")


def parse_table(text: str) -> str | None:
    """`keyspace.table` (unquoted names), or None for an empty text."""
    name = text.strip()
    if name and not _TABLE_RE.match(name):
        raise SettingError(f"not a keyspace.table name: {name!r}")
    return name or None


def parse_paths(text: str) -> tuple[str, ...]:
    """`FILE, FILE`: files, ~ expanded (an empty text names none)."""
    return tuple(os.path.expanduser(p.strip()) for p in text.split(",") if p.strip())


def _flag_paths(given: Any) -> tuple[str, ...]:
    """A repeatable flag's files (`--dictionary A --dictionary B`: argparse's list), each one file."""
    return tuple(os.path.expanduser(p) for p in given if p)


def _flag_path(text: str) -> str | None:
    return os.path.expanduser(text) if text else None


def parse_url(text: str) -> str | None:
    """An https URL, kept as written (an issuer is compared with a token's `iss` exactly); http only
    on a loopback address (an identity provider on this machine). None for an empty text."""
    from urllib.parse import urlsplit

    url = text.strip()
    if not url:
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        host, parts = "", None
    if parts is None or not host or parts.scheme not in ("https", "http") or parts.fragment:
        raise SettingError(f"not a URL: {url!r} (https://HOST/PATH)")
    if parts.scheme == "http" and not is_loopback(host):
        raise SettingError(f"{url}: https is needed (http only on a loopback address)")
    return url


def parse_keys_source(text: str) -> str | None:
    """Where an issuer's public keys (a JWKS) are: an https URL (parse_url), or a file (~ expanded)."""
    source = text.strip()
    if "://" in source:
        return parse_url(source)
    return parse_path(source)


def parse_algorithms(text: str) -> tuple[str, ...]:
    """`RS256, ES256`: signing algorithms a token may use, each one of JWS_ALGORITHMS."""
    names = [name for name in re.split(r"[,\s]+", text.strip()) if name]
    if not names:
        raise SettingError("no signing algorithm named (e.g. RS256, ES256)")
    for name in names:
        if name.lower() == "none":
            raise SettingError("'none' signs nothing: a token must be signed (e.g. RS256, ES256)")
        if name.upper().startswith("HS"):
            raise SettingError(f"{name} signs with a shared secret: tokens are checked against the issuer's "
                               "public keys (RS256, ES256, ...)")
        if name not in JWS_ALGORITHMS:
            raise SettingError(unknown("signing algorithm", name, JWS_ALGORITHMS))
    return tuple(dict.fromkeys(names))
