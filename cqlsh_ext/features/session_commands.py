"""The shell session's own commands, declared as every package declares its own (found through the
entry point group cqlsh_ext.features): DECOMPRESS and DECODE (how the session reads blob values:
cqlsh_ext.settings.command) and OUTPUT (how it lays answers out: cqlsh_ext.output.command), the
packages below the kernel that hold their handlers, grammar and HELP, named here by module and name
(nothing imported until a command runs or HELP shows it)."""

from __future__ import annotations

from cqlsh_ext.features.commands import Command, register_command, register_mistyped
from cqlsh_ext.features.feature import Service, Text
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

register_command(Command("DECOMPRESS", "<decompressCommand>", DECOMPRESS_GRAMMAR,
                         Text(_SETTINGS, "DECOMPRESS_HELP"), Service(_SETTINGS, "do_decompress"),
                         usage=Service(_SETTINGS, "decompress_usage")))
register_mistyped(("DECOMPRESS",), Service(_SETTINGS, "decompress_mistyped"))
register_command(Command("DECODE", "<decodeCommand>", DECODE_GRAMMAR, Text(_SETTINGS, "DECODE_HELP"),
                         Service(_SETTINGS, "do_decode")))
register_command(Command("OUTPUT", "<outputCommand>", OUTPUT_GRAMMAR, Text(_OUTPUT, "OUTPUT_HELP"),
                         Service(_OUTPUT, "do_output")))
