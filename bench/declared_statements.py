"""What reading one of the shell's declared statements into its request costs (COMPRESSION STATS,
ADVISE, SETTINGS: insight/declared.py), beside what cqlsh's grammar cost the same statement when it
read them (the grammar still completes them; the shell no longer parses them with it).

  declared   our lexer (cql.lexer.Lexed), the feature found by its words
             (features.statements.own_feature_of), its arguments and clauses read from its
             declaration and its request built by its declared builder
             (shell.dispatcher.called): the shell's whole reading of the statement
  cqlsh      cqlsh's grammar (cql_whole_parse_tokens, start symbol cqlshCommand) on cqlsh's tokens:
             what the shell ran before for these statements, the request's building from its parse
             left out (a few dictionary lookups)

cqlsh's lexer runs before both (it splits the input into statements) and is counted in neither.
CPU per statement (getrusage, user + system: the machine is shared), in one process after a
warm-up, the least of --repeat rounds of --count statements each.

    .venv/bin/python bench/declared_statements.py [--count 300] [--repeat 3]

Figures only: nothing is asserted.
"""

from __future__ import annotations

import argparse
import resource
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(ROOT))

#: The statements a person types, whole: a table, a SELECT with its clauses, a closing clause.
STATEMENTS = {
    "stats table": "COMPRESSION STATS ks.orders;",
    "stats sampled SELECT": "COMPRESSION STATS JSON SAMPLE UNTIL 2 PERCENT WITHIN 30 SECONDS SEED 7 "
                            "PARALLEL 2 CONFIRM SELECT data, doc FROM ks.orders;",
    "stats SELECT WHERE": "COMPRESSION STATS SELECT data FROM ks.orders WHERE id IN (1, 2, 3, 4, 5, 6, 7, 8) "
                          "AND kind = 'raw' LIMIT 500;",
    "advise SAVE DICTIONARY": "COMPRESSION ADVISE SAMPLE 300 SELECT data FROM ks.orders LIMIT 500 "
                              "SAVE DICTIONARY '/tmp/orders.dict';",
    "settings": "COMPRESSION SETTINGS SAMPLE 1000 ks.orders;",
}


def cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def per_statement(fn: Callable[[], Any], count: int, repeat: int) -> float:
    """The least CPU seconds of one call over `repeat` rounds of `count` calls."""
    fn()  # warm: imports, the grammar's caches
    best = float("inf")
    for _ in range(repeat):
        start = cpu()
        for _ in range(count):
            fn()
        best = min(best, (cpu() - start) / count)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from cqlsh_ext.upstream import seams

    cqlshmain = seams.import_cqlshmain(None)
    from cqlshlib import cql3handling

    from cqlsh_ext.shell.completion import register_grammar

    register_grammar()
    cqlshmain.setup_cqlruleset(cql3handling)
    from types import SimpleNamespace

    from cqlsh_ext.cql.lexer import Lexed
    from cqlsh_ext.features.statements import own_feature_of
    from cqlsh_ext.shell.dispatcher import called

    rules = cqlshmain.cqlruleset

    def refused(said: str) -> None:
        raise AssertionError(said)

    # The shell's reading context as the statement door uses it: the keyspace in use, where it says.
    ctx: Any = SimpleNamespace(keyspace="ks", error=refused)

    def declared(text: str) -> Any:
        """The shell's own reading of the statement (shell.py hands it to these two)."""
        lexed = Lexed(text)
        found = own_feature_of(lexed)
        assert found is not None, text
        request, _ = called(ctx, found[0], found[1], lexed)
        return request

    def cqlsh(text: str) -> Any:
        tokens = rules.cql_split_statements(text)[0][0]
        return lambda: rules.cql_whole_parse_tokens(tokens, srcstr=text, startsymbol="cqlshCommand")

    print(f"{'statement':<24} {'declared µs':>12} {'cqlsh µs':>10} {'cqlsh / declared':>17}")
    for name, text in STATEMENTS.items():
        ours = per_statement(lambda text=text: declared(text), args.count, args.repeat)  # type: ignore[misc]
        theirs = per_statement(cqlsh(text), args.count, args.repeat)
        print(f"{name:<24} {ours * 1e6:>12,.0f} {theirs * 1e6:>10,.0f} {theirs / ours:>16.1f}x")


if __name__ == "__main__":
    main()
