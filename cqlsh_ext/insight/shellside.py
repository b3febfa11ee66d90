"""What the insight commands share on the shell's side: what a command reads (`target`: the
SELECT or table it names, how values decode, the scanner) and where its report goes (the query
output: CAPTURE applies)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cqlsh_ext.scanning.scan import Progress, Scanner, ScanSpec, error_text, shell_scanner

if TYPE_CHECKING:
    from cqlsh_ext.common.text import Line
    from cqlsh_ext.upstream.protocol import Parsed, Shell


def select_text(parsed: Parsed) -> str:
    """The SELECT statement inside the command, as the user typed it."""
    tokens = list(parsed.matched)
    start = next(i for i, tok in enumerate(tokens) if tok[1].upper() == "SELECT")
    end = len(tokens)
    while end > start and tokens[end - 1][0] == "endtoken":
        end -= 1
    if parsed.get_binding("dictfile") is not None:  # ADVISE's SAVE DICTIONARY 'file' ends the command
        end = max(i for i in range(start, end) if tokens[i][1].upper() == "SAVE")
    return parsed.extract_orig(tokens[start:end])


def whole_table(parsed: Parsed) -> bool:
    """SELECT <plain columns or *> FROM <table> and nothing else: may be split into token ranges."""
    tokens = [tok for tok in parsed.matched if tok[0] != "endtoken"]
    start = next(i for i, tok in enumerate(tokens) if tok[1].upper() == "SELECT")
    words = {tok[1].upper() for tok in tokens[start:]}
    if words & {"WHERE", "LIMIT", "GROUP", "ORDER", "PER", "ALLOW", "DISTINCT", "JSON", "("}:
        return False
    return parsed.get_binding("mv") is None


def names_select(parsed: Parsed) -> bool:
    return any(tok[1].upper() == "SELECT" for tok in parsed.matched)


@dataclass(frozen=True)
class InsightTarget:
    """What an insight command reads: `query` (a whole-table SELECT when `whole_table`: it may be
    split into token ranges), its `limit`, the table it names (the driver's `meta`, or None), and
    how values decode (-d's `mode`, the output `cap`)."""

    query: str
    whole_table: bool
    limit: int | None
    keyspace: str | None
    table: str | None
    meta: Any
    mode: str
    cap: int

    def scanner(self, shell: Shell, progress: Progress | None = None) -> Scanner:
        """The query read as one stream in the shell's process, up to its LIMIT."""
        return shell_scanner(shell, ScanSpec(self.query, limit=self.limit), progress)


def target(shell: Shell, parsed: Parsed, action: str, statement: str | None = None,
           statement_limit: int | None = None) -> InsightTarget | None:
    """What COMPRESSION `action` (or INSPECT) reads: `statement` when given (with its LIMIT), else
    the SELECT given, or for a table named alone a whole-table SELECT of its payload columns (its
    blob columns, its text columns outside the primary key: cql.types.table_payload_columns). None
    (said why) when such a table is unknown or has none."""
    from cqlsh_ext.insight.view_measures import effective_mode

    ks, table, meta = named_table(shell, parsed)
    settings = shell.settings.display

    def read(text: str, whole: bool, limit: int | None) -> InsightTarget:
        return InsightTarget(text, whole, limit, ks, table, meta, effective_mode(settings.mode), settings.cap)

    if statement is not None:
        return read(statement, False, statement_limit)
    if names_select(parsed):
        return read(select_text(parsed), whole_table(parsed), limit(parsed))
    if not ks or not table:
        shell.printerr(f"COMPRESSION {action}: name a table as keyspace.table (or USE a keyspace first), "
                       f"e.g. COMPRESSION {action} ks.t;")
        return None
    if meta is None:
        shell.printerr(f"COMPRESSION {action}: table {ks}.{table} not found")
        return None
    from cassandra.metadata import protect_name

    from cqlsh_ext.cql.types import table_payload_columns, udts_of

    columns = table_payload_columns(meta, udts_of(shell.conn.metadata.keyspaces.get(ks)))
    if not columns:
        shell.printerr(f"COMPRESSION {action}: {ks}.{table} has no blob column and no text column "
                       "outside its primary key")
        return None
    query = f"SELECT {', '.join(map(protect_name, columns))} FROM {protect_name(ks)}.{protect_name(table)}"
    return read(query, True, None)


def cql_name(shell: Shell, raw: str | None) -> str | None:
    """A name as the statement wrote it, as the schema spells it: quoted as is, else lower case."""
    if raw is None:
        return None
    return shell.cql_unprotect_name(raw) if raw.startswith('"') else raw.lower()


def named_table(shell: Shell, parsed: Parsed) -> tuple[str | None, str | None, Any]:
    """(keyspace, table, table metadata or None) named by the statement."""
    ks = cql_name(shell, parsed.get_binding("ksname")) or shell.current_keyspace
    table = cql_name(shell, parsed.get_binding("cfname"))
    meta = None
    if ks and table:
        try:
            meta = shell.conn.metadata.keyspaces[ks].tables.get(table)
        except (KeyError, AttributeError):
            meta = None
    return ks, table, meta


def wants_json(shell: Shell, parsed: Parsed) -> bool:
    return (parsed.get_binding("asjson") is not None
            or shell.settings.display.output_format.reports_as_json)


def write(shell: Shell, lines: Iterable[str]) -> None:
    out = shell.query_out
    for line in lines:
        out.write(line + "\n")
    out.flush()


def fit_report(shell: Shell, lines: Sequence[Line]) -> list[str]:
    """A text report laid out for the terminal the output goes to (-e too), else at its natural
    width; its charts in Unicode's block characters where the output's encoding has them."""
    from cqlsh_ext.common.text import draws_blocks, fit

    encoding = getattr(shell.query_out, "encoding", None)
    return list(fit(lines, shell.results.screen_width(), draws_blocks(encoding)))


def publish(shell: Shell, parsed: Parsed, to_json: Callable[[], Any],
            render: Callable[[], Sequence[Line]]) -> None:
    """A report as one JSON document (asked for, or the shell's output format), else as text laid
    out for the screen."""
    from cqlsh_ext.common import jsonenc

    write(shell, [jsonenc.dumps(to_json())] if wants_json(shell, parsed) else fit_report(shell, render()))


def limit(parsed: Parsed) -> int | None:
    limit = parsed.get_binding("limit")
    return int(limit) if limit is not None else None


def failed(shell: Shell, err: BaseException) -> None:
    shell.printerr(error_text(err))

