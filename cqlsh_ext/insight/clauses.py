"""The readers of the shell's clauses whose spelling is a grammar of its own, more than a keyword and
a value (features.feature.Clause's `value`): COMPRESSION STATS' SAMPLE, COMPRESSION TRIAL's CODECS.
Each reads our lexer's tokens from the index after the clause's words and answers its typed value and
the index after it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cqlsh_ext.features.arguments import Invalid

if TYPE_CHECKING:
    from cqlsh_ext.cql.lexer import Token
    from cqlsh_ext.reading.read_requests import SampleSpec

__all__ = ["STATS_SAMPLE_GRAMMAR", "TRIAL_CODECS_GRAMMAR", "stats_sample", "trial_codecs"]

_SAMPLE_FORM = "SAMPLE [n [PERCENT] | UNTIL x PERCENT] [WITHIN s SECONDS] [SEED n]"


def _word(tokens: list[Token], k: int, word: str) -> bool:
    return k < len(tokens) and tokens[k].kind == "word" and tokens[k].value.upper() == word


def stats_sample(feature: str, text: str, tokens: list[Token], k: int) -> tuple[SampleSpec, int]:
    """SAMPLE [n | p PERCENT | UNTIL x PERCENT] [WITHIN s SECONDS] [SEED n] (SAMPLE alone: until
    every figure is within 1 %): rows, a share of the ring or a precision, a time limit, a seed."""
    from cqlsh_ext.reading.read_requests import SampleSpec

    def number(at: int, what: str, whole: bool = True) -> float:
        kinds = ("int",) if whole else ("int", "decimal")
        if at >= len(tokens) or tokens[at].kind not in kinds:
            found = tokens[at].describe() if at < len(tokens) else "the end"
            raise Invalid(f"{feature}: {what} takes {'a whole number' if whole else 'a number'}, not "
                          f"{found}: {_SAMPLE_FORM}")
        return float(tokens[at].value)

    def expect(at: int, word: str, after: str) -> int:
        if not _word(tokens, at, word):
            found = tokens[at].describe() if at < len(tokens) else "the end"
            raise Invalid(f"{feature}: {after} is followed by {word}, not {found}: {_SAMPLE_FORM}")
        return at + 1

    rows = percent = precision = seconds = seed = None
    if _word(tokens, k, "UNTIL"):
        precision = number(k + 1, "SAMPLE UNTIL", whole=False) / 100
        k = expect(k + 2, "PERCENT", "SAMPLE UNTIL x")
    elif k < len(tokens) and tokens[k].kind == "int":
        if _word(tokens, k + 1, "PERCENT"):
            percent, k = float(tokens[k].value), k + 2
        else:
            rows, k = int(tokens[k].value), k + 1
    if _word(tokens, k, "WITHIN"):
        seconds = number(k + 1, "WITHIN")
        k = expect(k + 2, "SECONDS", "WITHIN s")
    if _word(tokens, k, "SEED"):
        seed, k = int(number(k + 1, "SEED")), k + 2
    return SampleSpec(rows=rows, percent=percent, precision=precision, seconds=seconds or None,
                      seed=seed), k


#: The words that end a chain of TRIAL's CODECS: the statement's other options.
_AFTER_CODECS = frozenset({"ROWS", "CONCURRENCY", "INTO", "KEEP", "CONFIRM", "JSON", "FROM", "CODECS"})


def trial_codecs(feature: str, text: str, tokens: list[Token], k: int) -> tuple[tuple[str, ...], int]:
    """CODECS chain, ...: each chain a 'string', or written bare as encode() reads one (zstd:3,
    lz4/frame, snappy>json), as typed; the list ends at the statement's next option."""
    chains: list[str] = []
    while True:
        start = k
        if k < len(tokens) and tokens[k].kind == "string":
            chains.append(str(tokens[k].literal))
            k += 1
        else:
            while k < len(tokens) and not (tokens[k].kind == "punct" and tokens[k].value == ",") \
                    and not (tokens[k].kind == "word" and tokens[k].value.upper() in _AFTER_CODECS):
                k += 1
            if k == start:
                found = tokens[k].describe() if k < len(tokens) else "the end"
                raise Invalid(f"{feature}: CODECS takes chains (zstd:3, 'gzip>json', ...), not {found}")
            chains.append(text[tokens[start].start:tokens[k - 1].end])
        if not (k < len(tokens) and tokens[k].kind == "punct" and tokens[k].value == ","):
            return tuple(chains), k
        k += 1


#: What completes each reader's clause at the prompt (shell.completion): its symbol, and its rules.
STATS_SAMPLE_GRAMMAR = ("<statsSample>", r"""
<statsSample> ::= ( "UNTIL" ( <wholenumber> | <float> ) "PERCENT" | <wholenumber> "PERCENT"? )?
                  ( "WITHIN" <wholenumber> "SECONDS" )? ( "SEED" <wholenumber> )?
                ;
""")
TRIAL_CODECS_GRAMMAR = ("<trialChain> ( \",\" <trialChain> )*", r"""
<trialChain> ::= <quotedStringLiteral> | <trialStep> ( ">" <trialStep> )*
               ;
<trialStep> ::= <identifier> ( "/" <identifier> ( "-" <identifier> )* )? ( ":" "-"? <wholenumber> )?
              ;
""")
