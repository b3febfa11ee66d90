"""The shell side of the insight statements: what completes a name their grammar cannot (the
columns COMPRESSION TRIAL takes), declared with compression_trial's Statement. INSPECT, STATS,
ADVISE, SETTINGS and TRIAL are read by the shell from their features' declarations
(insight/declared.py), their completion written from the same (shell.completion); REWRITE is
rewrite.command's. Imported when the shell starts: nothing heavy at module level.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cqlsh_ext.settings.shell import Shell
    from cqlsh_ext.upstream.protocol import Parsed


def trial_columns(ctxt: Parsed, shell: Shell) -> list[str]:
    """After COMPRESSION TRIAL [ks.]table. : the columns TRIAL takes (insight.trial.latency.column_kind)."""
    from cassandra.metadata import protect_name

    from cqlsh_ext.cql.spelling import schema_name
    from cqlsh_ext.insight.trial.latency import column_kind

    ks = schema_name(ctxt.get_binding("ksname", "")) or shell.current_keyspace
    table = schema_name(ctxt.get_binding("cfname", ""))
    try:
        meta = shell.conn.metadata.keyspaces[ks].tables[table]
    except (KeyError, AttributeError):
        return []
    return [protect_name(name) for name, column in meta.columns.items() if column_kind(str(column.cql_type))]
