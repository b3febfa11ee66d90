"""The rewrite package's declarations (found through the entry point group cqlsh_ext.features: the
registry imports this module, never its services): COMPRESSION REWRITE and its RESUME, write
features (the API's db.rewrite, db.resume) whose statement (the rewrite's) claims its own among those
of the word COMPRESSION, its form one of HELP COMPRESSION's (insight/declared.py declares the word)."""

from __future__ import annotations

from cqlsh_ext.features import output_schemas
from cqlsh_ext.features.arguments import CONFIRM, JOURNAL
from cqlsh_ext.features.feature import (
    WRITE,
    Argument,
    Feature,
    Method,
    Reads,
    Service,
    Statement,
    Text,
    Writes,
    register,
)

_HELP = "cqlsh_ext.rewrite.help"
_COMMAND = "cqlsh_ext.rewrite.command"
_RUN = "cqlsh_ext.rewrite.run"
#: The API's result classes (api.writes), which a write's answer is made into.
_RESULTS = "cqlsh_ext.api.writes"

#: What completes COMPRESSION REWRITE and its RESUME at the prompt (cqlsh's completion reads it; the
#: statement itself is read by rewrite.parse, never by cqlsh's grammar).
GRAMMAR = r"""
<compressionRewriteCommand> ::= "COMPRESSION" "REWRITE"
      ( "RESUME" ( <stringLiteral> | "LAST" ) ( "CONFIRM" )?
      | <rewriteColumn> "AS" <stringLiteral>
        ( "WHERE" <rewriteCondition> ( "AND" <rewriteCondition> )* )?
        ( "ALLOW" "FILTERING" | "PACE" <wholenumber> | "ALL" | "CONFIRM" )*
      )
    ;
<rewriteColumn> ::= <columnFamilyName> "." colname=<cident>
                    ( "[" <stringLiteral> "]" | "." <cident> )?
    ;
<rewriteCondition> ::= <rewritePath> ( ( "=" | "<" | ">" | "<=" | ">=" | "!=" ) <term>
                                     | "IN" "(" <term> ( "," <term> )* ")"
                                     | "LIKE" <stringLiteral>
                                     | "IS" "NOT"? "NULL"
                                     | "CONTAINS" <term> )
    ;
<rewritePath> ::= <cident> ( "." ( <cident> | <quotedName> ) | "[" ( <wholenumber> | <stringLiteral> ) "]" )*
    ;
"""

register(Feature(
    "rewrite", "Re-encode a column",
    "COMPRESSION REWRITE ks.t.data AS 'zstd:3': each value of a blob column decoded and encoded again "
    "in the target chain, its payload unchanged.",
    (Argument("column", "string", "keyspace.table.column (a map's m['key'], a UDT's u.field)",
              required=True),
     Argument("spec", "string", "the target chain: 'zstd:3', 'gzip>json', 'none'", required=True),
     Argument("where", "string", "conditions as after WHERE (payload ones need allow_filtering)"),
     Argument("allow_filtering", "boolean", "true: a WHERE on payload paths or beyond the key"),
     Argument("pace", "integer", "write capacity units a second at most", keywords={"minimum": 1}),
     Argument("every_row", "boolean", "true: the preview reads every row (ALL), not a sample"),
     CONFIRM),
    Reads("nothing"), WRITE, output_schemas.REWRITE_RESULT, Service(_RUN, "rewrite_call"),
    details="A preview (rows to rewrite, already in the chain, refused; bytes before and after; write "
            "units; a big table's from a sample) unless confirmed; then each row is journaled and "
            "written on its condition, token range by token range, at the pace asked. Stopped part-way "
            "(Ctrl-C, a kill, a failure), resume goes on from its journal.",
    writes=Writes("column", "column"),
    method=Method("rewrite", label="COMPRESSION REWRITE", result=Service(_RESULTS, "RewriteResult"), doc="""\
COMPRESSION REWRITE column AS 'spec' (docs/rewrite.md): `column` as `ks.table.column` (a
map's `m['key']`, a UDT's `u.field`), `spec` the target chain ('zstd:3', 'gzip>json',
'none'), `where` conditions (payload ones need allow_filtering), `pace` write units a
second, `every_row` a preview of every row. A preview unless confirm=True; then each row is
journaled and written on the shell's condition, and the result names its journal.
`progress`: events as a query's, and the write's notes as {"note": line}."""),
    # The shell's statement, and its RESUME (the resume feature's), start with the word COMPRESSION
    # that the insight reports start with (insight/declared.py declares the word): it claims them
    # before cqlsh's grammar, which only completes them; its part of HELP COMPRESSION is its
    # summary, its form its own (rewrite.parse).
    statement=Statement(
        ("COMPRESSION", "REWRITE"), "COMPRESSION REWRITE ks.t.data AS 'zstd' PACE 500;", json=False,
        usage=Text("cqlsh_ext.rewrite.parse", "FORM"), summary=Text(_HELP, "REWRITE_SUMMARY"),
        claims=Service(_COMMAND, "intercept"), rule="<compressionRewriteCommand>", grammar=GRAMMAR,
        topics=(("rewrite", Text(_HELP, "REWRITE_HELP")),
                ("compression rewrite", Text(_HELP, "REWRITE_HELP")), ("resume", Text(_HELP, "RESUME_HELP")),
                ("compression rewrite resume", Text(_HELP, "RESUME_HELP"))))))
register(Feature(
    "resume", "Go on with a rewrite",
    "COMPRESSION REWRITE RESUME 'journal': a rewrite stopped part-way gone on with from its journal, "
    "the token ranges it has not finished.",
    (JOURNAL, CONFIRM),
    Reads("nothing"), WRITE, output_schemas.RESUME_RESULT, Service(_RUN, "resume_call"),
    details="The rewrite is rebuilt from the journal's sealed request; a journal another run holds, "
            "that is not sealed or not the user's is refused. Confirmed, the rows are appended to "
            "the same journal.",
    writes=Writes("journal", "journal"),
    method=Method("resume", label="COMPRESSION REWRITE", result=Service(_RESULTS, "ResumeResult"), doc="""\
COMPRESSION REWRITE RESUME 'journal' (docs/rewrite.md): a rewrite stopped part-way (Ctrl-C,
a kill, a failure) gone on with from its journal (a confirmed RewriteResult stands for its
journal): the work is rebuilt from the journal's sealed request and the token ranges it has not
finished are read. A preview of those unless confirm=True; then they are rewritten and
journaled in the same journal. `progress` as db.rewrite's.""")))
