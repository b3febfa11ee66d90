"""Calling a declared feature that no front end has an adapter of (a package's: features.ENTRY_POINT_GROUP)
from its declaration alone, as the shell and the Python API do (MCP's call_adapter beside them): its
arguments checked against the declaration (`checked`), the table it reads (`table_named`), its
service once that table is found (`ready_service`), and, for the shell, its statement read
with the shell's lexer (`statement_arguments`) and its HELP (`usage`, `document`).

A feature's statement in the shell is the words of its name, upper case (`toy_rows`: TOY ROWS),
then its required arguments in the order declared, then any argument as `name = value`: TOY ROWS
ks.t; or TOY ROWS table = ks.t. A value is a name as CQL writes one (`ks.t`, `"Ks".t`: its text,
as written), a string literal ('text'), a number, or true/false."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from cqlsh_ext.features.arguments import Invalid, Named, names

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Token
    from cqlsh_ext.features.feature import Argument, Feature, FeatureCall
    from cqlsh_ext.reading.context import ReadContext

__all__ = ["checked", "document", "plugins", "ready_service", "request_of", "statement_arguments",
           "statement_words", "table_named", "usage"]

#: A JSON type, as a Python value of it is tested (a bool is no integer nor number).
_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "number": (int, float),
                                        "boolean": (bool,), "array": (list, tuple), "object": (dict,)}


def plugins() -> dict[str, Feature]:
    """The declared features cqlsh-ext has none of its own of (packages' read features), by name."""
    from cqlsh_ext.features import declared, own

    names = own()
    return {name: feature for name, feature in declared().items() if name not in names}


def statement_words(feature: Feature) -> tuple[str, ...]:
    """The words of the feature's statement in the shell: those it declares (Feature.statement), else
    its name's, split at `_`, upper case."""
    if feature.statement is not None:
        return feature.statement.words
    return tuple(word.upper() for word in feature.name.split("_") if word)


def _kind_of(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES.get(kind, (object,)))


def checked(feature: Feature, given: Mapping[str, Any]) -> dict[str, Any]:
    """`given` as the declaration takes it: every name one of its arguments, every required one
    given, each value of its type (and within its `enum`, `minimum`, `maximum`, `maxLength`).
    Raises Invalid, one line naming the argument."""
    from cqlsh_ext.common.text import unknown

    declared = [argument.name for argument in feature.arguments]
    for name in given:
        if name not in declared:
            raise Invalid(f"{feature.name}: " + unknown("argument", name, declared))
    for name in feature.required:
        if name not in given:
            argument = feature.argument(name)
            raise Invalid(f"{feature.name}: {name} is required ({argument.doc})")
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
    return dict(given)


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


def statement_arguments(feature: Feature, text: str, tokens: list[Token]) -> tuple[dict[str, Any], bool]:
    """The arguments of the feature's statement `text`, `tokens` those after its words (the end
    token aside), and whether it asks for JSON (a declared Statement's `JSON` after its words): its
    required arguments in order, an argument with a `keyword` after that word (SAMPLE 500), any as
    `name = value`. Raises Invalid."""
    as_json = feature.statement is not None and feature.statement.json and bool(tokens) \
        and tokens[0].kind == "word" and tokens[0].value.upper() == "JSON"
    keywords = {argument.keyword.upper(): argument.name for argument in feature.arguments
                if argument.keyword is not None and feature.statement is not None}
    positional = list(feature.required)
    given: dict[str, Any] = {}
    i = 1 if as_json else 0
    while i < len(tokens):
        tok = tokens[i]
        followed = i + 1 < len(tokens)
        named = tok.kind == "word" and followed and tokens[i + 1].kind == "punct" \
            and tokens[i + 1].value == "="
        if named:
            name, i = tok.value.lower(), i + 2
            if i >= len(tokens):
                raise Invalid(f"{feature.name}: {name} = takes a value")
        elif tok.kind == "word" and tok.value.upper() in keywords and followed:
            name, i = keywords[tok.value.upper()], i + 1
        elif positional:
            name = positional.pop(0)
        else:
            example = f", e.g. {feature.statement.example}" if feature.statement is not None else ""
            raise Invalid(f"{feature.name}: {tok.describe()} is no argument of it: "
                          f"{' '.join(statement_words(feature))} {usage(feature)}{example}")
        if name in given:
            raise Invalid(f"{feature.name}: {name} is given twice")
        if name in positional:
            positional.remove(name)
        try:
            given[name], i = _value(text, tokens, i)
        except Invalid as err:
            raise Invalid(f"{feature.name}: {name}: {err}") from None
    return checked(feature, given), as_json


def request_of(feature: Feature, call: FeatureCall) -> Any:
    """The typed request of `call` that the feature's service takes, built by the feature's declared
    builder (Feature.request) from its arguments checked against the declaration (an argument given
    as None is one not given). Raises Invalid, one line naming the argument."""
    from cqlsh_ext.features.feature import FeatureCall

    if feature.request is None:
        raise LookupError(f"{feature.name} declares no request builder")
    given = checked(feature, {name: value for name, value in call.arguments.items() if value is not None})
    return feature.request(FeatureCall(given, call.table, call.found))


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
        spelt = tuple(t.value.lower() if t.kind == "word" else t.value for t in tokens[i:end:2])
        return Named(text[tok.start:tokens[end - 1].end], spelt), end
    raise Invalid(f"{tok.describe()} is no value (a name, a 'string', a number, true or false)")


def usage(feature: Feature) -> str:
    """Its arguments as its statement takes them: `<table> [limit = <integer>]`; a declared
    Statement's `[JSON] [SAMPLE n] [keyspace.]table`."""
    declared = feature.statement is not None
    parts = ["[JSON]"] if feature.statement is not None and feature.statement.json else []
    parts += [f"[{argument.keyword} {_placeholder(argument)}]" for argument in feature.arguments
              if argument.keyword is not None and declared and not argument.required]
    parts += [_positional(feature, name) if declared else f"<{name}>" for name in feature.required]
    parts += [f"[{argument.name} = <{argument.type or 'value'}>]" for argument in feature.arguments
              if not argument.required and not (argument.keyword is not None and declared)]
    return " ".join(parts)


def _placeholder(argument: Argument) -> str:
    return "n" if argument.type == "integer" else f"<{argument.type or 'value'}>"


def _positional(feature: Feature, name: str) -> str:
    """A required argument as a declared statement's usage names it: the table it reads as CQL names one."""
    if feature.reads.argument == name and feature.reads.what == "table":
        return "[keyspace.]table"
    return f"<{name}>"


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
