"""The shell for programs and assistants (docs/agents.md): what `cqlsh-ext -e` promises a program
that runs it, beside what it prints for a person.

- read_only.py   --read-only: the shell's door to the read-only rule every read-only door keeps to
                 (features/read_rule.py) and the policy's tables (mcp_server/policy.py)
- door.py        the run's side (AgentRun, the shell's `agent`): each statement checked, timed and
                 classed by how it ended (common/exits.py); errors as JSON objects; the run's figures
- errors.py      an error line as data: its kind, hint and position
- timer.py       --timeout: a statement stopped as Ctrl-C stops it, past its seconds
- crash.py       an internal error's crash report
- figures.py     --stats: the run's figures as one JSON object
- resume_token.py  where a cut SELECT goes on from: its token (--resume)
- cli_spec.py    --spec: every flag (type, default), tool, statement, output format, exit code and
                 report's JSON Schema as one JSON document
- skill.py       `cqlsh-ext skill [DIR]`: a skill (SKILL.md) for this version
- catalog.py     --catalog: the schema and what blob columns hold, as one JSON document
- schema_json.py DESCRIBE as JSON objects under --output-format json
- export_dir.py  --export-dir: COPY (SELECT ...) TO a new file in the held directory, under --read-only
- session_server.py  --serve NAME: a warm session, each call forked from it on the caller's streams
- session_client.py  --session NAME, --session-status: the call's client (the standard library only)
"""
