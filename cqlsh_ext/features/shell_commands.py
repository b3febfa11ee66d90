"""The shell's own commands and statement intercepts, each declared once (features.commands): its
handler in the package that does the work, its grammar, HELP text, usage and completers. The shell
(cqlsh_ext.shell) imports this module when it starts: its `do_<word>` methods, HELP topics, the
grammar added to cqlsh's and the intercepts it hands statements to come from here. Intercepts of
one first word are tried in the order declared: a COPY (SELECT ...) is the export's before a COPY's
column paths are refused; an UPDATE with payload paths in SET is the edit's before encode() reads
it; a COMPRESSION REWRITE is the rewrite's before the other COMPRESSION statements go on."""

from __future__ import annotations

from cqlsh_ext.common.text import unknown
from cqlsh_ext.describe import command as describe_payload
from cqlsh_ext.describe.help import DESCRIBE_SEE_ALSO
from cqlsh_ext.describe.parse import WORDS as DESCRIBE
from cqlsh_ext.edit import command as edit
from cqlsh_ext.edit.help import DELETE_SEE_ALSO, EDIT_HELP, UPDATE_SEE_ALSO
from cqlsh_ext.encode import command as encode
from cqlsh_ext.encode.help import ENCODE_HELP
from cqlsh_ext.export import command as export
from cqlsh_ext.export.help import EXPORT_HELP
from cqlsh_ext.features import declared
from cqlsh_ext.features.commands import (
    Command,
    StatementIntercept,
    register_command,
    register_intercept,
    register_mistyped,
)
from cqlsh_ext.features.forms import form
from cqlsh_ext.features.help import form_and_prose, statement_help, umbrella_help
from cqlsh_ext.load import command as load
from cqlsh_ext.load.help import LOAD_HELP, LOAD_SEE_ALSO
from cqlsh_ext.output import command as output
from cqlsh_ext.payload_select import command as payload_select
from cqlsh_ext.payload_select.help import QUERIES_HELP, SELECT_SEE_ALSO
from cqlsh_ext.rewrite import command as rewrite
from cqlsh_ext.rewrite import parse as rewrite_parse
from cqlsh_ext.rewrite.help import RESUME_HELP, REWRITE_HELP, REWRITE_SUMMARY
from cqlsh_ext.settings import command as settings

register_command(Command("DECOMPRESS", "<decompressCommand>", settings.DECOMPRESS_GRAMMAR,
                         settings.DECOMPRESS_HELP, settings.do_decompress, usage=settings.decompress_usage))
register_mistyped(("DECOMPRESS",), settings.decompress_mistyped)
register_command(Command("DECODE", "<decodeCommand>", settings.DECODE_GRAMMAR, settings.DECODE_HELP,
                         settings.do_decode))
register_command(Command("OUTPUT", "<outputCommand>", output.OUTPUT_GRAMMAR, output.OUTPUT_HELP,
                         output.do_output))
_OWN = declared(plugins=False)
# INSPECT: read by the shell from inspect_value's declaration (features/reads.py), its values printed
# by insight.run_inspect.print_values; its completion written from the declaration
# (features.completion_grammar).
# The command gives HELP INSPECT, the pager, a line's end.
register_command(Command("INSPECT", "", "", statement_help(_OWN["inspect_value"]), None, paged=True))

#: COMPRESSION's statements, in the order HELP COMPRESSION gives them, by their second word: the
#: features that declare theirs (form, example and prose from the declaration), and the two read by a
#: grammar of their own.
_DECLARED = {"STATS": _OWN["compression_stats"], "ADVISE": _OWN["compression_advise"],
             "SETTINGS": _OWN["compression_settings"], "TRIAL": _OWN["compression_trial"]}
#: Each one's form and example, as its usage says them, and its part of HELP COMPRESSION.
_FORMS = {**{second: (form(feature), feature.statement.example if feature.statement else "",
                      form_and_prose(feature)) for second, feature in _DECLARED.items()},
          "REWRITE": (rewrite_parse.USAGE, rewrite_parse.EXAMPLE, REWRITE_SUMMARY)}


def _compression_usage(words: list[str]) -> str:
    """What a COMPRESSION statement cqlsh cannot parse is told: the form it started as, or all of
    them when its second word is none of them, with an example each."""
    asked = [words[1]] if len(words) > 1 and words[1] in _FORMS else list(_FORMS)
    expected = "\n".join(f"  {_FORMS[second][0]}" for second in asked)
    examples = "\n".join(f"  {_FORMS[second][1]}" for second in asked)
    return f"Expected:\n{expected}\nFor example:\n{examples}\nMore: HELP COMPRESSION"


def _compression_mistyped(words: list[str]) -> str | None:
    """COMPRESSION followed by a word that is none of its statements: the nearest, and the five."""
    if len(words) < 2 or not words[1][:1].isalpha() or words[1].upper() in _FORMS:
        return None
    return f"COMPRESSION {unknown('statement', words[1], list(_FORMS))} (HELP COMPRESSION)"


# Every COMPRESSION statement is read before cqlsh's grammar (the features' from their declarations,
# REWRITE by its intercept below), which completes them only (features.completion_grammar, rewrite.command's);
# cqlsh's parse of one that is none of them says what was expected.
register_command(Command(
    "COMPRESSION", "", "",
    umbrella_help("COMPRESSION", [(second, prose) for second, (_, _, prose) in _FORMS.items()]),
    None, usage=_compression_usage, paged=True,
    topics=(*((f"compression {second.lower()}", statement_help(feature))
              for second, feature in _DECLARED.items()),
            ("trial", statement_help(_OWN["compression_trial"])))))
register_mistyped(("COMPRESSION",), _compression_mistyped)
register_intercept(StatementIntercept(
    "COMPRESSION REWRITE", frozenset({"compression"}), rewrite.intercept, reads_only=False,
    rule=rewrite.RULE, grammar=rewrite.GRAMMAR,
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
register_intercept(StatementIntercept(
    "COPY ... FROM decoded documents", frozenset({"copy"}), load.intercept, reads_only=False,
    topics=(("load", LOAD_HELP),), see_also=(("copy", LOAD_SEE_ALSO),)))
# DESCRIBE PAYLOAD is describe_payload's statement (features.reads): its HELP topics and what HELP
# DESCRIBE adds here (its completion is written from the declaration: features.completion_grammar).
register_intercept(StatementIntercept(
    "DESCRIBE PAYLOAD", frozenset(DESCRIBE), None,
    topics=tuple((topic, statement_help(_OWN["describe_payload"]))
                 for topic in ("payload", "describe payload", "desc payload")),
    see_also=(("describe", DESCRIBE_SEE_ALSO), ("desc", DESCRIBE_SEE_ALSO))))
register_mistyped(DESCRIBE, describe_payload.mistyped)
register_intercept(StatementIntercept(
    "a SELECT reaching into payloads", frozenset({"select"}), payload_select.intercept,
    topics=(("queries", QUERIES_HELP),), see_also=(("select", SELECT_SEE_ALSO),)))
register_intercept(StatementIntercept(
    "COPY with payload paths in its columns", frozenset({"copy"}), payload_select.refuse_copy))
