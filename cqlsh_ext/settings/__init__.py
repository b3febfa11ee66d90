"""The settings of one cqlsh-ext run, built once by `load()` from three sources.

Later sources win: built-in defaults, the `[cqlsh_ext]` section of cqlshrc (cqlsh ignores sections
it does not know), then command-line flags; the environment gives the AWS region when nothing
else does. This module is the only reader of `[cqlsh_ext]`. Every setting is one `Key` in SETTINGS
below: its cqlshrc key, flag, parser, target, default and texts; the argparse flags (add_flags),
the sample cqlshrc (cqlsh_ext.settings.sample_config) and docs/options.md's table come from it. Every
problem is a SettingError whose text is one line naming the file, the key or the flag and what is
accepted (a cqlshrc that cannot be parsed at all included).

The AWS region may still come from the environment (AWS_REGION) when the connection is made:
cqlsh_ext.keyspaces.options.env_region. The shell receives the object through its per-run class
(cqlsh_ext.shell.ext_shell.shell_class), so the sub-shells cqlsh builds for SOURCE and LOGIN share it.
`display` may change during a session (DECOMPRESS, OUTPUT); the rest is fixed once it starts.
"""

from __future__ import annotations

import configparser
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from cqlsh_ext.codecs import dictionaries
from cqlsh_ext.codecs.base import CODEC_EXAMPLES, CODEC_NAMES, DEFAULT_CAP
from cqlsh_ext.codecs.dictionaries import ENVIRONMENT, environment_paths
from cqlsh_ext.common.file_formats import FILE_FORMATS, listed
from cqlsh_ext.payload.names import ARGUMENT_NAMES, EXAMPLE_SPEC, FORMAT_EXAMPLES, PAYLOAD_NAMES
from cqlsh_ext.settings.output_formats import DECLARED, OutputFormat

if TYPE_CHECKING:
    import argparse

    from cqlsh_ext.payload.places import Decoding

# The value parsers live in settings/values.py; those other packages read here are re-exported (__all__).
from cqlsh_ext.settings.values import (
    AUTO,
    CELL_MODES,
    CONFIG_SECTION,
    CQLSH_TYPED_KEYS,
    DECODE_SECTION,
    DEFAULT_MAX_FIELD_WIDTH,
    JWS_ALGORITHMS,
    MACHINE_FORMATS,
    MODES,
    NONE,
    OUTPUT_FORMATS,
    REGION_RE,
    KeyspacesValue,
    SettingError,
    _flag_path,
    _flag_paths,
    _flag_region,
    _flag_text,
    _keyspaces_flag,
    _keyspaces_value,
    parse_algorithms,
    parse_bool,
    parse_cells,
    parse_column_spec,
    parse_count,
    parse_duration,
    parse_keys_source,
    parse_mode,
    parse_output_format,
    parse_pager,
    parse_path,
    parse_paths,
    parse_place,
    parse_region,
    parse_seconds,
    parse_size,
    parse_table,
    parse_text,
    parse_url,
    parse_width,
    region_from_host,
)

__all__ = [
    "add_flags", "AgentSettings", "CONFIG_SECTION", "DisplaySettings", "FLAG_GROUPS", "Key", "KEYS",
    "KeyspacesOptions", "load", "load_dictionaries", "MACHINE_FORMATS", "McpSettings", "MODES", "NONE",
    "OUTPUT_FORMATS", "parse_algorithms", "parse_column_spec", "parse_mode", "parse_output_format",
    "parse_place", "parse_region", "parse_size", "parse_url", "read_cqlshrc", "region_from_host",
    "SettingError", "Settings", "SETTINGS", "Takes",
]


@dataclass
class DisplaySettings:
    """How results look; DECOMPRESS and OUTPUT change these during a session."""

    mode: str = AUTO
    #: Cumulative decompressed bytes per value, over all nested layers.
    cap: int = DEFAULT_CAP
    #: Characters per table cell on a terminal; 0 means no limit. None: decide by terminal or not.
    max_field_width: int | None = None
    #: The declaration of how results are printed (cqlsh_ext/settings/output_formats.py); OUTPUT
    #: FORMAT changes it at run time.
    output_format: OutputFormat = DECLARED[0]
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
    #: DEFAULT_PAGER, "" = no pager.
    pager: str | None = None
    #: Where edits keep their journals (cqlsh_ext.writing.journal); None: a `journal` directory beside
    #: the shell's history.
    journal_dir: str | None = None
    #: Dictionary files (zstd dictionaries, zlib preset dictionaries) read into the process's store
    #: (codecs.dictionaries) by load(): CQLSH_EXT_DICTIONARIES', cqlshrc's, then --dictionary's.
    dictionaries: tuple[str, ...] = ()
    #: A table whose blob values are dictionaries too, read once connected (scanning.dictionary_table).
    dictionary_table: str | None = None

    def decoding(self) -> Decoding:
        """How values decode in this session: -d's mode, the output cap, the column settings."""
        from cqlsh_ext.payload.places import Decoding

        return Decoding(self.mode, self.cap, dict(self.columns))

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
class McpSettings:
    """`cqlsh-ext mcp --http` as an OAuth 2.1 resource server (cqlsh_ext.mcp_server.oauth): whose
    tokens it takes, the keys they are signed with, the audience and the algorithms; and the `export`
    tool's directory (cqlsh_ext.mcp_server.exports). Its flags are `cqlsh-ext mcp`'s only, and the
    shell reads these keys of cqlshrc without using them."""

    #: The authorization server whose tokens are taken (their `iss`, exactly); None: OAuth is off.
    oauth_issuer: str | None = None
    #: Its public keys, a JWKS: a file, or an https URL.
    oauth_jwks: str | None = None
    #: The audience a token must name (`aud`); None: the resource URL.
    oauth_audience: str | None = None
    #: This server's URL as its clients reach it (the metadata's `resource`); None: the --http address's.
    oauth_resource: str | None = None
    #: The signing algorithms a token may use (a few of JWS_ALGORITHMS).
    oauth_algorithms: tuple[str, ...] = ("RS256", "ES256")
    #: Where the `export` tool writes its files (None: no export tool), how long each is kept (seconds)
    #: and how many bytes they hold in all at most (the oldest go first).
    export_dir: str | None = None
    export_max_age: float = 3600.0
    export_max_bytes: int = 1 << 30


@dataclass
class AgentSettings:
    """A run for a program or an assistant (docs/agents.md, cqlsh_ext.agent): the read-only switch
    and the policy it keeps to, each statement's time limit, the run's figures on standard error,
    the rows a SELECT prints at most and where a cut one goes on from."""

    #: Only reads run: what `cqlsh-ext mcp`'s gate lets through, the policy's tables refused.
    read_only: bool = False
    #: A policy file (`cqlsh-ext mcp`'s TOML): its tables never read; naming one turns read_only on.
    policy: str | None = None
    #: Seconds a statement may run; None: no limit.
    timeout: float | None = None
    #: The run's figures as one JSON object on standard error at its end.
    stats: bool = False
    #: Rows a SELECT prints at most; None: every row.
    max_rows: int | None = None
    #: Where the first SELECT goes on from (--stats' `resume` of a cut answer); never in cqlshrc.
    resume: str | None = None
    #: --spec: the command line as one JSON document; never in cqlshrc.
    spec: bool = False
    #: --catalog: the keyspaces, tables and columns (PATTERN's; "": every one outside the system's) as
    #: one JSON document instead of statements; None: not asked; never in cqlshrc.
    catalog: str | None = None
    #: --export-dir: with read_only, the directory COPY ... TO may write new files in (agent.export_dir).
    export_dir: str | None = None
    #: --serve NAME: hold a warm session of that name (agent.session_server); never in cqlshrc.
    serve: str | None = None
    #: --session NAME: run through the warm session NAME (agent.session_client); never in cqlshrc.
    session: str | None = None
    #: --session-status [NAME]: the running sessions as JSON ("": every one); never in cqlshrc.
    session_status: str | None = None
    #: --session-idle: seconds a warm session waits for a call before it ends; None: 900.
    session_idle: float | None = None


@dataclass
class Settings:
    display: DisplaySettings = field(default_factory=DisplaySettings)
    keyspaces: KeyspacesOptions = field(default_factory=KeyspacesOptions)
    mcp: McpSettings = field(default_factory=McpSettings)
    agent: AgentSettings = field(default_factory=AgentSettings)
    #: The cqlshrc file the settings were read from (cqlsh's own CONFIG_FILE).
    config_file: str | None = None
    #: --debug was given: connection errors keep their tracebacks.
    debug: bool = False


#: What a flag takes: a value (`--cells wrap`), nothing (`--classic`), a value or nothing
#: (`--keyspaces [REGION]`), or a `place=value` item, repeatable (`--decode`).
Takes = Literal["value", "switch", "optional", "repeat"]


class Key(NamedTuple):  # a NamedTuple, not a dataclass: cheaper to create at start-up
    """One setting, declared once: its cqlshrc key, flag, parser, target, default and texts.

    The argparse flags (add_flags), the sample cqlshrc (cqlsh_ext.settings.sample_config) and
    docs/options.md's table (tools/options_table.py, checked by tests/test_settings.py) are made
    from these.
    """

    #: The key in cqlshrc's [cqlsh_ext] section, and the flag's argparse dest.
    name: str
    #: Where the value goes: the Settings attribute (display | keyspaces | mcp), then its attribute.
    group: str
    attr: str
    #: cqlshrc text -> value; raises SettingError. Also the flag's parser, unless parse_flag.
    parse: Callable[[str], object]
    #: `-d`, `--decompress`: the long one, last, names the setting in messages. (): cqlshrc only.
    flags: tuple[str, ...] = ()
    metavar: str | None = None
    takes: Takes = "value"
    #: The flag's --help text.
    help: str = ""
    #: A flag's text -> value when it differs from cqlshrc's; None keeps what cqlshrc set.
    parse_flag: Callable[[str], object] | None = None
    #: Puts a parsed value into its group when setattr(group, attr, value) is not enough.
    store: Callable[[Any, Any], None] | None = None
    #: The default as cqlshrc text (tests check it parses to the dataclass default); None: unset.
    default: str | None = None
    #: docs/options.md: what happens without a value, when `default` is None.
    unset: str = ""
    #: The sample cqlshrc's value for the key (else `default`); for a section, its `place = value` lines.
    example: str = ""
    #: The sample cqlshrc's comment above the key: plain sentences, wrapped when printed.
    doc: str | Callable[[], str] = ""
    #: docs/options.md's table: the meaning column (Markdown).
    summary: str = ""
    #: Not one key but a cqlshrc section of `place = value` lines (and a repeatable flag).
    section: str | None = None
    #: A flag of one run only, never a cqlshrc key (--spec, --resume).
    flag_only: bool = False

    @property
    def flag(self) -> str | None:
        """The long flag, as messages name the setting."""
        return self.flags[-1] if self.flags else None

    def put(self, settings: Settings, value: object) -> None:
        group = getattr(settings, self.group)
        if self.store is not None:
            self.store(group, value)
        else:
            setattr(group, self.attr, value)


def _pattern(text: str) -> str:
    """--catalog's PATTERN: "" (the flag alone) names every keyspace outside the system's."""
    return text.strip()


def _store_keyspaces(opts: KeyspacesOptions, value: KeyspacesValue) -> None:
    opts.keyspaces = value.on
    if value.region:
        opts.region = value.region
    if value.host:
        opts.give_back.append(value.host)


def _add_dictionaries(display: DisplaySettings, paths: tuple[str, ...]) -> None:
    """Files add up: cqlshrc's and the flags' (each source names more, none takes any away)."""
    display.dictionaries = display.dictionaries + tuple(p for p in paths if p not in display.dictionaries)


def _decode_doc() -> str:
    return ("What blob columns hold, when it cannot be detected (DECODE in the shell, --decode on the "
            "command line): keyspace.table.column = codecs from the outside in, then the payload format "
            f"({', '.join(PAYLOAD_NAMES)}, or auto; {'; '.join(ARGUMENT_NAMES.values())}). A blob inside a "
            "collection or UDT is named by its path below the column: .item, .key, .value or the "
            "field's name.")


def _output_formats(quote: str = "") -> str:
    """The output formats for help texts, each with its declared note: 'a, b (note) or c'."""
    listed = [f"{quote}{fmt.name}{quote}" + (f" ({fmt.help})" if fmt.help else "") for fmt in DECLARED]
    return f"{', '.join(listed[:-1])} or {listed[-1]}"


_AWS_DOCS = "[keyspaces.md](keyspaces.md)"
_AGENTS_DOCS = "[agents.md](agents.md)"
_OAUTH_DOCS = "[mcp.md](mcp.md#oauth)"
_EXPORT_DOCS = "[mcp.md](mcp.md#big-answers-as-files)"

#: The interactive shell's pager when neither the setting nor $PAGER names one: less, chopping
#: long lines (-S), colours kept (-R), the screen left as it was (-X), quitting when it all fits
#: (-F) and at Ctrl-C (-K: the press answers at once, and the fetching stops).
DEFAULT_PAGER = "less -SRXFK"

#: Every setting, in the order --help, the sample cqlshrc and docs/options.md show them.
SETTINGS: tuple[Key, ...] = (
    Key("decompress", "display", "mode", parse_mode, ("-d", "--decompress"), "CODEC",
        help=f"how blobs are shown: {', '.join(MODES)} (default: auto, or [cqlsh_ext] decompress in "
             "cqlshrc). 'none' prints exactly what cqlsh prints",
        default=AUTO,
        doc="How blobs are shown: auto (detect the format), none (stock cqlsh hex), or one codec: "
            f"{', '.join(CODEC_NAMES)}. Same as -d / DECOMPRESS.",
        summary="`auto`, `none` (stock cqlsh output), or one codec: "
                f"{', '.join(f'`{name}`' for name in CODEC_NAMES)}; in the shell `DECOMPRESS`"),
    Key("max_field_width", "display", "max_field_width", parse_width, ("--max-field-width",), "N",
        help="cut every cell to N characters (default: fit the table to the terminal in the interactive "
             "shell, whole values in scripts; 0 = no limit)",
        unset="fit the terminal", example="200",
        doc="Cut every cell at this many characters (0: never). Unset: fit the table to the terminal "
            "in the interactive shell, whole values in scripts.",
        summary="cut every cell at N characters (0: never)"),
    Key("decode", "display", "columns", parse_column_spec, ("--decode",), "COLUMN=SPEC", "repeat",
        help=f"what a column holds, when it cannot be detected: keyspace.table.column={EXAMPLE_SPEC} "
             "(repeatable). Also [cqlsh_ext.decode] in cqlshrc and DECODE in the shell",
        section=DECODE_SECTION, unset="detect",
        example=f"shop.orders.body = {EXAMPLE_SPEC}\nshop.events.payload = {FORMAT_EXAMPLES[1]}\n"
                f"shop.orders.attachments.item = {CODEC_EXAMPLES[1]}",
        doc=_decode_doc,
        summary=f"what a column holds when it cannot be detected: `shop.orders.body={EXAMPLE_SPEC}`; in "
                "the shell `DECODE` ([payloads.md](payloads.md))"),
    Key("max_output_size", "display", "cap", parse_size, ("--max-output-size",), "SIZE",
        help="decompressed bytes shown per value at most, over all nested layers (default 4MiB)",
        default="4MiB",
        doc="Decompressed bytes shown per value, over all nested layers (4MiB, 512KiB, 1048576, ...); "
            "also the characters a decoded record may render to, and (scaled) the values it may "
            "visit: 100,000 at 4MiB.",
        summary="decompressed bytes shown per value, all layers together; also each value's budget "
                "([hostile values](formats.md#one-budget-per-value))"),
    Key("journal_dir", "display", "journal_dir", parse_path, ("--journal-dir",), "DIR",
        help="where edits of payload fields write their journals, which UNDO reads (default: a "
             "journal directory beside the shell's history)",
        unset="`journal` beside the shell's history", example="~/.cassandra/journal",
        doc="Where UPDATE and DELETE of payload fields write their journals (one file per edit, "
            "readable by you only: the rows' keys and stored values), which UNDO reads. Unset: a "
            "journal directory beside the shell's history.",
        summary="where edits of payload fields keep their journals for UNDO "
                "([edit.md](edit.md))"),
    Key("output_format", "display", "output_format", parse_output_format, ("--output-format",), "FORMAT",
        help=f"how results are printed: {_output_formats()} (default {OUTPUT_FORMATS[0]}). Also OUTPUT "
             "FORMAT in the shell",
        default=OUTPUT_FORMATS[0],
        doc=f"{_output_formats()}.",
        summary=f"{_output_formats('`')}; in the shell `OUTPUT FORMAT`"),
    Key("cells", "display", "cells", parse_cells, ("--cells",), "|".join(CELL_MODES),
        help="interactive shell: cells too wide for the screen are cut with … (default) or wrapped onto "
             "more lines. Also OUTPUT CELLS in the shell",
        default="cut",
        doc="Interactive shell: cells too wide for the screen are cut with ... (cut) or wrapped (wrap).",
        summary="interactive shell: cut wide cells with `…` or wrap them; in the shell `OUTPUT CELLS`"),
    Key("auto_vertical", "display", "auto_vertical", parse_bool, default="true",
        doc="Interactive shell: show rows vertically when a table cannot fit the screen even cut.",
        summary="interactive shell: rows vertically when a table cannot fit even cut"),
    Key("pager", "display", "pager", parse_pager,
        unset=f"`$PAGER`, else `{DEFAULT_PAGER}`", example=DEFAULT_PAGER,
        doc=f"Pager for output taller than the screen; off for none. Unset: $PAGER, else {DEFAULT_PAGER}.",
        summary="pager for tall output; `off` for none"),
    Key("dictionaries", "display", "dictionaries", parse_paths, ("--dictionary",), "FILE", "repeat",
        help="a zstd dictionary (zstd --train) or a raw dictionary (a zlib preset or zstd raw-content "
             "one) values were written with "
             f"(repeatable; also {ENVIRONMENT}, paths separated as in PATH)",
        parse_flag=_flag_paths, store=_add_dictionaries, unset="none",
        example="~/dictionaries/orders.zstd-dict, ~/dictionaries/events.zlib-dict",
        doc="Dictionaries values were compressed with: zstd dictionaries (zstd --train, ADVISE's SAVE "
            "DICTIONARY) found by the ID a frame names; raw dictionaries (any other file), zlib preset "
            "dictionaries by the stream's DICTID and zstd raw-content ones tried on frames that name "
            "none; any of them by its SHA-256 (RFC 9842 dcz and dcb values). Files separated by commas; "
            f"also --dictionary and {ENVIRONMENT}.",
        summary="files of the zstd and raw dictionaries values were written with, separated by commas; "
                f"also `{ENVIRONMENT}` ([dictionaries](dictionaries.md))"),
    Key("dictionary_table", "display", "dictionary_table", parse_table, ("--dictionary-table",),
        "KEYSPACE.TABLE",
        help="a table whose blob values are dictionaries too (a team's shared dictionaries), read once "
             "connected",
        unset="none", example="shop.dictionaries",
        doc="A keyspace.table whose blob values are zstd dictionaries or raw dictionaries, read "
            "once connected, so that a team keeps its dictionaries in one place (any primary key, any "
            "blob columns).",
        summary="a table whose blob values are dictionaries too, read once connected "
                "([dictionaries](dictionaries.md))"),
    Key("raw_blobs", "display", "raw_blobs", parse_bool, ("--raw-blobs",), takes="switch",
        help="json: add the stored bytes of decoded blobs; csv: print blobs as stored",
        default="false",
        doc="JSON output: add the stored bytes of decoded blobs; CSV: print blobs as stored.",
        summary="JSON: add the stored bytes of decoded blobs; CSV: blobs as stored"),
    Key("classic", "display", "classic", parse_bool, ("--classic",), takes="switch",
        help="cqlsh's own readline prompt instead of the prompt_toolkit one",
        default="false",
        doc="cqlsh's own readline prompt instead of the prompt_toolkit one.",
        summary="cqlsh's own readline prompt instead of the prompt_toolkit one"),
    Key("keyspaces", "keyspaces", "keyspaces", _keyspaces_value, ("--keyspaces",), "REGION", "optional",
        help="connect to Amazon Keyspaces: host cassandra.REGION.amazonaws.com (unless a host is given), "
             "port 9142, TLS verified against the system trust store, consistency LOCAL_QUORUM; SigV4 "
             "unless -u/-p are given",
        parse_flag=_keyspaces_flag, store=_store_keyspaces, default="false", example="us-east-1",
        doc="Amazon Keyspaces: true, or a region (host cassandra.REGION.amazonaws.com, port 9142, TLS, "
            "LOCAL_QUORUM, SigV4 unless a username is given).",
        summary="connect to Amazon Keyspaces: true or a region ([Amazon Keyspaces](keyspaces.md))"),
    Key("sigv4", "keyspaces", "sigv4", parse_bool, ("--sigv4",), takes="switch",
        help="authenticate with AWS IAM credentials (SigV4): environment, shared config/credentials "
             "files, SSO, web identity, container or instance role",
        default="false", example="true",
        doc="Log in with AWS IAM credentials (SigV4) from boto3's credential chain.",
        summary=f"AWS IAM (SigV4) login: {_AWS_DOCS}"),
    Key("region", "keyspaces", "region", parse_region, ("--region",), "REGION",
        help="AWS region to sign for (default: from the host name, AWS_REGION, AWS_DEFAULT_REGION, or the "
             "profile)",
        parse_flag=_flag_region, unset="host name, `AWS_REGION`, profile", example="us-east-1",
        doc="The region to sign for (else: the host name, AWS_REGION, AWS_DEFAULT_REGION, the profile).",
        summary="the AWS region to sign for (SigV4)"),
    Key("profile", "keyspaces", "profile", parse_text, ("--profile",), "NAME",
        help="AWS profile to take credentials from (SigV4)",
        parse_flag=_flag_text, unset="boto3's chain", example="default",
        doc="An AWS profile from ~/.aws/config or ~/.aws/credentials (SSO profiles included).",
        summary="an AWS profile to take credentials from (SigV4); implies `sigv4`"),
    Key("role_arn", "keyspaces", "role_arn", parse_text, ("--role-arn",), "ARN",
        help="assume this IAM role (credentials are refreshed before they expire; SigV4)",
        parse_flag=_flag_text, example="arn:aws:iam::123456789012:role/KeyspacesReader",
        doc="Assume this IAM role; its credentials are refreshed before they expire.",
        summary="assume this IAM role (SigV4); implies `sigv4`"),
    Key("certfile", "keyspaces", "certfile", parse_path, ("--certfile",), "PEM",
        help="CA certificates (PEM) to verify the server with, instead of the system trust store; turns "
             "TLS on",
        parse_flag=_flag_path, unset="system trust store", example="~/.cassandra/keyspaces-bundle.pem",
        doc="Verify the server against these CA certificates instead of the system trust store.",
        summary="CA certificates to verify the server with (turns TLS on)"),
    Key("read_only", "agent", "read_only", parse_bool, ("--read-only",), takes="switch",
        help="run reads only, as cqlsh-ext mcp does: SELECT, DESCRIBE, COMPRESSION STATS, SETTINGS, ADVISE, "
             "INSPECT and the session's settings; anything else (writes, DDL, edits, loads, rewrites) and "
             "the tables of credentials are refused before they run (exit code 3)",
        default="false", example="true",
        doc="Run reads only, as cqlsh-ext mcp does: any other statement (a write, DDL, an edit, a load, a "
            "rewrite, COPY) and the tables of credentials or other sessions' statements are refused "
            "before they run, in one line (exit code 3).",
        summary=f"run reads only; anything else refused before it runs, exit code 3 ({_AGENTS_DOCS})"),
    Key("policy", "agent", "policy", parse_path, ("--policy",), "FILE",
        help="implies --read-only: the tables a policy file (cqlsh-ext mcp's) denies are refused too",
        parse_flag=_flag_path, unset="the built-in one", example="~/.cassandra/agent-policy.toml",
        doc="A policy file (TOML, as cqlsh-ext mcp --policy reads it); it implies read_only: the tables "
            "its [tables] deny names and the system tables it does not allow are refused; a table whose "
            "values it redacts is refused too (the shell redacts nothing).",
        summary="implies `--read-only`: a policy file whose tables are refused too"),
    Key("timeout", "agent", "timeout", parse_seconds, ("--timeout",), "SECONDS",
        help="stop a statement that runs longer (what it read before is printed, the cut said; exit code 4)",
        unset="no limit", example="300",
        doc="Seconds a statement may run (30, 2.5, 2m): one that runs longer is stopped as Ctrl-C "
            "stops it, what it read before printed and the cut said (exit code 4).",
        summary="seconds a statement may run; stopped past them, exit code 4"),
    Key("stats", "agent", "stats", parse_bool, ("--stats",), takes="switch",
        help="at the end, the run's figures as one JSON object on standard error: rows, whether the "
             "answer is exact or was cut and why, where it goes on from, values decoded, time and CPU",
        default="false", example="true",
        doc="At the end of a run, its figures as one JSON object on standard error: rows, whether the "
            "answer is exact or cut (and why), the resume token to go on, values decoded and "
            "undecodable, elapsed time and CPU.",
        summary="the run's figures as one JSON object on standard error at its end"),
    Key("max_rows", "agent", "max_rows", parse_count, ("--max-rows",), "N",
        help="print at most N rows of each SELECT; the cut is said, with the resume token to go on",
        unset="every row", example="1000",
        doc="Rows of each SELECT printed at most: the cut is said on standard error, with the resume "
            "token that goes on from the next row.",
        summary="rows of each SELECT printed at most; the cut said, with where to go on"),
    Key("resume", "agent", "resume", parse_text, ("--resume",), "TOKEN",
        help="go on with the SELECT a cut answer's resume token names (--stats, --max-rows), from the row "
             "after the last one printed",
        parse_flag=_flag_text, unset="from the start", example="", flag_only=True,
        doc="", summary="go on with a cut SELECT from the row after the last printed (the flag only)"),
    Key("spec", "agent", "spec", parse_bool, ("--spec",), takes="switch",
        help="print every flag, tool, statement, output format and exit code as one JSON document, and exit",
        default="false", flag_only=True,
        doc="", summary="the command line as one JSON document (the flag only)"),
    Key("catalog", "agent", "catalog", parse_text, ("--catalog",), "PATTERN", takes="optional",
        help="print the keyspaces, tables and columns (CQL types; for blob columns what a sample of 20 "
             "rows holds: chain, format, confidence) as one JSON document, and exit; PATTERN (keyspace or "
             "keyspace.table, * and ? as wildcards) names some; without it every one outside the system's",
        parse_flag=_pattern, unset="not asked", example="shop.orders*", flag_only=True,
        doc="", summary="the schema and what blob columns hold, as one JSON document (the flag only)"),
    Key("export_dir", "agent", "export_dir", parse_path, ("--export-dir",), "DIR",
        help="with --read-only: COPY (SELECT ...) TO 'file' may write new files inside DIR (owner-only, "
             "never over a file), and nowhere else",
        parse_flag=_flag_path, unset="no COPY TO with --read-only", example="~/cqlsh-ext-exports",
        doc="With read_only: the directory COPY ... TO may write new files in (each readable by its owner "
            "only, never over an existing file); every other COPY stays refused.",
        summary=f"with `--read-only`: where `COPY ... TO` may write new files ({_AGENTS_DOCS})"),
    Key("serve", "agent", "serve", parse_text, ("--serve",), "NAME",
        help="hold a warm session called NAME: it checks the connection options given, keeps the "
             "connection's settings, cqlsh and the native core loaded, and runs each --session NAME call "
             "on a socket only you can open; Ctrl-C stops it",
        parse_flag=_flag_text, unset="no session", example="dev", flag_only=True,
        doc="", summary=f"hold a warm session NAME for `--session NAME` calls ({_AGENTS_DOCS})"),
    Key("session", "agent", "session", parse_text, ("--session",), "NAME",
        help="run this call through the warm session NAME (--serve NAME): the same flags, output and exit "
             "code as without it, none of the start-up's cost; its connection options are the session's",
        parse_flag=_flag_text, unset="a cold run", example="dev", flag_only=True,
        doc="", summary="run through the warm session NAME (the flag only)"),
    Key("session_status", "agent", "session_status", parse_text, ("--session-status",), "NAME",
        takes="optional",
        help="print the warm session NAME (name, pid, host, since, calls) as a JSON object, or without NAME "
             "every running one as a JSON list, and exit",
        parse_flag=_pattern, unset="not asked", example="dev", flag_only=True,
        doc="", summary="the warm sessions as JSON (the flag only)"),
    Key("session_idle", "agent", "session_idle", parse_seconds, ("--session-idle",), "SECONDS",
        help="with --serve: end the session after this long without a call (default 900)",
        unset="900", example="3600", flag_only=True,
        doc="", summary="with `--serve`: seconds without a call before the session ends (the flag only)"),
    Key("mcp_oauth_issuer", "mcp", "oauth_issuer", parse_url, ("--oauth-issuer",), "URL",
        help="with --http: take OAuth 2.1 access tokens (JWTs) this authorization server issued (their iss, "
             "exactly) instead of a static token",
        unset="off", example="https://login.example.com/realms/ops",
        doc="cqlsh-ext mcp --http: take OAuth 2.1 access tokens (JWTs) this authorization server issued "
            "(their iss claim, exactly as written here) instead of a static token.",
        summary=f"`cqlsh-ext mcp --http`: OAuth 2.1 access tokens of this issuer ({_OAUTH_DOCS})"),
    Key("mcp_oauth_jwks", "mcp", "oauth_jwks", parse_keys_source, ("--oauth-jwks",), "FILE|URL",
        help="the issuer's public keys (a JWKS): a file, or its https URL (the jwks_uri of its metadata), "
             "fetched and cached",
        unset="none", example="https://login.example.com/realms/ops/protocol/openid-connect/certs",
        doc="The issuer's public keys (a JWKS): a file, read again when it changes, or the issuer's "
            "jwks_uri (https), fetched when first needed, again after 10 minutes, and for a key it does not "
            "hold at most once a minute.",
        summary="the issuer's public keys (JWKS): a file, or its https URL"),
    Key("mcp_oauth_audience", "mcp", "oauth_audience", parse_text, ("--oauth-audience",), "AUDIENCE",
        help="the audience a token must be issued for, its aud (default: the resource URL)",
        parse_flag=_flag_text, unset="`mcp_oauth_resource`", example="api://cqlsh-ext",
        doc="The audience a token must name in its aud claim, as the authorization server issues it for "
            "this server (default: the resource URL).",
        summary="the audience a token must name (`aud`)"),
    Key("mcp_oauth_resource", "mcp", "oauth_resource", parse_url, ("--oauth-resource",), "URL",
        help="this server's URL as its clients reach it (its protected-resource metadata names it; default: "
             "the --http address's)",
        unset="the `--http` address", example="https://db.example.com:8765/mcp",
        doc="This server's URL as its clients reach it, https://HOST:PORT/mcp: the resource its "
            "protected-resource metadata names (default: the --http address's; needed on 0.0.0.0).",
        summary="this server's URL as clients reach it (the metadata's `resource`)"),
    Key("mcp_oauth_algorithms", "mcp", "oauth_algorithms", parse_algorithms, ("--oauth-algorithms",), "LIST",
        help=f"the signing algorithms a token may use, of {', '.join(JWS_ALGORITHMS)} (default RS256, ES256)",
        default="RS256, ES256",
        doc=f"The signing algorithms a token may use, of {', '.join(JWS_ALGORITHMS)} (never none, never "
            "HS256 and the like: a shared secret).",
        summary="the signing algorithms a token may use (never `none` or `HS*`)"),
    Key("mcp_export_dir", "mcp", "export_dir", parse_path, ("--export-dir",), "DIR",
        help=f"serve the export tool: it writes a statement's answer as a "
             f"{listed(f.title for f in FILE_FORMATS if f.mcp)} file here (a name of its own; the client "
             "names no path) and answers a link to read it",
        parse_flag=_flag_path, unset="off: no export tool", example="~/.cache/cqlsh-ext/exports",
        doc="cqlsh-ext mcp: the directory the export tool writes its files in (each named by the "
            "server, readable by its owner), which clients read back as resources in chunks.",
        summary=f"`cqlsh-ext mcp`: the export tool's directory ({_EXPORT_DOCS})"),
    Key("mcp_export_max_age", "mcp", "export_max_age", parse_duration, ("--export-max-age",), "DURATION",
        help="how long an export's file is kept (90, 30m, 1h, 2d; default 1h)", default="1h", example="30m",
        doc="How long an export's file is kept before it is removed (seconds, or 30m, 1h, 2d).",
        summary="how long an export's file is kept"),
    Key("mcp_export_max_bytes", "mcp", "export_max_bytes", parse_size, ("--export-max-bytes",), "SIZE",
        help="the export directory's files in all at most; the oldest go first (default 1GiB)",
        default="1GiB", example="256MiB",
        doc="The export directory's files hold at most this many bytes in all: the oldest are removed "
            "first (an export larger than this alone is removed and refused).",
        summary="the export files' bytes in all at most (the oldest go first)"),
)

#: Every [cqlsh_ext] key (sections such as [cqlsh_ext.decode] aside), by name.
KEYS: dict[str, Key] = {key.name: key for key in SETTINGS if key.section is None and not key.flag_only}

#: --help's heading for each group's flags.
FLAG_GROUPS = {"display": "cqlsh-ext options", "keyspaces": "Amazon Keyspaces and SigV4 (cqlsh-ext)",
               "mcp": "OAuth 2.1 for --http, and the export tool's files (cqlsh-ext docs mcp)",
               "agent": "programs and assistants (cqlsh-ext docs agents)"}


def add_flags(parser: argparse.ArgumentParser, group: str, names: Collection[str] | None = None) -> None:
    """The flags of one group's settings, under its heading, in declaration order (`names`: only
    these settings' flags, for a front end that takes a few: `cqlsh-ext spark --read-only`)."""
    heading = parser.add_argument_group(FLAG_GROUPS[group])
    for key in SETTINGS:
        if key.group != group or not key.flags or (names is not None and key.name not in names):
            continue
        options: dict[str, Any] = {"dest": key.name, "help": key.help}
        if key.takes == "switch":
            options.update(action="store_true", default=None)
        else:
            options["metavar"] = key.metavar
        if key.takes == "optional":
            options.update(nargs="?", const="", default=None)
        elif key.takes == "repeat":
            options["action"] = "append"
        heading.add_argument(*key.flags, **options)

def read_cqlshrc(path: str | None) -> configparser.RawConfigParser:
    """cqlshrc parsed (a missing file reads as empty); one-line SettingError when it cannot be."""
    parser = configparser.RawConfigParser()
    if not path:
        return parser
    from cqlsh_ext.common.text import visible

    try:
        parser.read(path)
    except configparser.Error as err:
        raise SettingError(f"{visible(path, 200)}: {_ini_problem(err)}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise SettingError(f"{visible(path, 200)}: cannot be read: {visible(str(err), 200)}") from None
    return parser


def _ini_problem(err: configparser.Error) -> str:
    """What configparser found wrong, naming the line by its number, never by its text: a file given
    as cqlshrc that is none (a credentials file, a .env) may hold a secret on any line."""
    from cqlsh_ext.common.text import visible

    if isinstance(err, configparser.MissingSectionHeaderError):
        return f"line {err.lineno} comes before any [section] header"
    if isinstance(err, configparser.ParsingError) and err.errors:
        lineno, shown = err.errors[0]  # (shown: the line's repr(), read to say what it is, not said)
        line = shown.strip("'\"").strip()
        why = ("a [section] header without its closing ]" if line.startswith("[") and "]" not in line
               else "neither a [section] header nor a key = value line")
        more = [str(n) for n, _ in err.errors[1:]]
        also = f" (also line{'s' if len(more) > 1 else ''} {', '.join(more)})" if more else ""
        return f"line {lineno} is {why}{also}"
    twice = (configparser.DuplicateSectionError, configparser.DuplicateOptionError)
    if isinstance(err, twice) and err.lineno:
        what = (f"section [{visible(err.section, 60)}]" if isinstance(err, configparser.DuplicateSectionError)
                else f"key {visible(repr(err.option), 60)} in [{visible(err.section, 60)}]")
        return f"line {err.lineno}: {what} is given twice"
    return f"cannot be read as an ini file ({type(err).__name__})"


def load(flags: Any = None, config_file: str | None = None) -> Settings:
    """The run's settings from cqlshrc's [cqlsh_ext], then `flags` (cqlsh_ext.cli's namespace).

    Returns the settings; cqlsh's own arguments that a flag of ours gave back (`--keyspaces
    127.0.0.1` names a host, not a region) are in `settings.keyspaces.give_back`.
    """
    settings = Settings(config_file=config_file)
    _add_dictionaries(settings.display, tuple(environment_paths()))
    config = read_cqlshrc(config_file)
    _check_cqlsh_keys(config, config_file)
    if config.has_section(CONFIG_SECTION):
        for name, text in config.items(CONFIG_SECTION):
            if name not in KEYS:
                known = ", ".join(KEYS)
                raise SettingError(f"{config_file} [{CONFIG_SECTION}]: unknown key {name!r} (known: {known})")
            key = KEYS[name]
            try:
                key.put(settings, key.parse(text))
            except SettingError as err:
                raise SettingError(f"{config_file} [{CONFIG_SECTION}] {name}: {err}") from None
    _configure_commands(config, config_file)
    for key in SETTINGS:
        if key.section is None or not config.has_section(key.section):
            continue
        for place, text in config.items(key.section):
            try:
                _put_item(settings, key, place, text)
            except SettingError as err:
                raise SettingError(f"{config_file} [{key.section}] {place}: {err}") from None
    if config.has_section("auth_provider"):
        module = config["auth_provider"].get("module", "")
        settings.keyspaces.stock_sigv4_provider = module.strip().startswith("cassandra_sigv4")
    if flags is not None:
        _apply_flags(settings, flags)
    if settings.agent.policy is not None:  # a policy is only ever a read-only one: named, it is kept to
        settings.agent.read_only = True
    return settings


def _check_cqlsh_keys(config: configparser.RawConfigParser, config_file: str | None) -> None:
    """cqlsh's own typed keys (values.CQLSH_TYPED_KEYS) read as cqlsh reads them: one it cannot read
    is refused in one line naming it, where cqlsh would stop with a traceback."""
    for (section, name), parse in CQLSH_TYPED_KEYS.items():
        if config.has_option(section, name):
            try:
                parse(config.get(section, name))
            except SettingError as err:
                raise SettingError(f"{config_file} [{section}] {name}: {err}") from None


def _configure_commands(config: configparser.RawConfigParser, config_file: str | None) -> None:
    """cqlshrc's [formats]: external-command decoders (payload.formats._outside), set before the
    column settings that may name them; the process's, like the dictionaries (workers inherit it).
    None configured where none was before: nothing to set, and the decoders' machinery is not loaded."""
    import sys

    from cqlsh_ext.payload.names import COMMAND_SECTION

    if not config.has_section(COMMAND_SECTION) and "cqlsh_ext.payload.formats._outside" not in sys.modules:
        return
    from cqlsh_ext.payload.formats._outside import OutsideError, configure_commands

    section = dict(config.items(COMMAND_SECTION)) if config.has_section(COMMAND_SECTION) else {}
    from cqlsh_ext.payload.spec import parse_spec

    try:
        configure_commands(section)
    except OutsideError as err:
        raise SettingError(f"{config_file} {err}") from None
    parse_spec.cache_clear()  # a spec naming a command is known from now on


def load_dictionaries(settings: Settings) -> None:
    """The dictionary files the settings name read into the process's store (codecs.dictionaries),
    once the settings are loaded and before anything is read: the scanning workers inherit the
    store through fork. A file that cannot be a dictionary is one SettingError line naming it."""
    try:
        dictionaries.load(settings.display.dictionaries)
    except dictionaries.DictionaryError as err:
        raise SettingError(f"dictionary {err}") from None


def _apply_flags(settings: Settings, flags: Any) -> None:
    """Flags over what cqlshrc set, each parsed by its Key; a flag not given (None) changes nothing."""
    for key in SETTINGS:
        value = getattr(flags, key.name, None)
        if value is None or not key.flags:
            continue
        if key.section is not None:
            for item in value:
                _apply_column_flag(settings, key, item)
            continue
        parse = key.parse_flag or key.parse
        try:
            parsed = True if value is True else parse(value)  # a switch arrives as True
        except SettingError as err:
            raise SettingError(f"{key.flag}: {err}") from None
        if parsed is not None:
            key.put(settings, parsed)
    _check_regions(flags)
    settings.debug = bool(getattr(flags, "debug", False))


def _apply_column_flag(settings: Settings, key: Key, item: str) -> None:
    """`--decode keyspace.table.column=SPEC`, as a `place = value` line of the key's section."""
    place, sep, text = item.partition("=")
    if not sep:
        raise SettingError(f"{key.flag} {item!r}: expected keyspace.table.column=SPEC (example: "
                           f"shop.orders.body={EXAMPLE_SPEC})")
    try:
        _put_item(settings, key, place, text)
    except SettingError as err:
        raise SettingError(f"{key.flag} {place.strip()}: {err}") from None


def _put_item(settings: Settings, key: Key, place: str, text: str) -> None:
    items: dict[str, object] = getattr(getattr(settings, key.group), key.attr)
    items[parse_place(place)] = key.parse(text)


def _check_regions(flags: Any) -> None:
    """`--keyspaces REGION` and `--region` name one region."""
    keyspaces, region = getattr(flags, "keyspaces", None), getattr(flags, "region", None)
    if keyspaces and region and REGION_RE.match(keyspaces.strip()) and keyspaces.strip() != region.strip():
        raise SettingError(f"--keyspaces {keyspaces} and --region {region.strip()} disagree: "
                           "give the region once")
