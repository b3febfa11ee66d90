"""The shell session's own commands, declared as every package declares its own (an entry point of
the group cqlsh_ext.features, read with every load of the registry: light, as this package's
__init__ is): DECOMPRESS and DECODE (how the session reads blob values: cqlsh_ext.settings.command)
and OUTPUT (how it lays answers out: cqlsh_ext.output.command), each the statement of a feature of
the shell's alone that cqlsh's grammar parses (Statement.parsed), the packages below the kernel
that hold their handlers, grammar and HELP named here by module and name (nothing imported until a
command runs or HELP shows it)."""

from __future__ import annotations

from cqlsh_ext.features.commands import register_mistyped
from cqlsh_ext.features.feature import READ, Feature, Reads, Service, Statement, Text, register
from cqlsh_ext.settings import MODES, OUTPUT_FORMATS

_SETTINGS = "cqlsh_ext.settings.command"
_OUTPUT = "cqlsh_ext.output.command"

#: What cqlsh's grammar parses of each command (settings.command's and output.command's handlers read
#: its bindings: mode, place, sibling, spec, auto, fmt, raw, cells).
DECOMPRESS_GRAMMAR = r"""
<decompressCommand> ::= "DECOMPRESS" ( mode=<decompressMode> )?
                      ;
<decompressMode> ::= """ + " | ".join(f'"{m.upper()}"' for m in (*MODES, "off")) + r"""
                   ;
"""
DECODE_GRAMMAR = r"""
<decodeCommand> ::= "DECODE" ( place=<stringLiteral>
                      ( ( "BY" sibling=<cident> )? "AS" spec=<stringLiteral> | auto="AUTO" ) )?
                  ;
"""
OUTPUT_GRAMMAR = r"""
<outputCommand> ::= "OUTPUT" ( "FORMAT" fmt=<outputFormatName> | "RAW" raw=( "ON" | "OFF" )
                             | "CELLS" cells=( "CUT" | "WRAP" ) )?
                  ;
<outputFormatName> ::= """ + " | ".join(f'"{f.upper()}"' for f in OUTPUT_FORMATS) + r"""
                     ;
"""

# Each changes only the session's settings: it reads nothing stored and writes nothing.
register(Feature(
    "decompress", "Show or set how blobs display",
    "DECOMPRESS [AUTO | NONE | <codec>]: how this session shows blob values (the mode in force when "
    "none is given).",
    (), Reads("nothing"), READ, {}, shell_only=True,
    statement=Statement(("DECOMPRESS",), "DECOMPRESS AUTO", json=False, rule="<decompressCommand>",
                        grammar=DECOMPRESS_GRAMMAR, help=Text(_SETTINGS, "DECOMPRESS_HELP"),
                        parsed=Service(_SETTINGS, "do_decompress"),
                        malformed=Service(_SETTINGS, "decompress_usage"))))
register_mistyped(("DECOMPRESS",), Service(_SETTINGS, "decompress_mistyped"))
register(Feature(
    "decode", "Say what a blob column holds",
    "DECODE 'ks.t.column' AS 'chain' | AUTO: what a blob column holds where it cannot be detected, for "
    "this session (the settings in force when none is given).",
    (), Reads("nothing"), READ, {}, shell_only=True,
    statement=Statement(("DECODE",), "DECODE 'shop.orders.data' AS 'zstd:json'", json=False,
                        rule="<decodeCommand>", grammar=DECODE_GRAMMAR,
                        help=Text(_SETTINGS, "DECODE_HELP"), parsed=Service(_SETTINGS, "do_decode"))))
register(Feature(
    "output", "Show or set how answers print",
    "OUTPUT [FORMAT f | RAW ON|OFF | CELLS CUT|WRAP]: how this session prints query results (the "
    "format in force when none is given).",
    (), Reads("nothing"), READ, {}, shell_only=True,
    statement=Statement(("OUTPUT",), "OUTPUT FORMAT JSON", json=False, rule="<outputCommand>",
                        grammar=OUTPUT_GRAMMAR, help=Text(_OUTPUT, "OUTPUT_HELP"),
                        parsed=Service(_OUTPUT, "do_output"))))
