"""Hints an assistant can follow: what the shell says to a person at its prompt (DECODE ..., COMPRESSION
TRIAL, SAMPLE n, ALL, HELP QUERIES) said in the tools' terms, or left out where no tool does it.

Applied to the prose of an answer only: its error line, its notes, and a report's sentences (the
keys in PROSE); never to rows, values or paths, which are what is stored.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: The keys of a report whose string values are sentences of ours (COMPRESSION STATS' verdict,
#: SETTINGS' advice, ADVISE's reasons, DESCRIBE PAYLOAD's hint and reading).
PROSE = frozenset({"verdict", "verdicts", "advice", "hint", "hints", "why", "text", "reasons", "note",
                   "notes", "stopped", "error"})
#: Where prose is never looked for: stored values and their places.
_VALUES = frozenset({"rows", "values", "paths", "payload", "encodings", "key"})

_REWRITES: tuple[tuple[re.Pattern[str], Any], ...] = (
    # DESCRIBE PAYLOAD's hint: the setting that reads values of no known format.
    (re.compile(r"DECODE '([^']+)' AS '([^']+)' \(or --decode \S+\) reads them so"),
     lambda m: (f"the decode argument {json.dumps({_column(m.group(1)): m.group(2)})} of query, "
                "inspect_value or describe_payload reads them so")),
    (re.compile(r"(?:[;,] )?COMPRESSION TRIAL (?:measures )?what it does to latency"
                r"(?: on this cluster)?"), ""),
    (re.compile(r"COMPRESSION ADVISE"), "compression_advise"),
    (re.compile(r" ?\(STATS \.\.\. DECODE ALL decompresses every value\)"), ""),
    (re.compile(r"Add CONFIRM after ALL to run it from a script, or describe a sample: SAMPLE n instead"),
     "give describe_payload a sample (rows to read) instead"),
    (re.compile(r"; ALL reads every row"), "; a larger sample reads more rows"),
    (re.compile(r"SAMPLE n or ALL say how much"), "the sample argument says how much"),
    (re.compile(r"\bSAMPLE n\b"), "the sample argument"),
    (re.compile(r" ?\(HELP [A-Z]+\)"), ""),
)


def for_assistant(text: str) -> str:
    """`text` (a sentence of ours) with its shell hints said as the tools do them."""
    for pattern, replacement in _REWRITES:
        text = pattern.sub(replacement, text)
    return text


def report(data: Any, prose: bool = False) -> Any:
    """A report's sentences rewritten in place (strings under PROSE keys, outside stored values);
    returns it."""
    if isinstance(data, dict):
        for name, item in data.items():
            if name in _VALUES:
                continue
            inside = prose or name in PROSE
            if isinstance(item, str) and inside:
                data[name] = for_assistant(item)
            elif isinstance(item, (dict, list)):
                report(item, inside)
    elif isinstance(data, list):
        for i, item in enumerate(data):
            if isinstance(item, str) and prose:
                data[i] = for_assistant(item)
            elif isinstance(item, (dict, list)):
                report(item, prose)
    return data


def _column(place: str) -> str:
    """The column part of keyspace.table.column[.path] (what `decode` is keyed by)."""
    parts = place.split(".")
    return ".".join(parts[2:]) if len(parts) > 2 else parts[-1]
