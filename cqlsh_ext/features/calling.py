"""Calling a declared feature that no front end has an adapter of (a package's: features.ENTRY_POINT_GROUP)
from its declaration alone, as the shell and the Python API do (MCP's declared_adapter beside them): its
arguments checked against the declaration (`checked`), the table it reads (`table_named`), its
service once that table is found (`ready_service`), and, for the shell and Spark mode, its statement
read with the shell's lexer into its request (`read_statement`, over `statement_arguments`) and its
HELP (`usage`, `document`).

A feature's statement in the shell is the words of its name, upper case (`toy_rows`: TOY ROWS),
then its required arguments in the order declared, then any argument as `name = value`: TOY ROWS
ks.t; or TOY ROWS table = ks.t. A value is a name as CQL writes one (`ks.t`, `"Ks".t`: its text,
as written), a string literal ('text'), a number, or true/false."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from cqlsh_ext.features.arguments import Invalid, Named, names
from cqlsh_ext.features.forms import form_and_example as _form
from cqlsh_ext.features.forms import placeholder, statement_words, usage

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Lexed, Token
    from cqlsh_ext.features.feature import Argument, Clause, Feature, FeatureCall
    from cqlsh_ext.reading.context import ReadContext

__all__ = ["Stated", "checked", "document", "plugins", "read_statement", "ready_service", "request_of",
           "spoken", "statement_arguments", "table_named"]

#: A JSON type, as a Python value of it is tested (a bool is no integer nor number).
_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "number": (int, float),
                                        "boolean": (bool,), "array": (list, tuple), "object": (dict,)}


def plugins() -> dict[str, Feature]:
    """The declared features cqlsh-ext has none of its own of (packages' read features), by name."""
    from cqlsh_ext.features import declared, own

    names = own()
    return {name: feature for name, feature in declared().items() if name not in names}


def _kind_of(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES.get(kind, (object,)))


def checked(feature: Feature, given: Mapping[str, Any]) -> dict[str, Any]:
    """`given` as the declaration takes it: every name one of its arguments, each value of its type
    (and within its `enum`, `minimum`, `maximum`, `maxLength`), every required one given.
    Raises Invalid, one line naming the argument."""
    from cqlsh_ext.common.text import unknown

    declared = [argument.name for argument in feature.arguments]
    for name in given:
        if name not in declared:
            raise Invalid(f"{feature.name}: " + unknown("argument", name, declared))
    for name, value in given.items():
        argument = feature.argument(name)
        keywords = argument.keywords
        if argument.type is not None and not _kind_of(value, argument.type):
            raise Invalid(f"{feature.name}: {name} takes {_a(argument.type)} ({argument.doc}), "
                          f"not {value!r}")
        if "enum" in keywords and value not in keywords["enum"]:
            raise Invalid(f"{feature.name}: " + unknown(name, str(value), [str(v) for v in keywords["enum"]]))
        if "minimum" in keywords and _kind_of(value, "number") and value < keywords["minimum"]:
            raise Invalid(f"{feature.name}: {name} is at least {keywords['minimum']}, not {value!r}")
        if "maximum" in keywords and _kind_of(value, "number") and value > keywords["maximum"]:
            raise Invalid(f"{feature.name}: {name} is at most {keywords['maximum']}, not {value!r}")
        if "maxLength" in keywords and isinstance(value, str) and len(value) > keywords["maxLength"]:
            raise Invalid(f"{feature.name}: {name} is at most {keywords['maxLength']} characters")
    instead = {argument.instead_of: argument for argument in feature.arguments if argument.instead_of}
    for name in feature.required:  # after the values given: `SAMPLE orders` is a sample mistyped
        other = instead.get(name)
        if other is not None and _given(given, other.name):
            if name in given:
                raise Invalid(f"{feature.name}: {name} or {other.name}, not both")
            continue
        if name not in given:
            argument = feature.argument(name)
            raise Invalid(f"{feature.name}: {name} is required ({argument.doc})")
    for argument in feature.arguments:
        alone = argument.goes_with is not None and not _given(given, argument.goes_with)
        if alone and _given(given, argument.name):
            raise Invalid(f"{feature.name}: {argument.name} goes with {argument.goes_with}")
    return dict(given)


def _given(given: Mapping[str, Any], name: str) -> bool:
    """Whether `name` is given something (false, a JSON null: not given)."""
    return given.get(name) not in (None, False)


def _a(kind: str) -> str:
    return {"integer": "a whole number", "number": "a number", "boolean": "true or false",
            "array": "a list", "object": "an object"}.get(kind, f"a {kind}")


def table_named(feature: Feature, arguments: Mapping[str, Any],
                keyspace: str | None) -> tuple[str, str] | None:
    """(keyspace, table) a feature that reads a table names (a table alone is in `keyspace`, the one
    in use), None for any other. Raises Invalid."""
    if feature.reads.what != "table" or feature.reads.argument is None:
        return None
    name = feature.reads.argument
    found = names(arguments.get(name), (1, 2), "table")
    if len(found) == 2:
        return found[0], found[1]
    if keyspace is None:
        raise Invalid(f"{feature.name}: {name} must be keyspace.table (no keyspace is in use)")
    return keyspace, found[0]


@dataclass(frozen=True)
class Stated:
    """A feature's statement as the shell read it: its checked `arguments`, whether it asks for
    JSON, the SELECT it wrote as its table's target (a declared Statement's `select`; None: the
    table named), and the values of the shell's clauses it wrote, by name (Statement.clauses)."""

    arguments: dict[str, Any]
    as_json: bool = False
    select: Lexed | None = None
    clauses: dict[str, Any] = field(default_factory=dict)


def statement_arguments(feature: Feature, text: str, tokens: list[Token]) -> Stated:
    """The feature's statement `text` as its declaration spells it, `tokens` those after its words
    (the end token aside): `JSON` after its words (a declared Statement's), its required arguments in
    order (the table it reads may be a SELECT of it where the Statement says `select`), an argument
    with a `keyword` after that word (SAMPLE 500; a boolean's word alone: CONFIRM), any as
    `name = value`, the shell's clauses before the table (PARALLEL 4, DECODE ALL), then its closing
    clauses (SAVE DICTIONARY 'file'). Where the Statement says `options_last`, the options (JSON
    among them) follow the required arguments in any order; an argument with `conditions` takes a
    WHERE's conditions after its keyword (`_conditions`); an option that `goes_with` another is
    refused without it. Raises Invalid."""
    declared = feature.statement
    last = declared is not None and declared.options_last
    # JSON after its words (where its options come last, JSON may end it too; JSON then followed by
    # a `.` is a name: DESCRIBE PAYLOAD json.t.c).
    as_json = declared is not None and declared.json and bool(tokens) \
        and tokens[0].kind == "word" and tokens[0].value.upper() == "JSON" \
        and not (last and len(tokens) > 1 and tokens[1].kind == "punct" and tokens[1].value == ".")
    omitted = set(declared.omits) if declared is not None else set()
    tokens, found = _closing(feature, text, tokens)
    keywords = {argument.keyword.upper(): argument for argument in feature.arguments
                if argument.keyword is not None and declared is not None and argument.name not in omitted}
    # A required argument with a keyword is read after its word alone (TO n), never in its place.
    positional = [name for name in feature.required
                  if declared is None or feature.argument(name).keyword is None]
    given: dict[str, Any] = {}
    select = None
    i = 1 if as_json else 0
    while i < len(tokens):
        tok = tokens[i]
        word = tok.value.upper() if tok.kind == "word" else ""
        followed = i + 1 < len(tokens)
        clause = _clause_at(feature, tokens, i, closing=False)
        named = tok.kind == "word" and followed and tokens[i + 1].kind == "punct" \
            and tokens[i + 1].value == "="
        if clause is not None:
            if clause.name in found:
                raise Invalid(f"{feature.name}: {' '.join(clause.words)} is given twice")
            found[clause.name], i = _clause_value(feature, clause, text, tokens, i + len(clause.words))
            continue
        if last and declared is not None and declared.json and word == "JSON" and not positional:
            if as_json:
                raise Invalid(f"{feature.name}: JSON is given twice")
            as_json, i = True, i + 1
            continue
        if named and tok.value.lower() not in omitted:
            name, i = tok.value.lower(), i + 2
            if i >= len(tokens):
                raise Invalid(f"{feature.name}: {name} = takes a value")
        elif word in keywords and (followed or keywords[word].type == "boolean"):
            taken, i = _keyword_argument(feature, keywords[word], word, text, tokens, i, given, positional)
            if taken is None:
                continue
            name = taken
        elif word in keywords and not positional:  # its value left out, at the end
            argument = keywords[word]
            wanted = "needs a condition" if argument.conditions else f"takes {_a(argument.type or 'value')}"
            raise Invalid(f"{feature.name}: {word} {wanted}: {_form(feature)}")
        elif positional:
            name = positional.pop(0)
            selecting = declared is not None and declared.select and name == feature.reads.argument
            if selecting and tok.kind == "word" and tok.value.upper() == "SELECT":
                select, given[name] = _select(feature, text, tokens[i:])
                break
            if selecting and feature.reads.what == "statement":
                raise Invalid(f"{feature.name}: {tok.describe()} is no SELECT: {_form(feature)}")
        else:
            raise Invalid(f"{feature.name}: {tok.describe()} is no argument of it: {_form(feature)}")
        if name in given:
            raise Invalid(f"{feature.name}: {name} is given twice")
        if name in positional:
            positional.remove(name)
        try:
            given[name], i = _value(text, tokens, i)
        except Invalid as err:
            raise Invalid(f"{feature.name}: {name}: {err}") from None
    _written_with(feature, given, found)
    return Stated(checked(feature, given), as_json, select, found)


def _keyword_argument(feature: Feature, argument: Argument, word: str, text: str, tokens: list[Token], i: int,
                      given: dict[str, Any], positional: list[str]) -> tuple[str | None, int]:
    """`argument` after its keyword `word` at tokens[i]: its name and where its value starts, or None
    and where the statement goes on when it was read whole here (a flag's word alone, a WHERE's
    conditions, put into `given`); an argument it stands instead of no longer `positional`."""
    name, i = argument.name, i + 1
    if name in given:
        raise Invalid(f"{feature.name}: {word} is given twice")
    if argument.instead_of in positional:  # FROM 'path': no column then
        positional.remove(argument.instead_of)
    if argument.type == "boolean":  # a flag: its word alone (CONFIRM)
        given[name] = True
        return None, i
    if argument.conditions:  # WHERE ...: up to the options that end the statement
        given[name], i = _conditions(feature, text, tokens, i, word)
        return None, i
    return name, i


def _written_with(feature: Feature, given: Mapping[str, Any], found: Mapping[str, Any]) -> None:
    """An option written without the one it goes with (Argument.goes_with, Clause.goes_with), refused
    in the statement's words: `SEED goes with SAMPLE n`."""
    clauses = feature.statement.clauses if feature.statement is not None else ()
    written = [(argument.keyword, argument.goes_with) for argument in feature.arguments
               if argument.keyword is not None and _given(given, argument.name)]
    written += [(" ".join(clause.words), clause.goes_with) for clause in clauses if clause.name in found]
    for spelt, goes_with in written:
        if goes_with is not None and not _given(given, goes_with):
            other = feature.argument(goes_with)
            spelling = f"{other.keyword} {placeholder(other)}".strip() if other.keyword else goes_with
            raise Invalid(f"{feature.name}: {spelt} goes with {spelling}")


def _conditions(feature: Feature, text: str, tokens: list[Token], k: int, word: str) -> tuple[str, int]:
    """The conditions after `word` (WHERE), from tokens[k] to the options that end the statement, and
    the index after them. The options are read from the statement's end, each at most once, so that
    a condition that ends in an option's word (`data.sample = 5`) stays the condition it is."""
    declared = feature.statement
    flags = {argument.keyword.upper() for argument in feature.arguments
             if argument.keyword is not None and argument.type == "boolean"}
    valued = {argument.keyword.upper(): argument.type or "value" for argument in feature.arguments
              if argument.keyword is not None and argument.type != "boolean" and not argument.conditions}
    for clause in declared.clauses if declared is not None else ():
        if len(clause.words) == 1 and clause.value == "flag":
            flags.add(clause.words[0])
        elif len(clause.words) == 1 and clause.value in ("integer", "string"):
            valued[clause.words[0]] = clause.value
    if declared is not None and declared.json and declared.options_last:
        flags.add("JSON")

    def word_at(at: int) -> str:
        return tokens[at].value.upper() if k <= at < len(tokens) and tokens[at].kind == "word" else ""

    end, seen = len(tokens), set()
    while end > k:
        ending, before = word_at(end - 1), word_at(end - 2)
        if ending in flags and ending not in seen:
            seen.add(ending)
            end -= 1
        elif tokens[end - 1].kind in ("int", "decimal", "string") and before in valued and before not in seen:
            seen.add(before)
            end -= 2
        else:
            break
    bare = word_at(end - 1)
    if end > k and bare in valued:  # SAMPLE with no number after it
        raise Invalid(f"{feature.name}: {bare} takes {_a(valued[bare])}: {_form(feature)}")
    if end == k:
        raise Invalid(f"{feature.name}: {word} needs a condition: {_form(feature)}")
    return text[tokens[k].start:tokens[end - 1].end].strip(), end


def read_statement(feature: Feature, statement: Lexed, skip: int, keyspace: str | None) -> tuple[Any, bool]:
    """The feature's statement read into what its service takes: after its `skip` words (and before
    its trailing `;`), its arguments checked against its declaration, its table named (a table alone
    is in `keyspace`, the one in use); the request its declared builder makes (cqlsh-ext's own
    features), else the FeatureCall (a package's); and whether it asked for JSON. Raises Invalid, or
    QueryError where the statement does not lex."""
    from cqlsh_ext.features.feature import FeatureCall

    tokens = [tok for tok in statement.tokens[skip:] if tok.kind != "end"]
    while tokens and tokens[-1].kind == "punct" and tokens[-1].value == ";":
        tokens.pop()
    stated = statement_arguments(feature, statement.text, tokens)  # checked against the declaration
    call = FeatureCall(stated.arguments, table_named(feature, stated.arguments, keyspace),
                       select=stated.select, clauses=stated.clauses)
    return (feature.request(call) if feature.request is not None else call), stated.as_json


def refusal(feature: Feature, err: Exception) -> str:
    """A service's refusal (its QueryError: `the table holds no blob column`) as every front end says
    it: one line naming the feature, as an argument's refusal is (`widest_values: ...`; the shell's
    `spoken` puts its statement's words instead), never the exception's class nor a traceback."""
    return f"{feature.name}: {' '.join(str(err).split())}"


def spoken(feature: Feature, said: str) -> str:
    """A refusal as a statement's reader says it: a declared statement's words where the declaration
    names the feature (`COMPRESSION SETTINGS: sample is at least 1`, not `compression_settings: ...`)."""
    prefix = f"{feature.name}: "
    if feature.statement is None or not said.startswith(prefix):
        return said
    return f"{' '.join(statement_words(feature))}: {said[len(prefix):]}"


def _clause_at(feature: Feature, tokens: list[Token], k: int, closing: bool) -> Clause | None:
    """The declared statement's clause (a closing one, or one before the table) whose words start at
    tokens[k], or None."""
    clauses = feature.statement.clauses if feature.statement is not None else ()
    return next((clause for clause in clauses if clause.closing == closing
                 and len(tokens) >= k + len(clause.words)
                 and all(tok.kind == "word" and tok.value.upper() == word
                         for tok, word in zip(tokens[k:], clause.words, strict=False))), None)


def _clause_value(feature: Feature, clause: Clause, text: str, tokens: list[Token],
                  k: int) -> tuple[Any, int]:
    """The value of `clause` whose words end before tokens[k], and the index after it."""
    spelt = " ".join(clause.words)
    if callable(clause.value):
        return clause.value(feature.name, text, tokens, k)
    if clause.value == "flag":
        return True, k
    kind = "int" if clause.value == "integer" else "string"
    if k >= len(tokens) or tokens[k].kind != kind:
        what = "a whole number" if kind == "int" else "a 'string'"
        raise Invalid(f"{feature.name}: {spelt} takes {what}: {spelt} {clause.placeholder}")
    return (int(tokens[k].value) if kind == "int" else tokens[k].literal), k + 1


def _closing(feature: Feature, text: str, tokens: list[Token]) -> tuple[list[Token], dict[str, Any]]:
    """`tokens` without the declared statement's closing clauses (SAVE DICTIONARY 'file': each at
    most once, nothing after them but another), and their values by name."""
    if feature.statement is None or not any(clause.closing for clause in feature.statement.clauses):
        return tokens, {}  # nothing to look for at every token
    first = next((k for k in range(len(tokens)) if _clause_at(feature, tokens, k, closing=True) is not None),
                 len(tokens))
    found: dict[str, Any] = {}
    k = first
    while k < len(tokens):
        clause = _clause_at(feature, tokens, k, closing=True)
        if clause is None:
            raise Invalid(f"{feature.name}: {tokens[k].describe()} is no argument of it: {_form(feature)}")
        if clause.name in found:
            raise Invalid(f"{feature.name}: {' '.join(clause.words)} is given twice")
        found[clause.name], k = _clause_value(feature, clause, text, tokens, k + len(clause.words))
    return tokens[:first], found


def _select(feature: Feature, text: str, tokens: list[Token]) -> tuple[Lexed, str]:
    """The SELECT that `tokens` are (the rest of the statement), and the argument it gives: for a
    feature that reads a table, the table the SELECT reads (a Named: its names read from the SELECT's
    tokens), for one that reads a statement, the SELECT's text."""
    from cqlsh_ext.cql.lexer import Lexed, Token
    from cqlsh_ext.cql.spelling import spell
    from cqlsh_ext.query.recognize import table_of

    end = tokens[-1].end
    select = Lexed(text, [*tokens, Token("end", "", end, end)])
    if feature.reads.what == "statement":
        return select, select.spanned()
    named = table_of(select)
    if named is None:
        raise Invalid(f"{feature.name}: a SELECT names the table it reads: SELECT ... FROM [keyspace.]table")
    names = tuple(name for name in named if name is not None)
    return select, Named(".".join(map(spell, names)), names)


def request_of(feature: Feature, call: FeatureCall) -> Any:
    """What the feature's service takes of `call`, its arguments checked against the declaration (an
    argument given as None is one not given): the typed request its declared builder
    (Feature.request) makes, or, for a feature that declares none (a package's), the call itself
    with its checked arguments. Every front end calls a feature through here. Raises Invalid, one
    line naming the argument."""
    given = checked(feature, {name: value for name, value in call.arguments.items() if value is not None})
    checked_call = replace(call, arguments=given)
    return checked_call if feature.request is None else feature.request(checked_call)


def ready_service(ctx: ReadContext, feature: Feature, call: FeatureCall,
                  front_end: str) -> Callable[..., Any]:
    """The feature's service, ready to be handed `call` in `ctx`: the table the call reads found
    (the schema refreshed: a table made a moment ago). Raises Invalid, one line: no such table, or
    no service (`front_end`, "the shell", says who cannot run it)."""
    from cqlsh_ext.reading.resolve import find_table

    if call.table is not None:
        keyspace, table = call.table
        if find_table(ctx.cluster, keyspace, keyspace, table, refresh=True) is None:
            raise Invalid(f"{feature.name}: no table {keyspace}.{table}")
    if feature.service is None:
        raise Invalid(f"{feature.name} declares no service: {front_end} cannot run it")
    return feature.service


def _value(text: str, tokens: list[Token], i: int) -> tuple[Any, int]:
    """The value at tokens[i] and the index after it: a literal, or a dotted name's text as written."""
    tok = tokens[i]
    if tok.kind == "string":
        return tok.literal, i + 1
    if tok.kind in ("int", "decimal"):
        return (int(tok.value) if tok.kind == "int" else float(tok.value)), i + 1
    negative = tok.kind == "punct" and tok.value == "-" and i + 1 < len(tokens)
    if negative and tokens[i + 1].kind in ("int", "decimal"):
        number, after = _value(text, tokens, i + 1)
        return -number, after
    if tok.kind == "word" and tok.value.lower() in ("true", "false"):
        return tok.value.lower() == "true", i + 1
    if tok.kind in ("word", "qname"):
        end = i + 1
        while end + 1 < len(tokens) and tokens[end].kind == "punct" and tokens[end].value == "." \
                and tokens[end + 1].kind in ("word", "qname"):
            end += 2
        spelt = tuple(t.name for t in tokens[i:end:2])
        return Named(text[tok.start:tokens[end - 1].end], spelt), end
    raise Invalid(f"{tok.describe()} is no value (a name, a 'string', a number, true or false)")


def document(feature: Feature) -> str:
    """HELP <its words>: its statement, title, description, details and its arguments' one-line docs."""
    lines = [f"{' '.join(statement_words(feature))} {usage(feature)};".replace(" ;", ";"), "",
             f"{feature.title}: {feature.description}"]
    if feature.details:
        lines += ["", feature.details]
    if feature.arguments:
        lines += ["", "Arguments:"]
        lines += [f"  {argument.name} ({argument.type or 'any'}{', required' if argument.required else ''}): "
                  f"{argument.doc}" for argument in feature.arguments]
    return "\n".join(lines)
