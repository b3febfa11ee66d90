"""The Python API, the fourth front end (docs/api.md): `cqlsh_ext.connect(...)` gives a Database
whose queries and reports are the shell's, as typed answers; `cqlsh_ext.decode(value)` decodes one
value; every refusal is a `cqlsh_ext.Error`. Loaded when first used (cqlsh_ext.__getattr__)."""

from cqlsh_ext.api.database import Database, connect
from cqlsh_ext.api.errors import Error
from cqlsh_ext.api.one_value import DecodedValue, decode
from cqlsh_ext.api.query_answer import AnswerField, QueryAnswer
from cqlsh_ext.api.report import ReportResult
from cqlsh_ext.api.writes import ResumeResult, RewriteResult, UndoResult

__all__ = ["AnswerField", "Database", "DecodedValue", "Error", "QueryAnswer", "ReportResult", "ResumeResult",
           "RewriteResult", "UndoResult", "connect", "decode"]
