"""--stats: the run's figures, one JSON object on standard error when it ends (its last line):

    {"type": "stats", "statements": 1, "rows": 10, "exact": false, "truncated": true,
     "truncated_why": ["max_rows"], "resume": "eyJ2IjoyLC...", "values": {"decoded": 10, "undecodable": 0},
     "elapsed_s": 0.84, "cpu_s": 0.61, "exit": {"code": 0, "name": "ok"}}

`rows`: the rows the run's SELECTs printed (written out: not those read that a Ctrl-C or --timeout
stopped before they were); `truncated`: whether any answer was cut short, and why (`max_rows`:
--max-rows on purpose; `timed_out`, `interrupted`); `exact`: nothing was cut and no statement
failed; `resume`: the token that goes on with the first cut answer from its next row (--resume),
null when none can; `values`: the blob values printed that decoded and those that did not; `cpu_s`:
user and system time of the process and its worker processes.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from typing import TYPE_CHECKING, Any

from cqlsh_ext.common.exits import of_code

if TYPE_CHECKING:
    from cqlsh_ext.agent.door import AgentRun

def figures(agent: AgentRun, code: int) -> dict[str, Any]:
    from cqlsh_ext.output.row_limit import VALUES

    cpu = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        cpu += usage.ru_utime + usage.ru_stime
    why = list(dict.fromkeys(agent.cuts))
    doubted = any(printed.doubt for printed in agent.rows.printed)  # a typo's nulls (row_limit)
    exit_ = of_code(code)
    return {"type": "stats", "statements": agent.statements, "rows": sum(p.shown for p in agent.rows.printed),
            "exact": not why and code == 0 and not doubted, "truncated": bool(why),
            "truncated_why": why or None,
            "resume": agent.resume_token,
            **({"resume_unavailable": agent.resume_unavailable}
               if agent.resume_token is None and agent.resume_unavailable else {}),
            "values": {"decoded": VALUES.decoded, "undecodable": VALUES.undecodable},
            "elapsed_s": round(time.monotonic() - agent.started, 3), "cpu_s": round(cpu, 3),
            "exit": {"code": code, "name": exit_.name if exit_ is not None else None}}


def write(agent: AgentRun, code: int) -> None:
    sys.stderr.write(json.dumps(figures(agent, code)) + "\n")
    sys.stderr.flush()
