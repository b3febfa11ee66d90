"""The library internals cqlsh-ext relies on (cqlsh_ext/upstream/seams.py) are still where we expect them.

One check per entry of seams.SEAMS; these fail first, and say what moved, when the pinned cqlsh,
cassandra-driver or boto3 is upgraded. No server needed.
"""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest

from cqlsh_ext.upstream import seams

cqlshmain = seams.import_cqlshmain(None)


def test_pinned_cqlsh_version():
    assert cqlshmain.version.startswith(seams.CQLSH_VERSION_PIN)


def test_every_seam_names_its_user():
    # A seam whose user module is gone is stale; one used by an unlisted module is missing here.
    import importlib

    for library, what, users in seams.SEAMS:
        assert library in ("cqlsh", "cassandra-driver", "boto3"), what
        for user in users.split(", "):
            importlib.import_module(f"cqlsh_ext.{user}")


def test_importing_cqlshmain_ignores_our_command_line():
    # cqlsh parses sys.argv at import time: --help there would exit before our parser ran.
    code = (
        "import sys; sys.argv = ['cqlsh-ext', '--help', '-d', 'snappy'];"
        "from cqlsh_ext.upstream import seams; m = seams.import_cqlshmain(None); print('imported', m.version)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith("imported 6.2")


def test_shell_is_looked_up_as_a_module_global():
    assert "Shell(" in inspect.getsource(cqlshmain.main)
    assert "Shell(" in inspect.getsource(seams.stock_shell_class().do_source)
    assert seams.stock_shell_class().__module__ == "cqlshlib.cqlshmain"


@pytest.mark.parametrize("name", sorted(seams.COPIED))
def test_copied_upstream_code_is_unchanged(name):
    # Fails on a cqlsh upgrade that changed code we copied or re-implemented: re-read `name`
    # upstream, carry the change over to our copy, then update the hash in seams.COPIED.
    assert seams.upstream_source_hash(name) == seams.COPIED[name], f"re-read {name} and our copy of it"


def test_print_result_pauses_only_outside_capture():
    source = inspect.getsource(seams.stock_shell_class().print_result)
    assert "if self.shunted_query_out is None and tty:" in source
    assert 'input("---MORE---")' in source


def test_overridden_shell_methods_exist_with_their_signatures():
    from cqlsh_ext.shell import ext_shell

    stock = seams.stock_shell_class()
    for name, params in seams.OVERRIDDEN.items():
        assert list(inspect.signature(getattr(stock, name)).parameters) == params, name
    # ...and nothing else is overridden without being listed.
    ours = {n for n, v in vars(ext_shell.ExtShell).items() if callable(v) and hasattr(stock, n)}
    assert ours - {"__init__", "do_desc"} == set(seams.OVERRIDDEN)


def test_the_shell_is_one_class_of_ours_on_cqlsh_s():
    # One door (issue 99, item 2): every override of cqlsh's Shell is in ExtShell (shell/ext_shell.py),
    # which derives from cqlsh's Shell alone (no base of ours reaching into its attributes); the class of
    # a run (shell_class) adds the run's settings and declared commands, and no method of cqlsh's.
    from cqlsh_ext.settings import Settings
    from cqlsh_ext.shell import ext_shell

    stock = seams.stock_shell_class()
    assert ext_shell.ExtShell.__bases__ == (stock,)
    run = ext_shell.shell_class(Settings())
    ours = [cls for cls in run.__mro__ if cls.__module__.startswith("cqlsh_ext.")]
    assert ours == [run, ext_shell.ExtShell]
    assert not {n for n, v in vars(run).items() if callable(v) and hasattr(stock, n)}


def test_cqltype_nodes_and_typename():
    from cassandra import cqltypes
    from cqlshlib import formatting

    node = formatting.CqlType("map<text, frozen<list<blob>>>")
    assert node.type_name == "map" and [s.type_name for s in node.sub_types] == ["text", "list"]
    assert node.sub_types[1].sub_types[0].formatter is formatting._formatters["blob"]
    stock_source = inspect.getsource(seams.stock_shell_class().print_static_result)
    assert "CqlType(cql_typename(t), ks_meta)" in stock_source
    assert cqltypes.cql_typename("org.apache.cassandra.db.marshal.BytesType") == "blob"
    vector = formatting.CqlType("vector<blob, 3>")
    assert vector.type_name == "vector" and len(vector.sub_types) == 3
    assert all(sub is vector.sub_types[0] and sub.type_name == "blob" for sub in vector.sub_types)


def test_driver_type_classes():
    from cassandra import cqltypes

    listed = cqltypes.ListType.apply_parameters([cqltypes.BytesType])
    assert (listed.typename, tuple(listed.subtypes)) == ("list", (cqltypes.BytesType,))
    fields = (cqltypes.UTF8Type, cqltypes.BytesType)
    udt = cqltypes.UserType.make_udt_class("ks", "doc", ("title", "body"), fields)
    assert (udt.typename, tuple(udt.fieldnames), tuple(udt.subtypes)) == ("doc", ("title", "body"), fields)
    vector = cqltypes.lookup_casstype(
        "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.BytesType, 3)")
    assert issubclass(vector, cqltypes.VectorType)
    assert (vector.subtype, vector.vector_size) == (cqltypes.BytesType, 3)


def test_timestamps_and_times_are_read_through_their_classes_once_their_cython_readers_are_gone():
    # upstream.time_values: a result's timestamp column is DateType (type code 0x000B), a time's
    # TimeType (0x0012); the Cython parser finds a type's reader by the name 'Des' + its class's,
    # else its generic one, which calls the class's deserialize; cqlsh's hooks delete DesDateType
    # themselves.
    from cassandra import cqltypes, deserializers, protocol

    from cqlsh_ext.upstream import time_values

    assert protocol.ResultMessage.type_codes[0x000B] is cqltypes.DateType
    assert protocol.ResultMessage.type_codes[0x0012] is cqltypes.TimeType
    assert sorted(time_values._taken) == ["DesDateType", "DesTimeType"]
    for cls, reading in ((cqltypes.DateType, time_values.timestamp_value),
                         (cqltypes.TimeType, time_values.time_value)):
        assert type(deserializers.find_deserializer(cls)).__name__ == "GenericDeserializer"
        assert cls.deserialize is reading
    assert "del cassandra.deserializers.DesDateType" in inspect.getsource(cqlshmain.insert_driver_hooks)


def test_special_command_rule_shape():
    from cqlshlib import cqlshhandling

    rule = cqlshhandling.cqlsh_special_cmd_command_syntax_rules
    assert "<specialCommand> ::=" in rule and rule.rstrip().endswith(";")
    assert isinstance(cqlshhandling.my_commands_ending_with_newline, tuple)


def test_first_words_of_statements_and_commands():
    from cqlshlib import cql3handling

    from cqlsh_ext.shell.completion import register_grammar

    register_grammar()
    if cqlshmain.cqlruleset is None:
        cqlshmain.setup_cqlruleset(cql3handling)
    words = seams.first_words()
    assert {"SELECT", "INSERT", "CREATE", "BEGIN", "COPY", "DESCRIBE", "HELP", "EXIT", "LOGIN"} <= words
    assert {"COMPRESSION", "INSPECT", "DECOMPRESS", "UNDO"} <= words  # ours, registered


def test_completer_registration():
    from cqlshlib import cql3handling

    assert callable(cql3handling.CqlRuleSet.completer_for)


def test_text_helpers_and_colormaps():
    color_text, controls, show = seams.text_formatting()
    assert controls.sub(show, "a\tb") == "a\\tb"
    assert color_text("x", seams.value_colormap(False)).strval == "x"
    assert seams.value_colormap(True)["blob"]


def test_floats_as_cqlsh_prints_them():
    # cqlsh's own rule: `precision` digits after the point while %g stays out of exponent form.
    assert seams.float_text(519.6402097902098, 5) == "519.64021"
    assert seams.float_text(519.6402097902098, 3) == "519.64"
    assert seams.float_text(519.6402097902098, 2) == "5.2e+02"  # more integer digits than precision
    assert seams.float_text(float("nan"), 5) == "NaN"
    # The precision it is given is the shell's float_precision, set from cqlshrc's [ui].
    stock = seams.stock_shell_class()
    assert "display_float_precision" in inspect.signature(stock.__init__).parameters
    assert "self.display_float_precision = display_float_precision" in inspect.getsource(stock.__init__)


def test_cqlshmain_globals():
    names = ("readline", "HISTORY", "CQL_ERRORS", "parser", "CONFIG_FILE", "cqlruleset", "setup_cqlruleset")
    for name in names:
        assert hasattr(cqlshmain, name), name


def test_main_reports_an_unsupported_cql_version():
    assert issubclass(cqlshmain.VersionNotSupported, Exception)
    assert "except VersionNotSupported" in inspect.getsource(cqlshmain.main)


def test_lexer_internals():
    from cqlshlib import cql3handling, pylexotron

    for name in ("Matcher", "TextMatch", "TerminalTypeMatcher", "LexingError", "is_hint"):
        assert hasattr(pylexotron, name), name
    ruleset = cql3handling.CqlRuleSet
    assert isinstance(ruleset.ruleset, dict)
    for name in ("lex", "make_lexer", "cql_split_statements", "cql_complete"):
        assert callable(getattr(ruleset, name)), name


def test_statement_text_from_tokens():
    # print_result's reads of a result are pinned by its source hash (COPIED) above.
    from cqlshlib import cql3handling

    text = "SELECT data.status FROM ks.t WHERE data.n > 1 ALLOW FILTERING;"
    if cqlshmain.cqlruleset is None:  # set by cqlsh's main() (setup_cqlruleset)
        cqlshmain.cqlruleset = cql3handling.CqlRuleSet
    statements, _ = cqlshmain.cqlruleset.cql_split_statements(text)
    assert seams.statement_text(statements[0], text).rstrip(";").strip() == text.rstrip(";")


def test_a_shell_command_parsed_as_handle_statement_parses_it():
    # In a process of its own: cqlsh's main() sets its grammar up once a process (setup_cqlruleset).
    code = """if True:
        from cqlshlib import cql3handling
        from cqlsh_ext.upstream import seams
        cqlshmain = seams.import_cqlshmain(None)
        cqlshmain.setup_cqlruleset(cql3handling)
        for text in ('USE "Ks";', 'USE a b;'):
            statements, _ = cqlshmain.cqlruleset.cql_split_statements(text)
            parsed = seams.parse_command(statements[0], text)
            print(None if parsed is None else parsed.get_binding("ksname"))
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ['"Ks"', "None"]


def test_a_shell_handed_a_connection_asks_it_for_its_session():
    # agent.kept_connection lends a warm session's Session through the Cluster's connect().
    source = inspect.getsource(seams.stock_shell_class().__init__)
    assert "self.conn = use_conn" in source and "self.session = self.conn.connect(keyspace)" in source


def test_connection_hook_targets():
    from cassandra.cluster import Cluster
    from cqlshlib import copyutil, sslhandling

    assert cqlshmain.Cluster is Cluster and copyutil.Cluster is Cluster
    assert callable(sslhandling.ssl_settings) and callable(copyutil.ssl_settings)


def test_driver_paging_internals():
    # The driver is compiled (Cython): its source cannot be pinned, its behaviour can.
    from types import SimpleNamespace

    from cassandra.cluster import ResponseFuture, ResultSet

    future = SimpleNamespace(_col_names=["a"], _col_types=[None], has_more_pages=False)
    result = ResultSet(future, [1, 2])
    assert result.current_rows == [1, 2]
    result._current_rows = [3]  # what cqlsh_ext.output.paging does with a prefetched page
    assert result.current_rows == [3] and list(result) == [3]
    for name in ("start_fetching_next_page", "has_more_pages", "result"):
        assert hasattr(ResponseFuture, name), name
    assert isinstance(ResultSet.paging_state, property)  # what output.paging keeps per page
    # perform_simple_statement sends with execute_async(statement, trace=...): paging_from adds the
    # paging state as the driver's keyword, so both must stay.
    import inspect

    from cassandra.cluster import Session

    assert "paging_state" in inspect.signature(Session.execute_async).parameters
    source = inspect.getsource(seams.stock_shell_class().perform_simple_statement)
    assert "self.session.execute_async(statement, trace=self.tracing_enabled)" in source


def test_credentials_file_rule(tmp_path):
    creds = tmp_path / "credentials"
    assert seams.credentials_file_secure(str(creds))  # missing: nothing to refuse
    creds.write_text("[plain_text_auth]\nusername = u\n")
    creds.chmod(0o600)
    assert seams.credentials_file_secure(str(creds))
    creds.chmod(0o640)
    assert not seams.credentials_file_secure(str(creds))
    # The rule cqlsh itself applies to --credentials.
    assert "is_file_secure(options.credentials)" in inspect.getsource(cqlshmain.read_options)


def test_help_topic_is_listed_printed_and_completed_by_cqlsh():
    import io

    from cqlshlib import cqlshhandling

    class Topics(seams.stock_shell_class()):  # type: ignore[misc]
        do_sample = seams.help_topic("sample", "\n        SAMPLE topic text\n")

    shell = object.__new__(Topics)  # HELP needs no connection
    shell.stdout = io.StringIO()
    assert "sample" in shell.get_help_topics()

    class Parsed:
        def get_binding(self, name, default=None):
            return ["sample"] if name == "topic" else default

    shell.do_help(Parsed())
    assert shell.stdout.getvalue() == "\n        SAMPLE topic text\n\n"
    # cqlsh completes HELP's topic from the same list.
    assert "get_help_topics()" in inspect.getsource(cqlshhandling.complete_help)
    # What it answers: those, and CQL's topics, from the module global main() sets.
    cqlshmain = seams.import_cqlshmain(None)
    assert "cqldocs" in vars(cqlshmain) and "global cqldocs" in inspect.getsource(cqlshmain.setup_cqldocs)
    assert "sample" in seams.help_topic_words(shell.get_help_topics())
    assert "cqldocs.get_help_topics()" in inspect.getsource(cqlshmain.Shell.do_help)
    # The topics it prints are the parsed statement's binding, handed over with fewer.
    from cqlshlib.pylexotron import ParseContext

    parsed = ParseContext(None, {"topic": ["sample", "nothing"]}, [], [], "helpCommand")
    assert seams.with_help_topics(parsed, ["sample"]).get_binding("topic") == ["sample"]
    assert "get_binding('topic', ())" in inspect.getsource(cqlshmain.Shell.do_help)


def test_driver_version_of_the_reconnection_seam():
    # Cluster.reconnection_policy is read each time a host's reconnection starts: seen in 3.30.1
    # (tests/repl/test_resilience.py restarts the server under a running shell).
    import cassandra

    assert cassandra.__version__ == "3.30.1"


def test_boto3_session_wraps_a_botocore_session():
    import boto3
    import botocore.session

    session = boto3.Session(region_name="us-east-1", aws_access_key_id="AKIDEXAMPLE",
                            aws_secret_access_key="not-a-secret")
    assert isinstance(session._session, botocore.session.Session)


def test_the_libev_event_loop_is_one_a_process_and_ends_by_its_cleanup():
    from cassandra.io import libevreactor

    assert hasattr(libevreactor, "_global_loop")
    for name in ("_cleanup", "_conn_set_lock", "_live_conns", "_new_conns"):
        assert name in inspect.getsource(libevreactor.LibevLoop), name
    source = inspect.getsource(libevreactor.LibevConnection.initialize_reactor)
    assert "if not _global_loop:" in source and "_global_loop = LibevLoop()" in source


def test_driver_resets_its_reactor_after_a_fork():
    # scanning.workers forks the shell and opens new connections in the child: the driver must
    # notice the fork and start a fresh event loop instead of using the parent's dead thread.
    from cassandra.connection import Connection

    assert hasattr(Connection, "handle_fork")
    for module in ("cassandra.io.libevreactor", "cassandra.io.asyncorereactor"):
        try:
            source = inspect.getsource(importlib.import_module(module))
        except ImportError:
            continue
        assert "handle_fork()" in source and "os.getpid()" in source, module


def test_the_driver_loads_without_its_twisted_reactor_where_twisted_is_absent():
    # The driver's cluster module tries its Twisted reactor, whose module imports `deprecated` (and
    # with it wrapt and asyncio) before it finds no Twisted: cqlsh-ext skips that import where Twisted
    # is not installed. In a fresh process, the reactor still importable afterwards (it fails as
    # the driver's own import would).
    import importlib.util
    from pathlib import Path

    import cassandra

    package = Path(cassandra.__file__).parent
    cluster = (package / "cluster.py").read_text()
    assert "try:\n    from cassandra.io.twistedreactor import TwistedConnection\nexcept ImportError:" \
        in cluster
    reactor = (package / "io" / "twistedreactor.py").read_text()
    assert reactor.index("from deprecated import") < reactor.index("from twisted")
    code = (
        "import sys; from cqlsh_ext.upstream import seams; seams.import_cqlshmain(None)\n"
        "import cassandra.cluster as c\n"
        "print(c.TwistedConnection, sorted({'deprecated', 'wrapt', 'asyncio'} & set(sys.modules)))\n"
        "try:\n"
        "    import cassandra.io.twistedreactor\n"
        "except ImportError as err:\n"
        "    print(type(err).__name__, err.name)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    if importlib.util.find_spec("twisted") is None:
        assert out.splitlines() == ["None []", "ModuleNotFoundError twisted"]
    else:
        assert out.splitlines()[0].startswith("<class 'cassandra.io.twistedreactor.TwistedConnection'>")


def test_the_driver_loads_without_numpy_and_numpy_stays_importable():
    # The driver imports numpy only for NumpyProtocolHandler; cqlsh-ext starts without paying for
    # it. In a fresh process: this test's own process may have numpy loaded already.
    import importlib.util
    from pathlib import Path

    import cassandra

    package = Path(cassandra.__file__).parent  # the modules are compiled: their sources beside them
    source = (package / "cython_deps.py").read_text()
    assert "import numpy" in source and "HAVE_NUMPY" in source
    protocol = (package / "protocol.py").read_text()
    assert protocol.count("HAVE_NUMPY") == 2 and "NumpyProtocolHandler = None" in protocol
    code = (
        "import sys; from cqlsh_ext.upstream import seams; seams.import_cqlshmain(None)\n"
        "import cassandra.protocol as p\n"
        "print('numpy loaded' if 'numpy' in sys.modules else 'no numpy', p.NumpyProtocolHandler)\n"
        "import importlib.util\n"
        "if importlib.util.find_spec('numpy') is not None:\n"
        "    import numpy; print('numpy importable', numpy.__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[0] == "no numpy None"
    if importlib.util.find_spec("numpy") is not None:
        assert out.splitlines()[1] == "numpy importable numpy"
