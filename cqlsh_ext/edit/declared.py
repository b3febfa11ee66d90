"""The edit package's declarations (found through the entry point group cqlsh_ext.features: the registry
imports this module, never its services): the edits of paths inside payloads (UPDATE and DELETE, its
statement's claim among CQL's; the API's db.edit), UNDO of any journaled write (its statement cqlsh's
grammar parses, a command of the shell's; db.undo), and propose_edit, the read feature MCP serves to
propose an edit or a rewrite a person runs."""

from __future__ import annotations

from cqlsh_ext.features import output_schemas
from cqlsh_ext.features.arguments import CONFIRM, JOURNAL
from cqlsh_ext.features.feature import (
    READ,
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

_HELP = "cqlsh_ext.edit.help"
_COMMAND = "cqlsh_ext.edit.command"
#: The API's result classes (api.writes), which a write's answer is made into.
_RESULTS = "cqlsh_ext.api.writes"

register(Feature(
    "propose_edit", "Propose an edit",
    "The UPDATE (or DELETE) of a payload path, or the COMPRESSION REWRITE of a column (target), a "
    "person would run in cqlsh-ext, with its preview: rows to change, refused, bytes. Writes nothing.",
    (Argument("table", "string", "keyspace.table", required=True),
     Argument("where", "string", "after WHERE: id = 42"),
     Argument("path", "string", "data.status", required=True),
     Argument("value", None, "the new value, any JSON (SET the path to it)", listed=False),
     Argument("remove", "boolean", "true: DELETE the path instead (no value)", listed=False),
     Argument("target", "string", "a chain to re-encode the column's values in ('zstd', 'gzip:9'): "
              "COMPRESSION REWRITE, path the column", listed=False),
     Argument("allow_filtering", "boolean", "true: the WHERE names no full primary key, and the rows a "
              "scan finds are edited", listed=False)),
    Reads("table", "table"), READ, output_schemas.PROPOSAL, Service("cqlsh_ext.edit.run", "propose_call"),
    details="The statement is the shell's edit (docs/edit.md), or with target its COMPRESSION "
            "REWRITE (docs/rewrite.md: a sample of a big table, sampled: true): run as it is, the shell "
            "previews the same figures and asks before writing (to_write adds CONFIRM). The server only "
            "reads: each row's value is read and rewritten as the edit would, in memory. Refused on a "
            "table whose values the policy redacts (the preview shows values)."))
register(Feature(
    "edit", "Edit paths inside payloads",
    "UPDATE ks.t SET data.status = 'PAID' WHERE ... or DELETE data.note FROM ks.t WHERE ...: fields "
    "inside the stored payloads changed in each value's own form (codec, record format).",
    (Argument("statement", "string", "the UPDATE or DELETE naming paths inside payloads", required=True),
     Argument("params", None, "the values of its ? markers (a list) or :name markers (a dict), bound as "
              "db.query binds them; the shell's statement holds its values"),
     CONFIRM),
    Reads("nothing"), WRITE, output_schemas.EDIT_RESULT, Service("cqlsh_ext.edit.run", "edit_call"),
    details="The shell's statement as typed (CONFIRM at its end writes); the API's db.edit. Each row "
            "is written on the condition that it still holds the bytes read (a row changed since is "
            "left alone), its old value journaled first; undo writes them back.",
    writes=Writes("statement", "statement"),
    method=Method("edit", positional=("params",), label="edit", result=Service(_RESULTS, "EditResult"),
                  doc="""\
UPDATE [ks.]table SET path = value [, ...] WHERE ... or DELETE path [, ...] FROM
[ks.]table WHERE ... (docs/edit.md): fields inside the stored payloads changed in each
value's own form. `params`: the values of its `?` markers (a list) or `:name` markers (a
dict), as db.query takes them: a SET's value (a JSON value: str, int, float, Decimal,
bool, None, dict, list), a condition's. A preview unless confirm=True (or CONFIRM ends
the statement); then each row is journaled and written as the shell writes it, and the
result names the journal db.undo takes. Its figures are data (EditResult)."""),
    # The shell's statement is CQL's UPDATE or DELETE: it claims those that name payload paths (one
    # without a path is encode()'s, then cqlsh's, as written).
    statement=Statement(
        ("UPDATE",), "UPDATE ks.t SET data.status = 'CANCELLED' WHERE id = 42 CONFIRM;", json=False,
        aliases=(("DELETE",),),
        usage="[keyspace.]table SET path = value [, ...] WHERE ... [CONFIRM] | DELETE path [, ...] FROM "
              "[keyspace.]table WHERE ... [CONFIRM]",
        claims=Service(_COMMAND, "intercept"), topics=(("edit", Text(_HELP, "EDIT_HELP")),),
        see_also=(("update", Text(_HELP, "UPDATE_SEE_ALSO")), ("delete", Text(_HELP, "DELETE_SEE_ALSO"))))))
#: What cqlsh's grammar parses of UNDO (edit.command.do_undo reads its bindings).
UNDO_GRAMMAR = r"""
<undoCommand> ::= "UNDO" ( path=<stringLiteral> | last="LAST" ) ( cut="CUT" )? ( unsealed="UNSEALED" )?
                  ( confirm="CONFIRM" ( confirmunsealed="UNSEALED" )? )?
                ;
"""

register(Feature(
    "undo", "Undo a write",
    "UNDO 'journal': an edit's, rewrite's or undo's old values written back where the rows still "
    "hold what was written.",
    (JOURNAL,
     Argument("unsealed", "boolean", "true: a journal without its seal is taken (its lines unverified)"),
     CONFIRM,
     Argument("cut", "boolean", "true: a journal without its closing line is taken (the rows it holds)")),
    Reads("nothing"), WRITE, output_schemas.UNDO_RESULT, Service("cqlsh_ext.writing.undo", "undo_call"),
    details="A row written again since (by anyone but a chain of this journal's edits and undos) is "
            "left alone and counted; an undo journals what it writes, so it is undone in turn. A "
            "journal a live run holds, tampered with, or cut without CUT is refused.",
    writes=Writes("journal", "journal"),
    method=Method("undo", label="undo", result=Service(_RESULTS, "UndoResult"), doc="""\
UNDO 'journal' (docs/edit.md): the journal's old values written back where the rows still
hold what was written (a confirmed RewriteResult or EditResult stands for its journal; a
path, the id a journal's name ends with, or "LAST"). A preview unless confirm=True; a
journal that is not sealed, not the user's or tampered with is refused; one without its
closing line is written back only with cut=True (the rows it holds), an unsealed one only
with unsealed=True.
`progress` as db.rewrite's."""),
    # The shell's UNDO: cqlsh's grammar parses it, its handler takes the parse (a command's).
    statement=Statement(("UNDO",), "UNDO LAST CONFIRM;", json=False, rule="<undoCommand>",
                        grammar=UNDO_GRAMMAR, help=Text(_HELP, "EDIT_HELP"),
                        parsed=Service(_COMMAND, "do_undo"), malformed=Service(_COMMAND, "undo_usage"))))

