"""docs/agents.md's session: an assistant's commands, run here as an assistant runs them (the host in
cqlshrc, the login in the credentials file, the flags the skill gives), on the demo's data; what
each printed on standard output and standard error and its exit code must be what the page shows
(times and tokens aside, which differ from run to run). CQLSH_EXT_WRITE_AGENTS_SESSION=1 writes
the page's session from this run instead."""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

from conftest import REPO_ROOT
from shell_runner import CQLSH_EXT, run, said_lines

PAGE = REPO_ROOT / "docs" / "agents.md"
START, END = "<!-- session: written by tests/agent/test_agents_doc.py -->", "<!-- end of session -->"
DEMO = "compression_demo"
RUN = "cqlsh-ext --read-only --output-format json --stats"
ORDERS = f"{DEMO}.table_with_compressed_json"
#: (what the assistant wants, its command); {token}: the resume token the step before gave.
STEPS = (
    ("What tables does the demo keyspace hold, and what is in their columns? The catalog, in one call "
     "(two of the tables here): each column's CQL type, and what a sample of a blob column holds.",
     f"{RUN} --catalog '{DEMO}.table_with_*'"),
    ("What is inside an order? Three of them, paths selected inside the compressed documents: more "
     "follow, and the token goes on.",
     f'{RUN} --max-rows 3 -e "SELECT data.orderId, data.status, data.customer.name FROM {ORDERS}"'),
    ("The next three, exactly after the first.",
     f'{RUN} --max-rows 3 --resume {{token}} -e "SELECT data.orderId, data.status, data.customer.name '
     f'FROM {ORDERS}"'),
    ("How many of each status? Counted by the database's rows, every one read: an exact answer.",
     f'{RUN} -e "SELECT data.status, count(*) FROM {ORDERS} GROUP BY data.status ALLOW FILTERING"'),
    ("The paid orders as a file for the user: a new file in the directory the user named, readable "
     "by its owner only.",
     f'{RUN} --export-dir ~/exports -e "COPY (SELECT data.orderId, data.customer.name FROM {ORDERS} '
     f"WHERE data.status = 'PAID' ALLOW FILTERING) TO '~/exports/paid.csv'\""),
    ("A write is refused before it runs.",
     f"{RUN} -e \"DELETE FROM {DEMO}.blob_formats WHERE name = 'gzip'\""),
)


def _session(keyspace: str, home: Path) -> str:
    """The session's Markdown, as run in `home` (connected_home) on the demo loaded in `keyspace`
    (named DEMO on the page)."""
    out, token = [], ""
    for want, command in STEPS:
        shown = command.format(token=token)
        args = shlex.split(shown.replace(DEMO, keyspace))
        assert args[0] == "cqlsh-ext"
        result = run(CQLSH_EXT, args[1:], home)
        said = said_lines(result.stderr)
        stats = json.loads(said[-1])
        assert stats["type"] == "stats", said
        token = stats["resume"] or token
        lines = [f"$ {shown}", *result.stdout.splitlines(), "# standard error", *said,
                 f"# exit code {result.returncode}"]
        out += [f"{want}", "", "```console", *(line.replace(keyspace, DEMO) for line in lines), "```", ""]
    return "\n".join(out)


def _steady(text: str) -> str:
    """What must not differ from run to run: times and tokens out."""
    text = re.sub(r'"(elapsed_s|cpu_s)": [0-9.]+', r'"\1": _', text)
    text = re.sub(r'"resume": "[A-Za-z0-9_-]+"', '"resume": "_"', text)
    text = re.sub(r"\d+ parallel streams", "_ parallel streams", text)  # (the machine's cores)
    text = re.sub(r'"(ranges_read|ranges)": \d+', r'"\1": _', text)  # (the same)
    return re.sub(r"--resume [A-Za-z0-9_-]+", "--resume _", text)


def test_the_page_s_session_is_what_the_commands_print(demo_keyspace: str, connected_home: Path) -> None:
    session = _session(demo_keyspace, connected_home)
    page = PAGE.read_text()
    before, rest = page.split(START + "\n", 1)
    shown, after = rest.split(END, 1)
    if os.environ.get("CQLSH_EXT_WRITE_AGENTS_SESSION") == "1":
        PAGE.write_text(before + START + "\n" + session + END + after)
        return
    assert _steady(shown) == _steady(session), "run with CQLSH_EXT_WRITE_AGENTS_SESSION=1:\n" + session
    # The run itself: the second answer went on exactly after the first, the count is exact.
    assert '"truncated": true' in session and '"exact": true' in session and "# exit code 3" in session
