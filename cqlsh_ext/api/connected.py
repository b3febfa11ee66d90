"""What the parts of a connection (loads, partitions, polars_source, report_methods, writes) read of
it: the Database (api.database) as they see it, a Protocol below them, so that they name no module
above them and Database, which calls them, is the only one that knows them all (no circle of
imports, typing ones included: tests/test_import_circles.py). Typing only: nothing imports it at run
time."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from cassandra.cluster import Cluster, Session

    from cqlsh_ext.api.call import Call
    from cqlsh_ext.api.params import Params, Prepared
    from cqlsh_ext.api.query_answer import Progress, QueryAnswer
    from cqlsh_ext.api.report import ReportResult
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.payload.arrow_types import Kind
    from cqlsh_ext.query.grammar import Plan
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.resolve import TableTarget
    from cqlsh_ext.reading.typed import ReportAnswer
    from cqlsh_ext.settings import Settings

__all__ = ["Connected"]


class Connected(Protocol):
    """A connection (cqlsh_ext.Database) as its parts read it: its session and settings, and the
    readings they make on it (see Database's methods of the same names)."""

    cluster: Cluster
    session: Session
    keyspace: str | None
    config: Settings
    _prepared: Prepared

    @property
    def where(self) -> str: ...

    def context(self, errors: list[str], messages: list[str],
                progress: Progress | None = None) -> ReadContext: ...

    def _answer(self, statement: str, params: Params, call: Call, *,
                ranges: Sequence[tuple[int, int]] | None = None, kinds: Sequence[Kind | None] | None = None,
                plain: bool = False) -> QueryAnswer: ...

    def _plain_plan(self, statement: str, label: str) -> tuple[Lexed, Plan, TableTarget]: ...

    def _report(self, read: Callable[[ReadContext], ReportAnswer | None],
                progress: Progress | None) -> ReportResult: ...
