"""The shell's own commands and statement intercepts, each declared once (features.commands): its
handler in the package that does the work, its grammar, HELP text, usage and completers. The shell
(cqlsh_ext.shell) imports this module when it starts: its `do_<word>` methods, HELP topics, the
grammar added to cqlsh's and the intercepts it hands statements to come from here. Intercepts of
one first word are tried in the order declared: a COPY (SELECT ...) is the export's before a COPY's
column paths are refused; an UPDATE with payload paths in SET is the edit's before encode() reads
it; a COMPRESSION REWRITE is the rewrite's before the other COMPRESSION statements go on."""

from __future__ import annotations

from cqlsh_ext.describe import command as describe_payload
from cqlsh_ext.describe.help import DESCRIBE_SEE_ALSO, PAYLOAD_HELP
from cqlsh_ext.describe.parse import WORDS as DESCRIBE
from cqlsh_ext.edit import command as edit
from cqlsh_ext.edit.help import DELETE_SEE_ALSO, EDIT_HELP, UPDATE_SEE_ALSO
from cqlsh_ext.encode import command as encode
from cqlsh_ext.encode.help import ENCODE_HELP
from cqlsh_ext.export import command as export
from cqlsh_ext.export.help import EXPORT_HELP
from cqlsh_ext.features.commands import (
                         Command,
                         StatementIntercept,
                         register_command,
                         register_intercept,
                         register_mistyped,
)
from cqlsh_ext.insight import command as insight
from cqlsh_ext.insight.help import COMPRESSION_HELP, COMPRESSION_TOPICS, INSPECT_HELP
from cqlsh_ext.output import command as output
from cqlsh_ext.payload_select import command as payload_select
from cqlsh_ext.payload_select.help import QUERIES_HELP, SELECT_SEE_ALSO
from cqlsh_ext.rewrite import command as rewrite
from cqlsh_ext.rewrite.help import RESUME_HELP, REWRITE_HELP
from cqlsh_ext.settings import command as settings

register_command(Command("DECOMPRESS", "<decompressCommand>", settings.DECOMPRESS_GRAMMAR,
                         settings.DECOMPRESS_HELP, settings.do_decompress, usage=settings.decompress_usage))
register_mistyped(("DECOMPRESS",), settings.decompress_mistyped)
register_command(Command("DECODE", "<decodeCommand>", settings.DECODE_GRAMMAR, settings.DECODE_HELP,
                         settings.do_decode))
register_command(Command("OUTPUT", "<outputCommand>", output.OUTPUT_GRAMMAR, output.OUTPUT_HELP,
                         output.do_output))
# INSPECT: read by the shell from inspect_value's declaration (features/reads.py), its values printed
# by insight.run_inspect.print_values; cqlsh's grammar completes it only.
register_command(Command("INSPECT", "<inspectCommand>", insight.INSPECT_GRAMMAR, INSPECT_HELP, None,
                         paged=True))
register_command(Command("COMPRESSION", "<compressionCommand>", insight.COMPRESSION_GRAMMAR, COMPRESSION_HELP,
                         insight.do_compression, usage=insight.compression_usage, paged=True,
                         completers=((("compressionCommand", "into"), insight.keyspace_names),
                                     (("trialColumn", "colname"), insight.trial_columns)),
                         topics=COMPRESSION_TOPICS))
register_mistyped(("COMPRESSION",), insight.compression_mistyped)
register_intercept(StatementIntercept(
    "COMPRESSION REWRITE", frozenset({"compression"}), rewrite.intercept, reads_only=False,
    topics=(("rewrite", REWRITE_HELP), ("compression rewrite", REWRITE_HELP), ("resume", RESUME_HELP),
            ("compression rewrite resume", RESUME_HELP))))
register_intercept(StatementIntercept(
    "UPDATE and DELETE of payload paths", frozenset({"update", "delete"}), edit.intercept, reads_only=False,
    topics=(("edit", EDIT_HELP),), see_also=(("update", UPDATE_SEE_ALSO), ("delete", DELETE_SEE_ALSO))))
register_command(Command("UNDO", "<undoCommand>", edit.UNDO_GRAMMAR, EDIT_HELP, edit.do_undo,
                         reads_only=False, usage=edit.undo_usage))
register_intercept(StatementIntercept(
    "encode() in INSERT, UPDATE and BATCH", frozenset(encode.VERBS), encode.intercept, reads_only=False,
    topics=(("encode", ENCODE_HELP),)))
register_intercept(StatementIntercept(
    "COPY (SELECT ...) TO", frozenset({"copy"}), export.intercept, topics=(("export", EXPORT_HELP),)))
# DESCRIBE PAYLOAD is describe_payload's statement (features.reads): its completion and HELP here.
register_intercept(StatementIntercept(
    "DESCRIBE PAYLOAD", frozenset(DESCRIBE), None,
    rule=describe_payload.RULE, grammar=describe_payload.GRAMMAR,
    completers=((("describePayloadCommand", "payloadcol"), describe_payload.complete_column),),
    topics=(("payload", PAYLOAD_HELP), ("describe payload", PAYLOAD_HELP), ("desc payload", PAYLOAD_HELP)),
    see_also=(("describe", DESCRIBE_SEE_ALSO), ("desc", DESCRIBE_SEE_ALSO))))
register_mistyped(DESCRIBE, describe_payload.mistyped)
register_intercept(StatementIntercept(
    "a SELECT reaching into payloads", frozenset({"select"}), payload_select.intercept,
    topics=(("queries", QUERIES_HELP),), see_also=(("select", SELECT_SEE_ALSO),)))
register_intercept(StatementIntercept(
    "COPY with payload paths in its columns", frozenset({"copy"}), payload_select.refuse_copy))
