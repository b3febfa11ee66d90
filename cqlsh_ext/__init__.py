"""cqlsh-ext: cqlsh, extended to show what is inside compressed blobs.

The Python API (docs/api.md) is loaded when first asked for (PEP 562), so `import cqlsh_ext` costs
what it did: `cqlsh_ext.connect`, `cqlsh_ext.decode`, `cqlsh_ext.Error`, ... come from cqlsh_ext.api.
"""

#: typing's own flag, without importing typing (type checkers take this name as true); `Any` is
#: quoted below: no `from __future__ import annotations` on a warm call's path (agent.session_client).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from cqlsh_ext.api import (
        AnswerField,
        Database,
        DecodedValue,
        EditChange,
        EditResult,
        Error,
        Executed,
        Partition,
        QueryAnswer,
        ReportResult,
        ResumeResult,
        RewriteResult,
        UndoResult,
        connect,
        decode,
        read_partition,
        scan,
    )

__version__ = "0.1.0"

__all__ = ["AnswerField", "Database", "DecodedValue", "EditChange", "EditResult", "Error", "Executed",
           "Partition", "QueryAnswer", "ReportResult", "ResumeResult", "RewriteResult", "UndoResult",
           "__version__", "connect", "decode", "read_partition", "scan"]

_API = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> "Any":
    if name in _API:
        import importlib

        # By name, not an import statement: the layers (pyproject's import-linter contracts) put the
        # API above the modules that import cqlsh_ext for its __version__.
        return getattr(importlib.import_module("cqlsh_ext.api"), name)
    raise AttributeError(f"module 'cqlsh_ext' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _API)
