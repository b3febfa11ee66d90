"""`cqlsh-ext skill [DIR]`: write a skill for an assistant that runs this cqlsh-ext through its
shell: DIR/SKILL.md (by default both .agents/skills/cqlsh-ext, where Codex, Gemini CLI, Copilot CLI
and OpenCode find a project's skills, and .claude/skills/cqlsh-ext, where Claude Code does; `-`
prints it), with the YAML front matter skills are found by (a `name` of lower case letters,
digits and hyphens, at most 64 characters; a `description` of at most 1,024), the command line to
run it with (--read-only by default), the statements it takes with examples on the demo's tables
(`cqlsh-ext demo load`), and what its answers, errors, figures and exit codes are. It names the
version it was written by: a skill is written again when cqlsh-ext is upgraded.
"""

from __future__ import annotations

import argparse
import os
import sys

#: The skill's name (its directory's, as Claude Code names a skill).
NAME = "cqlsh-ext"
#: Where a project's skills are: the agents that read `.agents/skills` (Codex, Gemini CLI, Copilot
#: CLI, OpenCode), and Claude Code's; the skill is written in each unless a DIR is given.
DEFAULT_DIRS = (os.path.join(".agents", "skills", NAME), os.path.join(".claude", "skills", NAME))
#: The demo's keyspace and tables, as `cqlsh-ext demo load` makes them (demo.cli).
DEMO = "compression_demo"
#: The command line every example runs with: reads only, JSON answers, the run's figures, a time
#: limit and a cap on rows.
RUN = "cqlsh-ext --read-only --output-format json --stats --timeout 120 --max-rows 200"

DESCRIPTION = (
    "Read an Apache Cassandra or Amazon Keyspaces database from the command line with cqlsh-ext "
    "{version}, read-only: list keyspaces and tables, run SELECTs, decode compressed blob columns "
    "(snappy, LZ4, zstd, gzip, ... holding JSON and other formats), select, filter and group by paths "
    "inside those payloads, and measure how values are compressed. Answers are JSON Lines on standard "
    "output, errors and figures JSON on standard error, with exit codes that say how a run ended. Use "
    "it when asked about the data stored in Cassandra or Keyspaces tables."
)

#: (what it shows, the statement): each runs on the demo's tables.
EXAMPLES = (
    ("the keyspaces", "DESCRIBE KEYSPACES"),
    ("a keyspace's tables and their columns", f"DESCRIBE KEYSPACE {DEMO}"),
    ("a few rows, blobs decoded", f"SELECT * FROM {DEMO}.table_with_compressed_json LIMIT 3"),
    ("the paths inside a blob column's documents, with their types and how often each is there",
     f"DESCRIBE PAYLOAD {DEMO}.table_with_compressed_json.data SAMPLE 200"),
    ("paths selected from inside the documents",
     f"SELECT data.orderId, data.status, data.customer.name FROM {DEMO}.table_with_compressed_json LIMIT 5"),
    ("rows filtered on a path",
     f"SELECT data.orderId FROM {DEMO}.table_with_compressed_json WHERE data.status = 'SHIPPED' "
     "LIMIT 5 ALLOW FILTERING"),
    ("a count by a path's value (every row read)",
     f"SELECT data.status, count(*) FROM {DEMO}.table_with_compressed_json GROUP BY data.status "
     "ALLOW FILTERING"),
    ("one value described: its layers, sizes, ratio",
     f"INSPECT SELECT data FROM {DEMO}.blob_formats WHERE name = 'zstd'"),
    ("how a table's values are compressed, and what would do better",
     f"COMPRESSION STATS SAMPLE 200 {DEMO}.table_with_compressed_json"),
)


def skill_text() -> str:
    """SKILL.md: its front matter and its body, for the installed version."""
    from cqlsh_ext import __version__
    from cqlsh_ext.agent.read_only import RUNS
    from cqlsh_ext.common.exits import EXITS

    description = DESCRIPTION.format(version=__version__)
    lines = ["---", f"name: {NAME}", f"description: {_yaml_string(description)}", "---", "",
             f"# cqlsh-ext {__version__}: reading Cassandra and Amazon Keyspaces", "",
             f"Written by `cqlsh-ext skill` of cqlsh-ext {__version__}; run it again after an upgrade.", "",
             "## How to run it", "",
             "Run one statement at a time, always with these flags:", "", "```",
             f'{RUN} -e "STATEMENT"', "```", "",
             "- The connection is cqlsh's: `HOST PORT` after the flags, or `~/.cassandra/cqlshrc` "
             "(`[connection] hostname, port`); the login from `~/.cassandra/credentials`, or "
             "`--credentials FILE` naming another file of the same form (`[plain_text_auth]` with "
             "`username` and `password`, readable by you only). Never put a password on the command "
             "line. Add `-k KEYSPACE` to name tables without their keyspace.",
             "- Start with the catalog, one call: the keyspaces, tables, columns with their CQL types, "
             "and what each blob column holds (`chain`, `format`, `confidence`, from a sample of 20 rows), "
             "every name spelt ready to paste:", "", "```",
             f"{RUN} --catalog {DEMO}", "```", "",
             "  `--catalog` alone lists every keyspace outside the system's; `--catalog 'KS.orders*'` "
             "some tables (`*` and `?` as wildcards).",
             f"- `--read-only` runs {RUNS} only; anything else is refused before it runs (exit code 3).",
             "- `--max-rows 200` prints at most 200 rows of a SELECT and says so; to see the next ones, "
             "run the same statement again with `--resume TOKEN`, the token --stats gave. Prefer a "
             "narrower WHERE, a LIMIT or a count to reading many rows.",
             "- `--timeout 120` stops a statement that runs longer (exit code 4), its rows printed "
             "going on with `--resume TOKEN` as a cut does; a whole-table count reads every row: say "
             "so before running one on a large table.",
             "- A file for the user (CSV, JSON Lines, Parquet): add `--export-dir DIR` (a directory the "
             "user named) and run `COPY (SELECT ...) TO 'DIR/NAME.csv'`; only a new file inside DIR is "
             "written (readable by its owner only), never over one, and nothing else.",
             "- Many calls in a row: a warm session saves each call's start (about 0.3 s of CPU). The "
             "user starts one in a terminal of its own, `cqlsh-ext --serve NAME HOST PORT --credentials "
             "FILE` (the connection options only); then add `--session NAME` to each command above, "
             "the same flags, answers and exit codes. Without the session running, a call says so "
             "(exit code 1); `cqlsh-ext --session-status` lists the running ones as JSON.", "",
             "## Examples (the demo keyspace of `cqlsh-ext demo load`)", ""]
    for what, statement in EXAMPLES:
        lines += [f"{what[:1].upper()}{what[1:]}:", "", "```", f'{RUN} -e "{statement}"', "```", ""]
    lines += ["## Reading the answers", "",
              "- Standard output: one JSON object per row (JSON Lines). A decoded blob is an object "
              "with `label` (its layers: `snappy > json`), `kind` and `payload` (the document); a path's "
              "value is its JSON value.",
              "- DESCRIBE answers JSON objects: `DESCRIBE TABLE ks.t` gives `columns` (name, type, key, "
              "holds), `partition_key`, `clustering_key`, `options`.",
              "- Standard error: every line is one JSON object. An error: `{\"type\": \"error\", "
              "\"kind\", \"message\", \"hint\", \"position\"}` (a misspelt name's hint: \"did you mean "
              "...?\"); an answer cut on purpose says so (`{\"type\": \"truncated\", \"resume\"}`, or "
              "`resume_unavailable`: why it cannot go on); a path no document holds is a `warning` naming "
              "the `nearest` paths (its column is null on every row: ask again with the path meant); "
              "other lines are `note`s; the last line is --stats' object: `rows`, `exact`, `truncated` "
              "and `truncated_why`, `resume`, `values` (decoded, undecodable), `elapsed_s`, `cpu_s`, "
              "`exit`.",
              "- Never report a count or a sum from rows you read when `truncated` is true: count with "
              "the statement instead (`SELECT count(*) ...`, `GROUP BY`).",
              "- `cqlsh-ext --spec` prints every flag, statement, output format and exit code as JSON.", "",
              "## Exit codes", "", "| code | name | meaning |", "|---|---|---|"]
    lines += [f"| {e.code} | {e.name} | {e.meaning} |" for e in EXITS]
    return "\n".join(lines) + "\n"


def _yaml_string(text: str) -> str:
    """A YAML double-quoted scalar (valid JSON, which YAML reads as it is)."""
    import json

    return json.dumps(text, ensure_ascii=False)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cqlsh-ext skill",
        description="Write a skill (SKILL.md) for an assistant that runs this cqlsh-ext: Codex, Gemini CLI, "
                    "Copilot CLI and OpenCode find it under .agents/skills/, Claude Code under "
                    ".claude/skills/ (a project's; ~/.claude/skills/ yours) (cqlsh-ext docs agents).")
    parser.add_argument("directory", nargs="?", default=None, metavar="DIR",
                        help=f"the skill's directory, SKILL.md written in it (default: both "
                             f"{' and '.join(DEFAULT_DIRS)}); - prints it instead")
    return parser


def main(argv: list[str]) -> int:
    from cqlsh_ext.common.text import say

    args = _parser().parse_args(argv)
    text = skill_text()
    if args.directory == "-":
        sys.stdout.write(text)
        return 0
    for directory in (args.directory,) if args.directory else DEFAULT_DIRS:
        path = os.path.join(directory, "SKILL.md")
        try:
            os.makedirs(directory, exist_ok=True)
            with open(path, "w", encoding="utf-8") as out:
                out.write(text)
        except OSError as err:
            say(f"cqlsh-ext skill: {path}: {err.strerror or err}")
            return 1
        print(path)
    return 0
