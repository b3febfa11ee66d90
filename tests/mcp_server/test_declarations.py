"""Each tool declares with itself what it reads (feature.Reads), and the guard's scope comes from that
declaration alone: a tool that declares nothing is refused before anything reads, a toy tool
declared in one place is scoped (its denied table refused by the policy) without a word of the
guard's changing, and the guard names no tool."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from cqlsh_ext.features import ENTRY_POINT_GROUP, declared
from cqlsh_ext.features.feature import READ, READS, Argument, Feature, Reads, Service, register, registered
from cqlsh_ext.mcp_server import guard as guard_module
from cqlsh_ext.mcp_server.answers import ToolAnswer
from cqlsh_ext.mcp_server.guard import Guard
from cqlsh_ext.mcp_server.policy import Pattern, Policy
from cqlsh_ext.mcp_server.tools import TOOLS, Tool, Work, served_tools


def _work() -> Work:
    # No connection: what is refused here is refused before anything reads, and the toy that is
    # admitted reads nothing (the call's decode settings, and the keyspace a refusal's did-you-mean reads).
    served = SimpleNamespace(context=SimpleNamespace(display=SimpleNamespace(columns={}), cluster=None,
                                                     keyspace=None))
    return Work(served=served, stop=threading.Event())  # type: ignore[arg-type]


def _toy(reads: Reads | None, arguments: dict[str, dict[str, Any]] | None = None) -> tuple[Tool, list[str]]:
    """A tool declared in one place, and the calls that reached its answer."""
    reached: list[str] = []

    def answer(work: Work, given: dict[str, Any]) -> ToolAnswer:
        reached.append("answered")
        return ToolAnswer(data={"answered": True})

    return Tool("toy_report", "Toy", "A toy.", arguments or {}, (), answer, reads=reads), reached


def test_a_tool_that_declares_nothing_it_reads_is_refused() -> None:
    tool, reached = _toy(None)
    answer = Guard(Policy()).wrap(tool).call(_work(), {})
    assert answer.is_error
    assert answer.error is not None and answer.error.startswith(
        "refused: the tool toy_report declares nothing of what it reads")
    assert reached == []


def test_a_toy_tool_is_scoped_by_its_declaration_alone() -> None:
    guard = Guard(Policy(denied=(Pattern.parse("secret_ks.vault", 2, 2, "deny"),)))
    table = {"table": {"type": "string"}}
    tool, reached = _toy(Reads("table", "table"), table)
    refused = guard.wrap(tool).call(_work(), {"table": "secret_ks.vault"})
    assert refused.is_error and refused.error is not None and "secret_ks.vault" in refused.error
    assert reached == []
    nothing, reached = _toy(Reads("nothing"))
    answered = guard.wrap(nothing).call(_work(), {})
    assert answered.data == {"answered": True} and reached == ["answered"]


def test_an_argument_declared_to_hold_conditions_is_bounded_as_a_statement_before_the_answer() -> None:
    # A declared argument that holds a WHERE's conditions (Argument.conditions) is bounded by MCP as a
    # statement is (its tokens, how deep its brackets nest) before any parser reads it, for any
    # feature that declares one: no adapter of its own says so.
    from cqlsh_ext.mcp_server.tools import Adapter, declared_tool

    reached: list[dict[str, Any]] = []

    def answer(work: Work, given: dict[str, Any]) -> ToolAnswer:
        reached.append(given)
        return ToolAnswer(data={"answered": True})

    feature = Feature("toy_where", "Toy", "A toy.",
                      (Argument("where", "string", "conditions as after WHERE", keyword="WHERE",
                                conditions=True),), Reads("nothing"), READ, {"type": "object"},
                      Service("toy", "none"))
    tool = declared_tool(feature, Adapter(answer))
    deep = tool.call(_work(), {"where": "data.a = " + "(" * 65 + "1" + ")" * 65})
    assert deep.error is not None and deep.error.startswith("refused: brackets nested more than 64 deep")
    unlexed = tool.call(_work(), {"where": "data.a = 'open"})
    assert unlexed.error is not None and unlexed.error.startswith("syntax error in where: ")
    assert reached == []
    assert tool.call(_work(), {"where": "data.a = (1)"}).data == {"answered": True}
    assert reached == [{"where": "data.a = (1)"}]


def test_each_adapter_left_is_what_mcp_alone_does_and_the_readme_says_what() -> None:
    # A tool is its declaration's (declared_answer) unless ADAPTERS holds what MCP alone does for it:
    # each adapter left is named in mcp_server/README.md with what a declaration cannot say, and
    # propose_edit's carries its flag alone (its proposal is its declared service's).
    import re

    from cqlsh_ext.mcp_server import tools

    readme = (Path(tools.__file__).parent / "README.md").read_text()
    section = readme.split("## The tools' adapters", 1)[1].split("\n## ", 1)[0]
    said = set(re.findall(r"^- (.+?):", section, re.MULTILINE))
    named = {name.strip("`") for line in said for name in line.split(", ")}
    assert named == set(tools.ADAPTERS)
    assert tools.ADAPTERS["propose_edit"].answer is None and not tools.ADAPTERS["propose_edit"].screened
    proposal = declared(plugins=False)["propose_edit"]
    assert proposal.service is not None and str(proposal.service) == "cqlsh_ext.edit.run.propose_call"


def test_a_declaration_names_an_argument_where_it_reads_one() -> None:
    with pytest.raises(ValueError, match="named by an argument"):
        Reads("table")
    with pytest.raises(ValueError, match="names no argument"):
        Reads("nothing", "table")
    with pytest.raises(ValueError, match="not 'rows'"):
        Reads("rows", "statement")


def test_every_served_tool_declares_what_it_reads_and_the_guard_names_none() -> None:
    for tool in TOOLS.values():
        assert tool.reads is not None, tool.name
        assert tool.reads.what in READS
        if tool.reads.argument is not None:
            assert tool.reads.argument in tool.arguments, tool.name
            assert tool.reads.argument in tool.required, tool.name
        assert tool.scope is not None, tool.name  # its OAuth scope, declared with it too
    source = inspect.getsource(guard_module)
    named = [name for name in TOOLS if f'"{name}"' in source or f"'{name}'" in source]
    assert named == []


# ------------------------------------------------------------------- one declaration per feature

ROOT = Path(__file__).resolve().parents[2]

#: A toy read feature declared in one place, its own module, registered as a package of its own
#: registers its features (the entry point group features.ENTRY_POINT_GROUP): it counts a table's
#: rows through the call's reading context.
TOY_MODULE = '''
from cqlsh_ext.features.feature import READ, Argument, Feature, Reads, register


def count_rows(ctx, call):
    from cqlsh_ext.cql.spelling import spell
    from cqlsh_ext.reading.typed import ReportAnswer

    keyspace, table = call.table
    row = ctx.session.execute(f"SELECT count(*) AS n FROM {spell(keyspace)}.{spell(table)}").one()
    count = row["n"] if isinstance(row, dict) else row.n  # the shell's session: its row factory
    data = {"table": f"{keyspace}.{table}", "rows": count}
    return ReportAnswer("TOY ROWS", lambda: data, lambda width, blocks: [f"{count} rows"])


register(Feature(
    "toy_rows", "Toy rows", "Counts a table's rows.",
    (Argument("table", "string", "keyspace.table", required=True),),
    Reads("table", "table"), READ,
    {"type": "object", "properties": {"table": {"type": "string"}, "rows": {"type": "integer"}},
     "required": ["table", "rows"]},
    count_rows))
'''


def _toy_plugin(directory: Path, name: str = "toy_rows", module: str = TOY_MODULE) -> dict[str, str]:
    """A toy package's module `name` (the toy feature's by default) as an installed package declares
    it (its module and its entry point beside it), and the environment that finds it."""
    (directory / f"{name}.py").write_text(module)
    info = directory / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{name} = {name}\n")
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": os.pathsep.join([str(directory), *([path] if path else [])])}


def test_the_features_reference_is_what_the_declarations_generate() -> None:
    # docs/features.md holds the reference's place, written from the registry when the guide is shown
    # (cqlsh-ext docs features): never a copy to regenerate.
    from cqlsh_ext.user_docs import expanded

    guide = (ROOT / "docs" / "features.md").read_text(encoding="utf-8")
    assert guide.count("<!-- generated: cqlsh_ext.features.reference:generated -->") == 1
    shown = expanded(guide)
    for name, feature in declared(plugins=False).items():  # every feature has its row and its section
        assert f"| `{name}` | {feature.title} |" in shown and f"\n## {name}\n" in shown, name


def test_every_declared_service_is_a_function_of_cqlsh_ext() -> None:
    for feature in declared(plugins=False).values():
        # A statement's job on Spark too (Statement.spark): importable without pyspark.
        spark = feature.statement.spark if feature.statement is not None else None
        for service in (feature.service, spark):
            if isinstance(service, Service):
                assert callable(getattr(importlib.import_module(service.module), service.function)), service


def test_a_feature_registered_for_a_while_is_served_then_gone() -> None:
    feature = Feature("toy_nothing", "Toy", "A toy.", (), Reads("nothing"), READ, {"type": "object"},
                      lambda ctx, call: None)
    with registered(feature):
        tool = served_tools()["toy_nothing"]
        assert (tool.reads, tool.scope, tool.output_schema) == (Reads("nothing"), READ, {"type": "object"})
        with pytest.raises(ValueError, match="declared already"):
            register(feature)
    assert "toy_nothing" not in served_tools()


@pytest.mark.server
def test_a_toy_feature_declared_in_one_place_is_listed_called_and_scoped(  # type: ignore[no-untyped-def]
        serve, demo, tmp_path: Path) -> None:
    denied, allowed = f"{demo.keyspace}.nested_blobs", f"{demo.keyspace}.blob_formats"
    policy = tmp_path / "policy.toml"
    policy.write_text(f'[tables]\ndeny = ["{denied}"]\n')
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    server = serve("--policy", str(policy), env=_toy_plugin(plugin))

    listed = {tool.name: tool for tool in server.tools()}
    toy = listed["toy_rows"]
    assert toy.title == "Toy rows" and toy.description.startswith("Counts a table's rows.")
    assert toy.input_schema["required"] == ["table"]
    assert set(toy.input_schema["properties"]) == {"table", "max_bytes"}
    assert toy.output_schema["required"] == ["table", "rows"]
    # cqlsh-ext's own beside it (export is listed by a server with an export directory)
    assert set(listed) - {"toy_rows"} == set(TOOLS) - {"export"}

    answer = server.call("toy_rows", table=allowed)
    counted = server.call("query", statement=f"SELECT count(*) FROM {allowed}")
    assert answer.data["table"] == allowed
    assert answer.data["rows"] == counted.data["rows"][0]["count"] > 0

    refused = server.call("toy_rows", table=denied)
    assert refused.is_error and denied in refused.error and refused.error.startswith("refused")


# ------------------------------------------------------------- the shell's and the API's doors

def _limited() -> Feature:
    return Feature("toy_sample_rows", "Toy sample", "Samples a table.",
                   (Argument("table", "string", "keyspace.table", required=True),
                    Argument("rows", "integer", "how many rows", keywords={"minimum": 1}),
                    Argument("exact", "boolean", "whether to count them all")),
                   Reads("table", "table"), READ, {"type": "object"}, lambda ctx, call: None)


def test_a_declared_feature_is_a_statement_of_its_words_and_arguments() -> None:
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.features.calling import statement_arguments, table_named
    from cqlsh_ext.features.forms import statement_words

    feature = _limited()
    assert statement_words(feature) == ("TOY", "SAMPLE", "ROWS")

    def read(text: str) -> dict[str, Any]:
        stated = statement_arguments(feature, text, Lexed(text).tokens[:-1])
        assert not stated.as_json  # a package's statement declares no JSON
        return stated.arguments

    assert read('"Ks".t rows = 5 exact = true') == {"table": '"Ks".t', "rows": 5, "exact": True}
    assert read("rows = 2 table = ks.t") == {"table": "ks.t", "rows": 2}
    assert table_named(feature, read('"Ks".T'), None) == ("Ks", "t")  # as the schema spells them
    assert table_named(feature, read("T"), "ks") == ("ks", "t")  # a table alone: the keyspace in use
    with pytest.raises(Invalid, match="no keyspace is in use"):
        table_named(feature, read("T"), None)
    for text, said in [("", "toy_sample_rows: table is required (keyspace.table)"),
                       ("ks.t rows = 0", "toy_sample_rows: rows is at least 1, not 0"),
                       ("ks.t rows = 'x'", "toy_sample_rows: rows takes a whole number (how many rows), "
                                           "not 'x'"),
                       ("ks.t limit = 3", "toy_sample_rows: unknown argument 'limit'"),
                       ("ks.t ks.u", "toy_sample_rows: 'ks' is no argument of it"),
                       ("ks.t rows = 2 rows = 3", "toy_sample_rows: rows is given twice")]:
        with pytest.raises(Invalid) as raised:
            read(text)
        assert str(raised.value).startswith(said) and "\n" not in str(raised.value), text


def _cut_bytes() -> Feature:
    """A statement whose required argument follows its keyword: `CUT BYTES ks.t.c TO n`."""
    from cqlsh_ext.features.feature import Statement

    return Feature("cut_bytes", "Cut bytes", "Keeps a blob column's first bytes.",
                   (Argument("column", "string", "keyspace.table.column", required=True),
                    Argument("keep", "integer", "bytes kept", required=True, keywords={"minimum": 0},
                             keyword="TO")),
                   Reads("column", "column"), READ, {"type": "object"}, lambda ctx, call: None,
                   statement=Statement(("CUT", "BYTES"), "CUT BYTES ks.t.data TO 16;"))


def test_a_required_argument_with_a_keyword_is_written_after_it_in_help_and_the_statement(
        shell_grammar: None) -> None:
    # HELP says the form the statement takes (TO n), and the statement takes that form only: a
    # bare number where TO n goes is refused in one line, as is TO without its number.
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.features.calling import statement_arguments
    from cqlsh_ext.features.statements import help_of, help_section
    from cqlsh_ext.shell.completion import rules

    form = "CUT BYTES [JSON] [keyspace.]table.column TO n"
    with registered(_cut_bytes()) as feature:
        assert f"  {form}  -- Cut bytes: Keeps a blob column's first bytes.\n" in help_section()
        assert (help_of(["cut", "bytes"]) or "").startswith(f"{form};")
        # Tab's grammar of the statement: its column, then TO and a number (no number alone).
        assert rules(feature).split("::=")[1].split(";")[0].split() == [
            '"CUT"', '"BYTES"', "(", '"JSON"', ")*", "<columnFamilyName>", '"."', "column=<cident>",
            '"TO"', "<wholenumber>"]

        def read(text: str) -> dict[str, Any]:
            return statement_arguments(feature, text, Lexed(text).tokens[:-1]).arguments

        assert read("ks.t.data TO 16") == {"column": "ks.t.data", "keep": 16}
        for text, said in [("ks.t.data 16", f"cut_bytes: '16' is no argument of it: {form}, e.g. "
                                            "CUT BYTES ks.t.data TO 16;"),
                           ("ks.t.data", "cut_bytes: keep is required (bytes kept)"),
                           ("ks.t.data TO", f"cut_bytes: TO takes a whole number: {form}, e.g. "
                                            "CUT BYTES ks.t.data TO 16;")]:
            with pytest.raises(Invalid) as raised:
                read(text)
            assert str(raised.value) == said, text


@pytest.fixture
def shell_grammar() -> None:
    """cqlsh's grammar with the shell's statements registered, as in the shell (their first words)."""
    from cqlshlib import cql3handling

    from cqlsh_ext.shell.completion import register_grammar
    from cqlsh_ext.upstream.seams import import_cqlshmain

    cqlshmain = import_cqlshmain(None)
    register_grammar()
    if cqlshmain.cqlruleset is None:
        cqlshmain.setup_cqlruleset(cql3handling)


def test_tab_offers_a_features_words_then_the_arguments_not_named_yet(shell_grammar: None) -> None:
    from cqlsh_ext.features.statements import next_words

    with registered(_limited()):
        assert next_words("", "TO") == ["TOY"]
        assert next_words("TOY ", "s") == ["SAMPLE"]
        assert next_words("TOY SAMPLE ROWS ", "") == ["exact =", "rows =", "table ="]
        assert next_words("TOY SAMPLE ROWS ks.t ", "") == ["exact =", "rows =", "table ="]
        assert next_words("TOY SAMPLE ROWS ks.t rows = 5 ", "e") == ["exact ="]
        assert next_words("TOY SAMPLE ROWS ks.t rows = 5 exact = true ", "r") == []  # named already
        assert next_words("TOY SAMPLE ROWS ks.t rows = ", "") == []  # a value is expected
        assert next_words("TOY SAMPLE ROWS ks.t rows = 'op", "") == []  # inside a string


def test_a_feature_whose_first_word_is_the_shells_is_no_statement_and_help_says_so(
        shell_grammar: None) -> None:
    # SELECT SAMPLE ks.t: the shell's SELECT runs (cqlsh's, CQL's), never the package's feature.
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.features.statements import feature_of, help_of, help_section, next_words

    shadowed = Feature("select_sample", "Sample", "Samples a table.",
                       (Argument("table", "string", "keyspace.table", required=True),),
                       Reads("table", "table"), READ, {"type": "object"}, lambda ctx, call: None)
    with registered(shadowed), registered(_limited()):
        assert feature_of(Lexed("SELECT SAMPLE ks.t;")) is None
        assert feature_of(Lexed("TOY SAMPLE ROWS ks.t;")) is not None
        assert next_words("SELECT ", "SA") == [] and next_words("", "SEL") == []
        said = "not a statement of the shell: SELECT starts the shell's own statements (MCP and the " \
               "Python API serve it)"
        listed = help_section()
        assert f"  SELECT SAMPLE <table>  -- Sample: Samples a table.\n      ({said})\n" in listed
        assert "TOY SAMPLE ROWS <table>" in listed and listed.count(said) == 1
        assert (help_of(["select", "sample"]) or "").endswith(f"select_sample is {said}.")
        assert said not in (help_of(["toy", "sample", "rows"]) or "")


@pytest.mark.server
def test_the_toy_feature_is_found_in_the_shell_and_the_api(  # type: ignore[no-untyped-def]
        serve, demo, cassandra, tmp_path: Path) -> None:
    import json

    from tests.shell_runner import api, ext

    plugin = tmp_path / "plugin"
    plugin.mkdir()
    env = _toy_plugin(plugin)
    home = tmp_path / "home"
    home.mkdir()
    table = f"{demo.keyspace}.blob_formats"

    listed = ext(cassandra, home, "-e", "HELP", env=env).checked_stdout()
    assert "TOY ROWS <table>" in listed and "Toy rows: Counts a table's rows." in listed
    assert "table: keyspace.table" in listed
    document = ext(cassandra, home, "-e", "HELP TOY ROWS", env=env).checked_stdout()
    assert document.startswith("TOY ROWS <table>;") and "Counts a table's rows." in document
    assert "table (string, required): keyspace.table" in document

    script = tmp_path / "toy.cql"
    script.write_text(f"TOY ROWS {table};\nTOY ROWS 42;\nTOY ROWS {table} limit = 3;\n"
                      f"TOY ROWS {demo.keyspace}.no_such_table;\nTOY ROWS;\n"
                      f"SELECT count(*) FROM {table};\n")
    code, out, err = ext(cassandra, home, "-f", str(script), env=env)
    counted = int(out.split("count")[1].split()[1])  # cqlsh's table: its header, its rule, the value
    assert out.startswith(f"{counted} rows\n") and counted > 0, out
    said = [line.split(".cql:", 1)[1].split(":", 1)[1] for line in err.splitlines() if ".cql:" in line]
    assert said == [
        "toy_rows: table takes a string (keyspace.table), not 42",
        "toy_rows: unknown argument 'limit'; valid: table",
        f"toy_rows: no table {demo.keyspace}.no_such_table",
        "toy_rows: table is required (keyspace.table)"], err

    server = serve(env=env)
    called = server.call("toy_rows", table=table).data
    proc = api(cassandra, home, "import json\n"
               "print(json.dumps(db.feature('toy_rows', table=argv[0]).to_dict()))\n"
               "try:\n"
               "    db.feature('toy_rows', table=42)\n"
               "except cqlsh_ext.Error as err:\n"
               "    print(err)\n", table, env=env)
    assert proc.returncode == 0, proc.stderr
    answered, refused = proc.stdout.splitlines()
    assert called.pop("truncated") is False  # MCP's word on its cap, beside the feature's answer
    assert json.loads(answered) == called == {"table": table, "rows": counted}
    assert refused == "toy_rows: table takes a string (keyspace.table), not 42"


#: The toy package's feature declaring its method in the API (db.count_rows), as cqlsh-ext's own do.
METHOD_MODULE = TOY_MODULE.replace("import READ, Argument, Feature, Reads, register",
                                   "import READ, Argument, Feature, Method, Reads, register") \
    .replace("    count_rows))", '    count_rows, method=Method("count_rows")))')


@pytest.mark.server
def test_a_package_feature_s_declared_method_is_a_method_of_the_connection(  # type: ignore[no-untyped-def]
        demo, cassandra, tmp_path: Path) -> None:
    from tests.shell_runner import api

    assert 'method=Method("count_rows")' in METHOD_MODULE
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    env = _toy_plugin(plugin, "toy_rows", METHOD_MODULE)
    home = tmp_path / "home"
    home.mkdir()
    table = f"{demo.keyspace}.blob_formats"
    session = cassandra.session()
    try:
        counted = session.execute(f"SELECT count(*) FROM {table}").one()[0]
    finally:
        session.shutdown()
    proc = api(cassandra, home, "import inspect, json\n"
               "print('count_rows' in dir(db), list(inspect.signature(db.count_rows).parameters))\n"
               "print(json.dumps(db.count_rows(argv[0]).to_dict()))\n"
               "try:\n"
               "    db.count_rows(42)\n"
               "except cqlsh_ext.Error as err:\n"
               "    print(err)\n", table, env=env)
    assert proc.returncode == 0, proc.stderr
    listed, answered, refused = proc.stdout.splitlines()
    assert listed == "True ['table', 'progress']"
    assert json.loads(answered) == {"table": table, "rows": counted} and counted > 0
    assert refused == "toy_rows: table takes a string (keyspace.table), not 42"


#: A report made by the recipe whose service refuses, as docs/extending.md says a refusal is made
#: (a QueryError): the table it is asked for holds no column it reads.
REFUSING_MODULE = '''
from cqlsh_ext.features.feature import READ, Argument, Feature, Method, Reads, register


def refuse(ctx, call):
    from cqlsh_ext.cql.errors import QueryError

    raise QueryError(f"{'.'.join(call.table)} holds no column it reads")


register(Feature(
    "toy_refusing", "Toy refusing", "Refuses every table.",
    (Argument("table", "string", "keyspace.table", required=True),),
    Reads("table", "table"), READ, {"type": "object"}, refuse, method=Method("toy_refusing")))
'''


@pytest.mark.server
def test_a_report_s_refusal_is_one_clean_line_at_every_front_end(  # type: ignore[no-untyped-def]
        serve, demo, cassandra, tmp_path: Path) -> None:
    from tests.shell_runner import api, ext

    plugin = tmp_path / "plugin"
    plugin.mkdir()
    env = _toy_plugin(plugin, "toy_refusing", REFUSING_MODULE)
    home = tmp_path / "home"
    home.mkdir()
    table = f"{demo.keyspace}.blob_formats"
    said = f"toy_refusing: {table} holds no column it reads"

    refused = ext(cassandra, home, "-e", f"TOY REFUSING {table}", env=env)
    assert refused.returncode == 2 and not refused.stdout
    assert refused.stderr.strip().splitlines()[-1] == said, refused.stderr  # (after cqlsh's password warning)
    assert "QueryError" not in refused.stderr and "Traceback" not in refused.stderr

    server = serve(env=env)
    answer = server.call("toy_refusing", table=table)
    assert answer.is_error and answer.texts == [said], answer.texts
    assert "Traceback" not in server.logged() and "QueryError" not in server.logged(), server.logged()

    proc = api(cassandra, home, "try:\n"
               "    db.toy_refusing(argv[0])\n"
               "except cqlsh_ext.Error as err:\n"
               "    print(err)\n", table, env=env)
    assert proc.returncode == 0 and proc.stdout.splitlines() == [said], proc.stdout + proc.stderr


def test_a_package_method_named_as_one_of_the_connection_s_own_is_refused_in_one_line() -> None:
    from cqlsh_ext import Error
    from cqlsh_ext.api.database import Database
    from cqlsh_ext.features.feature import Method

    db = Database.__new__(Database)  # no connection: the methods' lookup alone
    for own in ("query", "stats"):
        clash = Feature("toy_clash", "Toy", "Clashes.", (), Reads("keyspaces"), READ, {"type": "object"},
                        lambda ctx, call: None, method=Method(own))
        with registered(clash), pytest.raises(Error) as raised:
            db.toy_anything  # noqa: B018  (the lookup is what is refused)
        assert str(raised.value) == (f"the read feature toy_clash of a package declares the method db.{own}, "
                                     "which is cqlsh-ext's own: its package must name it otherwise")
    with pytest.raises(AttributeError):
        db.toy_anything  # noqa: B018


#: A package's read feature with bounds on an argument (no request builder, as no package's has):
#: its service answers the arguments it was handed, so what reaches it is seen.
BOUNDED_MODULE = '''
from cqlsh_ext.features.feature import READ, Argument, Feature, Reads, register


def sample_rows(ctx, call):
    from cqlsh_ext.reading.typed import ReportAnswer

    data = {"table": ".".join(call.table), "rows": call.arguments.get("rows")}
    return ReportAnswer("TOY BOUNDED", lambda: data, lambda width, blocks: [repr(data)])


register(Feature(
    "toy_bounded", "Toy bounded", "Answers the rows it is asked for.",
    (Argument("table", "string", "keyspace.table", required=True),
     Argument("rows", "integer", "how many rows", keywords={"minimum": 1, "maximum": 10_000})),
    Reads("table", "table"), READ,
    {"type": "object", "properties": {"table": {"type": "string"}, "rows": {"type": "integer"}},
     "required": ["table"]},
    sample_rows))
'''


@pytest.mark.server
def test_a_package_feature_s_arguments_are_checked_alike_at_every_door(  # type: ignore[no-untyped-def]
        serve, demo, cassandra, tmp_path: Path) -> None:
    """MCP's generic door (a declared feature without a request builder: every package's) checks a
    call against the declaration as the shell and the API do: the same line for a value under the
    minimum, one of another type and one past the maximum, on stdio and on HTTP, and nothing reaches
    the service."""
    from tests.shell_runner import api, ext

    from .harness import HttpMcpServer

    plugin = tmp_path / "plugin"
    plugin.mkdir()
    env = _toy_plugin(plugin, "toy_bounded", BOUNDED_MODULE)
    home = tmp_path / "home"
    home.mkdir()
    table = f"{demo.keyspace}.blob_formats"
    wrong: list[Any] = [0, "abc", 20_000]
    said = ["toy_bounded: rows is at least 1, not 0",
            "toy_bounded: rows takes a whole number (how many rows), not 'abc'",
            "toy_bounded: rows is at most 10000, not 20000"]

    script = tmp_path / "bounded.cql"
    script.write_text("".join(f"TOY BOUNDED {table} rows = {value if value != 'abc' else repr(value)};\n"
                              for value in wrong))
    _code, out, err = ext(cassandra, home, "-f", str(script), env=env)
    assert [line.split(".cql:", 1)[1].split(":", 1)[1] for line in err.splitlines() if ".cql:" in line] \
        == said, err
    proc = api(cassandra, home, "import json\n"
               "for rows in json.loads(argv[1]):\n"
               "    try:\n"
               "        print(db.feature('toy_bounded', table=argv[0], rows=rows).to_dict())\n"
               "    except cqlsh_ext.Error as err:\n"
               "        print(err)\n", table, json.dumps(wrong), env=env)
    assert proc.stdout.splitlines() == said, proc.stderr

    stdio = serve(env=env)
    assert stdio.call("toy_bounded", table=table, rows=5).data["rows"] == 5
    assert [stdio.call("toy_bounded", table=table, rows=value).error for value in wrong] == said
    with HttpMcpServer([*demo.conn], stdio.home, env) as http, http.client() as client:
        assert client.call("toy_bounded", table=table, rows=5).data["rows"] == 5
        assert [client.call("toy_bounded", table=table, rows=value).error for value in wrong] == said


@pytest.mark.server
def test_a_package_whose_features_do_not_load_is_said_once_and_help_goes_on(  # type: ignore[no-untyped-def]
        cassandra, tmp_path: Path) -> None:
    from tests.shell_runner import ext

    plugin = tmp_path / "plugin"
    plugin.mkdir()
    env = _toy_plugin(plugin)
    (plugin / "toy_rows.py").write_text("raise RuntimeError('the toy is broken')\n")
    home = tmp_path / "home"
    home.mkdir()
    code, out, err = ext(cassandra, home, "-e", "HELP", env=env)
    # an error said: -e exits 2, as cqlsh's does after any error it prints
    assert code == 2 and "Documented shell commands" in out and "TOY ROWS" not in out
    said = [line for line in err.splitlines() if "toy_rows" in line]
    assert said == ["the read feature plugin toy_rows (toy_rows) did not load: "
                    "RuntimeError: the toy is broken"]


# ------------------------------------------------------------------- the write features

def _write_method(feature: Feature) -> tuple[inspect.Signature, set[str] | None]:
    """The API's method of a write feature, made from its declaration (api.report_methods): its
    signature, and the fields of its result's data: those of the typed result its Method declares
    (RewriteResult, ..., their printed text aside), or None where the result is a WriteResult of its
    answer's own fields (checked against the declared schema when it is answered)."""
    from dataclasses import fields

    from cqlsh_ext.api.database import Database
    from cqlsh_ext.api.report_methods import signature_of

    assert feature.method is not None, feature.name  # every write of cqlsh-ext's is a method
    assert not hasattr(Database, feature.method.name), feature.name  # made from its declaration alone
    result = feature.method.result
    if result is None:
        return signature_of(feature), None
    return signature_of(feature), {f.name for f in fields(getattr(importlib.import_module(result.module),
                                                                   result.function))} - {"text"}


def test_write_features_are_declared_once_never_tools_and_the_api_takes_their_arguments() -> None:
    from cqlsh_ext.features.feature import WRITE

    # A write of the shell alone (encode()'s INSERT, UPDATE and BATCH) is no API method either.
    writing = {name: feature for name, feature in declared(plugins=False).items()
               if feature.writes is not None and not feature.shell_only}
    assert {"edit", "rewrite", "resume", "undo", "write"} <= set(writing)
    assert not set(writing) & set(served_tools())  # MCP proposes writes (propose_edit), never makes one
    for name, feature in writing.items():
        assert feature.scope == WRITE and feature.writes is not None
        assert feature.writes.argument in feature.required
        # The API's method of the feature (its name's, or the one it declares) takes the declared
        # arguments, in order (its progress callback aside: a Python front end's own); the optional
        # ones by keyword (confirm=True is written out).
        signature, result_fields = _write_method(feature)
        parameters = [p for p in signature.parameters.values() if p.name not in ("self", "progress")]
        assert [p.name for p in parameters] == [argument.name for argument in feature.arguments], name
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters
                   if not feature.argument(p.name).required and p.name != "params"), name
        # Its result's data (to_dict: every field but the printed text) is what the declared answer's
        # schema names.
        if result_fields is not None:
            assert result_fields == set(feature.output_schema["properties"]), name
        assert set(feature.output_schema["required"]) <= set(feature.output_schema["properties"])


def _static_signatures() -> dict[str, str]:
    """What Database's class says of the write methods for a type checker (its `if TYPE_CHECKING:`
    block: the methods themselves are made from the declarations at run time), each signature as
    inspect spells one, without its annotations: name -> "(journal, *, confirm=False, progress=None)"."""
    import ast

    from cqlsh_ext.api import database

    tree = ast.parse(Path(database.__file__).read_text())
    (found,) = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name == "Database"]
    typing_only = [node for node in found.body if isinstance(node, ast.If)
                   and ast.unparse(node.test) == "TYPE_CHECKING"]
    said: dict[str, str] = {}
    for block in typing_only:
        for method in block.body:
            assert isinstance(method, ast.FunctionDef)
            for argument in [*method.args.args, *method.args.kwonlyargs]:
                argument.annotation = None
            parameters = ast.unparse(method.args).replace("self, ", "")
            said[method.name] = f"({parameters})".replace(" = ", "=")
    return said


def test_the_write_methods_are_made_from_their_declarations_and_typed_as_they_say() -> None:
    # db.rewrite, db.resume, db.undo, db.edit and db.write are no hand-written methods: each is made
    # from its feature's declared Method (its parameters the declared arguments, its docstring and
    # result type declared there), and answered by the one function every declared write goes
    # through (api.writes.declared_write). Their static types (what mypy reads of Database) say the
    # same parameters, in the same order, with the same defaults.
    from cqlsh_ext.api.database import Database
    from cqlsh_ext.api.report_methods import signature_of

    writing = {feature.method.name: feature for feature in declared(plugins=False).values()
               if feature.writes is not None and feature.method is not None}
    own = {"rewrite", "resume", "undo", "edit", "write"}
    assert own <= set(writing)
    db = Database.__new__(Database)  # no connection: the methods' signatures and docs alone
    for name in own:
        feature = writing[name]
        assert name not in vars(Database)
        method = getattr(db, name)
        assert inspect.signature(method) == signature_of(feature)
        assert method.__doc__ and feature.method is not None and method.__doc__ == feature.method.doc
    static = _static_signatures()
    assert set(static) == own
    assert static == {name: str(signature_of(writing[name])) for name in own}
    assert str(inspect.signature(db.edit)) == "(statement, params=None, *, confirm=False, progress=None)"
    assert str(inspect.signature(db.write)) == ("(table, data, *, encode=None, ttl=None, pace=None, "
                                               "confirm=False, resume=None, progress=None)")


def test_a_package_that_declares_a_write_feature_is_refused_in_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    writing = ("from cqlsh_ext.features.feature import WRITE, Argument, Feature, Reads, Writes, register\n"
               "register(Feature('toy_wipe', 'Wipe', 'Wipes.',\n"
               "                 (Argument('statement', 'string', 's', required=True),),\n"
               "                 Reads('nothing'), WRITE, {'type': 'object'}, lambda ctx, call: None,\n"
               "                 writes=Writes('statement', 'statement')))\n")
    env = _toy_plugin(tmp_path, "toy_writes", writing)
    probe = ("from cqlsh_ext.features import PluginError, declared\n"
             "try:\n    declared()\nexcept PluginError as err:\n    print(err)\n"
             "print(sorted(n for n, f in declared().items() if f.writes is not None))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                         env={**os.environ, **env}, check=True).stdout.splitlines()
    own = sorted(name for name, feature in declared(plugins=False).items() if feature.writes is not None)
    assert out == ["the read feature plugin toy_writes (toy_writes) declares toy_wipe, which writes: only "
                   "cqlsh-ext's own features write (journaled, undoable)", str(own)]
    assert {"edit", "resume", "rewrite", "undo", "write"} <= set(own)


def test_a_report_s_tool_and_method_are_made_from_its_declaration() -> None:
    # MCP: the tool's input schema is the declaration's (tools.py builds it). The API: each report that
    # declares its method is a method of the connection made from the declaration (api.report_methods):
    # the declared arguments in order, the required ones first and without a default, those the API
    # answers its own way left out (decode: the connection's; json_schema: ReportResult.json_schema()),
    # then its progress callback; help() says its arguments.
    from cqlsh_ext.api.database import Database

    for name, feature in declared(plugins=False).items():
        if feature.request is not None and not feature.shell_only:
            assert list(served_tools()[name].arguments) == [argument.name for argument in feature.arguments]
    db = Database.__new__(Database)  # no connection: the methods' signatures and docs alone
    methods = {name: list(inspect.signature(getattr(db, name)).parameters)
               for name in ("stats", "advise", "settings", "describe_payload")}
    assert methods == {"stats": ["table", "column", "sample", "confirm", "progress"],
                       "advise": ["table", "column", "sample", "progress"],
                       "settings": ["table", "sample", "progress"],
                       "describe_payload": ["column", "sample", "where", "every_row", "confirm", "progress"]}
    assert inspect.signature(db.stats).parameters["table"].default is inspect.Parameter.empty
    assert {"stats", "advise", "settings", "describe_payload", "inspect"} <= set(dir(db))
    assert (db.settings.__doc__ or "").startswith("Compression settings: COMPRESSION SETTINGS: ")
    assert "sample: rows measured (default 1000)" in (db.settings.__doc__ or "")
    with pytest.raises(AttributeError):
        db.compression_stats  # noqa: B018  # the feature's name is no method: its method's is


def _requests() -> list[tuple[str, dict[str, Any], tuple[str | None, str] | None, object]]:
    from cqlsh_ext.describe.parse import DescribeStatement
    from cqlsh_ext.reading.read_requests import (
        AdviseRequest,
        ReportTarget,
        SampleSpec,
        SettingsRequest,
        StatsRequest,
    )

    return [
        ("compression_stats", {"table": "ks.t"}, ("ks", "t"), StatsRequest(ReportTarget("ks", "t"))),
        ("compression_stats", {"table": "t", "column": "Data", "sample": 500, "confirm": True}, (None, "t"),
         StatsRequest(ReportTarget(None, "t", columns=("data",)), SampleSpec(rows=500),
                      confirm=True)),
        ("compression_advise", {"table": "ks.t", "column": '"Data"', "sample": None}, ("ks", "T"),
         AdviseRequest(ReportTarget("ks", "T", columns=("Data",)))),
        ("compression_settings", {"table": "ks.t", "sample": 50}, ("ks", "t"),
         SettingsRequest("ks", "t", 50)),
        # DESCRIBE PAYLOAD: decode and json_schema are the front end's (its context, its answer's shape).
        ("describe_payload", {"column": 'ks."T".data', "where": "  data.status = 'PAID' ", "sample": 500},
         None, DescribeStatement("ks", "T", "data", "data.status = 'PAID'", sample=500)),
        ("describe_payload", {"column": "t.data", "where": " ", "every_row": True, "confirm": True,
                              "json_schema": True, "decode": {"data": "zstd>json"}},
         None, DescribeStatement(None, "t", "data", every_row=True, confirm=True)),
    ]


@pytest.mark.parametrize(("name", "given", "table", "expected"), _requests())
def test_a_report_request_is_built_from_its_arguments(name: str, given: dict[str, Any],
                                                       table: tuple[str | None, str] | None,
                                                       expected: object) -> None:
    # The request every front end that names arguments hands the service (an argument given as None
    # is one not given: a JSON null, the API's default).
    from cqlsh_ext.features.calling import request_of
    from cqlsh_ext.features.feature import FeatureCall

    request = request_of(declared(plugins=False)[name], FeatureCall(given, table))  # type: ignore[arg-type]
    assert request == expected


@pytest.mark.parametrize(("name", "given", "said"), [
    ("compression_settings", {"table": "ks.t", "sample": 0},
     "compression_settings: sample is at least 1, not 0"),
    ("compression_advise", {"table": "ks.t", "sample": 10_001},
     "compression_advise: sample is at most 10000, not 10001"),
    ("compression_stats", {"table": "ks.t", "confirm": "yes"},
     "compression_stats: confirm takes true or false (true: scan a whole table whose scan costs (Amazon "
     "Keyspaces, 1 GB or more) without asking), not 'yes'"),
    ("compression_stats", {"table": "ks.t", "colum": "data"},
     "compression_stats: unknown argument 'colum' (did you mean column?); valid: table, column, sample, "
     "confirm"),
])
def test_a_report_request_refuses_what_its_declaration_does_not_take(name: str, given: dict[str, Any],
                                                                      said: str) -> None:
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.features.calling import request_of
    from cqlsh_ext.features.feature import FeatureCall

    with pytest.raises(Invalid) as refused:
        request_of(declared(plugins=False)[name], FeatureCall(given, ("ks", "t")))
    assert str(refused.value) == said


def _stated(name: str, text: str) -> Any:
    """`text` read as the shell reads a declared statement: the feature its words name (asserted to
    be `name`), then its arguments, JSON, SELECT and clauses (calling.Stated)."""
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.features.calling import statement_arguments
    from cqlsh_ext.features.statements import own_feature_of

    feature = declared(plugins=False)[name]
    lexed = Lexed(text)
    found = own_feature_of(lexed)
    assert found is not None and found[0] is feature, text
    return statement_arguments(feature, text, [t for t in lexed.tokens[found[1]:] if t.kind != "end"])


def _declared_form(name: str, action: str) -> str:
    """The feature's statement's form as its declaration makes it, and what the shell says with it,
    from the registry alone: a COMPRESSION statement cqlsh cannot parse is told that form and the
    declared example; HELP COMPRESSION <action> opens with it, laid out on lines."""
    from cqlsh_ext.features import commands
    from cqlsh_ext.features.forms import form
    from cqlsh_ext.shell.help import usage_of

    feature = declared(plugins=False)[name]
    shape = form(feature)
    assert shape.startswith(f"COMPRESSION {action} ") and feature.statement is not None
    compression = commands.command("compression")
    usage = usage_of(compression) if compression is not None else None
    assert usage is not None and usage(["COMPRESSION", action]) == (
        f"Expected:\n  {shape}\nFor example:\n  {feature.statement.example}\nMore: HELP COMPRESSION")
    text = commands.phrase_help(["compression", action.lower()]) or ""
    assert text.startswith(f"\n        COMPRESSION {action} [cqlsh-ext]\n\n        COMPRESSION {action} ")
    assert shape in " ".join(text.split())
    return shape


def test_describe_payloads_form_is_its_declarations() -> None:
    # The form the reading's refusals name (carried by the request its builder makes: describe.run is
    # below the features) and HELP DESCRIBE PAYLOAD's first lines are the declaration's.
    from cqlsh_ext.features import commands
    from cqlsh_ext.features.calling import request_of
    from cqlsh_ext.features.feature import FeatureCall
    from cqlsh_ext.features.forms import form

    feature = declared(plugins=False)["describe_payload"]
    assert form(feature) == ("DESCRIBE PAYLOAD [keyspace.]table.column [WHERE conditions] "
                             "[SAMPLE n [SEED s]] [ALL [CONFIRM]] [JSON]")
    request = request_of(feature, FeatureCall({"column": "ks.t"}))
    assert (request.form, request.example) == (
        form(feature), "DESCRIBE PAYLOAD shop.orders.data WHERE data.status = 'PAID' SAMPLE 5000")
    assert (commands.phrase_help(["describe", "payload"]) or "").startswith(
        "\n        DESCRIBE PAYLOAD [cqlsh-ext]\n\n"
        "        DESCRIBE PAYLOAD [keyspace.]table.column [WHERE conditions]\n"
        "                         [SAMPLE n [SEED s]] [ALL [CONFIRM]] [JSON]\n\n")


def test_a_statement_declared_with_its_feature_is_read_from_the_declaration() -> None:
    # COMPRESSION SETTINGS: its words, [JSON], SAMPLE n and the table, from compression_settings'
    # declaration alone; the shell hands it to the shell's door (shell.dispatcher) before cqlsh's grammar.
    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.features.statements import own_feature_of

    features = declared(plugins=False)
    # (A statement that claims its own among CQL's, Statement.claims, is tried with the intercepts;
    # one cqlsh's grammar parses, Statement.parsed, is a command's.)
    stated = {name: feature for name, feature in features.items()
              if feature.statement is not None and feature.statement.read_from_declaration}
    assert {"compression_advise", "compression_settings", "compression_stats", "compression_trial",
            "describe_payload", "inspect_value"} <= set(stated)
    # The shell hands a statement of each declared statement's words (or its aliases) to its feature,
    # before the intercepts and cqlsh's grammar; DESCRIBE, which is cqlsh's too, is the feature's
    # where its Statement recognizes it (DESCRIBE PAYLOAD and a name).
    for name, feature in stated.items():
        assert own_feature_of(Lexed(" ".join(feature.statement.words) + " ks.t.c")) == \
            (feature, len(feature.statement.words)), name  # type: ignore[union-attr]
    assert own_feature_of(Lexed("DESC PAYLOAD ks.t.data SAMPLE 5")) == (features["describe_payload"], 2)
    assert own_feature_of(Lexed("DESC payload.t")) is None
    assert own_feature_of(Lexed("DESC PAYLOAD WITH INTERNALS")) is None
    assert own_feature_of(Lexed("DESCRIBE TABLES")) is None and own_feature_of(Lexed("SELECT 1")) is None
    settings = features["compression_settings"]
    # The usage the declaration makes is the form the shell's COMPRESSION usage and HELP list.
    assert _declared_form("compression_settings", "SETTINGS") == \
        "COMPRESSION SETTINGS [JSON] [SAMPLE n] [keyspace.]table"

    def read(text: str) -> tuple[dict[str, Any], bool]:
        stated = _stated("compression_settings", text)
        assert stated.select is None and not stated.clauses
        return stated.arguments, stated.as_json

    assert read("COMPRESSION SETTINGS ks.t") == ({"table": "ks.t"}, False)
    assert read("compression settings json sample 12 \"Ks\".t") == ({"table": '"Ks".t', "sample": 12}, True)
    assert read("COMPRESSION SETTINGS ks.t SAMPLE 5") == ({"table": "ks.t", "sample": 5}, False)
    assert read("COMPRESSION SETTINGS sample") == ({"table": "sample"}, False)  # a table named sample
    assert own_feature_of(Lexed("COMPRESSION REWRITE ks.t.data AS 'zstd'")) is None  # its own parser's
    # A statement the lexer refuses is still the feature's: the lexer's refusal is said as its own.
    unlexed = own_feature_of(Lexed("COMPRESSION SETTINGS ks.t 'open"))
    assert unlexed is not None and unlexed[0] is settings
    for text, said in [("COMPRESSION SETTINGS SAMPLE 0 ks.t",
                        "compression_settings: sample is at least 1, not 0"),
                       ("COMPRESSION SETTINGS SELECT data FROM t",
                        "compression_settings: 'data' is no argument of it: COMPRESSION SETTINGS [JSON] "
                        "[SAMPLE n] [keyspace.]table, e.g. COMPRESSION SETTINGS ks.t;"),
                       ("COMPRESSION SETTINGS", "compression_settings: table is required (keyspace.table)")]:
        with pytest.raises(Invalid) as raised:
            read(text)
        assert str(raised.value) == said, text


def test_advise_s_statement_takes_a_select_and_its_closing_clause_from_the_declaration() -> None:
    # COMPRESSION ADVISE: its table may be a SELECT of it (Statement.select), its column argument is
    # not spelt (the SELECT names it), SAVE DICTIONARY 'file' is the shell's closing clause, handed
    # to the service beside the request, never a request's part.
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.features.calling import Stated, request_of
    from cqlsh_ext.features.feature import FeatureCall
    from cqlsh_ext.reading.read_requests import AdviseRequest, ReportTarget

    advise = declared(plugins=False)["compression_advise"]
    form = _declared_form("compression_advise", "ADVISE")
    assert form == ("COMPRESSION ADVISE [JSON] [SAMPLE n] <SELECT statement> | [keyspace.]table "
                    "[SAVE DICTIONARY 'file']")

    def read(text: str) -> Stated:
        return _stated("compression_advise", text)

    assert read("COMPRESSION ADVISE ks.t") == Stated({"table": "ks.t"})
    typed = read("compression advise json sample 40 SELECT data FROM \"Ks\".t WHERE id = 1 "
                 "save dictionary '/tmp/it''s.dict'")
    assert (typed.arguments, typed.as_json, typed.clauses) == \
        ({"table": '"Ks".t', "sample": 40}, True, {"dictionaries_to": "/tmp/it's.dict"})
    assert typed.select is not None and typed.select.spanned() == 'SELECT data FROM "Ks".t WHERE id = 1'
    request = request_of(advise, FeatureCall(typed.arguments, ("Ks", "t"), select=typed.select,
                                             clauses=typed.clauses))
    assert request == AdviseRequest(ReportTarget("Ks", "t", 'SELECT data FROM "Ks".t WHERE id = 1'), 40,
                                    dictionaries_to="/tmp/it's.dict")
    whole = read("COMPRESSION ADVISE SELECT data, doc FROM ks.t")
    assert whole.arguments == {"table": "ks.t"}
    assert request_of(advise, FeatureCall(whole.arguments, ("ks", "t"), select=whole.select)) == \
        AdviseRequest(ReportTarget("ks", "t", "SELECT data, doc FROM ks.t", whole_table=True))
    limited = read("COMPRESSION ADVISE SELECT data FROM t LIMIT 500")
    assert request_of(advise, FeatureCall(limited.arguments, ("ks", "t"), select=limited.select)) == \
        AdviseRequest(ReportTarget("ks", "t", "SELECT data FROM t LIMIT 500", limit=500))
    example = advise.statement.example  # type: ignore[union-attr]
    for text, said in [
            ("COMPRESSION ADVISE ks.t column = data", f"compression_advise: 'column' is no argument of it: "
                                                      f"{form}, e.g. {example}"),
            ("COMPRESSION ADVISE ks.t SAVE DICTIONARY 'a' junk", f"compression_advise: 'junk' is no argument "
                                                                f"of it: {form}, e.g. {example}"),
            ("COMPRESSION ADVISE ks.t SAVE DICTIONARY",
             "compression_advise: SAVE DICTIONARY takes a 'string': SAVE DICTIONARY 'file'"),
            ("COMPRESSION ADVISE ks.t SAVE DICTIONARY 'a' SAVE DICTIONARY 'b'",
             "compression_advise: SAVE DICTIONARY is given twice"),
            ("COMPRESSION ADVISE SELECT now()", "compression_advise: a SELECT names the table it reads: "
                                                "SELECT ... FROM [keyspace.]table"),
            ("COMPRESSION ADVISE SAMPLE orders",
             "compression_advise: sample takes a whole number (values per column (default 300)), "
             "not 'orders'")]:
        with pytest.raises(Invalid) as raised:
            read(text)
        assert str(raised.value) == said, text


def _stats_request(text: str) -> tuple[object, bool]:
    """COMPRESSION STATS `text` read as the shell reads it, and the request it builds (the keyspace
    in use: ks)."""
    from cqlsh_ext.features.calling import request_of, table_named
    from cqlsh_ext.features.feature import FeatureCall

    stats = declared(plugins=False)["compression_stats"]
    stated = _stated("compression_stats", text)
    call = FeatureCall(stated.arguments, table_named(stats, stated.arguments, "ks"), select=stated.select,
                       clauses=stated.clauses)
    return request_of(stats, call), stated.as_json


def _stats_forms() -> list[tuple[str, object]]:
    from cqlsh_ext.reading.read_requests import ReportTarget, SampleSpec, StatsRequest

    table = ReportTarget("ks", "t")
    return [
        ("COMPRESSION STATS ks.t", StatsRequest(table)),
        ("COMPRESSION STATS t CONFIRM", StatsRequest(table, confirm=True)),
        ("COMPRESSION STATS SAMPLE ks.t", StatsRequest(table, SampleSpec())),
        ("COMPRESSION STATS SAMPLE 500 ks.t", StatsRequest(table, SampleSpec(rows=500))),
        ("COMPRESSION STATS SAMPLE 10 PERCENT WITHIN 5 SECONDS ks.t",
         StatsRequest(table, SampleSpec(percent=10.0, seconds=5.0))),
        ("compression stats json sample until 2.5 percent within 30 seconds seed 7 parallel 2 decode all "
         "confirm SELECT data FROM ks.t",
         StatsRequest(ReportTarget("ks", "t", "SELECT data FROM ks.t", whole_table=True),
                      SampleSpec(precision=0.025, seconds=30.0, seed=7), confirm=True, parallel=2,
                      from_headers=False)),
        ("COMPRESSION STATS SAMPLE SELECT data FROM t WHERE id = 1",
         StatsRequest(ReportTarget("ks", "t", "SELECT data FROM t WHERE id = 1"), SampleSpec())),
    ]


@pytest.mark.parametrize(("text", "expected"), _stats_forms())
def test_stats_statement_is_read_from_its_declaration(text: str, expected: object) -> None:
    # COMPRESSION STATS: CONFIRM is the declared confirm's word; SAMPLE's grammar (features.clauses),
    # PARALLEL n and DECODE ALL are the shell's clauses, carried into the one request builder.
    request, as_json = _stats_request(text)
    assert request == expected
    assert as_json == text.startswith("compression stats json")


def test_stats_statement_s_form_and_refusals_come_from_its_declaration() -> None:
    from cqlsh_ext.features.arguments import Invalid
    form = _declared_form("compression_stats", "STATS")
    assert form == ("COMPRESSION STATS [JSON] [SAMPLE ...] [PARALLEL n] [DECODE ALL] [CONFIRM] <SELECT "
                    "statement> | [keyspace.]table")
    sample = "SAMPLE [n [PERCENT] | UNTIL x PERCENT] [WITHIN s SECONDS] [SEED n]"
    for text, said in [
            ("COMPRESSION STATS", "compression_stats: table is required (keyspace.table)"),
            ("COMPRESSION STATS SAMPLE UNTIL x PERCENT ks.t",
             f"compression_stats: SAMPLE UNTIL takes a number, not 'x': {sample}"),
            ("COMPRESSION STATS SAMPLE UNTIL 2 ks.t",
             f"compression_stats: SAMPLE UNTIL x is followed by PERCENT, not 'ks': {sample}"),
            ("COMPRESSION STATS SAMPLE WITHIN 5 ks.t",
             f"compression_stats: WITHIN s is followed by SECONDS, not 'ks': {sample}"),
            ("COMPRESSION STATS PARALLEL ks.t",
             "compression_stats: PARALLEL takes a whole number: PARALLEL n"),
            ("COMPRESSION STATS CONFIRM CONFIRM ks.t", "compression_stats: CONFIRM is given twice"),
            ("COMPRESSION STATS DECODE ALL DECODE ALL ks.t", "compression_stats: DECODE ALL is given twice"),
            ("COMPRESSION STATS ks.t column = data",
             f"compression_stats: 'column' is no argument of it: {form}, e.g. "
             "COMPRESSION STATS SAMPLE SELECT data FROM ks.t;")]:
        with pytest.raises(Invalid) as raised:
            _stats_request(text)
        assert str(raised.value) == said, text


def test_inspect_s_statement_is_a_select_read_from_its_declaration() -> None:
    # INSPECT: its statement argument is the SELECT that follows (Statement.select on a feature that
    # reads a statement), decode is the session's (omitted), and the shell's runner prints each value
    # as it comes (Statement.runs: insight/run_inspect.py print_values).
    from cqlsh_ext.features import commands
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.features.calling import request_of
    from cqlsh_ext.features.feature import FeatureCall
    from cqlsh_ext.features.forms import usage
    from cqlsh_ext.insight.run_inspect import print_values
    from cqlsh_ext.reading.read_requests import InspectRequest, ReportTarget

    inspect_value = declared(plugins=False)["inspect_value"]
    assert inspect_value.statement is not None and inspect_value.statement.runs is not None
    assert inspect_value.statement.runs.function == print_values.__name__
    assert f"INSPECT {usage(inspect_value)}" == "INSPECT [JSON] <SELECT statement>"
    # The shell's own command (Statement.command): HELP INSPECT is its statement's topic.
    inspect = commands.command("INSPECT")
    assert inspect is not None and inspect not in commands.commands()
    assert (inspect.handler, inspect.paged, inspect.reads_only) == (None, True, True)
    assert str(dict(commands.help_topics())["inspect"]).startswith(
        "\n        INSPECT [cqlsh-ext]\n\n        INSPECT [JSON] <SELECT statement>\n\n")
    typed = _stated("inspect_value", 'inspect json SELECT data FROM "Ks".t WHERE id = 42 LIMIT 3')
    assert typed.as_json and typed.arguments == {"statement": 'SELECT data FROM "Ks".t WHERE id = 42 LIMIT 3'}
    request = request_of(inspect_value, FeatureCall(typed.arguments, select=typed.select))
    assert request == InspectRequest(ReportTarget("Ks", "t", 'SELECT data FROM "Ks".t WHERE id = 42 LIMIT 3',
                                                  limit=3))
    # The Python API's and MCP's text: its `;` left out, the table as the SELECT names it.
    assert request_of(inspect_value, FeatureCall({"statement": " SELECT data FROM t;; "})) == \
        InspectRequest(ReportTarget(None, "t", "SELECT data FROM t", whole_table=True))
    form = "INSPECT [JSON] <SELECT statement>, e.g. INSPECT SELECT data FROM ks.t WHERE id = 42;"
    for text, said in [
            ("INSPECT orders", f"inspect_value: 'orders' is no SELECT: {form}"),
            ("INSPECT", "inspect_value: statement is required (a SELECT naming one blob value)"),
            ("INSPECT decode = 1 SELECT data FROM t", f"inspect_value: 'decode' is no SELECT: {form}")]:
        with pytest.raises(Invalid) as raised:
            _stated("inspect_value", text)
        assert str(raised.value) == said, text


def test_trial_s_statement_is_the_shells_alone_and_read_from_its_declaration() -> None:
    # COMPRESSION TRIAL: a feature of the shell only (it writes scratch tables): no MCP tool, its
    # column or FROM 'path', its options after it in any order (JSON first or among them), CODECS a
    # list of chains as typed, into its request by its declared builder.
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.features.calling import request_of
    from cqlsh_ext.features.feature import FeatureCall
    from cqlsh_ext.features.forms import form
    from cqlsh_ext.insight.trial.run import TrialRequest

    trial = declared(plugins=False)["compression_trial"]
    assert trial.shell_only and "compression_trial" not in served_tools()
    assert form(trial) == ("COMPRESSION TRIAL [keyspace.]table.column | FROM 'path' [ROWS n] [CONCURRENCY n] "
                           "[INTO keyspace] [KEEP] [CONFIRM] [CODECS chain, ...] [JSON]")

    def request(text: str) -> tuple[object, bool]:
        stated = _stated("compression_trial", text)
        return request_of(trial, FeatureCall(stated.arguments, clauses=stated.clauses)), stated.as_json

    assert request("COMPRESSION TRIAL JSON ks.t.data CODECS zstd:3, 'gzip>json', snappy ROWS 50 "
                   "CONCURRENCY 4 INTO \"Scratch\" KEEP CONFIRM") == \
        (TrialRequest("Scratch", 50, 4, ("zstd:3", "gzip>json", "snappy"), None, True, True,
                      "ks", "t", "data"), True)
    assert request("compression trial FROM '/tmp/values' INTO scratch json") == \
        (TrialRequest("scratch", 1000, 16, None, "/tmp/values", False, False), True)
    assert request("COMPRESSION TRIAL t.Data") == \
        (TrialRequest(None, 1000, 16, None, None, False, False, None, "t", "data"), False)
    for text, said in [
            ("COMPRESSION TRIAL", "compression_trial: column is required (keyspace.table.column whose values "
                                  "are measured)"),
            ("COMPRESSION TRIAL ks.t.d FROM 'p' INTO x", "compression_trial: column or path, not both"),
            ("COMPRESSION TRIAL ks.t.d CODECS INTO x",
             "compression_trial: CODECS takes chains (zstd:3, 'gzip>json', ...), not 'INTO'"),
            ("COMPRESSION TRIAL ks.t.d ROWS x", "compression_trial: rows takes a whole number (values "
                                                "measured (default 1000)), not 'x'"),
            ("COMPRESSION TRIAL ks INTO x", "compression_trial: column must be keyspace.table.column")]:
        with pytest.raises(Invalid) as raised:
            request(text)
        assert str(raised.value).startswith(said), (text, str(raised.value))


def test_tab_completes_each_declared_statement_from_its_declaration(shell_grammar: None) -> None:
    # The grammar that completes a declared statement is written from its declaration
    # (shell.completion): its words, its options in any order (the shell's clauses, a clause's own
    # grammar: STATS' SAMPLE), what it reads (a table, a SELECT of it, a column), what stands instead.
    from cqlsh_ext.upstream.seams import import_cqlshmain

    rules = import_cqlshmain(None).cqlruleset

    def offered(text: str) -> set[str]:
        found, _hints = rules.cql_complete_single(text, "", {"cassandra_conn": None},
                                                  startsymbol="cqlshCommand")
        return {str(word).strip().upper() for word in found}

    assert offered("COMPRESSION ") == {"STATS", "ADVISE", "SETTINGS", "TRIAL", "REWRITE"}
    assert offered("COMPRESSION STATS ") == {"JSON", "SAMPLE", "PARALLEL", "DECODE", "CONFIRM", "SELECT"}
    assert {"UNTIL", "WITHIN", "SEED"} <= offered("COMPRESSION STATS SAMPLE ")
    assert offered("COMPRESSION SETTINGS ") == {"JSON", "SAMPLE"}
    assert "SAVE" in offered("COMPRESSION ADVISE SELECT data FROM t ")
    assert offered("COMPRESSION TRIAL ") == {"JSON", "FROM"}
    assert offered("COMPRESSION TRIAL ks.t.data ") == {";", "CODECS", "ROWS", "CONCURRENCY", "INTO", "KEEP",
                                                      "CONFIRM", "JSON"}
    assert offered("INSPECT ") == {"JSON", "SELECT"}
    assert {"WHERE", "SAMPLE", "ALL", "JSON", "SEED", "CONFIRM"} <= offered("DESCRIBE PAYLOAD ks.t.data ")
