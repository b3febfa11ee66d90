"""What a feature is, declared once for every front end: `Feature` (its name, title, one-line
description, arguments, what it reads, what it writes, its scope, its answer's JSON Schema, its
service), `Argument`, `Reads`, `Writes`, and the one registry (`FEATURES`, `register`). MCP's tools
are built from the read features' declarations (mcp_server/tools.py), the guard's scope from
`reads` (mcp_server/guard.py); the write features (`writes`) are the shell's statements
and the Python API's methods, never MCP's tools; docs/features.md is written from both
(features/reference.py, when `cqlsh-ext docs features` shows it)."""

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import import_module
from types import MappingProxyType
from typing import Any, NamedTuple

__all__ = ["FEATURES", "READ", "READS", "REPORT", "WRITE", "WRITES", "Argument", "Clause", "ClauseReader",
           "FeatureCall", "Feature", "HelpText", "Method", "Reads", "Service", "Statement", "Text", "Writes",
           "register", "registered"]

#: The OAuth scopes a feature declares (docs/mcp.md, "OAuth"): reading the database's rows, values
#: and schema; measuring what it stores (figures only, never a value).
READ, REPORT = "cqlsh.read", "cqlsh.report"
#: The scope of a write feature: writing the rows of a table, journaled and undoable. No MCP tool has
#: it (MCP's propose_edit proposes a write for a person to run).
WRITE = "cqlsh.write"

#: What a feature reads, as MCP's guard decides a call's scope from it: a SELECT (`statement`), one
#: table (`table`: keyspace.table), one column (`column`: keyspace.table.column), the tables of one
#: keyspace (`keyspace`), the list of keyspaces (`keyspaces`), or nothing of the database (`nothing`).
READS = ("statement", "table", "column", "keyspace", "keyspaces", "nothing")


class _Reads(NamedTuple):
    what: str
    argument: str | None = None


class Reads(_Reads):
    """What a feature reads: one of READS, and the argument that names it (None for `keyspaces` and
    `nothing`). A tool that declares none is refused by MCP's guard, never admitted."""

    __slots__ = ()

    def __new__(cls, what: str, argument: str | None = None) -> "Reads":
        if what not in READS:
            raise ValueError(f"a tool reads one of {', '.join(READS)}, not {what!r}")
        if (argument is None) != (what in ("keyspaces", "nothing")):
            raise ValueError(f"reading {what} is named by an argument" if argument is None
                             else f"reading {what} names no argument")
        return super().__new__(cls, what, argument)


#: What a write feature writes: the rows a statement names (`statement`: an edit's UPDATE or DELETE),
#: one column of a table's rows (`column`: keyspace.table.column), the rows a journal names
#: (`journal`: UNDO writes its old values back, RESUME goes on with its rewrite), or rows loaded into a
#: table (`table`: keyspace.table, a load's).
WRITES = ("statement", "column", "journal", "table")


class _Writes(NamedTuple):
    what: str
    argument: str


class Writes(_Writes):
    """What a write feature writes: one of WRITES, and the argument that names it."""

    __slots__ = ()

    def __new__(cls, what: str, argument: str) -> "Writes":
        if what not in WRITES:
            raise ValueError(f"a feature writes one of {', '.join(WRITES)}, not {what!r}")
        return super().__new__(cls, what, argument)


class Argument(NamedTuple):
    """One argument: its name, its JSON type (None: any JSON value, or one of `keywords`' enum), its
    one-line doc, whether it is required. `keywords`: the rest of its JSON Schema (minimum, enum,
    maxLength, ...). `listed`: whether the doc goes into the schema's description (tools/list, which
    every client reads whole, stays small: a doc left out is said in the tool's document)."""

    name: str
    type: str | None
    doc: str
    required: bool = False
    keywords: Mapping[str, Any] = MappingProxyType({})
    listed: bool = True
    #: Its spelling in a declared shell statement (Statement): the word before its value (`SAMPLE`:
    #: SAMPLE 500; a required one is written after its word too, never bare: `TO n`); None: given in
    #: order when required, else as `name = value`.
    keyword: str | None = None
    #: Its value after its keyword is conditions, as CQL writes a WHERE's: the text up to the options
    #: that end the statement (DESCRIBE PAYLOAD ks.t.c WHERE data.status = 'PAID' SAMPLE 500).
    conditions: bool = False
    #: The argument it is given with, never alone (confirm with every_row): refused alone, and
    #: written inside that one's brackets in the usage ([ALL [CONFIRM]]).
    goes_with: str | None = None
    #: The required argument it stands for (COMPRESSION TRIAL's FROM 'path' instead of its column):
    #: given, that one is not required (nor may be given too), and the usage writes the two as one
    #: or the other (`[keyspace.]table.column | FROM 'path'`).
    instead_of: str | None = None
    #: How its statement's usage writes its value after its keyword (`'path'`, `keyspace`); "": from
    #: its type (n, <string>).
    placeholder: str = ""

    def schema(self) -> dict[str, Any]:
        """Its JSON Schema, keys in the order type, keywords, description."""
        out: dict[str, Any] = {"type": self.type} if self.type is not None else {}
        out.update(self.keywords)
        if self.listed:
            out["description"] = self.doc
        return out


class Service:
    """The function a feature's request is handed to, `(context, request) -> answer`, named by its
    module and name and imported when first called (a front end starts without importing every
    feature's service); a handler, usage, completer or reader a declaration names is one too."""

    __slots__ = ("module", "function")

    def __init__(self, module: str, function: str) -> None:
        self.module, self.function = module, function

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Service) and (self.module, self.function) == (other.module, other.function)

    def __hash__(self) -> int:
        return hash((self.module, self.function))

    def __repr__(self) -> str:
        return f"Service({self.module!r}, {self.function!r})"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(import_module(self.module), self.function)(*args, **kwargs)

    def __str__(self) -> str:
        return f"{self.module}.{self.function}"

    @property
    def __name__(self) -> str:  # as a function's (cqlsh names a completer's wrapper after it)
        return self.function


class Text:
    """A text a declaration names without importing it (a HELP text, a grammar: a constant of its
    package's help.py or command.py), read when first shown: `str(text)`. A plain `str` is declared
    as it is; every reader of a declared text says `str(...)`."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __str__(self) -> str:
        return str(getattr(import_module(self.module), self.name))

    def __repr__(self) -> str:
        return f"Text({self.module!r}, {self.name!r})"


#: A declared text: as it is, or read when first shown.
HelpText = str | Text


#: A clause's reader of its own grammar (features/clauses.py: STATS' SAMPLE ...): the feature's
#: name (for its refusals), the statement's text and tokens, the index after the clause's words ->
#: its value and the index after it. Raises features.arguments.Invalid.
ClauseReader = Callable[[str, str, list[Any], int], tuple[Any, int]]


class Clause(NamedTuple):
    """A clause of a declared statement that only the shell has, beside the feature's arguments:
    its words (`PARALLEL`, `DECODE ALL`, `SAVE DICTIONARY`), what follows them (`value`: "integer",
    "string" a literal, "flag" nothing: its value True, or a ClauseReader of a grammar of its own),
    the name its value goes by in FeatureCall.clauses (the request builder reads it), its
    placeholder in the usage (`n`, `'file'`, `...`), and whether it closes the statement (after the
    table or its SELECT: SAVE DICTIONARY) or comes before the table. No argument of MCP's or the API's:
    what it says is the shell's (a file on its machine, its processes)."""

    words: tuple[str, ...]
    name: str
    value: str | ClauseReader = "string"
    placeholder: str = ""
    closing: bool = False
    #: The argument it is written with, never alone (SEED with SAMPLE n), as Argument.goes_with.
    goes_with: str | None = None
    #: Where its value is a grammar of its own (a ClauseReader's): what completes it after its words,
    #: in cqlsh's grammar language (`<statsSample>`), and the rules that define it
    #: (shell.completion).
    grammar: str = ""
    rules: str = ""
    #: It writes or appends to a local file (SAVE DICTIONARY 'file'): the read-only rule refuses a
    #: statement that gives it (features.read_rule).
    writes_file: bool = False


class Statement(NamedTuple):
    """A feature's statement in the shell, declared with it: its words (`COMPRESSION SETTINGS`), an
    example, and whether `JSON` may follow the words (the report printed as one JSON document). The
    shell reads it with its lexer from the declaration (features/calling.py): its required arguments
    in order, each argument with a `keyword` after its word, any as `name = value`. A feature that
    declares none (a package's) is the words of its name.

    `options_last`: its options (keywords, clauses, JSON) follow its required arguments, as its usage
    writes them (DESCRIBE PAYLOAD ks.t.c SAMPLE 500 JSON); else they come before, JSON first.

    `select`: the table it reads may be written as a SELECT of it instead, or the statement it reads
    is one (the rest of the statement before its closing clauses: the report reads that SELECT's
    rows, as written); `omits`: the arguments the statement does not spell (a SELECT names its
    columns; a clause says more); `clauses`: the shell's own clauses; `runs`: the shell's printer of
    it, `(context, request, as_json, out, width) -> None`, where the answer is printed as it comes
    (INSPECT: each value as it is read; None: the report printed whole by the shell)."""

    words: tuple[str, ...]
    example: str
    json: bool = True
    select: bool = False
    omits: tuple[str, ...] = ()
    clauses: tuple[Clause, ...] = ()
    runs: Service | None = None
    options_last: bool = False
    #: What its HELP says after its form (the form is written from this declaration: features/help.py),
    #: indented as HELP's texts are, read when HELP shows it (a Text of its package's help.py); "" for
    #: a package's (its document is its HELP).
    help: HelpText = ""
    #: What HELP of the word its statement shares with others says of it after its form (HELP
    #: COMPRESSION of TRIAL); "": its `help`.
    summary: HelpText = ""
    #: What completes a name an argument takes beyond cqlsh's own completion (a table's payload
    #: columns): (argument, `(ctxt, shell) -> names`), as cqlsh's completers are
    #: (shell.completion).
    completers: tuple[tuple[str, Callable[..., Any]], ...] = ()
    #: Other words the statement may start with (DESC PAYLOAD for DESCRIBE PAYLOAD), as many as its own.
    aliases: tuple[tuple[str, ...], ...] = ()
    #: Whether a statement of its words is its own, from its tokens (its words and end token
    #: included), where they may start a statement of cqlsh's too (DESC payload WITH INTERNALS
    #: describes an object named payload); None: every one is.
    recognizes: Callable[[list[Any]], bool] | None = None
    #: What `cqlsh-ext spark` runs for it (docs/spark.md): `(request, as_json) -> job`, handed the
    #: request the statement makes as the shell reads it, refusing in one line what Spark does not
    #: run of it (the shell's SAMPLE), the job then `job.run(spark, session, connection)` (its
    #: executors' tasks, the report printed); None: the statement is the shell's alone.
    spark: Service | None = None
    #: More HELP topics that print its HELP (HELP PAYLOAD for DESCRIBE PAYLOAD): (topic, text), a
    #: topic of several words asked for as HELP <words>.
    topics: tuple[tuple[str, HelpText], ...] = ()
    #: Lines HELP of a word adds after cqlsh's own HELP of it: (word, line) (HELP DESCRIBE points
    #: to HELP DESCRIBE PAYLOAD).
    see_also: tuple[tuple[str, HelpText], ...] = ()
    #: A statement that starts with a word of CQL's (COPY, SELECT, UPDATE): its claim on a lexed
    #: statement of its first words, `(shell, statement) -> True | False | Rewrite`, tried in order
    #: with the other claims (features.commands: True its own, run or refused in one line; False not
    #: its own, handed on unchanged; a Rewrite cqlsh runs instead). None: a statement of its words
    #: is its own, read from this declaration (shell.door).
    claims: Callable[..., Any] | None = None
    #: What `cqlsh-ext --spec` says the statement does where its feature's description is MCP's
    #: tool's, not the shell's statement (export's file in the server's export directory); "": the
    #: feature's description.
    describes: str = ""
    #: A claimed statement's grammar for Tab (cqlsh never parses it): its symbol, its rules in
    #: cqlsh's grammar language, and completers for their symbols (features.commands.Completers).
    rule: str = ""
    grammar: HelpText = ""
    grammar_completers: tuple[tuple[tuple[str, str], Callable[..., Any]], ...] = ()
    #: The claims it is tried after (their features' names): one whose statements
    #: another's also takes.
    after: tuple[str, ...] = ()
    #: A claimed statement's usage after its words, as its HELP writes it (`(SELECT ...) TO 'file'`):
    #: its claim reads it, never the arguments (features.forms.usage says it instead of theirs).
    usage: HelpText = ""
    #: A command of the shell's own (its first word starts no statement of cqlsh's: INSPECT): it
    #: ends at its line's end as cqlsh's shell commands do, its output goes through the interactive
    #: shell's pager, and cqlsh's HELP lists it among the shell's commands (its `topics` give the
    #: text; features.commands.command reads it as a command).
    command: bool = False
    #: A statement cqlsh's grammar parses (its `rule`, `grammar` and `grammar_completers`, as a
    #: claim's are declared), the shell's `do_<word>` (UNDO): this handler, `(shell, parsed) -> None`,
    #: takes cqlsh's parse of it (its bindings). Its `help` is its HELP text whole (its form is its
    #: grammar's, not written from the arguments), and it writes what its feature declares it writes
    #: (features.commands reads it as a command).
    parsed: Callable[..., Any] | None = None
    #: What a statement of `parsed` that cqlsh cannot parse is told: the words typed (upper case) ->
    #: the expected forms and an example. None: cqlsh's own 'Improper ... command.'
    malformed: Callable[[list[str]], str] | None = None

    @property
    def read_from_declaration(self) -> bool:
        """The shell reads a statement of its words from this declaration (shell.door): neither a
        claim's nor cqlsh's grammar's to read."""
        return self.claims is None and self.parsed is None


class Method(NamedTuple):
    """A feature's method in the Python API (cqlsh_ext.Database: `db.<name>(...)`), made from the
    declaration (api.report_methods): its parameters the declared arguments, in order (a required
    one first, without a default; a write feature's others keyword-only: confirm=True is written
    out), and `progress`; `omits` the arguments the API answers its own way (how values decode is
    the connection's; a JSON Schema is ReportResult.json_schema())."""

    name: str
    omits: tuple[str, ...] = ()
    #: Optional arguments that stay positional after the required ones (db.edit's params).
    positional: tuple[str, ...] = ()
    #: What help(db.<name>) says; "": the declaration's title, description, details and arguments.
    doc: str = ""
    #: A write feature's: how its refusals begin (the shell's words, `COMPRESSION REWRITE`; "": its
    #: name), and the typed result its service's answer (a dict of the fields its output schema names)
    #: is made into, named as a service is (Service("cqlsh_ext.api.writes", "RewriteResult"): the class,
    #: called with those fields and `text`); None: a WriteResult of them.
    label: str = ""
    result: Service | None = None


@dataclass(frozen=True)
class FeatureCall:
    """A call of a feature that no front end has an adapter of, as a front end hands it to the
    feature's service (`service(context, call)`): its arguments as given (the front end has checked
    them against the declaration, and its policy what they name) and, for a feature that reads a
    table (or a statement's), that table as the front end read it (keyspace, table; a keyspace None:
    the context's, as a SELECT may name its table)."""

    arguments: Mapping[str, Any]
    table: tuple[str | None, str] | None = None
    #: That table as the front end found it already (reading.resolve.TableTarget; None: the reading
    #: finds it): a report's request carries it, so that it is not resolved twice.
    found: Any = field(default=None, compare=False)
    #: The SELECT the shell's statement wrote as the table's target (a declared Statement's
    #: `select`: cql.lexer.Lexed, its tokens; None: the table, as the arguments name it).
    select: Any = None
    #: The values of the shell's clauses the statement wrote (Statement.clauses), by name.
    clauses: Mapping[str, Any] = field(default_factory=dict)
    #: The front end's binding of a statement's markers to the values a program gave (the API's
    #: `params`, through its connection's prepared statements): `(lexed, server_text, taken) -> bound`
    #: (api.params.Bound); None: the statement holds its values (the shell's).
    bind: Callable[..., Any] | None = field(default=None, compare=False)
    #: The front end's bound on a statement a service spells from the arguments (propose_edit's),
    #: `(lexed) -> None`, raising cql.errors.QueryError before any parser reads it (MCP's: its tokens
    #: and how deep its brackets nest); None: none beyond the shell's.
    bound: Callable[[Any], None] | None = field(default=None, compare=False)


class Feature(NamedTuple):
    """A feature, declared once. `description`: what its caller needs to call it (one line, as
    tools/list says it); `details`: the rest (its document). `service`: the function its request is
    handed to (None: a front end answers it with its own reading, as MCP's describe_table does).
    `reads`: what it reads (a write feature: beyond what it writes); `writes`: what a write feature
    writes (None: a read feature), its scope then WRITE. `request`: the function that builds the
    service's typed request from a FeatureCall (insight/report_requests.py; None: the service takes the
    FeatureCall itself, or its front ends build what it takes). `statement`: its statement in the
    shell, where the shell reads it from this declaration (None for cqlsh-ext's own: cqlsh's grammar
    reads it, in its command module)."""

    name: str
    title: str
    description: str
    arguments: tuple[Argument, ...]
    reads: Reads
    scope: str
    output_schema: dict[str, Any]
    service: Service | Callable[..., Any] | None = None
    details: str = ""
    writes: Writes | None = None
    request: Callable[[FeatureCall], Any] | None = None
    statement: Statement | None = None
    #: Its method in the Python API (None: none of its own; a package's is db.feature(name, ...)).
    method: Method | None = None
    #: A statement of the shell alone (COMPRESSION TRIAL: it writes scratch tables, so it is no read
    #: feature an assistant may call, nor one of the journaled writes): never an MCP tool nor an API
    #: method.
    shell_only: bool = False

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(argument.name for argument in self.arguments if argument.required)

    def argument(self, name: str) -> Argument:
        return next(argument for argument in self.arguments if argument.name == name)


#: Every feature, by name, in the order registered (each package's declared.py declares its own).
FEATURES: dict[str, Feature] = {}
#: The module each feature was registered by (its package's declaration module, a plugin's, a test's):
#: cqlsh-ext's own are those its own entry points name (features.own).
DECLARED_IN: dict[str, str] = {}


def register(feature: Feature) -> Feature:
    """Declares `feature` (its name new): every front end built after finds it. The module that calls
    this is recorded as the one that declares it (DECLARED_IN)."""
    import sys

    if feature.name in FEATURES:
        raise ValueError(f"a feature named {feature.name} is declared already")
    if feature.reads.argument is not None and feature.reads.argument not in feature.required:
        raise ValueError(f"{feature.name} reads what {feature.reads.argument} names: a required argument")
    if feature.writes is not None and feature.writes.argument not in feature.required:
        raise ValueError(f"{feature.name} writes what {feature.writes.argument} names: a required argument")
    if feature.writes is not None and feature.scope != WRITE:
        raise ValueError(f"{feature.name} writes: its scope is {WRITE}, not {feature.scope!r}")
    if feature.statement is not None and feature.statement.select \
            and feature.reads.what not in ("table", "statement"):
        raise ValueError(f"{feature.name}'s statement takes a SELECT: it reads no table nor statement")
    if feature.statement is not None and set(feature.statement.omits) & set(feature.required):
        raise ValueError(f"{feature.name}'s statement spells every required argument")
    if feature.method is not None and feature.shell_only:
        raise ValueError(f"{feature.name} is the shell's alone: it has no method")
    if feature.method is not None and set(feature.method.omits) & set(feature.required):
        raise ValueError(f"{feature.name}'s method takes every required argument")
    if feature.shell_only and feature.statement is None:
        raise ValueError(f"{feature.name} is the shell's alone: it declares its statement")
    for clause in feature.statement.clauses if feature.statement is not None else ():
        if isinstance(clause.value, str) and clause.value not in ("integer", "string", "flag"):
            raise ValueError(f"{feature.name}'s clause {' '.join(clause.words)}: a clause's value is "
                             f"integer, string, flag or a reader, not {clause.value!r}")
    for argument in feature.arguments:
        if argument.instead_of is not None and argument.instead_of not in feature.required:
            raise ValueError(f"{feature.name}'s {argument.name} stands for a required argument, not "
                             f"{argument.instead_of!r}")
    if feature.writes is None and feature.scope not in (READ, REPORT):
        raise ValueError(f"{feature.name}'s scope is {READ} or {REPORT}, not {feature.scope!r}")
    FEATURES[feature.name] = feature
    DECLARED_IN[feature.name] = str(sys._getframe(1).f_globals.get("__name__", ""))
    return feature


@contextmanager
def registered(feature: Feature) -> Iterator[Feature]:
    """`feature` declared for the time of the block (a test's toy feature), then taken back."""
    register(feature)
    try:
        yield feature
    finally:
        FEATURES.pop(feature.name, None)
        DECLARED_IN.pop(feature.name, None)
