"""The shell's entry for exports, the claim of the export feature's statement (export/declared.py:
Statement.claims): `intercept` sees every COPY before cqlsh parses it and returns True when it was ours:

- `COPY (SELECT ...) TO 'file' ...` (cqlsh_ext.export.parse) runs the SELECT as a payload query
  runs (cqlsh_ext.payload_select: cost prompt, CONFIRM, workers, progress, retries) and writes its
  answer to the file (cqlsh_ext.export.run);
- a stock `COPY table TO 'x.parquet'` (or .jsonl, .ndjson: a file format cqlsh's COPY does not
  write, common.file_formats), which cqlsh would fill with CSV, is refused in one line pointing
  to the query form.

Any other COPY goes to cqlsh as written. Nothing heavy is imported here: the shell imports this
module at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cqlsh_ext.common.file_formats import by_suffix
from cqlsh_ext.export.parse import LABEL, STOCK_COPY_TO, CopyError, parse

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.export.target import PrivateFile
    from cqlsh_ext.settings.shell import Shell

#: Where the shell's exports are written under --read-only --export-dir (agent.export_dir holds the
#: directory and sets it): each file made through the held directory's descriptor, 0600; None: the
#: file the statement names, as COPY TO writes it.
HELD: PrivateFile | None = None


def intercept(shell: Shell, statement: Lexed) -> bool:
    """True when the statement was ours (run or refused, said in one line); False: cqlsh's COPY."""
    from cqlsh_ext.cql.errors import QueryError

    try:
        tokens = statement.tokens
    except QueryError:
        return False
    if len(tokens) < 2 or tokens[1].kind != "punct" or tokens[1].value != "(":
        return _refuse_stock(shell, statement.text)
    try:
        export = parse(statement)
        if shell.settings.display.mode == "none":
            raise CopyError("decoding is off (-d none): COPY table TO exports the stored bytes")
    except CopyError as err:
        shell.printerr(f"{LABEL}: {err}")
        return True
    import sys

    from cqlsh_ext.common.text import say
    from cqlsh_ext.export.run import export as write_export
    from cqlsh_ext.reading.context import shell_context

    written = write_export(shell_context(shell), export, HELD)
    if written is None:
        return True
    if shell.settings.display.output_format.name == "json":  # a program's answer: JSON, as every one
        import json

        sys.stdout.write(json.dumps({"copy": export.path, "format": export.fmt, "rows": written.rows,
                                     "interrupted": written.interrupted, "message": written.line}) + "\n")
    else:
        say(written.line, sys.stdout)
    sys.stdout.flush()
    return True


def _refuse_stock(shell: Shell, text: str) -> bool:
    """COPY table TO 'x.parquet' would write CSV under that name: said, pointing to the query form."""
    found = STOCK_COPY_TO.match(text)
    if found is None:
        return False
    name = found.group("file").replace("''", "'")
    fmt = by_suffix(name)
    if fmt is None or fmt.cqlsh_copy:
        return False
    table, written = found.group("table"), fmt.title
    shell.printerr(f"COPY {table} TO writes CSV of the stored bytes, not {written}: "
                   f"COPY (SELECT * FROM {table}) TO '{name}' writes {written} with blobs decoded "
                   "(HELP EXPORT)")
    return True
