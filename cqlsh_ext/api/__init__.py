"""The Python API, the fourth front end (docs/api.md): `cqlsh_ext.connect(...)` gives a Database
whose queries and reports are the shell's, as typed answers; `cqlsh_ext.decode(value)` decodes one
value; `cqlsh_ext.read_partition(part, ...)` reads a part of db.partitions' in any process;
`cqlsh_ext.scan(db, statement)` is a polars source; every refusal is a `cqlsh_ext.Error`. Loaded
when first used (cqlsh_ext.__getattr__)."""

from cqlsh_ext.api.database import Database, Executed, connect, read_partition
from cqlsh_ext.api.errors import Error
from cqlsh_ext.api.one_value import DecodedValue, decode
from cqlsh_ext.api.partitions import Partition
from cqlsh_ext.api.polars_source import scan
from cqlsh_ext.api.query_answer import AnswerField, QueryAnswer
from cqlsh_ext.api.report import ReportResult
from cqlsh_ext.api.writes import EditChange, EditResult, ResumeResult, RewriteResult, UndoResult

__all__ = ["AnswerField", "Database", "DecodedValue", "EditChange", "EditResult", "Error", "Executed",
           "Partition", "QueryAnswer", "ReportResult", "ResumeResult", "RewriteResult", "UndoResult",
           "connect", "decode", "read_partition", "scan"]
