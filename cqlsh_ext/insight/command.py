"""The shell side of the insight commands: the grammar that completes INSPECT and COMPRESSION, and
its completers (their declarations, HELP and forms: features/shell_commands.py and the features'
Statements, features/reads.py and shell_features.py). INSPECT, STATS, ADVISE, SETTINGS and TRIAL
are read by the shell from their features' declarations, never by this grammar (INSPECT printed by
run_inspect.print_values, the others as reports); REWRITE by rewrite.command.

This module is imported when the shell starts (the grammar must be registered before cqlsh builds
its rule set), so it imports nothing heavy at module level.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cqlsh_ext.upstream.protocol import Parsed, Shell

INSPECT_GRAMMAR = r"""
<inspectCommand> ::= "INSPECT" ( asjson="JSON" )? <selectStatement>
                   ;
"""
COMPRESSION_GRAMMAR = r"""
<compressionCommand> ::= "COMPRESSION"
      ( action="STATS" ( asjson="JSON" )? <statsSample>? ( "PARALLEL" parallel=<wholenumber> )?
        ( decode_all="DECODE" "ALL" )? ( confirm="CONFIRM" )? <insightTarget>
      | action="ADVISE" ( asjson="JSON" )? ( "SAMPLE" sample=<wholenumber> )? <insightTarget>
        ( "SAVE" "DICTIONARY" dictfile=<stringLiteral> )?
      | action="SETTINGS" ( asjson="JSON" )? ( "SAMPLE" sample=<wholenumber> )? <columnFamilyName>
      | action="TRIAL" ( asjson="JSON" )? ( <trialColumn> | "FROM" path=<stringLiteral> )
        ( "CODECS" [codec]=<trialChain> ( "," [codec]=<trialChain> )*
        | "ROWS" rows=<wholenumber>
        | "CONCURRENCY" concurrency=<wholenumber>
        )*
        ( "INTO" into=<cfOrKsName> )? ( keep="KEEP" | asjson="JSON" | confirm="CONFIRM" )*
      | action="REWRITE"
        ( "RESUME" ( path=<stringLiteral> | "LAST" ) ( confirm="CONFIRM" )?
        | <rewriteColumn> "AS" spec=<stringLiteral>
          ( "WHERE" <rewriteCondition> ( "AND" <rewriteCondition> )* )?
          ( "ALLOW" "FILTERING" | "PACE" pace=<wholenumber> | "ALL" | confirm="CONFIRM" )*
        )
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
<trialColumn> ::= <columnFamilyName> "." colname=<cident>
    ;
<trialChain> ::= <quotedStringLiteral> | <trialStep> ( ">" <trialStep> )*
    ;
<trialStep> ::= <identifier> ( "/" <identifier> ( "-" <identifier> )* )? ( ":" "-"? <wholenumber> )?
    ;
<insightTarget> ::= <selectStatement> | <columnFamilyName>
    ;
<statsSample> ::= sample_mode="SAMPLE"
      ( "UNTIL" ( precision=<wholenumber> | precision=<float> ) "PERCENT"
      | sample=<wholenumber> ( percent="PERCENT" )?
      )?
      ( "WITHIN" seconds=<wholenumber> "SECONDS" )? ( "SEED" seed=<wholenumber> )?
    ;
"""


def keyspace_names(ctxt: Parsed, shell: Shell) -> list[str]:
    """After INTO: the keyspaces (TRIAL's scratch tables go there)."""
    from cassandra.metadata import protect_name

    return [protect_name(name) for name in shell.get_keyspace_names()]


def trial_columns(ctxt: Parsed, shell: Shell) -> list[str]:
    """After COMPRESSION TRIAL [ks.]table. : the columns TRIAL takes (insight.trial.latency.column_kind)."""
    from cassandra.metadata import protect_name

    from cqlsh_ext.insight.shellside import cql_name
    from cqlsh_ext.insight.trial.latency import column_kind

    ks = cql_name(ctxt.get_binding("ksname")) or shell.current_keyspace
    table = cql_name(ctxt.get_binding("cfname"))
    try:
        meta = shell.conn.metadata.keyspaces[ks].tables[table]
    except (KeyError, AttributeError):
        return []
    return [protect_name(name) for name, column in meta.columns.items() if column_kind(str(column.cql_type))]
