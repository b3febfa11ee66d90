"""Pages in: a driver protocol handler that keeps a RESULT page's rows as the server sent them.

The DataStax driver builds a tuple per row in `ResultMessage.recv_results_rows` (its Cython and
NumPy handlers swap that one method, through a ResultMessage subclass in their handler's
`message_types_by_opcode`). The handler here does the same: the metadata is parsed as the driver
parses it (column names and types, the paging state), then the row count is read and the rest of
the message kept where it is, uncopied (the message's bytes and the rows' start): a
payload.server_rows.ServerRows. Paging, retries, tracing,
warnings and custom payloads are the frame's or the metadata's, unchanged.

    fut = raw_execute_async(session, statement, ...)   # scan.execute_tuples(..., pages_in=True)

`CQLSH_EXT_PAGES_IN=0` turns it off. A future copies `session.client_protocol_handler` when it
is made (`ResponseFuture._protocol_handler`) and keeps it for its later pages, so the handler is
set around the scan's own `execute_async` only, as the row factory is: the shell's stock results never see it.
A session decrypting columns (a column encryption policy) keeps the driver's rows.
"""

from __future__ import annotations

import os
from typing import Any

from cqlsh_ext.payload.server_rows import ServerRows

__all__ = ["ENV", "enabled", "handler_for", "pass_through"]

#: `CQLSH_EXT_PAGES_IN=0` leaves every page to the driver's rows (a comparison, a bench's "before").
ENV = "CQLSH_EXT_PAGES_IN"


def enabled() -> bool:
    """Pages in is not turned off by the environment (CQLSH_EXT_PAGES_IN=0)."""
    return os.environ.get(ENV, "").strip() != "0"


_HANDLERS: dict[Any, Any] = {}


def handler_for(base: Any) -> Any:
    """The pages-in handler built on the session's own handler class `base` (made once per
    base); None when `base` decrypts columns (its rows stay the driver's)."""
    if getattr(base, "column_encryption_policy", None) is not None:
        return None
    made = _HANDLERS.get(base)
    if made is None:
        made = _HANDLERS[base] = _make(base)
    return made


def _make(base: Any) -> Any:
    from cassandra.protocol import ResultMessage, read_int

    result_class = base.message_types_by_opcode[ResultMessage.opcode]

    class ServerRowsResult(result_class):  # type: ignore[misc,valid-type]
        """The driver's RESULT message, its rows kept as the server sent them."""

        def recv_results_rows(self, f: Any, protocol_version: int, user_type_map: Any, result_metadata: Any,
                              column_encryption_policy: Any) -> None:
            self.recv_results_metadata(f, user_type_map)
            column_metadata = self.column_metadata or result_metadata
            self.column_names = [c[2] for c in column_metadata]
            self.column_types = [c[3] for c in column_metadata]
            count = read_int(f)
            # The rows where they are in the message (the BytesIO shares its bytes: no copy).
            self.parsed_rows = ServerRows(f.getvalue(), count, self.column_types, protocol_version, f.tell())

    opcodes = dict(base.message_types_by_opcode)
    opcodes[ResultMessage.opcode] = ServerRowsResult
    return type(f"ServerRows{base.__name__}", (base,), {"message_types_by_opcode": opcodes})


def pass_through(_names: Any, rows: Any) -> Any:
    """The row factory of a pages-in future: the page (ServerRows) as it is."""
    return rows
