"""The Python API's methods made from the declarations: every feature of cqlsh-ext's that declares
its method (features.feature.Method: db.stats, db.advise, db.settings, db.describe_payload, ...; a
write feature's too: api.writes.declared_write) is a method of the connection (cqlsh_ext.Database)
whose parameters are the declared arguments, in order, the required ones without a default
(`progress` after them), its docstring the declaration's words. A call checks its arguments against
the declaration, looks up the table it reads (a table alone is in the connection's keyspace), builds
the request with the declared builder (or hands the service a FeatureCall), and answers the report
(api.report.ReportResult); a bad argument is cqlsh_ext.Error, one line naming it, as at every front
end. A package's read feature that declares its method is one too (db.<its method>); db.feature(name,
...) calls any package's read feature the same way."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from cqlsh_ext.api.errors import Error

if TYPE_CHECKING:
    from cqlsh_ext.api.connected import Connected
    from cqlsh_ext.api.query_answer import Progress
    from cqlsh_ext.api.report import ReportResult
    from cqlsh_ext.features.feature import Feature
    from cqlsh_ext.reading.context import ReadContext
    from cqlsh_ext.reading.typed import ReportAnswer

__all__ = ["call", "method_names", "method_of", "signature_of"]


def _declared() -> dict[str, Feature]:
    """cqlsh-ext's features that declare their method in the API, by the method's name."""
    from cqlsh_ext.features import declared

    return {feature.method.name: feature for feature in declared(plugins=False).values()
            if feature.method is not None}


def _packages(db: Connected) -> dict[str, Feature]:
    """The packages' read features that declare their method (features.calling.plugins), by the
    method's name; one whose name the connection has already (its own: db.query, db.stats) refused
    in one line rather than left unreachable."""
    from cqlsh_ext.features import PluginError
    from cqlsh_ext.features.calling import plugins

    own = _declared()
    methods: dict[str, Feature] = {}
    try:
        found = plugins()
    except PluginError as err:
        raise Error(str(err)) from None
    for feature in found.values():
        if feature.method is None:
            continue
        name = feature.method.name
        if name in own or hasattr(type(db), name) or name.startswith("_"):
            raise Error(f"the read feature {feature.name} of a package declares the method db.{name}, "
                        "which is cqlsh-ext's own: its package must name it otherwise")
        methods[name] = feature
    return methods


def method_names(db: Connected) -> list[str]:
    """The names of db's methods made from the declarations: cqlsh-ext's, then the packages'."""
    return [*_declared(), *_packages(db)]


def method_of(db: Connected, name: str) -> Callable[..., Any]:
    """db.<name>: the method the feature that declares it is (AttributeError for any other name),
    cqlsh-ext's own or a package's read feature's: a report's answers a ReportResult, a write
    feature's the result its Method declares (RewriteResult, ...; else a WriteResult:
    api.writes.declared_write)."""
    feature = None if name.startswith("_") else _declared().get(name) or _packages(db).get(name)
    if feature is None or feature.method is None:
        raise AttributeError(f"{type(db).__name__!r} object has no attribute {name!r}")
    signature = signature_of(feature)

    def method(*args: Any, **kwargs: Any) -> Any:
        try:
            given = signature.bind(*args, **kwargs)
        except TypeError as err:
            raise Error(f"db.{name}: {err}") from None
        arguments = dict(given.arguments)
        progress = arguments.pop("progress", None)
        if feature.writes is not None:
            from cqlsh_ext.api.writes import declared_write

            return declared_write(db, feature, arguments, progress)
        return call(db, feature, arguments, progress)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = _doc(feature)
    method.__signature__ = signature  # type: ignore[attr-defined]  # what help() and inspect show
    return method


def signature_of(feature: Feature) -> inspect.Signature:
    """The declared arguments as parameters, less those the API answers its own way, then progress:
    a write feature's optional ones keyword-only (as db.rewrite's: confirm=True is written out)."""
    omitted = feature.method.omits if feature.method is not None else ()
    positional = feature.method.positional if feature.method is not None else ()
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    optional = inspect.Parameter.KEYWORD_ONLY if feature.writes is not None else kind
    parameters = [inspect.Parameter(argument.name, kind, default=inspect.Parameter.empty) if argument.required
                  else inspect.Parameter(argument.name, kind if argument.name in positional else optional,
                                         default=False if argument.type == "boolean" else None)
                  for argument in feature.arguments if argument.name not in omitted]
    # the required first, then the positional ones with a default, then the keyword-only ones
    parameters.sort(key=lambda parameter: (parameter.default is not inspect.Parameter.empty,
                                           parameter.kind is inspect.Parameter.KEYWORD_ONLY))
    return inspect.Signature([*parameters, inspect.Parameter("progress", optional, default=None)])


def _doc(feature: Feature) -> str:
    """The method's docstring: its declared one, else the declaration's title, description and
    details, its arguments."""
    if feature.method is not None and feature.method.doc:
        return feature.method.doc
    lines = [f"{feature.title}: {feature.description}"]
    if feature.details:
        lines += ["", feature.details]
    omitted = feature.method.omits if feature.method is not None else ()
    lines += ["", *(f"{argument.name}: {argument.doc}" for argument in feature.arguments
                    if argument.name not in omitted),
              "progress: the reading's events, as db.query's"]
    return "\n".join(lines)


def call(db: Connected, feature: Feature, arguments: Mapping[str, Any],
         progress: Progress | None) -> ReportResult:
    """The feature called with `arguments` (None and False: not given) on `db`: its request built by
    its declared builder and handed to its service, or (a feature that declares none, a package's)
    the service handed a FeatureCall once the table is found; its report answered."""
    from cqlsh_ext.cql.errors import QueryError
    from cqlsh_ext.features.arguments import Invalid
    from cqlsh_ext.features.calling import checked, ready_service, refusal, request_of, table_named
    from cqlsh_ext.features.feature import FeatureCall

    given = {name: value for name, value in arguments.items() if value is not None and value is not False}
    try:
        given = checked(feature, given)  # before the table it names is read from it
        request = request_of(feature, FeatureCall(given, table_named(feature, given, db.keyspace)))
    except Invalid as err:
        raise Error(str(err)) from None

    def read(ctx: ReadContext) -> ReportAnswer | None:
        try:
            service = ready_service(ctx, feature, request, "the API") if feature.request is None \
                else feature.service
        except Invalid as err:
            raise Error(str(err)) from None
        if service is None:
            raise Error(f"{feature.name} declares no service: the API cannot run it")
        try:
            answer: ReportAnswer | None = service(ctx, request)
        except QueryError as err:  # a service handed a FeatureCall: its refusal, as every front end says it
            if feature.request is not None:
                raise  # cqlsh-ext's own reading's, said in its own words (Database._report)
            raise Error(refusal(feature, err)) from None
        return answer

    return db._report(read, progress)
